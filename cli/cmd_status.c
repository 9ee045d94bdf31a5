// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xnf status [DEV] (and xnf chain show): what runs, read-only. */
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_link.h>

#include "cli.h"
#include "stats.h"

#define MAX_DEVS 1024

/* @dev's status: the document "xnf/status/1" with @doc, else an element
 * of the "devices" of "xnf/status-list/1"; its ifindex into *@ifindex
 * when it is in this namespace. */
static int status_one(struct xnf_dp *dp, const char *dev, bool doc, __u32 *ifindex)
{
	struct xnf_chain_spec spec = {};
	struct xnf_dev_status st;
	char chain[128], ifname[IF_NAMESIZE], warn[512];
	const char *nf;
	__u32 i;

	if (xnf_dev_status(dp, dev, &st))
		return cli_err("xnf is not attached to %s", dev);
	if (st.info.netns == xnf_netns_inode())
		*ifindex = st.info.ifindex;
	spec.len = st.info.chain_len > XNF_CHAIN_MAX ? XNF_CHAIN_MAX :
						       st.info.chain_len;
	memcpy(spec.nf, st.info.nf, sizeof(spec.nf));
	xnf_chain_format(&spec, chain, sizeof(chain));

	if (doc)
		open_json_doc("xnf/status/1");
	else
		open_json_object(NULL);
	print_string(PRINT_ANY, "dev", "%s", dev);
	print_uint(PRINT_ANY, "ifindex", " (ifindex %llu", st.info.ifindex);
	if (fmt_ifname(st.info.ifindex, ifname)[0] && strcmp(ifname, dev))
		print_text(", renamed");
	print_bool(PRINT_JSON, "attached", NULL, st.live);
	print_string(PRINT_ANY, "chain", "): chain %s", chain);
	print_bool(PRINT_JSON, "fused", NULL, st.info.fused);
	if (st.info.fused)
		print_text(" (fused)");
	print_string(PRINT_ANY, "mode", ", %s mode",
		     st.info.xdp_flags == XDP_FLAGS_SKB_MODE ? "generic" :
							       "native");
	print_string(PRINT_ANY, "l3fwd", ", l3fwd %s",
		     st.info.l3_fib ? "fib" : "lpm");
	if (!st.live)
		print_text(", NOT ATTACHED (device gone?)");
	print_uint(PRINT_ANY, "link_id", "\n    link id %llu", st.link_id);
	print_uint(PRINT_ANY, "prog_id", "  prog id %llu", st.prog_id);
	open_json_array("nfs");
	for (i = 0; i < spec.len; i++) {
		nf = xnf_nf_name(spec.nf[i]);
		open_json_object(NULL);
		print_uint(PRINT_JSON, "slot", NULL, i);
		print_string(PRINT_JSON, "nf", NULL, nf);
		if (!st.info.fused) {
			print_text("  %s", nf);
			print_uint(PRINT_ANY, "prog_id", " id %llu",
				   st.nf_prog_id[i]);
		}
		close_json_object();
	}
	close_json_array();
	print_string(PRINT_ANY, "pins", "\n    pins %s\n", st.pins);
	open_json_array("warnings");
	if (st.live && st.info.netns == xnf_netns_inode()) {
		if (xnf_egress_check(dev, st.info.ifindex, warn, sizeof(warn)) > 0)
			print_string(PRINT_ANY, NULL, "    warning: %s\n", warn);
		if (xnf_sender_check(dev, warn, sizeof(warn)) > 0)
			print_string(PRINT_ANY, NULL, "    warning: %s\n", warn);
	}
	close_json_array();
	cli_workers_show(dev, true);
	close_json_object();
	return 0;
}

/* The egress ports xnf is not attached to (@attached[@n] are), with
 * warnings as a device has them: what xnf redirects to a port that
 * cannot take it is lost. */
static int ports_show(struct xnf_dp *dp, const __u32 *attached, int n)
{
	struct xnf_port_sample *ports;
	char warn[512];
	int np, i, j;

	np = xnf_ports_read(dp, &ports);
	if (np < 0)
		return cli_err("cannot read the egress ports (%s): %s",
			       XNF_MAP_STR(XNF_MAP_XMIT), strerror(-np));
	open_json_array("egress_ports");
	for (i = 0; i < np; i++) {
		for (j = 0; j < n && attached[j] != ports[i].ifindex; j++)
			;
		if (j < n)
			continue;
		open_json_object(NULL);
		print_string(PRINT_ANY, "dev", "%s", ports[i].name);
		print_uint(PRINT_ANY, "ifindex", " (ifindex %llu)",
			   ports[i].ifindex);
		print_bool(PRINT_JSON, "attached", NULL, false);
		print_text(": egress port, not attached\n");
		open_json_array("warnings");
		if (xnf_egress_check(ports[i].name, ports[i].ifindex, warn,
				     sizeof(warn)) > 0)
			print_string(PRINT_ANY, NULL, "    warning: %s\n", warn);
		close_json_array();
		close_json_object();
	}
	close_json_array();
	free(ports);
	return 0;
}

int do_status(int argc, char **argv)
{
	static char names[MAX_DEVS][16];
	static __u32 ifindex[MAX_DEVS];
	struct xnf_dp *dp;
	int n, i, err = 0;

	if (argc > 0 && is_prefix(argv[0], "help")) {
		printf("Usage: xnf status [DEV]\n");
		return 0;
	}
	if (argc > 1)
		return cli_err("status takes one device or none; try 'xnf "
			       "status help'");
	if (argc > 0 && cli_dev_check(argv[0]))
		return -1;
	dp = cli_dp_read();
	if (!dp)
		return -1;
	if (argc > 0)
		return status_one(dp, argv[0], true, &ifindex[0]);
	n = xnf_dev_list(dp, names, MAX_DEVS);
	if (n < 0)
		return cli_err("cannot read %s/dev: %s", cli.root, strerror(-n));
	open_json_doc("xnf/status-list/1");
	open_json_array("devices");
	for (i = 0; i < n && i < MAX_DEVS; i++)
		err = status_one(dp, names[i], false, &ifindex[i]) ?: err;
	close_json_array();
	err = ports_show(dp, ifindex, i) ?: err;
	close_json_object();
	return err;
}

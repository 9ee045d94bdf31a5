// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xnf fdb / xnf xconnect: the tables of l2fwd.
 *
 * fdb       static MAC -> port entries (xnf_fdb). l2fwd never looks up a
 *           multicast or broadcast destination (it floods those, or does
 *           what the l2_miss policy says), so the library refuses such
 *           MACs instead of storing them where they can never match.
 * xconnect  port pairs (xnf_xconnect), as in DPDK's l2fwd: everything that
 *           arrives on one port of a pair leaves on the other with fixed
 *           MACs. Each direction is its own entry, keyed by the ingress
 *           port; a pair is written and removed as two element updates, so
 *           for a moment only one direction may exist, never a direction
 *           pointing at a port that is not an xnf port.
 *
 * Every egress device is made an xnf port (the devmap) before the entry
 * that sends to it exists. Ports are not removed with the entries: an
 * attached device, a route or another entry may use the same port.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define FDB_HELP "see 'xnf fdb help'"
#define XC_HELP	 "see 'xnf xconnect help'"

/* ---- fdb ---- */

static int fdb_set(int argc, char **argv, bool replace)
{
	const char *verb = replace ? "replace" : "add";
	struct xnf_conf *c;
	__u32 ifindex;
	char err[512];
	__u8 mac[6];
	int ret;

	if (argc != 3 || !is_prefix(argv[1], "dev"))
		return cli_err("usage: xnf fdb %s MAC dev DEV; %s", verb,
			       FDB_HELP);
	if (parse_mac(argv[0], mac) || cli_ifindex(argv[2], &ifindex))
		return -1;
	c = cli_candidate();
	if (!c)
		return -1;
	ret = xnf_conf_fdb_add(c, mac, ifindex, replace, err, sizeof(err));
	if (ret == -EEXIST)
		return cli_err("%s; use 'xnf fdb replace %s dev DEV' to move it",
			       err, argv[0]);
	return ret ? cli_err("%s", err) : 0;
}

static int do_fdb_add(int argc, char **argv)
{
	return fdb_set(argc, argv, false);
}

static int do_fdb_replace(int argc, char **argv)
{
	return fdb_set(argc, argv, true);
}

static int do_fdb_del(int argc, char **argv)
{
	struct xnf_conf *c;
	char err[512];
	__u8 mac[6];
	int ret;

	if (argc != 1)
		return cli_err("usage: xnf fdb del MAC; %s", FDB_HELP);
	if (parse_mac(argv[0], mac))
		return -1;
	c = cli_candidate();
	if (!c)
		return -1;
	ret = xnf_conf_fdb_del(c, mac, err, sizeof(err));
	if (ret == -ENOENT)
		return cli_err("%s; 'xnf fdb show' lists it", err);
	return ret ? cli_err("%s", err) : 0;
}

static int fdb_ent_cmp(const void *a, const void *b)
{
	const struct xnf_fdb_ent *x = a, *y = b;

	return memcmp(x->key.mac, y->key.mac, 6);
}

static int do_fdb_show(int argc, char **argv)
{
	struct xnf_fdb_ent *ents = NULL;
	struct xnf_dp *dp;
	__u32 n, i;
	int err;

	if (argc > 0)
		return cli_err("'xnf fdb show' takes no arguments, not '%s'",
			       argv[0]);
	dp = cli_dp_read();
	if (!dp)
		return -1;
	err = xnf_fdb_list(dp, &ents, &n);
	if (err)
		return cli_err("cannot read %s: %s", XNF_MAP_STR(XNF_MAP_FDB),
			       strerror(-err));
	if (n)
		qsort(ents, n, sizeof(*ents), fdb_ent_cmp);
	open_json_doc("xnf/fdb/1");
	open_json_array("fdb");
	for (i = 0; i < n; i++) {
		char mac[18], dev[IF_NAMESIZE];

		fmt_mac(ents[i].key.mac, mac, sizeof(mac));
		fmt_ifname(ents[i].e.ifindex, dev);
		open_json_object(NULL);
		print_string(PRINT_ANY, "mac", "%s", mac);
		print_string(PRINT_ANY, "dev", " dev %s", dev);
		print_uint(PRINT_JSON, "ifindex", NULL, ents[i].e.ifindex);
		close_json_object();
		print_nl();
	}
	close_json_array();
	close_json_object();
	free(ents);
	return 0;
}

static int do_fdb_help(int argc, char **argv)
{
	printf("Usage: xnf fdb { add | replace } MAC dev DEV\n"
	       "       xnf fdb del MAC\n"
	       "       xnf fdb [ show ]\n"
	       "       xnf fdb help\n"
	       "MAC := xx:xx:xx:xx:xx:xx   a unicast address (l2fwd floods multicast\n"
	       "       and broadcast frames without an FDB lookup)\n"
	       "Frames to MAC leave on DEV, which becomes an xnf port. add refuses a MAC\n"
	       "that is in the FDB; replace moves it.\n");
	return 0;
}

int do_fdb(int argc, char **argv)
{
	static const struct cli_cmd cmds[] = {
		{ "show", do_fdb_show },
		{ "list", do_fdb_show },
		{ "add", do_fdb_add, CLI_EDIT },
		{ "replace", do_fdb_replace, CLI_EDIT },
		{ "del", do_fdb_del, CLI_EDIT },
		{ "help", do_fdb_help },
		{ NULL, NULL },
	};

	return cli_dispatch(cmds, "fdb", argc, argv);
}

/* ---- xconnect ---- */

static int xc_ent_cmp(const void *a, const void *b)
{
	const struct xnf_xconnect_ent *x = a, *y = b;

	return x->in < y->in ? -1 : x->in > y->in;
}

/* The default MAC of DPDK's l2fwd for frames leaving on port @ifindex:
 * 02:00:00:00:00:<port>. */
static void xc_default_mac(__u32 ifindex, __u8 mac[6])
{
	static const __u8 base[6] = { 0x02, 0, 0, 0, 0, 0 };

	memcpy(mac, base, 6);
	mac[5] = ifindex & 0xff;
}

static int do_xconnect_add(int argc, char **argv)
{
	struct xnf_xconnect fwd = {}, rev = {};
	const char *dev1, *dev2;
	__u8 mac1[6], mac2[6];
	struct xnf_conf *c;
	__u32 if1, if2;
	char err[512];
	int ret;

	if (argc != 2 && !(argc == 5 && is_prefix(argv[2], "lladdr")))
		return cli_err("usage: xnf xconnect DEV1 DEV2 [lladdr MAC1 MAC2]; %s",
			       XC_HELP);
	dev1 = argv[0];
	dev2 = argv[1];
	if (cli_ifindex(dev1, &if1) || cli_ifindex(dev2, &if2))
		return -1;
	if (argc == 5) {
		if (parse_mac(argv[3], mac1) || parse_mac(argv[4], mac2))
			return -1;
	} else {
		xc_default_mac(if1, mac1);
		xc_default_mac(if2, mac2);
	}
	/* DEV1 -> DEV2: leaves DEV2 from DEV2's MAC to MAC2; and back. */
	fwd.ifindex = if2;
	memcpy(fwd.dmac, mac2, 6);
	rev.ifindex = if1;
	memcpy(rev.dmac, mac1, 6);
	if (if1 != if2 && (cli_ifmac(dev2, fwd.smac) || cli_ifmac(dev1, rev.smac)))
		return -1;
	c = cli_candidate();
	if (!c)
		return -1;
	ret = xnf_conf_xconnect_add(c, if1, &fwd, if2, &rev, err, sizeof(err));
	if (ret == -EBUSY)
		return cli_err("%s; remove that pair first with 'xnf xconnect "
			       "del DEV'",
			       err);
	return ret ? cli_err("%s", err) : 0;
}

/* @name as an ifindex: a device of this namespace, or "ifN" as show prints
 * a device that is gone (so that its entries can still be removed). */
static int xc_dev(const char *name, __u32 *ifindex)
{
	unsigned int idx;
	char end;

	if (!xnf_dev_ifindex(name, ifindex, NULL, 0))
		return 0;
	if (sscanf(name, "if%u%c", &idx, &end) == 1 && idx) {
		*ifindex = idx;
		return 0;
	}
	return cli_ifindex(name, ifindex);
}

static int do_xconnect_del(int argc, char **argv)
{
	struct xnf_conf *c;
	__u32 ifindex;
	char err[512];
	int ret;

	if (argc != 1)
		return cli_err("usage: xnf xconnect del DEV; %s", XC_HELP);
	if (xc_dev(argv[0], &ifindex))
		return -1;
	c = cli_candidate();
	if (!c)
		return -1;
	ret = xnf_conf_xconnect_remove(c, ifindex, err, sizeof(err));
	if (ret == -ENOENT)
		return cli_err("%s; 'xnf xconnect show' lists the pairs", err);
	return ret ? cli_err("%s", err) : 0;
}

static int do_xconnect_show(int argc, char **argv)
{
	struct xnf_xconnect_ent *ents = NULL;
	struct xnf_dp *dp;
	__u32 n, i;
	int err;

	if (argc > 0)
		return cli_err("'xnf xconnect show' takes no arguments, not '%s'",
			       argv[0]);
	dp = cli_dp_read();
	if (!dp)
		return -1;
	err = xnf_xconnect_list(dp, &ents, &n);
	if (err)
		return cli_err("cannot read %s: %s",
			       XNF_MAP_STR(XNF_MAP_XCONNECT), strerror(-err));
	if (n)
		qsort(ents, n, sizeof(*ents), xc_ent_cmp);
	open_json_doc("xnf/xconnects/1");
	open_json_array("xconnects");
	for (i = 0; i < n; i++) {
		char in[IF_NAMESIZE], out[IF_NAMESIZE], mac[18], smac[18];
		const struct xnf_xconnect *xc = &ents[i].xc;

		fmt_ifname(ents[i].in, in);
		fmt_ifname(xc->ifindex, out);
		fmt_mac(xc->dmac, mac, sizeof(mac));
		fmt_mac(xc->smac, smac, sizeof(smac));
		open_json_object(NULL);
		print_string(PRINT_ANY, "in", "%s", in);
		print_uint(PRINT_JSON, "in_ifindex", NULL, ents[i].in);
		print_string(PRINT_ANY, "out", " -> %s", out);
		print_uint(PRINT_JSON, "out_ifindex", NULL, xc->ifindex);
		print_string(PRINT_ANY, "lladdr", " lladdr %s", mac);
		print_string(PRINT_ANY, "src_lladdr", " src_lladdr %s", smac);
		close_json_object();
		print_nl();
	}
	close_json_array();
	close_json_object();
	free(ents);
	return 0;
}

static int do_xconnect_help(int argc, char **argv)
{
	printf("Usage: xnf xconnect [ add ] DEV1 DEV2 [ lladdr MAC1 MAC2 ]\n"
	       "       xnf xconnect del DEV\n"
	       "       xnf xconnect [ show ]\n"
	       "       xnf xconnect help\n"
	       "Frames received on DEV1 leave on DEV2 with source DEV2's MAC and\n"
	       "destination MAC2, and frames received on DEV2 leave on DEV1 with source\n"
	       "DEV1's MAC and destination MAC1. Without lladdr, a frame leaving on\n"
	       "port P goes to 02:00:00:00:00:<P's ifindex, low byte>, as in DPDK's\n"
	       "l2fwd. Both devices become xnf ports. del removes both directions of the\n"
	       "pair DEV is in. Use 'add' for a device named like a command (e.g. 'sh').\n");
	return 0;
}

int do_xconnect(int argc, char **argv)
{
	static const struct cli_cmd cmds[] = {
		{ "show", do_xconnect_show },
		{ "list", do_xconnect_show },
		{ "add", do_xconnect_add, CLI_EDIT },
		{ "del", do_xconnect_del, CLI_EDIT },
		{ "help", do_xconnect_help },
		{ NULL, NULL },
	};
	const struct cli_cmd *c;

	/* 'xnf xconnect DEV1 DEV2': a first word that is no command (nor a
	 * prefix of one) is the first device of an add. */
	for (c = cmds; argc > 0 && c->name; c++)
		if (is_prefix(argv[0], c->name))
			return cli_dispatch(cmds, "xconnect", argc, argv);
	if (argc > 0)
		return cli_edit(&cmds[2], argc, argv);
	return cli_dispatch(cmds, "xconnect", argc, argv);
}

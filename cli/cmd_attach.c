// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xnf attach: parse, then the candidate's attachment (its placement is
 * planned when it is committed). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_link.h>

#include "cli.h"
#include "placement.h"

static int do_attach_help(void)
{
	char nfs[256];

	xnf_nf_list(nfs, sizeof(nfs), " | ");
	printf("Usage: xnf attach DEV chain NF[,NF...] [mode { native | generic }]\n"
	       "                  [fused | tailcall] [fib | lpm] [queues N] [cores { LIST | auto }]\n"
	       "NF := { %s }\n"
	       "  mode native   in the driver (default); generic: in the stack, any device\n"
	       "  fused         the whole chain in one program; tailcall: one program per\n"
	       "                NF, tail-called (default)\n"
	       "  fib           l3fwd uses the kernel's routes and neighbours (with xsk:\n"
	       "                the workers' l3fwd too); lpm: xnf's own routes (default)\n"
	       "  queues N      set N channels (an error if the device refuses)\n"
	       "  cores LIST    queue i's IRQ (or napi thread) on the i-th CPU of LIST\n"
	       "  cores auto    the placement of 'xnf plan DEV': the NIC's NUMA node, one\n"
	       "                core per queue; detach restores what it changed\n",
	       nfs);
	return 0;
}

/* A placement is made on this machine (never a fixture), when the
 * attachment is committed. */
static int attach_sysfs_check(void)
{
	const char *sysroot = getenv("XNF_SYSFS_ROOT");

	if (sysroot && *sysroot && strcmp(sysroot, "/"))
		return cli_err("XNF_SYSFS_ROOT=%s: a placement is applied to "
			       "this machine only; unset it to attach with "
			       "queues or cores",
			       sysroot);
	return 0;
}

int do_attach(int argc, char **argv)
{
	struct xnf_conf_attach a = { .xdp_flags = XDP_FLAGS_DRV_MODE };
	bool have_chain = false, have_queues = false, have_cores = false;
	struct xnf_chain_spec parsed;
	struct xnf_conf *c;
	const char *dev;
	char err[1024];
	__u32 ifindex;
	int rc;

	/* Alone: "attach h chain l3fwd" attaches a device named h. */
	if (argc == 1 && is_prefix(argv[0], "help"))
		return do_attach_help();
	if (argc < 1)
		return cli_err("attach takes a device and a chain (xnf attach DEV "
			       "chain NF[,NF...]); try 'xnf attach help'");
	dev = argv[0];
	NEXT_ARG();
	while (argc > 0) {
		rc = cli_parse_placement(&argc, &argv, &a.place, &have_queues,
					 &have_cores);
		if (rc < 0)
			return -1;
		if (rc > 0)
			continue;
		if (is_prefix(argv[0], "chain")) {
			NEXT_ARG();
			REQ_ARGS(1, "attach");
			if (xnf_chain_parse(argv[0], &parsed, err, sizeof(err)))
				return cli_err("%s", err);
			a.chain.len = parsed.len;
			memcpy(a.chain.nf, parsed.nf, sizeof(a.chain.nf));
			have_chain = true;
		} else if (is_prefix(argv[0], "mode")) {
			NEXT_ARG();
			REQ_ARGS(1, "attach");
			if (is_prefix(argv[0], "native") ||
			    !strcmp(argv[0], "drv"))
				a.xdp_flags = XDP_FLAGS_DRV_MODE;
			else if (is_prefix(argv[0], "generic") ||
				 !strcmp(argv[0], "skb"))
				a.xdp_flags = XDP_FLAGS_SKB_MODE;
			else
				return cli_err("invalid mode '%s': expected native "
					       "or generic",
					       argv[0]);
		} else if (is_prefix(argv[0], "fused")) {
			a.chain.fused = true;
		} else if (is_prefix(argv[0], "tailcall")) {
			a.chain.fused = false;
		} else if (is_prefix(argv[0], "fib")) {
			a.chain.l3_fib = true;
		} else if (is_prefix(argv[0], "lpm")) {
			a.chain.l3_fib = false;
		} else {
			return cli_err("unknown attach argument '%s'; see 'xnf "
				       "attach help'",
				       argv[0]);
		}
		NEXT_ARG();
	}
	if (!have_chain)
		return cli_err("no chain given; write 'xnf attach %s chain "
			       "firewall,l3fwd,l2fwd'",
			       dev);
	a.placed = have_queues || have_cores;
	if (cli_ifindex(dev, &ifindex) || (a.placed && attach_sysfs_check()))
		return -1;
	snprintf(a.dev, sizeof(a.dev), "%s", dev);
	c = cli_candidate();
	if (!c)
		return -1;
	err[0] = '\0';
	if (xnf_conf_attach(c, &a, err, sizeof(err)) == -EEXIST)
		return cli_err("%s; change its chain with 'xnf chain set %s "
			       "NF[,NF...]', or detach it first",
			       err, a.dev);
	return err[0] ? cli_err("%s", err) : 0;
}

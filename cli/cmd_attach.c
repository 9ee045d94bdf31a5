// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xnf attach: parse, plan the placement if asked, call xnf_attach(). */
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

/* The placement of @dev for this machine (never a fixture): a wrong
 * request is refused before anything is created. */
static int attach_plan(const char *dev, const struct xnf_plan_req *req,
		       struct xnf_plan **plan)
{
	char perr[XNF_PLACE_ERR_LEN] = "";
	const char *sysroot;
	int i;

	sysroot = getenv("XNF_SYSFS_ROOT");
	if (sysroot && *sysroot && strcmp(sysroot, "/"))
		return cli_err("XNF_SYSFS_ROOT=%s: a placement is applied to "
			       "this machine only; unset it to attach with "
			       "queues or cores",
			       sysroot);
	if (xnf_plan_compute("", dev, req, plan, perr, sizeof(perr)))
		return cli_err("cannot place %s: %s", dev, perr);
	for (i = 0; i < (*plan)->nwarnings; i++)
		print_warn("%s", (*plan)->warnings[i]);
	return 0;
}

/* The attachment into the configuration being built; its placement is
 * planned when the configuration is applied. */
static int attach_conf(const struct xnf_attach_opts *o, bool placed,
		       const struct xnf_plan_req *preq)
{
	struct xnf_conf_attach a = {
		.xdp_flags = o->xdp_flags,
		.chain = o->chain,
		.placed = placed,
		.place = *preq,
	};
	char err[512] = "";

	snprintf(a.dev, sizeof(a.dev), "%s", o->dev);
	if (xnf_conf_attach(cli.conf, &a, err, sizeof(err)))
		return cli_err("%s", err);
	return 0;
}

int do_attach(int argc, char **argv)
{
	struct xnf_attach_opts o = { .xdp_flags = XDP_FLAGS_DRV_MODE };
	bool have_chain = false, have_queues = false, have_cores = false;
	struct xnf_plan_req preq = {};
	struct xnf_plan *plan = NULL;
	struct xnf_chain_spec parsed;
	char err[1024];
	struct xnf_dp *dp;
	int rc;

	if (argc > 0 && is_prefix(argv[0], "help"))
		return do_attach_help();
	if (argc < 1)
		return cli_err("attach takes a device and a chain (xnf attach DEV "
			       "chain NF[,NF...]); try 'xnf attach help'");
	o.dev = argv[0];
	NEXT_ARG();
	while (argc > 0) {
		rc = cli_parse_placement(&argc, &argv, &preq, &have_queues,
					 &have_cores);
		if (rc < 0)
			return -1;
		if (rc > 0)
			continue;
		if (is_prefix(argv[0], "chain")) {
			NEXT_ARG();
			REQ_ARGS(1, "attach");
			if (xnf_chain_parse(argv[0], &parsed))
				return -1;
			o.chain.len = parsed.len;
			memcpy(o.chain.nf, parsed.nf, sizeof(o.chain.nf));
			have_chain = true;
		} else if (is_prefix(argv[0], "mode")) {
			NEXT_ARG();
			REQ_ARGS(1, "attach");
			if (is_prefix(argv[0], "native") ||
			    !strcmp(argv[0], "drv"))
				o.xdp_flags = XDP_FLAGS_DRV_MODE;
			else if (is_prefix(argv[0], "generic") ||
				 !strcmp(argv[0], "skb"))
				o.xdp_flags = XDP_FLAGS_SKB_MODE;
			else
				return cli_err("invalid mode '%s': expected native "
					       "or generic",
					       argv[0]);
		} else if (is_prefix(argv[0], "fused")) {
			o.chain.fused = true;
		} else if (is_prefix(argv[0], "tailcall")) {
			o.chain.fused = false;
		} else if (is_prefix(argv[0], "fib")) {
			o.chain.l3_fib = true;
		} else if (is_prefix(argv[0], "lpm")) {
			o.chain.l3_fib = false;
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
			       o.dev);
	if (o.chain.fused && o.chain.len > XNF_FUSED_MAX)
		return cli_err("a fused chain holds at most %d NFs",
			       XNF_FUSED_MAX);
	if (cli_ifindex(o.dev, &o.ifindex))
		return -1;
	if (cli.conf)
		return attach_conf(&o, have_queues || have_cores, &preq);
	if ((have_queues || have_cores) && attach_plan(o.dev, &preq, &plan))
		return -1;
	o.plan = plan;
	o.strict_queues = have_queues;
	o.cores = preq.have_cores ? &preq.cores : NULL;
	dp = cli_dp(true);
	rc = dp ? xnf_attach(dp, &o, err, sizeof(err)) : -1;
	free(plan);
	if (rc && dp)
		return cli_err("%s", err);
	/* Attached, but what xnf redirects to it would be lost. */
	if (!rc && xnf_egress_check(o.dev, o.ifindex, err, sizeof(err)) > 0)
		print_warn("%s", err);
	/* And what it receives would leave with wrong checksums. */
	if (!rc && xnf_sender_check(o.dev, err, sizeof(err)) > 0)
		print_warn("%s", err);
	return rc ? -1 : 0;
}

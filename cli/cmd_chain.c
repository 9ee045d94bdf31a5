// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xnf chain set | show: parse, then the candidate's chain; or show the
 * status. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static int do_chain_set(int argc, char **argv)
{
	struct xnf_chain_change chg = {};
	struct xnf_chain_spec spec;
	struct xnf_conf *c;
	const char *dev;
	char err[1024];

	if (argc < 2)
		return cli_err("chain set takes a device and a chain (xnf chain "
			       "set DEV NF[,NF...]); try 'xnf chain help'");
	dev = argv[0];
	if (cli_dev_check(dev))
		return -1;
	if (xnf_chain_parse(argv[1], &spec, err, sizeof(err)))
		return cli_err("%s", err);
	chg.len = spec.len;
	memcpy(chg.nf, spec.nf, sizeof(chg.nf));
	argc -= 2;
	argv += 2;
	for (; argc > 0; NEXT_ARG()) {
		if (is_prefix(argv[0], "fused"))
			chg.fused = XNF_ON;
		else if (is_prefix(argv[0], "tailcall"))
			chg.fused = XNF_OFF;
		else if (is_prefix(argv[0], "fib"))
			chg.l3_fib = XNF_ON;
		else if (is_prefix(argv[0], "lpm"))
			chg.l3_fib = XNF_OFF;
		else
			return cli_err("unknown chain set argument '%s'; try "
				       "'xnf chain help'",
				       argv[0]);
	}
	c = cli_candidate();
	if (!c)
		return -1;
	err[0] = '\0';
	if (xnf_conf_chain_set(c, dev, &chg, err, sizeof(err)) == -ENOENT)
		return cli_err("%s; attach it with 'xnf attach %s chain "
			       "NF[,NF...]'",
			       err, dev);
	return err[0] ? cli_err("%s", err) : 0;
}

static int do_chain_help(int argc, char **argv)
{
	printf("Usage: xnf chain set DEV NF[,NF...] [fused | tailcall] [fib | lpm]\n"
	       "       xnf chain show [DEV]\n"
	       "Replaces the chain of DEV without dropping a packet: the new chain is\n"
	       "loaded aside and swapped in atomically.\n");
	return 0;
}

int do_chain(int argc, char **argv)
{
	static const struct cli_cmd cmds[] = {
		{ "show", do_status },
		{ "set", do_chain_set, CLI_EDIT | CLI_EXISTING },
		{ "help", do_chain_help },
		{ NULL, NULL },
	};

	return cli_dispatch(cmds, "chain", argc, argv);
}

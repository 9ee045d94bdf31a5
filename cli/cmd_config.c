// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xnf config show | set KEY VALUE: the exception actions and the flow
 * cache (the keys and their values are the library's: xnf_cfg_key). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static int do_config_set(int argc, char **argv)
{
	struct xnf_conf *c;
	char err[512];
	int ret;

	if (argc != 2)
		return cli_err("config set takes a key and a value (xnf config "
			       "set KEY VALUE); try 'xnf config help'");
	c = cli_candidate();
	if (!c)
		return -1;
	ret = xnf_conf_config_set(c, argv[0], argv[1], err, sizeof(err));
	return ret ? cli_err("%s; see 'xnf config help'", err) : 0;
}

static int do_config_show(int argc, char **argv)
{
	const char *key, *val;
	struct xnf_config cfg;
	struct xnf_dp *dp;
	size_t i;

	if (argc > 0)
		return cli_err("config show takes no arguments");
	dp = cli_dp_read();
	if (!dp)
		return -1;
	if (xnf_cfg_read(dp, &cfg))
		return cli_err("cannot read %s", XNF_MAP_STR(XNF_MAP_CFG));
	open_json_doc("xnf/config/1");
	for (i = 0; !xnf_cfg_key(i, &cfg, &key, &val); i++) {
		print_text("%-13s ", key);
		print_string(PRINT_ANY, key, "%s\n", val);
	}
	close_json_object();
	return 0;
}

static int do_config_help(int argc, char **argv)
{
	printf("Usage: xnf config show\n"
	       "       xnf config set KEY { pass | drop | flood }\n"
	       "       xnf config set flow_cache { on | off }\n"
	       "       xnf config set fw_input { kernel | rules }\n"
	       "KEY := { no_route | ttl_expired | local | l2_miss | "
	       "xsk_fallback | martian }\n");
	return 0;
}

int do_config(int argc, char **argv)
{
	static const struct cli_cmd cmds[] = {
		{ "show", do_config_show },
		{ "set", do_config_set, CLI_EDIT },
		{ "help", do_config_help },
		{ NULL, NULL },
	};

	return cli_dispatch(cmds, "config", argc, argv);
}

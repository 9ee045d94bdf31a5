// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xnf config show | set KEY VALUE: the exception actions, the flow
 * cache and the connection table's settings (the keys and their values
 * are the library's: xnf_conf_key). */
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
	char val[XNF_CONF_VAL_MAX], err[512];
	struct xnf_conf *c;
	struct xnf_dp *dp;
	const char *key;
	size_t i;

	if (argc > 0)
		return cli_err("config show takes no arguments");
	dp = cli_dp_read();
	if (!dp)
		return -1;
	if (xnf_conf_settings(dp, &c, err, sizeof(err)))
		return cli_err("%s", err);
	open_json_doc("xnf/config/1");
	for (i = 0; !xnf_conf_key(c, i, &key, val, sizeof(val)); i++) {
		print_text("%-22s ", key);
		print_string(PRINT_ANY, key, "%s\n", val);
	}
	close_json_object();
	xnf_conf_free(c);
	return 0;
}

static int do_config_help(int argc, char **argv)
{
	printf("Usage: xnf config show\n"
	       "       xnf config set KEY { pass | drop | flood }\n"
	       "       xnf config set flow_cache { on | off }\n"
	       "       xnf config set fw_input { kernel | rules }\n"
	       "       xnf config set ct_fragments { pass | drop }\n"
	       "       xnf config set CT_TIMEOUT SECONDS\n"
	       "       xnf config set ct_max ENTRIES\n"
	       "       xnf config set log_reasons { none | REASON[,REASON...] }\n"
	       "       xnf config set log_reasons_limit N/{ second | minute | hour | day }\n"
	       "KEY := { no_route | ttl_expired | local | l2_miss | "
	       "xsk_fallback | martian }\n"
	       "CT_TIMEOUT := { ct_timeout_syn_sent | ct_timeout_syn_recv |\n"
	       "               ct_timeout_established | ct_timeout_fin_wait |\n"
	       "               ct_timeout_close_wait | ct_timeout_last_ack |\n"
	       "               ct_timeout_time_wait | ct_timeout_close |\n"
	       "               ct_timeout_syn_sent2 | ct_timeout_udp |\n"
	       "               ct_timeout_udp_stream | ct_timeout_icmp |\n"
	       "               ct_timeout_generic }\n"
	       "ct_max, the connection table's size, is set when the instance is made:\n"
	       "on a running instance a change is refused.\n"
	       "REASON is a drop or pass reason of 'xnf stats' (not none): its\n"
	       "packets are logged, each reason at most log_reasons_limit (default\n"
	       "10/second, bursts of 5).\n");
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

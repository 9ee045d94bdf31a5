// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xnf config show | set KEY VALUE: the exception actions and the flow
 * cache. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct {
	const char *key;
	size_t off;
	const char *allowed;
} cfg_keys[] = {
	{ "no_route", offsetof(struct xnf_config, no_route), "pass drop" },
	{ "ttl_expired", offsetof(struct xnf_config, ttl_expired), "pass drop" },
	{ "local", offsetof(struct xnf_config, local), "pass drop" },
	{ "l2_miss", offsetof(struct xnf_config, l2_miss), "flood pass drop" },
	{ "xsk_fallback", offsetof(struct xnf_config, xsk_fallback), "pass drop" },
	{ "martian", offsetof(struct xnf_config, martian), "pass drop" },
	/* Not an action: on or off (bpf/fcache.bpf.h). */
	{ "flow_cache", offsetof(struct xnf_config, flow_cache), "on off" },
};
#define N_CFG (sizeof(cfg_keys) / sizeof(cfg_keys[0]))

static __u32 *cfg_field(struct xnf_config *cfg, size_t i)
{
	return (__u32 *)((char *)cfg + cfg_keys[i].off);
}

static bool cfg_is_switch(size_t i)
{
	return !strcmp(cfg_keys[i].allowed, "on off");
}

static const char *cfg_value(const struct xnf_config *cfg, size_t i)
{
	__u32 v = *cfg_field((struct xnf_config *)cfg, i);

	if (cfg_is_switch(i))
		return v ? "on" : "off";
	return fmt_action(v);
}

static int cfg_parse(size_t i, const char *s, __u32 *v)
{
	if (!cfg_is_switch(i))
		return parse_action(s, cfg_keys[i].allowed, v);
	if (strcmp(s, "on") && strcmp(s, "off"))
		return cli_err("invalid value '%s' for %s: expected on or off",
			       s, cfg_keys[i].key);
	*v = !strcmp(s, "on");
	return 0;
}

int cli_cfg_key(size_t i, const struct xnf_config *cfg, const char **key,
		const char **val)
{
	if (i >= N_CFG)
		return -1;
	*key = cfg_keys[i].key;
	*val = cfg_value(cfg, i);
	return 0;
}

int do_config(int argc, char **argv)
{
	bool set = argc > 0 && is_prefix(argv[0], "set");
	struct xnf_config cfg;
	struct xnf_dp *dp;
	__u32 act;
	size_t i;

	if (argc > 0 && is_prefix(argv[0], "help")) {
		printf("Usage: xnf config show\n"
		       "       xnf config set KEY { pass | drop | flood }\n"
		       "       xnf config set flow_cache { on | off }\n"
		       "KEY := { no_route | ttl_expired | local | l2_miss | "
		       "xsk_fallback | martian }\n");
		return 0;
	}
	if (argc > 0 && !set && !is_prefix(argv[0], "show"))
		return cli_err("unknown config command '%s'; try 'xnf config "
			       "help'",
			       argv[0]);
	if (set && argc != 3)
		return cli_err("config set takes a key and a value (xnf config "
			       "set KEY VALUE); try 'xnf config help'");
	if (!set && argc > 1)
		return cli_err("config show takes no arguments");
	for (i = 0; set && i < N_CFG; i++)
		if (!strcmp(argv[1], cfg_keys[i].key))
			break;
	if (set && i == N_CFG)
		return cli_err("unknown key '%s'; see 'xnf config help'",
			       argv[1]);
	if (set && cfg_parse(i, argv[2], &act))
		return -1;
	if (cli.conf && !set)
		return cli_conf_other("config show");
	if (cli.conf) {
		*cfg_field(&cli.conf->cfg, i) = act;
		return 0;
	}
	dp = set ? cli_dp(true) : cli_dp_read();
	if (!dp || xnf_cfg_read(dp, &cfg))
		return dp ? cli_err("cannot read %s", XNF_MAP_STR(XNF_MAP_CFG)) :
			    -1;
	if (set) {
		*cfg_field(&cfg, i) = act;
		return xnf_cfg_write(dp, &cfg) ?
			       cli_err("cannot write %s",
				       XNF_MAP_STR(XNF_MAP_CFG)) :
			       0;
	}
	open_json_doc("xnf/config/1");
	for (i = 0; i < N_CFG; i++) {
		print_text("%-13s ", cfg_keys[i].key);
		print_string(PRINT_ANY, cfg_keys[i].key, "%s\n",
			     cfg_value(&cfg, i));
	}
	close_json_object();
	return 0;
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xnf detach DEV | all */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* Every attachment of this namespace goes; the tables stay. One apply of
 * the running configuration without them. */
static int detach_all(void)
{
	struct xnf_conf_changes chg;
	struct xnf_conf *c = NULL;
	struct xnf_dp *dp;
	char err[1024];
	int ret;

	if (cli.conf) {
		cli.conf->natt = 0;
		return 0;
	}
	if (cli_dp_if_any(&dp))
		return -1;
	if (!dp)
		return 0; /* no instance: nothing is attached */
	ret = xnf_conf_read(dp, &c, err, sizeof(err));
	if (!ret) {
		c->natt = 0;
		ret = xnf_conf_apply(dp, c, &chg, err, sizeof(err));
	}
	xnf_conf_free(c);
	return ret ? cli_err("%s", err) : 0;
}

int do_detach(int argc, char **argv)
{
	struct xnf_dp *dp;
	char err[1024];

	if (argc == 1 && is_prefix(argv[0], "help")) {
		printf("Usage: xnf detach { DEV | all }\n"
		       "all: every device xnf is attached to in this network "
		       "namespace (the tables stay)\n");
		return 0;
	}
	if (argc != 1)
		return cli_err("detach takes one device (xnf detach DEV), or "
			       "all; try 'xnf detach help'");
	if (!strcmp(argv[0], "all"))
		return detach_all();
	if (cli_dev_check(argv[0]))
		return -1;
	err[0] = '\0';
	if (cli.conf)
		return xnf_conf_detach(cli.conf, argv[0], err, sizeof(err)) ?
			       cli_err("%s", err) :
			       0;
	dp = cli_dp(false);
	if (!dp)
		return -1;
	if (xnf_detach(dp, argv[0], err, sizeof(err)))
		return cli_err("%s", err);
	return 0;
}

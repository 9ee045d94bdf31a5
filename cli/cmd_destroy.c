// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xnf destroy */
#include <stdio.h>

#include "cli.h"

int do_destroy(int argc, char **argv)
{
	struct xnf_dp *dp;
	char err[1024];

	if (argc > 0) {
		if (!is_prefix(argv[0], "help"))
			return cli_err("destroy takes no arguments; try 'xnf "
				       "destroy help'");
		printf("Usage: xnf destroy\n"
		       "Removes the tables of the instance; every interface "
		       "must be detached first.\n");
		return 0;
	}
	err[0] = '\0';
	if (cli.conf)
		return xnf_conf_destroy(cli.conf, err, sizeof(err)) ?
			       cli_err("%s", err) :
			       0;
	dp = cli_dp(false);
	if (!dp)
		return -1;
	if (xnf_destroy(dp, err, sizeof(err)))
		return cli_err("%s", err);
	xnf_dp_close(dp);
	cli.dp = NULL;
	return 0;
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xnf detach DEV */
#include <stdio.h>

#include "cli.h"

int do_detach(int argc, char **argv)
{
	struct xnf_dp *dp;
	char err[1024];

	if (argc == 1 && is_prefix(argv[0], "help")) {
		printf("Usage: xnf detach DEV\n");
		return 0;
	}
	if (argc != 1)
		return cli_err("detach takes one device (xnf detach DEV); try "
			       "'xnf detach help'");
	if (cli_dev_check(argv[0]))
		return -1;
	dp = cli_dp(false);
	if (!dp)
		return -1;
	if (xnf_detach(dp, argv[0], err, sizeof(err)))
		return cli_err("%s", err);
	return 0;
}

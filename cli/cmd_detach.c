// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xnf detach DEV */
#include <stdio.h>

#include "cli.h"

int do_detach(int argc, char **argv)
{
	struct xnf_dp *dp;
	char err[1024];

	if (argc != 1 || is_prefix(argv[0], "help")) {
		if (argc == 1) {
			printf("Usage: xnf detach DEV\n");
			return 0;
		}
		return cli_err("usage: xnf detach DEV");
	}
	dp = cli_dp(false);
	if (!dp)
		return -1;
	if (xnf_detach(dp, argv[0], err, sizeof(err)))
		return cli_err("%s", err);
	return 0;
}

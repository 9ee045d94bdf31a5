// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xnf destroy */
#include <stdio.h>

#include "cli.h"

int do_destroy(int argc, char **argv)
{
	struct xnf_conf *c;
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
	c = cli_candidate();
	if (!c)
		return -1;
	if (xnf_conf_destroy(c, err, sizeof(err)))
		return cli_err("%s with 'xnf detach DEV' (or 'xnf detach all')",
			       err);
	return 0;
}

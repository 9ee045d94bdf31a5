// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xnf detach DEV | all */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

int do_detach(int argc, char **argv)
{
	struct xnf_conf *c;
	char err[1024];
	int ret;

	if (argc == 1 && is_prefix(argv[0], "help")) {
		printf("Usage: xnf detach { DEV | all }\n"
		       "all: every device xnf is attached to in this network "
		       "namespace (the tables stay)\n");
		return 0;
	}
	if (argc != 1)
		return cli_err("detach takes one device (xnf detach DEV), or "
			       "all; try 'xnf detach help'");
	if (strcmp(argv[0], "all") && cli_dev_check(argv[0]))
		return -1;
	c = cli_candidate();
	if (!c)
		return -1;
	err[0] = '\0';
	/* all: every attachment of this namespace goes; the tables stay. */
	ret = strcmp(argv[0], "all") ?
		      xnf_conf_detach(c, argv[0], err, sizeof(err)) :
		      xnf_conf_detach_all(c, err, sizeof(err));
	if (ret == -ENOENT)
		return cli_err("%s; 'xnf status' lists the interfaces it is "
			       "attached to",
			       err);
	return ret ? cli_err("%s", err) : 0;
}

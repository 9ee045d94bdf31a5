// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* A private network + mount namespace for tests and benchmarks; see sandbox.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>

#include "sandbox.h"

static int step(int rc, const char *what)
{
	int err = rc ? -errno : 0;

	if (err)
		fprintf(stderr, "Error: sandbox: %s: %s (run as root)\n", what,
			strerror(-err));
	return err;
}

int xnf_sandbox(const char *prefix, int nveth)
{
	char cmd[512];
	int err, rc, i;

	if ((err = step(unshare(CLONE_NEWNET | CLONE_NEWNS), "unshare net+mount")) ||
	    (err = step(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL),
			"make mounts private")) ||
	    (err = step(mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700"),
			"mount bpffs on /sys/fs/bpf")))
		return err;
	for (i = -1; i < nveth; i++) {
		if (i < 0)
			snprintf(cmd, sizeof(cmd), "ip link set lo up");
		else
			snprintf(cmd, sizeof(cmd),
				 "ip link add %s%d type veth peer name %s%dp && "
				 "ip link set %s%d address 02:00:00:00:%02x:fe && "
				 "echo 1 > /proc/sys/net/ipv6/conf/%s%dp/disable_ipv6 && "
				 "ip link set %s%d up && ip link set %s%dp up",
				 prefix, i, prefix, i, prefix, i, i, prefix, i,
				 prefix, i, prefix, i);
		rc = system(cmd);
		if (rc) {
			fprintf(stderr,
				"Error: sandbox: '%s' failed (status %d)\n",
				cmd, rc);
			return -EIO;
		}
	}
	return 0;
}

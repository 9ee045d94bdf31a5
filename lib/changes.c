// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * changes.c - who changed what, and how it ended: every change is sent to
 * syslog (which the journal reads) and, when the instance is open for
 * writing, recorded in its change log (xnf_changes, a ring of the last
 * XNF_CHANGES_MAX), which `xnf monitor` follows.
 *
 * The writer holds the instance lock, so records are numbered without a
 * race: the record first, then xnf_config.change_seq, so a reader that
 * sees a number finds its record written (or already overwritten by a
 * later one, which seq_end tells).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "xnf.h"
#include "priv.h"

#define AUID_UNSET 4294967295u

/* The login uid the kernel's audit keeps for the session (what su and
 * sudo do not change); unset without audit or for daemons. */
static __u32 login_uid(void)
{
	char buf[16] = "";
	unsigned long v;
	char *end;
	ssize_t n;
	int fd;

	fd = open("/proc/self/loginuid", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return AUID_UNSET;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return AUID_UNSET;
	buf[n] = '\0';
	v = strtoul(buf, &end, 10);
	return end == buf || v > AUID_UNSET ? AUID_UNSET : (__u32)v;
}

/* @src into @dst (XNF_CHANGE_TEXT), cut with "..." when it is longer. */
static void text_copy(char *dst, const char *src)
{
	size_t n = strlen(src);

	if (n < XNF_CHANGE_TEXT) {
		memcpy(dst, src, n + 1);
		return;
	}
	memcpy(dst, src, XNF_CHANGE_TEXT - 4);
	strcpy(dst + XNF_CHANGE_TEXT - 4, "...");
}

static int record(struct xnf_dp *dp, const struct xnf_change *c)
{
	struct xnf_change rec = *c;
	struct xnf_config cfg;
	__u32 zero = 0, slot;
	int err;

	err = xnf_cfg_read(dp, &cfg);
	if (err)
		return err;
	rec.seq = rec.seq_end = cfg.change_seq + 1;
	slot = rec.seq % XNF_CHANGES_MAX;
	if (bpf_map_update_elem(xnf_table_fd(dp, XNF_T_CHANGES), &slot, &rec,
				BPF_ANY))
		return -errno;
	cfg.change_seq = rec.seq;
	return bpf_map_update_elem(xnf_table_fd(dp, XNF_T_CFG), &zero, &cfg,
				   BPF_ANY) ?
		       -errno :
		       0;
}

int xnf_change_log(struct xnf_dp *dp, enum xnf_change_kind kind,
		   const char *cmd, bool failed, const char *msg)
{
	struct xnf_change c = {
		.pid = getpid(),
		.uid = getuid(),
		.auid = login_uid(),
		.failed = failed,
	};
	struct timespec ts;
	char who[64];
	int prio, err = 0;

	clock_gettime(CLOCK_REALTIME, &ts);
	c.time = (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
	text_copy(c.cmd, cmd);
	text_copy(c.msg, msg ?: "");
	if (dp && !dp->reader)
		err = record(dp, &c);

	if (c.auid != AUID_UNSET && c.auid != c.uid)
		snprintf(who, sizeof(who), "uid %u, login uid %u", c.uid, c.auid);
	else
		snprintf(who, sizeof(who), "uid %u", c.uid);
	/* Commands at notice, what daemons do on their own at info, so
	 * that a journal filtered at notice shows what people did. */
	prio = failed			    ? LOG_ERR :
	       kind == XNF_CHANGE_AUTOMATIC ? LOG_INFO :
					      LOG_NOTICE;
	syslog(LOG_DAEMON | prio, "%s: %s (%s)%s%s%s",
	       failed ? "failed" : "changed", c.cmd, who, *c.msg ? ": " : "",
	       c.msg, err ? " [not in the instance's change log]" : "");
	return err;
}

int xnf_change_seq(struct xnf_dp *dp, __u64 *seq)
{
	struct xnf_config cfg;
	int err;

	err = xnf_cfg_read(dp, &cfg);
	if (!err)
		*seq = cfg.change_seq;
	return err;
}

int xnf_change_read(struct xnf_dp *dp, __u64 seq, struct xnf_change *c)
{
	__u32 slot = seq % XNF_CHANGES_MAX;

	if (bpf_map_lookup_elem(xnf_table_fd(dp, XNF_T_CHANGES), &slot, c))
		return -errno;
	/* Text from a map: terminated whatever wrote it. */
	c->cmd[XNF_CHANGE_TEXT - 1] = c->msg[XNF_CHANGE_TEXT - 1] = '\0';
	if (c->seq == seq && c->seq_end == seq)
		return 0;
	/* Written later over it, being written now, or not yet. */
	return c->seq > seq || c->seq != c->seq_end ? -ESTALE : -ENOENT;
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The change log (lib/changes.c): numbered from 1 without a gap, a
 * record overwritten by a later one and a record read while it was being
 * overwritten are told apart from a good one, the exception actions'
 * writer keeps the number, and a long command is cut, not overrun.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "fixture.h"

TEST(changes_log)
{
	struct xnf_change c;
	struct xnf_config cfg;
	char cmd[600];
	__u64 seq = 99;
	__u32 i, slot;
	struct fx f;

	if (!fx_open(&f))
		return;
	ASSERT_OK(xnf_change_seq(f.dp, &seq), "seq");
	ASSERT_EQ(seq, 0ULL, "a fresh instance has no change");
	ASSERT_EQ(xnf_change_read(f.dp, 1, &c), -ENOENT, "not written yet");

	ASSERT_OK(xnf_change_log(f.dp, XNF_CHANGE_COMMAND, "route add x", false,
				 NULL),
		  "log");
	ASSERT_OK(xnf_change_log(f.dp, XNF_CHANGE_COMMAND, "route del y", true,
				 "no route y"),
		  "log a failure");
	ASSERT_OK(xnf_change_seq(f.dp, &seq), "seq");
	ASSERT_EQ(seq, 2ULL, "two changes");
	if (ASSERT_OK(xnf_change_read(f.dp, 2, &c), "read 2")) {
		ASSERT_TRUE(!strcmp(c.cmd, "route del y"), "command");
		ASSERT_TRUE(!strcmp(c.msg, "no route y"), "message");
		ASSERT_EQ(c.failed, 1U, "failed");
		ASSERT_EQ(c.pid, (__u32)getpid(), "pid");
		ASSERT_EQ(c.uid, (__u32)getuid(), "uid");
	}

	/* The writer of the exception actions keeps the number. */
	ASSERT_OK(xnf_cfg_read(f.dp, &cfg), "cfg");
	cfg.change_seq = 0;
	ASSERT_OK(xnf_cfg_write(f.dp, &cfg), "cfg write");
	ASSERT_OK(xnf_change_seq(f.dp, &seq), "seq");
	ASSERT_EQ(seq, 2ULL, "kept by xnf_cfg_write");

	/* A command longer than a record: cut with "...". */
	memset(cmd, 'a', sizeof(cmd) - 1);
	cmd[sizeof(cmd) - 1] = '\0';
	ASSERT_OK(xnf_change_log(f.dp, XNF_CHANGE_AUTOMATIC, cmd, false, cmd),
		  "long");
	if (ASSERT_OK(xnf_change_read(f.dp, 3, &c), "read 3")) {
		ASSERT_EQ(strlen(c.cmd), (size_t)XNF_CHANGE_TEXT - 1, "cut");
		ASSERT_TRUE(!strcmp(c.cmd + XNF_CHANGE_TEXT - 4, "..."),
			    "marked");
	}

	/* Around the ring: change 3 gives its slot to 3 + XNF_CHANGES_MAX. */
	for (i = 0; i < XNF_CHANGES_MAX; i++)
		xnf_change_log(f.dp, XNF_CHANGE_AUTOMATIC, "route sync", false,
			       "batch");
	ASSERT_EQ(xnf_change_read(f.dp, 3, &c), -ESTALE, "overwritten");
	ASSERT_OK(xnf_change_read(f.dp, 3 + XNF_CHANGES_MAX, &c), "the last");
	ASSERT_EQ(c.seq, 3ULL + XNF_CHANGES_MAX, "its number");

	/* Read halfway through its overwriting: the ends differ. */
	slot = (4 + XNF_CHANGES_MAX) % XNF_CHANGES_MAX;
	ASSERT_OK(bpf_map_lookup_elem(xnf_table_fd(f.dp, XNF_T_CHANGES), &slot,
				      &c),
		  "lookup");
	c.seq = 4 + 2 * XNF_CHANGES_MAX;
	ASSERT_OK(bpf_map_update_elem(xnf_table_fd(f.dp, XNF_T_CHANGES), &slot,
				      &c, BPF_ANY),
		  "torn");
	ASSERT_EQ(xnf_change_read(f.dp, 4 + XNF_CHANGES_MAX, &c), -ESTALE,
		  "a torn record is not read as good");
	fx_close(&f);
}

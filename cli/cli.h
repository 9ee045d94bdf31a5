/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * cli.h - what the commands of `xnf` share: global options, the locked
 * instance, argument parsing for the nouns operators type (prefixes,
 * addresses, MACs, ports, protocols, devices), and the one error path.
 *
 * Every command is `int do_OBJECT(int argc, char **argv)` with argv[0] the
 * first word after the object; it returns 0 or -1 after printing
 * "Error: ..." (cli_err) with a hint at the fix.
 */
#ifndef XNF_CLI_H
#define XNF_CLI_H

#include <stdbool.h>
#include <linux/types.h>

#include "xnf.h"
#include "conf.h"
#include "print.h"

/* A batch being read: its configuration lines, as the change log names
 * them once they ran, and the numbers of its other lines, which run
 * after the commit. */
struct cli_batch {
	char **lines;
	__u32 nlines;
	int *later;
	__u32 nlater;
};

struct cli {
	const char *root;	/* XNF_PIN_ROOT or XNF_DEFAULT_PIN_ROOT */
	struct xnf_dp *dp;	/* opened on first use, kept until exit */
	unsigned int wait;	/* -w: seconds a writer waits for the lock */
	bool batch;		/* running xnf -b: one lock for the batch */
	const char *batch_file; /* the batch line being run, which */
	int batch_line;		/* errors name: "FILE:LINE: ..." */
	int failed_line;	/* where cli_lines() stopped */
	int errors;		/* errors printed (cli_err) */
	/* The candidate the configuration commands of this run edit (a
	 * batch's, or apply's file's: commit.c); NULL: each configuration
	 * command is a candidate of its own, committed at once. While a
	 * batch builds its candidate, the other commands wait for the
	 * commit (defer); while apply reads its file, they are refused. */
	struct xnf_conf *cand;
	bool defer;
	bool existing; /* the one-line command needs an instance */
	struct cli_batch *batch_run; /* the batch being read (commit.c) */
	/* The change log (cli_run): the command opened the instance for
	 * writing; it logged its start (a daemon); the last error. */
	bool wrote;
	bool started;
	char last_err[XNF_CHANGE_TEXT];
	char note[XNF_CHANGE_TEXT]; /* what it did, when it says (apply) */
};
extern struct cli cli;

/* "Error: <msg>\n" on stderr, or {"schema": "xnf/error/1", "error":
 * "<msg>"} on stdout under -j (print_err), "FILE:LINE: " before <msg> in a
 * batch; returns -1. */
int cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Locks the pin root (creating it and mounting bpffs on /sys/fs/bpf if
 * needed; waiting at most -w seconds for another holder) and opens the
 * instance; with !create, a missing instance is an error that says to
 * attach first. The lock is held until exit, so concurrent xnf commands
 * that change something run one after the other. */
struct xnf_dp *cli_dp(bool create);
/* A command that runs until stopped (route sync, neigh follow, worker)
 * records its start in the change log now, with the lock still held; its
 * end is recorded as every command's is, when it returns (cli_run). */
void cli_change_started(void);
/* The instance for a command that only reads: no lock, so it never waits
 * for a writer (XNF_OPEN_READ); in a batch, the batch's locked instance. */
struct xnf_dp *cli_dp_read(void);

/* The instance opened for writing (locked, kept in cli.dp) if there is
 * one; *@dp NULL when there is none (nothing is created). 0 or -1 after
 * an error. */
int cli_dp_if_any(struct xnf_dp **dp);

/* Object / command tables. A word names the entry it equals, else the
 * first entry it is a prefix of (as ip(8) does): a table's order is the
 * order its prefixes resolve. */
struct cli_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	unsigned int flags;
};
/* A configuration command: it parses its words, then edits the
 * candidate cli_candidate() gives it (run by cli_edit()). */
#define CLI_EDIT     0x1
/* An object that has configuration commands: its own table says which. */
#define CLI_CONF_OBJ 0x2
/* A configuration command that needs an instance (detach, chain set,
 * destroy): without one it is refused before its edit. */
#define CLI_EXISTING 0x4
/* Named in full only, never by a prefix: it destroys data (fw reset). */
#define CLI_FULL     0x8
bool is_prefix(const char *pfx, const char *str);
/* Runs the command of @cmds named @argv[0], or the first one whose name
 * it is a prefix of; with no argv[0], runs @cmds[0]. */
int cli_dispatch(const struct cli_cmd *cmds, const char *what, int argc,
		 char **argv);
/* A configuration command (commit.c): its edit of the run's candidate
 * (cli.cand), or, without one, of a candidate of its own over what runs,
 * committed at once (a single `xnf` command). */
int cli_edit(const struct cli_cmd *cmd, int argc, char **argv);
/* The candidate a configuration command edits, once its words are read:
 * the run's, or a one-line candidate over what runs (locking the
 * instance); NULL after an error. */
struct xnf_conf *cli_candidate(void);
/* A command that is no configuration command met while cli.cand is set:
 * 0 when it waits for the batch's commit (defer), else -1 with an error
 * naming @what. */
int cli_defer(const char *what);
/* Commits @c to the instance (opened for writing, created if there is
 * none, @flags of xnf_open()), as @what (the change log's words when it
 * is killed): 0, or -1 after an error that says what failed and what to
 * do. @chg (may be NULL) gets what it changed. */
int cli_commit(const struct xnf_conf *c, unsigned int flags, const char *what,
	       struct xnf_conf_changes *chg);

#define NEXT_ARG()      \
	({              \
		argc--; \
		argv++; \
	})
#define REQ_ARGS(n, what)                                                  \
	({                                                                 \
		if (argc < (n)) {                                          \
			cli_err("%s: missing argument; see 'xnf %s help'", \
				what, what);                               \
			return -1;                                         \
		}                                                          \
	})

/* <root>/dev/<dev>[/<name>] (<root>/dev for a NULL @dev) into
 * buf[PATH_MAX] (xnf_dev_path): 0, or -errno and buf "". */
int cli_dev_path(char *buf, const char *dev, const char *name);
/* Index of the keyword of @kws (NULL-terminated) that @arg is, exactly or
 * as a unique prefix; -1 after an error naming @what and showing @help. */
int cli_keyword(const char *arg, const char *const *kws, const char *what,
		const char *help);

/* Parsers: 0, or -1 after cli_err naming the input and the form expected. */
int parse_prefix(const char *s, int *family, __u8 addr[16], __u32 *plen);
int parse_addr(const char *s, int *family, __u8 addr[16]);
int parse_mac(const char *s, __u8 mac[6]);
int parse_port_range(const char *s, __u16 *lo, __u16 *hi);
int parse_proto(const char *s, __u8 *proto);
int parse_u32(const char *s, const char *what, __u32 *v);
int parse_action(const char *s, const char *allowed, __u32 *act);
/* 0 when @dev can name a device (xnf_dev_name_check), or -1 with an
 * error: for the commands that look a device up in the pins. */
int cli_dev_check(const char *dev);
/* ifindex of @dev in this network namespace (xnf_dev_ifindex), or -1 with
 * an error. */
int cli_ifindex(const char *dev, __u32 *ifindex);
int cli_ifmac(const char *dev, __u8 mac[6]);

/* Formatting. */
const char *fmt_prefix(int family, const __u8 *addr, __u32 plen, char *buf,
		       size_t len);
const char *fmt_addr(int family, const __u8 *addr, char *buf, size_t len);
const char *fmt_mac(const __u8 *mac, char *buf, size_t len);
const char *fmt_proto(__u8 proto, char *buf, size_t len);
const char *fmt_ifname(__u32 ifindex, char *buf);
/* fmt_ifname as a word of the language (cli_word), in buf[CLI_DEV_WORD]. */
const char *fmt_ifword(__u32 ifindex, char *buf);
const char *fmt_action(__u32 act);

/* The objects. */
int do_attach(int argc, char **argv);
int do_detach(int argc, char **argv);
int do_chain(int argc, char **argv);
int do_status(int argc, char **argv);
int do_stats(int argc, char **argv);
int do_route(int argc, char **argv);
int do_fw(int argc, char **argv);
/* xnf nat: the NAT rules (cmd_nat.c). */
int do_nat(int argc, char **argv);
int do_fdb(int argc, char **argv);
int do_xconnect(int argc, char **argv);
int do_config(int argc, char **argv);
/* xnf ct: the connection table (cmd_ct.c). */
int do_ct(int argc, char **argv);
int do_destroy(int argc, char **argv);
int do_plan(int argc, char **argv);
int do_worker(int argc, char **argv);
/* xnf route sync (cmd_sync.c) and xnf neigh follow. */
int do_route_sync(int argc, char **argv);
int do_neigh(int argc, char **argv);
/* xnf -V: version, libbpf, libxdp, table schema (cmd_version.c). */
int cli_version(void);
/* AF_XDP workers of @dev in `xnf stats` / `xnf status` (cmd_worker.c):
 * a "workers" array with -j. */
void cli_workers_show(const char *dev, bool brief);
/* Zeroes their counters (the live ones zero their own): 0 or -errno. */
/* "queues N" / "cores LIST|auto" (cmd_plan.c), shared by plan and attach:
 * 1 when argv[0] was one of them (both words consumed), 0 when it was not,
 * -1 after an error. */
struct xnf_plan_req;
int cli_parse_placement(int *argc, char ***argv, struct xnf_plan_req *req,
			bool *have_queues, bool *have_cores);
/* "prio 10 drop proto tcp dport 23": @r in the words of 'xnf fw add'. */
const char *cli_fw_rule_text(const struct xnf_fw_rule *r, char *buf, size_t len);
/* A NAT rule in the words of `xnf nat add` (cmd_nat.c). */
const char *cli_nat_rule_text(const struct xnf_nat_rule *r, char *buf,
			      size_t len);
/* The match words of 'xnf fw add' (no prio, no action, no ct state) into
 * @r, for a trace: 0, or -1 after an error. */
int cli_fw_parse_match(int argc, char **argv, struct xnf_fw_rule *r);
/* nft's names: of an ICMP or ICMPv6 type (or its number), of TCP flags
 * ("syn,ack"), of a ct state ("new"; "?" for a value out of range). */
const char *cli_icmp_type_text(bool v6, __u8 type, char *buf, size_t len);
const char *cli_tcp_flags_text(__u8 flags, char *buf, size_t len);
const char *cli_ct_state_text(__u8 state);
/* xnf trace (cmd_trace.c). */
int do_trace(int argc, char **argv);
/* "proto tcp dport 23", or "any": what @r matches, in the same words and
 * order (fw show, stats and Prometheus print a rule alike). */
const char *cli_fw_match_text(const struct xnf_fw_rule *r, char *buf, size_t len);
/* "198.51.100.0/24 via 192.0.2.1 dev d1 lladdr MAC", "203.0.113.0/24
 * blackhole": @e in the words of 'xnf route add' (the device a word,
 * cli_word). */
const char *cli_route_text(const struct xnf_route_entry *e, char *buf,
			   size_t len);
/* "via 192.0.2.1 dev d1 lladdr MAC": one next hop of a route. */
const char *cli_nexthop_text(const struct xnf_route *rt, char *buf, size_t len);
/*
 * What `-b` and `apply` read (xnf(8) says it), far above what any real
 * file needs and what `xnf save` prints: its longest line, a route of
 * XNF_NHG_PATHS next hops of 7 words, is 115 words and about 2 KB with
 * the longest addresses and quoted names; its longest word, a CPU list of
 * 1024 CPUs, about 2 KB; a table of 2^21 routes of each family, with the
 * longest addresses, about 500 MB. A longer word than a path can be is
 * refused (by cli_run), so that no error quotes a megabyte back.
 */
#define CLI_TEXT_BYTES (512u << 20) /* a file */
#define CLI_LINE_BYTES (64u << 10)  /* a line */
#define CLI_LINE_WORDS 256	    /* words of a line */
#define CLI_WORD_BYTES 4095	    /* a word: the longest path */

/* A whole file ("-": stdin) in memory, NUL-terminated, so that its lines
 * can be run more than once: 0, or -1 after an error. Read from a regular
 * file, a pipe, a socket or, on stdin, a terminal (with the instance
 * locked, an apply in a batch: a regular file only); never a device. A
 * NUL byte, a longer line or file than above is an error naming the
 * line. */
struct cli_text {
	const char *name;
	char *data;
	size_t len;
};
int cli_text_read(const char *file, struct cli_text *t);
/* @fn(argc, argv) for each line of @t with words; stops at the first
 * failure. An unterminated quote, text right after a closing quote or
 * more than CLI_LINE_WORDS words is an error naming the line; CRLF ends
 * are accepted. Errors say "FILE:LINE: ...". */
int cli_lines(const struct cli_text *t, int (*fn)(int argc, char **argv));
/* @w as one word of the language of `-b` and apply, which the shell reads
 * as the same word: as it is when it has only letters, digits and
 * "_@%+=:,./-", else in double quotes with '"', '\', '$' and '`' after a
 * '\' (cli_lines reads them back). In @buf of @len bytes, cut to fit
 * (2 * strlen(@w) + 3 always fit). */
const char *cli_word(const char *w, char *buf, size_t len);
/* A device name as a word (cli_word): the size of its buffer. */
#define CLI_DEV_WORD (2 * 15 + 3)
/* The objects of `xnf` (main.c), for cli_lines callers. */
int cli_run(int argc, char **argv);
/* The command being run, as one line (the change log's words). */
const char *cli_cmd_text(void);
/* xnf -b FILE (commit.c). */
int cli_batch(const char *file);
/* The element of a configuration change as a line of the configuration
 * language, as `xnf save` prints it (cmd_save.c): @new, or @old of a
 * removal; in @buf, NULL when it is a cross-connect without its peer. */
const char *cli_conf_line(const struct xnf_conf_diff *d,
			  const struct xnf_conf_change *ch, bool new, char *buf,
			  size_t len);

int do_save(int argc, char **argv);
int do_monitor(int argc, char **argv);
int do_apply(int argc, char **argv);

#endif /* XNF_CLI_H */

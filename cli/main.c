// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xnf - attach NF chains to interfaces and manage their tables, in the
 * manner of ip(8) and bpftool(8): xnf [OPTIONS] OBJECT [COMMAND [ARGS]].
 * State lives in bpffs under the pin root, so every invocation is a short
 * process and the dataplane keeps forwarding after it exits.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cli.h"
#include "prom.h"

struct cli cli;

int cli_err(const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;

	cli.errors++;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	/* The first: what a later "the command failed" follows from. */
	if (!cli.last_err[0])
		snprintf(cli.last_err, sizeof(cli.last_err), "%s",
			 msg ?: "out of memory formatting an error");
	/* One line for a failed batch line: where, then what. */
	if (cli.batch_file)
		print_err("%s:%d: %s", cli.batch_file, cli.batch_line,
			  msg ?: "out of memory formatting an error");
	else
		print_err("%s", msg ?: "out of memory formatting an error");
	free(msg);
	return -1;
}

/* libxnf's messages: at warning level, the command's warnings (print_warn:
 * "Warning: ...", or an xnf/warning/1 document on stderr under -j), from
 * any thread (the AF_XDP workers' too); what -v adds stays text. Its
 * errors come back in the error buffers of its calls. */
static void lib_log(enum xnf_log_level level, const char *msg)
{
	size_t n = strlen(msg);

	if (level == XNF_LOG_WARN)
		print_warn("%.*s", (int)(n - (n && msg[n - 1] == '\n')), msg);
	else
		fputs(msg, stderr);
}

bool is_prefix(const char *pfx, const char *str)
{
	return *pfx && !strncmp(pfx, str, strlen(pfx));
}

int cli_dispatch(const struct cli_cmd *cmds, const char *what, int argc,
		 char **argv)
{
	const struct cli_cmd *c, *found = NULL, *full = NULL;

	if (argc < 1) {
		found = cmds;
		goto run;
	}
	/* An exact name, else the first name of the table that @argv[0]
	 * begins, as ip(8) resolves a prefix: the tables are in the order
	 * prefixes resolve (xnf(8), "Prefixes"). */
	for (c = cmds; c->name; c++) {
		if (!strcmp(argv[0], c->name)) {
			found = c;
			break;
		}
		if (found || !is_prefix(argv[0], c->name))
			continue;
		if (c->flags & CLI_FULL)
			full = full ?: c;
		else
			found = c;
	}
	if (!found && full)
		return cli_err("'%s' would be '%s %s', which is never "
			       "abbreviated: type it in full",
			       argv[0], what, full->name);
	if (!found && !strcmp(what, "xnf"))
		return cli_err("unknown object '%s'; try 'xnf help'", argv[0]);
	if (!found)
		return cli_err("unknown %s command '%s'; try 'xnf %s help'",
			       what, argv[0], what);
	argc--;
	argv++;
run:
	if (found->flags & CLI_EDIT)
		return cli_edit(found, argc, argv);
	if (cli.cand && !(found->flags & CLI_CONF_OBJ)) {
		char name[64];

		snprintf(name, sizeof(name), "%s%s%s",
			 strcmp(what, "xnf") ? what : "",
			 strcmp(what, "xnf") ? " " : "", found->name);
		return cli_defer(name);
	}
	return found->fn(argc, argv);
}

static struct xnf_dp *dp_open(unsigned int flags)
{
	char err[512];

	if (xnf_open(cli.root, flags, cli.wait, &cli.dp, err, sizeof(err))) {
		cli.dp = NULL;
		cli_err("%s", err);
		return NULL;
	}
	return cli.dp;
}

static struct xnf_dp *dp_writer(bool create)
{
	if (cli.dp && !xnf_dp_reader(cli.dp))
		return cli.dp;
	xnf_dp_close(cli.dp);
	return dp_open(create ? XNF_OPEN_CREATE : 0);
}

struct xnf_dp *cli_dp(bool create)
{
	cli.wrote = true;
	return dp_writer(create);
}

struct xnf_dp *cli_dp_read(void)
{
	/* A batch runs under one lock, its reads included. */
	if (cli.batch)
		return dp_writer(false);
	return cli.dp ?: dp_open(XNF_OPEN_READ);
}

static void usage(FILE *f)
{
	char nfs[256];

	xnf_nf_list(nfs, sizeof(nfs), " | ");
	fprintf(f,
		"Usage: xnf [OPTIONS] OBJECT { COMMAND | help }\n"
		"       xnf -b FILE\n"
		"OBJECT := { attach | detach | chain | status | stats | route | fw | fdb |\n"
		"            xconnect | config | ct | save | apply | destroy | plan | worker |\n"
		"            neigh | model | exporter | monitor | nat | trace }\n"
		"OPTIONS := { -j | -b FILE | -w SECONDS | -v | -V | -h }\n"
		"\n"
		"  xnf attach DEV chain NF[,NF...] [mode { native | generic }]\n"
		"             [fused | tailcall] [fib | lpm] [queues N] [cores { LIST | auto }]\n"
		"  xnf detach { DEV | all }\n"
		"  xnf chain set DEV NF[,NF...] [fused | tailcall] [fib | lpm]\n"
		"  xnf chain show [DEV]\n"
		"  xnf status [DEV]\n"
		"  xnf stats [[dev] DEV] [percpu] [watch SECONDS [count N]] [reset]\n"
		"  xnf stats [[dev] DEV] { -f | format } { text | prometheus }\n"
		"  xnf exporter [listen ADDR:PORT]\n"
		"  xnf monitor [changes | log [syslog]] [last N] [once]\n"
		"  xnf trace [proto PROTO] [src PREFIX] [dst PREFIX] [sport PORTS]\n"
		"             [dport PORTS] [iif DEV] [{ icmp | icmpv6 } type TYPE [code CODE]]\n"
		"             [tcp flags FLAGS [/ FLAGS]] [count N] [timeout SECONDS]\n"
		"             PROTO := { tcp | udp | sctp | icmp | icmpv6 | NUMBER }\n"
		"             FLAGS := FLAG[,FLAG...]\n"
		"             FLAG := { fin | syn | rst | psh | ack | urg | ecn | cwr }\n"
		"  xnf route { add | replace } PREFIX { NEXTHOP | nexthop NH nexthop NH ... }\n"
		"             NEXTHOP := { NH | local | blackhole | unreachable | kernel }\n"
		"             NH := { via ADDR [dev DEV [lladdr MAC]] | dev DEV lladdr MAC }\n"
		"  xnf route { del PREFIX | flush | show }\n"
		"  xnf route get ADDR [from ADDR proto PROTO [sport N dport N]]\n"
		"             PROTO := { tcp | udp | sctp | icmp | icmpv6 | NUMBER }\n"
		"  xnf route sync [table ID|NAME] [proto LIST] [window MS] [resync SECONDS]\n"
		"             [rcvbuf BYTES]\n"
		"  xnf route sync flush\n"
		"  xnf neigh follow\n"
		"  xnf fw add [prio N] { allow | drop } [proto PROTO] [src PREFIX] [dst PREFIX]\n"
		"             [sport PORTS] [dport PORTS] [ct state STATES] [iif DEV]\n"
		"             [{ icmp | icmpv6 } type TYPE [code CODE]] [tcp flags FLAGS [/ FLAGS]]\n"
		"             [log [prefix TEXT] [limit rate N/UNIT [burst B packets]]]\n"
		"             PROTO := { tcp | udp | sctp | icmp | icmpv6 | NUMBER }\n"
		"             STATES := STATE[,STATE...]  FLAGS := FLAG[,FLAG...]\n"
		"             STATE := { new | established | related | invalid | untracked }\n"
		"             FLAG := { fin | syn | rst | psh | ack | urg | ecn | cwr }\n"
		"             UNIT := { second | minute | hour | day }\n"
		"  xnf fw { del prio N | default { allow | drop } | flush | show | reset }\n"
		"  xnf nat add [prio N] masquerade [oif DEV] [saddr PREFIX] [daddr PREFIX]\n"
		"             [proto PROTO] [to :PORTS] [random] [persistent]\n"
		"  xnf nat add [prio N] snat [oif DEV] [saddr PREFIX] [daddr PREFIX]\n"
		"             [proto PROTO] to ADDR[-ADDR][:PORTS] [random] [persistent]\n"
		"  xnf nat add [prio N] dnat [iif DEV] [saddr PREFIX] [daddr PREFIX]\n"
		"             [proto { tcp | udp } [dport PORTS]] to ADDR[:PORT]\n"
		"             PROTO := { tcp | udp | icmp | icmpv6 }\n"
		"  xnf nat { del prio N | flush | show }\n"
		"  xnf fdb { add | replace } MAC dev DEV | xnf fdb { del MAC | show }\n"
		"  xnf xconnect [add] DEV1 DEV2 [lladdr MAC1 MAC2]\n"
		"  xnf xconnect { del DEV | show }\n"
		"  xnf config show\n"
		"  xnf config set KEY { pass | drop | flood }\n"
		"  xnf config set flow_cache { on | off }\n"
		"  xnf config set fw_input { kernel | rules }\n"
		"  xnf config set ct_fragments { pass | drop }\n"
		"  xnf config set { CT_TIMEOUT SECONDS | ct_max ENTRIES }\n"
		"  xnf config set log_reasons { none | REASON[,REASON...] }\n"
		"  xnf config set log_reasons_limit N/{ second | minute | hour | day }\n"
		"             KEY := { no_route | ttl_expired | local | l2_miss | xsk_fallback |\n"
		"                      martian }\n"
		"             CT_TIMEOUT := { ct_timeout_syn_sent | ct_timeout_syn_recv |\n"
		"                      ct_timeout_established | ct_timeout_fin_wait |\n"
		"                      ct_timeout_close_wait | ct_timeout_last_ack |\n"
		"                      ct_timeout_time_wait | ct_timeout_close |\n"
		"                      ct_timeout_syn_sent2 | ct_timeout_udp |\n"
		"                      ct_timeout_udp_stream | ct_timeout_icmp |\n"
		"                      ct_timeout_generic }\n"
		"  xnf ct [show] [FILTER] | xnf ct flush [FILTER] | xnf ct stats\n"
		"             FILTER := [family { inet | inet6 }] [proto PROTO] [addr ADDR]\n"
		"                       [src ADDR] [dst ADDR] [port N] [sport N] [dport N]\n"
		"                       [state STATE[,STATE...]] [reply-src ADDR]\n"
		"                       [reply-dst ADDR] [nat NAT[,NAT...]] [oif DEV]\n"
		"             PROTO := { tcp | udp | sctp | icmp | icmpv6 | NUMBER }\n"
		"             NAT := { snat | dnat | masquerade | any }\n"
		"             STATE := { SYN_SENT | ESTABLISHED | ... | assured | unreplied }\n"
		"  xnf save\n"
		"  xnf apply [check] { FILE | - }\n"
		"  xnf destroy\n"
		"  xnf plan DEV [queues N] [cores LIST]\n"
		"  xnf worker DEV nf NAME[,NAME...] [args OPTIONS] [queues LIST] [batch N]\n"
		"             [ring N] [frames N] [zerocopy { auto | on | off }]\n"
		"             [egress DEV[,DEV...]] [busy-poll [usecs U] [budget N]\n"
		"             [defer N] [flush-timeout NS]] [spin] [cores LIST] [duration SEC]\n"
		"  xnf model { predict | dimension | validate } ...   (tools/xnf_model/)\n"
		"NF := { %s }\n"
		"-b FILE: the running configuration plus FILE's configuration lines, checked\n"
		"one by one and committed once, all or nothing (even when killed); FILE's\n"
		"other lines (show, stats, ...) run after the commit, in order.\n"
		"The pin root is %s, or $XNF_PIN_ROOT. `plan` reads sysfs/procfs below\n"
		"$XNF_SYSFS_ROOT (default /). A command that changes something waits at\n"
		"most -w SECONDS (default %d) for another one to finish.\n",
		nfs, XNF_DEFAULT_PIN_ROOT, XNF_WAIT_DEFAULT);
}

/* xnf help, xnf -h: asked for, so on stdout. */
static int do_help(int argc, char **argv)
{
	usage(stdout);
	return 0;
}

/*
 * xnf model ...: the batching model is a Python package, xnf_model
 * (tools/xnf_model/), run as `python3 -m xnf_model` by the Debian
 * interpreter that has numpy and scipy (install-deps). The package is found
 * in the first of $XNF_PYTHONPATH, ../share/xnf/python next to this binary
 * (`make install`, the package, and a DESTDIR never moved) and XNF_PYTHONDIR
 * fixed at build time (the source tree's tools/ for a build), so the
 * binary works from anywhere. The interpreter is
 * $XNF_PYTHON, else /usr/bin/python3. Outside a batch the tool replaces this
 * process, so its exit status is xnf's (3: the model did not converge).
 */
static int do_model(int argc, char **argv)
{
	const char *py = getenv("XNF_PYTHON") ?: "/usr/bin/python3";
	const char *old = getenv("PYTHONPATH"), *dirs[3], *dir = NULL;
	char self[PATH_MAX], pkg[PATH_MAX + 32], **args = NULL, *pypath = NULL;
	char *slash;
	int i, k = 0, status, ret = -1;
	ssize_t n;
	pid_t pid;

	n = readlink("/proc/self/exe", self, sizeof(self) - 32);
	slash = n > 0 ? memrchr(self, '/', n) : NULL;
	if (slash)
		strcpy(slash, "/../share/xnf/python");
	dirs[0] = getenv("XNF_PYTHONPATH");
	dirs[1] = slash ? self : NULL;
	dirs[2] = XNF_PYTHONDIR;
	for (i = 0; i < 3 && !dir; i++) {
		if (!dirs[i] || !*dirs[i])
			continue;
		snprintf(pkg, sizeof(pkg), "%s/xnf_model/__main__.py", dirs[i]);
		if (!access(pkg, R_OK))
			dir = dirs[i];
	}
	if (!dir)
		return cli_err("the model package xnf_model/ is in none of "
			       "'%s' ($XNF_PYTHONPATH), %s, %s; set "
			       "XNF_PYTHONPATH to the directory that holds it "
			       "(tools/ of an xnf source tree)",
			       dirs[0] ?: "", dirs[1] ?: "(no /proc/self/exe)",
			       dirs[2]);
	if (access(py, X_OK))
		return cli_err("cannot run %s (%s): the model needs python3 with "
			       "numpy and scipy; run scripts/install-deps.sh as "
			       "root, or set XNF_PYTHON",
			       py, strerror(errno));
	if (asprintf(&pypath, "%s%s%s", dir, old && *old ? ":" : "",
		     old && *old ? old : "") < 0 ||
	    setenv("PYTHONPATH", pypath, 1)) {
		free(pypath);
		return cli_err("out of memory");
	}
	free(pypath);
	args = calloc(argc + 6, sizeof(*args));
	if (!args)
		return cli_err("out of memory");
	args[k++] = (char *)py;
	/* No __pycache__ written into an installed package's directory. */
	args[k++] = "-B";
	args[k++] = "-m";
	args[k++] = "xnf_model";
	if (print_json())
		args[k++] = "-j";
	for (i = 0; i < argc; i++)
		args[k++] = argv[i];
	fflush(NULL);
	if (!cli.batch) {
		execv(py, args);
		cli_err("cannot run %s: %s", py, strerror(errno));
		goto out;
	}
	pid = fork();
	if (pid < 0) {
		cli_err("cannot start %s: %s", py, strerror(errno));
		goto out;
	}
	if (!pid) {
		execv(py, args);
		cli_err("cannot run %s: %s", py, strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0) {
		cli_err("waiting for %s: %s", py, strerror(errno));
		goto out;
	}
	/* The tool printed its own "Error: ..." */
	ret = WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -1;
	cli.errors += !!ret;
out:
	free(args);
	return ret;
}

/* In the order their prefixes resolve (cli_dispatch, xnf(8)): the first
 * object a word begins wins, so `xnf s` and `xnf st` are status, `xnf d`
 * detach (no prefix shorter than "des" is destroy), `xnf c` chain, `xnf f`
 * fw, `xnf a` attach, `xnf m` monitor. */
static const struct cli_cmd objects[] = {
	{ "help", do_help },
	{ "attach", do_attach, CLI_EDIT },
	{ "detach", do_detach, CLI_EDIT },
	{ "chain", do_chain, CLI_CONF_OBJ },
	{ "status", do_status },
	{ "stats", do_stats },
	{ "route", do_route, CLI_CONF_OBJ },
	{ "fw", do_fw, CLI_CONF_OBJ },
	{ "fdb", do_fdb, CLI_CONF_OBJ },
	{ "xconnect", do_xconnect, CLI_CONF_OBJ },
	{ "config", do_config, CLI_CONF_OBJ },
	{ "ct", do_ct },
	{ "destroy", do_destroy, CLI_EDIT | CLI_EXISTING },
	{ "save", do_save },
	{ "apply", do_apply },
	{ "plan", do_plan },
	{ "worker", do_worker },
	{ "neigh", do_neigh },
	{ "monitor", do_monitor },
	{ "model", do_model },
	{ "exporter", do_exporter },
	{ "nat", do_nat, CLI_CONF_OBJ },
	{ "trace", do_trace },
	{ NULL, NULL },
};

const char *cli_word(const char *w, char *buf, size_t len)
{
	const char *c;
	size_t n = 0;
	bool q = !*w;

	for (c = w; *c && !q; c++)
		q = !((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || strchr("_@%+=:,./-", *c));
	if (!len)
		return buf;
	if (q && n + 1 < len)
		buf[n++] = '"';
	for (c = w; *c && n + 1 < len; c++) {
		if (q && strchr("\"\\$`", *c)) {
			if (n + 2 >= len)
				break;
			buf[n++] = '\\';
		}
		buf[n++] = *c;
	}
	if (q && !*c && n + 1 < len)
		buf[n++] = '"';
	buf[n] = '\0';
	return buf;
}

/* @argv as one line that the shell and `xnf -b` read back as the same
 * words (cli_word), cut to @len. */
static void words_join(char *buf, size_t len, int argc, char **argv)
{
	size_t n = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < argc && n + 2 < len; i++) {
		if (i)
			buf[n++] = ' ';
		cli_word(argv[i], buf + n, len - n);
		n += strlen(buf + n);
	}
}

/* The command in the change log and syslog: how it ended. The lock is
 * taken again for it, as a daemon gave it up while it ran. */
static void change_log(const char *cmd, int ret)
{
	const char *msg = ret ? cli.last_err : cli.note;

	if (cli.started && !ret && !*msg)
		msg = "stopped";
	if (cli.dp && !xnf_dp_reader(cli.dp))
		xnf_dp_lock(cli.dp, LOCK_EX);
	if (xnf_change_log(cli.dp, XNF_CHANGE_COMMAND, cmd, ret, msg))
		print_warn("the change is not in the instance's change log "
			   "(xnf monitor does not show it; syslog has it)");
}

static char *cur_cmd;

const char *cli_cmd_text(void)
{
	return cur_cmd ?: "";
}

void cli_change_started(void)
{
	if (cli.cand || !cur_cmd)
		return;
	cli.started = true;
	xnf_change_log(cli.dp, XNF_CHANGE_COMMAND, cur_cmd, false, "started");
}

/*
 * One command of `xnf`, of a batch line or of the lines of apply's file.
 * A command that opened the instance for writing (cli_dp) changed it, or
 * tried: it goes to the change log with how it ended. The lines that
 * edit the candidate of a batch or of apply's file change nothing by
 * themselves: the batch logs its lines once they ran (commit.c), the
 * apply is logged as one command.
 */
int cli_run(int argc, char **argv)
{
	bool wrote = cli.wrote, started = cli.started;
	/* Longer than a record holds: xnf_change_log cuts it with "...". */
	char cmd[4 * XNF_CHANGE_TEXT], *outer = cur_cmd;
	int i, ret;

	/* No error quotes a hostile megabyte back whole. */
	for (i = 0; i < argc; i++)
		if (strlen(argv[i]) > CLI_WORD_BYTES)
			return cli_err("a word of %zu bytes ('%.32s...'): no word "
				       "of xnf is longer than %d",
				       strlen(argv[i]), argv[i], CLI_WORD_BYTES);
	words_join(cmd, sizeof(cmd), argc, argv);
	cur_cmd = cmd;
	cli.wrote = cli.started = false;
	cli.last_err[0] = cli.note[0] = '\0';
	ret = cli_dispatch(objects, "xnf", argc, argv);
	if (cli.wrote)
		change_log(cmd, ret);
	cli.wrote = wrote;
	cli.started = started;
	cur_cmd = outer;
	return ret;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

#define SPLIT_WORDS	  -1
#define SPLIT_OPEN_QUOTE  -2
#define SPLIT_AFTER_QUOTE -3

/*
 * Splits @line into words, in place: blanks separate them, and '#' where
 * a word would start begins a comment. A word that starts with '"' ends
 * at the next '"' that no '\' escapes; in it '\' before '"', '\', '$' or
 * '`' stands for that character, as in the shell's double quotes (what
 * cli_word writes), and a blank or the end of the line follows it. Any
 * other word is taken as it is, up to the next blank (the files of
 * earlier versions wrote device names so). Returns argc, or SPLIT_*.
 */
static int split_line(char *line, char **argv, int max)
{
	int argc = 0;
	char *p = line, *o;

	for (;;) {
		while (is_blank(*p))
			p++;
		if (!*p || *p == '#')
			return argc;
		if (argc == max)
			return SPLIT_WORDS;
		if (*p != '"') {
			argv[argc++] = p;
			while (*p && !is_blank(*p))
				p++;
			if (*p)
				*p++ = '\0';
			continue;
		}
		argv[argc++] = o = ++p;
		for (; *p != '"'; p++) {
			if (!*p)
				return SPLIT_OPEN_QUOTE;
			if (*p == '\\' && p[1] && strchr("\"\\$`", p[1]))
				p++;
			*o++ = *p;
		}
		if (p[1] && !is_blank(p[1]))
			return SPLIT_AFTER_QUOTE;
		*o = '\0';
		p++;
	}
}

static const char *file_kind(mode_t m)
{
	return S_ISREG(m)  ? "a regular file" :
	       S_ISFIFO(m) ? "a pipe" :
	       S_ISSOCK(m) ? "a socket" :
	       S_ISCHR(m)  ? "a character device" :
	       S_ISBLK(m)  ? "a block device" :
	       S_ISDIR(m)  ? "a directory" :
			     "a special file";
}

/*
 * The input of -b or apply, opened: a regular file, a pipe, a socket or,
 * as "-", a terminal. A device is refused before it is opened, whatever
 * symlink names it (reading /dev/zero would never end, opening some
 * devices does something), and what was opened is checked to be what was
 * looked at. With the instance locked (an apply in a batch), only a
 * regular file: a pipe or a terminal could keep every writer waiting.
 */
static int input_open(const char *file, int *fd)
{
	bool in = !strcmp(file, "-"), locked = cli.dp && !xnf_dp_reader(cli.dp);
	char target[PATH_MAX] = "", *real = NULL;
	const char *name = in ? "standard input" : file, *shown;
	struct stat st, now;
	bool ok;
	int ret;

	*fd = in ? STDIN_FILENO : -1;
	/* `xnf -b -` read it to its end: an empty configuration. */
	if (in && cli.batch_run)
		return cli_err("an apply in a batch reads a file it names, not "
			       "standard input");
	if (strlen(file) >= PATH_MAX)
		return cli_err("a file name of %zu bytes ('%.32s...'): no path "
			       "is that long",
			       strlen(file), file);
	if (in ? fstat(*fd, &st) : stat(file, &st))
		return cli_err("cannot read %s: %s", name, strerror(errno));
	ok = S_ISREG(st.st_mode) ||
	     (!locked && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) ||
			  (in && isatty(*fd))));
	if (!ok) {
		/* What it is, by the name the kernel knows it by. */
		if (in &&
		    readlink("/proc/self/fd/0", target, sizeof(target) - 1) < 0)
			target[0] = '\0';
		if (!in)
			real = realpath(file, NULL);
		shown = real && strcmp(real, file) ? real : target;
		ret = cli_err(
			"cannot read %s: it is %s%s%s%s; %s", name,
			file_kind(st.st_mode), *shown ? " (" : "", shown,
			*shown ? ")" : "",
			locked ?
				"an apply in a batch reads a regular file, as the batch holds the instance's lock" :
				"a configuration is read from a file, a pipe or standard input");
		free(real);
		return ret;
	}
	if (S_ISREG(st.st_mode) && st.st_size > CLI_TEXT_BYTES)
		return cli_err("%s is %lld bytes: xnf reads a configuration of "
			       "at most %u MiB",
			       name, (long long)st.st_size, CLI_TEXT_BYTES >> 20);
	if (in)
		return 0;
	*fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY |
				 (S_ISREG(st.st_mode) ? O_NONBLOCK : 0));
	if (*fd < 0)
		return cli_err("cannot open %s: %s", file, strerror(errno));
	if (fstat(*fd, &now) || now.st_dev != st.st_dev || now.st_ino != st.st_ino)
		return cli_err("cannot read %s: it was replaced while it was "
			       "opened",
			       file);
	return 0;
}

int cli_text_read(const char *file, struct cli_text *t)
{
	size_t cap = 0, start = 0;
	const char *p, *end, *nl;
	int fd, line = 1, ret = 0;
	ssize_t n;
	char *d;

	memset(t, 0, sizeof(*t));
	if (input_open(file, &fd)) {
		if (fd > STDIN_FILENO)
			close(fd);
		return -1;
	}
	if (fd == STDIN_FILENO && isatty(fd))
		fprintf(stderr, "xnf: reading commands from the terminal; end "
				"with Ctrl-D\n");
	while (!ret) {
		if (t->len == cap) {
			/* One byte more than a file may be: enough to tell. */
			cap = cap ? 2 * cap : 65536;
			if (cap > CLI_TEXT_BYTES + 1)
				cap = CLI_TEXT_BYTES + 1;
			d = realloc(t->data, cap + 1);
			if (!d) {
				ret = cli_err("out of memory reading %s", file);
				break;
			}
			t->data = d;
		}
		n = read(fd, t->data + t->len, cap - t->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			ret = cli_err("cannot read %s: %s", file,
				      strerror(errno));
		if (n <= 0)
			break;
		/* Each line is checked as it arrives: a stream of NULs, or
		 * one endless line, stops here, not when memory runs out. */
		for (p = t->data + t->len, end = p + n; p < end && !ret;
		     p = nl + 1) {
			nl = memchr(p, '\n', end - p);
			if (memchr(p, '\0', (nl ?: end) - p))
				ret = cli_err("%s:%d: a NUL byte in the line: "
					      "the file is not text",
					      file, line);
			else if ((size_t)((nl ?: end) - (t->data + start)) >
				 CLI_LINE_BYTES)
				ret = cli_err("%s:%d: a line of more than %u "
					      "bytes ('%.32s...'): no line of "
					      "xnf is that long",
					      file, line, CLI_LINE_BYTES,
					      t->data + start);
			if (!nl)
				break;
			line++;
			start = nl + 1 - t->data;
		}
		t->len += n;
		if (!ret && t->len > CLI_TEXT_BYTES)
			ret = cli_err("%s is more than %u MiB: xnf reads a "
				      "configuration of at most that",
				      file, CLI_TEXT_BYTES >> 20);
	}
	if (fd != STDIN_FILENO)
		close(fd);
	if (ret) {
		free(t->data);
		memset(t, 0, sizeof(*t));
		return -1;
	}
	t->data[t->len] = '\0';
	t->name = file;
	return 0;
}

int cli_lines(const struct cli_text *t, int (*fn)(int argc, char **argv))
{
	char *line = NULL, *argv[CLI_LINE_WORDS];
	size_t off = 0, len;
	int lineno = 0, argc, errors, ret = 0;
	const char *outer_file = cli.batch_file, *end;
	int outer_line = cli.batch_line;

	cli.batch_file = t->name;
	while (off < t->len && !ret) {
		end = memchr(t->data + off, '\n', t->len - off);
		len = end ? (size_t)(end - (t->data + off)) : t->len - off;
		cli.batch_line = ++lineno;
		/* A copy to split: the text is run more than once. */
		free(line);
		line = strndup(t->data + off, len);
		off += len + 1;
		if (!line) {
			ret = cli_err("out of memory");
			break;
		}
		argc = split_line(line, argv, CLI_LINE_WORDS);
		if (argc == SPLIT_WORDS)
			ret = cli_err("more than %d words: no line of xnf has "
				      "that many",
				      CLI_LINE_WORDS);
		else if (argc == SPLIT_OPEN_QUOTE)
			ret = cli_err("a quote is not closed: end the word "
				      "with '\"'");
		else if (argc == SPLIT_AFTER_QUOTE)
			ret = cli_err("a word goes on after its closing quote: "
				      "put all of the word in the quotes");
		if (argc <= 0)
			continue;
		errors = cli.errors;
		ret = fn(argc, argv);
		/* Each failure says what failed, once. */
		if (ret && cli.errors == errors)
			cli_err("the command failed");
	}
	if (ret)
		cli.failed_line = lineno;
	/* An apply in a batch: the batch's lines again. */
	cli.batch_file = outer_file;
	cli.batch_line = outer_line;
	free(line);
	return ret;
}

int cli_dp_if_any(struct xnf_dp **dp)
{
	char err[1024];
	int ret;

	*dp = NULL;
	if (cli.dp && !xnf_dp_reader(cli.dp)) {
		*dp = cli.dp;
		return 0;
	}
	xnf_dp_close(cli.dp);
	ret = xnf_open(cli.root, 0, cli.wait, &cli.dp, err, sizeof(err));
	if (ret) {
		cli.dp = NULL;
		return ret == -ENOENT ? 0 : cli_err("%s", err);
	}
	*dp = cli.dp;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "batch", required_argument, NULL, 'b' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "wait", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *batch = NULL;
	int opt, verbose = 0, version = 0, ret;
	char bad[160] = "", *end, root[XNF_ROOT_MAX];

	cli.wait = XNF_WAIT_DEFAULT;
	/* A wrong option is reported after all of them were read, so that
	 * a -j after it still makes it JSON. */
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+:jb:vw:hV", opts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			print_set_json(true);
			break;
		case 'b':
			batch = optarg;
			break;
		case 'v':
			verbose++;
			break;
		case 'w':
			errno = 0;
			cli.wait = strtoul(optarg, &end, 10);
			if ((errno || end == optarg || *end || *optarg == '-' ||
			     cli.wait == XNF_WAIT_FOREVER) &&
			    !*bad)
				snprintf(bad, sizeof(bad),
					 "invalid -w '%.32s': give the seconds to wait for another xnf to finish, e.g. -w 30",
					 optarg);
			break;
		case 'h':
			return do_help(0, NULL);
		case 'V':
			version = 1;
			break;
		case ':':
			if (!*bad)
				snprintf(bad, sizeof(bad),
					 "option -%c needs a value", optopt);
			break;
		default:
			if (*bad)
				break;
			if (!strncmp(argv[optind - 1], "--", 2))
				snprintf(bad, sizeof(bad),
					 "unknown option, or one that takes no value: '%.64s'",
					 argv[optind - 1]);
			else
				snprintf(bad, sizeof(bad),
					 "unknown option '-%c'", optopt);
		}
	}
	argc -= optind;
	argv += optind;
	setvbuf(stdout, NULL, _IOLBF, 0);
	cli.root = getenv("XNF_PIN_ROOT") ?: XNF_DEFAULT_PIN_ROOT;
	/* The path every command names it by (the host's bpffs under ip
	 * netns exec); when there is none, opening the instance says why. */
	if (!xnf_root_resolve(cli.root, root, sizeof(root), NULL, 0))
		cli.root = root;
	/* The change log's syslog half (xnf_change_log). */
	openlog("xnf", LOG_PID, LOG_DAEMON);
	xnf_libbpf_logging();
	xnf_set_log_level(verbose >= 2 ? XNF_LOG_DEBUG :
			  verbose      ? XNF_LOG_INFO :
					 XNF_LOG_WARN);
	xnf_set_log_fn(lib_log);

	if (*bad)
		ret = cli_err("%s; try 'xnf help'", bad);
	else if (version)
		ret = argc || batch ? cli_err("-V takes no other command") :
				      cli_version();
	else if (batch)
		ret = argc ? cli_err("-b takes no other command") :
			     cli_batch(batch);
	else if (argc < 1)
		ret = cli_err("no object given; try 'xnf help'");
	else
		ret = cli_run(argc, argv);
	/* A refusal that printed nothing still says so, once. */
	if (ret && !cli.errors)
		cli_err("the command failed without saying why; run it again with -v");
	xnf_dp_close(cli.dp);
	return ret ? 1 : 0;
}

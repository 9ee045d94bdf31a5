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
		"            xconnect | config | save | apply | destroy | plan | worker | neigh |\n"
		"            model | exporter | monitor }\n"
		"OPTIONS := { -j | -b FILE | -w SECONDS | -v | -V | -h }\n"
		"\n"
		"  xnf attach DEV chain NF[,NF...] [mode native|generic] [fused | tailcall]\n"
		"             [fib | lpm] [queues N] [cores LIST|auto]\n"
		"  xnf detach { DEV | all }\n"
		"  xnf chain set DEV NF[,NF...] [fused | tailcall] [fib | lpm]\n"
		"  xnf status [DEV]\n"
		"  xnf stats [DEV] [percpu] [watch SECONDS [count N]] [reset]\n"
		"  xnf stats [DEV] -f prometheus\n"
		"  xnf exporter [listen ADDR:PORT]\n"
		"  xnf route { add | replace } PREFIX { via ADDR [dev DEV [lladdr MAC]] |\n"
		"                          dev DEV lladdr MAC | local | blackhole | unreachable }\n"
		"  xnf route { del PREFIX | show }\n"
		"  xnf route sync [table ID] [proto LIST] [window MS] [resync SEC] [rcvbuf B]\n"
		"  xnf route sync flush\n"
		"  xnf fw add [prio N] { allow | drop } [proto P] [src PREFIX] [dst PREFIX]\n"
		"             [sport P[-Q]] [dport P[-Q]]\n"
		"  xnf fw { del prio N | default { allow | drop } | flush | show }\n"
		"  xnf fdb { add | replace } MAC dev DEV | xnf fdb { del MAC | show }\n"
		"  xnf xconnect DEV DEV [lladdr MAC MAC] | xnf xconnect { del DEV | show }\n"
		"  xnf config { show | set KEY { pass | drop | flood } }\n"
		"  xnf save                     the running configuration, as lines for apply\n"
		"  xnf apply [check] FILE|-     make the running configuration FILE's (check:\n"
		"                               print what would change)\n"
		"  xnf destroy\n"
		"  xnf plan DEV [queues N] [cores LIST]\n"
		"  xnf worker DEV nf NAME[,NAME...] [queues LIST] [batch N] [ring N]\n"
		"             [zerocopy auto|on|off] [egress DEV[,DEV...]] [busy-poll] [spin]\n"
		"             [cores LIST] [duration SEC] [args OPTIONS]\n"
		"  xnf neigh follow             next hops follow the kernel's neighbours\n"
		"  xnf monitor [last N] [once]  the changes made, as they happen\n"
		"  xnf model { predict | dimension | validate | help } ...   (tools/xnf_model/)\n"
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
	{ "destroy", do_destroy, CLI_EDIT | CLI_EXISTING },
	{ "save", do_save },
	{ "apply", do_apply },
	{ "plan", do_plan },
	{ "worker", do_worker },
	{ "neigh", do_neigh },
	{ "monitor", do_monitor },
	{ "model", do_model },
	{ "exporter", do_exporter },
	{ NULL, NULL },
};

/* @argv as one line that the shell and `xnf -b` read back as the same
 * words: a word with a blank, a quote, a backslash or a '#', or an empty
 * one, in double quotes (a '"' in it as '\"'). */
static void words_join(char *buf, size_t len, int argc, char **argv)
{
	size_t n = 0;
	bool q;
	char *c;
	int i;

	buf[0] = '\0';
	for (i = 0; i < argc && n + 1 < len; i++) {
		q = !*argv[i] || strpbrk(argv[i], " \t\"\\#");
		n += snprintf(buf + n, len - n, "%s%s", i ? " " : "",
			      q ? "\"" : "");
		for (c = argv[i]; *c && n + 2 < len; c++) {
			if (*c == '"' || *c == '\\')
				buf[n++] = '\\';
			buf[n++] = *c;
		}
		if (n < len)
			buf[n] = '\0';
		if (q && n + 1 < len)
			n += snprintf(buf + n, len - n, "\"");
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
	int ret;

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

/* Splits a line into words; double quotes group, # starts a comment:
 * argc, or -1 for more than @max words, -2 for an unterminated quote. */
static int split_line(char *line, char **argv, int max)
{
	int argc = 0;
	char *p = line;

	while (*p) {
		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			p++;
		if (!*p || *p == '#')
			break;
		if (argc == max)
			return -1;
		if (*p == '"') {
			argv[argc++] = ++p;
			while (*p && *p != '"')
				p++;
			if (!*p)
				return -2;
		} else {
			argv[argc++] = p;
			while (*p && *p != ' ' && *p != '\t' && *p != '\n' &&
			       *p != '\r')
				p++;
		}
		if (*p)
			*p++ = '\0';
	}
	return argc;
}

#define LINE_WORDS 64

int cli_text_read(const char *file, struct cli_text *t)
{
	char buf[65536];
	size_t n;
	FILE *f;
	int ret = 0;

	memset(t, 0, sizeof(*t));
	f = strcmp(file, "-") ? fopen(file, "r") : stdin;
	if (!f)
		return cli_err("cannot open %s: %s", file, strerror(errno));
	if (f == stdin && isatty(STDIN_FILENO))
		fprintf(stderr, "xnf: reading commands from the terminal; end "
				"with Ctrl-D\n");
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		char *p = realloc(t->data, t->len + n + 1);

		if (!p) {
			ret = cli_err("out of memory reading %s", file);
			break;
		}
		memcpy(p + t->len, buf, n);
		t->data = p;
		t->len += n;
		t->data[t->len] = '\0';
	}
	if (!ret && ferror(f))
		ret = cli_err("cannot read %s: %s", file, strerror(errno));
	if (f != stdin)
		fclose(f);
	if (ret) {
		free(t->data);
		memset(t, 0, sizeof(*t));
		return -1;
	}
	t->name = file;
	return 0;
}

int cli_lines(const struct cli_text *t, int (*fn)(int argc, char **argv))
{
	char *line = NULL, *argv[LINE_WORDS];
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
		/* strndup stops at a NUL: the line was longer. */
		if (strlen(line) != len) {
			ret = cli_err("a NUL byte in the line: the file is not "
				      "text");
			break;
		}
		argc = split_line(line, argv, LINE_WORDS);
		if (argc == -1)
			ret = cli_err("more than %d words", LINE_WORDS);
		else if (argc == -2)
			ret = cli_err("a quote is not closed: end the word "
				      "with '\"'");
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

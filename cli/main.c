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
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cli.h"

struct cli cli;

int cli_err(const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;

	cli.errors++;
	va_start(ap, fmt);
	if (!cli.batch_file) {
		print_verr(fmt, ap);
		va_end(ap);
		return -1;
	}
	/* One line for a failed batch line: where, then what. */
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	print_err("%s:%d: %s", cli.batch_file, cli.batch_line,
		  msg ?: "out of memory formatting an error");
	free(msg);
	return -1;
}

/* libxnf's messages: its errors ("Error: ..." at warning level, from
 * callees that have no error buffer, such as the AF_XDP workers' start)
 * are the command's error, printed as every other one (JSON under -j).
 * The workers' threads, which run while the main thread waits, keep
 * writing theirs to stderr. */
static void lib_log(enum xnf_log_level level, const char *msg)
{
	size_t n = strlen(msg);

	if (level == XNF_LOG_WARN && !strncmp(msg, "Error: ", 7) &&
	    gettid() == getpid()) {
		cli_err("%.*s", (int)(n - 7 - (n > 7 && msg[n - 1] == '\n')),
			msg + 7);
		return;
	}
	fputs(msg, stderr);
}

bool is_prefix(const char *pfx, const char *str)
{
	return *pfx && !strncmp(pfx, str, strlen(pfx));
}

int cli_dispatch(const struct cli_cmd *cmds, const char *what, int argc,
		 char **argv)
{
	const struct cli_cmd *c, *found = NULL;

	if (argc < 1)
		return cmds[0].fn(argc, argv);
	for (c = cmds; c->name; c++) {
		if (!strcmp(argv[0], c->name)) {
			found = c;
			break;
		}
		if (is_prefix(argv[0], c->name)) {
			if (found)
				return cli_err("'%s' is ambiguous for %s: %s or %s?",
					       argv[0], what, found->name,
					       c->name);
			found = c;
		}
	}
	if (!found && !strcmp(what, "xnf"))
		return cli_err("unknown object '%s'; try 'xnf help'", argv[0]);
	if (!found)
		return cli_err("unknown %s command '%s'; try 'xnf %s help'",
			       what, argv[0], what);
	return found->fn(argc - 1, argv + 1);
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

struct xnf_dp *cli_dp(bool create)
{
	if (cli.dp && !cli.dp->reader)
		return cli.dp;
	xnf_dp_close(cli.dp);
	return dp_open(create ? XNF_OPEN_CREATE : 0);
}

struct xnf_dp *cli_dp_read(void)
{
	/* A batch runs under one lock, its reads included. */
	if (cli.batch)
		return cli_dp(false);
	return cli.dp ?: dp_open(XNF_OPEN_READ);
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: xnf [OPTIONS] OBJECT { COMMAND | help }\n"
		"       xnf -b FILE\n"
		"OBJECT := { attach | detach | chain | status | stats | route | fw | fdb |\n"
		"            xconnect | config | destroy | plan | worker | model }\n"
		"OPTIONS := { -j | -b FILE | -w SECONDS | -v | -h }\n"
		"\n"
		"  xnf attach DEV chain NF[,NF...] [mode native|generic] [fused] [fib]\n"
		"             [queues N] [cores LIST|auto]\n"
		"  xnf detach DEV\n"
		"  xnf chain set DEV NF[,NF...] [fused | tailcall] [fib | lpm]\n"
		"  xnf status [DEV]\n"
		"  xnf stats [DEV] [percpu] [watch SECONDS [count N]] [reset]\n"
		"  xnf route { add | replace } PREFIX { via ADDR [dev DEV] | dev DEV lladdr MAC |\n"
		"                                      local | blackhole | unreachable }\n"
		"  xnf route { del PREFIX | show }\n"
		"  xnf fw add [prio N] { allow | drop } [proto P] [src PREFIX] [dst PREFIX]\n"
		"             [sport P[-Q]] [dport P[-Q]]\n"
		"  xnf fw { del prio N | default { allow | drop } | flush | show }\n"
		"  xnf fdb { add | replace } MAC dev DEV | xnf fdb { del MAC | show }\n"
		"  xnf xconnect DEV DEV [lladdr MAC MAC] | xnf xconnect { del DEV | show }\n"
		"  xnf config { show | set KEY { pass | drop | flood } }\n"
		"  xnf destroy\n"
		"  xnf plan DEV [queues N] [cores LIST]\n"
		"  xnf worker DEV nf NAME[,NAME...] [queues LIST] [batch N] [ring N]\n"
		"             [zerocopy auto|on|off] [egress DEV[,DEV...]] [busy-poll] [spin]\n"
		"             [cores LIST] [duration SEC] [args OPTIONS]\n"
		"  xnf model { predict | dimension | validate | help } ...   (tools/xnf_model/)\n"
		"NF := { firewall | l3fwd | l2fwd | xsk }\n"
		"The pin root is %s, or $XNF_PIN_ROOT. `plan` reads sysfs/procfs below\n"
		"$XNF_SYSFS_ROOT (default /). A command that changes something waits at\n"
		"most -w SECONDS (default %d) for another one to finish.\n",
		XNF_DEFAULT_PIN_ROOT, XNF_WAIT_DEFAULT);
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
 * in $XNF_PYTHONPATH, else in XNF_PYTHONDIR, fixed at build time (the
 * source tree's tools/ for a build, the installed site directory for a
 * package), so the binary works from anywhere. The interpreter is
 * $XNF_PYTHON, else /usr/bin/python3. Outside a batch the tool replaces this
 * process, so its exit status is xnf's (3: the model did not converge).
 */
static int do_model(int argc, char **argv)
{
	const char *py = getenv("XNF_PYTHON") ?: "/usr/bin/python3";
	const char *dir = getenv("XNF_PYTHONPATH") ?: XNF_PYTHONDIR;
	const char *old = getenv("PYTHONPATH");
	char pkg[PATH_MAX], **args = NULL, *pypath = NULL;
	int i, k = 0, status, ret = -1;
	pid_t pid;

	snprintf(pkg, sizeof(pkg), "%s/xnf_model/__main__.py", dir);
	if (access(pkg, R_OK))
		return cli_err("the model package is missing: %s (%s); set "
			       "XNF_PYTHONPATH to the directory that holds "
			       "xnf_model/ (tools/ of an xnf source tree)",
			       pkg, strerror(errno));
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
	args = calloc(argc + 5, sizeof(*args));
	if (!args)
		return cli_err("out of memory");
	args[k++] = (char *)py;
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

static const struct cli_cmd objects[] = {
	{ "help", do_help },	 { "attach", do_attach },
	{ "detach", do_detach }, { "chain", do_chain },
	{ "status", do_status }, { "stats", do_stats },
	{ "route", do_route },	 { "fw", do_fw },
	{ "fdb", do_fdb },	 { "xconnect", do_xconnect },
	{ "config", do_config }, { "destroy", do_destroy },
	{ "plan", do_plan },	 { "worker", do_worker },
	{ "model", do_model },	 { NULL, NULL },
};

/* Splits a batch line into words; double quotes group, # starts a comment. */
static int split_line(char *line, char **argv, int max)
{
	int argc = 0;
	char *p = line;

	while (*p) {
		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (!*p || *p == '#')
			break;
		if (argc == max)
			return -1;
		if (*p == '"') {
			argv[argc++] = ++p;
			while (*p && *p != '"')
				p++;
		} else {
			argv[argc++] = p;
			while (*p && *p != ' ' && *p != '\t' && *p != '\n')
				p++;
		}
		if (*p)
			*p++ = '\0';
	}
	return argc;
}

static int do_batch(const char *file)
{
	char line[4096], *argv[64];
	int lineno = 0, argc, errors;
	FILE *f;

	f = strcmp(file, "-") ? fopen(file, "r") : stdin;
	if (!f)
		return cli_err("cannot open batch file %s: %s", file,
			       strerror(errno));
	cli.batch = true;
	cli.batch_file = file;
	while (fgets(line, sizeof(line), f)) {
		cli.batch_line = ++lineno;
		argc = split_line(line, argv, 64);
		if (argc < 0) {
			cli_err("more than 64 words; the batch stopped here");
			goto fail;
		}
		if (!argc)
			continue;
		errors = cli.errors;
		if (cli_dispatch(objects, "xnf", argc, argv)) {
			/* Each failure says what failed, once. */
			if (cli.errors == errors)
				cli_err("command failed; the batch stopped here");
			goto fail;
		}
	}
	cli.batch_file = NULL;
	if (f != stdin)
		fclose(f);
	return cli_fw_flush();
fail:
	cli.batch_file = NULL;
	/* What the lines before the failed one changed stays, as with ip -b. */
	cli_fw_flush();
	if (f != stdin)
		fclose(f);
	return -1;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "batch", required_argument, NULL, 'b' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "wait", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *batch = NULL;
	int opt, verbose = 0, ret;
	char bad[160] = "", *end, root[XNF_ROOT_MAX];

	cli.wait = XNF_WAIT_DEFAULT;
	/* A wrong option is reported after all of them were read, so that
	 * a -j after it still makes it JSON. */
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+:jb:vw:h", opts, NULL)) != -1) {
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
	xnf_libbpf_logging();
	xnf_set_log_level(verbose >= 2 ? XNF_LOG_DEBUG :
			  verbose      ? XNF_LOG_INFO :
					 XNF_LOG_WARN);
	xnf_set_log_fn(lib_log);

	if (*bad)
		ret = cli_err("%s; try 'xnf help'", bad);
	else if (batch)
		ret = argc ? cli_err("-b takes no other command") :
			     do_batch(batch);
	else if (argc < 1)
		ret = cli_err("no object given; try 'xnf help'");
	else
		ret = cli_dispatch(objects, "xnf", argc, argv);
	/* A refusal that printed nothing still says so, once. */
	if (ret && !cli.errors)
		cli_err("the command failed without saying why; run it again with -v");
	xnf_dp_close(cli.dp);
	return ret ? 1 : 0;
}

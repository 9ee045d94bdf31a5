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
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <linux/magic.h>

#include "cli.h"

struct cli cli = { .lock_fd = -1 };

int cli_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	print_verr(fmt, ap);
	va_end(ap);
	return -1;
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
					       argv[0], what, found->name, c->name);
			found = c;
		}
	}
	if (!found)
		return cli_err("unknown %s command '%s'; try 'xnf %s help'",
			       what, argv[0], what);
	return found->fn(argc - 1, argv + 1);
}

static bool is_bpffs(const char *path)
{
	struct statfs st;

	return !statfs(path, &st) && st.f_type == BPF_FS_MAGIC;
}

struct xnf_dp *cli_dp(bool create)
{
	char parent[PATH_MAX], *slash;
	int err;

	if (cli.dp)
		return cli.dp;
	snprintf(parent, sizeof(parent), "%s", cli.root);
	slash = strrchr(parent, '/');
	if (slash && slash != parent)
		*slash = '\0';
	/* Like ip(8), mount bpffs where the root expects it. */
	if (!strcmp(parent, "/sys/fs/bpf") && !is_bpffs(parent) &&
	    mount("bpf", parent, "bpf", 0, "mode=0700")) {
		cli_err("cannot mount bpffs on %s: %s; mount it with "
			"'mount -t bpf bpf %s'", parent, strerror(errno), parent);
		return NULL;
	}
	if (create && mkdir(cli.root, 0700) && errno != EEXIST) {
		cli_err("cannot create %s: %s", cli.root, strerror(errno));
		return NULL;
	}
	cli.lock_fd = open(cli.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cli.lock_fd < 0) {
		if (errno == ENOENT)
			cli_err("no xnf instance at %s: nothing was attached or "
				"configured yet (xnf attach DEV chain NF[,NF...])",
				cli.root);
		else
			cli_err("cannot open %s: %s", cli.root, strerror(errno));
		return NULL;
	}
	if (flock(cli.lock_fd, LOCK_EX)) {
		cli_err("cannot lock %s: %s", cli.root, strerror(errno));
		return NULL;
	}
	err = xnf_dp_open(cli.root, create, &cli.dp);
	if (err) {
		if (err == -ENOENT)
			cli_err("no xnf instance at %s: nothing was attached or "
				"configured yet (xnf attach DEV chain NF[,NF...])",
				cli.root);
		else
			cli_err("cannot open the xnf instance at %s: %s",
				cli.root, strerror(-err));
		return NULL;
	}
	return cli.dp;
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: xnf [OPTIONS] OBJECT { COMMAND | help }\n"
"       xnf -b FILE\n"
"OBJECT := { attach | detach | chain | status | stats | route | fw | fdb |\n"
"            xconnect | config | destroy | plan | worker | model }\n"
"OPTIONS := { -j | -b FILE | -v | -h }\n"
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
"  xnf model { predict | dimension | validate | help } ...   (tools/xnf_model.py)\n"
"NF := { firewall | l3fwd | l2fwd | xsk }\n"
"The pin root is %s, or $XNF_PIN_ROOT. `plan` reads sysfs/procfs below\n"
"$XNF_SYSFS_ROOT (default /).\n", XNF_DEFAULT_PIN_ROOT);
}

/* xnf help, xnf -h: asked for, so on stdout. */
static int do_help(int argc, char **argv)
{
	usage(stdout);
	return 0;
}

/*
 * xnf model ...: the batching model is a Python tool, tools/xnf_model.py,
 * run by the Debian interpreter that has numpy and scipy (install-deps).
 * The script is $XNF_MODEL, else ../tools/xnf_model.py beside this binary
 * (build/xnf in the source tree); the interpreter is $XNF_PYTHON, else
 * /usr/bin/python3. Outside a batch the tool replaces this process, so its
 * exit status is xnf's (3: the model did not converge).
 */
static int do_model(int argc, char **argv)
{
	const char *py = getenv("XNF_PYTHON") ?: "/usr/bin/python3";
	const char *script = getenv("XNF_MODEL");
	char exe[PATH_MAX], path[PATH_MAX + 32], *slash, **args = NULL;
	int i, k = 0, status, ret = -1;
	ssize_t n;
	pid_t pid;

	if (!script) {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n < 0)
			return cli_err("cannot find the xnf binary (/proc/self/exe): "
				       "%s; set XNF_MODEL to tools/xnf_model.py",
				       strerror(errno));
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		snprintf(path, sizeof(path), "%s/../tools/xnf_model.py", exe);
		script = path;
	}
	if (access(script, R_OK))
		return cli_err("the model tool %s is missing (%s); set XNF_MODEL "
			       "to tools/xnf_model.py of an xnf source tree",
			       script, strerror(errno));
	if (access(py, X_OK))
		return cli_err("cannot run %s (%s): the model needs python3 with "
			       "numpy and scipy; run scripts/install-deps.sh as "
			       "root, or set XNF_PYTHON", py, strerror(errno));
	args = calloc(argc + 4, sizeof(*args));
	if (!args)
		return cli_err("out of memory");
	args[k++] = (char *)py;
	args[k++] = (char *)script;
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
out:
	free(args);
	return ret;
}

static const struct cli_cmd objects[] = {
	{ "help", do_help },
	{ "attach", do_attach },
	{ "detach", do_detach },
	{ "chain", do_chain },
	{ "status", do_status },
	{ "stats", do_stats },
	{ "route", do_route },
	{ "fw", do_fw },
	{ "fdb", do_fdb },
	{ "xconnect", do_xconnect },
	{ "config", do_config },
	{ "destroy", do_destroy },
	{ "plan", do_plan },
	{ "worker", do_worker },
	{ "model", do_model },
	{ NULL, NULL },
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
	int lineno = 0, argc;
	FILE *f;

	f = strcmp(file, "-") ? fopen(file, "r") : stdin;
	if (!f)
		return cli_err("cannot open batch file %s: %s", file, strerror(errno));
	cli.batch = true;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		argc = split_line(line, argv, 64);
		if (argc < 0) {
			cli_err("%s:%d: too many words", file, lineno);
			goto fail;
		}
		if (!argc)
			continue;
		if (cli_dispatch(objects, "xnf", argc, argv)) {
			fprintf(stderr, "Error: %s:%d: command failed, batch stopped\n",
				file, lineno);
			goto fail;
		}
	}
	if (f != stdin)
		fclose(f);
	return cli_fw_flush();
fail:
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
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *batch = NULL;
	int opt, verbose = 0, ret;

	while ((opt = getopt_long(argc, argv, "+jb:vh", opts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			cli.json = true;
			print_set_json(true);
			break;
		case 'b':
			batch = optarg;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			return do_help(0, NULL);
		default:
			usage(stderr);
			return 2;
		}
	}
	argc -= optind;
	argv += optind;
	setvbuf(stdout, NULL, _IOLBF, 0);
	cli.root = getenv("XNF_PIN_ROOT") ?: XNF_DEFAULT_PIN_ROOT;
	xnf_libbpf_logging();
	xnf_set_log_level(verbose >= 2 ? XNF_LOG_DEBUG :
			  verbose ? XNF_LOG_INFO : XNF_LOG_WARN);

	if (batch) {
		ret = argc ? cli_err("-b takes no other command") : do_batch(batch);
	} else if (argc < 1) {
		usage(stderr);
		ret = -1;
	} else {
		ret = cli_dispatch(objects, "xnf", argc, argv);
	}
	xnf_dp_close(cli.dp);
	if (cli.lock_fd >= 0)
		close(cli.lock_fd);
	return ret ? 1 : 0;
}

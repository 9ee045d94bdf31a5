// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xnf exporter [listen ADDR:PORT]
 *
 * Serves every counter of `xnf stats` in the Prometheus text format
 * (prom.c, the text of `xnf stats -f prometheus`) on http://ADDR:PORT/metrics,
 * by default on 127.0.0.1:XNF_EXPORTER_PORT, until SIGINT or SIGTERM.
 *
 * Read-only and small: every scrape opens the instance as a reader
 * (XNF_OPEN_READ: no lock, so it never waits for or blocks a writer),
 * reads it and closes it again, so the exporter keeps no map, program or
 * pin of the instance: a detach, a destroy and a new attach between two
 * scrapes are seen by the next one (without an instance it serves
 * xnf_up 0).
 *
 * Bounded, and no client delays another: one thread serves every
 * connection at once, each as far as its socket lets it (poll), as
 * node_exporter's server gives each its own goroutine. At most
 * MAX_CONNS connections (fewer if RLIMIT_NOFILE says so); each must send
 * a request of at most REQ_MAX bytes and take the answer within
 * IO_TIMEOUT_MS of its connection, or is cut off. When every slot is
 * taken, the oldest connection still reading its request gives its slot
 * to the newest: a crowd of slow or silent clients, or of clients that
 * keep reconnecting, makes a scrape wait for none of them. A scrape
 * itself takes milliseconds (docs/benchmarks.md: 13 ms for 10
 * interfaces) and is made when its request is complete; the answer is
 * then sent as the client takes it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "cli.h"
#include "prom.h"

/* Prometheus's "Default port allocations" list (its wiki) gave exporters
 * 9100-9999 and that range is full, so new exporters take ports above
 * 10000; this one was not on the list when chosen and is to be added to
 * it. The one place in C that names it (the unit and the man page say
 * it too). */
#define XNF_EXPORTER_PORT "10076"
#define REQ_MAX		  8192
#define IO_TIMEOUT_MS	  5000
#define MAX_CONNS	  256
/* Descriptors kept free for a scrape (the instance's tables) and stdio. */
#define FDS_SPARE	  64

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static double mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* A client: reading its request (out == NULL), then sending the answer. */
struct conn {
	int fd;	      /* -1: a free slot */
	double since; /* mono_ms() at accept */
	char *req;    /* REQ_MAX + 1 bytes */
	size_t len;   /* of the request read so far */
	char *out;    /* the whole answer, head and body */
	size_t out_len, sent;
};

static void conn_close(struct conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->req);
	free(c->out);
	*c = (struct conn){ .fd = -1 };
}

/* The answer, whole, into c->out; with @head (a HEAD request) without its
 * body. Out of memory: none, and the connection is closed. */
static void respond(struct conn *c, const char *status, const char *type,
		    const char *extra, const char *body, size_t len, bool head)
{
	FILE *f = open_memstream(&c->out, &c->out_len);

	if (!f)
		return;
	fprintf(f,
		"HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
		"%sConnection: close\r\n\r\n",
		status, type, len, extra);
	if (!head)
		fwrite(body, 1, len, f);
	if (fclose(f)) {
		free(c->out);
		c->out = NULL;
	}
}

/* One reading of the instance as text; @up says whether it was there,
 * which the log says only when it changes. */
static char *scrape(size_t *len, bool *up)
{
	struct xnf_dp *dp = NULL;
	char err[512], *text = NULL;
	struct xnf_sample s = {};
	struct xnf_ct_stats ct;
	double t0 = mono_ms();
	bool was_up = *up, ct_ok = false;
	FILE *f;

	f = open_memstream(&text, len);
	if (!f)
		return NULL;
	*up = !xnf_open(cli.root, XNF_OPEN_READ, 0, &dp, err, sizeof(err));
	if (!*up && was_up)
		fprintf(stderr,
			"xnf exporter: no instance to read, serving "
			"xnf_up 0: %s\n",
			err);
	else if (*up && !was_up)
		fprintf(stderr, "xnf exporter: reading the instance at %s\n",
			cli.root);
	if (*up) {
		stats_sample_read(dp, NULL, &s);
		ct_ok = !stats_ct_read(dp, &ct);
	}
	prom_write(f, *up ? &s : NULL, ct_ok ? &ct : NULL);
	prom_write_trace(f, dp);
	xnf_sample_free(&s);
	xnf_dp_close(dp);
	fprintf(f,
		"# HELP xnf_exporter_scrape_duration_seconds Time this scrape "
		"took to read and format the counters\n"
		"# TYPE xnf_exporter_scrape_duration_seconds gauge\n"
		"xnf_exporter_scrape_duration_seconds %.6f\n",
		(mono_ms() - t0) / 1e3);
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}

/* A complete request head in c->req: its answer into c->out. */
static void handle(struct conn *c, bool *up)
{
	static const char index_body[] =
		"xnf exporter: the counters are at /metrics\n";
	char *req = c->req, *sp, *path, *text;
	bool head;
	size_t len;

	/* "METHOD SP TARGET SP VERSION" */
	sp = strchr(req, ' ');
	path = sp ? sp + 1 : NULL;
	if (!path || !(sp = strpbrk(path, " \r\n")) || *sp != ' ') {
		respond(c, "400 Bad Request", "text/plain", "", "", 0, false);
		return;
	}
	*sp = '\0';
	path[strcspn(path, "?")] = '\0';
	head = !strncmp(req, "HEAD ", 5);
	if (!head && strncmp(req, "GET ", 4)) {
		respond(c, "405 Method Not Allowed", "text/plain",
			"Allow: GET, HEAD\r\n", "", 0, false);
	} else if (!strcmp(path, "/")) {
		respond(c, "200 OK", "text/plain; charset=utf-8", "",
			index_body, sizeof(index_body) - 1, head);
	} else if (strcmp(path, "/metrics")) {
		respond(c, "404 Not Found", "text/plain", "", "", 0, head);
	} else if (!(text = scrape(&len, up))) {
		respond(c, "500 Internal Server Error", "text/plain", "", "", 0,
			head);
	} else {
		respond(c, "200 OK", PROM_CONTENT_TYPE, "", text, len, head);
		free(text);
	}
}

/* Moves @c on as far as its socket lets it: reads its request head (up to
 * the empty line), answers it, sends the answer. false when it is done
 * with (answered, closed by the client, or broken). */
static bool conn_step(struct conn *c, bool *up)
{
	ssize_t n;

	while (!c->out) {
		n = recv(c->fd, c->req + c->len, REQ_MAX - c->len, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return true;
		if (n <= 0)
			return false;
		c->len += n;
		c->req[c->len] = '\0';
		if (strstr(c->req, "\r\n\r\n") || strstr(c->req, "\n\n"))
			handle(c, up);
		else if (c->len == REQ_MAX)
			respond(c, "431 Request Header Fields Too Large",
				"text/plain", "", "", 0, false);
		else
			continue;
		if (!c->out)
			return false;
	}
	while (c->sent < c->out_len) {
		n = send(c->fd, c->out + c->sent, c->out_len - c->sent,
			 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return true;
		if (n < 0)
			return false;
		c->sent += n;
	}
	return false;
}

/* Whether @a gives up its slot before @b: one still reading its request
 * before one being answered (a client that sent its request in time is
 * answered), then the older. */
static bool before(const struct conn *a, const struct conn *b)
{
	if (!a->out != !b->out)
		return !a->out;
	return a->since < b->since;
}

/* The slot to give up for a new connection, or -1 when there is none. */
static int oldest(const struct conn *conns, int max)
{
	int i, o = -1;

	for (i = 0; i < max; i++)
		if (conns[i].fd >= 0 && (o < 0 || before(&conns[i], &conns[o])))
			o = i;
	return o;
}

/* Takes every connection waiting on @lfd: 0, or -1 when accept() fails
 * for good. */
static int accept_all(int lfd, struct conn *conns, int max, const char *addr)
{
	struct conn *c;
	int fd, i;

	for (;;) {
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0 && (errno == EAGAIN || errno == EINTR))
			return 0;
		if (fd < 0 && errno == ECONNABORTED)
			continue;
		if (fd < 0 &&
		    (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
		     errno == ENOMEM) &&
		    (i = oldest(conns, max)) >= 0) {
			/* Out of descriptors or memory: a slot given up. */
			conn_close(&conns[i]);
			continue;
		}
		if (fd < 0) {
			cli_err("cannot accept a connection on %s: %s", addr,
				strerror(errno));
			return -1;
		}
		for (i = 0; i < max && conns[i].fd >= 0; i++)
			;
		if (i == max) {
			i = oldest(conns, max);
			conn_close(&conns[i]);
		}
		c = &conns[i];
		c->req = malloc(REQ_MAX + 1);
		if (!c->req) {
			close(fd);
			continue;
		}
		c->fd = fd;
		c->since = mono_ms();
	}
}

/* How many connections to serve at once: MAX_CONNS, or what the limit on
 * open files leaves. */
static int conns_max(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur >= MAX_CONNS + FDS_SPARE)
		return MAX_CONNS;
	return rl.rlim_cur > FDS_SPARE + 1 ? (int)rl.rlim_cur - FDS_SPARE : 1;
}

/* Serves @lfd until SIGINT or SIGTERM (blocked but in ppoll(), so that
 * none comes between the test of `stop` and the wait): 0, or -1. */
static int serve(int lfd, const char *addr, const sigset_t *waitmask)
{
	struct pollfd pfd[MAX_CONNS + 1];
	int slot[MAX_CONNS + 1];
	struct conn conns[MAX_CONNS];
	int i, n, max = conns_max(), ret = 0;
	double now, first, left;
	struct timespec ts;
	bool up = true;

	for (i = 0; i < MAX_CONNS; i++)
		conns[i] = (struct conn){ .fd = -1 };
	while (!stop) {
		pfd[0] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		n = 1;
		first = 0;
		for (i = 0; i < max; i++) {
			if (conns[i].fd < 0)
				continue;
			pfd[n] = (struct pollfd){
				.fd = conns[i].fd,
				.events = conns[i].out ? POLLOUT : POLLIN,
			};
			slot[n++] = i;
			if (!first || conns[i].since < first)
				first = conns[i].since;
		}
		/* Until the oldest connection's time is up. */
		left = first + IO_TIMEOUT_MS - mono_ms();
		left = left > 0 ? left + 1 : 0;
		ts.tv_sec = (time_t)(left / 1e3);
		ts.tv_nsec = (long)((left - ts.tv_sec * 1e3) * 1e6);
		if (ppoll(pfd, n, first ? &ts : NULL, waitmask) < 0) {
			if (errno == EINTR)
				continue;
			cli_err("cannot wait for connections on %s: %s", addr,
				strerror(errno));
			ret = -1;
			break;
		}
		for (i = 1; i < n; i++)
			if (pfd[i].revents && !conn_step(&conns[slot[i]], &up))
				conn_close(&conns[slot[i]]);
		now = mono_ms();
		for (i = 0; i < max; i++)
			if (conns[i].fd >= 0 &&
			    now - conns[i].since >= IO_TIMEOUT_MS)
				conn_close(&conns[i]);
		if ((pfd[0].revents & POLLIN) &&
		    accept_all(lfd, conns, max, addr)) {
			ret = -1;
			break;
		}
	}
	for (i = 0; i < MAX_CONNS; i++)
		conn_close(&conns[i]);
	return ret;
}

/* "ADDR:PORT", "[ADDR6]:PORT", or ":PORT" (every address). */
static int listen_on(const char *arg)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV,
	};
	struct addrinfo *ai = NULL;
	char host[128], *port;
	int fd = -1, one = 1, err;

	snprintf(host, sizeof(host), "%s", arg);
	port = strrchr(host, ':');
	if (!port || !port[1])
		return cli_err("listen '%s': expected ADDR:PORT, e.g. "
			       "127.0.0.1:%s or [::1]:%s",
			       arg, XNF_EXPORTER_PORT, XNF_EXPORTER_PORT);
	*port++ = '\0';
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = '\0';
	}
	err = getaddrinfo(host[0] ? host : NULL, port, &hints, &ai);
	if (err)
		return cli_err("listen '%s': %s; give a numeric address and port",
			       arg, gai_strerror(err));
	fd = socket(ai->ai_family,
		    ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, MAX_CONNS)) {
		err = cli_err("cannot listen on %s: %s (another exporter "
			      "there? give another with 'listen ADDR:PORT')",
			      arg, strerror(errno));
		if (fd >= 0)
			close(fd);
		fd = err;
	}
	freeaddrinfo(ai);
	return fd;
}

static int exporter_help(void)
{
	printf("Usage: xnf exporter [listen ADDR:PORT]\n"
	       "Serves the counters of 'xnf stats' in the Prometheus text format at\n"
	       "http://ADDR:PORT/metrics (default 127.0.0.1:%s), reading the instance\n"
	       "afresh for every scrape without taking its lock, until SIGINT or\n"
	       "SIGTERM. 'xnf stats -f prometheus' prints the same text once.\n",
	       XNF_EXPORTER_PORT);
	return 0;
}

int do_exporter(int argc, char **argv)
{
	const char *addr = "127.0.0.1:" XNF_EXPORTER_PORT;
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t stops, waitmask;
	int lfd, ret;

	for (; argc > 0; NEXT_ARG()) {
		if (!strcmp(argv[0], "help"))
			return exporter_help();
		if (!is_prefix(argv[0], "listen"))
			return cli_err("unknown exporter argument '%s'; try "
				       "'xnf exporter help'",
				       argv[0]);
		NEXT_ARG();
		REQ_ARGS(1, "exporter");
		addr = argv[0];
	}
	/* Delivered only inside ppoll() (serve). */
	sigemptyset(&stops);
	sigaddset(&stops, SIGINT);
	sigaddset(&stops, SIGTERM);
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL) ||
	    sigprocmask(SIG_BLOCK, &stops, &waitmask))
		return cli_err("cannot catch SIGINT and SIGTERM: %s",
			       strerror(errno));
	sigdelset(&waitmask, SIGINT);
	sigdelset(&waitmask, SIGTERM);
	signal(SIGPIPE, SIG_IGN);
	lfd = listen_on(addr);
	if (lfd < 0)
		return -1;
	fprintf(stderr, "xnf exporter: serving %s at http://%s/metrics\n",
		cli.root, addr);
	ret = serve(lfd, addr, &waitmask);
	close(lfd);
	return ret;
}

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
 * xnf_up 0). Bounded: one connection at a time, a request of at most
 * REQ_MAX bytes that must arrive within IO_TIMEOUT_MS of the connection,
 * an answer that must be taken within as long, and a listen backlog of
 * BACKLOG; a client that breaks a bound is cut off, the next one served.
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
#define BACKLOG		  4

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

/* Waits for @events on @fd until @deadline (mono_ms): 0, or -1. */
static int wait_fd(int fd, short events, double deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	double left = deadline - mono_ms();

	if (left <= 0 || stop)
		return -1;
	return poll(&p, 1, (int)left + 1) == 1 ? 0 : -1;
}

static int send_all(int fd, const char *buf, size_t len, double deadline)
{
	ssize_t n;

	while (len) {
		if (wait_fd(fd, POLLOUT, deadline))
			return -1;
		n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -1;
		if (n > 0) {
			buf += n;
			len -= n;
		}
	}
	return 0;
}

static void respond(int fd, const char *status, const char *type,
		    const char *extra, const char *body, size_t len, bool head,
		    double deadline)
{
	char hdr[512];
	int n;

	n = snprintf(hdr, sizeof(hdr),
		     "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
		     "%sConnection: close\r\n\r\n",
		     status, type, len, extra);
	if (send_all(fd, hdr, n, deadline) == 0 && !head)
		send_all(fd, body, len, deadline);
}

/* The request head, up to the empty line: its length, or -1 (timed out,
 * closed) or -2 (longer than REQ_MAX). */
static int read_head(int fd, char *buf, double deadline)
{
	size_t len = 0;
	ssize_t n;

	for (;;) {
		if (wait_fd(fd, POLLIN, deadline))
			return -1;
		n = recv(fd, buf + len, REQ_MAX - len, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			return -1;
		len += n;
		buf[len] = '\0';
		if (strstr(buf, "\r\n\r\n") || strstr(buf, "\n\n"))
			return len;
		if (len == REQ_MAX)
			return -2;
	}
}

/* One reading of the instance as text; @up says whether it was there,
 * which the log says only when it changes. */
static char *scrape(size_t *len, bool *up)
{
	struct xnf_dp *dp = NULL;
	char err[512], *text = NULL;
	struct xnf_sample s = {};
	double t0 = mono_ms();
	bool was_up = *up;
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
	if (*up)
		stats_sample_read(dp, NULL, &s);
	prom_write(f, *up ? &s : NULL);
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

static void serve(int fd, bool *up)
{
	double deadline = mono_ms() + IO_TIMEOUT_MS;
	char req[REQ_MAX + 1], *sp, *path, *text;
	static const char index_body[] =
		"xnf exporter: the counters are at /metrics\n";
	bool head;
	size_t len;
	int n;

	n = read_head(fd, req, deadline);
	if (n == -2) {
		respond(fd, "431 Request Header Fields Too Large", "text/plain",
			"", "", 0, false, deadline);
		return;
	}
	if (n < 0)
		return;
	/* "METHOD SP TARGET SP VERSION" */
	sp = strchr(req, ' ');
	path = sp ? sp + 1 : NULL;
	if (!path || !(sp = strpbrk(path, " \r\n")) || *sp != ' ') {
		respond(fd, "400 Bad Request", "text/plain", "", "", 0, false,
			deadline);
		return;
	}
	*sp = '\0';
	path[strcspn(path, "?")] = '\0';
	head = !strncmp(req, "HEAD ", 5);
	if (!head && strncmp(req, "GET ", 4)) {
		respond(fd, "405 Method Not Allowed", "text/plain",
			"Allow: GET, HEAD\r\n", "", 0, false, deadline);
	} else if (!strcmp(path, "/")) {
		respond(fd, "200 OK", "text/plain; charset=utf-8", "",
			index_body, sizeof(index_body) - 1, head, deadline);
	} else if (strcmp(path, "/metrics")) {
		respond(fd, "404 Not Found", "text/plain", "", "", 0, head,
			deadline);
	} else if (!(text = scrape(&len, up))) {
		respond(fd, "500 Internal Server Error", "text/plain", "", "",
			0, head, deadline);
	} else {
		respond(fd, "200 OK", PROM_CONTENT_TYPE, "", text, len, head,
			deadline);
		free(text);
	}
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
	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, BACKLOG)) {
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
	bool up = true;
	int lfd, cfd;

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
	/* No SA_RESTART: a signal ends the accept() it interrupts. */
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL))
		return cli_err("cannot catch SIGINT and SIGTERM: %s",
			       strerror(errno));
	signal(SIGPIPE, SIG_IGN);
	lfd = listen_on(addr);
	if (lfd < 0)
		return -1;
	fprintf(stderr, "xnf exporter: serving %s at http://%s/metrics\n",
		cli.root, addr);
	while (!stop) {
		cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (cfd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			cli_err("cannot accept a connection on %s: %s", addr,
				strerror(errno));
			break;
		}
		serve(cfd, &up);
		close(cfd);
	}
	close(lfd);
	return stop ? 0 : -1;
}

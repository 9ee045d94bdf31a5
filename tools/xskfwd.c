// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xnf-xskfwd - the bare AF_XDP forwarder: the ceiling the xnf worker is
 * measured against (`make bench`, issue "AF_XDP handoff").
 *
 *   xnf-xskfwd DEV [egress DEV] [queue Q] [batch N] [ring N] [cores C]
 *              [duration SEC] [-j]
 *
 * A one-line XDP program (bpf/xskfwd.bpf.c) redirects every frame of DEV
 * queue Q to one AF_XDP socket; one thread moves each RX descriptor to the
 * TX ring of a socket on EGRESS (the same UMEM: no copy), kicks TX, and
 * recycles completions into the fill ring. No parsing, no NF, no frame
 * accounting, no counters beyond packets: what is left is the cost of
 * AF_XDP itself, the same ring operations the worker makes.
 *
 * Stops on SIGINT/SIGTERM or after the duration (default 10 s, at most
 * 3600), detaches its program and prints rx/tx packets and the rate.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <linux/if_xdp.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/xsk.h>

#include "xskfwd.skel.h"

#define FRAME_SIZE 4096

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

struct fwd {
	const char *dev, *egress;
	__u32 queue, batch, ring, nframes, duration;
	int core;
	bool json;
	void *area;
	struct xsk_umem *umem;
	struct xsk_ring_prod fill, efill, tx;
	struct xsk_ring_cons comp, ecomp, rx, erx;
	struct xsk_socket *in, *out;
	bool same; /* egress is DEV: TX on the RX socket */
	__u64 *free;
	__u32 nfree;
	__u64 rx_packets, tx_packets, tx_full;
};

static void usage(void)
{
	fprintf(stderr,
		"Usage: xnf-xskfwd DEV [egress DEV] [queue Q] [batch N] [ring N] "
		"[cores C]\n                  [duration SEC] [-j]\n");
}

static int parse(struct fwd *f, int argc, char **argv)
{
	int i;

	if (argc < 2)
		return -EINVAL;
	f->dev = f->egress = argv[1];
	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "-j")) {
			f->json = true;
			continue;
		}
		if (i + 1 >= argc)
			return -EINVAL;
		if (!strcmp(argv[i], "egress"))
			f->egress = argv[++i];
		else if (!strcmp(argv[i], "queue"))
			f->queue = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "batch"))
			f->batch = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "ring"))
			f->ring = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "cores"))
			f->core = strtol(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "duration"))
			f->duration = strtoul(argv[++i], NULL, 0);
		else
			return -EINVAL;
	}
	if (!f->batch || f->batch > f->ring || !f->duration ||
	    f->duration > 3600 || f->ring & (f->ring - 1))
		return -EINVAL;
	return 0;
}

static void refill(struct fwd *f)
{
	__u32 n = xsk_prod_nb_free(&f->fill, f->nfree), idx, i;

	if (n > f->nfree)
		n = f->nfree;
	if (!n || xsk_ring_prod__reserve(&f->fill, n, &idx) != n)
		return;
	for (i = 0; i < n; i++)
		*xsk_ring_prod__fill_addr(&f->fill,
					  idx + i) = f->free[--f->nfree];
	xsk_ring_prod__submit(&f->fill, n);
}

static void reap(struct fwd *f, struct xsk_ring_cons *comp)
{
	__u32 n, idx, i;

	n = xsk_ring_cons__peek(comp, f->ring, &idx);
	for (i = 0; i < n; i++)
		f->free[f->nfree++] = *xsk_ring_cons__comp_addr(comp, idx + i) &
				      ~(__u64)(FRAME_SIZE - 1);
	if (n)
		xsk_ring_cons__release(comp, n);
}

static void forward(struct fwd *f)
{
	struct xsk_ring_cons *comp = f->same ? &f->comp : &f->ecomp;
	int txfd = xsk_socket__fd(f->same ? f->in : f->out);
	__u32 n, room, idx_rx, idx_tx, i;
	struct xdp_desc *d;

	while (!stop) {
		refill(f);
		n = xsk_ring_cons__peek(&f->rx, f->batch, &idx_rx);
		if (!n) {
			reap(f, comp);
			if (xsk_ring_prod__needs_wakeup(&f->fill))
				recvfrom(xsk_socket__fd(f->in), NULL, 0,
					 MSG_DONTWAIT, NULL, NULL);
			continue;
		}
		f->rx_packets += n;
		room = xsk_prod_nb_free(&f->tx, n);
		if (room > n)
			room = n;
		if (room && xsk_ring_prod__reserve(&f->tx, room, &idx_tx) != room)
			room = 0;
		for (i = 0; i < n; i++) {
			const struct xdp_desc *r =
				xsk_ring_cons__rx_desc(&f->rx, idx_rx + i);
			if (i < room) {
				d = xsk_ring_prod__tx_desc(&f->tx, idx_tx + i);
				d->addr = r->addr;
				d->len = r->len;
				d->options = 0;
			} else {
				f->free[f->nfree++] = r->addr &
						      ~(__u64)(FRAME_SIZE - 1);
			}
		}
		xsk_ring_cons__release(&f->rx, n);
		f->tx_full += n - room;
		if (room) {
			xsk_ring_prod__submit(&f->tx, room);
			f->tx_packets += room;
			/* Copy mode sends from sendto(), 32 frames a call. */
			for (i = 0; i < (room + 31) / 32; i++)
				sendto(txfd, NULL, 0, MSG_DONTWAIT, NULL, 0);
		}
		reap(f, comp);
	}
}

int main(int argc, char **argv)
{
	struct fwd f = { .batch = 64, .ring = 2048, .duration = 10, .core = -1 };
	struct xsk_socket_config cfg = {
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.bind_flags = XDP_USE_NEED_WAKEUP,
	};
	struct xsk_umem_config ucfg = { .frame_size = FRAME_SIZE };
	struct xnf_xskfwd *skel = NULL;
	struct sigaction sa = { .sa_handler = on_signal };
	struct bpf_link *link = NULL;
	int ifindex, err, rc = 1;
	__u64 t0, t1, deadline;
	size_t len;
	__u32 i;

	if (parse(&f, argc, argv)) {
		usage();
		return 2;
	}
	ifindex = if_nametoindex(f.dev);
	if (!ifindex || !if_nametoindex(f.egress)) {
		fprintf(stderr, "Error: no device %s here\n",
			ifindex ? f.egress : f.dev);
		return 1;
	}
	f.same = !strcmp(f.dev, f.egress);
	if (f.core >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(f.core, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			fprintf(stderr, "Error: cannot pin to CPU %d: %s\n",
				f.core, strerror(errno));
			return 1;
		}
	}
	cfg.rx_size = cfg.tx_size = f.ring;
	ucfg.fill_size = ucfg.comp_size = f.ring;
	f.nframes = 4 * f.ring;
	len = (size_t)f.nframes * FRAME_SIZE;
	f.area = mmap(NULL, len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	f.free = calloc(f.nframes, sizeof(*f.free));
	if (f.area == MAP_FAILED || !f.free) {
		fprintf(stderr, "Error: out of memory\n");
		f.area = NULL;
		goto out;
	}
	for (i = 0; i < f.nframes; i++)
		f.free[f.nfree++] = (__u64)i * FRAME_SIZE;
	err = xsk_umem__create(&f.umem, f.area, len, &f.fill, &f.comp, &ucfg);
	if (err) {
		f.umem = NULL;
		fprintf(stderr, "Error: cannot register the UMEM: %s\n",
			strerror(-err));
		goto out;
	}
	err = xsk_socket__create(&f.in, f.dev, f.queue, f.umem, &f.rx,
				 f.same ? &f.tx : NULL, &cfg);
	if (!err && !f.same)
		err = xsk_socket__create_shared(&f.out, f.egress, f.queue,
						f.umem, NULL, &f.tx, &f.efill,
						&f.ecomp, &cfg);
	if (err) {
		fprintf(stderr,
			"Error: cannot bind AF_XDP sockets to %s/%s queue "
			"%u: %s\n",
			f.dev, f.egress, f.queue, strerror(-err));
		goto out;
	}
	skel = xnf_xskfwd__open_and_load();
	if (!skel) {
		fprintf(stderr, "Error: cannot load the XDP program: %s\n",
			strerror(errno));
		goto out;
	}
	err = xsk_socket__update_xskmap(f.in,
					bpf_map__fd(skel->maps.xskfwd_xsks));
	/* A link: the program goes with this process, however it ends. */
	if (!err) {
		link = bpf_program__attach_xdp(skel->progs.xskfwd, ifindex);
		if (!link)
			err = -errno;
	}
	if (err) {
		fprintf(stderr,
			"Error: cannot attach to %s: %s (another XDP "
			"program there?)\n",
			f.dev, strerror(-err));
		goto out;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
	alarm(f.duration);
	t0 = now_ns();
	deadline = t0 + (__u64)f.duration * 1000000000ULL;
	forward(&f);
	t1 = now_ns();
	if (t1 > deadline)
		t1 = deadline;
	if (f.json)
		printf("{\"dev\":\"%s\",\"egress\":\"%s\",\"queue\":%u,\"batch\":%u,"
		       "\"ring\":%u,\"rx_packets\":%llu,\"tx_packets\":%llu,"
		       "\"tx_full\":%llu,\"duration_s\":%.3f,\"pps\":%.0f}\n",
		       f.dev, f.egress, f.queue, f.batch, f.ring,
		       (unsigned long long)f.rx_packets,
		       (unsigned long long)f.tx_packets,
		       (unsigned long long)f.tx_full, (t1 - t0) / 1e9,
		       f.tx_packets / ((t1 - t0) / 1e9));
	else
		printf("%s -> %s queue %u: rx %llu tx %llu (tx ring full %llu) in "
		       "%.2f s: %.0f pps\n",
		       f.dev, f.egress, f.queue, (unsigned long long)f.rx_packets,
		       (unsigned long long)f.tx_packets,
		       (unsigned long long)f.tx_full, (t1 - t0) / 1e9,
		       f.tx_packets / ((t1 - t0) / 1e9));
	rc = 0;
out:
	bpf_link__destroy(link);
	xnf_xskfwd__destroy(skel);
	if (f.out)
		xsk_socket__delete(f.out);
	if (f.in)
		xsk_socket__delete(f.in);
	if (f.umem)
		xsk_umem__delete(f.umem);
	if (f.area)
		munmap(f.area, len);
	free(f.free);
	return rc;
}

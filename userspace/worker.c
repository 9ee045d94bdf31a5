// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * worker.c - the AF_XDP runtime (worker.h).
 *
 * Per queue, one thread and one UMEM. The thread pins itself first, then
 * allocates the UMEM (bound to the NIC's node, and first touched from the
 * pinned core), so the memory the NIC DMAs into is local to both.
 *
 * Sockets of one thread, all on its UMEM:
 *   socks[0]   (DEV, queue): RX (the XDP chain's xsk stage redirects here
 *              through xnf_xsks[queue]) and TX back out of DEV. Its fill
 *              and completion rings are the UMEM's own.
 *   socks[1..] (EGRESS, queue): TX only, XDP_SHARED_UMEM, each with a fill
 *              and completion ring of its own (the kernel wants one pair
 *              per device and queue a UMEM is bound to). Only their
 *              completion rings ever carry frames.
 * A frame received on DEV is transmitted on EGRESS by handing the same
 * UMEM address to that socket's TX ring: no copy in user space.
 *
 * The loop: refill the fill ring from the free list, read up to `batch`
 * RX descriptors, parse them, run the NF chain over the vector, queue each
 * frame on its egress socket's TX ring or back onto the free list, kick TX,
 * reap completions. Every frame's place is tracked (frames.h).
 *
 * Counters go into the thread's entry of the mmapped xnf_workers array:
 * per batch size, how many reads returned that many descriptors and how
 * long their work took (the service times the batching model needs);
 * busy and idle time; drops by reason; the kernel's XDP_STATISTICS.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <linux/if_xdp.h>
#include <linux/mempolicy.h>
#include <bpf/bpf.h>
#include <xdp/xsk.h>

#include "xnf.h"
#include "placement.h"
#include "worker.h"
#include "frames.h"
#include "napi.h"
#include "unf.h"
#include "worker.skel.h"

#ifndef SOL_XDP
#define SOL_XDP 283
#endif
#ifndef SO_PREFER_BUSY_POLL
#define SO_PREFER_BUSY_POLL 69
#endif
#ifndef SO_BUSY_POLL_BUDGET
#define SO_BUSY_POLL_BUDGET 70
#endif
/* Frames a copy-mode socket transmits per sendto() (default 32); 6.17+. */
#ifndef XDP_MAX_TX_SKB_BUDGET
#define XDP_MAX_TX_SKB_BUDGET 9
#endif

#define TICK_NS	      100000000ULL /* tables, kernel statistics */
#define IDLE_SPINS    64	   /* empty reads before sleeping in poll() */
#define POLL_MS	      50	   /* sleep at most this long: stop flag */
#define BIND_RETRY_MS 2000	   /* EBUSY right after a socket closed */

struct wsock {
	struct xsk_socket *xsk;
	struct xsk_ring_cons rx;
	struct xsk_ring_prod tx;
	struct xsk_ring_prod fill; /* socks[0]: the UMEM's */
	struct xsk_ring_cons comp;
	__u32 ifindex;
	int fd;
	__u32 npend;
	__u64 *pend; /* [batch]: addr << 16 | len */
	__u32 *pend_len;
};

struct worker;

struct wthread {
	struct worker *w;
	__u32 idx; /* in opts->queues */
	__u32 queue;
	int cpu, node;
	pthread_t th;
	bool started;
	int err;
	char errmsg[256];

	void *area;
	size_t area_len;
	struct xsk_umem *umem;
	struct wsock socks[1 + XNF_WORKER_EGRESS_MAX];
	__u32 nsocks;
	bool copy_mode;
	struct xnf_frames frames;
	struct xnf_worker_stats *st;
	struct xnf_unf *nfs[XNF_CHAIN_MAX];
	__u32 nnf;
	struct xnf_upkt *pkts;
	__u64 *addrs;
	__u32 tables_gen;
	bool refresh_warned;
	int lock_fd;
};

struct worker {
	const struct xnf_worker_opts *o;
	struct xnf_dp *dp;
	volatile sig_atomic_t *stop;
	__u32 ifindex;
	__u32 egress_ifindex[XNF_WORKER_EGRESS_MAX];
	__u32 batch, ring, nframes;
	struct xnf_worker_bp bp; /* busy-poll mode: o->bp with the defaults */
	int xsks_fd;
	struct xnf_worker_stats *stats; /* the mmapped xnf_workers */
	size_t stats_len;
	/* Start: every thread sets itself up, then waits for the others, so
	 * that nothing runs unless every queue could start. */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	__u32 nready;
	bool go;
	volatile int quit; /* leave the loops: stop or a failure */
	volatile int failed;
	struct wthread th[XNF_WORKER_MAX];
	__u32 nth;
};

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void terr(struct wthread *t, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void terr(struct wthread *t, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->errmsg, sizeof(t->errmsg), fmt, ap);
	va_end(ap);
	t->err = err;
}

/* ---- the xnf_workers map ---- */

int xnf_workers_open(const char *pin_root, const char *dev, bool create)
{
	struct xnf_worker *skel;
	char path[PATH_MAX];
	int fd, err;

	fd = xnf_dev_path(pin_root, dev, XNF_MAP_STR(XNF_MAP_WORKERS), path,
			  sizeof(path));
	if (fd)
		return fd;
	fd = bpf_obj_get(path);
	if (fd >= 0 || !create)
		return fd >= 0 ? fd : -errno;
	skel = xnf_worker__open();
	if (!skel)
		return -errno;
	err = bpf_map__set_pin_path(skel->maps.xnf_workers, path);
	/* Creates and pins the map, or reuses one pinned meanwhile. */
	err = err ?: xnf_worker__load(skel);
	fd = err ? err : dup(bpf_map__fd(skel->maps.xnf_workers));
	if (fd < 0 && !err)
		fd = -errno;
	xnf_worker__destroy(skel);
	return fd;
}

bool xnf_worker_alive(const struct xnf_worker_stats *w)
{
	char path[64];

	if (w->state != XNF_W_RUNNING && w->state != XNF_W_STARTING)
		return false;
	snprintf(path, sizeof(path), "/proc/%u/task/%u", w->pid, w->tid);
	return !access(path, F_OK);
}

int xnf_workers_napi_restore(const char *pin_root, const char *sysfs_root,
			     const char *dev, char *err, size_t errlen)
{
	struct xnf_worker_stats *ws;
	size_t len = sizeof(*ws) * XNF_WORKER_MAX;
	int fd, ret;

	fd = xnf_workers_open(pin_root, dev, false);
	if (fd < 0)
		return fd == -ENOENT ? 0 :
				       xnf_errf(err, errlen, fd,
						"cannot open %s of %s: %s",
						XNF_MAP_STR(XNF_MAP_WORKERS),
						dev, strerror(-fd));
	ws = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (ws == MAP_FAILED) {
		ret = -errno;
		close(fd);
		return xnf_errf(err, errlen, ret, "cannot map %s of %s: %s",
				XNF_MAP_STR(XNF_MAP_WORKERS), dev,
				strerror(-ret));
	}
	close(fd);
	ret = xnf_napi_release(sysfs_root ?: "", dev, ws, 0, err, errlen);
	munmap(ws, len);
	return ret;
}

int xnf_workers_reset(const char *pin_root, const char *dev)
{
	struct xnf_worker_stats *ws;
	size_t len = sizeof(*ws) * XNF_WORKER_MAX;
	__u32 q;
	int fd, i, pending;

	fd = xnf_workers_open(pin_root, dev, false);
	if (fd < 0)
		return fd == -ENOENT ? 0 : fd;
	ws = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (ws == MAP_FAILED)
		return -errno;
	for (q = 0; q < XNF_WORKER_MAX; q++) {
		if (xnf_worker_alive(&ws[q])) {
			__atomic_add_fetch(&ws[q].reset_req, 1, __ATOMIC_RELEASE);
		} else if (ws[q].state != XNF_W_NONE) {
			size_t from = offsetof(struct xnf_worker_stats,
					       rx_packets);

			memset((char *)&ws[q] + from, 0, sizeof(ws[q]) - from);
		}
	}
	/* A worker acknowledges in its next turn of the loop, after a poll;
	 * on a busy machine it may run seconds late. */
	for (i = 0; i < XNF_WORKERS_RESET_WAIT_MS / 10; i++) {
		pending = 0;
		for (q = 0; q < XNF_WORKER_MAX; q++)
			if (xnf_worker_alive(&ws[q]) &&
			    __atomic_load_n(&ws[q].reset_done,
					    __ATOMIC_ACQUIRE) != ws[q].reset_req)
				pending++;
		if (!pending)
			break;
		usleep(10000);
	}
	munmap(ws, len);
	return pending ? -ETIMEDOUT : 0;
}

/* ---- placement ---- */

int xnf_worker_place(const char *pin_root, const char *sysfs_root,
		     const char *dev, __u32 queue, int core, int *cpu,
		     int *node, char *err, size_t errlen)
{
	struct xnf_plan_req req = {};
	struct xnf_plan *plan = NULL;
	char why[XNF_PLACE_ERR_LEN];
	int ret;

	ret = xnf_place_worker(pin_root, dev, queue, cpu, node);
	if (!ret && core < 0)
		return 0;
	if (ret && ret != -ENOENT && ret != -ERANGE)
		return xnf_errf(err, errlen, ret,
				"cannot read the placement recorded for %s: %s",
				dev, strerror(-ret));
	ret = xnf_plan_compute(sysfs_root, dev, &req, &plan, why, sizeof(why));
	if (ret)
		return xnf_errf(err, errlen, ret,
				"cannot plan the placement of %s: %s", dev, why);
	*node = plan->node;
	if (core >= 0)
		*cpu = core;
	else if (queue < (__u32)plan->nqueues)
		*cpu = plan->q[queue].worker_cpu;
	else /* a queue beyond the plan: spread over the planned cores */
		*cpu = plan->q[queue % plan->nqueues].worker_cpu;
	free(plan);
	return 0;
}

/* Binds @len bytes at @addr to @node (preferred: the allocation still
 * succeeds when the node is full) before anything touches them. */
static int bind_node(void *addr, size_t len, int node)
{
	unsigned long mask[XNF_PLACE_MAX_NODES / (8 * sizeof(long))] = {};

	if (node < 0)
		return 0;
	if (node >= XNF_PLACE_MAX_NODES)
		return -EINVAL;
	mask[node / (8 * sizeof(long))] |= 1UL << (node % (8 * sizeof(long)));
	if (syscall(SYS_mbind, addr, len, MPOL_PREFERRED, mask,
		    XNF_PLACE_MAX_NODES + 1, 0))
		return -errno;
	return 0;
}

/* The node the page at @addr is on, or -1. */
static int page_node(void *addr)
{
	int status = -1;

	if (syscall(SYS_move_pages, 0, 1UL, &addr, NULL, &status, 0))
		return -1;
	return status >= 0 ? status : -1;
}

/* ---- sockets ---- */

/*
 * Busy-poll mode on @s: with SO_PREFER_BUSY_POLL, a recvfrom() or sendto()
 * on the socket runs the NAPI of its queue on this thread (SO_BUSY_POLL
 * microseconds at most, SO_BUSY_POLL_BUDGET packets per poll), and the
 * device's deferred interrupts (napi.c) leave that work to the worker
 * while it keeps polling. On the RX socket, the options as the kernel
 * reads them back go into the worker's entry (`xnf worker -j`).
 */
static int busy_poll_setup(struct wthread *t, struct wsock *s, const char *dev,
			   bool first)
{
	const struct xnf_worker_bp *bp = &t->w->bp;
	int one = 1, usecs = bp->usecs, budget = bp->budget, v[3];
	socklen_t len = sizeof(int);
	int err;

	if (setsockopt(s->fd, SOL_SOCKET, SO_PREFER_BUSY_POLL, &one, sizeof(one)) ||
	    setsockopt(s->fd, SOL_SOCKET, SO_BUSY_POLL, &usecs, sizeof(usecs)) ||
	    setsockopt(s->fd, SOL_SOCKET, SO_BUSY_POLL_BUDGET, &budget,
		       sizeof(budget))) {
		err = -errno;
		terr(t, err,
		     "cannot turn on busy polling on %s: %s (needs "
		     "CAP_NET_ADMIN and kernel 5.11+)",
		     dev, strerror(errno));
		return err;
	}
	if (!first)
		return 0;
	/* The kernel has no getsockopt() for SO_BUSY_POLL_BUDGET (6.18):
	 * then the budget recorded is the one it accepted. */
	v[2] = budget;
	if (getsockopt(s->fd, SOL_SOCKET, SO_PREFER_BUSY_POLL, &v[0], &len) ||
	    getsockopt(s->fd, SOL_SOCKET, SO_BUSY_POLL, &v[1], &len) ||
	    (getsockopt(s->fd, SOL_SOCKET, SO_BUSY_POLL_BUDGET, &v[2], &len) &&
	     errno != ENOPROTOOPT)) {
		err = -errno;
		terr(t, err, "cannot read back the busy-poll options on %s: %s",
		     dev, strerror(errno));
		return err;
	}
	t->st->bp.prefer = v[0];
	t->st->bp.usecs = v[1];
	t->st->bp.budget = v[2];
	return 0;
}

static int sock_setup(struct wthread *t, struct wsock *s, const char *dev,
		      bool first)
{
	const struct xnf_worker_opts *o = t->w->o;
	struct xsk_socket_config cfg = {
		.rx_size = t->w->ring,
		.tx_size = t->w->ring,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.bind_flags = XDP_USE_NEED_WAKEUP,
	};
	struct xdp_options opts;
	socklen_t optlen = sizeof(opts);
	__u64 deadline = now_ns() + BIND_RETRY_MS * 1000000ULL;
	int err, v;

	if (o->zerocopy == XNF_ZC_ON)
		cfg.bind_flags |= XDP_ZEROCOPY;
	else if (o->zerocopy == XNF_ZC_OFF)
		cfg.bind_flags |= XDP_COPY;
	for (;;) {
		if (first)
			err = xsk_socket__create(&s->xsk, dev, t->queue,
						 t->umem, &s->rx, &s->tx, &cfg);
		else
			err = xsk_socket__create_shared(&s->xsk, dev, t->queue,
							t->umem, NULL, &s->tx,
							&s->fill, &s->comp, &cfg);
		/* A socket that just closed on this queue (a worker being
		 * restarted) keeps the queue busy until its release has run. */
		if (err != -EBUSY || now_ns() > deadline)
			break;
		usleep(20000);
	}
	if (err) {
		if (err == -EOPNOTSUPP && o->zerocopy == XNF_ZC_ON)
			terr(t, err,
			     "%s queue %u cannot do AF_XDP zero-copy (the "
			     "driver has no XSK buffer pool support); use "
			     "zerocopy auto or off",
			     dev, t->queue);
		else if (err == -EBUSY)
			terr(t, err,
			     "%s queue %u is busy: another AF_XDP socket "
			     "is bound to it (another xnf worker, xdpsock?)",
			     dev, t->queue);
		else
			terr(t, err,
			     "cannot bind an AF_XDP socket to %s queue %u: "
			     "%s",
			     dev, t->queue, strerror(-err));
		return err;
	}
	s->fd = xsk_socket__fd(s->xsk);
	s->ifindex = if_nametoindex(dev);
	if (first) {
		if (getsockopt(s->fd, SOL_XDP, XDP_OPTIONS, &opts, &optlen)) {
			err = -errno;
			terr(t, err, "cannot read the AF_XDP mode of %s: %s",
			     dev, strerror(errno));
			return err;
		}
		t->copy_mode = !(opts.flags & XDP_OPTIONS_ZEROCOPY);
	}
	/* Copy mode transmits from sendto(); let one call send a batch. */
	v = t->w->batch;
	setsockopt(s->fd, SOL_XDP, XDP_MAX_TX_SKB_BUDGET, &v, sizeof(v));
	if (o->busy_poll) {
		err = busy_poll_setup(t, s, dev, first);
		if (err)
			return err;
	}
	s->pend = calloc(t->w->batch, sizeof(*s->pend));
	s->pend_len = calloc(t->w->batch, sizeof(*s->pend_len));
	if (!s->pend || !s->pend_len) {
		terr(t, -ENOMEM, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

static int refill(struct wthread *t);

static void nfs_free(struct wthread *t)
{
	while (t->nnf)
		xnf_unf_free(t->nfs[--t->nnf]);
}

static int nfs_setup(struct wthread *t)
{
	const struct xnf_worker_opts *o = t->w->o;
	struct xnf_unf_env env = {
		.dp = t->w->dp,
		.ingress_ifindex = t->w->ifindex,
		.queue = t->queue,
		.default_egress = t->w->egress_ifindex[0],
		.args = o->args,
	};
	char names[XNF_WORKER_NF_NAME], *name, *save = NULL;
	const struct xnf_unf_ops *ops;
	char why[200];
	int err;

	/* Before the NFs copy the tables: a change made while they do is
	 * then seen at the first tick. */
	err = xnf_tables_gen(t->w->dp, &t->tables_gen);
	if (err) {
		terr(t, err, "cannot read %s: %s",
		     XNF_MAP_STR(XNF_MAP_CFG) "[0].tables_gen", strerror(-err));
		return err;
	}
	snprintf(names, sizeof(names), "%s", o->nf);
	for (name = strtok_r(names, ",", &save); name;
	     name = strtok_r(NULL, ",", &save)) {
		ops = xnf_unf_find(name);
		if (!ops) {
			terr(t, -EINVAL,
			     "unknown NF '%s'; see 'xnf worker help'", name);
			return -EINVAL;
		}
		if (t->nnf == XNF_CHAIN_MAX) {
			terr(t, -E2BIG, "more than %d NFs", XNF_CHAIN_MAX);
			return -E2BIG;
		}
		err = xnf_unf_new(ops, &env, &t->nfs[t->nnf], why, sizeof(why));
		if (err) {
			terr(t, err, "cannot start NF %s on queue %u: %s", name,
			     t->queue, why);
			return err;
		}
		t->nnf++;
	}
	return 0;
}

static void thread_teardown(struct wthread *t)
{
	int i;

	nfs_free(t);
	/* Closing a socket removes it from xnf_xsks: from here on the chain
	 * applies its fallback to this queue. Egress sockets first: the
	 * UMEM cannot go while any socket holds it. */
	for (i = t->nsocks - 1; i >= 0; i--) {
		xsk_socket__delete(t->socks[i].xsk);
		free(t->socks[i].pend);
		free(t->socks[i].pend_len);
	}
	t->nsocks = 0;
	if (t->umem)
		xsk_umem__delete(t->umem);
	t->umem = NULL;
	if (t->area)
		munmap(t->area, t->area_len);
	t->area = NULL;
	free(t->pkts);
	free(t->addrs);
	t->pkts = NULL;
	t->addrs = NULL;
	if (t->lock_fd >= 0)
		close(t->lock_fd);
	t->lock_fd = -1;
}

static int thread_setup(struct wthread *t)
{
	struct worker *w = t->w;
	const struct xnf_worker_opts *o = w->o;
	struct xsk_umem_config ucfg = {
		.fill_size = w->ring,
		.comp_size = w->ring,
		.frame_size = XNF_WORKER_FRAME_SIZE,
		.frame_headroom = 0,
	};
	struct wsock *s0 = &t->socks[0];
	cpu_set_t set;
	__u32 i;
	int err;

	t->lock_fd = open(o->pin_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (t->lock_fd < 0) {
		terr(t, -errno, "cannot open %s: %s", o->pin_root,
		     strerror(errno));
		return t->err;
	}
	CPU_ZERO(&set);
	CPU_SET(t->cpu, &set);
	err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (err) {
		terr(t, -err, "cannot pin the worker of queue %u to CPU %d: %s",
		     t->queue, t->cpu, strerror(err));
		return -err;
	}
	t->area_len = (size_t)w->nframes * XNF_WORKER_FRAME_SIZE;
	t->area = mmap(NULL, t->area_len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t->area == MAP_FAILED) {
		t->area = NULL;
		terr(t, -errno, "cannot allocate %zu bytes of UMEM: %s",
		     t->area_len, strerror(errno));
		return t->err;
	}
	err = bind_node(t->area, t->area_len, t->node);
	if (err)
		pr_warn("UMEM of queue %u not bound to node %d: %s\n", t->queue,
			t->node, strerror(-err));
	/* First touch from the pinned thread, under the node policy. */
	memset(t->area, 0, t->area_len);
	err = xsk_umem__create(&t->umem, t->area, t->area_len, &s0->fill,
			       &s0->comp, &ucfg);
	if (err) {
		t->umem = NULL;
		terr(t, err, "cannot register a UMEM of %u frames: %s%s",
		     w->nframes, strerror(-err),
		     err == -ENOMEM ?
			     " (raise RLIMIT_MEMLOCK, or use fewer frames)" :
			     "");
		return err;
	}
	err = sock_setup(t, s0, o->dev, true);
	if (err)
		return err;
	t->nsocks = 1;
	for (i = 0; i < o->negress; i++) {
		if (w->egress_ifindex[i] == w->ifindex)
			continue;
		err = sock_setup(t, &t->socks[t->nsocks], o->egress[i], false);
		if (err)
			return err;
		t->nsocks++;
	}
	err = xnf_frames_init(&t->frames, w->nframes, XNF_WORKER_FRAME_SIZE);
	t->pkts = calloc(w->batch, sizeof(*t->pkts));
	t->addrs = calloc(w->batch, sizeof(*t->addrs));
	if (err || !t->pkts || !t->addrs) {
		terr(t, -ENOMEM, "out of memory");
		return -ENOMEM;
	}
	err = nfs_setup(t);
	if (err)
		return err;
	/* The fill ring full before the first packet can arrive. */
	refill(t);
	/* Last: from here the chain sends this queue's packets to us. */
	err = xsk_socket__update_xskmap(s0->xsk, w->xsks_fd);
	if (err) {
		terr(t, err, "cannot put the socket of queue %u into %s: %s",
		     t->queue, XNF_MAP_STR(XNF_MAP_XSKS), strerror(-err));
		return err;
	}
	return 0;
}

/* ---- the loop ---- */

static inline void frame_fault(struct wthread *t, const char *where)
{
	terr(t, -EFAULT,
	     "frame accounting broken at %s: frame 0x%llx is not "
	     "where the worker put it (a kernel or worker bug; please report)",
	     where, (unsigned long long)t->frames.bad_addr);
}

static int refill(struct wthread *t)
{
	struct wsock *s0 = &t->socks[0];
	__u32 n, idx, i;
	__u64 addr = 0;

	n = xsk_prod_nb_free(&s0->fill, t->frames.nfree);
	if (n > t->frames.nfree)
		n = t->frames.nfree;
	if (!n) {
		if (!t->frames.nfree && xsk_prod_nb_free(&s0->fill, 1))
			t->st->fill_short++;
		return 0;
	}
	if (xsk_ring_prod__reserve(&s0->fill, n, &idx) != n)
		return 0;
	for (i = 0; i < n; i++) {
		xnf_frame_get(&t->frames, XNF_FP_FILL, &addr);
		*xsk_ring_prod__fill_addr(&s0->fill, idx + i) = addr;
	}
	xsk_ring_prod__submit(&s0->fill, n);
	return 0;
}

static int reap(struct wthread *t)
{
	struct wsock *s;
	__u32 n, idx, i, k;

	for (k = 0; k < t->nsocks; k++) {
		s = &t->socks[k];
		n = xsk_ring_cons__peek(&s->comp, t->w->ring, &idx);
		for (i = 0; i < n; i++) {
			if (xnf_frame_put(&t->frames,
					  *xsk_ring_cons__comp_addr(&s->comp,
								    idx + i),
					  XNF_FP_TX)) {
				frame_fault(t, "completion");
				return -EFAULT;
			}
		}
		if (n)
			xsk_ring_cons__release(&s->comp, n);
	}
	return 0;
}

static struct wsock *tx_sock(struct wthread *t, __u32 ifindex)
{
	__u32 k;

	for (k = 0; k < t->nsocks; k++)
		if (t->socks[k].ifindex == ifindex)
			return &t->socks[k];
	return NULL;
}

static int drop(struct wthread *t, __u64 addr, __u32 why)
{
	t->st->drop[why]++;
	if (xnf_frame_put(&t->frames, addr, XNF_FP_NF)) {
		frame_fault(t, "drop");
		return -EFAULT;
	}
	return 0;
}

/* Copy mode transmits inside sendto(), a budget of frames per call (32
 * unless XDP_MAX_TX_SKB_BUDGET raised it): call again while the ring holds
 * frames and the calls make progress. Zero-copy only needs the kick when
 * the driver asked for one. */
static void kick(struct wthread *t, struct wsock *s)
{
	__u32 left, before;
	int i;

	if (!s->tx.ring)
		return;
	if (!t->copy_mode) {
		/* Busy-poll mode: the driver sends when its NAPI runs, which
		 * is on this sendto() while the interrupts are deferred. */
		if (t->w->o->busy_poll || xsk_ring_prod__needs_wakeup(&s->tx))
			sendto(s->fd, NULL, 0, MSG_DONTWAIT, NULL, 0);
		return;
	}
	left = s->tx.cached_prod -
	       __atomic_load_n(s->tx.consumer, __ATOMIC_ACQUIRE);
	if (!left)
		return;
	for (i = 0; left && i < 8; i++) {
		before = left;
		if (sendto(s->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0 &&
		    errno != EAGAIN && errno != EBUSY && errno != ENOBUFS)
			break;
		left = s->tx.cached_prod -
		       __atomic_load_n(s->tx.consumer, __ATOMIC_ACQUIRE);
		if (left == before)
			break;
	}
}

static int transmit(struct wthread *t, __u32 n)
{
	struct xnf_worker_stats *st = t->st;
	struct wsock *s;
	struct xdp_desc *d;
	__u32 i, k, room, idx;
	int err = 0;

	for (i = 0; i < n && !err; i++) {
		struct xnf_upkt *p = &t->pkts[i];

		switch (p->meta.verdict) {
		case XNF_V_REDIRECT:
			s = tx_sock(t, p->egress_ifindex);
			if (!s) {
				err = drop(t, t->addrs[i], XNF_WD_NO_PORT);
				break;
			}
			s->pend[s->npend] = t->addrs[i];
			s->pend_len[s->npend++] = p->len;
			break;
		case XNF_V_DROP:
			st->nf_drop[p->meta.reason < __XNF_R_MAX ? p->meta.reason :
								   XNF_R_INTERNAL]++;
			err = drop(t, t->addrs[i], XNF_WD_NF);
			break;
		default:
			err = drop(t, t->addrs[i], XNF_WD_TO_KERNEL);
			break;
		}
	}
	for (k = 0; k < t->nsocks; k++) {
		s = &t->socks[k];
		if (!s->npend)
			continue;
		room = xsk_prod_nb_free(&s->tx, s->npend);
		if (room > s->npend)
			room = s->npend;
		if (room && xsk_ring_prod__reserve(&s->tx, room, &idx) != room)
			room = 0;
		for (i = 0; i < room; i++) {
			d = xsk_ring_prod__tx_desc(&s->tx, idx + i);
			d->addr = s->pend[i];
			d->len = s->pend_len[i];
			d->options = 0;
			if (!err && xnf_frame_move(&t->frames, s->pend[i],
						   XNF_FP_NF, XNF_FP_TX)) {
				frame_fault(t, "tx");
				err = -EFAULT;
			}
			st->tx_bytes += s->pend_len[i];
		}
		if (room)
			xsk_ring_prod__submit(&s->tx, room);
		st->tx_packets += room;
		/* The TX ring is full: the frame goes back, counted. */
		for (i = room; i < s->npend && !err; i++)
			err = drop(t, s->pend[i], XNF_WD_TX_FULL);
		s->npend = 0;
		if (room)
			kick(t, s);
	}
	return err;
}

static void kernel_stats(struct wthread *t)
{
	struct xdp_statistics ks;
	socklen_t len = sizeof(ks);
	struct xnf_worker_stats *st = t->st;

	if (getsockopt(t->socks[0].fd, SOL_XDP, XDP_STATISTICS, &ks, &len))
		return;
	st->k_rx_dropped = ks.rx_dropped;
	st->k_rx_invalid_descs = ks.rx_invalid_descs;
	st->k_tx_invalid_descs = ks.tx_invalid_descs;
	st->k_rx_ring_full = ks.rx_ring_full;
	st->k_rx_fill_ring_empty_descs = ks.rx_fill_ring_empty_descs;
	st->k_tx_ring_empty_descs = ks.tx_ring_empty_descs;
}

/* Every TICK_NS: the kernel's counters, and the NFs' copies of the tables
 * when the control plane changed them. A refresh reads the tables under a
 * shared lock, so it never sees half of an `xnf` command's change; when
 * the lock is taken, it is tried again at the next tick. */
static void tick(struct wthread *t)
{
	char why[200];
	__u32 gen, i;
	int err, failed = 0;

	kernel_stats(t);
	if (xnf_tables_gen(t->w->dp, &gen) || gen == t->tables_gen)
		return;
	if (flock(t->lock_fd, LOCK_SH | LOCK_NB))
		return;
	for (i = 0; i < t->nnf; i++) {
		if (!t->nfs[i]->ops->refresh)
			continue;
		why[0] = '\0';
		err = t->nfs[i]->ops->refresh(t->nfs[i], why, sizeof(why));
		if (err) {
			failed = err;
			/* A warning of its own: the worker goes on. */
			if (!t->refresh_warned)
				pr_warn("NF %s on queue %u: refresh failed: "
					"%s; retrying\n",
					t->nfs[i]->ops->name, t->queue,
					why[0] ? why : strerror(-err));
		}
	}
	/* A failed refresh (say, firewall rules an interrupted `xnf fw`
	 * left uncommitted) is tried again at the next tick. */
	t->refresh_warned = failed != 0;
	if (!failed)
		t->tables_gen = gen;
	flock(t->lock_fd, LOCK_UN);
}

/* Zeroes the counters (not the identity, not where the frames are) on
 * behalf of `xnf stats reset`: only the worker writes its entry, so a
 * reset never races with its increments. The kernel's XDP_STATISTICS
 * cannot be reset; they are left as they are. */
static void counters_reset(struct xnf_worker_stats *st)
{
	size_t from = offsetof(struct xnf_worker_stats, rx_packets);
	size_t to = offsetof(struct xnf_worker_stats, place);

	memset((char *)st + from, 0, to - from);
	memset(st->by_size, 0, sizeof(st->by_size));
	__atomic_store_n(&st->reset_done, st->reset_req, __ATOMIC_RELEASE);
}

/* Runs the NFs over the @n descriptors at @idx of the RX ring and sends
 * the frames on; @t0 is when the read began. */
static int rx_batch(struct wthread *t, __u32 n, __u32 idx, __u64 t0)
{
	struct worker *w = t->w;
	struct xnf_worker_stats *st = t->st;
	struct wsock *s0 = &t->socks[0];
	__u64 dt, ttx;
	__u32 i, k;
	int err;

	for (i = 0; i < n; i++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&s0->rx,
								  idx + i);
		struct xnf_upkt *p = &t->pkts[i];

		if (xnf_frame_move(&t->frames, d->addr, XNF_FP_FILL, XNF_FP_NF)) {
			/* The frames before this one are the NF's. */
			xsk_ring_cons__release(&s0->rx, n);
			for (k = 0; k < i; k++)
				xnf_frame_put(&t->frames, t->addrs[k], XNF_FP_NF);
			frame_fault(t, "rx");
			return -EFAULT;
		}
		t->addrs[i] = d->addr;
		p->data = xsk_umem__get_data(t->area, d->addr);
		p->len = d->len;
		st->rx_bytes += d->len;
		xnf_uparse(p->data, p->len, w->ifindex, t->queue, &p->meta);
		p->flags = 0;
		if (p->meta.verdict != XNF_V_DROP) {
			p->meta.verdict = XNF_V_REDIRECT;
			p->egress_ifindex = w->egress_ifindex[0];
		}
	}
	xsk_ring_cons__release(&s0->rx, n);
	for (k = 0; k < t->nnf; k++)
		t->nfs[k]->ops->run(t->nfs[k], t->pkts, n);
	ttx = now_ns();
	err = transmit(t, n);
	if (!err)
		err = reap(t);
	dt = now_ns();
	st->by_size[n].tx_ns += dt - ttx;
	dt -= t0;
	st->polls++;
	st->rx_packets += n;
	st->busy_ns += dt;
	st->by_size[n].batches++;
	st->by_size[n].ns += dt;
	st->by_size[n].ns_sq += dt * dt;
	return err;
}

static int loop(struct wthread *t)
{
	struct worker *w = t->w;
	struct xnf_worker_stats *st = t->st;
	struct wsock *s0 = &t->socks[0];
	struct pollfd pfd = { .fd = s0->fd, .events = POLLIN };
	__u64 t0, t1, dt, next_tick = 0;
	__u32 n, idx, k, idle = 0;
	bool slept = false;
	int err;

	while (!*w->stop && !w->quit) {
		err = refill(t);
		if (err)
			return err;
		t0 = now_ns();
		n = xsk_ring_cons__peek(&s0->rx, w->batch, &idx);
		if (!n) {
			/* Frames a refused sendto() left in a TX ring go out
			 * now, not with the next packet. */
			for (k = 0; k < t->nsocks; k++)
				kick(t, &t->socks[k]);
			err = reap(t);
			if (err)
				return err;
			/* In busy-poll mode this recvfrom() is what runs the
			 * queue's NAPI (its interrupts stay deferred while
			 * the worker polls): called whenever the ring is
			 * empty, never slept on, as the kernel's xdpsock
			 * does. Otherwise it only wakes a driver that ran
			 * out of fill descriptors. */
			if (w->o->busy_poll ||
			    xsk_ring_prod__needs_wakeup(&s0->fill))
				recvfrom(s0->fd, NULL, 0, MSG_DONTWAIT, NULL,
					 NULL);
			/* The cost of an empty read, without the sleep. */
			t1 = now_ns();
			dt = t1 - t0;
			st->by_size[0].batches++;
			st->by_size[0].ns += dt;
			st->by_size[0].ns_sq += dt * dt;
			st->idle_run.reads++;
			st->idle_run.ns += dt;
			st->idle_run.ns_sq += dt * dt;
			if (!w->o->spin && !w->o->busy_poll &&
			    ++idle > IDLE_SPINS) {
				poll(&pfd, 1, POLL_MS);
				dt = now_ns();
				st->sleeps++;
				st->sleep_ns += dt - t1;
				st->idle_run.sleeps++;
				st->idle_run.sleep_ns += dt - t1;
				t1 = dt;
				slept = true;
			}
			st->polls++;
			st->empty_polls++;
			st->idle_ns += t1 - t0;
		} else {
			idle = 0;
			if (st->idle_run.reads)
				memset(&st->idle_run, 0, sizeof(st->idle_run));
			if (slept) {
				st->wake_reads++;
				st->wake_packets += n;
				slept = false;
			}
			err = rx_batch(t, n, idx, t0);
			if (err)
				return err;
			t1 = now_ns();
		}
		memcpy(st->place, t->frames.count, sizeof(st->place));
		if (st->reset_req != st->reset_done)
			counters_reset(st);
		if (t1 >= next_tick) {
			tick(t);
			next_tick = t1 + TICK_NS;
		}
	}
	return 0;
}

/*
 * A stopping worker first leaves xnf_xsks, so that the chain applies its
 * fallback to the queue's next packets, then waits for a grace period:
 * a packet that found the socket in the map before that is in the RX
 * ring afterwards (a copy-mode redirect copies at once; the ring's
 * producer moves at the end of the same NAPI poll). Those are read and
 * sent as usual. Without this, whatever arrived between the last read
 * and the close of the socket (tens of milliseconds' worth) was lost.
 */
static int drain(struct wthread *t)
{
	struct worker *w = t->w;
	struct wsock *s0 = &t->socks[0];
	__u32 key = t->queue, n, idx;
	int err;

	if (bpf_map_delete_elem(w->xsks_fd, &key) && errno != ENOENT) {
		err = -errno;
		terr(t, err, "cannot take the socket of queue %u out of %s: %s",
		     t->queue, XNF_MAP_STR(XNF_MAP_XSKS), strerror(-err));
		return err;
	}
	err = xnf_sync_rcu();
	if (err) {
		terr(t, err, "cannot wait for packets in flight to queue %u: %s",
		     t->queue, strerror(-err));
		return err;
	}
	/* Nothing new arrives now: this ends once the ring is empty. */
	for (;;) {
		err = refill(t);
		if (err)
			return err;
		n = xsk_ring_cons__peek(&s0->rx, w->batch, &idx);
		if (!n)
			return 0;
		err = rx_batch(t, n, idx, now_ns());
		if (err)
			return err;
	}
}

/* Frames still in the kernel's rings when the loop ends go with the UMEM;
 * what the worker holds itself must add up. */
static void *thread_main(void *arg)
{
	struct wthread *t = arg;
	struct worker *w = t->w;
	struct xnf_worker_stats *st = t->st;
	int err;

	st->tid = syscall(SYS_gettid);
	err = thread_setup(t);
	pthread_mutex_lock(&w->lock);
	if (err)
		w->failed = 1;
	w->nready++;
	pthread_cond_broadcast(&w->cond);
	while (!w->go)
		pthread_cond_wait(&w->cond, &w->lock);
	pthread_mutex_unlock(&w->lock);
	if (!err && !w->failed) {
		st->mode = t->copy_mode ? XNF_XSK_MODE_COPY :
					  XNF_XSK_MODE_ZEROCOPY;
		st->node = t->node >= 0 ? page_node(t->area) : -1;
		st->state = XNF_W_RUNNING;
		err = loop(t);
		if (!err)
			err = drain(t);
		if (err)
			w->quit = w->failed = 1;
		/* Let in-flight TX complete so the counts end settled. */
		if (!err) {
			usleep(10000);
			reap(t);
			kernel_stats(t);
			memcpy(st->place, t->frames.count, sizeof(st->place));
		}
	}
	thread_teardown(t);
	st->state = XNF_W_STOPPED;
	return NULL;
}

static int opts_check(struct worker *w, char *err, size_t errlen)
{
	const struct xnf_worker_opts *o = w->o;
	char ebuf[256];
	__u32 i, nrx;
	int ret, n;

	ret = xnf_dev_ifindex(o->dev, &w->ifindex, err, errlen);
	if (ret)
		return ret;
	w->ring = o->ring ?: XNF_WORKER_RING_DEFAULT;
	w->batch = o->batch ?: XNF_WORKER_BATCH_DEFAULT;
	if (w->ring < 64 || w->ring > 16384 || (w->ring & (w->ring - 1)))
		return xnf_errf(err, errlen, -EINVAL,
				"ring %u: a power of two from 64 to 16384",
				w->ring);
	if (w->batch > w->ring || w->batch > XNF_XSK_BATCH_MAX)
		return xnf_errf(err, errlen, -EINVAL,
				"batch %u: at most the ring size (%u) and %u",
				w->batch, w->ring, XNF_XSK_BATCH_MAX);
	/* Fill and RX ring full, and a TX and completion ring per socket. */
	w->nframes = o->frames ?: 2 * w->ring + 2 * w->ring * (o->negress ?: 1);
	if (w->nframes < 2 * w->batch)
		return xnf_errf(err, errlen, -EINVAL,
				"frames %u: at least twice the batch",
				w->nframes);
	w->bp.usecs = o->bp.usecs ?: XNF_BP_USECS_DEFAULT;
	w->bp.budget = o->bp.budget ?: w->batch;
	w->bp.defer = o->bp.defer ?: XNF_BP_DEFER_DEFAULT;
	w->bp.flush_ns = o->bp.flush_ns ?: XNF_BP_FLUSH_NS_DEFAULT;
	if (w->bp.usecs > INT_MAX || w->bp.budget > USHRT_MAX ||
	    w->bp.flush_ns > XNF_BP_FLUSH_NS_MAX)
		return xnf_errf(err, errlen, -EINVAL,
				"busy-poll: usecs at most %d, budget at most %u, flush-timeout at most %u ns",
				INT_MAX, USHRT_MAX, XNF_BP_FLUSH_NS_MAX);
	w->egress_ifindex[0] = w->ifindex;
	for (i = 0; i < o->negress; i++) {
		ret = xnf_dev_ifindex(o->egress[i], &w->egress_ifindex[i], ebuf,
				      sizeof(ebuf));
		if (ret)
			return xnf_errf(err, errlen, ret, "egress: %s", ebuf);
	}
	/* Of this network namespace: under nsenter --net, /sys is another's. */
	ret = xnf_dev_queues(o->dev, &n, NULL);
	if (ret)
		return xnf_errf(err, errlen, ret,
				"cannot count the RX queues of %s: %s", o->dev,
				strerror(-ret));
	nrx = n;
	w->nth = o->nqueues ?: (nrx < XNF_WORKER_MAX ? nrx : XNF_WORKER_MAX);
	for (i = 0; i < w->nth; i++) {
		__u32 q = o->nqueues ? o->queues[i] : i;

		if (q >= nrx || q >= XNF_WORKER_MAX)
			return xnf_errf(err, errlen, -ERANGE,
					"%s has no RX queue %u (it has %u; xnf "
					"workers serve queues 0..%d)",
					o->dev, q, nrx, XNF_WORKER_MAX - 1);
		w->th[i].queue = q;
	}
	return 0;
}

/*
 * -EOPNOTSUPP when the device's chain translates addresses: the nat NF
 * rewrites a connection's destination in the chain and its source in
 * xnf_finish() when the packet leaves by a redirect; a packet the chain
 * hands to a worker leaves by the worker's socket, past both, with no
 * translation of its reply either. As the workers' firewall refuses ct
 * state (nf_firewall.c), a worker refuses what it cannot honour rather
 * than forward untranslated packets.
 */
static int chain_check(struct worker *w, char *err, size_t errlen)
{
	struct xnf_dev_status st;
	__u32 i;
	int ret;

	ret = xnf_dev_status(w->dp, w->o->dev, &st);
	if (ret)
		return xnf_errf(err, errlen, ret,
				"cannot read the chain of %s: %s", w->o->dev,
				strerror(-ret));
	for (i = 0; i < st.info.chain_len && i < XNF_CHAIN_MAX; i++)
		if (xnf_nf_flags(st.info.nf[i]) & XNF_NFF_NAT)
			return xnf_errf(err, errlen, -EOPNOTSUPP,
					"the chain of %s has %s, which the AF_XDP workers cannot honour (packets they send would leave untranslated, and their replies would not be translated back); attach a chain without %s for the worker (xnf chain set %s ...), or translate on another device",
					w->o->dev, xnf_nf_name(st.info.nf[i]),
					xnf_nf_name(st.info.nf[i]), w->o->dev);
	return 0;
}

int xnf_worker_run(struct xnf_dp *dp, const struct xnf_worker_opts *o,
		   volatile sig_atomic_t *stop, char *errbuf, size_t errlen)
{
	const char *sysfs_root = o->sysfs_root ?: "";
	struct worker *w;
	char path[PATH_MAX];
	__u64 deadline, owned = 0;
	__u32 i, started = 0;
	bool locked = false;
	int err, ret, sfd = -1;

	w = calloc(1, sizeof(*w));
	if (!w)
		return xnf_errf(errbuf, errlen, -ENOMEM, "out of memory");
	w->o = o;
	w->dp = dp;
	w->stop = stop;
	w->xsks_fd = -1;
	err = opts_check(w, errbuf, errlen);
	if (err)
		goto out;
	xnf_dev_path(o->pin_root, o->dev, XNF_MAP_STR(XNF_MAP_XSKS), path,
		     sizeof(path));
	w->xsks_fd = bpf_obj_get(path);
	if (w->xsks_fd < 0) {
		err = xnf_errf(errbuf, errlen, -errno,
			       "%s has no xnf chain (%s: %s); attach one that "
			       "ends in xsk first: xnf attach %s chain xsk",
			       o->dev, path, strerror(errno), o->dev);
		goto out;
	}
	err = chain_check(w, errbuf, errlen);
	if (err)
		goto out;
	sfd = xnf_workers_open(o->pin_root, o->dev, true);
	if (sfd < 0) {
		err = xnf_errf(errbuf, errlen, sfd, "cannot create %s for %s: %s",
			       XNF_MAP_STR(XNF_MAP_WORKERS), o->dev,
			       strerror(-sfd));
		goto out;
	}
	w->stats_len = sizeof(struct xnf_worker_stats) * XNF_WORKER_MAX;
	w->stats = mmap(NULL, w->stats_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			sfd, 0);
	if (w->stats == MAP_FAILED) {
		err = xnf_errf(errbuf, errlen, -errno, "cannot map %s: %s",
			       XNF_MAP_STR(XNF_MAP_WORKERS), strerror(errno));
		w->stats = NULL;
		goto out;
	}
	/* The device's NAPI settings are shared by its workers: changed and
	 * restored under the pin root's lock. Those a killed busy-poll
	 * worker left are restored first. */
	err = xnf_dp_lock(dp, LOCK_EX);
	if (err) {
		err = xnf_errf(errbuf, errlen, err, "cannot lock %s: %s",
			       o->pin_root, strerror(-err));
		goto out;
	}
	locked = true;
	err = xnf_napi_release(sysfs_root, o->dev, w->stats, 0, errbuf, errlen);
	if (err)
		goto out;
	for (i = 0; i < w->nth; i++) {
		struct wthread *t = &w->th[i];
		struct xnf_worker_stats *st = &w->stats[t->queue];

		if (xnf_worker_alive(st) && st->pid != (__u32)getpid()) {
			err = xnf_errf(errbuf, errlen, -EBUSY,
				       "%s queue %u already has a worker (pid "
				       "%u); stop it first",
				       o->dev, t->queue, st->pid);
			goto out;
		}
		t->w = w;
		t->idx = i;
		t->lock_fd = -1;
		err = xnf_worker_place(o->pin_root, o->sysfs_root ?: "", o->dev,
				       t->queue, o->have_cores ? o->cores[i] : -1,
				       &t->cpu, &t->node, errbuf, errlen);
		if (err)
			goto out;
		memset(st, 0, sizeof(*st));
		st->state = XNF_W_STARTING;
		st->pid = getpid();
		st->cpu = t->cpu;
		st->node = t->node;
		st->batch = w->batch;
		st->ring = w->ring;
		st->frames = w->nframes;
		st->frame_size = XNF_WORKER_FRAME_SIZE;
		st->busy_poll = o->busy_poll;
		st->need_wakeup = 1;
		st->started_ns = now_ns();
		snprintf((char *)st->nf, sizeof(st->nf), "%s", o->nf);
		t->st = st;
		owned |= 1ULL << t->queue;
	}
	if (o->busy_poll) {
		err = xnf_napi_take(sysfs_root, o->dev, w->stats, owned,
				    w->bp.defer, w->bp.flush_ns, errbuf, errlen);
		if (err)
			goto out;
	}
	xnf_dp_lock(dp, LOCK_UN);
	locked = false;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	for (i = 0; i < w->nth; i++) {
		err = pthread_create(&w->th[i].th, NULL, thread_main, &w->th[i]);
		if (err) {
			err = xnf_errf(errbuf, errlen, -err,
				       "cannot start a worker thread: %s",
				       strerror(err));
			w->failed = 1;
			break;
		}
		w->th[i].started = true;
		started++;
	}
	/* Wait for the threads that started to be set up, then let them
	 * all run, or all leave when one of them failed. */
	pthread_mutex_lock(&w->lock);
	while (w->nready < started)
		pthread_cond_wait(&w->cond, &w->lock);
	w->go = true;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	deadline = o->duration_s ? now_ns() + o->duration_s * 1000000000ULL : 0;
	while (!*stop && !w->failed && (!deadline || now_ns() < deadline))
		usleep(20000);
	w->quit = 1;
	for (i = 0; i < w->nth; i++)
		if (w->th[i].started)
			pthread_join(w->th[i].th, NULL);
	/* The first failure of a thread, at its start or while it ran. */
	for (i = 0; i < w->nth && !err; i++)
		if (w->th[i].err)
			err = xnf_errf(errbuf, errlen, w->th[i].err, "%s",
				       w->th[i].errmsg);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
out:
	for (i = 0; i < w->nth; i++)
		if (w->th[i].st && !w->th[i].started)
			w->th[i].st->state = XNF_W_STOPPED;
	/* The last busy-poll worker of the device puts its NAPI settings
	 * back; a failure is reported unless an earlier one was. */
	if (owned && (locked || !xnf_dp_lock(dp, LOCK_EX))) {
		locked = true;
		ret = xnf_napi_release(sysfs_root, o->dev, w->stats, owned,
				       err ? NULL : errbuf, errlen);
		if (!err)
			err = ret;
	}
	if (locked)
		xnf_dp_lock(dp, LOCK_UN);
	if (w->stats)
		munmap(w->stats, w->stats_len);
	if (sfd >= 0)
		close(sfd);
	if (w->xsks_fd >= 0)
		close(w->xsks_fd);
	free(w);
	return err;
}

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * placement.h - where a device's queues, their interrupts, their XDP work
 * and their userspace workers run: reading the machine (CPUs, hyperthreads,
 * NUMA nodes, isolated CPUs) and the device (NUMA node, channels, queue
 * IRQs, napi threads), computing a plan, applying it, putting the host back
 * as it was, and reporting drift.
 *
 * One root. Every sysfs and procfs path is read below @root: "" or "/" is
 * the real system, anything else a fixture tree laid out like it
 * (<root>/sys/..., <root>/proc/..., see selftests/fixtures/).
 *
 * The real system is the caller's network namespace, whatever /sys shows
 * (under `nsenter --net` it shows the host's): the device, its ifindex
 * and its queue counts come from rtnetlink and the netdev family, its bus
 * device (NUMA node, IRQs) from ethtool's bus address in /sys/bus/, and
 * /sys/class/net/<DEV>/threaded from a sysfs mounted for this namespace
 * when /sys is another's (lib/netdev.c). In a fixture they are the files
 * <DEV>/queues/{rx,tx}-N, <DEV>/ifindex, <DEV>/device and <DEV>/threaded.
 *
 * Two things do not live in files on a real system, and are read from the
 * fixture tree instead:
 *   channel counts   ETHTOOL_GCHANNELS / ETHTOOL_SCHANNELS on the real
 *                    system; <root>/ethtool/<DEV>/channels in a fixture, a
 *                    file of "key value" pairs with the keys combined,
 *                    max_combined, rx, max_rx, tx, max_tx, other, max_other
 *                    (missing keys are 0; a missing file is a driver
 *                    without channel support). Applying rewrites the file.
 *   napi threads     the netdev generic-netlink family (queue -> napi id ->
 *                    thread pid, exact and per network namespace) on the
 *                    real system, falling back to the comm scan on kernels
 *                    without it; in a fixture, <root>/proc/<pid>/comm
 *                    "napi/<DEV>-<napi id>", the queue being the rank of the
 *                    napi id (drivers add their NAPIs in queue order).
 *                    A thread's affinity is read from /proc/<pid>/status
 *                    (Cpus_allowed_list); applying uses sched_setaffinity(),
 *                    or rewrites that line in a fixture.
 *
 * Which IRQ serves which queue: the IRQs are those of the device
 * (<DEV>/device/msi_irqs/, or of its parent for virtio, or the legacy
 * <DEV>/device/irq); each one's action name comes from /proc/interrupts and
 * is matched by xnf_irq_queue() (rules there). A device without IRQs
 * (veth, tun, ...) gets threaded NAPI instead: its napi threads are pinned.
 *
 * Functions return 0 or a negative errno; the ones that take @err fill it
 * with a sentence that says what failed and how to fix it. Warnings about
 * what could not be changed (and is not fatal) go through pr_warn.
 */
#ifndef XNF_PLACEMENT_H
#define XNF_PLACEMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <net/if.h>
#include <linux/types.h>

#include "xnf_place.h"

_Static_assert(sizeof(struct xnf_place_info) == 56 + 8 * XNF_PLACE_CPU_WORDS,
	       "xnf_place_info layout");
_Static_assert(sizeof(struct xnf_place_queue) == 24 + 16 * XNF_PLACE_CPU_WORDS,
	       "xnf_place_queue layout");

#define XNF_PLACE_MAX_CPUS  (XNF_PLACE_CPU_WORDS * 64)
#define XNF_PLACE_MAX_NODES 64
#define XNF_PLACE_MAX_NOTES 16
#define XNF_PLACE_NOTE_LEN  400
#define XNF_PLACE_ERR_LEN   400

/* ---- CPU sets, in the kernel's list syntax ---- */

struct xnf_cpuset {
	__u64 w[XNF_PLACE_CPU_WORDS];
};

static inline void xnf_cpuset_zero(struct xnf_cpuset *s)
{
	*s = (struct xnf_cpuset){};
}

static inline bool xnf_cpuset_test(const struct xnf_cpuset *s, int cpu)
{
	return cpu >= 0 && cpu < XNF_PLACE_MAX_CPUS &&
	       (s->w[cpu / 64] >> (cpu % 64)) & 1;
}

static inline void xnf_cpuset_set(struct xnf_cpuset *s, int cpu)
{
	if (cpu >= 0 && cpu < XNF_PLACE_MAX_CPUS)
		s->w[cpu / 64] |= 1ULL << (cpu % 64);
}

static inline void xnf_cpuset_clr(struct xnf_cpuset *s, int cpu)
{
	if (cpu >= 0 && cpu < XNF_PLACE_MAX_CPUS)
		s->w[cpu / 64] &= ~(1ULL << (cpu % 64));
}

int xnf_cpuset_count(const struct xnf_cpuset *s);
/* First CPU >= @cpu in @s, or -1. */
int xnf_cpuset_next(const struct xnf_cpuset *s, int cpu);
bool xnf_cpuset_equal(const struct xnf_cpuset *a, const struct xnf_cpuset *b);
/* "0-3,8,10-15:2/4" (groups: N, N-M, N-M:used/group_size), as in
 * /sys/devices/system/cpu/online or isolcpus=; blanks and a trailing
 * newline are ignored, "" is the empty set. -EINVAL on anything else,
 * -ERANGE for a CPU above XNF_PLACE_MAX_CPUS - 1. */
int xnf_cpuset_parse(const char *list, struct xnf_cpuset *s);
/* The shortest list ("0-3,8"), "" for the empty set. */
const char *xnf_cpuset_format(const struct xnf_cpuset *s, char *buf, size_t len);

/* ---- the machine ---- */

struct xnf_topo {
	int ncpus; /* highest possible CPU + 1 */
	struct xnf_cpuset possible, online;
	struct xnf_cpuset isolcpus;  /* isolcpus= of /proc/cmdline */
	struct xnf_cpuset nohz_full; /* nohz_full= */
	char isolcpus_flags[64];     /* "domain,managed_irq", "" if none */
	int nnodes;		     /* highest node with CPUs + 1 */
	struct xnf_cpuset node_cpus[XNF_PLACE_MAX_NODES];
	short node[XNF_PLACE_MAX_CPUS];	 /* node of each CPU, -1: unknown */
	short core[XNF_PLACE_MAX_CPUS];	 /* physical core: its lowest CPU */
	int core_id[XNF_PLACE_MAX_CPUS]; /* topology/core_id, -1 */
	int package[XNF_PLACE_MAX_CPUS]; /* topology/physical_package_id */
	bool smt; /* some core has more than one thread */
};

int xnf_topo_read(const char *root, struct xnf_topo *t);
/* isolcpus= and nohz_full= of a kernel command line (last one wins, flags
 * such as "domain,managed_irq," before the list, nothing after "--"). */
int xnf_cmdline_isolated(const char *cmdline, struct xnf_cpuset *isolcpus,
			 struct xnf_cpuset *nohz_full, char *flags,
			 size_t flagslen);

/* ---- the device ---- */

struct xnf_channels {
	__u32 combined, max_combined;
	__u32 rx, max_rx;
	__u32 tx, max_tx;
	__u32 other, max_other;
};

#define XNF_IRQ_NAME_LEN 64

struct xnf_nic_queue {
	int irq; /* -1: none found */
	char irq_name[XNF_IRQ_NAME_LEN];
	struct xnf_cpuset irq_affinity; /* /proc/irq/N/smp_affinity_list */
	__u32 napi_id;			/* 0: no napi thread found */
	int napi_pid;
	struct xnf_cpuset napi_affinity;
};

struct xnf_nic {
	char dev[IF_NAMESIZE];
	__u32 ifindex;
	int node;	 /* sysfs numa_node, -1: none */
	bool has_device; /* backed by a bus device */
	int nrxq, ntxq;	 /* queues in use (rx-*, tx-*) */
	int chan_err;	 /* 0: channels valid */
	struct xnf_channels ch;
	int nirqs;    /* IRQs of the device */
	int nqirqs;   /* of them, serving receive queues */
	bool irq_all; /* one IRQ serves every queue */
	int threaded; /* <DEV>/threaded, -1: absent */
	int nnapi;    /* napi threads found */
	struct xnf_nic_queue q[XNF_PLACE_MAX_QUEUES];
};

/* -ENODEV (with @err) if @dev does not exist in this network namespace
 * (-ENOENT below a fixture @root). */
int xnf_nic_read(const char *root, const char *dev, struct xnf_nic *nic,
		 char *err, size_t errlen);
/* The receive and transmit queues @dev uses now, in the caller's network
 * namespace (netlink and ethtool, never a /sys that may show another
 * namespace): -EINVAL for a bad name, -ENODEV for no such device. @ntx
 * may be NULL. */
int xnf_dev_queues(const char *dev, int *nrx, int *ntx);
/* Receive queues in use now: combined + rx channels, or the queue count. */
int xnf_nic_queues(const struct xnf_nic *nic);
/* Most receive queues the device can have (equal to the current count when
 * the driver cannot tell or change it). */
int xnf_nic_queues_max(const struct xnf_nic *nic);

/* The receive queue an IRQ action name serves, for the device @dev:
 *  - everything from '@' on is dropped (mlx5: "mlx5_comp3@pci:0000:af:00.0");
 *  - the name is split into words at '-', '_', '.', ':' and blanks;
 *  - a word that names a control vector (async, ctrl, cmd, cmdq, config,
 *    misc, event(s), aq, adminq, mbx, mailbox, ptp, lsc, fdir, err, with or
 *    without trailing digits) makes it no queue: -ENOENT;
 *  - a word "tx" or "output" without a word "rx", "txrx", "input", "fp",
 *    "comb(ined)" or "comp<N>" makes it a transmit-only vector: -ENOENT;
 *  - the queue is the number that ends the last word: "eth0-TxRx-3",
 *    "i40e-eth0-TxRx-3", "ice-eth0-TxRx-3", "ens1f0-rx-3",
 *    "mlx5_comp3@pci:...", "virtio2-input.3", "bnx2x eth0-fp-3" all give 3;
 *  - a name that is just the device name (a single-vector device) gives
 *    XNF_IRQ_ALL_QUEUES; anything else -ENOENT.
 * IRQs that are not in the device's own list are never looked at, so a
 * renamed device (IRQ names keep the old name) is still matched. */
#define XNF_IRQ_ALL_QUEUES (-1000)
int xnf_irq_queue(const char *name, const char *dev);

/* ---- the plan ---- */

struct xnf_plan_req {
	__u32 queues; /* 0: choose */
	bool have_cores;
	struct xnf_cpuset cores; /* the XDP cores, queue i on the i-th */
};

struct xnf_plan_queue {
	int irq; /* -1: none */
	char irq_name[XNF_IRQ_NAME_LEN];
	int cpu;	/* XDP work: IRQ, NAPI */
	int worker_cpu; /* userspace worker (AF_XDP) */
};

struct xnf_plan {
	char root[256];
	char dev[IF_NAMESIZE];
	struct xnf_topo topo;
	struct xnf_nic nic;
	int node;		     /* the NIC's node, -1: none */
	struct xnf_cpuset node_cpus; /* online CPUs planned on */
	struct xnf_cpuset isolated;  /* (isolcpus | nohz_full) & online */
	int queues_now, queues_max;
	int nqueues;	       /* planned */
	bool set_channels;     /* nqueues != queues_now */
	bool use_napi_threads; /* no IRQs: threaded NAPI, pinned */
	struct xnf_plan_queue q[XNF_PLACE_MAX_QUEUES];
	struct xnf_cpuset xdp_cpus, worker_cpus, rest;
	bool siblings_used; /* two queues on one physical core */
	bool cpu0_used;
	bool shared;	     /* more queues than cores */
	bool workers_shared; /* some worker on its queue's core */
	bool cross_node;     /* some XDP core off the NIC's node */
	int nnotes, nwarnings;
	char notes[XNF_PLACE_MAX_NOTES][XNF_PLACE_NOTE_LEN]; /* why */
	char warnings[XNF_PLACE_MAX_NOTES][XNF_PLACE_NOTE_LEN];
};

/* Reads the machine and @dev below @root and plans @req. -ERANGE when
 * req->queues is above the device's maximum (@err names it), -EINVAL for
 * cores that are not online, -ENODEV for a missing device. *@out is freed
 * with free(). */
int xnf_plan_compute(const char *root, const char *dev,
		     const struct xnf_plan_req *req, struct xnf_plan **out,
		     char *err, size_t errlen);

/* The cross-node warning, with the papers' numbers, for @cpus off @node. */
void xnf_plan_cross_node_text(const struct xnf_plan *p, char *buf, size_t len);

/* ---- applying, restoring, drift ---- */

struct xnf_place_state {
	struct xnf_place_info info;
	struct xnf_place_queue q[XNF_PLACE_MAX_QUEUES];
};

/* Records @p as if applied with nothing to undo: what drift is measured
 * against when xnf did not make the change itself. */
void xnf_place_state_init(const struct xnf_plan *p, struct xnf_place_state *st);

/* Before the XDP attach: sets the channel count of the plan, recording the
 * old one in @st. A refusal is an error (-errno, @err) with @strict (the
 * operator asked for that count), else a warning and 0. */
int xnf_place_apply_channels(const struct xnf_plan *p, bool strict,
			     struct xnf_place_state *st, char *err,
			     size_t errlen);
/* After the XDP attach (which re-creates queues, IRQ handlers and napi
 * threads): sets each queue IRQ's affinity to its core, or for a device
 * without IRQs turns threaded NAPI on and pins each queue's napi thread;
 * records what it changed in @st. What cannot be changed is a warning. */
int xnf_place_apply_cpus(const struct xnf_plan *p, struct xnf_place_state *st);
/* Undo, in two steps around the XDP detach: the napi threads and threaded
 * NAPI while the program is still attached (a veth without XDP has no
 * NAPI to switch off), then channels and IRQ affinities once it is gone.
 * Best effort: every failure is a warning, the first one returned. */
int xnf_place_restore_napi(const char *root, const char *dev,
			   const struct xnf_place_state *st);
int xnf_place_restore_host(const char *root, const char *dev,
			   const struct xnf_place_state *st);

enum xnf_drift_kind {
	XNF_DRIFT_CHANNELS,  /* queue count changed */
	XNF_DRIFT_IRQ,	     /* IRQ affinity moved (irqbalance) */
	XNF_DRIFT_NAPI,	     /* napi thread on other CPUs */
	XNF_DRIFT_NAPI_GONE, /* no napi thread for the queue */
	XNF_DRIFT_THREADED,  /* threaded NAPI switched off */
	XNF_DRIFT_WORKER,    /* AF_XDP worker off its planned CPU */
};

struct xnf_drift {
	enum xnf_drift_kind kind;
	int queue; /* -1: the device */
	int irq;
	int want;	       /* CPU, or queue count, or 1 */
	int now_count;	       /* channels: queues now */
	struct xnf_cpuset now; /* affinity now */
	char text[XNF_PLACE_NOTE_LEN];
};

/* Compares @st with the host; fills up to @max entries of @d and returns
 * how many differ (which may be more than @max), or -errno. */
int xnf_place_drift(const char *root, const char *dev,
		    const struct xnf_place_state *st, struct xnf_drift *d,
		    int max);
const char *xnf_drift_kind_name(enum xnf_drift_kind k);

/* ---- the record, pinned in <pin_dir> (= <root>/dev/<DEV>) ---- */

int xnf_place_save(const char *pin_dir, const struct xnf_place_state *st);
/* -ENOENT when the device was attached without placement. */
int xnf_place_load(const char *pin_dir, struct xnf_place_state *st);

/* For the AF_XDP workers: the core the worker of @queue of @dev should run
 * on and the node to allocate its UMEM on (-1: any), as the placement
 * applied at attach recorded them under the pin root @pin_root. -ENOENT if
 * @dev was attached without placement (compute one with xnf_plan_compute),
 * -ERANGE for a queue that was not placed. */
int xnf_place_worker(const char *pin_root, const char *dev, __u32 queue,
		     int *cpu, int *node);

#endif /* XNF_PLACEMENT_H */

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Placement unit tests: the plan for each machine of selftests/fixtures/
 * (see generate.bash there), the parsers it rests on, drift against the
 * fixtures' IRQ affinities, and apply/restore on private copies of the
 * fixture trees (IRQ affinity files, the channels file, threaded NAPI and
 * napi thread affinities are all files there). Pure C, no root, nothing on
 * the host is read or written, but for placement_record, which pins the
 * record in the unit tests' private bpffs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "fixture.h"
#include "placement.h"
#include "worker.h"

static const char *fixtures(void)
{
	static char dir[PATH_MAX];
	char exe[PATH_MAX - 32], *slash;
	ssize_t n;

	if (*dir)
		return dir;
	if (getenv("XNF_FIXTURES")) {
		snprintf(dir, sizeof(dir), "%s", getenv("XNF_FIXTURES"));
		return dir;
	}
	if (!access("selftests/fixtures/two-socket", F_OK)) {
		snprintf(dir, sizeof(dir), "selftests/fixtures");
		return dir;
	}
	/* build/test_unit -> selftests/fixtures beside build/ */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	snprintf(dir, sizeof(dir), "%s/../selftests/fixtures", exe);
	return dir;
}

static const char *machine(const char *name)
{
	static char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", fixtures(), name);
	return path;
}

/* The plan of @dev on fixture @root (a path) with @queues and @cores ("" or
 * NULL: choose); NULL after a failed assertion. */
static struct xnf_plan *plan_at(const char *root, const char *dev, __u32 queues,
				const char *cores)
{
	struct xnf_plan_req req = { .queues = queues };
	char err[XNF_PLACE_ERR_LEN] = "";
	struct xnf_plan *p = NULL;
	int rc;

	if (cores && *cores) {
		if (!ASSERT_OK(xnf_cpuset_parse(cores, &req.cores), cores))
			return NULL;
		req.have_cores = true;
	}
	rc = xnf_plan_compute(root, dev, &req, &p, err, sizeof(err));
	if (!ASSERT_OK(rc, err))
		return NULL;
	return p;
}

static struct xnf_plan *plan(const char *m, const char *dev, __u32 queues,
			     const char *cores)
{
	return plan_at(machine(m), dev, queues, cores);
}

static bool has_note(const struct xnf_plan *p, const char *text)
{
	int i;

	for (i = 0; i < p->nnotes; i++)
		if (strstr(p->notes[i], text))
			return true;
	return false;
}

static bool set_is(const struct xnf_cpuset *s, const char *list)
{
	struct xnf_cpuset want;

	return !xnf_cpuset_parse(list, &want) && xnf_cpuset_equal(s, &want);
}

#define ASSERT_SET(s, list, what)                                           \
	({                                                                  \
		char _b[1024];                                              \
		xnf_test_check(set_is(s, list), __FILE__, __LINE__, what,   \
			       "CPUs %s, want %s",                          \
			       xnf_cpuset_format(s, _b, sizeof(_b)), list); \
	})

/* ---- parsers ---- */

TEST(placement_cpuset_parse)
{
	static const struct {
		const char *in, *out;
		int err;
	} cases[] = {
		{ "0-3,8", "0-3,8", 0 },
		{ "0-31\n", "0-31", 0 },
		{ "", "", 0 },
		{ "5", "5", 0 },
		{ "0-15:2/4", "0-1,4-5,8-9,12-13", 0 },
		{ "3,1,2", "1-3", 0 },
		{ "1023", "1023", 0 },
		{ "1024", NULL, -ERANGE },
		{ "3-1", NULL, -EINVAL },
		{ "a", NULL, -EINVAL },
		{ "1,,2", NULL, -EINVAL },
		{ "0-3:5/4", NULL, -EINVAL },
		{ "-1", NULL, -EINVAL },
	};
	struct xnf_cpuset s;
	char buf[256];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = xnf_cpuset_parse(cases[i].in, &s);

		if (!ASSERT_EQ(rc, cases[i].err, cases[i].in) || rc)
			continue;
		xnf_cpuset_format(&s, buf, sizeof(buf));
		ASSERT_TRUE(!strcmp(buf, cases[i].out), cases[i].in);
	}
}

TEST(placement_cmdline)
{
	struct xnf_cpuset iso, nohz;
	char flags[64];

	ASSERT_OK(xnf_cmdline_isolated("ro isolcpus=domain,managed_irq,2-5,8 "
				       "nohz_full=2-5 quiet",
				       &iso, &nohz, flags, sizeof(flags)),
		  "parse");
	ASSERT_SET(&iso, "2-5,8", "isolcpus list after the flags");
	ASSERT_SET(&nohz, "2-5", "nohz_full");
	ASSERT_TRUE(!strcmp(flags, "domain,managed_irq"), "isolcpus flags");

	ASSERT_OK(xnf_cmdline_isolated("isolcpus=1 isolcpus=3 -- isolcpus=7",
				       &iso, &nohz, flags, sizeof(flags)),
		  "parse");
	ASSERT_SET(&iso, "3", "last isolcpus= wins, nothing after --");
	ASSERT_SET(&nohz, "", "no nohz_full");
	ASSERT_TRUE(!*flags, "no flags");

	ASSERT_OK(xnf_cmdline_isolated("root=/dev/sda1 ro", &iso, &nohz, flags,
				       sizeof(flags)),
		  "parse");
	ASSERT_SET(&iso, "", "no isolcpus");
}

TEST(placement_irq_names)
{
	static const struct {
		const char *name, *dev;
		int queue;
	} cases[] = {
		{ "eth0-TxRx-3", "eth0", 3 },
		{ "i40e-eth0-TxRx-3", "eth0", 3 },
		{ "ice-enp1s0f0-TxRx-12", "enp1s0f0", 12 },
		{ "ens1f0-rx-3", "ens1f0", 3 },
		{ "ens1f0-tx-3", "ens1f0", -ENOENT },
		{ "mlx5_comp3@pci:0000:af:00.0", "ens2f0np0", 3 },
		{ "mlx5_async0@pci:0000:af:00.0", "ens2f0np0", -ENOENT },
		{ "virtio2-input.0", "eth0", 0 },
		{ "virtio2-output.0", "eth0", -ENOENT },
		{ "virtio2-config", "eth0", -ENOENT },
		{ "i40e-0000:af:00.0:misc", "ens1f0", -ENOENT },
		{ "eth0-fp-2", "eth0", 2 },
		{ "eth0", "eth0", XNF_IRQ_ALL_QUEUES },
		{ "eth0-TxRx", "eth0", -ENOENT },
		/* Renamed device: the IRQ keeps the old name. */
		{ "eth0-TxRx-5", "ens1f0", 5 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ASSERT_EQ(xnf_irq_queue(cases[i].name, cases[i].dev),
			  cases[i].queue, cases[i].name);
}

/* ---- the plan, per machine ---- */

TEST(placement_two_socket_nic_on_node1)
{
	struct xnf_plan *p = plan("two-socket", "ens1f0", 0, NULL);
	int i;

	if (!p)
		return;
	ASSERT_EQ(p->topo.nnodes, 2, "two nodes");
	ASSERT_TRUE(p->topo.smt, "hyperthreads seen");
	ASSERT_EQ(p->node, 1, "NIC node");
	ASSERT_SET(&p->node_cpus, "8-15,24-31", "CPUs of node 1");
	ASSERT_EQ(p->queues_now, 16, "channels now");
	ASSERT_EQ(p->queues_max, 32, "max channels");
	/* One queue per physical core of node 1. */
	ASSERT_EQ(p->nqueues, 8, "queues planned");
	ASSERT_TRUE(p->set_channels, "channel count changes");
	for (i = 0; i < p->nqueues; i++) {
		ASSERT_EQ(p->q[i].cpu, 8 + i,
			  "XDP core: first thread of each core");
		ASSERT_EQ(p->topo.node[p->q[i].cpu], 1, "XDP core on node 1");
		ASSERT_EQ(p->q[i].worker_cpu, 24 + i, "worker on the sibling");
		ASSERT_EQ(p->q[i].irq, 161 + i, "IRQ of the queue");
		ASSERT_TRUE(!strncmp(p->q[i].irq_name, "i40e-ens1f0-TxRx-", 17),
			    p->q[i].irq_name);
	}
	ASSERT_SET(&p->rest, "0-7,16-23", "node 0 left for the system");
	ASSERT_FALSE(p->siblings_used, "no two queues on one core");
	ASSERT_FALSE(p->cpu0_used, "CPU 0 not used");
	ASSERT_FALSE(p->cross_node, "nothing on node 0");
	ASSERT_EQ(p->nwarnings, 0, "no warning");
	ASSERT_FALSE(p->use_napi_threads, "IRQs, not napi threads");
	ASSERT_TRUE(has_note(p, "NUMA node 1"), "why: the node");
	free(p);
}

TEST(placement_two_socket_siblings_when_needed)
{
	struct xnf_plan *p = plan("two-socket", "ens1f0", 12, NULL);
	int i;

	if (!p)
		return;
	ASSERT_EQ(p->nqueues, 12, "queues as asked");
	for (i = 0; i < 8; i++)
		ASSERT_EQ(p->q[i].cpu, 8 + i, "physical cores first");
	for (i = 8; i < 12; i++)
		ASSERT_EQ(p->q[i].cpu, 24 + i - 8, "then their siblings");
	for (i = 0; i < 12; i++)
		ASSERT_EQ(p->topo.node[p->q[i].cpu], 1, "all on node 1");
	ASSERT_TRUE(p->siblings_used, "siblings used");
	ASSERT_TRUE(has_note(p, "hyperthread siblings used"), "and said so");
	free(p);

	/* 16 queues on node 1's 16 threads; 17 share. */
	p = plan("two-socket", "ens1f0", 17, NULL);
	if (!p)
		return;
	ASSERT_TRUE(p->shared, "more queues than CPUs of the node");
	ASSERT_EQ(p->q[16].cpu, p->q[0].cpu, "queue 16 shares queue 0's CPU");
	ASSERT_FALSE(p->cross_node, "never spills to node 0");
	free(p);
}

TEST(placement_two_socket_mlx5_node0_avoids_cpu0)
{
	struct xnf_plan *p = plan("two-socket", "ens2f0np0", 0, NULL);
	int i;

	if (!p)
		return;
	ASSERT_EQ(p->node, 0, "node 0");
	ASSERT_EQ(p->nqueues, 7, "8 cores on node 0 but CPU 0's");
	for (i = 0; i < p->nqueues; i++) {
		ASSERT_EQ(p->q[i].cpu, 1 + i, "XDP cores 1-7");
		ASSERT_EQ(p->q[i].worker_cpu, 17 + i,
			  "workers on siblings 17-23");
		ASSERT_EQ(p->q[i].irq, 91 + i, "mlx5_comp<N> is queue N");
	}
	ASSERT_FALSE(p->cpu0_used, "CPU 0 avoided");
	ASSERT_TRUE(has_note(p, "CPU 0 avoided"), "and said so");
	free(p);

	/* All 8: CPU 0's sibling before CPU 0 itself. */
	p = plan("two-socket", "ens2f0np0", 8, NULL);
	if (!p)
		return;
	ASSERT_EQ(p->q[7].cpu, 16, "CPU 0's core last, its sibling first");
	ASSERT_FALSE(p->cpu0_used, "still not CPU 0");
	free(p);
}

TEST(placement_cross_node_warning)
{
	struct xnf_plan *p = plan("two-socket", "ens1f0", 0, "0-3");
	int i;

	if (!p)
		return;
	ASSERT_EQ(p->nqueues, 4, "one queue per core given");
	for (i = 0; i < 4; i++)
		ASSERT_EQ(p->q[i].cpu, i, "the cores given, in order");
	ASSERT_TRUE(p->cross_node, "cores on node 0 for a NIC on node 1");
	if (ASSERT_EQ(p->nwarnings, 1, "one warning")) {
		ASSERT_TRUE(strstr(p->warnings[0], "+41%") != NULL,
			    p->warnings[0]);
		ASSERT_TRUE(strstr(p->warnings[0], "+73%") != NULL,
			    p->warnings[0]);
		ASSERT_TRUE(strstr(p->warnings[0], "BESS") != NULL,
			    p->warnings[0]);
		ASSERT_TRUE(strstr(p->warnings[0], "halves") != NULL,
			    p->warnings[0]);
		ASSERT_TRUE(strstr(p->warnings[0], "CPUs 0-3") != NULL,
			    p->warnings[0]);
	}
	free(p);

	/* Cores on the NIC's node: no warning. */
	p = plan("two-socket", "ens1f0", 2, "12-13");
	if (!p)
		return;
	ASSERT_FALSE(p->cross_node, "node 1 cores");
	ASSERT_EQ(p->nwarnings, 0, "no warning");
	free(p);
}

TEST(placement_errors)
{
	struct xnf_plan_req req = { .queues = 33 };
	char err[XNF_PLACE_ERR_LEN] = "";
	struct xnf_plan *p = NULL;

	ASSERT_EQ(xnf_plan_compute(machine("two-socket"), "ens1f0", &req, &p,
				   err, sizeof(err)),
		  -ERANGE, "queues above max");
	ASSERT_TRUE(strstr(err, "at most 32") != NULL, err);
	ASSERT_TRUE(p == NULL, "no plan");

	req.queues = 3;
	ASSERT_EQ(xnf_plan_compute(machine("veth-vm"), "veth0", &req, &p, err,
				   sizeof(err)),
		  -ERANGE, "veth: max 2");
	ASSERT_TRUE(strstr(err, "at most 2") != NULL, err);

	req.queues = 0;
	req.have_cores = true;
	xnf_cpuset_zero(&req.cores);
	xnf_cpuset_set(&req.cores, 32);
	ASSERT_EQ(xnf_plan_compute(machine("two-socket"), "ens1f0", &req, &p,
				   err, sizeof(err)),
		  -EINVAL, "offline core");
	ASSERT_TRUE(strstr(err, "CPU 32") != NULL, err);

	req.have_cores = false;
	ASSERT_EQ(xnf_plan_compute(machine("two-socket"), "nosuch0", &req, &p,
				   err, sizeof(err)),
		  -ENOENT, "no device");
	ASSERT_TRUE(strstr(err, "no device nosuch0") != NULL, err);
}

TEST(placement_single_node)
{
	struct xnf_plan *p = plan("single-node", "eth0", 0, NULL);
	int i;

	if (!p)
		return;
	ASSERT_EQ(p->node, 0, "node 0");
	ASSERT_FALSE(p->topo.smt, "no hyperthreads");
	ASSERT_EQ(p->nqueues, 7, "one per core, CPU 0 left");
	for (i = 0; i < p->nqueues; i++) {
		ASSERT_EQ(p->q[i].cpu, 1 + i, "XDP cores 1-7");
		ASSERT_EQ(p->q[i].irq, 40 + i, "eth0-TxRx-N");
		/* No free core is left: the worker shares. */
		ASSERT_EQ(p->q[i].worker_cpu, p->q[i].cpu, "worker shares");
	}
	ASSERT_TRUE(p->workers_shared, "workers shared");
	ASSERT_SET(&p->rest, "0", "CPU 0 for the system");
	free(p);

	/* Separate rx/tx vectors, rx/tx channels, numa_node -1. */
	p = plan("single-node", "enp3s0", 0, NULL);
	if (!p)
		return;
	ASSERT_EQ(p->node, -1, "no node");
	ASSERT_SET(&p->node_cpus, "0-7", "all online CPUs");
	ASSERT_EQ(p->nqueues, 4, "4 rx queues kept");
	for (i = 0; i < 4; i++)
		ASSERT_EQ(p->q[i].irq, 51 + i, "rx vector, not tx");
	ASSERT_TRUE(has_note(p, "no NUMA node"), "why: no node");
	free(p);

	/* 2 of 4 rx channels: set through rx, not combined. */
	p = plan("single-node", "enp3s0", 2, NULL);
	if (!p)
		return;
	ASSERT_TRUE(p->set_channels, "channels change");
	free(p);
}

TEST(placement_ht_isolated)
{
	struct xnf_plan *p = plan("ht-isolated", "enp1s0f0", 0, NULL);

	if (!p)
		return;
	ASSERT_SET(&p->isolated, "2-3,6-7", "isolated (nothing after --)");
	ASSERT_EQ(p->nqueues, 2, "one per isolated physical core");
	ASSERT_EQ(p->q[0].cpu, 2, "queue 0 on isolated core 2");
	ASSERT_EQ(p->q[1].cpu, 3, "queue 1 on isolated core 3");
	ASSERT_EQ(p->q[0].worker_cpu, 6, "worker on 2's sibling");
	ASSERT_EQ(p->q[1].worker_cpu, 7, "worker on 3's sibling");
	ASSERT_SET(&p->rest, "0-1,4-5", "housekeeping CPUs left");
	ASSERT_EQ(p->q[0].irq, 71, "ice-enp1s0f0-TxRx-0");
	ASSERT_TRUE(has_note(p, "isolated CPUs 2-3,6-7"), "why: isolation");
	free(p);

	/* More queues than isolated cores: physical cores before siblings. */
	p = plan("ht-isolated", "enp1s0f0", 4, NULL);
	if (!p)
		return;
	ASSERT_EQ(p->q[0].cpu, 2, "isolated core");
	ASSERT_EQ(p->q[1].cpu, 3, "isolated core");
	ASSERT_EQ(p->q[2].cpu, 1, "then a housekeeping physical core");
	ASSERT_EQ(p->q[3].cpu, 4, "then CPU 0's sibling: a core of its own");
	ASSERT_FALSE(p->siblings_used, "no two queues on one core");
	ASSERT_FALSE(p->cpu0_used, "CPU 0 avoided");
	free(p);

	p = plan("ht-isolated", "enp1s0f0", 6, NULL);
	if (!p)
		return;
	ASSERT_EQ(p->q[4].cpu, 6, "then isolated siblings");
	ASSERT_EQ(p->q[5].cpu, 7, "then isolated siblings");
	ASSERT_TRUE(p->siblings_used, "siblings used");
	ASSERT_TRUE(has_note(p, "hyperthread siblings used"), "and said so");
	free(p);
}

TEST(placement_virtual_device_no_node)
{
	struct xnf_plan *p = plan("veth-vm", "veth0", 0, NULL);

	if (!p)
		return;
	ASSERT_EQ(p->nic.node, -1, "no numa_node file");
	ASSERT_EQ(p->node, -1, "planned without a node");
	ASSERT_SET(&p->node_cpus, "0-1", "all online CPUs");
	ASSERT_EQ(p->nic.nirqs, 0, "no IRQs");
	ASSERT_TRUE(p->use_napi_threads, "threaded NAPI instead");
	ASSERT_EQ(p->nqueues, 2, "a veth keeps its queues");
	ASSERT_FALSE(p->set_channels, "channels unchanged");
	ASSERT_EQ(p->q[0].cpu, 1, "CPU 1 first");
	ASSERT_EQ(p->q[1].cpu, 0, "CPU 0 when needed");
	ASSERT_EQ(p->q[0].irq, -1, "no IRQ");
	ASSERT_TRUE(p->cpu0_used, "CPU 0 used");
	ASSERT_TRUE(has_note(p, "virtual device"), "why: virtual");
	ASSERT_TRUE(has_note(p, "threaded NAPI"), "how: threaded NAPI");
	free(p);

	p = plan("veth-vm", "vnet0", 0, NULL);
	if (!p)
		return;
	ASSERT_EQ(p->nic.node, -1, "numa_node -1");
	ASSERT_TRUE(p->nic.has_device, "a bus device");
	ASSERT_EQ(p->nqueues, 1, "one free core, CPU 0 avoided");
	ASSERT_EQ(p->q[0].cpu, 1, "CPU 1");
	free(p);
}

/* ---- drift, apply, restore ---- */

TEST(placement_drift_against_fixture)
{
	struct xnf_place_state *st = calloc(1, sizeof(*st));
	struct xnf_plan *p = plan("two-socket", "ens1f0", 0, NULL);
	struct xnf_drift d[16];
	int n, i;

	if (!p || !ASSERT_TRUE(st != NULL, "alloc"))
		goto out;
	/* As if applied: IRQ 161 is on CPU 8 as planned; irqbalance moved
	 * 162 to CPU 3; the other six still allow 0-31. */
	xnf_place_state_init(p, st);
	n = xnf_place_drift(machine("two-socket"), "ens1f0", st, d, 16);
	ASSERT_EQ(n, 7, "queues 1-7 drifted");
	if (n < 1)
		goto out;
	for (i = 0; i < n; i++)
		ASSERT_EQ(d[i].kind, XNF_DRIFT_IRQ, "IRQ drift");
	ASSERT_EQ(d[0].queue, 1, "first: queue 1");
	ASSERT_EQ(d[0].irq, 162, "IRQ 162");
	ASSERT_EQ(d[0].want, 9, "planned CPU 9");
	ASSERT_SET(&d[0].now, "3", "moved to CPU 3");
	ASSERT_SET(&d[1].now, "0-31", "queue 2 anywhere");
out:
	free(p);
	free(st);
}

/* A private copy of a fixture tree; "" after a failed assertion. */
static void copy_fixture(const char *m, char *dir, size_t len)
{
	char cmd[PATH_MAX * 2 + 32];

	snprintf(dir, len, "/tmp/xnf-fixture.XXXXXX");
	if (!ASSERT_TRUE(mkdtemp(dir) != NULL, "mkdtemp")) {
		*dir = '\0';
		return;
	}
	snprintf(cmd, sizeof(cmd), "cp -a '%s/.' '%s/'", machine(m), dir);
	if (!ASSERT_EQ(fx_sh("%s", cmd), 0, "copy the fixture"))
		*dir = '\0';
}

static void remove_copy(const char *dir)
{
	if (*dir && !strncmp(dir, "/tmp/xnf-fixture.", 17))
		fx_sh("rm -rf '%s'", dir);
}

static bool file_is(const char *dir, const char *rel, const char *want)
{
	char path[PATH_MAX], buf[4096] = "";
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s%s", dir, rel);
	f = fopen(path, "r");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	if (!xnf_test_check(strstr(buf, want) != NULL, __FILE__, __LINE__, rel,
			    "'%s' does not contain '%s'", buf, want))
		return false;
	return true;
}

static void write_file(const char *dir, const char *rel, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", dir, rel);
	f = fopen(path, "w");
	if (ASSERT_TRUE(f != NULL, path)) {
		fputs(text, f);
		fclose(f);
	}
}

TEST(placement_apply_restore_irqs)
{
	struct xnf_place_state *st = calloc(1, sizeof(*st));
	char dir[PATH_MAX], err[XNF_PLACE_ERR_LEN] = "", rel[64], want[16];
	struct xnf_plan *p = NULL;
	struct xnf_drift d[16];
	int i;

	copy_fixture("two-socket", dir, sizeof(dir));
	if (!*dir || !ASSERT_TRUE(st != NULL, "alloc"))
		goto out;
	p = plan_at(dir, "ens1f0", 0, NULL);
	if (!p)
		goto out;
	if (!ASSERT_OK(xnf_place_apply_channels(p, true, st, err, sizeof(err)),
		       err) ||
	    !ASSERT_OK(xnf_place_apply_cpus(p, st), "apply CPUs"))
		goto out;
	ASSERT_TRUE(file_is(dir, "/ethtool/ens1f0/channels", "combined 8 "),
		    "8 combined channels set");
	ASSERT_TRUE(st->info.flags & XNF_PLACE_CHANNELS, "channels recorded");
	ASSERT_EQ(st->info.prev_combined, 16, "old count recorded");
	for (i = 0; i < 8; i++) {
		snprintf(rel, sizeof(rel), "/proc/irq/%d/smp_affinity_list",
			 161 + i);
		snprintf(want, sizeof(want), "%d\n", 8 + i);
		ASSERT_TRUE(file_is(dir, rel, want), "IRQ affinity set");
		ASSERT_TRUE(st->q[i].flags & XNF_PLACE_Q_IRQ, "IRQ recorded");
	}
	ASSERT_TRUE(file_is(dir, "/proc/irq/169/smp_affinity_list", "0-31"),
		    "IRQs of queues beyond the plan untouched");
	ASSERT_EQ(xnf_place_drift(dir, "ens1f0", st, d, 16), 0, "no drift");

	/* irqbalance moves queue 2's IRQ; someone changes the channels. */
	write_file(dir, "/proc/irq/163/smp_affinity_list", "0-31\n");
	ASSERT_EQ(xnf_place_drift(dir, "ens1f0", st, d, 16), 1, "one drift");
	ASSERT_EQ(d[0].kind, XNF_DRIFT_IRQ, "IRQ drift");
	ASSERT_EQ(d[0].queue, 2, "queue 2");
	write_file(dir, "/ethtool/ens1f0/channels",
		   "combined 4 max_combined 32 other 1 max_other 1\n");
	ASSERT_EQ(xnf_place_drift(dir, "ens1f0", st, d, 16), 2, "two drifts");
	ASSERT_EQ(d[0].kind, XNF_DRIFT_CHANNELS, "channel drift");
	ASSERT_EQ(d[0].now_count, 4, "4 queues now");

	ASSERT_OK(xnf_place_restore_napi(dir, "ens1f0", st), "restore napi");
	ASSERT_OK(xnf_place_restore_host(dir, "ens1f0", st), "restore host");
	ASSERT_TRUE(file_is(dir, "/ethtool/ens1f0/channels", "combined 16 "),
		    "16 channels again");
	ASSERT_TRUE(file_is(dir, "/proc/irq/161/smp_affinity_list", "8\n"),
		    "IRQ 161 back to 8");
	ASSERT_TRUE(file_is(dir, "/proc/irq/162/smp_affinity_list", "3\n"),
		    "IRQ 162 back to 3");
	ASSERT_TRUE(file_is(dir, "/proc/irq/168/smp_affinity_list", "0-31\n"),
		    "IRQ 168 back to 0-31");
out:
	remove_copy(dir);
	free(p);
	free(st);
}

TEST(placement_apply_restore_napi_threads)
{
	struct xnf_place_state *st = calloc(1, sizeof(*st));
	char dir[PATH_MAX], err[XNF_PLACE_ERR_LEN] = "";
	struct xnf_plan *p = NULL;
	struct xnf_drift d[16];
	int n;

	copy_fixture("veth-vm", dir, sizeof(dir));
	if (!*dir || !ASSERT_TRUE(st != NULL, "alloc"))
		goto out;
	p = plan_at(dir, "veth0", 0, NULL);
	if (!p)
		goto out;
	/* The napi threads the kernel makes once threaded NAPI is on (ids in
	 * queue order; pids in any order). */
	fx_sh("mkdir -p '%s/proc/4102' '%s/proc/4101' '%s/proc/4200'", dir, dir,
	      dir);
	write_file(dir, "/proc/4102/comm", "napi/veth0-8193\n");
	write_file(dir, "/proc/4102/status",
		   "Name:\tnapi/veth0-8193\n"
		   "Cpus_allowed:\t3\nCpus_allowed_list:\t0-1\nvoluntary_ctxt_switches:\t5\n");
	write_file(dir, "/proc/4101/comm", "napi/veth0-8194\n");
	write_file(dir, "/proc/4101/status",
		   "Name:\tnapi/veth0-8194\n"
		   "Cpus_allowed_list:\t0-1\n");
	write_file(dir, "/proc/4200/comm", "napi/veth01-8195\n");
	write_file(dir, "/proc/4200/status", "Cpus_allowed_list:\t0-1\n");

	if (!ASSERT_OK(xnf_place_apply_channels(p, false, st, err, sizeof(err)),
		       err) ||
	    !ASSERT_OK(xnf_place_apply_cpus(p, st), "apply CPUs"))
		goto out;
	ASSERT_TRUE(file_is(dir, "/sys/class/net/veth0/threaded", "1"),
		    "threaded NAPI turned on");
	ASSERT_TRUE(st->info.flags & XNF_PLACE_THREADED, "recorded");
	ASSERT_FALSE(st->info.flags & XNF_PLACE_CHANNELS, "channels untouched");
	ASSERT_TRUE(file_is(dir, "/proc/4102/status", "Cpus_allowed_list:\t1\n"),
		    "queue 0's thread (napi 8193) on CPU 1");
	ASSERT_TRUE(file_is(dir, "/proc/4102/status", "voluntary_ctxt_switches"),
		    "rest of status kept");
	ASSERT_TRUE(file_is(dir, "/proc/4101/status", "Cpus_allowed_list:\t0\n"),
		    "queue 1's thread (napi 8194) on CPU 0");
	ASSERT_TRUE(file_is(dir, "/proc/4200/status", "Cpus_allowed_list:\t0-1"),
		    "another device's thread untouched");
	ASSERT_EQ(st->q[0].napi_id, 8193, "napi id recorded");
	ASSERT_EQ(xnf_place_drift(dir, "veth0", st, d, 16), 0, "no drift");

	write_file(dir, "/proc/4101/status", "Cpus_allowed_list:\t0-1\n");
	n = xnf_place_drift(dir, "veth0", st, d, 16);
	ASSERT_EQ(n, 1, "napi thread moved");
	if (n == 1) {
		ASSERT_EQ(d[0].kind, XNF_DRIFT_NAPI, "napi drift");
		ASSERT_EQ(d[0].queue, 1, "queue 1");
		ASSERT_SET(&d[0].now, "0-1", "now anywhere");
	}

	ASSERT_OK(xnf_place_restore_napi(dir, "veth0", st), "restore napi");
	ASSERT_OK(xnf_place_restore_host(dir, "veth0", st), "restore host");
	ASSERT_TRUE(file_is(dir, "/sys/class/net/veth0/threaded", "0"),
		    "threaded NAPI off again");
out:
	remove_copy(dir);
	free(p);
	free(st);
}

TEST(placement_refused_channels)
{
	struct xnf_place_state *st = calloc(1, sizeof(*st));
	char dir[PATH_MAX], err[XNF_PLACE_ERR_LEN] = "";
	struct xnf_plan *p = NULL;

	copy_fixture("veth-vm", dir, sizeof(dir));
	if (!*dir || !ASSERT_TRUE(st != NULL, "alloc"))
		goto out;
	/* A device whose channel count is fixed at 2 (max 2), asked for 1
	 * combined when it only has rx/tx: make its file refuse. */
	write_file(dir, "/ethtool/vnet0/channels", "combined 2 max_combined 2\n");
	p = plan_at(dir, "vnet0", 1, NULL);
	if (!p)
		goto out;
	fx_sh("chmod a-w '%s/ethtool/vnet0/channels'", dir);
	if (geteuid() == 0) {
		/* root ignores the mode: take the file away instead. */
		fx_sh("rm -f '%s/ethtool/vnet0/channels' && mkdir '%s/ethtool/vnet0/channels'",
		      dir, dir);
	}
	ASSERT_ERR(xnf_place_apply_channels(p, true, st, err, sizeof(err)),
		   "asked explicitly: refused is an error");
	ASSERT_TRUE(strstr(err, "refused 1") != NULL, err);
	ASSERT_OK(xnf_place_apply_channels(p, false, st, err, sizeof(err)),
		  "cores auto: refused is a warning");
	ASSERT_FALSE(st->info.flags & XNF_PLACE_CHANNELS, "nothing to restore");
	ASSERT_EQ(st->info.nqueues, 1, "the placement covers what was planned");
out:
	remove_copy(dir);
	free(p);
	free(st);
}

/* The record in bpffs and the workers' view of it (needs the unit tests'
 * private namespace and bpffs). */
TEST(placement_record)
{
	struct xnf_place_state *st = calloc(1, sizeof(*st));
	struct xnf_place_state *back = calloc(1, sizeof(*back));
	struct xnf_plan *p = plan("two-socket", "ens1f0", 0, NULL);
	const char *dir = FX_ROOT "-place/dev/ens1f0";
	struct fx f;
	int cpu = -1, node = -2;

	if (!p || !st || !back || !fx_open(&f))
		goto out;
	fx_close(&f);
	fx_sh("mkdir -p %s", dir);
	xnf_place_state_init(p, st);
	st->q[3].prev_irq[0] = 0xff;
	if (!ASSERT_OK(xnf_place_save(dir, st), "save"))
		goto out_rm;
	ASSERT_OK(xnf_place_load(dir, back), "load");
	ASSERT_MEM(&back->info, &st->info, sizeof(st->info), "info");
	ASSERT_MEM(back->q, st->q, 8 * sizeof(st->q[0]), "queues");
	ASSERT_OK(xnf_place_worker(FX_ROOT "-place", "ens1f0", 2, &cpu, &node),
		  "worker of queue 2");
	ASSERT_EQ(cpu, 26, "worker CPU");
	ASSERT_EQ(node, 1, "UMEM node");
	ASSERT_EQ(xnf_place_worker(FX_ROOT "-place", "ens1f0", 8, &cpu, &node),
		  -ERANGE, "queue not placed");
	ASSERT_EQ(xnf_place_worker(FX_ROOT "-place", "nosuch", 0, &cpu, &node),
		  -ENOENT, "device without placement");
	ASSERT_EQ(fx_sh("bpftool -j map dump pinned %s/xnf_place | grep -q prev_threaded",
			dir),
		  0, "bpftool prints named fields (BTF)");
out_rm:
	fx_sh("rm -rf %s", FX_ROOT "-place");
out:
	free(p);
	free(st);
	free(back);
}

/* ---- AF_XDP workers: core and UMEM node ---- */

/* Without a recorded placement (no pins), a worker plans from the device:
 * on the two-socket machine its core is the sibling of its queue's XDP
 * core and its UMEM goes to node 1, the NIC's. */
TEST(placement_worker_from_plan)
{
	int cpu = -1, node = -2, q;
	char err[256] = "";

	for (q = 0; q < 8; q++) {
		if (!ASSERT_EQ(xnf_worker_place("/nonexistent-xnf-pins",
						machine("two-socket"), "ens1f0",
						q, -1, &cpu, &node, NULL, 0),
			       0, "place"))
			return;
		ASSERT_EQ(cpu, 24 + q, "worker on the sibling of the XDP core");
		ASSERT_EQ(node, 1, "UMEM on the NIC's node");
	}
	/* More queues than planned: spread over the planned cores. */
	ASSERT_EQ(xnf_worker_place("/nonexistent-xnf-pins", machine("two-socket"),
				   "ens1f0", 9, -1, &cpu, &node, NULL, 0),
		  0, "place q9");
	ASSERT_EQ(cpu, 25, "queue 9 shares queue 1's worker core");
	/* An explicit core wins; the node is still the NIC's. */
	ASSERT_EQ(xnf_worker_place("/nonexistent-xnf-pins", machine("two-socket"),
				   "ens1f0", 0, 3, &cpu, &node, NULL, 0),
		  0, "place core");
	ASSERT_EQ(cpu, 3, "the core asked for");
	ASSERT_EQ(node, 1, "UMEM still on the NIC's node");
	/* A virtual device has no node: UMEM anywhere. */
	ASSERT_EQ(xnf_worker_place("/nonexistent-xnf-pins", machine("veth-vm"),
				   "veth0", 0, -1, &cpu, &node, NULL, 0),
		  0, "place veth");
	ASSERT_EQ(node, -1, "no node");
	ASSERT_ERR(xnf_worker_place("/nonexistent-xnf-pins",
				    machine("two-socket"), "nosuch0", 0, -1,
				    &cpu, &node, err, sizeof(err)),
		   "missing device");
	ASSERT_NEQ(err[0], '\0', "the refusal says why");
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The route sync as a library loop (lib/rtsync.c) in the test namespace:
 * `ip route` and `ip neigh` changes reach xnf's tables; a route through a
 * device without XDP transmit passes to the kernel; a stop keeps the
 * routes and the registration's table; flush removes both. And the names
 * of tables and protocols, both ways. An address removed or a device
 * down flushes the connections masqueraded through it. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <arpa/inet.h>

#include <bpf/bpf.h>

#include "ct.h"
#include "ct_priv.h"
#include "fixture.h"
#include "rtsync.h"

TEST(rtsync_names)
{
	__u32 t = 0;
	__u8 p = 0;

	ASSERT_OK(xnf_rt_table_parse("main", &t), "main");
	ASSERT_EQ(t, 254, "main");
	ASSERT_OK(xnf_rt_table_parse("local", &t), "local");
	ASSERT_EQ(t, 255, "local");
	ASSERT_OK(xnf_rt_table_parse("100", &t), "a number");
	ASSERT_EQ(t, 100, "a number");
	ASSERT_EQ(xnf_rt_table_parse("0", &t), -EINVAL, "0 is no table");
	ASSERT_EQ(xnf_rt_table_parse("unspec", &t), -EINVAL, "nor by name");
	ASSERT_EQ(xnf_rt_table_parse("-1", &t), -EINVAL, "negative");
	ASSERT_EQ(xnf_rt_table_parse("no-such-table", &t), -EINVAL, "unknown");
	ASSERT_OK(xnf_rt_proto_parse("bgp", &p), "bgp");
	ASSERT_EQ(p, 186, "bgp");
	ASSERT_OK(xnf_rt_proto_parse("static", &p), "static");
	ASSERT_EQ(p, 4, "static");
	ASSERT_OK(xnf_rt_proto_parse("255", &p), "a number");
	ASSERT_EQ(p, 255, "a number");
	ASSERT_EQ(xnf_rt_proto_parse("256", &p), -EINVAL, "too large");
	ASSERT_EQ(xnf_rt_proto_parse("no-such-proto", &p), -EINVAL, "unknown");
}

static bool table_named(__u32 table, const char *want, const char *what)
{
	char buf[64];

	xnf_rt_table_name(table, buf, sizeof(buf));
	return xnf_test_check(!strcmp(buf, want), __FILE__, __LINE__, what,
			      "table %u named '%s', not '%s'", table, buf, want);
}

/* Table names as ip(8) prints them, from an rt_tables of the test's own
 * (a tmpfs on /etc/iproute2, in the test's mount namespace): its names (a
 * later line naming a number anew wins), else main, local and default,
 * else the number. */
TEST(rtsync_table_names)
{
	FILE *f;
	__u32 t = 0;

	if (mount("tmpfs", "/etc/iproute2", "tmpfs", 0, "mode=0755"))
		SKIP("cannot mount a tmpfs on /etc/iproute2: %s",
		     strerror(errno));
	table_named(254, "main", "main without rt_tables");
	table_named(255, "local", "local without rt_tables");
	table_named(253, "default", "default without rt_tables");
	table_named(100, "100", "a table without a name");
	f = fopen("/etc/iproute2/rt_tables", "w");
	if (ASSERT_TRUE(f, "write rt_tables")) {
		fputs("# reserved values\n255\tlocal\n254\tmain\n"
		      "100 isp1\n200 old\n200\tnew\n # 7 comment\n",
		      f);
		fclose(f);
		table_named(100, "isp1", "a name of rt_tables");
		table_named(200, "new", "the last line for a number");
		table_named(254, "main", "main");
		table_named(7, "7", "a commented line");
		ASSERT_OK(xnf_rt_table_parse("isp1", &t), "the name read back");
		ASSERT_EQ(t, 100, "the name read back");
	}
	umount("/etc/iproute2");
}

struct sync_run {
	struct xnf_dp *dp;
	struct xnf_rtsync_opts o;
	volatile sig_atomic_t stop;
	atomic_int started;
	atomic_int neigh;	       /* NEIGH events */
	struct xnf_rtsync_event first; /* the STARTED event */
	int ret;
	char err[256];
};

static void on_event(const struct xnf_rtsync_event *ev, void *ctx)
{
	struct sync_run *r = ctx;

	if (ev->type == XNF_RTSYNC_STARTED) {
		r->first = *ev;
		atomic_store(&r->started, 1);
	}
	if (ev->type == XNF_RTSYNC_NEIGH)
		atomic_fetch_add(&r->neigh, 1);
}

static void *sync_thread(void *arg)
{
	struct sync_run *r = arg;

	r->ret = xnf_rtsync_run(r->dp, &r->o, on_event, r, &r->stop, r->err,
				sizeof(r->err));
	atomic_store(&r->started, 1); /* a refusal ends the wait too */
	return NULL;
}

/* The route packets to @dst take, as l3fwd looks it up; false when there
 * is none. */
static bool lookup(struct fx *f, const char *dst, struct xnf_route_entry *e)
{
	int family = strchr(dst, ':') ? XNF_AF_INET6 : XNF_AF_INET;
	__u8 addr[16];

	inet_pton(family == XNF_AF_INET ? AF_INET : AF_INET6, dst, addr);
	return !xnf_route_lookup(f->dp, family, addr, e);
}

/* Waits (at most 20 s) until the route of @dst has @type and, for a
 * unicast route, the next hop @mac (NULL: any) in state @state. */
static bool wait_route(struct fx *f, const char *dst, __u32 type,
		       const char *mac, __u32 state)
{
	struct xnf_route_entry e;
	__u8 want[6] = {};
	int i;

	if (mac)
		sscanf(mac, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &want[0], &want[1],
		       &want[2], &want[3], &want[4], &want[5]);
	for (i = 0; i < 400; i++) {
		if (lookup(f, dst, &e) && e.rt.type == type &&
		    (type != XNF_RT_UNICAST ||
		     ((!mac || !memcmp(e.rt.dmac, want, 6)) &&
		      e.rt.state == state)))
			return true;
		usleep(50 * 1000);
	}
	return false;
}

static bool wait_gone(struct fx *f, const char *dst)
{
	struct xnf_route_entry e;
	int i;

	for (i = 0; i < 400; i++) {
		if (!lookup(f, dst, &e))
			return true;
		usleep(50 * 1000);
	}
	return false;
}

/* ut1 up with addresses, its gateways 198.18.1.2 and .3 (2001:db8:18::2
 * and ::3) known to the kernel, and GRO on its peer: that gives a veth
 * XDP transmit (NAPI on the far side), without which the sync leaves
 * routes through ut1 to the kernel. */
static bool ut1_gateways(void)
{
	return ASSERT_OK(fx_sh("ip link set ut1 up && ip link set ut1p up && "
			       "ethtool -K ut1p gro on >/dev/null && "
			       "ip addr add 198.18.1.1/24 dev ut1 && "
			       "ip addr add 2001:db8:18::1/64 dev ut1 nodad && "
			       "ip neigh replace 198.18.1.2 lladdr "
			       "02:00:00:00:aa:02 dev ut1 nud permanent && "
			       "ip neigh replace 198.18.1.3 lladdr "
			       "02:00:00:00:aa:03 dev ut1 nud permanent && "
			       "ip neigh replace 2001:db8:18::2 lladdr "
			       "02:00:00:00:aa:02 dev ut1 nud permanent && "
			       "ip neigh replace 2001:db8:18::3 lladdr "
			       "02:00:00:00:aa:03 dev ut1 nud permanent"),
			 "addresses and neighbours on ut1");
}

/* What the tests leave in the kernel, removed. */
static void ut1_clean(void)
{
	fx_sh("ip route flush root 203.0.113.0/24; ip -6 route flush root "
	      "2001:db8:99::/48; ip nexthop flush >/dev/null; "
	      "ip addr flush dev ut1; ip neigh flush dev ut1; "
	      "ethtool -K ut1p gro off >/dev/null");
}

TEST(rtsync_loop)
{
	struct sync_run r = {};
	struct xnf_rtsync_info info;
	struct xnf_route_entry e;
	pthread_t th;
	struct fx f;
	__u32 n = 0;
	int i;

	if (!fx_open(&f))
		return;
	if (!ut1_gateways())
		goto out;
	r.dp = f.dp;
	if (!ASSERT_OK(pthread_create(&th, NULL, sync_thread, &r), "thread"))
		goto out;
	for (i = 0; i < 400 && !atomic_load(&r.started); i++)
		usleep(50 * 1000);
	if (!ASSERT_OK(r.ret, r.err))
		goto stop;

	SUBTEST("ip route add, replace, del") {
		fx_sh("ip route add 203.0.113.0/24 via 198.18.1.2");
		ASSERT_TRUE(wait_route(&f, "203.0.113.9", XNF_RT_UNICAST,
				       "02:00:00:00:aa:02", XNF_NH_VALID),
			    "via the gateway, its MAC");
		ASSERT_TRUE(lookup(&f, "203.0.113.9", &e) &&
				    e.rt.origin == XNF_ORIGIN_SYNC,
			    "origin sync");
		fx_sh("ip route replace 203.0.113.0/24 via 198.18.1.4");
		ASSERT_TRUE(wait_route(&f, "203.0.113.9", XNF_RT_UNICAST, NULL,
				       XNF_NH_KERNEL),
			    "a gateway without a neighbour: state kernel");
		fx_sh("ip route del 203.0.113.0/24");
		ASSERT_TRUE(wait_gone(&f, "203.0.113.9"), "deleted");
	}
	SUBTEST("connected, blackhole, own address") {
		ASSERT_TRUE(wait_route(&f, "198.18.1.77", XNF_RT_KERNEL, NULL, 0),
			    "the connected subnet passes to the kernel");
		ASSERT_TRUE(wait_route(&f, "198.18.1.1", XNF_RT_LOCAL, NULL, 0),
			    "own address");
		fx_sh("ip route add blackhole 203.0.113.64/26");
		ASSERT_TRUE(wait_route(&f, "203.0.113.70", XNF_RT_BLACKHOLE,
				       NULL, 0),
			    "blackhole");
		fx_sh("ip route del blackhole 203.0.113.64/26");
		ASSERT_TRUE(wait_gone(&f, "203.0.113.70"), "deleted");
	}
	SUBTEST("a device without XDP transmit") {
		/* ut2's peer has neither GRO nor an XDP program. */
		fx_sh("ip link set ut2 up && ip link set ut2p up && "
		      "ip addr add 198.18.2.1/24 dev ut2 && "
		      "ip neigh replace 198.18.2.2 lladdr 02:00:00:00:aa:22 "
		      "dev ut2 nud permanent && "
		      "ip route add 203.0.113.32/27 via 198.18.2.2");
		ASSERT_TRUE(wait_route(&f, "203.0.113.33", XNF_RT_KERNEL, NULL, 0),
			    "passes to the kernel");
		fx_sh("ip route del 203.0.113.32/27; ip addr flush dev ut2; "
		      "ip neigh flush dev ut2");
	}
	SUBTEST("IPv6 multipath, one next hop deleted") {
		fx_sh("ip -6 route add 2001:db8:99::/48 nexthop via "
		      "2001:db8:18::2 nexthop via 2001:db8:18::3");
		ASSERT_TRUE(wait_route(&f, "2001:db8:99::1", XNF_RT_MULTIPATH,
				       NULL, 0),
			    "multipath");
		fx_sh("ip -6 route del 2001:db8:99::/48 via 2001:db8:18::2");
		ASSERT_TRUE(wait_route(&f, "2001:db8:99::1", XNF_RT_UNICAST,
				       "02:00:00:00:aa:03", XNF_NH_VALID),
			    "the other next hop stays");
		fx_sh("ip -6 route del 2001:db8:99::/48");
	}
	SUBTEST("a neighbour's new MAC") {
		fx_sh("ip route add 203.0.113.128/25 via 198.18.1.2");
		ASSERT_TRUE(wait_route(&f, "203.0.113.130", XNF_RT_UNICAST,
				       "02:00:00:00:aa:02", XNF_NH_VALID),
			    "synced");
		fx_sh("ip neigh replace 198.18.1.2 lladdr 02:00:00:00:bb:02 "
		      "dev ut1 nud permanent");
		ASSERT_TRUE(wait_route(&f, "203.0.113.130", XNF_RT_UNICAST,
				       "02:00:00:00:bb:02", XNF_NH_VALID),
			    "the next hop follows");
		ASSERT_GE(atomic_load(&r.neigh), 1, "a neigh event");
	}
	SUBTEST("a port's new MAC") {
		static const __u8 mac[6] = { 0x02, 0, 0, 0, 0xcc, 0x01 };
		int j;

		fx_sh("ip link set ut1 address 02:00:00:00:cc:01");
		for (j = 0; j < 400; j++) {
			if (lookup(&f, "203.0.113.130", &e) &&
			    !memcmp(e.rt.smac, mac, 6))
				break;
			usleep(50 * 1000);
		}
		ASSERT_LT(j, 400, "the next hop's source MAC follows");
		fx_sh("ip link set ut1 address %02x:%02x:%02x:%02x:%02x:%02x",
		      f.mac[1][0], f.mac[1][1], f.mac[1][2], f.mac[1][3],
		      f.mac[1][4], f.mac[1][5]);
	}
stop:
	r.stop = 1;
	pthread_join(th, NULL);
	ASSERT_OK(r.ret, r.err);
	ASSERT_OK(xnf_rtsync_get(f.dp, &info), "registration");
	ASSERT_EQ(info.table, 254, "the table stays claimed");
	ASSERT_EQ(info.pid, 0, "by no process");
	ASSERT_TRUE(lookup(&f, "203.0.113.130", &e), "the routes stay");
	ASSERT_OK(xnf_rtsync_flush(f.dp, &n, r.err, sizeof(r.err)), r.err);
	ASSERT_GE(n, 1, "routes removed");
	ASSERT_FALSE(lookup(&f, "203.0.113.130", &e), "gone");
	ASSERT_OK(xnf_rtsync_get(f.dp, &info), "registration");
	ASSERT_EQ(info.table, 0, "released");
out:
	ut1_clean();
	fx_close(&f);
}

/* Starts the sync of @r in @th: false when there is no thread to join;
 * then r->ret says whether it was refused. */
static bool sync_start(struct sync_run *r, pthread_t *th)
{
	int i;

	if (!ASSERT_OK(pthread_create(th, NULL, sync_thread, r), "thread"))
		return false;
	for (i = 0; i < 400 && !atomic_load(&r->started); i++)
		usleep(50 * 1000);
	ASSERT_TRUE(atomic_load(&r->started), "the sync started");
	return true;
}

/* @pid has exited and waits to be reaped. */
static bool is_zombie(pid_t pid)
{
	char path[64], line[256], *p;
	bool z = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (fgets(line, sizeof(line), f) && (p = strrchr(line, ')')))
		z = p[1] == ' ' && p[2] == 'Z';
	fclose(f);
	return z;
}

/*
 * A restart converges to the kernel's table, removals included: a route
 * the kernel deleted while no sync ran is deleted at the start and
 * counted in the STARTED event. Whether a sync runs is its lock, not the
 * pid a dead one left registered: a zombie's pid (kill(pid, 0) succeeds)
 * does not stop a restart, and a running sync refuses a second one and a
 * flush (issue 33). A reader sees the same without the lock
 * (xnf_rtsync_status(), the exporter's xnf_route_sync_running): running
 * while the sync holds it, not once it stopped, whatever pid is
 * registered; the sync's last change is its first batch or later.
 */
TEST(rtsync_restart)
{
	struct sync_run r = {}, r2 = {};
	struct xnf_rtsync_status st;
	struct xnf_rtsync_info info;
	struct xnf_route_entry e;
	pthread_t th;
	pid_t zombie = -1;
	struct fx f;
	__u32 n = 0;
	int i;

	if (!fx_open(&f))
		return;
	if (!ut1_gateways() ||
	    !ASSERT_OK(fx_sh("ip route add 203.0.113.96/29 via 198.18.1.2"),
		       "a route via ut1"))
		goto out;
	r.dp = f.dp;
	if (!sync_start(&r, &th))
		goto out;
	if (!ASSERT_OK(r.ret, r.err))
		goto join;
	ASSERT_TRUE(wait_route(&f, "203.0.113.97", XNF_RT_UNICAST,
			       "02:00:00:00:aa:02", XNF_NH_VALID),
		    "mirrored");
	ASSERT_OK(xnf_rtsync_status(f.dp, &st), "status while it runs");
	ASSERT_TRUE(st.running && st.info.table == 254, "seen running");
	ASSERT_TRUE(st.info.since && st.last_change >= st.info.since,
		    "its first batch is its last change");
	r.stop = 1;
	pthread_join(th, NULL);
	ASSERT_OK(r.ret, r.err);
	ASSERT_OK(xnf_rtsync_status(f.dp, &st), "status once stopped");
	ASSERT_TRUE(!st.running && st.info.table == 254 && !st.info.pid,
		    "stopped: the table still claimed, not running");

	/* Down: the kernel deletes the route; the registration names a
	 * process that is gone but not reaped. */
	fx_sh("ip route del 203.0.113.96/29");
	ASSERT_TRUE(lookup(&f, "203.0.113.97", &e), "stays while none runs");
	zombie = fork();
	if (!zombie)
		_exit(0);
	for (i = 0; i < 400 && zombie > 0 && !is_zombie(zombie); i++)
		usleep(10 * 1000);
	if (!ASSERT_TRUE(zombie > 0 && is_zombie(zombie), "a zombie"))
		goto out;
	ASSERT_OK(xnf_rtsync_get(f.dp, &info), "registration");
	info.pid = zombie;
	ASSERT_OK(xnf_rtsync_set(f.dp, &info), "a dead sync's pid");
	ASSERT_OK(xnf_rtsync_status(f.dp, &st), "status with a zombie's pid");
	ASSERT_TRUE(!st.running && st.info.pid == (__u32)zombie,
		    "a registered pid is not a running sync");

	memset(&r, 0, sizeof(r));
	r.dp = f.dp;
	if (!sync_start(&r, &th))
		goto out;
	if (!ASSERT_OK(r.ret, r.err))
		goto join;
	ASSERT_FALSE(lookup(&f, "203.0.113.97", &e), "deleted at the start");
	ASSERT_EQ(r.first.deleted, 1, "counted in the STARTED event");
	ASSERT_EQ(r.first.added + r.first.replaced, 0, "nothing else");

	/* While it runs: a second sync and a flush are refused. */
	r2.dp = f.dp;
	r2.stop = 1;
	ASSERT_EQ(xnf_rtsync_run(f.dp, &r2.o, NULL, NULL, &r2.stop, r2.err,
				 sizeof(r2.err)),
		  -EBUSY, "a second sync");
	ASSERT_EQ(xnf_rtsync_flush(f.dp, &n, r2.err, sizeof(r2.err)), -EBUSY,
		  "a flush");
join:
	r.stop = 1;
	pthread_join(th, NULL);
	ASSERT_OK(r.ret, r.err);
	ASSERT_OK(xnf_rtsync_flush(f.dp, &n, r.err, sizeof(r.err)), r.err);
out:
	if (zombie > 0)
		waitpid(zombie, NULL, 0);
	ut1_clean();
	fx_close(&f);
}

/* Waits (at most 20 s) until the route of @dst has @type, reason @why
 * and MTU @mtu. */
static bool wait_attrs(struct fx *f, const char *dst, __u32 type, __u32 why,
		       __u32 mtu)
{
	struct xnf_route_entry e;
	int i;

	for (i = 0; i < 400; i++) {
		if (lookup(f, dst, &e) && e.rt.type == type &&
		    e.rt.why == why && e.rt.mtu == mtu)
			return true;
		usleep(50 * 1000);
	}
	return false;
}

/* The MTU of every next hop of the multipath route of @dst, or 0 when
 * they differ or it is not one. */
static __u32 group_mtu(struct fx *f, const char *dst)
{
	struct xnf_route_entry e;
	struct xnf_nhgroup g;
	struct xnf_nexthop nh;
	__u32 i, mtu = 0;

	if (!lookup(f, dst, &e) || e.rt.type != XNF_RT_MULTIPATH ||
	    xnf_nhg_lookup(f->dp, e.nh, &g))
		return 0;
	for (i = 0; i < g.n; i++) {
		if (xnf_nh_lookup(f->dp, g.nh[i], &nh) || (i && nh.mtu != mtu))
			return 0;
		mtu = nh.mtu;
	}
	return mtu;
}

/*
 * Route attributes that change forwarding (issue 33): the route's MTU is
 * mirrored into its next hops (a change of it alone too); an
 * encapsulation, a route by TOS or by source and unequal multipath
 * weights make the prefix pass to the kernel, with the reason in the
 * table; they go again when the attribute goes. A restart over all of it
 * writes nothing: what xnf holds reads back as what the kernel says.
 */
TEST(rtsync_attributes)
{
	struct sync_run r = {};
	pthread_t th;
	struct fx f;
	__u32 n = 0;

	if (!fx_open(&f))
		return;
	if (!ut1_gateways())
		goto out;
	r.dp = f.dp;
	if (!sync_start(&r, &th))
		goto out;
	if (!ASSERT_OK(r.ret, r.err))
		goto join;

	SUBTEST("a route's MTU") {
		fx_sh("ip route add 203.0.113.208/28 via 198.18.1.2 mtu 1400");
		ASSERT_TRUE(wait_attrs(&f, "203.0.113.209", XNF_RT_UNICAST, 0,
				       1400),
			    "unicast, MTU 1400");
		fx_sh("ip route change 203.0.113.208/28 via 198.18.1.2 mtu 1300");
		ASSERT_TRUE(wait_attrs(&f, "203.0.113.209", XNF_RT_UNICAST, 0,
				       1300),
			    "the MTU alone changed");
		fx_sh("ip route add 203.0.113.160/28 mtu 1400 nexthop via "
		      "198.18.1.2 nexthop via 198.18.1.3");
		ASSERT_TRUE(wait_attrs(&f, "203.0.113.161", XNF_RT_MULTIPATH, 0,
				       0),
			    "multipath");
		ASSERT_EQ(group_mtu(&f, "203.0.113.161"), 1400,
			  "every next hop with the route's MTU");
	}
	SUBTEST("an encapsulation") {
		fx_sh("ip route add 203.0.113.240/28 encap seg6 mode encap segs "
		      "2001:db8:18::2 via 198.18.1.2 dev ut1");
		ASSERT_TRUE(wait_attrs(&f, "203.0.113.241", XNF_RT_KERNEL,
				       XNF_WHY_ENCAP, 0),
			    "seg6: to the kernel");
		if (!fx_sh("ip nexthop add id 7701 encap seg6 mode encap segs "
			   "2001:db8:18::2 via 198.18.1.2 dev ut1 && "
			   "ip route add 203.0.113.224/28 nhid 7701"))
			ASSERT_TRUE(wait_attrs(&f, "203.0.113.225",
					       XNF_RT_KERNEL, XNF_WHY_ENCAP, 0),
				    "through a nexthop object with seg6");
	}
	SUBTEST("a route by TOS") {
		fx_sh("ip route add 203.0.113.192/28 via 198.18.1.2");
		ASSERT_TRUE(wait_attrs(&f, "203.0.113.193", XNF_RT_UNICAST, 0, 0),
			    "unicast");
		fx_sh("ip route add 203.0.113.192/28 tos 0x10 via 198.18.1.3");
		ASSERT_TRUE(wait_attrs(&f, "203.0.113.193", XNF_RT_KERNEL,
				       XNF_WHY_TOS, 0),
			    "to the kernel, which chooses by TOS");
		fx_sh("ip route del 203.0.113.192/28 tos 0x10");
		ASSERT_TRUE(wait_attrs(&f, "203.0.113.193", XNF_RT_UNICAST, 0, 0),
			    "unicast again");
	}
	SUBTEST("unequal weights") {
		fx_sh("ip route add 203.0.113.176/28 nexthop via 198.18.1.2 "
		      "weight 3 nexthop via 198.18.1.3 weight 1");
		ASSERT_TRUE(wait_attrs(&f, "203.0.113.177", XNF_RT_KERNEL,
				       XNF_WHY_WEIGHTS, 0),
			    "to the kernel");
		fx_sh("ip route replace 203.0.113.176/28 nexthop via 198.18.1.2 "
		      "weight 2 nexthop via 198.18.1.3 weight 2");
		ASSERT_TRUE(wait_attrs(&f, "203.0.113.177", XNF_RT_MULTIPATH, 0,
				       0),
			    "equal weights: multipath");
	}
	SUBTEST("a source-specific route") {
		fx_sh("ip -6 route add 2001:db8:99::/48 via 2001:db8:18::2");
		ASSERT_TRUE(wait_attrs(&f, "2001:db8:99::1", XNF_RT_UNICAST, 0, 0),
			    "unicast");
		fx_sh("ip -6 route add 2001:db8:99::/48 from 2001:db8:1::/48 "
		      "via 2001:db8:18::2");
		ASSERT_TRUE(wait_attrs(&f, "2001:db8:99::1", XNF_RT_KERNEL,
				       XNF_WHY_SOURCE, 0),
			    "to the kernel, which chooses by source");
		fx_sh("ip -6 route del 2001:db8:99::/48 from 2001:db8:1::/48");
		ASSERT_TRUE(wait_attrs(&f, "2001:db8:99::1", XNF_RT_UNICAST, 0, 0),
			    "the other route stays: unicast again");
	}
	SUBTEST("a restart writes nothing") {
		r.stop = 1;
		pthread_join(th, NULL);
		ASSERT_OK(r.ret, r.err);
		memset(&r, 0, sizeof(r));
		r.dp = f.dp;
		if (!sync_start(&r, &th))
			goto out;
		ASSERT_OK(r.ret, r.err);
		ASSERT_EQ(r.first.added + r.first.replaced + r.first.deleted, 0,
			  "the tables were right");
		ASSERT_GE(r.first.unchanged, 6, "the routes looked at");
	}
join:
	r.stop = 1;
	pthread_join(th, NULL);
	ASSERT_OK(r.ret, r.err);
	ASSERT_OK(xnf_rtsync_flush(f.dp, &n, r.err, sizeof(r.err)), r.err);
out:
	ut1_clean();
	fx_close(&f);
}

/* ---- masquerade and the router's addresses ---- */

static atomic_int ct_flushes; /* CT_FLUSH events without an error */

static void on_ct_event(const struct xnf_rtsync_event *ev, void *ctx)
{
	if (ev->type == XNF_RTSYNC_CT_FLUSH && !ev->reason)
		atomic_fetch_add(&ct_flushes, 1);
	on_event(ev, ctx);
}

static void *ct_sync_thread(void *arg)
{
	struct sync_run *r = arg;

	r->ret = xnf_rtsync_run(r->dp, &r->o, on_ct_event, r, &r->stop, r->err,
				sizeof(r->err));
	atomic_store(&r->started, 1);
	return NULL;
}

/* The UDP tuple src:sport -> dst:dport (a = source), of the family of
 * the addresses. */
static void ct_tuple(struct xnf_ct_key *t, const char *src, __u16 sport,
		     const char *dst, __u16 dport)
{
	bool v6 = strchr(src, ':');

	memset(t, 0, sizeof(*t));
	t->family = v6 ? XNF_AF_INET6 : XNF_AF_INET;
	t->proto = IPPROTO_UDP;
	inet_pton(v6 ? AF_INET6 : AF_INET, src, t->a_addr);
	inet_pton(v6 ? AF_INET6 : AF_INET, dst, t->b_addr);
	t->a_port = htons(sport);
	t->b_port = htons(dport);
}

/*
 * A translated UDP connection from @src:@sport to a server's port 53
 * (198.51.100.53, 2001:db8:53::53) whose source became @pub (the port
 * kept), with @status and @oif, and its alias, as xnf_ct_confirm() writes
 * them (the alias first). *@ck gets the connection's key.
 */
static bool ct_put_masq(int fd, const char *src, __u16 sport, const char *pub,
			__u32 status, __u32 oif, struct xnf_ct_key *ck)
{
	const char *server = strchr(src, ':') ? "2001:db8:53::53" :
						"198.51.100.53";
	struct xnf_ct_entry e = {}, a = {};
	struct xnf_ct_key orig, reply, ak;

	ct_tuple(&orig, src, sport, server, 53);
	ct_tuple(&reply, server, 53, pub, sport);
	xnf_ct_key_canon(&orig, ck);
	xnf_ct_key_canon(&reply, &ak);
	a.expires = ~0ULL;
	a.created = xnf_ct_now() - 10 * 1000000000ULL;
	a.status = XNF_CT_S_ALIAS;
	a.nat = *ck;
	e.expires = xnf_ct_now() + 600 * 1000000000ULL;
	e.created = a.created;
	e.status = status | XNF_CT_S_SEEN_REPLY |
		   (memcmp(ck->a_addr, orig.a_addr, 16) ? XNF_CT_S_ORIG_B : 0);
	e.nat_oif = oif;
	e.nat = reply;
	return ASSERT_OK(bpf_map_update_elem(fd, &ak, &a, BPF_NOEXIST),
			 "write an alias") &&
	       ASSERT_OK(bpf_map_update_elem(fd, ck, &e, BPF_NOEXIST),
			 "write a connection");
}

static bool ct_has(int fd, const struct xnf_ct_key *k)
{
	struct xnf_ct_entry e;

	return !bpf_map_lookup_elem(fd, k, &e);
}

/* Waits (at most 20 s) until @k has left the table. */
static bool ct_wait_gone(int fd, const struct xnf_ct_key *k)
{
	int i;

	for (i = 0; i < 400 && ct_has(fd, k); i++)
		usleep(50 * 1000);
	return !ct_has(fd, k);
}

/* Elements of the table, connections and aliases. */
static __u32 ct_elems(int fd)
{
	struct xnf_ct_key k, next;
	void *prev = NULL;
	__u32 n = 0;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		k = next;
		prev = &k;
		n++;
	}
	return n;
}

#define MASQ (XNF_CT_S_SNAT | XNF_CT_S_MASQ)

/*
 * As Linux's masquerade notifiers: an address removed from ut1 flushes
 * the connections masqueraded out of ut1 to it, not those masqueraded to
 * another of its addresses, not a source NAT to it, not a masquerade out
 * of another device; ut1 going down flushes every masquerade out of it.
 * Each with its alias.
 */
TEST(rtsync_masquerade)
{
	struct xnf_ct_key a, b, snat, other, a6, b6;
	struct sync_run r = {};
	pthread_t th;
	struct fx f;
	int fd, i;

	if (!fx_open(&f))
		return;
	fd = xnf_table_fd(f.dp, XNF_T_CT);
	if (!ASSERT_GE(fd, 0, "xnf_ct") ||
	    !ASSERT_OK(fx_sh("ip link set ut1 up && ip link set ut1p up && "
			     "ip link set ut2 up && ip link set ut2p up && "
			     "ip addr add 203.0.113.1/24 dev ut1 && "
			     "ip addr add 198.51.100.1/24 dev ut1 && "
			     "ip addr add 203.0.113.1/32 dev ut2 && "
			     "ip addr add 2001:db8:1::1/64 dev ut1 nodad && "
			     "ip addr add 2001:db8:1::2/64 dev ut1 nodad"),
		       "addresses"))
		goto out;
	if (!ct_put_masq(fd, "192.0.2.10", 4000, "203.0.113.1", MASQ,
			 f.ifindex[1], &a) ||
	    !ct_put_masq(fd, "192.0.2.11", 4001, "198.51.100.1", MASQ,
			 f.ifindex[1], &b) ||
	    !ct_put_masq(fd, "192.0.2.12", 4002, "203.0.113.1", XNF_CT_S_SNAT,
			 0, &snat) ||
	    !ct_put_masq(fd, "192.0.2.13", 4003, "203.0.113.1", MASQ,
			 f.ifindex[2], &other) ||
	    !ct_put_masq(fd, "2001:db8:2::10", 4004, "2001:db8:1::1", MASQ,
			 f.ifindex[1], &a6) ||
	    !ct_put_masq(fd, "2001:db8:2::11", 4005, "2001:db8:1::2", MASQ,
			 f.ifindex[1], &b6))
		goto out;
	atomic_store(&ct_flushes, 0);
	r.dp = f.dp;
	if (!ASSERT_OK(pthread_create(&th, NULL, ct_sync_thread, &r), "thread"))
		goto out;
	for (i = 0; i < 400 && !atomic_load(&r.started); i++)
		usleep(50 * 1000);
	if (!ASSERT_OK(r.ret, r.err))
		goto stop;
	ASSERT_EQ(ct_elems(fd), 12, "6 connections, 6 aliases");

	SUBTEST("an address removed") {
		fx_sh("ip addr del 203.0.113.1/24 dev ut1");
		ASSERT_TRUE(ct_wait_gone(fd, &a), "its masquerade flushed");
		ASSERT_TRUE(ct_has(fd, &b), "another address's stays");
		ASSERT_TRUE(ct_has(fd, &snat), "a source NAT to it stays");
		ASSERT_TRUE(ct_has(fd, &other), "another device's stays");
		ASSERT_EQ(ct_elems(fd), 10, "with its alias");
	}
	SUBTEST("an IPv6 address removed") {
		fx_sh("ip addr del 2001:db8:1::1/64 dev ut1");
		ASSERT_TRUE(ct_wait_gone(fd, &a6), "its masquerade flushed");
		ASSERT_TRUE(ct_has(fd, &b6), "another address's stays");
		ASSERT_EQ(ct_elems(fd), 8, "with its alias");
	}
	SUBTEST("the device down") {
		fx_sh("ip link set ut1 down");
		ASSERT_TRUE(ct_wait_gone(fd, &b), "its masquerades flushed");
		ASSERT_TRUE(ct_wait_gone(fd, &b6), "IPv6's too");
		ASSERT_TRUE(ct_has(fd, &snat), "a source NAT stays");
		ASSERT_TRUE(ct_has(fd, &other), "another device's stays");
		ASSERT_EQ(ct_elems(fd), 4, "with its alias");
	}
	ASSERT_GE(atomic_load(&ct_flushes), 3, "ct_flush events");
stop:
	r.stop = 1;
	pthread_join(th, NULL);
	ASSERT_OK(r.ret, r.err);
	xnf_rtsync_flush(f.dp, &(__u32){ 0 }, r.err, sizeof(r.err));
out:
	fx_sh("ip addr flush dev ut1; ip addr flush dev ut2");
	fx_close(&f);
}

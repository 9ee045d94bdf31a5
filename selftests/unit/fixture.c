// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The BPF unit-test fixture; see fixture.h. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>

#include "fixture.h"
#include "sandbox.h"

static bool env_ready;

int fx_sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	return rc == -1 ? -1 : WEXITSTATUS(rc);
}

bool fx_env(void)
{
	if (env_ready)
		return true;
	if (!ASSERT_OK(xnf_sandbox("ut", FX_PORTS),
		       "private namespace with veths"))
		return false;
	xnf_libbpf_logging();
	if (getenv("XNF_DEBUG"))
		xnf_set_log_level(XNF_LOG_DEBUG);
	env_ready = true;
	return true;
}

void fx_nh_mac(__u32 port, __u8 mac[6])
{
	const __u8 m[6] = { 0x02, 0, 0, 0, (__u8)port, 0x01 };

	memcpy(mac, m, 6);
}

bool fx_open(struct fx *f)
{
	char name[IFNAMSIZ], msg[512] = "xnf_dp_open";
	int i, err;

	memset(f, 0, sizeof(*f));
	if (!fx_env())
		return false;
	xnf_dp_destroy(FX_ROOT);
	err = xnf_dp_open(FX_ROOT, true, &f->dp, msg, sizeof(msg));
	if (!ASSERT_OK(err, msg))
		return false;
	/* XNF_UT_FLOW_CACHE=off: every test with the flow cache off (it is
	 * on in fresh tables), to show that results do not depend on it. */
	if (getenv("XNF_UT_FLOW_CACHE") &&
	    !strcmp(getenv("XNF_UT_FLOW_CACHE"), "off")) {
		struct xnf_config cfg;

		if (!ASSERT_OK(xnf_cfg_read(f->dp, &cfg), "read xnf_cfg"))
			return false;
		cfg.flow_cache = 0;
		if (!ASSERT_OK(xnf_cfg_write(f->dp, &cfg), "write xnf_cfg"))
			return false;
	}
	for (i = 0; i < FX_PORTS; i++) {
		struct ifreq ifr = {};
		int s = socket(AF_INET, SOCK_DGRAM, 0);

		snprintf(name, sizeof(name), "ut%d", i);
		f->ifindex[i] = if_nametoindex(name);
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
		if (s < 0 || ioctl(s, SIOCGIFHWADDR, &ifr)) {
			ASSERT_OK(-errno, "read MAC of test port");
			if (s >= 0)
				close(s);
			return false;
		}
		close(s);
		memcpy(f->mac[i], ifr.ifr_hwaddr.sa_data, 6);
		if (!ASSERT_OK(xnf_port_add(f->dp, f->ifindex[i]), "add port"))
			return false;
	}
	return true;
}

bool fx_chain(struct fx *f, const char *chain, bool fused, bool fib)
{
	struct xnf_chain_spec spec;
	char err[256];

	snprintf(err, sizeof(err), "%s", chain);
	if (!ASSERT_OK(xnf_chain_parse(chain, &spec, err, sizeof(err)), err))
		return false;
	spec.fused = fused;
	spec.l3_fib = fib;
	xnf_chain_free(f->chain);
	f->chain = NULL;
	return ASSERT_OK(xnf_chain_load(f->dp, "ut0", &spec, &f->chain, err,
					sizeof(err)),
			 err);
}

void fx_close(struct fx *f)
{
	xnf_chain_free(f->chain);
	xnf_dp_close(f->dp);
	xnf_dp_destroy(FX_ROOT);
	memset(f, 0, sizeof(*f));
}

int fx_run(struct fx *f, const void *pkt, __u32 len, struct fx_out *out)
{
	/* data_end must be the frame length: the kernel checks it. */
	struct xdp_md ctx = { .ingress_ifindex = f->ifindex[0], .data_end = len };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = pkt, .data_size_in = len,
		    .data_out = out->data, .data_size_out = sizeof(out->data),
		    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx), .repeat = 1, );
	int err;

	err = bpf_prog_test_run_opts(xnf_chain_prog_fd(f->chain), &opts);
	if (err)
		return -errno;
	out->ret = opts.retval;
	out->len = opts.data_size_out;
	return 0;
}

bool fx_stats(struct fx *f, struct xnf_stats *st)
{
	return ASSERT_OK(xnf_stats_read(xnf_chain_stats_fd(f->chain), st, NULL),
			 "read xnf_stats");
}

/* A route of @type to @port; @mtu: the route's MTU (0: none). */
static bool fx_route_mtu(struct fx *f, int family, const char *prefix,
			 __u32 port, __u32 type, __u32 mtu)
{
	struct xnf_route rt = { .type = type,
				.ifindex = f->ifindex[port],
				.mtu = mtu };
	char buf[64], *slash;
	__u8 addr[16] = {};
	__u32 plen;

	snprintf(buf, sizeof(buf), "%s", prefix);
	slash = strchr(buf, '/');
	if (!ASSERT_TRUE(slash, "prefix has a length"))
		return false;
	*slash = '\0';
	plen = atoi(slash + 1);
	if (!ASSERT_TRUE(inet_pton(family == XNF_AF_INET ? AF_INET : AF_INET6,
				   buf, addr) == 1,
			 prefix))
		return false;
	fx_nh_mac(port, rt.dmac);
	memcpy(rt.smac, f->mac[port], 6);
	return ASSERT_OK(xnf_route_set(f->dp, family, addr, plen, &rt, BPF_ANY),
			 prefix);
}

static bool fx_prefix(const char *prefix, int *family, __u8 addr[16], __u32 *plen)
{
	char buf[64], *slash;

	snprintf(buf, sizeof(buf), "%s", prefix);
	slash = strchr(buf, '/');
	if (!ASSERT_TRUE(slash, "prefix has a length"))
		return false;
	*slash = '\0';
	*plen = atoi(slash + 1);
	*family = strchr(buf, ':') ? XNF_AF_INET6 : XNF_AF_INET;
	memset(addr, 0, 16);
	return ASSERT_TRUE(inet_pton(*family == XNF_AF_INET ? AF_INET : AF_INET6,
				     buf, addr) == 1,
			   prefix);
}

void fx_mp_path(struct fx *f, __u32 i, struct xnf_route *rt)
{
	const __u8 mac[6] = { 0x02, 0, 0, 0, 0x0f, (__u8)(0xa0 + i) };
	__u32 port = 1 + i % 2;

	memset(rt, 0, sizeof(*rt));
	rt->type = XNF_RT_UNICAST;
	rt->ifindex = f->ifindex[port];
	memcpy(rt->dmac, mac, 6);
	memcpy(rt->smac, f->mac[port], 6);
}

bool fx_mp_route(struct fx *f, const char *prefix, __u32 mask)
{
	struct xnf_route paths[FX_MP_PATHS];
	__u32 i, n = 0, plen;
	__u8 addr[16];
	int family;

	if (!fx_prefix(prefix, &family, addr, &plen))
		return false;
	for (i = 0; i < FX_MP_PATHS; i++)
		if (mask & (1u << i))
			fx_mp_path(f, i, &paths[n++]);
	return ASSERT_OK(xnf_route_set_multipath(f->dp, family, addr, plen,
						 paths, n, BPF_ANY),
			 prefix);
}

int fx_mp_path_of(const __u8 *frame)
{
	if (frame[0] != 0x02 || frame[4] != 0x0f || frame[5] < 0xa0 ||
	    frame[5] >= 0xa0 + FX_MP_PATHS)
		return -1;
	return frame[5] - 0xa0;
}

int fx_mp_flow(__u8 *buf, size_t cap, int family, __u32 k, const char *dst,
	       bool reverse)
{
	char src[INET6_ADDRSTRLEN];
	struct pkt_spec s = { .family = family == XNF_AF_INET ? 4 : 6,
			      .frame_len = 128 };

	if (family == XNF_AF_INET)
		snprintf(src, sizeof(src), "192.0.2.%u", 1 + k % 200);
	else
		snprintf(src, sizeof(src), "2001:db8:1::%x", 1 + k % 200);
	s.proto = k % 3 == 2 ? IPPROTO_TCP : IPPROTO_UDP;
	s.sport = 1024 + k;
	s.dport = 7 + k / 200;
	s.src = reverse ? dst : src;
	s.dst = reverse ? src : dst;
	if (reverse) {
		s.sport = 7 + k / 200;
		s.dport = 1024 + k;
	}
	return pkt_build(buf, cap, &s);
}

bool fx_route4(struct fx *f, const char *prefix, __u32 port, __u32 type)
{
	return fx_route_mtu(f, XNF_AF_INET, prefix, port, type, 0);
}

bool fx_route6(struct fx *f, const char *prefix, __u32 port, __u32 type)
{
	return fx_route_mtu(f, XNF_AF_INET6, prefix, port, type, 0);
}

bool fx_set_cfg(struct fx *f, __u32 no_route, __u32 ttl, __u32 local,
		__u32 l2_miss)
{
	struct xnf_config cfg;

	if (!ASSERT_OK(xnf_cfg_read(f->dp, &cfg), "read cfg"))
		return false;
	cfg.no_route = no_route;
	cfg.ttl_expired = ttl;
	cfg.local = local;
	cfg.l2_miss = l2_miss;
	return ASSERT_OK(xnf_cfg_write(f->dp, &cfg), "write cfg");
}

bool fx_set_martian(struct fx *f, __u32 martian)
{
	struct xnf_config cfg;

	if (!ASSERT_OK(xnf_cfg_read(f->dp, &cfg), "read cfg"))
		return false;
	cfg.martian = martian;
	return ASSERT_OK(xnf_cfg_write(f->dp, &cfg), "write cfg");
}

__u64 fx_drops(const struct xnf_stats *st)
{
	__u64 n = 0;
	int i;

	for (i = 0; i < __XNF_R_MAX; i++)
		n += st->drop[i];
	return n;
}

__u64 fx_passes(const struct xnf_stats *st)
{
	__u64 n = 0;
	int i;

	for (i = 0; i < __XNF_R_MAX; i++)
		n += st->pass[i];
	return n;
}

void fx_dump(const struct xnf_stats *st)
{
	int i;

	for (i = 0; i < __XNF_NF_MAX; i++)
		fprintf(stderr,
			"    %-8s in %llu pass %llu drop %llu redirect %llu, bytes in %llu pass %llu drop %llu redirect %llu\n",
			xnf_nf_name(i), (unsigned long long)st->nf[i].in,
			(unsigned long long)st->nf[i].pass,
			(unsigned long long)st->nf[i].drop,
			(unsigned long long)st->nf[i].redirect,
			(unsigned long long)st->nf[i].in_bytes,
			(unsigned long long)st->nf[i].pass_bytes,
			(unsigned long long)st->nf[i].drop_bytes,
			(unsigned long long)st->nf[i].redirect_bytes);
	for (i = 0; i < __XNF_R_MAX; i++)
		if (st->drop[i] || st->pass[i])
			fprintf(stderr,
				"    reason %-14s drop %llu (%llu B) pass %llu (%llu B)\n",
				xnf_reason_name(i),
				(unsigned long long)st->drop[i],
				(unsigned long long)st->drop_bytes[i],
				(unsigned long long)st->pass[i],
				(unsigned long long)st->pass_bytes[i]);
	for (i = 0; i < XNF_CHAIN_MAX; i++)
		if (st->tail_miss[i])
			fprintf(stderr, "    tail_miss[%d] %llu\n", i,
				(unsigned long long)st->tail_miss[i]);
}

bool fx_stats_reset(struct fx *f)
{
	return ASSERT_OK(xnf_stats_reset(xnf_chain_stats_fd(f->chain)),
			 "reset xnf_stats");
}

static __u64 sum_u64(const __u64 *v, int n)
{
	__u64 sum = 0;

	while (n--)
		sum += v[n];
	return sum;
}

bool fx_stats_consistent(const struct xnf_stats *st, const char *what)
{
	const struct xnf_nf_counters *e = &st->nf[XNF_NF_ENTRY];
	bool ok = true;
	int i;

	for (i = 0; i < __XNF_NF_MAX; i++) {
		const struct xnf_nf_counters *c = &st->nf[i];

		ok &= xnf_test_check(
			c->in == c->pass + c->drop + c->redirect, __FILE__,
			__LINE__, what,
			"%s row: in %llu != pass %llu + drop %llu + redirect %llu",
			xnf_nf_name(i), (unsigned long long)c->in,
			(unsigned long long)c->pass, (unsigned long long)c->drop,
			(unsigned long long)c->redirect);
		ok &= xnf_test_check(
			c->in_bytes == c->pass_bytes + c->drop_bytes +
					       c->redirect_bytes,
			__FILE__, __LINE__, what,
			"%s row: in %llu B != pass %llu B + drop %llu B + redirect %llu B",
			xnf_nf_name(i), (unsigned long long)c->in_bytes,
			(unsigned long long)c->pass_bytes,
			(unsigned long long)c->drop_bytes,
			(unsigned long long)c->redirect_bytes);
		/* Every frame is at least an Ethernet header's worth. */
		ok &= xnf_test_check(c->in_bytes >= c->in, __FILE__, __LINE__,
				     what, "%s row: %llu packets in %llu B",
				     xnf_nf_name(i), (unsigned long long)c->in,
				     (unsigned long long)c->in_bytes);
	}
	ok &= ASSERT_EQ(fx_drops(st), e->drop, what);
	ok &= ASSERT_EQ(fx_passes(st), e->pass, what);
	ok &= ASSERT_EQ(sum_u64(st->drop_bytes, __XNF_R_MAX), e->drop_bytes,
			what);
	ok &= ASSERT_EQ(sum_u64(st->pass_bytes, __XNF_R_MAX), e->pass_bytes,
			what);
	return ok;
}

bool fx_fw_load(struct fx *f, const struct xnf_fw_rule *rules, __u32 n,
		__u32 default_action)
{
	struct xnf_fw_set *set = NULL;
	bool ok = false;
	__u32 i;

	if (!ASSERT_OK(xnf_fw_read(f->dp, &set), "xnf_fw_read"))
		return false;
	for (i = 0, ok = true; i < n && ok; i++)
		ok = ASSERT_OK(xnf_fw_set_replace(set, i, &rules[i]), "put rule");
	if (ok)
		ok = ASSERT_OK(xnf_fw_set_policy(set, default_action), "policy") &&
		     ASSERT_OK(xnf_fw_apply(f->dp, set, NULL, 0), "xnf_fw_apply");
	xnf_fw_set_free(set);
	return ok;
}

bool fx_fw_default(struct fx *f, __u32 default_action)
{
	struct xnf_fw_set *set = NULL;
	bool ok;

	if (!ASSERT_OK(xnf_fw_read(f->dp, &set), "xnf_fw_read"))
		return false;
	ok = ASSERT_OK(xnf_fw_set_policy(set, default_action), "policy") &&
	     ASSERT_OK(xnf_fw_apply(f->dp, set, NULL, 0), "xnf_fw_apply");
	xnf_fw_set_free(set);
	return ok;
}

bool fx_expect_nf(const struct xnf_stats *st, __u32 nf, int ret, const char *what)
{
	const struct xnf_nf_counters *c = &st->nf[nf];
	__u64 want[4] = {
		ret >= 0,
		ret == XDP_PASS,
		ret == XDP_DROP,
		ret == XDP_REDIRECT,
	};
	__u64 got[4] = { c->in, c->pass, c->drop, c->redirect };
	bool ok = true;

	if (memcmp(got, want, sizeof(got)))
		ok = xnf_test_check(
			false, __FILE__, __LINE__, what,
			"%s row: in %llu pass %llu drop %llu redirect %llu, want in %llu pass %llu drop %llu redirect %llu",
			xnf_nf_name(nf), (unsigned long long)got[0],
			(unsigned long long)got[1], (unsigned long long)got[2],
			(unsigned long long)got[3], (unsigned long long)want[0],
			(unsigned long long)want[1], (unsigned long long)want[2],
			(unsigned long long)want[3]);
	return ok;
}

bool fx_expect_entry(const struct xnf_stats *st, int ret, __u32 reason,
		     const char *what)
{
	bool ok = fx_expect_nf(st, XNF_NF_ENTRY, ret, what);

	ok &= fx_stats_consistent(st, what);
	if (ret == XDP_DROP && st->drop[reason] != 1)
		ok = xnf_test_check(false, __FILE__, __LINE__, what,
				    "dropped, but not for reason %s",
				    xnf_reason_name(reason));
	if (ret == XDP_PASS && st->pass[reason] != 1)
		ok = xnf_test_check(false, __FILE__, __LINE__, what,
				    "passed, but not for reason %s",
				    xnf_reason_name(reason));
	if (!ok)
		fx_dump(st);
	return ok;
}

bool fx_cap_open(struct fx_cap *c)
{
	int i, one = 1;

	for (i = 0; i < FX_PORTS; i++) {
		c->fd[i] = -1;
		c->gro[i] = true;
	}
	if (!fx_env())
		return false;
	for (i = 0; i < FX_PORTS; i++) {
		struct sockaddr_ll sll = { .sll_family = AF_PACKET,
					   .sll_protocol = htons(ETH_P_ALL) };
		char name[IFNAMSIZ];

		snprintf(name, sizeof(name), "ut%dp", i);
		sll.sll_ifindex = if_nametoindex(name);
		c->gro[i] = !fx_sh("ethtool -k %s | grep -q '^generic-receive-offload: on'",
				   name);
		if (!ASSERT_OK(fx_sh("ethtool -K %s gro on >/dev/null", name),
			       "enable NAPI on the veth peer (ethtool -K gro on)"))
			goto err;
		c->fd[i] = socket(AF_PACKET,
				  SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC,
				  htons(ETH_P_ALL));
		if (!ASSERT_OK(c->fd[i] < 0 ? -errno : 0, "packet socket") ||
		    !ASSERT_OK(setsockopt(c->fd[i], SOL_PACKET, PACKET_AUXDATA,
					  &one, sizeof(one)) ?
				       -errno :
				       0,
			       "PACKET_AUXDATA") ||
		    !ASSERT_OK(bind(c->fd[i], (struct sockaddr *)&sll,
				    sizeof(sll)) ?
				       -errno :
				       0,
			       "bind to veth peer"))
			goto err;
	}
	return true;
err:
	fx_cap_close(c);
	return false;
}

void fx_cap_close(struct fx_cap *c)
{
	int i;

	for (i = 0; i < FX_PORTS; i++) {
		if (c->fd[i] >= 0)
			close(c->fd[i]);
		c->fd[i] = -1;
		if (!c->gro[i])
			fx_sh("ethtool -K ut%dp gro off >/dev/null", i);
		c->gro[i] = true;
	}
}

int fx_run_live(struct fx *f, const void *pkt, __u32 len)
{
	struct xdp_md ctx = { .ingress_ifindex = f->ifindex[0], .data_end = len };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = pkt, .data_size_in = len,
		    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx), .repeat = 1,
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES, );

	return bpf_prog_test_run_opts(xnf_chain_prog_fd(f->chain), &opts) ?
		       -errno :
		       0;
}

/* Reads one frame; the kernel strips the outer VLAN tag on receive and
 * reports it in PACKET_AUXDATA, so it is put back. Returns the length,
 * 0 for a frame to ignore, -1 when there is none. */
static int fx_cap_recv(int fd, __u8 *buf, size_t cap)
{
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(sizeof(struct tpacket_auxdata))];
	} ctl;
	struct sockaddr_ll from;
	struct iovec iov = { .iov_base = buf + 4, .iov_len = cap - 4 };
	struct msghdr msg = {
		.msg_name = &from,
		.msg_namelen = sizeof(from),
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = &ctl,
		.msg_controllen = sizeof(ctl),
	};
	struct cmsghdr *cm;
	ssize_t n;

	n = recvmsg(fd, &msg, MSG_DONTWAIT);
	if (n < 0)
		return -1;
	if (from.sll_pkttype == PACKET_OUTGOING || n < ETH_HLEN)
		return 0;
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		struct tpacket_auxdata aux;
		__u16 tag[2];

		if (cm->cmsg_level != SOL_PACKET ||
		    cm->cmsg_type != PACKET_AUXDATA)
			continue;
		memcpy(&aux, CMSG_DATA(cm), sizeof(aux));
		if (!(aux.tp_status & TP_STATUS_VLAN_VALID))
			continue;
		tag[0] = htons(aux.tp_status & TP_STATUS_VLAN_TPID_VALID ?
				       aux.tp_vlan_tpid :
				       ETH_P_8021Q);
		tag[1] = htons(aux.tp_vlan_tci);
		memmove(buf, buf + 4, 2 * ETH_ALEN);
		memcpy(buf + 2 * ETH_ALEN, tag, 4);
		return n + 4;
	}
	memmove(buf, buf + 4, n);
	return n;
}

long fx_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

__u32 fx_cap_ports(struct fx_cap *c, const void *want, __u32 len, __u32 expect)
{
	static __u8 buf[PKT_MAX + 4];
	long deadline = fx_now_ms() + (expect ? FX_WAIT_MS : 40), now;
	struct pollfd pfd[FX_PORTS];
	__u32 got = 0;
	int i, n;

	for (;;) {
		now = fx_now_ms();
		if ((got & expect) == expect && deadline > now + 20)
			deadline = now + 20;
		if (now >= deadline)
			return got;
		for (i = 0; i < FX_PORTS; i++)
			pfd[i] = (struct pollfd){ .fd = c->fd[i],
						  .events = POLLIN };
		if (poll(pfd, FX_PORTS, deadline - now) <= 0)
			continue;
		for (i = 0; i < FX_PORTS; i++) {
			if (!(pfd[i].revents & POLLIN))
				continue;
			while ((n = fx_cap_recv(c->fd[i], buf, sizeof(buf))) >= 0)
				if ((__u32)n == len && !memcmp(buf, want, len))
					got |= 1u << i;
		}
	}
}

long long fx_tx_dropped(const char *dev)
{
	struct ifaddrs *ifa, *i;
	long long n = -1;

	if (getifaddrs(&ifa))
		return -1;
	for (i = ifa; i; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_PACKET &&
		    i->ifa_data && !strcmp(i->ifa_name, dev))
			n = ((struct rtnl_link_stats *)i->ifa_data)->tx_dropped;
	freeifaddrs(ifa);
	return n;
}

void fx_same_as_tail(const struct fx_out *fused, const struct fx_out *tail,
		     const char *what)
{
	if (!tail->len)
		return;
	ASSERT_EQ(fused->ret, tail->ret, what);
	if (ASSERT_EQ(fused->len, tail->len, what))
		ASSERT_MEM(fused->data, tail->data, fused->len, what);
}

bool fx_l3_table(struct fx *f)
{
	return fx_route4(f, "198.51.100.0/24", 1, XNF_RT_UNICAST) &&
	       fx_route4(f, "10.0.0.0/8", 1, XNF_RT_UNICAST) &&
	       fx_route4(f, "10.1.2.0/24", 2, XNF_RT_UNICAST) &&
	       fx_route4(f, "10.1.2.3/32", 0, XNF_RT_UNICAST) &&
	       fx_route4(f, "198.51.100.254/32", 1, XNF_RT_LOCAL) &&
	       fx_route4(f, "203.0.113.0/25", 1, XNF_RT_BLACKHOLE) &&
	       fx_route4(f, "203.0.113.128/25", 1, XNF_RT_UNREACHABLE) &&
	       fx_route6(f, "2001:db8::/32", 1, XNF_RT_UNICAST) &&
	       fx_route6(f, "2001:db8:5::/48", 2, XNF_RT_UNICAST) &&
	       fx_route6(f, "2001:db8:5::5/128", 0, XNF_RT_UNICAST) &&
	       fx_route6(f, "2001:db8:2::fe/128", 1, XNF_RT_LOCAL) &&
	       fx_route6(f, "2001:db8:b::/48", 1, XNF_RT_BLACKHOLE) &&
	       fx_route6(f, "2001:db8:c::/48", 1, XNF_RT_UNREACHABLE) &&
	       /* Routes with an MTU below their port's (1500). */
	       fx_route_mtu(f, XNF_AF_INET, "10.7.0.0/24", 2, XNF_RT_UNICAST,
			    1400) &&
	       fx_route_mtu(f, XNF_AF_INET6, "2001:db8:7::/48", 2,
			    XNF_RT_UNICAST, 1280);
}

bool fx_l2_table(struct fx *f)
{
	static const struct {
		__u8 mac[6];
		__u32 port;
	} fdb[] = {
		{ FX_MAC_ON_UT0, 0 },
		{ FX_MAC_ON_UT1, 1 },
		{ FX_MAC_ON_UT2, 2 },
		/* Group addresses never match, whatever the FDB says. */
		{ FX_MAC_BCAST, 2 },
		{ FX_MAC_MCAST4, 2 },
		{ FX_MAC_MCAST6, 2 },
		/* Next hops (fx_nh_mac): nh1 moved to ut2, nh2 on the
		 * ingress port. */
		{ { 0x02, 0, 0, 0, 0x01, 0x01 }, 2 },
		{ { 0x02, 0, 0, 0, 0x02, 0x01 }, 0 },
	};
	struct xnf_route rt = { .type = XNF_RT_UNICAST,
				.ifindex = f->ifindex[1],
				.dmac = FX_MAC_UNKNOWN };
	__u8 addr[4] = { 10, 3, 0, 0 };
	size_t i;

	for (i = 0; i < sizeof(fdb) / sizeof(fdb[0]); i++)
		if (!ASSERT_OK(xnf_fdb_set(f->dp, fdb[i].mac,
					   f->ifindex[fdb[i].port]),
			       "xnf_fdb_set"))
			return false;
	/* 10.3.0.0/16: a next hop the FDB does not know. */
	memcpy(rt.smac, f->mac[1], 6);
	return fx_route4(f, "198.51.100.0/24", 1, XNF_RT_UNICAST) &&
	       fx_route6(f, "2001:db8:2::/48", 1, XNF_RT_UNICAST) &&
	       fx_route4(f, "10.2.0.0/16", 2, XNF_RT_UNICAST) &&
	       fx_route4(f, "203.0.113.0/24", 1, XNF_RT_BLACKHOLE) &&
	       ASSERT_OK(xnf_route_set(f->dp, XNF_AF_INET, addr, 16, &rt, BPF_ANY),
			 "route to an unknown next hop");
}

/* The first byte of the destination MAC l3fwd writes for @dst, or -1 when
 * it does not forward; 0 unless the path is fx_mp_path(i): 0xa0 + i. */
int fx_path_to(struct fx *f, const char *dst)
{
	static __u8 frame[PKT_MAX];
	static struct fx_out out;
	struct pkt_spec s = { .family = 4, .dst = dst };
	int len = pkt_build(frame, sizeof(frame), &s);

	if (!ASSERT_OK(fx_run(f, frame, len, &out), dst))
		return -2;
	return out.ret == XDP_REDIRECT ? out.data[5] : -1;
}

/* True when both copies hold the same routes (keys and values). */
bool fx_rt_copies_equal(struct fx *f, int family)
{
	int a = xnf_table_fd(f->dp,
			     family == XNF_AF_INET ? XNF_T_RT4 : XNF_T_RT6);
	int b = xnf_table_fd(f->dp,
			     family == XNF_AF_INET ? XNF_T_RT4_B : XNF_T_RT6_B);
	struct xnf_rt6_key key, next;
	struct xnf_rt_val va, vb;
	int pass, n[2] = {};
	void *prev;

	for (pass = 0; pass < 2; pass++) {
		int from = pass ? b : a, to = pass ? a : b;

		prev = NULL;
		memset(&next, 0, sizeof(next));
		while (!bpf_map_get_next_key(from, prev, &next)) {
			key = next;
			prev = &key;
			n[pass]++;
			if (bpf_map_lookup_elem(from, &key, &va) ||
			    bpf_map_lookup_elem(to, &key, &vb) ||
			    va.plen != key.prefixlen || vb.plen != va.plen ||
			    va.type != vb.type || va.nh != vb.nh ||
			    va.origin != vb.origin)
				return false;
		}
	}
	return n[0] == n[1];
}

/* The count of nexthop objects in use and the refs of the one that
 * fx_mp_path(@i) makes (0 when it is not there). */
__u32 fx_nh_refs(struct fx *f, __u32 i, __u32 *in_use)
{
	struct xnf_nexthop *nhs;
	struct xnf_route rt;
	__u32 *ids, n, k, refs = 0;

	*in_use = 0;
	fx_mp_path(f, i, &rt);
	if (!ASSERT_OK(xnf_nh_list(f->dp, &ids, &nhs, &n), "nexthops"))
		return 0;
	for (k = 0; k < n; k++)
		if (!memcmp(nhs[k].dmac, rt.dmac, 6))
			refs = nhs[k].refs;
	*in_use = n;
	free(ids);
	free(nhs);
	return refs;
}

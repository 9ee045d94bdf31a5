// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The BPF unit-test fixture; see fixture.h. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <bpf/bpf.h>

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

static bool fx_env(void)
{
	if (env_ready)
		return true;
	if (!ASSERT_OK(xnf_sandbox("ut", FX_PORTS), "private namespace with veths"))
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
	char name[IFNAMSIZ];
	int i, err;

	memset(f, 0, sizeof(*f));
	if (!fx_env())
		return false;
	xnf_dp_destroy(FX_ROOT);
	err = xnf_dp_open(FX_ROOT, true, &f->dp);
	if (!ASSERT_OK(err, "xnf_dp_open"))
		return false;
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

	if (!ASSERT_OK(xnf_chain_parse(chain, &spec), chain))
		return false;
	spec.fused = fused;
	spec.l3_fib = fib;
	xnf_chain_free(f->chain);
	f->chain = NULL;
	return ASSERT_OK(xnf_chain_load(f->dp, "ut0", &spec, &f->chain), chain);
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
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		.data_in = pkt,
		.data_size_in = len,
		.data_out = out->data,
		.data_size_out = sizeof(out->data),
		.ctx_in = &ctx,
		.ctx_size_in = sizeof(ctx),
		.repeat = 1,
	);
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

static bool fx_route(struct fx *f, int family, const char *prefix, __u32 port,
		     __u32 type)
{
	struct xnf_route rt = { .type = type, .ifindex = f->ifindex[port] };
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
				   buf, addr) == 1, prefix))
		return false;
	fx_nh_mac(port, rt.dmac);
	memcpy(rt.smac, f->mac[port], 6);
	return ASSERT_OK(xnf_route_set(f->dp, family, addr, plen, &rt), prefix);
}

bool fx_route4(struct fx *f, const char *prefix, __u32 port, __u32 type)
{
	return fx_route(f, XNF_AF_INET, prefix, port, type);
}

bool fx_route6(struct fx *f, const char *prefix, __u32 port, __u32 type)
{
	return fx_route(f, XNF_AF_INET6, prefix, port, type);
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
		fprintf(stderr, "    %-8s in %llu pass %llu drop %llu redirect %llu aborted %llu\n",
			xnf_nf_name(i), (unsigned long long)st->nf[i].in,
			(unsigned long long)st->nf[i].pass,
			(unsigned long long)st->nf[i].drop,
			(unsigned long long)st->nf[i].redirect,
			(unsigned long long)st->nf[i].aborted);
	for (i = 0; i < __XNF_R_MAX; i++)
		if (st->drop[i] || st->pass[i])
			fprintf(stderr, "    reason %-14s drop %llu pass %llu\n",
				xnf_reason_name(i), (unsigned long long)st->drop[i],
				(unsigned long long)st->pass[i]);
	for (i = 0; i < XNF_CHAIN_MAX; i++)
		if (st->tail_miss[i])
			fprintf(stderr, "    tail_miss[%d] %llu\n", i,
				(unsigned long long)st->tail_miss[i]);
}

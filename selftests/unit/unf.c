// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Userspace NFs (userspace/, the AF_XDP workers' NFs) against the XDP NFs.
 *
 * Differential: the same crafted frame goes through the tail-called XDP
 * chain (BPF_PROG_TEST_RUN) and through the userspace NFs, with the same
 * tables, and both must agree:
 *   - the parser's fields: xnf_uparse() against the xnf_scratch slot the
 *     entry program filled (read back after the run, on the CPU it ran);
 *   - the verdict and reason: XDP_DROP / XDP_PASS against XNF_V_DROP /
 *     XNF_V_PASS with the reason of the scratch slot; a pass with no
 *     reason (no NF decided, XDP's default) against the worker's default
 *     redirect, untouched; XDP_REDIRECT against XNF_V_REDIRECT to the
 *     scratch slot's egress port; XDP's flood against drop (l2_miss),
 *     which is what a worker does instead;
 *   - the output bytes, whole (MACs, TTL, IPv4 checksum).
 * Every case also states what the XDP chain must do, so that a table of
 * cases cannot quietly test nothing. All cases then run again as one
 * vector, which must give what they gave one by one.
 *
 * Then: the firewall against xnf_fw_linear() on a generated rule set; the
 * table generation and refresh, from the library and from `xnf -b`;
 * ratelimit's exact counts over an injected clock and its bounded table;
 * macswap; the registry.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf.h>

#include "fixture.h"
#include "unf.h"
#include "unf_priv.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define NR	      (-1) /* no expectation on the XDP side */

/* ---- one frame, both ways ---- */

struct xref { /* what the XDP chain did */
	int ret;
	struct xnf_pkt meta; /* the scratch slot after the run */
	__u32 len;
	__u8 data[PKT_MAX];
};

struct uref { /* what the userspace NFs did */
	struct xnf_upkt u;
	__u8 data[PKT_MAX];
};

static bool xdp_ref(struct fx *f, const __u8 *frame, __u32 len, struct xref *r,
		    const char *what)
{
	static struct fx_out out;
	int ncpus = xnf_ncpus(), cpu, found = -1;
	struct xnf_pkt *v = calloc(ncpus, sizeof(*v));
	int fd = xnf_table_fd(f->dp, XNF_T_SCRATCH);
	__u32 zero = 0;
	bool ok = false;

	if (!ASSERT_TRUE(v, "calloc"))
		return false;
	if (!ASSERT_OK(bpf_map_update_elem(fd, &zero, v, BPF_ANY) ? -errno : 0,
		       "zero xnf_scratch") ||
	    !ASSERT_OK(fx_run(f, frame, len, &out), what) ||
	    !ASSERT_OK(bpf_map_lookup_elem(fd, &zero, v) ? -errno : 0,
		       "read xnf_scratch"))
		goto out;
	for (cpu = 0; cpu < ncpus; cpu++) {
		if (!v[cpu].ingress_ifindex)
			continue;
		if (!ASSERT_EQ(found, -1, "one CPU ran the frame"))
			goto out;
		found = cpu;
	}
	if (!ASSERT_GE(found, 0, "the entry program filled a scratch slot"))
		goto out;
	r->ret = out.ret;
	r->meta = v[found];
	r->len = out.len;
	memcpy(r->data, out.data, out.len);
	ok = true;
out:
	free(v);
	return ok;
}

/* What the worker does before the first NF. */
static void u_prep(struct uref *r, const __u8 *frame, __u32 len, __u32 ingress,
		   __u32 dflt)
{
	memcpy(r->data, frame, len);
	r->u.data = r->data;
	r->u.len = len;
	r->u.egress_ifindex = 0;
	xnf_uparse(r->data, len, ingress, 0, &r->u.meta);
	if (r->u.meta.verdict != XNF_V_DROP) {
		r->u.meta.verdict = XNF_V_REDIRECT;
		r->u.egress_ifindex = dflt;
	}
}

static void u_chain(struct xnf_unf **nfs, int nnf, struct xnf_upkt *pk, __u32 n)
{
	int i;

	for (i = 0; i < nnf; i++)
		nfs[i]->ops->run(nfs[i], pk, n);
}

static bool same_parse(const struct xnf_pkt *x, const struct xnf_pkt *u,
		       const char *what)
{
	__u8 nf_flags = XNF_PKT_F_DONE;

	return ASSERT_EQ(u->ingress_ifindex, x->ingress_ifindex, what) &&
	       ASSERT_EQ(u->rx_queue, x->rx_queue, what) &&
	       ASSERT_EQ(u->vlans, x->vlans, what) &&
	       ASSERT_EQ(u->eth_proto, x->eth_proto, what) &&
	       ASSERT_EQ(u->l3_off, x->l3_off, what) &&
	       ASSERT_EQ(u->family, x->family, what) &&
	       ASSERT_EQ(u->l3_len, x->l3_len, what) &&
	       ASSERT_EQ(u->l4_proto, x->l4_proto, what) &&
	       ASSERT_EQ(u->l4_off, x->l4_off, what) &&
	       ASSERT_EQ(u->flags & ~nf_flags, x->flags & ~nf_flags, what) &&
	       ASSERT_EQ(u->sport, x->sport, what) &&
	       ASSERT_EQ(u->dport, x->dport, what) &&
	       ASSERT_EQ(u->icmp_type, x->icmp_type, what) &&
	       ASSERT_EQ(u->icmp_code, x->icmp_code, what) &&
	       ASSERT_EQ(u->verdict == XNF_V_DROP && u->reason == XNF_R_MALFORMED,
			 x->verdict == XNF_V_DROP && x->reason == XNF_R_MALFORMED,
			 what);
}

/* The userspace result of a frame, against the XDP one (see the top). */
static bool same_verdict(const struct xref *x, const struct uref *u, __u32 dflt,
			 const char *what)
{
	const struct xnf_pkt *m = &u->u.meta;
	bool ok;

	switch (x->ret) {
	case XDP_DROP:
		ok = ASSERT_EQ(m->verdict, XNF_V_DROP, what) &&
		     ASSERT_EQ(m->reason, x->meta.reason, what);
		break;
	case XDP_PASS:
		if (x->meta.reason == XNF_R_NONE)
			ok = ASSERT_EQ(m->verdict, XNF_V_REDIRECT, what) &&
			     ASSERT_EQ(u->u.egress_ifindex, dflt, what) &&
			     ASSERT_FALSE(u->u.flags & XNF_UPKT_F_EGRESS, what);
		else
			ok = ASSERT_EQ(m->verdict, XNF_V_PASS, what) &&
			     ASSERT_EQ(m->reason, x->meta.reason, what);
		break;
	case XDP_REDIRECT:
		if (x->meta.verdict == XNF_V_FLOOD)
			ok = ASSERT_EQ(m->verdict, XNF_V_DROP, what) &&
			     ASSERT_EQ(m->reason, XNF_R_L2_MISS, what);
		else
			ok = ASSERT_EQ(m->verdict, XNF_V_REDIRECT, what) &&
			     ASSERT_EQ(u->u.egress_ifindex,
				       x->meta.egress_ifindex, what);
		break;
	default:
		ok = xnf_test_check(false, __FILE__, __LINE__, what,
				    "XDP action %d", x->ret);
	}
	return ok && ASSERT_EQ(u->u.len, x->len, what) &&
	       ASSERT_MEM(u->data, x->data, x->len, what);
}

/* ---- cases ---- */

struct ucase {
	const char *desc;
	struct pkt_spec in;
	__u8 next6; /* IPv6 extension headers: this many ... */
	__u8 ext6;  /* ... of this type (pkt_build_ext6) */
	__u16 pad;  /* zero bytes after the frame */
	__s16 cut;  /* > 0: the frame cut to this many bytes */
	int ret;    /* XDP action (with pass exceptions), or NR */
	__u32 reason;
};

#define V4(...)	 .in = { .family = 4, __VA_ARGS__ }
#define V6(...)	 .in = { .family = 6, __VA_ARGS__ }
#define ARP(...) .in = { .family = 0, __VA_ARGS__ }
#define EXT(h)	 .next_ext = 1, .ext = { h }
#define ANY	 .ret = NR /* depends on the configuration */
#define FWD	 .ret = XDP_REDIRECT
#define PASS(r)	 .ret = XDP_PASS, .reason = (r)
#define DROP(r)	 .ret = XDP_DROP, .reason = (r)
/* clang-format off */
#define MAC_BCAST { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }
/* clang-format on */

static __u8 c_frame[PKT_MAX];

static int case_frame(const struct ucase *c, __u8 *buf)
{
	int len;

	if (c->next6) {
		struct pkt_ext6 ext[12];
		int i;

		if (c->next6 > ARRAY_SIZE(ext))
			return -1;
		for (i = 0; i < c->next6; i++)
			ext[i] = (struct pkt_ext6){ c->ext6, 0, 0 };
		len = pkt_build_ext6(buf, PKT_MAX, &c->in, ext, c->next6);
	} else {
		len = pkt_build(buf, PKT_MAX, &c->in);
	}
	if (len < 0)
		return len;
	memset(buf + len, 0, c->pad);
	len += c->pad;
	return c->cut > 0 && c->cut < len ? c->cut : len;
}

/* The exception actions in force (XNF_ACT_*). */
struct ucfg {
	__u32 exc; /* no_route, ttl_expired, local */
	__u32 l2_miss;
	bool martian_pass; /* martian: pass instead of the default drop */
};

/* What the XDP chain must do with case @c under @cfg: the case's pass
 * exceptions that follow xnf_config become drops with "drop", its martian
 * drops passes with martian "pass". */
static int case_ret(const struct ucase *c, const struct ucfg *cfg)
{
	if (c->ret == XDP_PASS && cfg->exc == XNF_ACT_DROP &&
	    (c->reason == XNF_R_NO_ROUTE || c->reason == XNF_R_TTL ||
	     c->reason == XNF_R_LOCAL))
		return XDP_DROP;
	if (c->ret == XDP_DROP && c->reason == XNF_R_MARTIAN && cfg->martian_pass)
		return XDP_PASS;
	return c->ret;
}

static struct xref x_res;
static struct uref *u_res; /* one per case, kept for the vector run */

/* Runs @cases through the loaded XDP chain and the userspace chain @nfs;
 * then all of them as one vector through @nfs. */
static void diff_cases(struct fx *f, struct xnf_unf **nfs, int nnf,
		       const struct ucase *cases, size_t n,
		       const struct ucfg *cfg, const char *chain)
{
	__u32 in = f->ifindex[0], dflt = f->ifindex[0];
	struct xnf_upkt *vec = calloc(n, sizeof(*vec));
	__u8 *vbuf = calloc(n, PKT_MAX);
	char what[224];
	size_t i;
	int len;

	u_res = calloc(n, sizeof(*u_res));
	if (!ASSERT_TRUE(vec && vbuf && u_res, "calloc"))
		goto out;
	for (i = 0; i < n; i++) {
		const struct ucase *c = &cases[i];
		int want = case_ret(c, cfg);

		snprintf(what, sizeof(what),
			 "%s [%s, exceptions %s, l2_miss %u, martian %s]",
			 c->desc, chain, cfg->exc ? "drop" : "pass",
			 cfg->l2_miss, cfg->martian_pass ? "pass" : "drop");
		len = case_frame(c, c_frame);
		if (!ASSERT_GE(len, ETH_HLEN, what) ||
		    !xdp_ref(f, c_frame, len, &x_res, what))
			continue;
		if (want != NR &&
		    (!ASSERT_EQ(x_res.ret, want, what) ||
		     (want != XDP_REDIRECT &&
		      !ASSERT_EQ(x_res.meta.reason, c->reason, what))))
			continue;
		u_prep(&u_res[i], c_frame, len, in, dflt);
		u_chain(nfs, nnf, &u_res[i].u, 1);
		if (!same_parse(&x_res.meta, &u_res[i].u.meta, what))
			continue;
		same_verdict(&x_res, &u_res[i], dflt, what);

		/* The same frame again, in the vector below. */
		memcpy(vbuf + i * PKT_MAX, c_frame, len);
		vec[i].data = vbuf + i * PKT_MAX;
		vec[i].len = len;
		xnf_uparse(vec[i].data, len, in, 0, &vec[i].meta);
		if (vec[i].meta.verdict != XNF_V_DROP) {
			vec[i].meta.verdict = XNF_V_REDIRECT;
			vec[i].egress_ifindex = dflt;
		}
	}
	u_chain(nfs, nnf, vec, n);
	for (i = 0; i < n; i++) {
		const struct xnf_upkt *a = &vec[i], *b = &u_res[i].u;

		if (!b->data)
			continue; /* failed above */
		snprintf(what, sizeof(what), "%s [%s, in a vector of %zu]",
			 cases[i].desc, chain, n);
		if (ASSERT_EQ(a->meta.verdict, b->meta.verdict, what) &&
		    ASSERT_EQ(a->meta.reason, b->meta.reason, what) &&
		    ASSERT_EQ(a->meta.flags, b->meta.flags, what) &&
		    ASSERT_EQ(a->egress_ifindex, b->egress_ifindex, what) &&
		    ASSERT_EQ(a->len, b->len, what))
			ASSERT_MEM(a->data, b->data, a->len, what);
	}
out:
	free(vec);
	free(vbuf);
	free(u_res);
	u_res = NULL;
}

static bool set_cfg(struct fx *f, const struct ucfg *cfg)
{
	return fx_set_cfg(f, cfg->exc, cfg->exc, cfg->exc, cfg->l2_miss) &&
	       fx_set_martian(f, cfg->martian_pass ? XNF_ACT_PASS : XNF_ACT_DROP);
}

static bool refresh_all(struct xnf_unf **nfs, int nnf)
{
	char err[256];
	int i;

	for (i = 0; i < nnf; i++) {
		snprintf(err, sizeof(err), "%s", nfs[i]->ops->name);
		if (nfs[i]->ops->refresh &&
		    !ASSERT_OK(nfs[i]->ops->refresh(nfs[i], err, sizeof(err)),
			       err))
			return false;
	}
	return true;
}

/* Userspace NFs named in @chain ("l3fwd,l2fwd"), for ingress ut0. */
static int unf_open(struct fx *f, const char *chain, const char *args,
		    struct xnf_unf **nfs)
{
	struct xnf_unf_env env = {
		.dp = f->dp,
		.ingress_ifindex = f->ifindex[0],
		.default_egress = f->ifindex[0],
		.args = args,
	};
	char buf[64], *name, *save = NULL, err[256];
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", chain);
	for (name = strtok_r(buf, ",", &save); name;
	     name = strtok_r(NULL, ",", &save)) {
		const struct xnf_unf_ops *ops = xnf_unf_find(name);

		snprintf(err, sizeof(err), "%s", name);
		if (!ASSERT_TRUE(ops, name) ||
		    !ASSERT_OK(xnf_unf_new(ops, &env, &nfs[n], err, sizeof(err)),
			       err)) {
			while (n)
				xnf_unf_free(nfs[--n]);
			return -1;
		}
		n++;
	}
	return n;
}

static void unf_close(struct xnf_unf **nfs, int n)
{
	while (n > 0)
		xnf_unf_free(nfs[--n]);
}

/* Runs @cases through XDP @chain and the userspace @chain, under every
 * configuration of @cfgs. */
static void diff_table(struct fx *f, const char *chain, const struct ucase *cases,
		       size_t n, const struct ucfg *cfgs, size_t ncfg)
{
	struct xnf_unf *nfs[XNF_CHAIN_MAX];
	int nnf;
	size_t k;

	if (!fx_chain(f, chain, false, false))
		return;
	nnf = unf_open(f, chain, NULL, nfs);
	if (nnf < 0)
		return;
	for (k = 0; k < ncfg; k++) {
		/* The configuration is copied with the tables. */
		if (!set_cfg(f, &cfgs[k]) || !refresh_all(nfs, nnf))
			break;
		diff_cases(f, nfs, nnf, cases, n, &cfgs[k], chain);
	}
	unf_close(nfs, nnf);
}

/* ---- parser ---- */

static void parse_one(struct fx *f, const __u8 *frame, __u32 len, const char *what)
{
	static struct uref u;

	if (len < ETH_HLEN) {
		/* test_run refuses these; XDP's parser drops them. */
		u_prep(&u, frame, len, f->ifindex[0], f->ifindex[0]);
		ASSERT_EQ(u.u.meta.verdict, XNF_V_DROP, what);
		ASSERT_EQ(u.u.meta.reason, XNF_R_MALFORMED, what);
		return;
	}
	if (!xdp_ref(f, frame, len, &x_res, what))
		return;
	u_prep(&u, frame, len, f->ifindex[0], f->ifindex[0]);
	same_parse(&x_res.meta, &u.u.meta, what);
}

static __u8 p_buf[PKT_MAX];

static void put16(__u8 *p, __u16 v)
{
	v = htons(v);
	memcpy(p, &v, 2);
}

TEST(unf_parse_vs_xdp)
{
	static const struct pkt_spec specs[] = {
		{ .family = 4 },
		{ .family = 4, .proto = IPPROTO_TCP },
		{ .family = 4, .proto = IPPROTO_ICMP },
		{ .family = 4, .proto = IPPROTO_SCTP, .frame_len = 80 },
		{ .family = 4, .proto = 47 /* GRE */ },
		{ .family = 4, .ip_opts = 4 },
		{ .family = 4, .ip_opts = 40, .frame_len = 128 },
		{ .family = 4, .frag_off = 0x2000 },
		{ .family = 4, .frag_off = 0x2010 },
		{ .family = 4, .frag_off = 0x0010 },
		{ .family = 4, .frag_off = 0x4000 },
		{ .family = 4, .nvlans = 1 },
		{ .family = 4, .nvlans = 2 },
		{ .family = 4, .nvlans = 3 },
		{ .family = 4, .frame_len = 42 },
		{ .family = 6 },
		{ .family = 6, .proto = IPPROTO_TCP, .frame_len = 80 },
		{ .family = 6, .proto = IPPROTO_ICMPV6 },
		{ .family = 6, .nvlans = 2, .frame_len = 80 },
		{ .family = 6, .frame_len = 62 },
		{ .family = 0 },
		{ .family = 0, .nvlans = 1 },
		{ .family = 4, .frame_len = 9000 },
		{ .family = 6, .frame_len = 9000 },
	};
	static const __u8 ext_types[] = {
		IPPROTO_HOPOPTS,
		IPPROTO_ROUTING,
		IPPROTO_DSTOPTS,
		IPPROTO_AH,
	};
	struct pkt_ext6 ext[10];
	char what[128];
	size_t s, t;
	int len, n, i;
	struct fx f;

	if (!fx_open(&f))
		return;
	/* xsk changes no parsed field: scratch holds the parser's work. */
	if (!fx_chain(&f, "xsk", false, false))
		goto out;

	for (s = 0; s < ARRAY_SIZE(specs); s++) {
		len = pkt_build(p_buf, sizeof(p_buf), &specs[s]);
		snprintf(what, sizeof(what), "spec %zu, %d bytes", s, len);
		if (!ASSERT_GE(len, ETH_HLEN, what))
			continue;
		parse_one(&f, p_buf, len, what);
		/* Every truncation of the small ones. */
		for (n = 0; len <= 128 && n < len; n++) {
			snprintf(what, sizeof(what), "spec %zu cut to %d of %d",
				 s, n, len);
			parse_one(&f, p_buf, n, what);
		}
		/* Ethernet padding behind the IP packet. */
		memset(p_buf + len, 0, 18);
		snprintf(what, sizeof(what), "spec %zu + 18 bytes padding", s);
		parse_one(&f, p_buf, len + 18, what);
	}

	/* IPv4 header fields. */
	for (i = 0; i < 16; i++) {
		struct pkt_spec sp = { .family = 4, .frame_len = 100 };

		len = pkt_build(p_buf, sizeof(p_buf), &sp);
		p_buf[ETH_HLEN] = 0x40 | i;
		snprintf(what, sizeof(what), "ipv4 ihl %d", i);
		parse_one(&f, p_buf, len, what);
	}
	for (i = 0; i < 100; i += 3) {
		struct pkt_spec sp = { .family = 4, .frame_len = 80 };

		len = pkt_build(p_buf, sizeof(p_buf), &sp);
		put16(p_buf + ETH_HLEN + 2, i);
		snprintf(what, sizeof(what), "ipv4 tot_len %d of 66", i);
		parse_one(&f, p_buf, len, what);
	}
	len = pkt_build(p_buf, sizeof(p_buf), &(struct pkt_spec){ .family = 4 });
	p_buf[ETH_HLEN] = 0x65;
	parse_one(&f, p_buf, len, "version 6 in ipv4");
	len = pkt_build(p_buf, sizeof(p_buf), &(struct pkt_spec){ .family = 6 });
	p_buf[ETH_HLEN] = 0x40;
	parse_one(&f, p_buf, len, "version 4 in ipv6");
	for (i = 0; i < 40; i += 2) {
		len = pkt_build(p_buf, sizeof(p_buf),
				&(struct pkt_spec){ .family = 6 });
		put16(p_buf + ETH_HLEN + 4, i);
		snprintf(what, sizeof(what), "ipv6 payload_len %d of 10", i);
		parse_one(&f, p_buf, len, what);
	}

	/* IPv6 extension headers: 1..10 of each type (the parser walks 8),
	 * with UDP, TCP and ICMPv6 behind, and each cut short. */
	for (t = 0; t < ARRAY_SIZE(ext_types); t++) {
		for (n = 1; n <= 10; n++) {
			static const __u8 protos[] = { IPPROTO_UDP, IPPROTO_TCP,
						       IPPROTO_ICMPV6 };
			size_t pr;

			for (i = 0; i < n; i++)
				ext[i] = (struct pkt_ext6){
					ext_types[t],
					ext_types[t] == IPPROTO_AH ? 4 : (i & 1), 0
				};
			for (pr = 0; pr < ARRAY_SIZE(protos); pr++) {
				struct pkt_spec sp = { .proto = protos[pr],
						       .frame_len = 400 };

				len = pkt_build_ext6(p_buf, sizeof(p_buf), &sp,
						     ext, n);
				snprintf(what, sizeof(what),
					 "%d ext headers %u, proto %u", n,
					 ext_types[t], protos[pr]);
				if (!ASSERT_GE(len, ETH_HLEN, what))
					continue;
				parse_one(&f, p_buf, len, what);
			}
			/* The header length field beyond the payload. */
			len = pkt_build_ext6(p_buf, sizeof(p_buf),
					     &(struct pkt_spec){ .frame_len = 400 },
					     ext, n);
			p_buf[ETH_HLEN + 40 + 1] = 200;
			snprintf(what, sizeof(what),
				 "%d ext headers %u, first too long", n,
				 ext_types[t]);
			parse_one(&f, p_buf, len, what);
		}
	}
	/* Fragment headers: first, middle, later; with UDP behind. */
	{
		static const __u16 offs[] = { 0x0001, 0x0000, 0x0009, 0x0008,
					      0xfff9 };
		struct pkt_ext6 fr[3] = {
			{ IPPROTO_HOPOPTS, 0 },
			{ IPPROTO_FRAGMENT, 0, 0 },
			{ IPPROTO_DSTOPTS, 1 },
		};
		size_t o;

		for (o = 0; o < ARRAY_SIZE(offs); o++) {
			fr[1].frag_off = offs[o];
			for (n = 1; n <= 3; n++) {
				struct pkt_spec sp = { .frame_len = 120 };

				len = pkt_build_ext6(p_buf, sizeof(p_buf), &sp,
						     n == 1 ? fr + 1 : fr, n);
				snprintf(what, sizeof(what),
					 "fragment 0x%04x, %d headers", offs[o],
					 n);
				parse_one(&f, p_buf, len, what);
				for (i = ETH_HLEN + 40;
				     i < len && i < ETH_HLEN + 90; i++) {
					snprintf(what, sizeof(what),
						 "fragment 0x%04x, %d headers, cut to %d",
						 offs[o], n, i);
					parse_one(&f, p_buf, i, what);
				}
			}
		}
	}
	/* ICMP types and codes. */
	for (i = 0; i < 256; i += 51) {
		len = pkt_build(p_buf, sizeof(p_buf),
				&(struct pkt_spec){ .family = 4,
						    .proto = IPPROTO_ICMP });
		p_buf[ETH_HLEN + 20] = i;
		p_buf[ETH_HLEN + 21] = 255 - i;
		snprintf(what, sizeof(what), "icmp type %d", i);
		parse_one(&f, p_buf, len, what);
	}
	/* A UDP header cut by the IP total length (ports unreadable). */
	len = pkt_build(p_buf, sizeof(p_buf), &(struct pkt_spec){ .family = 4 });
	put16(p_buf + ETH_HLEN + 2, 24);
	parse_one(&f, p_buf, len, "udp header beyond tot_len");
out:
	fx_close(&f);
}

/* ---- l3fwd ---- */

/* The l3fwd unit tests' table (fx_l3_table), on 1500-byte ports. */

static const struct ucase l3_cases[] = {
	{ "v4 /24", V4(), FWD },
	{ "v4 only /8", V4(.dst = "10.9.9.9"), FWD },
	{ "v4 /24 beats /8", V4(.dst = "10.1.2.9"), FWD },
	{ "v4 /32 beats /24", V4(.dst = "10.1.2.3"), FWD },
	{ "v4 next to the /32", V4(.dst = "10.1.2.4"), FWD },
	{ "v4 below the /24", V4(.dst = "10.1.1.255"), FWD },
	{ "v4 above the /24", V4(.dst = "10.1.3.0"), FWD },
	{ "v6 /32", V6(), FWD },
	{ "v6 /48 beats /32", V6(.dst = "2001:db8:5::9"), FWD },
	{ "v6 /128", V6(.dst = "2001:db8:5::5"), FWD },
	{ "v6 next to the /128", V6(.dst = "2001:db8:5::4"), FWD },
	{ "v6 above the /48", V6(.dst = "2001:db8:6::5"), FWD },
	{ "v4 TTL 2", V4(.ttl = 2), FWD },
	{ "v4 TTL 255", V4(.ttl = 255), FWD },
	{ "v4 TTL 1", V4(.ttl = 1), PASS(XNF_R_TTL) },
	{ "v4 TTL 0", V4(.ttl_zero = true), PASS(XNF_R_TTL) },
	{ "v6 hop limit 2", V6(.ttl = 2), FWD },
	{ "v6 hop limit 1", V6(.ttl = 1), PASS(XNF_R_TTL) },
	{ "v6 hop limit 0", V6(.ttl_zero = true), PASS(XNF_R_TTL) },
	{ "v4 TTL 1 to an own address", V4(.ttl = 1, .dst = "198.51.100.254"),
	  PASS(XNF_R_LOCAL) },
	{ "v4 TTL 1 without a route", V4(.ttl = 1, .dst = "192.0.2.99"),
	  PASS(XNF_R_NO_ROUTE) },
	{ "v4 TTL 1 to a blackhole", V4(.ttl = 1, .dst = "203.0.113.1"),
	  DROP(XNF_R_BLACKHOLE) },
	{ "v4 no route", V4(.dst = "192.0.2.99"), PASS(XNF_R_NO_ROUTE) },
	{ "v6 no route", V6(.dst = "3fff::1"), PASS(XNF_R_NO_ROUTE) },
	{ "v4 local", V4(.dst = "198.51.100.254"), PASS(XNF_R_LOCAL) },
	{ "v6 local", V6(.dst = "2001:db8:2::fe"), PASS(XNF_R_LOCAL) },
	{ "v4 blackhole", V4(.dst = "203.0.113.127"), DROP(XNF_R_BLACKHOLE) },
	{ "v6 blackhole", V6(.dst = "2001:db8:b::1"), DROP(XNF_R_BLACKHOLE) },
	{ "v4 unreachable", V4(.dst = "203.0.113.129"), PASS(XNF_R_NO_ROUTE) },
	{ "v6 unreachable", V6(.dst = "2001:db8:c::1"), PASS(XNF_R_NO_ROUTE) },
	{ "v4 4 option bytes", V4(.ip_opts = 4), FWD },
	{ "v4 40 option bytes", V4(.ip_opts = 40, .frame_len = 128), FWD },
	{ "v4 first fragment", V4(.frag_off = 0x2000), FWD },
	{ "v4 middle fragment", V4(.frag_off = 0x2010), FWD },
	{ "v4 last fragment", V4(.frag_off = 0x0010), FWD },
	{ "v4 later fragment, TTL 1", V4(.frag_off = 0x0010, .ttl = 1),
	  PASS(XNF_R_TTL) },
	{ "v4 DF", V4(.frag_off = 0x4000), FWD },
	{ "v6 hop-by-hop", V6(EXT(IPPROTO_HOPOPTS), .frame_len = 96), FWD },
	{ "v6 routing", V6(EXT(IPPROTO_ROUTING), .frame_len = 96), FWD },
	{ "v6 first fragment",
	  V6(EXT(IPPROTO_FRAGMENT), .frag_off = 0x0001, .frame_len = 96), FWD },
	{ "v6 later fragment", V6(EXT(IPPROTO_FRAGMENT), .frag_off = 0x0009),
	  FWD },
	{ "v6 all four",
	  V6(.next_ext = 4,
	     .ext = { IPPROTO_HOPOPTS, IPPROTO_DSTOPTS, IPPROTO_ROUTING,
		      IPPROTO_FRAGMENT },
	     .frag_off = 0x0001, .frame_len = 160, .dst = "2001:db8:5::7"),
	  FWD },
	{ "v6 9 destination options (protocol unknown)",
	  .in = { .dst = "2001:db8:5::7", .frame_len = 300 }, .next6 = 9,
	  .ext6 = IPPROTO_DSTOPTS, FWD },
	{ "v6 hop-by-hop, hop limit 1",
	  V6(EXT(IPPROTO_HOPOPTS), .ttl = 1, .frame_len = 96), PASS(XNF_R_TTL) },
	{ "v4 TCP", V4(.proto = IPPROTO_TCP), FWD },
	{ "v4 ICMP", V4(.proto = IPPROTO_ICMP, .dst = "10.1.2.3"), FWD },
	{ "v6 ICMPv6", V6(.proto = IPPROTO_ICMPV6, .dst = "2001:db8:5::1"), FWD },
	{ "ARP", ARP(), PASS(XNF_R_NOT_IP) },
	{ "v4 one VLAN tag", V4(.nvlans = 1), PASS(XNF_R_VLAN) },
	{ "v4 two VLAN tags", V4(.nvlans = 2), PASS(XNF_R_VLAN) },
	{ "v6 two VLAN tags", V6(.nvlans = 2, .frame_len = 80), PASS(XNF_R_VLAN) },
	{ "v4 VLAN, TTL 1", V4(.nvlans = 1, .ttl = 1), PASS(XNF_R_VLAN) },
	{ "v4 three VLAN tags", V4(.nvlans = 3), PASS(XNF_R_NOT_IP) },
	{ "v4 smallest frame", V4(.frame_len = 42), FWD },
	{ "v4 + 18 bytes padding", V4(.frame_len = 42), .pad = 18, FWD },
	{ "v6 smallest frame", V6(.frame_len = 62), FWD },
	{ "v4 1514 bytes to a 1500-byte port",
	  V4(.frame_len = 1514, .dst = "10.1.2.9"), FWD },
	{ "v4 1515 bytes to a 1500-byte port",
	  V4(.frame_len = 1515, .dst = "10.1.2.9"), PASS(XNF_R_FRAG_NEEDED) },
	{ "v6 1515 bytes to a 1500-byte port",
	  V6(.frame_len = 1515, .dst = "2001:db8:5::9"), PASS(XNF_R_FRAG_NEEDED) },
	{ "v4 1515 bytes, TTL 1",
	  V4(.frame_len = 1515, .dst = "10.1.2.9", .ttl = 1), PASS(XNF_R_TTL) },
	{ "v4 1400 bytes on a route of MTU 1400",
	  V4(.frame_len = ETH_HLEN + 1400, .dst = "10.7.0.9"), FWD },
	{ "v4 1401 bytes on a route of MTU 1400",
	  V4(.frame_len = ETH_HLEN + 1401, .dst = "10.7.0.9"),
	  PASS(XNF_R_FRAG_NEEDED) },
	{ "v6 1281 bytes on a route of MTU 1280",
	  V6(.frame_len = ETH_HLEN + 1281, .dst = "2001:db8:7::9"),
	  PASS(XNF_R_FRAG_NEEDED) },
	{ "v4 9000 bytes to a 1500-byte port", V4(.frame_len = 9000),
	  PASS(XNF_R_FRAG_NEEDED) },
	{ "v4 link-local destination", V4(.dst = "169.254.1.1"),
	  PASS(XNF_R_LOCAL) },
	{ "v4 link-local source", V4(.src = "169.254.1.1"), PASS(XNF_R_LOCAL) },
	{ "v6 link-local destination", V6(.dst = "fe80::1"), PASS(XNF_R_LOCAL) },
	{ "v6 link-local source", V6(.src = "fe80::1"), PASS(XNF_R_LOCAL) },
	{ "v4 multicast", V4(.dst = "224.0.0.5"), PASS(XNF_R_LOCAL) },
	{ "v4 limited broadcast", V4(.dst = "255.255.255.255"),
	  PASS(XNF_R_LOCAL) },
	{ "v6 multicast", V6(.dst = "ff02::1"), PASS(XNF_R_LOCAL) },
	{ "v4 to the broadcast MAC", V4(.dmac = MAC_BCAST), PASS(XNF_R_LOCAL) },
	{ "v6 to a group MAC", V6(.dmac = { 0x33, 0x33, 0, 0, 0, 1 }),
	  PASS(XNF_R_LOCAL) },
	{ "v4 cut to 30 bytes", V4(), .cut = 30, DROP(XNF_R_MALFORMED) },
	{ "v6 cut to 60 bytes", V6(), .cut = 60, DROP(XNF_R_MALFORMED) },
	{ "v4 ihl 4", V4(.ihl = 4), DROP(XNF_R_MALFORMED) },
	/* The receive checks (include/uapi/xnf_rx.h): one rule set, run by
	 * both sides. */
	{ "v4 checksum + 1", V4(.ip_csum = PKT_CSUM_PLUS1), DROP(XNF_R_BAD_CSUM) },
	{ "v4 checksum 0x0000", V4(.ip_csum = PKT_CSUM_ZERO),
	  DROP(XNF_R_BAD_CSUM) },
	{ "v4 checksum 0xffff", V4(.ip_csum = PKT_CSUM_FFFF),
	  DROP(XNF_R_BAD_CSUM) },
	{ "v4 40 option bytes, checksum + 1",
	  V4(.ip_opts = 40, .frame_len = 128, .ip_csum = PKT_CSUM_PLUS1),
	  DROP(XNF_R_BAD_CSUM) },
	{ "v4 8 option bytes left out of the checksum",
	  V4(.ip_opts = 8, .ip_csum = PKT_CSUM_NO_OPTS), DROP(XNF_R_BAD_CSUM) },
	{ "v4 bad checksum, TTL 1", V4(.ttl = 1, .ip_csum = PKT_CSUM_PLUS1),
	  DROP(XNF_R_BAD_CSUM) },
	{ "v4 bad checksum, tagged", V4(.nvlans = 1, .ip_csum = PKT_CSUM_PLUS1),
	  PASS(XNF_R_VLAN) },
	{ "v4 source 127.0.0.1", V4(.src = "127.0.0.1"), DROP(XNF_R_MARTIAN) },
	{ "v4 destination 127.0.0.1", V4(.dst = "127.0.0.1"),
	  DROP(XNF_R_MARTIAN) },
	{ "v4 source 224.0.0.1", V4(.src = "224.0.0.1"), DROP(XNF_R_MARTIAN) },
	{ "v4 source 255.255.255.255", V4(.src = "255.255.255.255"),
	  DROP(XNF_R_MARTIAN) },
	{ "v4 source 0.0.0.0", V4(.src = "0.0.0.0"), DROP(XNF_R_MARTIAN) },
	{ "v4 destination 0.0.0.0", V4(.dst = "0.0.0.0"), DROP(XNF_R_MARTIAN) },
	{ "v4 martian source, TTL 1", V4(.src = "127.0.0.1", .ttl = 1),
	  DROP(XNF_R_MARTIAN) },
	{ "v4 0.0.0.0 -> 255.255.255.255",
	  V4(.src = "0.0.0.0", .dst = "255.255.255.255", .dmac = MAC_BCAST),
	  PASS(XNF_R_LOCAL) },
	{ "v4 source 0.0.0.1", V4(.src = "0.0.0.1"), FWD },
	{ "v4 source 240.0.0.1", V4(.src = "240.0.0.1"), FWD },
	{ "v6 source ::1", V6(.src = "::1"), DROP(XNF_R_MARTIAN) },
	{ "v6 destination ::1", V6(.dst = "::1"), DROP(XNF_R_MARTIAN) },
	{ "v6 source ff02::1", V6(.src = "ff02::1"), DROP(XNF_R_MARTIAN) },
	{ "v6 destination ff01::1", V6(.dst = "ff01::1"), DROP(XNF_R_MARTIAN) },
	{ "v6 destination ff00::1", V6(.dst = "ff00::1"), DROP(XNF_R_MARTIAN) },
	{ "v6 source ::", V6(.src = "::"), DROP(XNF_R_MARTIAN) },
	{ "v6 source ::, hop limit 1", V6(.src = "::", .ttl = 1),
	  PASS(XNF_R_TTL) },
	{ "v6 source :: to an own address",
	  V6(.src = "::", .dst = "2001:db8:2::fe"), PASS(XNF_R_LOCAL) },
	{ "v6 source :: without a route", V6(.src = "::", .dst = "3fff::1"),
	  PASS(XNF_R_NO_ROUTE) },
	{ "v6 source ::ffff:192.0.2.1", V6(.src = "::ffff:192.0.2.1"), FWD },
};

static const struct ucfg exc_cfgs[] = {
	{ XNF_ACT_PASS, XNF_ACT_FLOOD, false },
	{ XNF_ACT_DROP, XNF_ACT_FLOOD, false },
	{ XNF_ACT_PASS, XNF_ACT_FLOOD, true },
};

TEST(unf_l3fwd_vs_xdp)
{
	struct fx f;

	if (!fx_open(&f))
		return;
	if (fx_l3_table(&f))
		diff_table(&f, "l3fwd", l3_cases, ARRAY_SIZE(l3_cases),
			   exc_cfgs, ARRAY_SIZE(exc_cfgs));
	fx_close(&f);
}

/* c_frame[@len] through XDP and the userspace @nfs: the same verdict. */
static bool mp_one(struct fx *f, struct xnf_unf **nfs, int nnf, int len,
		   const char *what)
{
	static struct uref u;

	if (!xdp_ref(f, c_frame, len, &x_res, what))
		return false;
	u_prep(&u, c_frame, len, f->ifindex[0], f->ifindex[0]);
	u_chain(nfs, nnf, &u.u, 1);
	return same_verdict(&x_res, &u, f->ifindex[0], what);
}

/* Multipath: the userspace l3fwd picks the next hop XDP picks, for every
 * flow, both families, a reply, fragments, after a next hop is removed
 * from the group and after one lost its neighbour. */
static bool mp_compare(struct fx *f, struct xnf_unf **nfs, int nnf,
		       const char *stage)
{
	static const struct {
		int family;
		const char *dst;
		bool reverse;
	} dirs[] = {
		{ XNF_AF_INET, "198.51.100.1", false },
		{ XNF_AF_INET, "198.51.100.1", true },
		{ XNF_AF_INET6, "2001:db8:2::1", false },
	};
	char what[128];
	size_t d;
	__u32 k;
	int len;

	if (!refresh_all(nfs, nnf))
		return false;
	for (d = 0; d < ARRAY_SIZE(dirs); d++)
		for (k = 0; k < 300; k++) {
			len = fx_mp_flow(c_frame, sizeof(c_frame), dirs[d].family,
					 k, dirs[d].dst, dirs[d].reverse);
			snprintf(what, sizeof(what), "%s: flow %u %s %s", stage,
				 k, dirs[d].reverse ? "from" : "to", dirs[d].dst);
			if (!mp_one(f, nfs, nnf, len, what))
				return false;
		}
	for (k = 0; k < 2; k++) {
		struct pkt_spec s = { .family = 4,
				      .sport = 4000,
				      .frag_off = k ? 0x0010 : 0x2000 };

		len = pkt_build(c_frame, sizeof(c_frame), &s);
		snprintf(what, sizeof(what), "%s: %s fragment", stage,
			 k ? "later" : "first");
		if (!mp_one(f, nfs, nnf, len, what))
			return false;
	}
	return true;
}

TEST(unf_multipath_vs_xdp)
{
	struct xnf_unf *nfs[1];
	struct xnf_route rt;
	struct xnf_nexthop nh;
	__u32 *ids = NULL, n, i;
	struct xnf_nexthop *nhs = NULL;
	int nnf = -1;
	struct fx f;

	if (!fx_open(&f))
		return;
	if (!fx_chain(&f, "l3fwd", false, false) ||
	    !fx_mp_route(&f, "198.51.100.0/24", 0xf) ||
	    !fx_mp_route(&f, "192.0.2.0/24", 0xf) ||
	    !fx_mp_route(&f, "2001:db8:2::/48", 0x7))
		goto out;
	nnf = unf_open(&f, "l3fwd", NULL, nfs);
	if (nnf < 0 || !mp_compare(&f, nfs, nnf, "four paths") ||
	    !fx_mp_route(&f, "198.51.100.0/24", 0xb) ||
	    !mp_compare(&f, nfs, nnf, "path 2 removed"))
		goto out;
	/* Path 1 loses its neighbour: its flows go to the kernel. */
	fx_mp_path(&f, 1, &rt);
	xnf_route_nexthop(&rt, &nh);
	if (!ASSERT_OK(xnf_nh_list(f.dp, &ids, &nhs, &n), "list nexthops"))
		goto out;
	for (i = 0; i < n; i++)
		if (!memcmp(nhs[i].dmac, rt.dmac, 6))
			break;
	nh.state = XNF_NH_KERNEL;
	if (ASSERT_LT(i, n, "path 1's nexthop") &&
	    ASSERT_OK(xnf_nh_update(f.dp, ids[i], &nh), "no neighbour"))
		mp_compare(&f, nfs, nnf, "path 1 without neighbour");
out:
	free(ids);
	free(nhs);
	if (nnf > 0)
		unf_close(nfs, nnf);
	fx_close(&f);
}

/* Every TTL on every route, and IPv4 header checksums at the edges of the
 * incremental update (a high byte of 0xff carries, 0xfeff sums to 0xffff),
 * each frame compared byte for byte with XDP's. */
TEST(unf_l3fwd_ttl_checksum_vs_xdp)
{
	static const char *const dsts[] = {
		"198.51.100.1",
		"10.9.9.9",
		"10.1.2.9",
		"10.1.2.3",
	};
	struct xnf_unf *nfs[1];
	static struct uref u;
	char what[96];
	int nnf, ttl, len, ok = 1;
	__u32 id;
	size_t d;
	struct fx f;

	if (!fx_open(&f))
		return;
	if (!fx_l3_table(&f) || !fx_chain(&f, "l3fwd", false, false))
		goto out;
	nnf = unf_open(&f, "l3fwd", NULL, nfs);
	if (nnf < 0)
		goto out;
	for (d = 0; d < ARRAY_SIZE(dsts) && ok; d++) {
		for (ttl = 0; ttl <= 255 && ok; ttl++) {
			struct pkt_spec s = { .family = 4,
					      .dst = dsts[d],
					      .ttl = ttl,
					      .ttl_zero = !ttl,
					      .sport = 1000 + ttl };

			len = pkt_build(c_frame, sizeof(c_frame), &s);
			snprintf(what, sizeof(what), "to %s TTL %d", dsts[d],
				 ttl);
			ok = xdp_ref(&f, c_frame, len, &x_res, what);
			u_prep(&u, c_frame, len, f.ifindex[0], f.ifindex[0]);
			u_chain(nfs, nnf, &u.u, 1);
			ok = ok && same_verdict(&x_res, &u, f.ifindex[0], what);
		}
	}
	/* The identification field walks the checksum through every value
	 * it can take. */
	for (id = 0; id <= 0xffff && ok; id++) {
		struct pkt_spec s = { .family = 4, .ttl = 64 };

		len = pkt_build(c_frame, sizeof(c_frame), &s);
		put16(c_frame + ETH_HLEN + 4, id);
		pkt_ipv4_csum_set(c_frame, len);
		snprintf(what, sizeof(what), "identification 0x%04x", id);
		ok = xdp_ref(&f, c_frame, len, &x_res, what);
		u_prep(&u, c_frame, len, f.ifindex[0], f.ifindex[0]);
		u_chain(nfs, nnf, &u.u, 1);
		ok = ok && same_verdict(&x_res, &u, f.ifindex[0], what) &&
		     ASSERT_TRUE(pkt_ipv4_csum_ok(u.data, len), what);
	}
	unf_close(nfs, nnf);
out:
	fx_close(&f);
}

/* ---- l2fwd ---- */

#define MAC_ON_UT0  FX_MAC_ON_UT0
#define MAC_ON_UT1  FX_MAC_ON_UT1
#define MAC_ON_UT2  FX_MAC_ON_UT2
#define MAC_UNKNOWN FX_MAC_UNKNOWN
#define MAC_MCAST4  FX_MAC_MCAST4
#define MAC_MCAST6  FX_MAC_MCAST6

/* The l2fwd tests' FDB and routes: fx_l2_table. */

/* l2fwd alone; expectations for l2_miss pass (misses pass). */
static const struct ucase l2_cases[] = {
	{ "v4 FDB hit on ut2", V4(.dmac = MAC_ON_UT2), FWD },
	{ "v6 FDB hit on ut1", V6(.dmac = MAC_ON_UT1), FWD },
	{ "ARP FDB hit on ut1", ARP(.dmac = MAC_ON_UT1), FWD },
	{ "v4 tagged, FDB hit", V4(.dmac = MAC_ON_UT2, .nvlans = 2), FWD },
	{ "v4 hairpin", V4(.dmac = MAC_ON_UT0), DROP(XNF_R_HAIRPIN) },
	{ "v4 unknown MAC", V4(.dmac = MAC_UNKNOWN), ANY },
	{ "v4 broadcast MAC", V4(.dmac = MAC_BCAST), ANY },
	{ "v4 multicast MAC", V4(.dmac = MAC_MCAST4), ANY },
	{ "v6 multicast MAC", V6(.dmac = MAC_MCAST6), ANY },
	{ "ARP broadcast", ARP(.dmac = MAC_BCAST), ANY },
	{ "malformed", V4(.dmac = MAC_ON_UT2), .cut = 20, DROP(XNF_R_MALFORMED) },
};

/* ut0 cross-connected to ut1: everything leaves there, rewritten. */
static const struct ucase xc_cases[] = {
	{ "v4 to a MAC on ut2", V4(.dmac = MAC_ON_UT2), FWD },
	{ "v4 to a MAC on ut0", V4(.dmac = MAC_ON_UT0), FWD },
	{ "v4 to an unknown MAC", V4(.dmac = MAC_UNKNOWN), FWD },
	{ "v6 broadcast", V6(.dmac = MAC_BCAST), FWD },
	{ "ARP", ARP(.dmac = MAC_BCAST), FWD },
	{ "tagged", V4(.nvlans = 2), FWD },
	{ "malformed", V4(), .cut = 20, DROP(XNF_R_MALFORMED) },
};

/* l3fwd, then l2fwd. */
static const struct ucase l32_cases[] = {
	{ "routed, next hop moved to ut2", V4(), FWD },
	{ "routed v6 to ut1", V6(.dst = "2001:db8:2::1"), FWD },
	{ "routed, next hop on the ingress port", V4(.dst = "10.2.0.1"), FWD },
	{ "routed, next hop unknown", V4(.dst = "10.3.0.1"), FWD },
	{ "blackhole", V4(.dst = "203.0.113.1"), DROP(XNF_R_BLACKHOLE) },
	{ "TTL 1", V4(.ttl = 1), PASS(XNF_R_TTL) },
	{ "no route", V4(.dst = "192.0.2.77"), PASS(XNF_R_NO_ROUTE) },
	{ "ARP", ARP(.dmac = MAC_ON_UT1), PASS(XNF_R_NOT_IP) },
	{ "tagged", V4(.nvlans = 1), PASS(XNF_R_VLAN) },
};

static const struct ucfg l2_cfgs[] = {
	{ XNF_ACT_PASS, XNF_ACT_FLOOD },
	{ XNF_ACT_PASS, XNF_ACT_PASS },
	{ XNF_ACT_PASS, XNF_ACT_DROP },
};

TEST(unf_l2fwd_vs_xdp)
{
	struct xnf_xconnect xc = {
		.dmac = { 0x02, 0, 0, 0, 0x0c, 0x01 },
		.smac = { 0x02, 0, 0, 0, 0x0c, 0x02 },
	};
	struct fx f;

	if (!fx_open(&f))
		return;
	if (!fx_l2_table(&f))
		goto out;
	diff_table(&f, "l2fwd", l2_cases, ARRAY_SIZE(l2_cases), l2_cfgs,
		   ARRAY_SIZE(l2_cfgs));
	diff_table(&f, "l3fwd,l2fwd", l32_cases, ARRAY_SIZE(l32_cases), l2_cfgs,
		   ARRAY_SIZE(l2_cfgs));
	xc.ifindex = f.ifindex[1];
	if (!ASSERT_OK(xnf_xconnect_set(f.dp, f.ifindex[0], &xc), "xconnect"))
		goto out;
	diff_table(&f, "l2fwd", xc_cases, ARRAY_SIZE(xc_cases), l2_cfgs, 1);
out:
	fx_close(&f);
}

/* ---- firewall ---- */

/* A packet inside rule @r's fields (half of the time), or around it. */
static void fw_pkt(const struct xnf_fw_rule *r, unsigned int *seed,
		   struct xnf_fw_pkt *p)
{
	bool inside = rand_r(seed) & 1;
	__u32 i, bytes;

	memset(p, 0, sizeof(*p));
	p->family = inside && r->family ?
			    r->family :
			    (rand_r(seed) % 5 ? XNF_AF_INET : XNF_AF_INET6);
	bytes = p->family == XNF_AF_INET ? 4 : 16;
	for (i = 0; i < bytes; i++) {
		p->src[i] = rand_r(seed);
		p->dst[i] = rand_r(seed);
	}
	if (r->family == p->family) {
		/* Near the rule's prefixes: its bits, then random ones. */
		__u32 ls = inside ? r->src_len : rand_r(seed) % (r->src_len + 1);
		__u32 ld = inside ? r->dst_len : rand_r(seed) % (r->dst_len + 1);

		for (i = 0; i < ls; i++)
			p->src[i / 8] = (p->src[i / 8] & ~(0x80 >> (i % 8))) |
					(r->src[i / 8] & (0x80 >> (i % 8)));
		for (i = 0; i < ld; i++)
			p->dst[i / 8] = (p->dst[i / 8] & ~(0x80 >> (i % 8))) |
					(r->dst[i / 8] & (0x80 >> (i % 8)));
	}
	p->proto = inside && (r->flags & XNF_FW_F_PROTO) ?
			   r->proto :
		   rand_r(seed) % 4 ?
			   (rand_r(seed) & 1 ? IPPROTO_TCP : IPPROTO_UDP) :
		   p->family == XNF_AF_INET ? IPPROTO_ICMP :
					      IPPROTO_ICMPV6;
	p->ports = p->proto == IPPROTO_TCP || p->proto == IPPROTO_UDP;
	p->sport = 1 + rand_r(seed) % 65535;
	p->dport = 1 + (rand_r(seed) % 3 ? rand_r(seed) % 1024 :
					   rand_r(seed) % 65535);
	if (inside && (r->flags & XNF_FW_F_SPORT))
		p->sport = r->sport_lo +
			   rand_r(seed) % (r->sport_hi - r->sport_lo + 1);
	if (inside && (r->flags & XNF_FW_F_DPORT))
		p->dport = r->dport_lo +
			   rand_r(seed) % (r->dport_hi - r->dport_lo + 1);
}

static int fw_frame(const struct xnf_fw_pkt *p, __u8 *buf)
{
	char src[64], dst[64];
	struct pkt_spec s = {
		.family = p->family,
		.proto = p->proto,
		.sport = p->sport,
		.dport = p->dport,
		.src = src,
		.dst = dst,
		.frame_len = 96,
	};
	int af = p->family == XNF_AF_INET ? AF_INET : AF_INET6;

	inet_ntop(af, p->src, src, sizeof(src));
	inet_ntop(af, p->dst, dst, sizeof(dst));
	return pkt_build(buf, PKT_MAX, &s);
}

/* @npkts packets around the rules of a generated set of @nrules: the
 * userspace firewall gives the verdict of the linear scan and of the XDP
 * firewall, for either default policy. */
static void fw_vs_linear(__u32 nrules, int npkts)
{
	struct xnf_fw_rule *rules = calloc(nrules, sizeof(*rules));
	static const __u32 defs[] = { XNF_FW_ALLOW, XNF_FW_DROP };
	static struct uref u;
	struct xnf_unf *nfs[1] = { NULL };
	unsigned int seed = nrules;
	int i, matched = 0, bad = 0, len, want, slot;
	struct xnf_fw_pkt p;
	char what[96];
	size_t d;
	struct fx f;

	if (!ASSERT_TRUE(rules, "calloc"))
		return;
	if (!fx_open(&f))
		goto out_free;
	if (!ASSERT_OK(xnf_fw_generate(rules, nrules, 11), "xnf_fw_generate") ||
	    !fx_chain(&f, "firewall", false, false))
		goto out;
	for (d = 0; d < ARRAY_SIZE(defs); d++) {
		if (!fx_fw_load(&f, rules, nrules, defs[d]))
			goto out;
		if (nfs[0] ? !refresh_all(nfs, 1) :
			     unf_open(&f, "firewall", NULL, nfs) != 1)
			goto out;
		for (i = 0; i < npkts && bad < 5; i++) {
			fw_pkt(&rules[rand_r(&seed) % nrules], &seed, &p);
			slot = xnf_fw_linear(rules, nrules, &p);
			want = (slot >= 0 ? rules[slot].action : defs[d]) ==
					       XNF_FW_DROP ?
				       XDP_DROP :
				       XDP_PASS;
			matched += slot >= 0;
			len = fw_frame(&p, c_frame);
			snprintf(what, sizeof(what),
				 "%u rules, default %s, packet %d", nrules,
				 defs[d] ? "drop" : "allow", i);
			if (!ASSERT_GE(len, ETH_HLEN, what) ||
			    !xdp_ref(&f, c_frame, len, &x_res, what))
				break;
			u_prep(&u, c_frame, len, f.ifindex[0], f.ifindex[0]);
			u_chain(nfs, 1, &u.u, 1);
			if (!ASSERT_EQ(x_res.ret, want, what) ||
			    !same_verdict(&x_res, &u, f.ifindex[0], what))
				bad++;
		}
	}
	ASSERT_EQ(bad, 0, "verdicts equal to the linear scan's and XDP's");
	ASSERT_GE(matched, npkts / 2,
		  "a good share of the packets matched a rule");
out:
	unf_close(nfs, nfs[0] ? 1 : 0);
	fx_close(&f);
out_free:
	free(rules);
}

TEST(unf_firewall_vs_linear_1000)
{
	fw_vs_linear(1000, 2000);
}

TEST(unf_firewall_vs_linear_10000)
{
	fw_vs_linear(10000, 1000);
}

#define PROBE 5353

/* What the firewall sees and does not see: ports of fragments, ICMP read
 * as ports, unknown protocols, non-IP, VLAN tags. */
static const struct ucase fw_cases[] = {
	{ "udp to the probe port", V4(.dport = PROBE), DROP(XNF_R_FW_DENY) },
	{ "tcp to the probe port",
	  V6(.proto = IPPROTO_TCP, .dport = PROBE, .frame_len = 80),
	  DROP(XNF_R_FW_DENY) },
	{ "udp to another port", V4(.dport = PROBE + 1), ANY },
	{ "first fragment, probe port", V4(.dport = PROBE, .frag_off = 0x2000),
	  DROP(XNF_R_FW_DENY) },
	{ "later fragment, probe port bytes",
	  V4(.dport = PROBE, .frag_off = 0x0010), ANY },
	{ "v6 later fragment, probe port bytes",
	  V6(EXT(IPPROTO_FRAGMENT), .dport = PROBE, .frag_off = 0x0009), ANY },
	{ "v6 first fragment, probe port",
	  V6(EXT(IPPROTO_FRAGMENT), .dport = PROBE, .frag_off = 0x0001,
	     .frame_len = 96),
	  DROP(XNF_R_FW_DENY) },
	{ "v6 8 ext headers, probe port",
	  .in = { .dport = PROBE, .frame_len = 300 }, .next6 = 8,
	  .ext6 = IPPROTO_DSTOPTS, DROP(XNF_R_FW_DENY) },
	{ "v6 9 ext headers: protocol unknown",
	  .in = { .dport = PROBE + 1, .frame_len = 300 }, .next6 = 9,
	  .ext6 = IPPROTO_DSTOPTS, DROP(XNF_R_FW_DENY) },
	{ "icmp echo (0x0800 is no port)", V4(.proto = IPPROTO_ICMP), ANY },
	{ "icmpv6 echo (0x8000 is no port)", V6(.proto = IPPROTO_ICMPV6), ANY },
	{ "denied source", V4(.src = "192.0.2.99"), DROP(XNF_R_FW_DENY) },
	{ "denied source, tagged", V4(.src = "192.0.2.99", .nvlans = 2),
	  DROP(XNF_R_FW_DENY) },
	{ "denied v6 source", V6(.src = "2001:db8:1::99"), DROP(XNF_R_FW_DENY) },
	{ "ARP", ARP(), ANY },
	{ "v4 options, probe port", V4(.ip_opts = 8, .dport = PROBE),
	  DROP(XNF_R_FW_DENY) },
};

static struct xnf_fw_rule fw_rule(__u32 prio, __u8 action, __u16 flags)
{
	return (struct xnf_fw_rule){
		.prio = prio, .action = action, .flags = flags, .in_use = 1
	};
}

TEST(unf_firewall_vs_xdp)
{
	struct xnf_fw_rule r[6];
	static const struct ucfg cfg = { XNF_ACT_PASS, XNF_ACT_FLOOD };
	struct xnf_unf *nfs[1];
	struct fx f;
	int d;

	r[0] = fw_rule(10, XNF_FW_DROP, XNF_FW_F_PROTO | XNF_FW_F_DPORT);
	r[0].proto = IPPROTO_UDP;
	r[0].dport_lo = r[0].dport_hi = PROBE;
	r[1] = fw_rule(20, XNF_FW_DROP, XNF_FW_F_PROTO | XNF_FW_F_DPORT);
	r[1].proto = IPPROTO_TCP;
	r[1].dport_lo = r[1].dport_hi = PROBE;
	r[2] = fw_rule(30, XNF_FW_DROP, XNF_FW_F_SRC);
	r[2].family = XNF_AF_INET;
	r[2].src_len = 32;
	inet_pton(AF_INET, "192.0.2.99", r[2].src);
	r[3] = fw_rule(40, XNF_FW_DROP, XNF_FW_F_SRC);
	r[3].family = XNF_AF_INET6;
	r[3].src_len = 128;
	inet_pton(AF_INET6, "2001:db8:1::99", r[3].src);
	/* ICMP echo's type and code, read as a source port, would be these. */
	r[4] = fw_rule(50, XNF_FW_DROP, XNF_FW_F_SPORT);
	r[4].sport_lo = r[4].sport_hi = 0x0800;
	r[5] = fw_rule(60, XNF_FW_DROP, XNF_FW_F_SPORT);
	r[5].sport_lo = r[5].sport_hi = 0x8000;

	if (!fx_open(&f))
		return;
	if (!fx_chain(&f, "firewall", false, false) ||
	    !fx_fw_load(&f, r, ARRAY_SIZE(r), XNF_FW_ALLOW) ||
	    unf_open(&f, "firewall", NULL, nfs) != 1)
		goto out;
	/* The default allow (XDP: pass, no reason), then the default drop:
	 * the NR cases must follow it. */
	for (d = 0; d < 2; d++) {
		struct ucase cases[ARRAY_SIZE(fw_cases)];
		size_t i;

		memcpy(cases, fw_cases, sizeof(cases));
		for (i = 0; i < ARRAY_SIZE(cases); i++) {
			if (cases[i].ret != NR)
				continue;
			cases[i].ret = d ? XDP_DROP : XDP_PASS;
			cases[i].reason = d ? XNF_R_FW_DENY : XNF_R_NONE;
			/* Non-IP frames pass whatever the default. */
			if (!cases[i].in.family && !cases[i].next6) {
				cases[i].ret = XDP_PASS;
				cases[i].reason = XNF_R_NONE;
			}
		}
		if (d && !fx_fw_default(&f, XNF_FW_DROP))
			break;
		if (!refresh_all(nfs, 1))
			break;
		diff_cases(&f, nfs, 1, cases, ARRAY_SIZE(cases), &cfg,
			   "firewall");
	}
	{
		/* The UDP header cut by the IP total length. */
		static struct uref u;
		int len = pkt_build(c_frame, sizeof(c_frame),
				    &(struct pkt_spec){ .family = 4,
							.dport = PROBE });

		put16(c_frame + ETH_HLEN + 2, 24);
		pkt_ipv4_csum_set(c_frame, len);
		if (xdp_ref(&f, c_frame, len, &x_res, "udp cut by tot_len")) {
			u_prep(&u, c_frame, len, f.ifindex[0], f.ifindex[0]);
			u_chain(nfs, 1, &u.u, 1);
			ASSERT_FALSE(u.u.meta.flags & XNF_PKT_F_PORTS,
				     "no ports read");
			same_verdict(&x_res, &u, f.ifindex[0],
				     "udp cut by tot_len");
		}
	}
	unf_close(nfs, 1);
out:
	fx_close(&f);
}

/* Rules with iif, tcp flags and icmp type matches (the worker honours
 * them as XDP does): a generated set of @nrules with such matches on
 * half of its rules, and frames with TCP flags and ICMP types around
 * them; the worker's verdict is XDP's. Over 16 rules the tables find the
 * candidates and check each on its extra matches. */
static void fw_extra_vs_xdp(__u32 nrules, int npkts)
{
	struct xnf_fw_rule *rules = calloc(nrules, sizeof(*rules));
	struct xnf_unf *nfs[1] = { NULL };
	unsigned int seed = nrules + 7;
	int i, bad = 0, len;
	static struct uref u;
	struct xnf_fw_pkt p;
	char what[96];
	struct fx f;
	__u32 k;

	if (!ASSERT_TRUE(rules, "calloc"))
		return;
	if (!fx_open(&f))
		goto out_free;
	if (!ASSERT_OK(xnf_fw_generate(rules, nrules, 13), "xnf_fw_generate"))
		goto out;
	for (k = 0; k < nrules; k++) {
		struct xnf_fw_rule *r = &rules[k];

		if (rand_r(&seed) & 1)
			continue;
		if (rand_r(&seed) & 1) {
			r->flags |= XNF_FW_F_IIF;
			r->iif = f.ifindex[rand_r(&seed) & 1];
		}
		if ((r->flags & XNF_FW_F_PROTO) && r->proto == IPPROTO_TCP) {
			r->flags |= XNF_FW_F_TCP_FLAGS;
			r->tcp_mask = 0x12;
			r->tcp_flags = rand_r(&seed) & 0x12;
		}
		if ((r->flags & XNF_FW_F_PROTO) &&
		    ((r->proto == IPPROTO_ICMP && r->family != XNF_AF_INET6) ||
		     (r->proto == IPPROTO_ICMPV6 && r->family != XNF_AF_INET))) {
			r->flags |= XNF_FW_F_ICMP_TYPE;
			r->icmp_type = rand_r(&seed) % 4;
		}
	}
	if (!fx_chain(&f, "firewall", false, false) ||
	    !fx_fw_load(&f, rules, nrules, XNF_FW_ALLOW) ||
	    unf_open(&f, "firewall", NULL, nfs) != 1)
		goto out;
	for (i = 0; i < npkts && bad < 5; i++) {
		size_t l4;

		fw_pkt(&rules[rand_r(&seed) % nrules], &seed, &p);
		len = fw_frame(&p, c_frame);
		if (!ASSERT_GE(len, ETH_HLEN, "frame"))
			break;
		l4 = ETH_HLEN + (p.family == XNF_AF_INET ? 20 : 40);
		if (p.proto == IPPROTO_TCP)
			c_frame[l4 + 13] = rand_r(&seed) & 0x12;
		if (p.proto == IPPROTO_ICMP || p.proto == IPPROTO_ICMPV6)
			c_frame[l4] = rand_r(&seed) % 4;
		snprintf(what, sizeof(what), "%u rules, packet %d", nrules, i);
		if (!xdp_ref(&f, c_frame, len, &x_res, what))
			break;
		u_prep(&u, c_frame, len, f.ifindex[0], f.ifindex[0]);
		u_chain(nfs, 1, &u.u, 1);
		if (!same_verdict(&x_res, &u, f.ifindex[0], what))
			bad++;
	}
	ASSERT_EQ(bad, 0, "the worker's verdicts are XDP's");
	unf_close(nfs, 1);
out:
	fx_close(&f);
out_free:
	free(rules);
}

TEST(unf_firewall_extra_vs_xdp)
{
	fw_extra_vs_xdp(12, 1500);
	fw_extra_vs_xdp(200, 1500);
}

/* A rule set with ct state: the worker refuses to start with it, and
 * when one is applied while it runs it drops every packet until the set
 * loses the match (fail closed). */
TEST(unf_firewall_refuses_ct_state)
{
	const struct xnf_unf_ops *ops = xnf_unf_find("firewall");
	struct xnf_fw_rule ct = fw_rule(10, XNF_FW_ALLOW, XNF_FW_F_CT);
	struct xnf_fw_rule any = fw_rule(10, XNF_FW_ALLOW, 0);
	struct xnf_unf_env env = { 0 };
	struct xnf_unf *nf = NULL;
	static struct uref u;
	char err[512];
	struct fx f;
	int len;

	ct.ct_states = 1 << XNF_CT_UNTRACKED;
	if (!fx_open(&f))
		return;
	env.dp = f.dp;
	env.ingress_ifindex = env.default_egress = f.ifindex[0];
	len = pkt_build(c_frame, sizeof(c_frame),
			&(struct pkt_spec){ .family = 4 });
	if (!fx_fw_load(&f, &ct, 1, XNF_FW_ALLOW) ||
	    !ASSERT_EQ(xnf_unf_new(ops, &env, &nf, err, sizeof(err)),
		       -EOPNOTSUPP, "init refuses a set with ct state"))
		goto out;
	ASSERT_TRUE(strstr(err, "ct state") != NULL, err);
	if (!fx_fw_load(&f, &any, 1, XNF_FW_ALLOW) ||
	    !ASSERT_OK(xnf_unf_new(ops, &env, &nf, err, sizeof(err)), err))
		goto out;
	u_prep(&u, c_frame, len, f.ifindex[0], f.ifindex[0]);
	u_chain(&nf, 1, &u.u, 1);
	ASSERT_EQ(u.u.meta.verdict, XNF_V_REDIRECT, "allowed");
	if (!fx_fw_load(&f, &ct, 1, XNF_FW_ALLOW))
		goto out;
	ASSERT_EQ(nf->ops->refresh(nf, err, sizeof(err)), -EOPNOTSUPP,
		  "refresh refuses a set with ct state");
	u_prep(&u, c_frame, len, f.ifindex[0], f.ifindex[0]);
	u_chain(&nf, 1, &u.u, 1);
	ASSERT_EQ(u.u.meta.verdict, XNF_V_DROP, "fail closed: dropped");
	ASSERT_EQ(u.u.meta.reason, XNF_R_FW_DENY, "as fw_deny");
	if (!fx_fw_load(&f, &any, 1, XNF_FW_ALLOW) ||
	    !ASSERT_OK(nf->ops->refresh(nf, err, sizeof(err)), err))
		goto out;
	u_prep(&u, c_frame, len, f.ifindex[0], f.ifindex[0]);
	u_chain(&nf, 1, &u.u, 1);
	ASSERT_EQ(u.u.meta.verdict, XNF_V_REDIRECT, "allowed again");
out:
	if (nf)
		xnf_unf_free(nf);
	fx_close(&f);
}

/* ---- table generation and refresh ---- */

static __u32 gen_of(struct fx *f)
{
	__u32 gen = 0;

	ASSERT_OK(xnf_tables_gen(f->dp, &gen), "xnf_tables_gen");
	return gen;
}

/* One v4 frame to @dst through @nf: its verdict, reason, egress. */
static void run_one(struct fx *f, struct xnf_unf *nf, const char *dst,
		    __u16 dport, struct uref *u)
{
	struct pkt_spec s = { .family = 4, .dst = dst, .dport = dport };
	int len = pkt_build(c_frame, sizeof(c_frame), &s);

	u_prep(u, c_frame, len, f->ifindex[0], f->ifindex[0]);
	nf->ops->run(nf, &u->u, 1);
}

TEST(unf_refresh)
{
	static const __u8 mac[6] = { 0x02, 0, 0, 0, 0x01, 0xaa };
	struct xnf_xconnect xc = { .dmac = { 2, 0, 0, 0, 0xc, 1 } };
	__u8 addr[4] = { 198, 51, 100, 0 };
	struct xnf_fw_rule r = fw_rule(10, XNF_FW_DROP,
				       XNF_FW_F_PROTO | XNF_FW_F_DPORT);
	struct xnf_unf *l3 = NULL, *fw = NULL;
	struct xnf_route rt = { .type = XNF_RT_UNICAST };
	static struct uref u;
	struct xnf_config cfg;
	__u32 g0, g1, slot = 5, zero = 0, inactive;
	struct xnf_fw_set *set = NULL;
	struct fx f;

	r.proto = IPPROTO_UDP;
	r.dport_lo = r.dport_hi = PROBE;
	if (!fx_open(&f))
		return;
	if (!fx_route4(&f, "198.51.100.0/24", 1, XNF_RT_UNICAST) ||
	    unf_open(&f, "l3fwd", NULL, &l3) != 1 ||
	    unf_open(&f, "firewall", NULL, &fw) != 1)
		goto out;
	run_one(&f, l3, "198.51.100.1", 0, &u);
	ASSERT_EQ(u.u.egress_ifindex, f.ifindex[1],
		  "the route as copied at init");

	/* A route change moves tables_gen; the copy changes on refresh. */
	g0 = gen_of(&f);
	rt.ifindex = f.ifindex[2];
	fx_nh_mac(2, rt.dmac);
	memcpy(rt.smac, f.mac[2], 6);
	if (!ASSERT_OK(xnf_route_set(f.dp, XNF_AF_INET, addr, 24, &rt, BPF_ANY),
		       "replace the route"))
		goto out;
	g1 = gen_of(&f);
	ASSERT_NEQ(g1, g0, "xnf_route_set moved tables_gen");
	run_one(&f, l3, "198.51.100.1", 0, &u);
	ASSERT_EQ(u.u.egress_ifindex, f.ifindex[1], "no refresh: the old copy");
	ASSERT_OK(l3->ops->refresh(l3, NULL, 0), "refresh");
	run_one(&f, l3, "198.51.100.1", 0, &u);
	ASSERT_EQ(u.u.meta.verdict, XNF_V_REDIRECT, "after refresh");
	ASSERT_EQ(u.u.egress_ifindex, f.ifindex[2],
		  "after refresh: the new route");
	ASSERT_MEM(u.data, rt.dmac, 6, "the new route's next hop");

	g0 = gen_of(&f);
	ASSERT_OK(xnf_route_del(f.dp, XNF_AF_INET, addr, 24), "delete the route");
	ASSERT_NEQ(gen_of(&f), g0, "xnf_route_del moved tables_gen");
	ASSERT_OK(l3->ops->refresh(l3, NULL, 0), "refresh");
	run_one(&f, l3, "198.51.100.1", 0, &u);
	ASSERT_EQ(u.u.meta.verdict, XNF_V_PASS, "deleted: no route");
	ASSERT_EQ(u.u.meta.reason, XNF_R_NO_ROUTE, "deleted: no route");

	/* The exception actions are copied too. */
	g0 = gen_of(&f);
	if (!fx_set_cfg(&f, XNF_ACT_DROP, XNF_ACT_PASS, XNF_ACT_PASS,
			XNF_ACT_FLOOD))
		goto out;
	ASSERT_NEQ(gen_of(&f), g0, "xnf_cfg_write moved tables_gen");
	ASSERT_OK(l3->ops->refresh(l3, NULL, 0), "refresh");
	run_one(&f, l3, "198.51.100.1", 0, &u);
	ASSERT_EQ(u.u.meta.verdict, XNF_V_DROP, "no_route drop after refresh");
	if (ASSERT_OK(xnf_cfg_read(f.dp, &cfg), "read cfg"))
		ASSERT_EQ(cfg.no_route, XNF_ACT_DROP, "the config was written");

	/* Every other writer moves it. */
	g0 = gen_of(&f);
	ASSERT_OK(xnf_fdb_set(f.dp, mac, f.ifindex[1]), "fdb set");
	ASSERT_NEQ(gen_of(&f), g0, "xnf_fdb_set moved tables_gen");
	g0 = gen_of(&f);
	ASSERT_OK(xnf_fdb_del(f.dp, mac), "fdb del");
	ASSERT_NEQ(gen_of(&f), g0, "xnf_fdb_del moved tables_gen");
	g0 = gen_of(&f);
	xc.ifindex = f.ifindex[1];
	ASSERT_OK(xnf_xconnect_set(f.dp, f.ifindex[2], &xc), "xconnect set");
	ASSERT_NEQ(gen_of(&f), g0, "xnf_xconnect_set moved tables_gen");
	g0 = gen_of(&f);
	ASSERT_OK(xnf_xconnect_del(f.dp, f.ifindex[2]), "xconnect del");
	ASSERT_NEQ(gen_of(&f), g0, "xnf_xconnect_del moved tables_gen");
	/* Failed writes do not. */
	g0 = gen_of(&f);
	ASSERT_ERR(xnf_fdb_del(f.dp, mac), "delete a missing FDB entry");
	ASSERT_ERR(xnf_route_del(f.dp, XNF_AF_INET, addr, 24),
		   "delete a missing route");
	ASSERT_EQ(gen_of(&f), g0, "failed writes leave tables_gen");

	/* The firewall: a committed rule is used after refresh. */
	run_one(&f, fw, "198.51.100.1", PROBE, &u);
	ASSERT_EQ(u.u.meta.verdict, XNF_V_REDIRECT, "no rules yet");
	g0 = gen_of(&f);
	r.in_use = 1;
	if (!ASSERT_OK(xnf_fw_read(f.dp, &set), "read rules"))
		goto out;
	if (!ASSERT_OK(xnf_fw_set_replace(set, slot, &r), "put rule") ||
	    !ASSERT_OK(xnf_fw_set_policy(set, XNF_FW_ALLOW), "policy"))
		goto out;
	if (!ASSERT_OK(xnf_fw_apply(f.dp, set, NULL, 0), "apply"))
		goto out;
	ASSERT_NEQ(gen_of(&f), g0, "xnf_fw_apply moved tables_gen");
	ASSERT_OK(fw->ops->refresh(fw, NULL, 0), "refresh");
	run_one(&f, fw, "198.51.100.1", PROBE, &u);
	ASSERT_EQ(u.u.meta.verdict, XNF_V_DROP, "the new rule drops");
	ASSERT_EQ(u.u.meta.reason, XNF_R_FW_DENY, "the new rule drops");
	/* A refresh after a change of something else keeps the rules. */
	ASSERT_TRUE(fx_route4(&f, "203.0.113.0/24", 1, XNF_RT_UNICAST), "route");
	ASSERT_OK(fw->ops->refresh(fw, NULL, 0), "refresh, rules unchanged");
	run_one(&f, fw, "198.51.100.1", PROBE, &u);
	ASSERT_EQ(u.u.meta.verdict, XNF_V_DROP, "still drops");

	/* A rule written into the inactive generation but never switched to
	 * (an interrupted `xnf fw`) is not what the dataplane runs: the
	 * refresh reads the active generation only, and the old copy stays
	 * in force. */
	r.dport_lo = r.dport_hi = PROBE + 1;
	slot = 6;
	r.prio = 20;
	if (!ASSERT_OK(bpf_map_lookup_elem(xnf_table_fd(f.dp, XNF_T_FW_ACTIVE),
					   &zero, &inactive) ?
			       -errno :
			       0,
		       "read active"))
		goto out;
	inactive = ((inactive & 1) ^ 1) * XNF_FW_MAX_RULES + slot;
	if (!ASSERT_OK(bpf_map_update_elem(xnf_table_fd(f.dp, XNF_T_FW_RULES),
					   &inactive, &r, BPF_ANY) ?
			       -errno :
			       0,
		       "write rule"))
		goto out;
	xnf_tables_changed(f.dp);
	ASSERT_OK(fw->ops->refresh(fw, NULL, 0),
		  "refresh ignores uncommitted rules");
	run_one(&f, fw, "198.51.100.1", PROBE + 1, &u);
	ASSERT_EQ(u.u.meta.verdict, XNF_V_REDIRECT,
		  "uncommitted rule not in force");
	run_one(&f, fw, "198.51.100.1", PROBE, &u);
	ASSERT_EQ(u.u.meta.verdict, XNF_V_DROP, "committed rule still in force");
	/* Committed, it is taken. */
	ASSERT_OK(xnf_fw_set_replace(set, slot, &r), "put rule");
	ASSERT_OK(xnf_fw_apply(f.dp, set, NULL, 0), "apply");
	ASSERT_OK(fw->ops->refresh(fw, NULL, 0), "refresh");
	run_one(&f, fw, "198.51.100.1", PROBE + 1, &u);
	ASSERT_EQ(u.u.meta.verdict, XNF_V_DROP, "committed: in force");
out:
	xnf_unf_free(l3);
	xnf_unf_free(fw);
	xnf_fw_set_free(set);
	fx_close(&f);
}

/* `xnf -b`: the whole batch goes through, moves tables_gen once per change
 * (the firewall's once, at the end), and the workers' copies see it. */
TEST(unf_batch_cli)
{
	static const char *const lines[] = {
		"route add 198.51.100.0/24 dev ut1 lladdr 02:00:00:00:01:01",
		"route add 203.0.113.0/24 blackhole",
		"fdb add 02:00:00:00:02:aa dev ut2",
		"fw add drop proto udp dport 5353",
		"fw add drop src 192.0.2.99",
		"config set no_route drop",
	};
	char exe[PATH_MAX], file[] = "/tmp/xnf-unf-batchXXXXXX", *slash;
	struct xnf_unf *nfs[3] = { NULL };
	static struct uref u;
	__u32 g0, g1;
	ssize_t n;
	size_t i;
	FILE *fp;
	int fd, len, nnf = 0;
	struct fx f;

	if (!fx_open(&f))
		return;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 8);
	if (!ASSERT_GE(n, 1, "readlink /proc/self/exe"))
		goto out;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	strcpy(slash + 1, "xnf");
	if (access(exe, X_OK)) {
		/* make builds it beside test_unit; `make check` always */
		xnf_test_skip("%s not built", exe);
		goto out;
	}
	nnf = unf_open(&f, "firewall,l3fwd,l2fwd", NULL, nfs);
	fd = mkstemp(file);
	if (nnf != 3 || !ASSERT_GE(fd, 0, "mkstemp"))
		goto out;
	fp = fdopen(fd, "w");
	for (i = 0; fp && i < ARRAY_SIZE(lines); i++)
		fprintf(fp, "%s\n", lines[i]);
	if (fp)
		fclose(fp);
	g0 = gen_of(&f);
	ASSERT_EQ(fx_sh("XNF_PIN_ROOT=%s %s -b %s", FX_ROOT, exe, file), 0,
		  "xnf -b runs the batch");
	unlink(file);
	g1 = gen_of(&f);
	/* Two routes, the FDB entry, one firewall commit, the config. */
	ASSERT_EQ(g1 - g0, 5, "tables_gen moved once per change");
	if (!refresh_all(nfs, nnf))
		goto out;

	len = pkt_build(c_frame, sizeof(c_frame),
			&(struct pkt_spec){ .family = 4 });
	u_prep(&u, c_frame, len, f.ifindex[0], f.ifindex[0]);
	u_chain(nfs, nnf, &u.u, 1);
	ASSERT_EQ(u.u.meta.verdict, XNF_V_REDIRECT,
		  "routed by the batch's route");
	ASSERT_EQ(u.u.egress_ifindex, f.ifindex[1],
		  "routed by the batch's route");
	len = pkt_build(c_frame, sizeof(c_frame),
			&(struct pkt_spec){ .family = 4, .dport = PROBE });
	u_prep(&u, c_frame, len, f.ifindex[0], f.ifindex[0]);
	u_chain(nfs, nnf, &u.u, 1);
	ASSERT_EQ(u.u.meta.reason, XNF_R_FW_DENY, "the batch's first rule");
	len = pkt_build(c_frame, sizeof(c_frame),
			&(struct pkt_spec){ .family = 4, .src = "192.0.2.99" });
	u_prep(&u, c_frame, len, f.ifindex[0], f.ifindex[0]);
	u_chain(nfs, nnf, &u.u, 1);
	ASSERT_EQ(u.u.meta.reason, XNF_R_FW_DENY, "the batch's second rule");
	len = pkt_build(c_frame, sizeof(c_frame),
			&(struct pkt_spec){ .family = 4, .dst = "203.0.113.5" });
	u_prep(&u, c_frame, len, f.ifindex[0], f.ifindex[0]);
	u_chain(nfs, nnf, &u.u, 1);
	ASSERT_EQ(u.u.meta.reason, XNF_R_BLACKHOLE, "the batch's blackhole");
	len = pkt_build(c_frame, sizeof(c_frame),
			&(struct pkt_spec){ .family = 4, .dst = "192.0.2.50" });
	u_prep(&u, c_frame, len, f.ifindex[0], f.ifindex[0]);
	u_chain(nfs, nnf, &u.u, 1);
	ASSERT_EQ(u.u.meta.verdict, XNF_V_DROP,
		  "no route: dropped by the batch's config");
	len = pkt_build(c_frame, sizeof(c_frame),
			&(struct pkt_spec){ .family = 0,
					    .dmac = { 2, 0, 0, 0, 2, 0xaa } });
	u_prep(&u, c_frame, len, f.ifindex[0], f.ifindex[0]);
	nfs[2]->ops->run(nfs[2], &u.u, 1);
	ASSERT_EQ(u.u.egress_ifindex, f.ifindex[2], "the batch's FDB entry");
out:
	unf_close(nfs, nnf > 0 ? nnf : 0);
	fx_close(&f);
}

/* ---- ratelimit ---- */

static __u64 fake_now(void *arg)
{
	return *(__u64 *)arg;
}

static __u8 rl_buf[2][PKT_MAX];

/* A UDP frame of flow @flow into @u. */
static void rl_pkt(struct xnf_upkt *u, __u8 *buf, int flow)
{
	struct pkt_spec s = { .family = flow & 1 ? 6 : 4,
			      .sport = 1000 + flow,
			      .dport = 53 };
	int len = pkt_build(buf, PKT_MAX, &s);

	u->data = buf;
	u->len = len;
	xnf_uparse(buf, len, 1, 0, &u->meta);
	u->meta.verdict = XNF_V_REDIRECT;
	u->egress_ifindex = 1;
}

static struct xnf_unf *rl_new(const char *args)
{
	struct xnf_unf_env env = { .ingress_ifindex = 1,
				   .default_egress = 1,
				   .args = args };
	struct xnf_unf *nf = NULL;

	ASSERT_OK(xnf_unf_new(xnf_unf_find("ratelimit"), &env, &nf, NULL, 0),
		  args);
	return nf;
}

/*
 * Flow A offered at 1,000 pps and flow B at 50 pps for one second, against
 * rate=100,burst=10: the bucket starts full; A drains it and from then on
 * passes one packet per 10 ms. Packet k of A (at k ms) passes while
 * passed <= burst - 1 + rate * k / 1000, so A passes
 *   burst + floor(rate * 999 / 1000) = 10 + 99 = 109 of 1,000,
 * and B (2 tokens per 20 ms, one spent) all 50. A second instance with
 * rate=250,burst=5 passes 5 + 249 = 254 of A. After two idle seconds, 30
 * packets of A at one instant: exactly burst of them pass (the refill
 * stops at the bucket's size).
 */
TEST(unf_ratelimit_exact)
{
	static const struct {
		const char *args;
		__u64 a_pass, b_pass, refill;
	} runs[] = {
		{ "rate=100,burst=10,flows=64", 109, 50, 10 },
		{ "rate=250,burst=5", 254, 50, 5 },
	};
	struct xnf_upkt vec[30];
	__u64 now, a_pass, b_pass, k, i, pass;
	struct xnf_unf_rl_info info;
	struct xnf_unf *nf;
	size_t r;

	for (r = 0; r < ARRAY_SIZE(runs); r++) {
		nf = rl_new(runs[r].args);
		if (!nf)
			return;
		xnf_unf_ratelimit_clock(nf, fake_now, &now);
		a_pass = b_pass = 0;
		for (k = 0; k < 1000; k++) {
			__u32 n = 0;

			now = 5000000000ULL + k * 1000000;
			rl_pkt(&vec[n++], rl_buf[0], 0); /* A */
			if (k % 20 == 0)
				rl_pkt(&vec[n++], rl_buf[1], 1); /* B, IPv6 */
			nf->ops->run(nf, vec, n);
			a_pass += vec[0].meta.verdict == XNF_V_REDIRECT;
			if (n == 2)
				b_pass += vec[1].meta.verdict == XNF_V_REDIRECT;
			if (vec[0].meta.verdict == XNF_V_DROP &&
			    !ASSERT_EQ(vec[0].meta.reason, XNF_R_POLICED,
				       runs[r].args))
				break;
		}
		ASSERT_EQ(a_pass, runs[r].a_pass, runs[r].args);
		ASSERT_EQ(b_pass, runs[r].b_pass, runs[r].args);

		now += 2000000000ULL;
		for (i = 0; i < 30; i++)
			rl_pkt(&vec[i], rl_buf[0], 0);
		/* (all 30 point at one buffer: only the verdicts matter) */
		nf->ops->run(nf, vec, 30);
		for (i = 0, pass = 0; i < 30; i++)
			pass += vec[i].meta.verdict == XNF_V_REDIRECT;
		ASSERT_EQ(pass, runs[r].refill,
			  "refilled to the burst, not beyond");

		xnf_unf_ratelimit_info(nf, &info);
		ASSERT_EQ(info.flows, 2, "two flows");
		ASSERT_EQ(info.evictions, 0, "no eviction");
		xnf_unf_free(nf);
	}

	/* Not policed: non-IP frames and what an NF before decided. */
	nf = rl_new("rate=1,burst=1");
	if (!nf)
		return;
	xnf_unf_ratelimit_clock(nf, fake_now, &now);
	now = 1;
	for (i = 0; i < 3; i++) {
		int len = pkt_build(rl_buf[0], PKT_MAX,
				    &(struct pkt_spec){ .family = 0 });

		vec[i].data = rl_buf[0];
		vec[i].len = len;
		xnf_uparse(rl_buf[0], len, 1, 0, &vec[i].meta);
		vec[i].meta.verdict = XNF_V_REDIRECT;
	}
	nf->ops->run(nf, vec, 3);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(vec[i].meta.verdict, XNF_V_REDIRECT,
			  "ARP is not policed");
	for (i = 0; i < 3; i++) {
		rl_pkt(&vec[i], rl_buf[0], 0);
		if (i == 1)
			vec[i].meta.verdict = XNF_V_PASS;
	}
	nf->ops->run(nf, vec, 3);
	ASSERT_EQ(vec[0].meta.verdict, XNF_V_REDIRECT, "first packet: the burst");
	ASSERT_EQ(vec[1].meta.verdict, XNF_V_PASS, "decided before: left alone");
	ASSERT_EQ(vec[2].meta.verdict, XNF_V_DROP, "bucket empty");
	xnf_unf_free(nf);
}

/*
 * The table is bounded: flows=16 holds 16 flows, in memory allocated
 * once at init. 1,000 new flows one after the other, each while a hot
 * flow H keeps sending: every new flow passes (a fresh bucket), the table
 * never holds more than 16, 985 flows are evicted, and H, used most
 * recently in its bucket, is never evicted: its empty bucket is kept, so
 * it never passes again (an evicted H would come back with a full one).
 */
TEST(unf_ratelimit_eviction)
{
	struct xnf_unf_rl_info info, info0;
	struct xnf_upkt vec[2];
	__u64 now = 1000, k;
	__u64 h_pass = 0, new_pass = 0;
	struct xnf_unf *nf;

	nf = rl_new("rate=1,burst=2,flows=16");
	if (!nf)
		return;
	xnf_unf_ratelimit_clock(nf, fake_now, &now);
	xnf_unf_ratelimit_info(nf, &info0);
	ASSERT_EQ(info0.capacity, 16, "capacity");
	for (k = 0; k < 2; k++) {
		rl_pkt(&vec[0], rl_buf[0], 0);
		nf->ops->run(nf, vec, 1);
	}
	for (k = 1; k <= 1000; k++) {
		now += 1000; /* 1 us: H earns no token in a millisecond */
		rl_pkt(&vec[0], rl_buf[0], 0);
		rl_pkt(&vec[1], rl_buf[1], 2 * (int)k);
		nf->ops->run(nf, vec, 2);
		h_pass += vec[0].meta.verdict == XNF_V_REDIRECT;
		new_pass += vec[1].meta.verdict == XNF_V_REDIRECT;
		xnf_unf_ratelimit_info(nf, &info);
		if (!ASSERT_LE(info.flows, info.capacity, "bounded"))
			break;
	}
	ASSERT_EQ(h_pass, 0, "the hot flow kept its empty bucket");
	ASSERT_EQ(new_pass, 1000, "every new flow starts with a full bucket");
	ASSERT_EQ(info.flows, 16, "the table is full");
	ASSERT_EQ(info.evictions, 1001 - 16, "the others were evicted");
	ASSERT_EQ(info.bytes, info0.bytes, "no memory added");
	xnf_unf_free(nf);

	/* flows= rounds up to a power of two of at least 8. */
	nf = rl_new("flows=100");
	if (nf) {
		xnf_unf_ratelimit_info(nf, &info);
		ASSERT_EQ(info.capacity, 128, "flows=100 -> 128");
		ASSERT_EQ(info.rate, 10000, "default rate");
		ASSERT_EQ(info.burst, 100, "default burst");
		xnf_unf_free(nf);
	}
}

/* ---- macswap, registry ---- */

TEST(unf_macswap)
{
	static const struct pkt_spec specs[] = {
		{ .family = 4 },
		{ .family = 6, .nvlans = 1, .frame_len = 80 },
		{ .family = 0 },
	};
	struct xnf_unf_env env = { .ingress_ifindex = 3, .default_egress = 7 };
	struct xnf_upkt vec[ARRAY_SIZE(specs) + 1];
	static __u8 bufs[ARRAY_SIZE(specs) + 1][256], want[256], orig[20];
	struct xnf_unf *nf = NULL;
	size_t i;
	int len[ARRAY_SIZE(specs) + 1];

	if (!ASSERT_OK(xnf_unf_new(xnf_unf_find("macswap"), &env, &nf, NULL, 0),
		       "new"))
		return;
	for (i = 0; i < ARRAY_SIZE(specs); i++) {
		struct pkt_spec s = specs[i];

		memcpy(s.dmac, (__u8[]){ 2, 0, 0, 0, 0xd, (__u8)i }, 6);
		memcpy(s.smac, (__u8[]){ 2, 0, 0, 0, 0x5, (__u8)i }, 6);
		len[i] = pkt_build(bufs[i], sizeof(bufs[i]), &s);
		vec[i].data = bufs[i];
		vec[i].len = len[i];
		xnf_uparse(bufs[i], len[i], 3, 0, &vec[i].meta);
		vec[i].meta.verdict = XNF_V_REDIRECT;
		vec[i].egress_ifindex = 3;
	}
	/* A malformed frame: dropped by the parser, left alone. */
	len[i] = 20;
	memcpy(bufs[i], bufs[0], 20);
	memcpy(orig, bufs[0], 20);
	vec[i].data = bufs[i];
	vec[i].len = 20;
	xnf_uparse(bufs[i], 20, 3, 0, &vec[i].meta);
	nf->ops->run(nf, vec, ARRAY_SIZE(vec));
	for (i = 0; i < ARRAY_SIZE(specs); i++) {
		struct pkt_spec s = specs[i];

		memcpy(s.dmac, (__u8[]){ 2, 0, 0, 0, 0xd, (__u8)i }, 6);
		memcpy(s.smac, (__u8[]){ 2, 0, 0, 0, 0x5, (__u8)i }, 6);
		pkt_build(want, sizeof(want), &s);
		/* The frame as built, with its two MAC fields exchanged. */
		memcpy(want, s.smac, 6);
		memcpy(want + 6, s.dmac, 6);
		ASSERT_EQ(vec[i].meta.verdict, XNF_V_REDIRECT,
			  "macswap redirects");
		ASSERT_EQ(vec[i].egress_ifindex, 7, "to the default egress");
		ASSERT_EQ(vec[i].len, len[i], "length unchanged");
		ASSERT_MEM(vec[i].data, want, len[i],
			   "MACs swapped, nothing else");
	}
	ASSERT_EQ(vec[i].meta.verdict, XNF_V_DROP, "malformed stays dropped");
	ASSERT_MEM(bufs[i], orig, 20, "malformed left alone");
	xnf_unf_free(nf);
}

TEST(unf_registry)
{
	static const char *const names[] = {
		"firewall", "l3fwd", "l2fwd", "macswap", "ratelimit",
	};
	static const char *const bad[] = {
		"rate=0", "rate=abc", "rate=-1",	 "burst=",
		"foo=1",  "rate",     "rate=1000000001", "flows=99999999",
	};
	struct xnf_unf_env env = { .ingress_ifindex = 1, .default_egress = 1 };
	struct xnf_unf *nf;
	size_t i, n = 0;
	char err[256];

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		const struct xnf_unf_ops *ops = xnf_unf_find(names[i]);

		if (!ASSERT_TRUE(ops, names[i]))
			continue;
		ASSERT_TRUE(ops->name && ops->help && ops->run, names[i]);
		ASSERT_EQ(strcmp(ops->name, names[i]), 0, names[i]);
	}
	while (xnf_unf_registry[n])
		n++;
	ASSERT_EQ(n, ARRAY_SIZE(names), "registry size");
	ASSERT_TRUE(!xnf_unf_find("xsk") && !xnf_unf_find(""), "unknown names");
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		env.args = bad[i];
		nf = NULL;
		err[0] = '\0';
		ASSERT_EQ(xnf_unf_new(xnf_unf_find("ratelimit"), &env, &nf, err,
				      sizeof(err)),
			  -EINVAL, bad[i]);
		ASSERT_TRUE(!nf, bad[i]);
		/* What is wrong, for the worker to report. */
		ASSERT_NEQ(err[0], '\0', bad[i]);
	}
}

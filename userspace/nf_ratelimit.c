// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * nf_ratelimit.c - a per-flow policer: every 5-tuple (addresses, protocol,
 * ports) gets a token bucket of `burst` packets refilled at `rate` packets
 * per second; a packet that finds its bucket empty is dropped (policed).
 * Non-IP frames are not policed. Packets without readable ports (ICMP,
 * later fragments) share the flow of ports 0.
 *
 * The NF XDP could not do well: an XDP policer needs a hash map shared by
 * every CPU (an LRU hash: a spinlock per update) or per-CPU buckets (a flow
 * spread over queues gets the rate once per CPU), and a clock read per
 * packet. Here each worker owns its flows: a plain hash table, no locks,
 * no atomics, the clock read once per vector.
 *
 * The table: `flows` entries (rounded up to a power of two, at least 8)
 * in buckets of 8 ways, allocated at init; nothing is allocated per
 * packet. A new flow takes a free way of its bucket or evicts the way used
 * least recently (LRU within the bucket). An evicted flow that comes back
 * starts with a full bucket; that is exact for a flow idle for
 * burst / rate seconds or more (its bucket would be full by then), and
 * lenient for one evicted earlier, which only happens with more active
 * flows than `flows`.
 *
 * Tokens are counted in nano-packets, so a refill of (elapsed ns x rate)
 * is exact integer arithmetic: no drift, and the pass / drop counts of a
 * given arrival pattern are exact (the unit tests check them).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xnf.h"
#include "unf_priv.h"

#define RL_WAYS	     8
#define RL_NANO	     1000000000ULL /* nano-packets per packet */
#define RL_MAX_RATE  1000000000ULL /* keeps elapsed x rate < 2^64 */
#define RL_MAX_BURST 1000000000ULL
#define RL_MAX_FLOWS (1ULL << 22)

struct rl_key {
	__u8 src[16], dst[16]; /* IPv4 in the first 4 bytes */
	__be16 sport, dport;
	__u8 proto, family;
	__u8 pad[2];
};

_Static_assert(sizeof(struct rl_key) == 40, "rl_key is hashed as 5 words");

struct rl_ent {
	struct rl_key key;
	__u64 tokens; /* nano-packets */
	__u64 last;   /* ns of the last refill */
};

struct rl_bucket {
	__u32 tag[RL_WAYS]; /* hash | 1; 0: free way */
	struct rl_ent e[RL_WAYS];
};

struct rl {
	struct rl_bucket *b;
	__u32 mask; /* buckets - 1 */
	__u64 rate, burst;
	__u64 cap;		 /* burst x RL_NANO */
	__u64 fill_ns;		 /* refill from empty to cap */
	__u64 (*now)(void *arg); /* NULL: CLOCK_MONOTONIC */
	void *now_arg;
	__u64 flows, evictions;
	size_t bytes;
};

static int rl_init(struct xnf_unf *nf, const struct xnf_unf_env *env,
		   char *errbuf, size_t errlen)
{
	static const char *const keys[] = { "rate", "burst", "flows" };
	static const __u64 max[] = { RL_MAX_RATE, RL_MAX_BURST, RL_MAX_FLOWS };
	__u64 val[] = { 10000, 100, 65536 };
	struct rl *rl = nf->priv;
	__u64 nb = 1;
	int err;

	err = xnf_unf_args(env->args, keys, val, max, 3, errbuf, errlen);
	if (err)
		return err;
	rl->rate = val[0];
	rl->burst = val[1];
	while (nb * RL_WAYS < val[2])
		nb <<= 1;
	rl->mask = nb - 1;
	rl->cap = rl->burst * RL_NANO;
	/* Rounded up: after fill_ns the bucket is full for sure. */
	rl->fill_ns = (rl->cap + rl->rate - 1) / rl->rate;
	rl->bytes = nb * sizeof(*rl->b);
	rl->b = aligned_alloc(64, (rl->bytes + 63) & ~(size_t)63);
	if (!rl->b)
		return xnf_errf(errbuf, errlen, -ENOMEM,
				"cannot allocate %zu bytes for %llu flows; "
				"give fewer flows=",
				rl->bytes, (unsigned long long)(nb * RL_WAYS));
	memset(rl->b, 0, rl->bytes);
	return 0;
}

static void rl_fini(struct xnf_unf *nf)
{
	struct rl *rl = nf->priv;

	free(rl->b);
	rl->b = NULL;
}

static inline __u64 rl_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static inline __u32 rl_hash(const struct rl_key *k)
{
	__u64 w[5], h = 0;
	int i;

	memcpy(w, k, sizeof(w));
	for (i = 0; i < 5; i++)
		h = (h ^ w[i]) * 0x9e3779b97f4a7c15ULL;
	return (__u32)(h >> 32) | 1;
}

static inline void rl_key_of(const struct xnf_upkt *pk, struct rl_key *k)
{
	const struct xnf_pkt *p = &pk->meta;
	const __u8 *l3 = pk->data + p->l3_off;

	memset(k, 0, sizeof(*k));
	if (p->family == XNF_AF_INET) {
		memcpy(k->src, l3 + 12, 4);
		memcpy(k->dst, l3 + 16, 4);
	} else {
		memcpy(k->src, l3 + 8, 16);
		memcpy(k->dst, l3 + 24, 16);
	}
	if (p->flags & XNF_PKT_F_PORTS) {
		k->sport = p->sport;
		k->dport = p->dport;
	}
	k->proto = p->l4_proto;
	k->family = p->family;
}

/* The flow's entry, made (or taken from the least recently used flow of
 * its bucket) if it has none. */
static inline struct rl_ent *rl_flow(struct rl *rl, const struct rl_key *k,
				     __u64 now)
{
	__u32 h = rl_hash(k), w, victim = 0;
	struct rl_bucket *b = &rl->b[(h >> 3) & rl->mask];
	struct rl_ent *e;

	for (w = 0; w < RL_WAYS; w++)
		if (b->tag[w] == h && !memcmp(&b->e[w].key, k, sizeof(*k)))
			return &b->e[w];
	for (w = 0; w < RL_WAYS; w++) {
		if (!b->tag[w]) {
			victim = w;
			rl->flows++;
			goto fill;
		}
		if (b->e[w].last < b->e[victim].last)
			victim = w;
	}
	rl->evictions++;
fill:
	b->tag[victim] = h;
	e = &b->e[victim];
	e->key = *k;
	e->tokens = rl->cap;
	e->last = now;
	return e;
}

static void rl_run(struct xnf_unf *nf, struct xnf_upkt *pkts, __u32 n)
{
	struct rl *rl = nf->priv;
	__u64 now = rl->now ? rl->now(rl->now_arg) : rl_mono_ns();
	struct rl_key k;
	__u32 i;

	for (i = 0; i < n; i++) {
		struct xnf_upkt *pk = &pkts[i];
		struct rl_ent *e;
		__u64 el;

		if (xnf_upkt_decided(pk) || pk->meta.family == XNF_AF_NONE)
			continue;
		rl_key_of(pk, &k);
		e = rl_flow(rl, &k, now);
		el = now > e->last ? now - e->last : 0;
		if (el >= rl->fill_ns)
			e->tokens = rl->cap;
		else if (el)
			e->tokens = e->tokens + el * rl->rate > rl->cap ?
					    rl->cap :
					    e->tokens + el * rl->rate;
		if (now > e->last)
			e->last = now;
		if (e->tokens >= RL_NANO)
			e->tokens -= RL_NANO;
		else
			xnf_upkt_exception(pk, XNF_ACT_DROP, XNF_R_POLICED);
	}
}

void xnf_unf_ratelimit_clock(struct xnf_unf *nf, __u64 (*now)(void *arg),
			     void *arg)
{
	struct rl *rl = nf->priv;

	rl->now = now;
	rl->now_arg = arg;
}

void xnf_unf_ratelimit_info(const struct xnf_unf *nf, struct xnf_unf_rl_info *i)
{
	const struct rl *rl = nf->priv;

	i->capacity = (__u64)(rl->mask + 1) * RL_WAYS;
	i->flows = rl->flows;
	i->evictions = rl->evictions;
	i->rate = rl->rate;
	i->burst = rl->burst;
	i->bytes = rl->bytes;
}

const struct xnf_unf_ops xnf_unf_ratelimit_ops = {
	.name = "ratelimit",
	.help = "per-flow (5-tuple) token-bucket policer, drops counted as "
		"policed; options rate=PPS (10000), burst=PACKETS (100), "
		"flows=N (65536, a power of two >= 8)",
	.priv_size = sizeof(struct rl),
	.init = rl_init,
	.fini = rl_fini,
	.run = rl_run,
};

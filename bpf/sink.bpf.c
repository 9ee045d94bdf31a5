// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * sink.bpf.c - the traffic sink's XDP program (tools/sink.c).
 *
 * Frames that carry the generator's probe (struct xnf_probe or
 * xnf_probe_short at the start of the UDP or TCP payload of an
 * unfragmented IPv4 or IPv6 packet) are counted, timed and dropped.
 * Everything else (ARP, neighbour discovery, other traffic) is counted as
 * "no probe" and passed to the kernel.
 *
 * Counters and the latency histogram are per CPU, sequence numbers per
 * receive queue (see XNF_SINK_QUEUES).
 */
#include "common.bpf.h"
#include "xnf_traffic.h"

const volatile struct xnf_sink_cfg cfg = {};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xnf_sink_stats);
} xnf_sink_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xnf_sink_hist);
} xnf_sink_hist SEC(".maps");

struct sink_seq {
	struct bpf_spin_lock lock;
	__u32 pad;
	struct xnf_sink_seq s;
};
_Static_assert(__builtin_offsetof(struct sink_seq, s) == XNF_SINK_SEQ_OFF,
	       "sequence state offset");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XNF_SINK_QUEUES);
	__type(key, __u32);
	__type(value, struct sink_seq);
} xnf_sink_seq SEC(".maps");

/* UDP/TCP segments up to this long have their checksum verified (csum);
 * longer ones (jumbo frames: the program is xdp.frags, so it attaches to
 * devices with any MTU) cannot come from the generator and are not. */
#define L4_CHECK_MAX 1536

struct l4buf {
	__u8 b[L4_CHECK_MAX + 4];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct l4buf);
} xnf_sink_buf SEC(".maps");

static __always_inline __u32 sum32(__u32 v)
{
	return (v & 0xffff) + (v >> 16);
}

static __always_inline __u16 fold(__u64 s)
{
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return s;
}

static __always_inline __u32 msb64(__u64 v)
{
	__u32 r = 0;

	if (v >> 32) {
		v >>= 32;
		r += 32;
	}
	if (v >> 16) {
		v >>= 16;
		r += 16;
	}
	if (v >> 8) {
		v >>= 8;
		r += 8;
	}
	if (v >> 4) {
		v >>= 4;
		r += 4;
	}
	if (v >> 2) {
		v >>= 2;
		r += 2;
	}
	if (v >> 1)
		r += 1;
	return r;
}

/* The log-linear bucket of a latency (see XNF_LAT_BUCKETS). */
static __always_inline __u32 lat_bucket(__u64 ns)
{
	__u32 m;

	if (ns < 2 * XNF_LAT_SUB)
		return ns;
	m = msb64(ns);
	if (m >= XNF_LAT_MAX_BITS)
		return XNF_LAT_BUCKETS - 1;
	return (m - XNF_LAT_SUB_BITS + 1) * XNF_LAT_SUB +
	       (__u32)(ns >> (m - XNF_LAT_SUB_BITS)) - XNF_LAT_SUB;
}

/* Sum of the UDP/TCP segment at @off, @len bytes long, copied out of the
 * frame (bpf_csum_diff takes at most 512 bytes at a time). 0, 1 when the
 * segment is too long to be checked (not the generator's), -1 on error. */
static __always_inline int l4_sum(struct xdp_md *ctx, __u32 off, __u32 len,
				  __u64 *sum)
{
	__u32 zero = 0, i, n;
	struct l4buf *buf;
	__s64 s;

	if (len > L4_CHECK_MAX)
		return 1;
	buf = bpf_map_lookup_elem(&xnf_sink_buf, &zero);
	if (!buf || len < 8)
		return -1;
	/* bpf_csum_diff wants whole 32-bit words: the last one is padded
	 * with zeroes */
	*(__u32 *)&buf->b[len & ~3u] = 0;
	if (bpf_xdp_load_bytes(ctx, off, buf->b, len))
		return -1;
#pragma unroll
	for (i = 0; i < 3; i++) {
		__u32 at = i * 512;

		if (at >= len)
			break;
		n = (len - at + 3) & ~3u;
		if (n > 512)
			n = 512;
		s = bpf_csum_diff(NULL, 0, (void *)&buf->b[at], n, 0);
		if (s < 0)
			return -1;
		*sum += (__u32)s;
	}
	return 0;
}

static __always_inline void seq_update(struct xnf_sink_seq *s, __u64 seq,
				       int is_short)
{
	struct xnf_seq_block *blk;
	__u64 bit;

	if (!s->started) {
		s->started = 1;
		s->min_seq = seq;
		s->max_seq = seq;
	} else if (is_short) {
		seq = s->max_seq + (__s64)(__s32)((__u32)seq - (__u32)s->max_seq);
	}
	blk = &s->win[(seq >> 6) & (XNF_SINK_WINDOW - 1)];
	bit = 1ull << (seq & 63);
	if (blk->block == seq >> 6) {
		if (blk->bits & bit) {
			s->duplicates++;
			return;
		}
		blk->bits |= bit;
	} else if (blk->block < seq >> 6) {
		blk->block = seq >> 6;
		blk->bits = bit;
	} else {
		s->beyond_window++;
	}
	if (seq < s->max_seq)
		s->reordered++;
	if (seq > s->max_seq)
		s->max_seq = seq;
	if (seq < s->min_seq)
		s->min_seq = seq;
}

static __always_inline void count_seq(__u32 queue, __u64 seq, int is_short)
{
	__u32 key = queue < XNF_SINK_QUEUES - 1 ? queue : XNF_SINK_QUEUES - 1;
	struct sink_seq *v;

	v = bpf_map_lookup_elem(&xnf_sink_seq, &key);
	if (!v)
		return;
	if (key < XNF_SINK_QUEUES - 1) {
		seq_update(&v->s, seq, is_short);
	} else {
		bpf_spin_lock(&v->lock);
		seq_update(&v->s, seq, is_short);
		bpf_spin_unlock(&v->lock);
	}
}

SEC("xdp.frags")
int xnf_sink(struct xdp_md *ctx)
{
	__u8 *d = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	__u64 now = bpf_ktime_get_ns(), seq, ts, lat, sum = 0;
	__u32 len = bpf_xdp_get_buff_len(ctx), zero = 0, ihl = 0, l4len, i, b;
	struct xnf_sink_stats *st;
	struct xnf_sink_hist *h;
	struct ethhdr *eth = (void *)d;
	__u8 *l3 = d + ETH_HLEN, *l4, *pay;
	int is_short, v6;
	__u8 proto;

	st = bpf_map_lookup_elem(&xnf_sink_stats, &zero);
	h = bpf_map_lookup_elem(&xnf_sink_hist, &zero);
	if (!st || !h)
		return XDP_PASS;

	if ((void *)(eth + 1) > (void *)end)
		goto no_probe;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *iph = (void *)l3;

		if ((void *)(iph + 1) > (void *)end)
			goto no_probe;
		ihl = iph->ihl * 4;
		if (ihl < sizeof(*iph) ||
		    (iph->frag_off & bpf_htons(XNF_IP_MF | XNF_IP_OFFSET)))
			goto no_probe;
		proto = iph->protocol;
		l4len = bpf_ntohs(iph->tot_len) - ihl;
		l4 = l3 + ihl;
		v6 = 0;
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6h = (void *)l3;

		if ((void *)(ip6h + 1) > (void *)end)
			goto no_probe;
		proto = ip6h->nexthdr;
		l4len = bpf_ntohs(ip6h->payload_len);
		l4 = l3 + sizeof(*ip6h);
		v6 = 1;
	} else {
		goto no_probe;
	}
	if (proto == IPPROTO_UDP) {
		pay = l4 + sizeof(struct udphdr);
	} else if (proto == IPPROTO_TCP) {
		if (l4 + sizeof(struct tcphdr) > end)
			goto no_probe;
		pay = l4 + (((struct tcphdr *)l4)->doff & 0xf) * 4;
	} else {
		goto no_probe;
	}
	if (pay + sizeof(struct xnf_probe_short) > end)
		goto no_probe;
	if (*(__u32 *)pay == bpf_htonl(XNF_PROBE_MAGIC) &&
	    pay + sizeof(struct xnf_probe) <= end) {
		seq = ((struct xnf_probe *)pay)->seq;
		ts = ((struct xnf_probe *)pay)->ts_ns;
		is_short = 0;
	} else if (*(__u32 *)pay == bpf_htonl(XNF_PROBE_MAGIC_SHORT)) {
		seq = ((struct xnf_probe_short *)pay)->seq;
		ts = ((struct xnf_probe_short *)pay)->ts_ns;
		is_short = 1;
	} else {
		goto no_probe;
	}

	st->packets++;
	st->bytes += len + 4;
	if (!st->first_ns)
		st->first_ns = now;
	st->last_ns = now;

	if (!v6) {
		sum = 0;
		if (ihl == sizeof(struct iphdr) &&
		    l3 + sizeof(struct iphdr) <= end) {
#pragma unroll
			for (i = 0; i < 5; i++)
				sum += sum32(*(__u32 *)(l3 + 4 * i));
		} else {
#pragma unroll
			for (i = 0; i < 30; i++) {
				if (2 * i >= ihl || l3 + 2 * i + 2 > end)
					break;
				sum += *(__u16 *)(l3 + 2 * i);
			}
		}
		if (fold(sum) != 0xffff)
			st->bad_ip_csum++;
	}
	if (cfg.check_l4) {
		int r;

		/* the pseudo-header: addresses, protocol, length */
		sum = bpf_htons(proto) + bpf_htons(l4len);
		if (!v6 && l3 + 20 <= end) {
			sum += sum32(*(__u32 *)(l3 + 12)) +
			       sum32(*(__u32 *)(l3 + 16));
		} else if (v6 && l3 + 40 <= end) {
#pragma unroll
			for (i = 0; i < 8; i++)
				sum += sum32(*(__u32 *)(l3 + 8 + 4 * i));
		}
		r = l4_sum(ctx, ETH_HLEN + (v6 ? sizeof(struct ipv6hdr) : ihl),
			   l4len, &sum);
		if (r < 0 || (r == 0 && fold(sum) != 0xffff))
			st->bad_l4_csum++;
	}

	if (ts > now) {
		st->ts_ahead++;
		lat = 0;
	} else {
		lat = now - ts;
	}
	st->lat_sum += lat;
	if (st->packets == 1 || lat < st->lat_min)
		st->lat_min = lat;
	if (lat > st->lat_max)
		st->lat_max = lat;
	b = lat_bucket(lat);
	if (b >= XNF_LAT_BUCKETS)
		b = XNF_LAT_BUCKETS - 1;
	h->count[b]++;

	count_seq(ctx->rx_queue_index, seq, is_short);
	return XDP_DROP;

no_probe:
	st->no_probe++;
	st->no_probe_bytes += len + 4;
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

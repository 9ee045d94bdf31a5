// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * gen.bpf.c - the traffic generator's frame writer (tools/gen.c).
 *
 * Run with BPF_PROG_TEST_RUN and BPF_F_TEST_XDP_LIVE_FRAMES on a device, it
 * sends every frame out of that device (XDP_TX of a live frame is a
 * redirect to the device itself). Live frames are recycled page by page
 * with whatever the receiver and the last run left in them, including
 * their length, so every frame is written whole here: its size from the
 * size table, the headers, the probe, both checksums.
 *
 * The payload after the probe is not rewritten (too slow at 1518 bytes):
 * it is zero because test_run copies the zeroed buffer of the first call
 * into each new page and bpf_xdp_adjust_tail() zeroes what a frame grows
 * by. Only the probe's region (the first 24 payload bytes, or what there
 * is of them) is ever written, and it is written whole every time, so the
 * checksums can be computed over the headers and the probe alone. A
 * receiver that wrote into the payload would break that; none does.
 *
 * Rate mode (state.pace_ps set): a run sends the next frame only when it
 * is due, and otherwise drops its live frame unsent, so the calling thread
 * polls in the kernel with one long test-run call (tools/gen.c says why).
 *
 * Generator frames carry the 4-byte cookie of the run as XDP metadata.
 * tools/gen.c also attaches this program to the device itself (it keeps
 * the program in the kernel's XDP dispatcher, which spares every
 * test-run call a dispatcher update of ~25 ms); frames that really arrive
 * there have no cookie and pass untouched.
 *
 * Only the cookie's first 2 bytes are checked. When the DUT forwards a
 * frame through the Linux stack, the skb keeps the live page, and the
 * stack writes the cached Ethernet header in 16-byte units
 * (neigh_hh_output(), HH_DATA_MOD): the 2 bytes in front of the frame,
 * i.e. the last 2 of the metadata, become zero. test_run recycles the page
 * without rewriting its metadata, so with a 4-byte check every page the
 * kernel once forwarded failed it from then on: its runs were passed into
 * the generator's own stack instead of sent, and Linux was offered 0.2
 * Mpps where the XDP dataplanes were offered 3-5. The metadata stays 4
 * bytes (the worker's xsk program adds 28, and 32 is the most there can
 * be); bad_cookie counts the runs still passed with metadata.
 */
#include "common.bpf.h"
#include "xnf_traffic.h"

const volatile struct xnf_gen_cfg cfg = {};
struct xnf_gen_state state = {};

/* The flow mix's table (cfg.mix == XNF_GEN_MIX_TABLE), filled by user space
 * before load: flow indices in the proportions of the mix, shuffled. Frame
 * seq takes entry seq % XNF_GEN_MIX_SIZE: one masked load from a global
 * array (no helper call, no map lookup), and every XNF_GEN_MIX_SIZE
 * consecutive frames carry the table's proportions exactly, so a run is
 * reproducible. bpf_get_prandom_u32() would cost a helper call per frame
 * and give only the expected proportions. A section of its own keeps the
 * 256 KiB out of .bss, which user space maps to read the state. */
__u32 xnf_gen_mix[XNF_GEN_MIX_SIZE] SEC(".data.mix");

static __always_inline __u32 sum32(__u32 v)
{
	return (v & 0xffff) + (v >> 16);
}

static __always_inline __u64 sum64(__u64 v)
{
	return sum32(v) + sum32(v >> 32);
}

static __always_inline __u16 fold(__u64 s)
{
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return ~s & 0xffff;
}

/* Writes headers, probe and checksums of a frame of @len bytes. v6 and tcp
 * are constants: the header length and every offset are known at compile
 * time, and the verifier keeps only the variant .rodata selects. */
static __always_inline int write_frame(struct xdp_md *ctx, __u32 len, __u64 seq,
				       __u32 flow, __u64 ts, const int v6,
				       const int tcp)
{
	const __u32 l4 = v6 ? 54 : 34, hl = l4 + (tcp ? 20 : 8);
	const __u32 saddr_lo = v6 ? 34 : 26;
	__u8 *d = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	__u8 *p = d + hl;
	__u32 l4len = len - l4, i;
	__u16 sport;
	__u64 sum;
	__u32 src;

	/* The template is copied in 8-byte words; the last may spill up to
	 * 6 bytes into the probe, which is written next. */
	if (d + ((hl + 7) & ~7u) > end || p + sizeof(struct xnf_probe_short) > end)
		return -1;
#pragma unroll
	for (i = 0; i < (hl + 7) / 8; i++)
		*(__u64 *)(d + 8 * i) = *(const volatile __u64 *)&cfg.hdr[8 * i];

	if (v6)
		*(__be16 *)(d + 18) = bpf_htons(len - 54);
	else
		*(__be16 *)(d + 16) = bpf_htons(len - 14);
	sport = cfg.sport + flow;
	*(__be16 *)(d + l4) = bpf_htons(sport);
	src = bpf_ntohl(*(__be32 *)(d + saddr_lo)) + (flow >> 16);
	*(__be32 *)(d + saddr_lo) = bpf_htonl(src);
	if (!tcp)
		*(__be16 *)(d + l4 + 4) = bpf_htons(l4len);

	sum = cfg.l4_sum + sum32(*(__u32 *)(d + saddr_lo)) +
	      *(__u16 *)(d + l4) + bpf_htons(l4len);
	if (!tcp)
		sum += *(__u16 *)(d + l4 + 4);
	if (p + sizeof(struct xnf_probe) <= end) {
		struct xnf_probe *pr = (void *)p;

		pr->magic = bpf_htonl(XNF_PROBE_MAGIC);
		pr->flow = flow;
		pr->seq = seq;
		pr->ts_ns = ts;
		sum += sum32(pr->magic) + sum32(flow) + sum64(seq) + sum64(ts);
	} else {
		struct xnf_probe_short *pr = (void *)p;

		pr->magic = bpf_htonl(XNF_PROBE_MAGIC_SHORT);
		pr->seq = seq;
		pr->ts_ns = ts;
		sum += sum32(pr->magic) + sum32(seq) + sum64(ts);
		/* A longer frame may have left its probe here. */
#pragma unroll
		for (i = sizeof(*pr); i < sizeof(struct xnf_probe); i++) {
			if (p + i + 1 > end)
				break;
			p[i] = 0;
		}
	}

	if (!v6) {
		*(__u16 *)(d + 24) = fold(cfg.ip_sum + *(__u16 *)(d + 16) +
					  sum32(*(__u32 *)(d + 26)));
	}
	if (tcp) {
		*(__u16 *)(d + l4 + 16) = fold(sum);
	} else {
		__u16 c = fold(sum);

		/* 0 means "no checksum" in UDP */
		*(__u16 *)(d + l4 + 6) = c ? c : 0xffff;
	}
	return 0;
}

/* As fast as possible, a gap of gap_ns since the last frame: a pause of the
 * sender (between calls, or a call held up in the kernel) when it is
 * 2^XNF_GEN_PAUSE_SHIFT ns or more, counted by its log2. */
static __always_inline void count_pause(__u64 gap_ns)
{
	__u64 g = gap_ns >> XNF_GEN_PAUSE_SHIFT;
	__u32 b = 0;

	if (!g)
		return;
	while (b < XNF_GEN_PAUSE_BUCKETS - 1 && g >> (b + 1))
		b++;
	state.pause_hist[b]++;
	state.pause_ns[b] += gap_ns;
}

SEC("xdp.frags")
int xnf_gen(struct xdp_md *ctx)
{
	void *meta = (void *)(long)ctx->data_meta;
	void *data = (void *)(long)ctx->data;
	__u32 idx = state.size_idx, flow = state.flow, len, cur;
	__u64 seq = state.seq, now;
	__u32 next = flow + 1 < cfg.flows ? flow + 1 : 0;
	int err;

	if (meta + sizeof(__u32) > data)
		return XDP_PASS;
	if (*(__u16 *)meta != *(const volatile __u16 *)&cfg.cookie) {
		state.bad_cookie++;
		return XDP_PASS;
	}

	if (cfg.mix == XNF_GEN_MIX_TABLE) {
		flow = xnf_gen_mix[seq & (XNF_GEN_MIX_SIZE - 1)];
		next = flow;
	}

	now = bpf_ktime_get_ns();
	if (state.pace_ps) {
		__u64 due = state.pace_t0 + seq * state.pace_ps / 1000;

		/* A frame leaves with the one before it if no run waited in
		 * between (back to back) or no flush came in between (same
		 * batch); otherwise it starts a burst. */
		if (state.pace_batch && state.runs &&
		    !(state.runs % state.pace_batch)) {
			state.gap |= 2;
			__u32 f = state.flush_frames;

			if (f > XNF_GEN_FLUSH_MAX)
				f = XNF_GEN_FLUSH_MAX;
			state.flush_hist[f]++;
			state.flush_frames = 0;
		}
		state.runs++;
		if (seq >= state.limit ||
		    (state.end_ns && now >= state.end_ns) || now < due) {
			state.idle++;
			state.gap |= 1;
			return XDP_DROP;
		}
		if (state.gap != 3 && state.bursts && state.burst_cap &&
		    state.burst_len >= state.burst_cap) {
			/* Late, and the burst is as long as it may be: the
			 * schedule moves so that this frame waits a period. */
			state.pace_t0 += now - due + state.pace_ps / 1000;
			state.slips++;
			state.idle++;
			state.gap |= 1;
			return XDP_DROP;
		}
		if (now - due > state.max_late_ns) {
			state.pace_t0 += now - due - state.max_late_ns;
			state.slips++;
		}
		if (state.gap == 3 || !state.bursts) {
			state.bursts++;
			state.burst_len = 0;
		}
		state.gap = 0;
		state.flush_frames++;
		if (++state.burst_len > state.burst_max)
			state.burst_max = state.burst_len;
	}

	len = cfg.sizes[idx & (XNF_GEN_SIZES_MAX - 1)] - 4;
	/* One size: every page starts at it and only this program resizes. */
	if (cfg.nsizes > 1) {
		cur = bpf_xdp_get_buff_len(ctx);
		if (cur != len && bpf_xdp_adjust_tail(ctx, (int)len - (int)cur))
			goto fail;
	}

	if (cfg.family == 6) {
		if (cfg.proto == IPPROTO_TCP)
			err = write_frame(ctx, len, seq, flow, now, 1, 1);
		else
			err = write_frame(ctx, len, seq, flow, now, 1, 0);
	} else {
		if (cfg.proto == IPPROTO_TCP)
			err = write_frame(ctx, len, seq, flow, now, 0, 1);
		else
			err = write_frame(ctx, len, seq, flow, now, 0, 0);
	}
	if (err)
		goto fail;

	if (!state.pace_ps && seq)
		count_pause(now - state.last_ns);
	state.seq = seq + 1;
	state.last_ns = now;
	state.bytes += len + 4;
	state.flow = next;
	state.size_idx = idx + 1 < cfg.nsizes ? idx + 1 : 0;
	return XDP_TX;
fail:
	state.errors++;
	return XDP_DROP;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

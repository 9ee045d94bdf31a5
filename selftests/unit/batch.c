// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The batch-size histogram with real NAPI polls: the chain is attached
 * natively to ut0, frames are injected into its veth peer ut0p with live
 * frames (xmit.bpf.c), and every poll of ut0 is counted by size. Whatever
 * the batching, the histogram must account for every packet exactly:
 * sum(size * polls[size]) == packets that entered the chain. The frames
 * go in steps of at most BATCH_STEP, each through the chain before the
 * next is sent: the veth ring toward ut0 (256 frames) never overflows,
 * however late ut0's NAPI runs, so every frame is counted.
 */
#include <net/if.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>

#include "fixture.h"
#include "xmit.skel.h"

#define BATCH_FRAMES 20000
#define BATCH_STEP   192

static bool batch_read(struct fx *f, __u32 ifindex, struct xnf_batch_hist *sum)
{
	struct xnf_dev_key key = { .netns = xnf_netns_inode(),
				   .ifindex = ifindex };
	int ncpus = xnf_ncpus(), cpu, b;
	struct xnf_batch_hist vals[ncpus];

	memset(sum, 0, sizeof(*sum));
	if (!ASSERT_OK(bpf_map_lookup_elem(xnf_table_fd(f->dp, XNF_T_BATCH),
					   &key, vals),
		       "read the histogram of ut0"))
		return false;
	for (cpu = 0; cpu < ncpus; cpu++)
		for (b = 0; b < XNF_BATCH_BUCKETS; b++) {
			sum->polls[b] += vals[cpu].polls[b];
			sum->timed[b] += vals[cpu].timed[b];
			sum->ns[b] += vals[cpu].ns[b];
		}
	return true;
}

/* The histogram and the poll times, with the chain tail-called or fused
 * (each is an entry program that marks a poll's first packet). */
static void batch_counts(bool fused)
{
	struct pkt_spec spec = { .family = 4 };
	struct bpf_link *tracer[__XNF_TRACER_MAX] = {}, *hold = NULL;
	struct xnf_batch_hist hist;
	struct xnf_xmit *xmit = NULL;
	struct xnf_stats st;
	__u64 polls = 0, pkts = 0, timed = 0, untimed = 0, short_ns = 0;
	__u8 frame[128];
	char err[256] = "load the napi_poll tracer";
	bool attached = false;
	__u32 sent, step;
	long long dropped;
	struct fx f;
	int len, b;

	if (!fx_open(&f))
		return;
	if (!fx_chain(&f, "l3fwd", fused, false) ||
	    !fx_set_cfg(&f, XNF_ACT_DROP, XNF_ACT_DROP, XNF_ACT_DROP,
			XNF_ACT_DROP))
		goto out;
	if (!ASSERT_OK(xnf_batch_watch(f.dp, f.ifindex[0]), "watch ut0") ||
	    !ASSERT_OK(xnf_batch_tracer(f.dp, tracer, err, sizeof(err)), err))
		goto out;
	if (!ASSERT_OK(bpf_xdp_attach(f.ifindex[0], xnf_chain_prog_fd(f.chain),
				      XDP_FLAGS_DRV_MODE, NULL),
		       "attach to ut0"))
		goto out;
	attached = true;

	xmit = xnf_xmit__open_and_load();
	if (!ASSERT_TRUE(xmit, "load the injector"))
		goto out;
	/* Attached somewhere (ut2, where nothing arrives), the injector stays
	 * in the kernel's XDP dispatcher: a call of many live frames then
	 * does not add and remove it, with a pause each time. */
	hold = bpf_program__attach_xdp(xmit->progs.xnf_xmit, f.ifindex[2]);
	if (!ASSERT_TRUE(hold, "attach the injector to ut2"))
		goto out;
	len = pkt_build(frame, sizeof(frame), &spec);
	dropped = fx_tx_dropped("ut0p");
	for (sent = 0; sent < BATCH_FRAMES; sent += step) {
		struct xdp_md ctx = {
			.ingress_ifindex = if_nametoindex("ut0p"),
			.data_end = len,
		};
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame,
			    .data_size_in = len, .ctx_in = &ctx,
			    .ctx_size_in = sizeof(ctx), .batch_size = 64,
			    .flags = BPF_F_TEST_XDP_LIVE_FRAMES, );
		long deadline = fx_now_ms() + FX_WAIT_MS;

		step = BATCH_FRAMES - sent < BATCH_STEP ? BATCH_FRAMES - sent :
							  BATCH_STEP;
		opts.repeat = step;
		if (!ASSERT_OK(bpf_prog_test_run_opts(bpf_program__fd(
							      xmit->progs.xnf_xmit),
						      &opts),
			       "inject frames into ut0p"))
			goto out;
		while (fx_stats(&f, &st) && st.nf[XNF_NF_ENTRY].in < sent + step &&
		       fx_now_ms() < deadline)
			usleep(100);
	}
	ASSERT_EQ(fx_tx_dropped("ut0p") - dropped, 0,
		  "none dropped by the veth (ut0p's tx_dropped)");

	if (!fx_stats(&f, &st) || !batch_read(&f, f.ifindex[0], &hist))
		goto out;
	for (b = 0; b < XNF_BATCH_BUCKETS; b++) {
		polls += hist.polls[b];
		pkts += (__u64)b * hist.polls[b];
	}
	ASSERT_EQ(st.nf[XNF_NF_ENTRY].in, BATCH_FRAMES,
		  "every injected frame reached the chain");
	ASSERT_GE(polls, BATCH_FRAMES / 64, "at least one poll per 64 packets");
	ASSERT_EQ(pkts, st.nf[XNF_NF_ENTRY].in, "sum(size * polls) == packets");
	/* The poll times: every poll that handled packets ran the entry
	 * program, so it is timed, with a time of at least 1 ns per poll;
	 * a poll without packets never is. */
	for (b = 1; b < XNF_BATCH_BUCKETS; b++) {
		timed += hist.timed[b];
		untimed += hist.polls[b] - hist.timed[b];
		if (hist.ns[b] < hist.timed[b])
			short_ns++;
	}
	ASSERT_EQ(untimed, 0ULL, "every poll with packets timed");
	ASSERT_EQ(timed, polls - hist.polls[0], "timed polls == polls seen");
	ASSERT_EQ(hist.timed[0], 0ULL, "no empty poll timed");
	ASSERT_EQ(short_ns, 0ULL, "ns >= polls timed in every size");
	ASSERT_EQ(st.drop[XNF_R_NO_ROUTE], BATCH_FRAMES,
		  "all dropped for no route");

	/* `xnf stats reset`: the histogram of the device starts again. */
	if (ASSERT_OK(xnf_batch_reset(f.dp, xnf_netns_inode(), f.ifindex[0]),
		      "reset the histogram") &&
	    batch_read(&f, f.ifindex[0], &hist)) {
		for (polls = 0, timed = 0, b = 0; b < XNF_BATCH_BUCKETS; b++) {
			polls += hist.polls[b];
			timed += hist.timed[b] + hist.ns[b];
		}
		ASSERT_EQ(polls, 0ULL, "no poll after the reset");
		ASSERT_EQ(timed, 0ULL, "no poll time after the reset");
	}
out:
	if (attached)
		bpf_xdp_detach(f.ifindex[0], XDP_FLAGS_DRV_MODE, NULL);
	for (b = 0; b < __XNF_TRACER_MAX; b++)
		bpf_link__destroy(tracer[b]);
	bpf_link__destroy(hold);
	xnf_xmit__destroy(xmit);
	fx_close(&f);
}

TEST(batch_histogram_counts_every_packet)
{
	batch_counts(false);
}

TEST(batch_histogram_counts_every_packet_fused)
{
	batch_counts(true);
}

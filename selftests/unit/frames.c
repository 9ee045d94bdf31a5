// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The AF_XDP worker's frame accounting (userspace/frames.h): every frame in
 * exactly one place through the whole fill -> RX -> NF -> TX -> completion
 * -> free cycle, and every wrong transition refused without changing
 * anything.
 */
#include <stdlib.h>

#include "test.h"
#include "frames.h"

#define NFRAMES 64
#define FSIZE	4096

TEST(frames_init)
{
	struct xnf_frames f;

	if (!ASSERT_EQ(xnf_frames_init(&f, NFRAMES, FSIZE), 0, "init"))
		return;
	ASSERT_EQ(f.count[XNF_FP_FREE], NFRAMES, "all free");
	ASSERT_EQ(f.nfree, NFRAMES, "free list");
	ASSERT_EQ(xnf_frames_check(&f), 0, "census");
	ASSERT_EQ(xnf_frames_init(&f, NFRAMES, 3000), -EINVAL,
		  "frame size not 2^n");
	xnf_frames_fini(&f);
}

/* A ring as the kernel would hold it: FIFO of addresses. */
struct q {
	__u64 a[NFRAMES];
	__u32 head, n;
};

static void q_push(struct q *q, __u64 a)
{
	q->a[(q->head + q->n++) % NFRAMES] = a;
}

static __u64 q_pop(struct q *q)
{
	__u64 a = q->a[q->head];

	q->head = (q->head + 1) % NFRAMES;
	q->n--;
	return a;
}

/* Random walks through the cycle. The kernel hands RX descriptors back
 * with an offset into the frame (headroom), as copy mode does. */
TEST(frames_cycle_invariant)
{
	struct q fill = {}, rx = {}, nf = {}, tx = {}, comp = {};
	struct xnf_frames f;
	unsigned int seed = 1;
	__u64 a, moved = 0;
	int step, op, bad = 0;

	if (!ASSERT_EQ(xnf_frames_init(&f, NFRAMES, FSIZE), 0, "init"))
		return;
	for (step = 0; step < 200000; step++) {
		op = rand_r(&seed) % 7;
		switch (op) {
		case 0: /* refill */
			if (!xnf_frame_get(&f, XNF_FP_FILL, &a))
				q_push(&fill, a);
			break;
		case 1: /* the kernel receives into a fill frame */
			if (fill.n)
				q_push(&rx, q_pop(&fill) + 256);
			break;
		case 2: /* the worker reads RX */
			if (rx.n) {
				a = q_pop(&rx);
				bad |= xnf_frame_move(&f, a, XNF_FP_FILL,
						      XNF_FP_NF);
				q_push(&nf, a);
			}
			break;
		case 3: /* the NF forwards */
			if (nf.n) {
				a = q_pop(&nf);
				bad |= xnf_frame_move(&f, a, XNF_FP_NF,
						      XNF_FP_TX);
				q_push(&tx, a);
			}
			break;
		case 4: /* the NF drops */
			if (nf.n)
				bad |= xnf_frame_put(&f, q_pop(&nf), XNF_FP_NF);
			break;
		case 5: /* the kernel sends */
			if (tx.n)
				q_push(&comp, q_pop(&tx));
			break;
		case 6: /* completion reaped */
			if (comp.n) {
				bad |= xnf_frame_put(&f, q_pop(&comp), XNF_FP_TX);
				moved++;
			}
			break;
		}
		if (bad || f.count[XNF_FP_FREE] + f.count[XNF_FP_FILL] +
					   f.count[XNF_FP_NF] +
					   f.count[XNF_FP_TX] !=
				   NFRAMES)
			break;
		if (step % 1000 == 0 && xnf_frames_check(&f))
			break;
	}
	ASSERT_EQ(step, 200000, "invariant held at every step");
	ASSERT_EQ(bad, 0, "no transition refused");
	ASSERT_EQ(xnf_frames_check(&f), 0, "census at the end");
	ASSERT_EQ(f.count[XNF_FP_FILL], fill.n + rx.n, "kernel's RX side");
	ASSERT_EQ(f.count[XNF_FP_NF], nf.n, "NF's vector");
	ASSERT_EQ(f.count[XNF_FP_TX], tx.n + comp.n, "kernel's TX side");
	ASSERT_TRUE(moved > 10000, "the cycle turned");
	xnf_frames_fini(&f);
}

TEST(frames_wrong_transitions)
{
	struct xnf_frames f;
	__u64 a = 0, b = 0;

	if (!ASSERT_EQ(xnf_frames_init(&f, NFRAMES, FSIZE), 0, "init"))
		return;
	ASSERT_EQ(xnf_frame_get(&f, XNF_FP_FILL, &a), 0, "get");
	ASSERT_EQ(xnf_frame_move(&f, a + 100, XNF_FP_FILL, XNF_FP_NF), 0,
		  "offset into the frame names it");
	/* Released twice: the second is refused, nothing changes. */
	ASSERT_EQ(xnf_frame_put(&f, a, XNF_FP_NF), 0, "drop");
	ASSERT_EQ(xnf_frame_put(&f, a, XNF_FP_NF), -EFAULT, "double free");
	ASSERT_EQ(f.bad_addr, a, "names the frame");
	ASSERT_EQ(f.nfree, NFRAMES, "free list unchanged");
	/* A completion for a frame never sent. */
	ASSERT_EQ(xnf_frame_get(&f, XNF_FP_FILL, &b), 0, "get");
	ASSERT_EQ(xnf_frame_put(&f, b, XNF_FP_TX), -EFAULT, "not sent");
	/* An address outside the UMEM. */
	ASSERT_EQ(xnf_frame_move(&f, (__u64)NFRAMES * FSIZE, XNF_FP_FILL,
				 XNF_FP_NF),
		  -EFAULT, "outside");
	ASSERT_EQ(xnf_frames_check(&f), 0, "still consistent");
	/* Exhaustion. */
	while (!xnf_frame_get(&f, XNF_FP_FILL, &b))
		;
	ASSERT_EQ(f.count[XNF_FP_FILL], NFRAMES, "all given out");
	ASSERT_EQ(xnf_frame_get(&f, XNF_FP_FILL, &b), -ENOBUFS, "empty");
	xnf_frames_fini(&f);
}

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * frames.h - where each UMEM frame of an AF_XDP worker is.
 *
 * A frame is always in exactly one place (enum xnf_frame_place): the
 * worker's free list, the kernel's fill/RX side, the NF's vector, or the
 * kernel's TX/completion side. Every transition names where the frame comes
 * from and is checked against a per-frame byte, so a frame released twice,
 * or a descriptor the kernel returned that the worker never gave it, is
 * caught at the transition (-EFAULT) instead of corrupting the UMEM
 * silently. The counts per place always sum to the number of frames; the
 * worker copies them into its xnf_worker_stats after every batch, so the
 * invariant can be watched from outside while traffic runs.
 *
 * Costs one byte store and compare per transition: cheap next to the copy
 * a copy-mode socket makes of every frame.
 */
#ifndef XNF_FRAMES_H
#define XNF_FRAMES_H

#include <errno.h>
#include <stdbool.h>
#include <linux/types.h>

#include "xnf_worker.h"

struct xnf_frames {
	__u32 n;     /* frames in the UMEM */
	__u32 shift; /* log2 of the frame size */
	__u32 nfree; /* on the free list */
	__u64 *free; /* stack of frame addresses */
	__u8 *place; /* enum xnf_frame_place, per frame */
	__u64 count[__XNF_FP_MAX];
	__u64 bad_addr; /* the address of the first failed transition */
};

/* All @n frames of @frame_size bytes (a power of two) on the free list. */
int xnf_frames_init(struct xnf_frames *f, __u32 n, __u32 frame_size);
void xnf_frames_fini(struct xnf_frames *f);
/* Recounts every frame's place and compares with count[] and the free list:
 * 0, or -EFAULT when they disagree. O(n), for tests and the worker's end. */
int xnf_frames_check(const struct xnf_frames *f);

/* Moves the frame holding @addr (any offset into it) from @from to @to. */
static inline int xnf_frame_move(struct xnf_frames *f, __u64 addr, __u8 from,
				 __u8 to)
{
	__u64 i = addr >> f->shift;

	if (i >= f->n || f->place[i] != from) {
		f->bad_addr = addr;
		return -EFAULT;
	}
	f->place[i] = to;
	f->count[from]--;
	f->count[to]++;
	return 0;
}

/* Takes a frame off the free list into @to, its address in *@addr; or
 * -ENOBUFS when the list is empty. */
static inline int xnf_frame_get(struct xnf_frames *f, __u8 to, __u64 *addr)
{
	__u64 a;

	if (!f->nfree)
		return -ENOBUFS;
	a = f->free[--f->nfree];
	f->place[a >> f->shift] = to;
	f->count[XNF_FP_FREE]--;
	f->count[to]++;
	*addr = a;
	return 0;
}

/* Returns the frame holding @addr from @from to the free list. */
static inline int xnf_frame_put(struct xnf_frames *f, __u64 addr, __u8 from)
{
	int err = xnf_frame_move(f, addr, from, XNF_FP_FREE);

	if (!err)
		f->free[f->nfree++] = (addr >> f->shift) << f->shift;
	return err;
}

#endif /* XNF_FRAMES_H */

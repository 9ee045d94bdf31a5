// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* frames.c - UMEM frame accounting (frames.h). */
#include <stdlib.h>
#include <string.h>

#include "frames.h"

int xnf_frames_init(struct xnf_frames *f, __u32 n, __u32 frame_size)
{
	__u32 i;

	memset(f, 0, sizeof(*f));
	if (!n || !frame_size || (frame_size & (frame_size - 1)))
		return -EINVAL;
	f->free = calloc(n, sizeof(*f->free));
	f->place = calloc(n, 1);
	if (!f->free || !f->place) {
		xnf_frames_fini(f);
		return -ENOMEM;
	}
	f->n = n;
	f->shift = __builtin_ctz(frame_size);
	/* Pushed in reverse so that the first frames handed out are the
	 * lowest addresses: the fill ring starts in order. */
	for (i = 0; i < n; i++)
		f->free[i] = (__u64)(n - 1 - i) << f->shift;
	f->nfree = n;
	f->count[XNF_FP_FREE] = n;
	return 0;
}

void xnf_frames_fini(struct xnf_frames *f)
{
	free(f->free);
	free(f->place);
	memset(f, 0, sizeof(*f));
}

int xnf_frames_check(const struct xnf_frames *f)
{
	__u64 census[__XNF_FP_MAX] = {}, sum = 0;
	__u32 i;

	for (i = 0; i < f->n; i++) {
		if (f->place[i] >= __XNF_FP_MAX)
			return -EFAULT;
		census[f->place[i]]++;
	}
	for (i = 0; i < __XNF_FP_MAX; i++) {
		if (census[i] != f->count[i])
			return -EFAULT;
		sum += f->count[i];
	}
	if (sum != f->n || f->nfree != f->count[XNF_FP_FREE])
		return -EFAULT;
	for (i = 0; i < f->nfree; i++)
		if (f->place[f->free[i] >> f->shift] != XNF_FP_FREE)
			return -EFAULT;
	return 0;
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * snapshot.c - what the userspace NFs share: copying a pinned map in a few
 * syscalls, the longest-prefix-match table their copies of the LPM tries
 * become, an interface's MTU, and option strings. All of it runs at init
 * and refresh, never per packet.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <bpf/bpf.h>

#include "xnf.h"
#include "unf_priv.h"

/* A whole map into new buffers (xnf_map_read_all, one spare slot so that
 * an empty map still gets buffers). */
int xnf_unf_map_dump(int fd, size_t ksz, size_t vsz, __u32 max, void **keys,
		     void **vals, __u32 *n)
{
	__u8 *k, *v;
	int err;

	*keys = *vals = NULL;
	*n = 0;
	k = calloc(max + 1, ksz);
	v = calloc(max + 1, vsz);
	if (!k || !v) {
		err = -ENOMEM;
		goto out;
	}
	err = xnf_map_read_all(fd, ksz, vsz, max, k, v, n);
out:
	if (err) {
		free(k);
		free(v);
		return err;
	}
	*keys = k;
	*vals = v;
	return 0;
}

__u32 xnf_unf_if_mtu(__u32 ifindex)
{
	struct ifreq ifr = {};
	__u32 mtu = 0;
	int s;

	if (!if_indextoname(ifindex, ifr.ifr_name))
		return 0;
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return 0;
	if (!ioctl(s, SIOCGIFMTU, &ifr))
		mtu = ifr.ifr_mtu;
	close(s);
	return mtu;
}

int xnf_unf_args(const char *args, const char *const *keys, __u64 *vals,
		 const __u64 *max, int n, char *errbuf, size_t errlen)
{
	char buf[256], *item, *save = NULL, *eq, *end;
	unsigned long long v;
	int i;

	if (!args || !*args)
		return 0;
	if (snprintf(buf, sizeof(buf), "%s", args) >= (int)sizeof(buf))
		return xnf_errf(errbuf, errlen, -EINVAL,
				"options '%s' are too long", args);
	for (item = strtok_r(buf, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		eq = strchr(item, '=');
		for (i = 0; eq && i < n; i++)
			if (strlen(keys[i]) == (size_t)(eq - item) &&
			    !strncmp(item, keys[i], eq - item))
				break;
		if (!eq || i == n) {
			char known[128] = "";
			size_t off = 0;

			for (i = 0; i < n && off < sizeof(known); i++)
				off += snprintf(known + off, sizeof(known) - off,
						"%s%s", i ? ", " : "", keys[i]);
			return xnf_errf(errbuf, errlen, -EINVAL,
					"unknown option '%s'; write "
					"KEY=NUMBER[,...] with KEY one of %s",
					item, known);
		}
		errno = 0;
		v = strtoull(eq + 1, &end, 10);
		if (errno || end == eq + 1 || *end || eq[1] == '-' || v < 1 ||
		    v > max[i]) {
			return xnf_errf(errbuf, errlen, -EINVAL,
					"%s must be a number from 1 to %llu, "
					"not '%s'",
					keys[i], (unsigned long long)max[i],
					eq + 1);
		}
		vals[i] = v;
	}
	return 0;
}

static void lpm_mask(__u32 len, __u64 *mhi, __u64 *mlo)
{
	*mhi = len >= 64 ? ~0ULL : len ? ~0ULL << (64 - len) : 0;
	*mlo = len >= 128 ? ~0ULL : len > 64 ? ~0ULL << (128 - len) : 0;
}

static int lpm_len_cmp(const void *a, const void *b)
{
	const struct xnf_lpm_len *x = a, *y = b;

	return (int)y->len - (int)x->len;
}

int xnf_lpm_build(struct xnf_lpm *l, int family, const struct xnf_lpm_in *in,
		  __u32 n)
{
	__u32 maxlen = family == XNF_AF_INET ? 32 : 128, size = 16, i, s;
	bool seen[129] = {};
	__u64 hi, lo;

	memset(l, 0, sizeof(*l));
	if (family != XNF_AF_INET && family != XNF_AF_INET6)
		return -EINVAL;
	while (size < 2 * n)
		size <<= 1;
	l->slot = calloc(size, sizeof(*l->slot));
	if (!l->slot)
		return -ENOMEM;
	l->mask = size - 1;
	for (i = 0; i < n; i++) {
		struct xnf_lpm_len lv = { .len = in[i].len };

		if (in[i].len > maxlen) {
			xnf_lpm_free(l);
			return -EINVAL;
		}
		lpm_mask(lv.len, &lv.mhi, &lv.mlo);
		xnf_lpm_key(family, in[i].addr, &hi, &lo);
		hi &= lv.mhi;
		lo &= lv.mlo;
		for (s = xnf_lpm_hash(hi, lo, lv.len) & l->mask;
		     l->slot[s].used; s = (s + 1) & l->mask)
			if (l->slot[s].hi == hi && l->slot[s].lo == lo &&
			    l->slot[s].len == lv.len)
				break;
		l->slot[s] = (struct xnf_lpm_ent){
			.hi = hi,
			.lo = lo,
			.val = in[i].val,
			.len = lv.len,
			.used = 1,
		};
		if (!seen[lv.len]) {
			seen[lv.len] = true;
			l->lens[l->nlens++] = lv;
		}
	}
	qsort(l->lens, l->nlens, sizeof(l->lens[0]), lpm_len_cmp);
	return 0;
}

void xnf_lpm_free(struct xnf_lpm *l)
{
	free(l->slot);
	memset(l, 0, sizeof(*l));
}

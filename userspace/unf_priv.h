/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * unf_priv.h - what the shipped userspace NFs share (snapshot.c), and the
 * hooks their unit tests use. Not part of the NF API (unf.h).
 */
#ifndef XNF_UNF_PRIV_H
#define XNF_UNF_PRIV_H

#include <string.h>
#include <endian.h>

#include "unf.h"
/* The instance's tables, which the NFs copy (lib/: the runtime is part of
 * libxnf). */
#include "dp_priv.h"

/* ---- snapshots of pinned maps (snapshot.c) ---- */

/* Copies every entry of map @fd (keys of @ksz, values of @vsz bytes, at
 * most @max entries) into fresh arrays *@keys / *@vals (free() them).
 * Batch lookups where the map has them, else bpf_map_get_next_key (LPM
 * tries). -E2BIG when the map holds more than @max entries, -EAGAIN when
 * a walk does not end (the map keeps changing). Never per packet. */
int xnf_unf_map_dump(int fd, size_t ksz, size_t vsz, __u32 max, void **keys,
		     void **vals, __u32 *n);

/* MTU of @ifindex in the caller's network namespace, or 0 when there is
 * no such device. */
__u32 xnf_unf_if_mtu(__u32 ifindex);

/* Reads "key=value,key=value" (@args may be NULL): for each key of
 * @keys[0..n), its unsigned value into @vals[] (left alone when absent).
 * -EINVAL with what is wrong in @err on an unknown key or a bad number. */
int xnf_unf_args(const char *args, const char *const *keys, __u64 *vals,
		 __u64 const *max, int n, char *err, size_t errlen);

/* ---- longest-prefix match (snapshot.c) ----
 *
 * A hash table of (prefix length, masked address) -> value, probed from the
 * longest length present down to the shortest: as many probes per lookup
 * as there are distinct lengths before the match, each one hash and a
 * short linear probe in a table kept at most half full. Addresses are 128
 * bits (IPv4 in the top 32, its prefix lengths unchanged); one table holds
 * one family. Built once per snapshot, never changed afterwards. */
struct xnf_lpm_ent {
	__u64 hi, lo; /* masked address */
	__u32 val;
	__u8 len;
	__u8 used;
};

struct xnf_lpm_len {
	__u64 mhi, mlo; /* the mask of .len */
	__u32 len;
};

struct xnf_lpm {
	struct xnf_lpm_ent *slot;
	__u32 mask; /* slots - 1 (a power of two minus one) */
	__u32 nlens;
	struct xnf_lpm_len lens[129]; /* present lengths, longest first */
};

struct xnf_lpm_in {
	__u8 addr[16]; /* network order; IPv4 in the first 4 bytes */
	__u32 len;
	__u32 val;
};

/* Builds @l from @in[0..n) of @family (XNF_AF_INET / _INET6); duplicate
 * prefixes: the last wins. 0 or -ENOMEM / -EINVAL. */
int xnf_lpm_build(struct xnf_lpm *l, int family, const struct xnf_lpm_in *in,
		  __u32 n);
void xnf_lpm_free(struct xnf_lpm *l);

static inline void xnf_lpm_key(int family, const void *addr, __u64 *hi, __u64 *lo)
{
	if (family == XNF_AF_INET) {
		__u32 a;

		memcpy(&a, addr, 4);
		*hi = (__u64)be32toh(a) << 32;
		*lo = 0;
	} else {
		__u64 a[2];

		memcpy(a, addr, 16);
		*hi = be64toh(a[0]);
		*lo = be64toh(a[1]);
	}
}

/* Masked addresses have their low bits all zero: the final mix of
 * MurmurHash3 (fmix64) spreads every input bit over the slot index. */
static inline __u32 xnf_lpm_hash(__u64 hi, __u64 lo, __u32 len)
{
	__u64 h = hi ^ (lo * 0x9e3779b97f4a7c15ULL) ^ len;

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return (__u32)h;
}

/* The value of the longest prefix holding (@hi, @lo); false: none. */
static inline bool xnf_lpm_find(const struct xnf_lpm *l, __u64 hi, __u64 lo,
				__u32 *val)
{
	__u32 i, s;

	for (i = 0; i < l->nlens; i++) {
		const struct xnf_lpm_len *lv = &l->lens[i];
		__u64 h = hi & lv->mhi, o = lo & lv->mlo;

		for (s = xnf_lpm_hash(h, o, lv->len) & l->mask; l->slot[s].used;
		     s = (s + 1) & l->mask) {
			const struct xnf_lpm_ent *e = &l->slot[s];

			if (e->hi == h && e->lo == o && e->len == lv->len) {
				*val = e->val;
				return true;
			}
		}
	}
	return false;
}

/* ---- test hooks ---- */

/* ratelimit: its clock (CLOCK_MONOTONIC ns by default), read once per
 * run() call; NULL restores the default. */
void xnf_unf_ratelimit_clock(struct xnf_unf *nf, __u64 (*now)(void *arg),
			     void *arg);

struct xnf_unf_rl_info {
	__u64 capacity;	   /* flow entries, fixed at init */
	__u64 flows;	   /* entries in use */
	__u64 evictions;   /* flows pushed out to make room */
	__u64 rate, burst; /* the options in force */
	size_t bytes;	   /* memory of the flow table */
};
void xnf_unf_ratelimit_info(const struct xnf_unf *nf, struct xnf_unf_rl_info *i);

#endif /* XNF_UNF_PRIV_H */

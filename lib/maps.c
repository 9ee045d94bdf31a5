// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * maps.c - reading a whole map in a few syscalls.
 *
 * BPF_MAP_LOOKUP_BATCH hands out as many elements as the caller has room
 * for, starting after a cursor the previous call returned. Its cursor is
 * map-type specific (an index for arrays, a bucket for hashes, a key for
 * the generic implementation LPM tries use), so it is kept in a buffer as
 * large as the larger of a key and 8 bytes. Kernels or map types without
 * batch lookups answer -EINVAL or -ENOTSUPP; then the map is walked with
 * get_next_key and one lookup per key.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "xnf.h"

/* The kernel's internal "operation not supported", which reaches user
 * space unchanged from some BPF commands. */
#define XNF_ENOTSUPP 524

static bool map_no_batch(int err)
{
	return err == -EINVAL || err == -XNF_ENOTSUPP || err == -EOPNOTSUPP;
}

static bool map_percpu(__u32 type)
{
	return type == BPF_MAP_TYPE_PERCPU_ARRAY ||
	       type == BPF_MAP_TYPE_PERCPU_HASH ||
	       type == BPF_MAP_TYPE_LRU_PERCPU_HASH ||
	       type == BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE;
}

/* The value size a lookup copies out: per-CPU maps copy every possible
 * CPU's value, each rounded up to 8 bytes. */
static int map_value_size(const struct bpf_map_info *info, __u32 *value_size)
{
	int ncpus;

	*value_size = info->value_size;
	if (map_percpu(info->type)) {
		ncpus = xnf_ncpus();
		if (ncpus < 0)
			return ncpus;
		*value_size = ((info->value_size + 7) & ~7u) * ncpus;
	}
	return 0;
}

int xnf_map_value_size(int fd, __u32 *value_size)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	return map_value_size(&info, value_size);
}

/* Batch lookups until the map says -ENOENT (no more elements). When the
 * buffers are full, one more element is asked for into @spare_k/@spare_v:
 * if there is one, the map holds more than @max. */
static int map_read_batch(int fd, __u32 ksz, __u32 vsz, __u32 max, __u8 *keys,
			  __u8 *vals, __u8 *cur_in, __u8 *cur_out,
			  __u8 *spare_k, __u8 *spare_v, __u32 *count)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 done = 0, n, csz = ksz > 8 ? ksz : 8;
	void *in = NULL;
	int err;

	for (;;) {
		n = max - done;
		if (!n) {
			n = 1;
			err = bpf_map_lookup_batch(fd, in, cur_out, spare_k,
						   spare_v, &n, &opts);
			/* An element (perhaps the last: -ENOENT), or a hash
			 * bucket too large for one slot (-ENOSPC): either
			 * way, more than @max. */
			if (n || err == -ENOSPC)
				return -E2BIG;
			if (err == -ENOENT)
				break;
			return err ?: -E2BIG;
		}
		err = bpf_map_lookup_batch(fd, in, cur_out,
					   keys + (size_t)done * ksz,
					   vals + (size_t)done * vsz, &n, &opts);
		/* A hash bucket larger than the room left. */
		if (err == -ENOSPC)
			return -E2BIG;
		if (err && err != -ENOENT)
			return err;
		done += n;
		if (err)
			break;
		memcpy(cur_in, cur_out, csz);
		in = cur_in;
	}
	*count = done;
	return 0;
}

/* get_next_key and one lookup per key. A walk over a map that changes
 * meanwhile may restart (an LPM trie begins again at its first key when
 * the current one is gone), so it is bounded. */
static int map_read_walk(int fd, __u32 ksz, __u32 vsz, __u32 max, __u8 *keys,
			 __u8 *vals, __u8 *key, __u8 *next, __u8 *spare_v,
			 __u32 *count)
{
	__u64 steps = 0;
	__u32 done = 0;
	void *prev = NULL;
	int err;

	for (;;) {
		err = bpf_map_get_next_key(fd, prev, next);
		if (err == -ENOENT)
			break;
		if (err)
			return err;
		if (++steps > 2 * (__u64)max + 16)
			return -EAGAIN;
		memcpy(key, next, ksz);
		prev = key;
		if (done == max) {
			if (bpf_map_lookup_elem(fd, key, spare_v))
				continue; /* deleted meanwhile */
			return -E2BIG;
		}
		if (bpf_map_lookup_elem(fd, key, vals + (size_t)done * vsz))
			continue;
		memcpy(keys + (size_t)done * ksz, key, ksz);
		done++;
	}
	*count = done;
	return 0;
}

/**
 * xnf_map_read_all() - read every element of a map
 * @fd: the map
 * @key_size: its key size
 * @value_size: its value size; for per-CPU maps all CPUs' values, as
 *	xnf_map_value_size() gives it
 * @max: room in @keys and @values, in elements
 * @keys: [@max] keys
 * @values: [@max] values
 * @count: elements read
 *
 * Return: 0; -E2BIG when the map holds more than @max elements; -EINVAL
 * when @key_size or @value_size is not the map's; -EAGAIN when a map
 * without batch lookups kept changing under the walk; or the error of a
 * bpf() call. On error, *@count is 0 and the buffers hold garbage.
 */
int xnf_map_read_all(int fd, __u32 key_size, __u32 value_size, __u32 max,
		     void *keys, void *values, __u32 *count)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), vsz, csz = key_size > 8 ? key_size : 8;
	__u8 *scratch = NULL;
	int err;

	*count = 0;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	err = map_value_size(&info, &vsz);
	if (err)
		return err;
	if (info.key_size != key_size || vsz != value_size)
		return -EINVAL;
	/* Two cursors (or keys), one spare key and one spare value. */
	scratch = malloc(3 * (size_t)csz + value_size);
	if (!scratch)
		return -ENOMEM;
	err = map_read_batch(fd, key_size, value_size, max, keys, values,
			     scratch, scratch + csz, scratch + 2 * csz,
			     scratch + 3 * csz, count);
	if (map_no_batch(err))
		err = map_read_walk(fd, key_size, value_size, max, keys, values,
				    scratch, scratch + csz, scratch + 3 * csz,
				    count);
	if (err)
		*count = 0;
	free(scratch);
	return err;
}

/**
 * xnf_map_update_all() - write @count elements in one batch
 * @fd: the map
 * @keys: [@count] keys of @key_size bytes
 * @values: [@count] values of @value_size bytes (per-CPU: all CPUs')
 * @count: elements
 * @flags: BPF_ANY, BPF_NOEXIST or BPF_EXIST, for each element
 *
 * One BPF_MAP_UPDATE_BATCH; one update per element where the kernel or the
 * map type has no batch update. Not atomic: on failure, some elements may
 * have been written.
 *
 * Return: 0 or a negative errno.
 */
int xnf_map_update_all(int fd, const void *keys, const void *values,
		       __u32 key_size, __u32 value_size, __u32 count, __u64 flags)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts, .elem_flags = flags);
	__u32 i, n = count;
	int err;

	if (!count)
		return 0;
	err = bpf_map_update_batch(fd, keys, values, &n, &opts);
	if (!map_no_batch(err))
		return err;
	/* Rewriting what the batch may already have written is harmless
	 * for BPF_ANY; with BPF_NOEXIST only what it did not write is. */
	for (i = flags == BPF_NOEXIST ? n : 0, err = 0; i < count && !err; i++)
		err = bpf_map_update_elem(fd,
					  (const __u8 *)keys +
						  (size_t)i * key_size,
					  (const __u8 *)values +
						  (size_t)i * value_size,
					  flags);
	return err;
}

/**
 * xnf_map_delete_all() - delete @count keys in one batch
 * @fd: the map
 * @keys: [@count] keys of @key_size bytes
 * @key_size: their size
 * @count: keys
 *
 * A key that is not there is no error (the fallback skips it; a batch
 * stops at it, so the rest goes one by one).
 *
 * Return: 0 or a negative errno.
 */
int xnf_map_delete_all(int fd, const void *keys, __u32 key_size, __u32 count)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 i, n = count;
	int err;

	if (!count)
		return 0;
	err = bpf_map_delete_batch(fd, keys, &n, &opts);
	if (!err)
		return 0;
	if (!map_no_batch(err) && err != -ENOENT)
		return err;
	if (err == -ENOENT)
		n = n < count ? n : count; /* the batch stopped at a missing key */
	else
		n = 0;
	for (i = n, err = 0; i < count && !err; i++) {
		err = bpf_map_delete_elem(fd, (const __u8 *)keys +
						      (size_t)i * key_size);
		if (err == -ENOENT)
			err = 0;
	}
	return err;
}

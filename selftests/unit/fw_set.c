// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Whole-map reads (xnf_map_read_all) on the map types xnf uses, and the
 * firewall's rule-set transaction: xnf_fw_apply is all or nothing,
 * xnf_fw_read returns the active generation whatever the inactive one
 * holds and never writes, and hit counters are zeroed only for slots
 * whose rule changed.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <linux/in.h>
#include <bpf/bpf.h>

#include "fixture.h"

static int map_new(enum bpf_map_type type, __u32 ksize, __u32 vsize, __u32 max)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts);

	if (type == BPF_MAP_TYPE_LPM_TRIE || type == BPF_MAP_TYPE_HASH)
		opts.map_flags = BPF_F_NO_PREALLOC;
	return bpf_map_create(type, NULL, ksize, vsize, max, &opts);
}

TEST(maps_read_all_array)
{
	__u32 keys[65], n = 99, i, bad = 0, vsz;
	__u64 vals[65];
	int fd = map_new(BPF_MAP_TYPE_ARRAY, 4, 8, 64);

	if (!ASSERT_GE(fd, 0, "create array"))
		return;
	for (i = 0; i < 64; i++) {
		__u64 v = i * 1000 + 7;

		bpf_map_update_elem(fd, &i, &v, BPF_ANY);
	}
	ASSERT_OK(xnf_map_value_size(fd, &vsz), "value size");
	ASSERT_EQ(vsz, 8, "value size of an array");
	if (ASSERT_OK(xnf_map_read_all(fd, 4, 8, 64, keys, vals, &n), "read all")) {
		ASSERT_EQ(n, 64, "every element");
		for (i = 0; i < n; i++)
			bad += keys[i] != i || vals[i] != i * 1000 + 7;
		ASSERT_EQ(bad, 0, "keys in order, values theirs");
	}
	ASSERT_EQ(xnf_map_read_all(fd, 4, 8, 63, keys, vals, &n), -E2BIG,
		  "one element more than max");
	ASSERT_EQ(n, 0, "no count on error");
	ASSERT_EQ(xnf_map_read_all(fd, 4, 4, 64, keys, vals, &n), -EINVAL,
		  "wrong value size");
	close(fd);
}

TEST(maps_read_all_hash)
{
	__u32 keys[301], vals[301], n = 0, i, bad = 0;
	__u64 sum = 0;
	int fd = map_new(BPF_MAP_TYPE_HASH, 4, 4, 1024);

	if (!ASSERT_GE(fd, 0, "create hash"))
		return;
	if (ASSERT_OK(xnf_map_read_all(fd, 4, 4, 0, keys, vals, &n),
		      "empty, max 0"))
		ASSERT_EQ(n, 0, "empty map");
	if (ASSERT_OK(xnf_map_read_all(fd, 4, 4, 10, keys, vals, &n), "empty"))
		ASSERT_EQ(n, 0, "empty map");
	for (i = 0; i < 300; i++) {
		__u32 k = i * 7919, v = k ^ 0x5a5a;

		bpf_map_update_elem(fd, &k, &v, BPF_ANY);
	}
	if (ASSERT_OK(xnf_map_read_all(fd, 4, 4, 301, keys, vals, &n),
		      "read all")) {
		ASSERT_EQ(n, 300, "every element");
		for (i = 0; i < n; i++) {
			bad += vals[i] != (keys[i] ^ 0x5a5a) || keys[i] % 7919;
			sum += keys[i] / 7919;
		}
		ASSERT_EQ(bad, 0, "each value with its key");
		ASSERT_EQ(sum, 299 * 300 / 2, "each key once");
	}
	ASSERT_EQ(xnf_map_read_all(fd, 4, 4, 299, keys, vals, &n), -E2BIG,
		  "max smaller than the count");
	ASSERT_EQ(xnf_map_read_all(fd, 4, 4, 1, keys, vals, &n), -E2BIG, "max 1");
	close(fd);
}

TEST(maps_read_all_lpm)
{
	struct xnf_fw_lpm4_key keys[40], k = { .gen = 1 };
	__u32 vals[40], n = 0, i, bad = 0;
	int fd = map_new(BPF_MAP_TYPE_LPM_TRIE, sizeof(k), 4, 100);

	if (!ASSERT_GE(fd, 0, "create LPM trie"))
		return;
	if (ASSERT_OK(xnf_map_read_all(fd, sizeof(k), 4, 40, keys, vals, &n),
		      "empty"))
		ASSERT_EQ(n, 0, "empty trie");
	for (i = 0; i < 40; i++) {
		k.prefixlen = 32 + 16 + i % 17;
		k.addr[0] = 10;
		k.addr[1] = i;
		bpf_map_update_elem(fd, &k, &i, BPF_ANY);
	}
	if (ASSERT_OK(xnf_map_read_all(fd, sizeof(k), 4, 40, keys, vals, &n),
		      "read all")) {
		ASSERT_EQ(n, 40, "every prefix");
		for (i = 0; i < n; i++)
			bad += keys[i].addr[1] != vals[i] ||
			       keys[i].prefixlen != 32 + 16 + vals[i] % 17;
		ASSERT_EQ(bad, 0, "each value with its prefix");
	}
	ASSERT_EQ(xnf_map_read_all(fd, sizeof(k), 4, 39, keys, vals, &n),
		  -E2BIG, "max smaller than the count");
	close(fd);
}

TEST(maps_read_all_percpu)
{
	int ncpus = xnf_ncpus(), fd;
	struct xnf_fw_hit *vals = NULL, *v = NULL;
	__u32 keys[8], n, vsz, i;
	int cpu, bad = 0;

	fd = map_new(BPF_MAP_TYPE_PERCPU_ARRAY, 4, sizeof(*vals), 8);
	if (!ASSERT_GE(fd, 0, "create per-CPU array") ||
	    !ASSERT_GE(ncpus, 1, "cpus"))
		return;
	ASSERT_OK(xnf_map_value_size(fd, &vsz), "value size");
	ASSERT_EQ(vsz, sizeof(*vals) * ncpus, "all CPUs' values");
	vals = calloc(8 * ncpus, sizeof(*vals));
	v = calloc(ncpus, sizeof(*v));
	if (!ASSERT_TRUE(vals && v, "calloc"))
		goto out;
	for (i = 0; i < 8; i++) {
		for (cpu = 0; cpu < ncpus; cpu++)
			v[cpu].packets = i * 100 + cpu;
		bpf_map_update_elem(fd, &i, v, BPF_ANY);
	}
	if (ASSERT_OK(xnf_map_read_all(fd, 4, vsz, 8, keys, vals, &n),
		      "read all")) {
		ASSERT_EQ(n, 8, "every slot");
		for (i = 0; i < n; i++)
			for (cpu = 0; cpu < ncpus; cpu++)
				bad += vals[i * ncpus + cpu].packets !=
				       keys[i] * 100 + cpu;
		ASSERT_EQ(bad, 0, "every CPU's value");
	}
	ASSERT_EQ(xnf_map_read_all(fd, 4, sizeof(*vals), 8, keys, vals, &n),
		  ncpus > 1 ? -EINVAL : 0, "one CPU's value size");
out:
	free(v);
	free(vals);
	close(fd);
}

static struct xnf_fw_rule fw_udp(__u32 prio, __u8 action, __u16 dport)
{
	struct xnf_fw_rule r = {
		.prio = prio,
		.action = action,
		.in_use = 1,
		.proto = IPPROTO_UDP,
		.flags = XNF_FW_F_PROTO | XNF_FW_F_DPORT,
		.dport_lo = dport,
		.dport_hi = dport,
	};

	return r;
}

/* A set of @n rules of @rules in slots 0..n-1, default @def. */
static struct xnf_fw_set *fw_set_of(const struct xnf_fw_rule *rules, __u32 n,
				    __u32 def)
{
	struct xnf_fw_set *set = xnf_fw_set_new();
	__u32 i;

	if (!ASSERT_TRUE(set != NULL, "new set"))
		return NULL;
	for (i = 0; i < n; i++)
		if (!ASSERT_OK(xnf_fw_set_replace(set, i, &rules[i]), "put rule"))
			goto fail;
	if (ASSERT_OK(xnf_fw_set_policy(set, def), "policy"))
		return set;
fail:
	xnf_fw_set_free(set);
	return NULL;
}

/* The running set is @want (rules by slot and default). */
static bool fw_running_is(struct fx *f, const struct xnf_fw_set *want,
			  const char *what)
{
	struct xnf_fw_set *got = NULL;
	bool ok;

	if (!ASSERT_OK(xnf_fw_read(f->dp, &got), what))
		return false;
	ok = ASSERT_EQ(xnf_fw_set_default(got), xnf_fw_set_default(want), what);
	ok &= ASSERT_MEM(xnf_fw_set_rules(got), xnf_fw_set_rules(want),
			 XNF_FW_MAX_RULES * sizeof(struct xnf_fw_rule), what);
	xnf_fw_set_free(got);
	return ok;
}

static bool fw_active_gen(struct fx *f, __u32 *gen)
{
	__u32 zero = 0;

	return ASSERT_OK(bpf_map_lookup_elem(xnf_table_fd(f->dp, XNF_T_FW_ACTIVE),
					     &zero, gen) ?
				 -errno :
				 0,
			 "read active");
}

/* A UDP frame to @dport through the loaded chain: its XDP action. */
static int fw_verdict(struct fx *f, __u16 dport)
{
	struct pkt_spec s = { .family = 4, .proto = IPPROTO_UDP, .dport = dport };
	__u8 buf[PKT_MAX];
	struct fx_out out;
	int len = pkt_build(buf, sizeof(buf), &s);

	if (fx_run(f, buf, len, &out))
		return -1;
	return out.ret;
}

TEST(fw_apply_all_or_nothing)
{
	struct xnf_fw_rule a[2] = {
		fw_udp(10, XNF_FW_DROP, 5001),
		fw_udp(20, XNF_FW_ALLOW, 5002),
	};
	struct xnf_fw_set *set_a = NULL, *big = NULL;
	__u32 gen0, gen, i;
	int fd, trap;
	struct fx f;

	if (!fx_open(&f))
		return;
	set_a = fw_set_of(a, 2, XNF_FW_ALLOW);
	big = xnf_fw_set_new();
	if (!set_a || !ASSERT_TRUE(big != NULL, "new set") ||
	    !ASSERT_OK(xnf_fw_apply(f.dp, set_a, NULL, 0), "apply A") ||
	    !fx_chain(&f, "firewall,l3fwd,l2fwd", false, false) ||
	    !fx_route4(&f, "198.51.100.0/24", 1, XNF_RT_UNICAST) ||
	    !fw_active_gen(&f, &gen0))
		goto out;
	ASSERT_EQ(fw_verdict(&f, 5001), XDP_DROP, "A drops 5001");

	/* Every rule with its own /32 src and dst: more classes than the
	 * tables hold, so the set does not compile. */
	for (i = 0; i < 9000; i++) {
		struct xnf_fw_rule r = {
			.prio = i + 1,
			.in_use = 1,
			.family = XNF_AF_INET,
			.flags = XNF_FW_F_SRC | XNF_FW_F_DST,
			.src_len = 32,
			.dst_len = 32,
			.src = { 10, 0, i >> 8, i },
			.dst = { 172, 0, i >> 8, i },
		};

		if (i < 100)
			r.flags = XNF_FW_F_DST;
		else if (i < 200)
			r.flags = XNF_FW_F_SRC;
		if (!ASSERT_OK(xnf_fw_set_add(big, &r, false, NULL), "add"))
			goto out;
	}
	ASSERT_EQ(xnf_fw_apply(f.dp, big, NULL, 0), -ENOSPC,
		  "a set that does not compile");
	fw_running_is(&f, set_a, "after a failed compile: A runs");
	if (fw_active_gen(&f, &gen))
		ASSERT_EQ(gen, gen0, "no switch");

	/* A write that fails half way through the inactive generation: the
	 * destination port table is swapped for a one-element array, so its
	 * batch update stops at the second key. */
	xnf_fw_set_flush(big);
	ASSERT_OK(xnf_fw_set_add(big, &a[1], false, NULL), "add");
	trap = map_new(BPF_MAP_TYPE_ARRAY, 4, 4, 1);
	if (!ASSERT_GE(trap, 0, "create a one-element array"))
		goto out;
	fd = xnf_table_fd(f.dp, XNF_T_FW_DPORT);
	f.dp->fd[XNF_T_FW_DPORT] = trap;
	ASSERT_ERR(xnf_fw_apply(f.dp, big, NULL, 0), "a write that fails");
	f.dp->fd[XNF_T_FW_DPORT] = fd;
	close(trap);
	fw_running_is(&f, set_a, "after a failed write: A runs");
	if (fw_active_gen(&f, &gen))
		ASSERT_EQ(gen, gen0, "no switch");
	ASSERT_EQ(fw_verdict(&f, 5001), XDP_DROP, "A still drops 5001");

	/* And the next apply goes through. */
	if (ASSERT_OK(xnf_fw_apply(f.dp, big, NULL, 0), "apply"))
		fw_running_is(&f, big, "the new set runs");
	ASSERT_EQ(fw_verdict(&f, 5001), XDP_REDIRECT, "the new set allows 5001");
out:
	xnf_fw_set_free(big);
	xnf_fw_set_free(set_a);
	fx_close(&f);
}

/* A writer killed after writing the inactive generation and before the
 * switch: the inactive generation holds anything. Readers return the
 * active set and write nothing; the next apply overwrites the garbage. */
TEST(fw_read_ignores_inactive)
{
	struct xnf_fw_rule a[2] = {
		fw_udp(10, XNF_FW_DROP, 5001),
		fw_udp(20, XNF_FW_ALLOW, 5002),
	};
	__u32 max = XNF_FW_GENS * XNF_FW_MAX_RULES, *keys = NULL, n, gen, i, k;
	struct xnf_fw_rule *before = NULL, *after = NULL, junk;
	struct xnf_fw_set *set_a = NULL, *got = NULL;
	struct xnf_fw_hdr hdr = { .nrules = 7, .default_action = 1, .serial = 99 };
	struct fx f;

	if (!fx_open(&f))
		return;
	set_a = fw_set_of(a, 2, XNF_FW_ALLOW);
	keys = calloc(max, sizeof(*keys));
	before = calloc(max, sizeof(*before));
	after = calloc(max, sizeof(*after));
	if (!set_a || !ASSERT_TRUE(keys && before && after, "calloc") ||
	    !ASSERT_OK(xnf_fw_apply(f.dp, set_a, NULL, 0), "apply A") ||
	    !fw_active_gen(&f, &gen))
		goto out;
	/* Garbage in every slot of the inactive generation and its header. */
	memset(&junk, 0xa5, sizeof(junk));
	for (i = 0; i < XNF_FW_MAX_RULES; i++) {
		k = (gen ^ 1) * XNF_FW_MAX_RULES + i;
		junk.prio = i;
		if (!ASSERT_OK(bpf_map_update_elem(xnf_table_fd(f.dp,
								XNF_T_FW_RULES),
						   &k, &junk, BPF_ANY) ?
				       -errno :
				       0,
			       "write garbage"))
			goto out;
	}
	k = gen ^ 1;
	ASSERT_OK(bpf_map_update_elem(xnf_table_fd(f.dp, XNF_T_FW_HDR), &k,
				      &hdr, BPF_ANY),
		  "garbage header");
	if (!ASSERT_OK(xnf_map_read_all(xnf_table_fd(f.dp, XNF_T_FW_RULES), 4,
					sizeof(*before), max, keys, before, &n),
		       "dump rules"))
		goto out;

	fw_running_is(&f, set_a, "the reader returns A");
	if (ASSERT_OK(xnf_fw_read(f.dp, &got), "read"))
		ASSERT_EQ(xnf_fw_set_count(got), 2, "two rules");
	if (ASSERT_OK(xnf_map_read_all(xnf_table_fd(f.dp, XNF_T_FW_RULES), 4,
				       sizeof(*after), max, keys, after, &n),
		      "dump rules again"))
		ASSERT_MEM(after, before, max * sizeof(*after),
			   "the reader wrote nothing");

	/* The next apply replaces the garbage. */
	ASSERT_OK(xnf_fw_set_del(got, 10, NULL), "del prio 10");
	if (ASSERT_OK(xnf_fw_apply(f.dp, got, NULL, 0), "apply"))
		fw_running_is(&f, got, "the new set runs");
out:
	xnf_fw_set_free(got);
	xnf_fw_set_free(set_a);
	free(after);
	free(before);
	free(keys);
	fx_close(&f);
}

/* Slot @slot's counters, summed. */
static __u64 fw_hits_of(struct fx *f, __u32 slot)
{
	struct xnf_fw_hit *hits = calloc(XNF_FW_HITS, sizeof(*hits));
	__u64 n = ~0ULL;

	if (hits && ASSERT_OK(xnf_fw_hits_read(f->dp, hits), "read hits"))
		n = hits[slot].packets;
	free(hits);
	return n;
}

/* The form the active generation's header says classifies (1: linear). */
static bool fw_linear_is(struct fx *f, __u32 want, const char *what)
{
	struct xnf_fw_hdr hdr;
	__u32 gen;

	if (!fw_active_gen(f, &gen) ||
	    !ASSERT_OK(bpf_map_lookup_elem(xnf_table_fd(f->dp, XNF_T_FW_HDR),
					   &gen, &hdr) ?
			       -errno :
			       0,
		       "read header"))
		return false;
	return ASSERT_EQ(hdr.linear, want, what);
}

/* A set growing past XNF_FW_LINEAR_MAX rules and shrinking back changes
 * form with the generation it is written to: verdicts and hit counters stay
 * those of the rules in force. The small set's last slot allows UDP to
 * 2000, the slots before it drop UDP to 1000 + slot; the large set adds one
 * slot, first by prio, which drops UDP to 2000. */
TEST(fw_linear_bound_crossing)
{
	struct xnf_fw_rule rules[XNF_FW_LINEAR_MAX + 1];
	struct xnf_fw_set *small = NULL, *big = NULL;
	__u32 i, last = XNF_FW_LINEAR_MAX - 1;
	struct fx f;

	for (i = 0; i < last; i++)
		rules[i] = fw_udp(10 * (i + 1), XNF_FW_DROP, 1000 + i);
	rules[last] = fw_udp(10 * (last + 1), XNF_FW_ALLOW, 2000);
	rules[last + 1] = fw_udp(5, XNF_FW_DROP, 2000);
	if (!fx_open(&f))
		return;
	small = fw_set_of(rules, XNF_FW_LINEAR_MAX, XNF_FW_ALLOW);
	big = fw_set_of(rules, XNF_FW_LINEAR_MAX + 1, XNF_FW_ALLOW);
	if (!small || !big || !fx_chain(&f, "firewall", false, false))
		goto out;
	/* small, big, small: at the bound, past it, back. */
	for (i = 0; i < 3; i++) {
		bool linear = i != 1;
		__u32 slot = linear ? last : last + 1;
		__u64 hits;

		if (!ASSERT_OK(xnf_fw_apply(f.dp, linear ? small : big, NULL, 0),
			       "apply") ||
		    !fw_linear_is(&f, linear, "form of the active generation"))
			break;
		hits = fw_hits_of(&f, 0);
		ASSERT_EQ(fw_verdict(&f, 1000), XDP_DROP, "first rule drops");
		ASSERT_EQ(fw_hits_of(&f, 0), hits + 1, "first rule counted");
		hits = fw_hits_of(&f, last - 1);
		ASSERT_EQ(fw_verdict(&f, 1000 + last - 1), XDP_DROP,
			  "the rule before the last drops");
		ASSERT_EQ(fw_hits_of(&f, last - 1), hits + 1,
			  "the rule before the last counted");
		ASSERT_EQ(fw_verdict(&f, 3000), XDP_PASS, "no rule: default");
		hits = fw_hits_of(&f, slot);
		ASSERT_EQ(fw_verdict(&f, 2000), linear ? XDP_PASS : XDP_DROP,
			  "dport 2000: the small set allows, the large drops");
		ASSERT_EQ(fw_hits_of(&f, slot), hits + 1,
			  "dport 2000 counted by the rule that decided");
	}
out:
	xnf_fw_set_free(big);
	xnf_fw_set_free(small);
	fx_close(&f);
}

TEST(fw_hits_zeroed_only_when_the_rule_changes)
{
	struct xnf_fw_rule a[3] = {
		fw_udp(10, XNF_FW_DROP, 5001),
		fw_udp(20, XNF_FW_DROP, 5002),
		fw_udp(30, XNF_FW_DROP, 5003),
	};
	struct xnf_fw_rule other = fw_udp(40, XNF_FW_DROP, 5004);
	struct xnf_fw_set *set = NULL;
	struct xnf_fw_hit *v = NULL;
	int ncpus = xnf_ncpus();
	__u32 i, slot;
	struct fx f;

	if (!fx_open(&f))
		return;
	set = fw_set_of(a, 3, XNF_FW_ALLOW);
	v = calloc(ncpus > 0 ? ncpus : 1, sizeof(*v));
	if (!set || !ASSERT_TRUE(v != NULL, "calloc") ||
	    !ASSERT_OK(xnf_fw_apply(f.dp, set, NULL, 0), "apply"))
		goto out;
	/* 5 packets per CPU counted in every slot. */
	for (i = 0; i < (__u32)ncpus; i++)
		v[i].packets = 5;
	for (i = 0; i < 4; i++)
		ASSERT_OK(bpf_map_update_elem(xnf_table_fd(f.dp, XNF_T_FW_HITS),
					      &i, v, BPF_ANY),
			  "set counters");
	/* Slot 0 keeps its rule, slot 1 gets another one, slot 2 is emptied
	 * and slot 3 gets a rule. */
	if (!ASSERT_OK(xnf_fw_set_replace(set, 1, &other), "replace slot 1") ||
	    !ASSERT_OK(xnf_fw_set_del(set, 30, &slot), "del prio 30") ||
	    !ASSERT_EQ(slot, 2, "prio 30 was in slot 2") ||
	    !ASSERT_OK(xnf_fw_set_replace(set, 3, &a[2]), "prio 30 into slot 3") ||
	    !ASSERT_OK(xnf_fw_apply(f.dp, set, NULL, 0), "apply"))
		goto out;
	ASSERT_EQ(fw_hits_of(&f, 0), 5ULL * ncpus,
		  "a rule that stays keeps its count");
	ASSERT_EQ(fw_hits_of(&f, 1), 0, "a new rule in a used slot starts at 0");
	ASSERT_EQ(fw_hits_of(&f, 2), 5ULL * ncpus,
		  "an emptied slot is left alone");
	ASSERT_EQ(fw_hits_of(&f, 3), 0, "a new rule in a free slot starts at 0");
	/* Applying the same set again changes no counter. */
	for (i = 0; i < 4; i++)
		ASSERT_OK(bpf_map_update_elem(xnf_table_fd(f.dp, XNF_T_FW_HITS),
					      &i, v, BPF_ANY),
			  "set counters");
	if (ASSERT_OK(xnf_fw_set_policy(set, XNF_FW_DROP), "policy") &&
	    ASSERT_OK(xnf_fw_apply(f.dp, set, NULL, 0), "apply the same rules"))
		for (i = 0; i < 4; i++)
			ASSERT_EQ(fw_hits_of(&f, i), 5ULL * ncpus,
				  "same rules, same counts");
out:
	free(v);
	xnf_fw_set_free(set);
	fx_close(&f);
}

TEST(fw_set_edits)
{
	struct xnf_fw_rule r = fw_udp(0, XNF_FW_DROP, 53);
	struct xnf_fw_set *set = xnf_fw_set_new();
	__u32 slot, prio;

	if (!ASSERT_TRUE(set != NULL, "new set"))
		return;
	ASSERT_EQ(xnf_fw_set_last_prio(set, &prio), -ENOENT, "empty");
	ASSERT_OK(xnf_fw_set_add(set, &r, true, &slot), "auto prio");
	ASSERT_EQ(slot, 0, "first slot");
	ASSERT_EQ(xnf_fw_set_rules(set)[0].prio, XNF_FW_PRIO_STEP, "first prio");
	ASSERT_OK(xnf_fw_set_add(set, &r, true, &slot), "auto prio");
	ASSERT_EQ(xnf_fw_set_rules(set)[1].prio, 2 * XNF_FW_PRIO_STEP,
		  "next prio");
	r.prio = 10;
	ASSERT_EQ(xnf_fw_set_add(set, &r, false, NULL), -EEXIST, "prio taken");
	r.prio = 5;
	ASSERT_OK(xnf_fw_set_add(set, &r, false, &slot), "prio 5");
	ASSERT_EQ(slot, 2, "third slot");
	ASSERT_OK(xnf_fw_set_del(set, 10, &slot), "del 10");
	ASSERT_EQ(slot, 0, "slot of 10");
	ASSERT_EQ(xnf_fw_set_del(set, 10, NULL), -ENOENT, "del 10 again");
	r.prio = 7;
	ASSERT_OK(xnf_fw_set_add(set, &r, false, &slot), "prio 7");
	ASSERT_EQ(slot, 0, "the first free slot");
	ASSERT_OK(xnf_fw_set_del(set, 20, NULL), "del the highest");
	ASSERT_OK(xnf_fw_set_last_prio(set, &prio), "last prio");
	ASSERT_EQ(prio, 7, "the highest left");
	ASSERT_OK(xnf_fw_set_add(set, &r, true, &slot), "auto prio");
	ASSERT_EQ(xnf_fw_set_rules(set)[slot].prio, 7 + XNF_FW_PRIO_STEP,
		  "above the highest left");
	r.prio = 0xffffffffU - 1;
	ASSERT_OK(xnf_fw_set_add(set, &r, false, NULL), "a high prio");
	ASSERT_EQ(xnf_fw_set_add(set, &r, true, NULL), -ERANGE, "no prio left");
	r.dport_lo = 9;
	r.dport_hi = 8;
	ASSERT_EQ(xnf_fw_set_add(set, &r, true, NULL), -EINVAL, "malformed");
	ASSERT_EQ(xnf_fw_set_count(set), 4, "four rules");
	ASSERT_EQ(xnf_fw_set_policy(set, 2), -EINVAL, "bad policy");
	xnf_fw_set_flush(set);
	ASSERT_EQ(xnf_fw_set_count(set), 0, "flushed");
	xnf_fw_set_free(set);
}

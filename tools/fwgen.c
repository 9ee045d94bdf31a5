// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xnf-fwgen - prints a generated firewall rule set (loader/fw_gen.c,
 * ClassBench acl1-like shapes) as `xnf -b` lines, so that the benchmark
 * loads exactly what the unit tests and bench-micro generate, through the
 * same `xnf fw add` an operator uses, and can translate the same rules
 * into nftables.
 *
 *   xnf-fwgen N [SEED]
 *
 * Prints N lines "fw add prio P allow|drop [proto N] [src A/L] [dst A/L]
 * [sport LO-HI] [dport LO-HI]", the first N rules of the generator's
 * sequence that are not catch-alls (a rule with no address and no port:
 * in the middle of a set it would shadow every later rule of its protocol;
 * bench-micro leaves them out for the same reason), prio 10, 20, ...
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xnf.h"

static int catch_all(const struct xnf_fw_rule *r)
{
	return !(r->flags & (XNF_FW_F_SRC | XNF_FW_F_DST | XNF_FW_F_SPORT |
			     XNF_FW_F_DPORT));
}

static void put_prefix(const char *kw, const struct xnf_fw_rule *r,
		       const __u8 *addr, __u8 len)
{
	char buf[INET6_ADDRSTRLEN];

	inet_ntop(r->family == XNF_AF_INET6 ? AF_INET6 : AF_INET, addr, buf,
		  sizeof(buf));
	printf(" %s %s/%u", kw, buf, len);
}

static void put_rule(const struct xnf_fw_rule *r, __u32 prio)
{
	printf("fw add prio %u %s", prio,
	       r->action == XNF_FW_DROP ? "drop" : "allow");
	if (r->flags & XNF_FW_F_PROTO)
		printf(" proto %u", r->proto);
	if (r->flags & XNF_FW_F_SRC)
		put_prefix("src", r, r->src, r->src_len);
	if (r->flags & XNF_FW_F_DST)
		put_prefix("dst", r, r->dst, r->dst_len);
	if (r->flags & XNF_FW_F_SPORT)
		printf(" sport %u-%u", r->sport_lo, r->sport_hi);
	if (r->flags & XNF_FW_F_DPORT)
		printf(" dport %u-%u", r->dport_lo, r->dport_hi);
	putchar('\n');
}

int main(int argc, char **argv)
{
	struct xnf_fw_rule *gen = NULL;
	unsigned long n, seed = 1, want;
	__u32 i, k;
	char *end;
	int err;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "Usage: xnf-fwgen N [SEED]\n");
		return 2;
	}
	n = strtoul(argv[1], &end, 10);
	if (*end || !n || n > XNF_FW_MAX_RULES) {
		fprintf(stderr, "Error: N must be 1..%u, not '%s'\n",
			XNF_FW_MAX_RULES, argv[1]);
		return 2;
	}
	if (argc == 3) {
		seed = strtoul(argv[2], &end, 10);
		if (*end || seed > 0xffffffffUL) {
			fprintf(stderr,
				"Error: SEED must be a 32-bit number, not '%s'\n",
				argv[2]);
			return 2;
		}
	}
	/* About one rule in 400 is a catch-all: ask for a few more. */
	for (want = n + n / 16 + 16;; want *= 2) {
		free(gen);
		gen = calloc(want, sizeof(*gen));
		if (!gen) {
			fprintf(stderr, "Error: out of memory for %lu rules\n",
				want);
			return 1;
		}
		err = xnf_fw_generate(gen, want, seed);
		if (err) {
			fprintf(stderr, "Error: cannot generate %lu rules: %s\n",
				want, strerror(-err));
			free(gen);
			return 1;
		}
		for (i = 0, k = 0; i < want && k < n; i++)
			k += !catch_all(&gen[i]);
		if (k == n)
			break;
	}
	for (i = 0, k = 0; i < want && k < n; i++) {
		if (catch_all(&gen[i]))
			continue;
		put_rule(&gen[i], (k + 1) * 10);
		k++;
	}
	free(gen);
	return 0;
}

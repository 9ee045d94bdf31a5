// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Tests of test.h itself: its comparisons go by value, whatever the types
 * of the two sides. The predicate (xnf_test_cmp) is asserted directly, so
 * that a comparison that must fail does not fail the run. */
#include <limits.h>
#include <linux/types.h>

#include "test.h"

#define CMP(op, a, b) \
	xnf_test_cmp(XNF_OP_##op, XNF_TEST_VAL(a), XNF_TEST_VAL(b))

TEST(harness_cmp)
{
	SUBTEST("signedness") {
		/* the (long long) casts of old made these two equal */
		ASSERT_FALSE(CMP(EQ, (__u64)~0ULL, -1), "u64 ~0 is not -1");
		ASSERT_TRUE(CMP(NEQ, (__u64)~0ULL, -1), "u64 ~0 is not -1");
		ASSERT_TRUE(CMP(GT, (__u64)~0ULL, -1), "u64 ~0 > -1");
		ASSERT_FALSE(CMP(EQ, -1, ULLONG_MAX), "-1 is not ULLONG_MAX");
		ASSERT_TRUE(CMP(LT, -1, 0U), "-1 < 0U, unlike C's -1 < 0U");
		ASSERT_TRUE(CMP(LT, LLONG_MIN, (__u8)0), "LLONG_MIN < (u8)0");
		ASSERT_TRUE(CMP(GT, (__u64)LLONG_MAX + 1, LLONG_MAX),
			    "2^63 > LLONG_MAX");
		ASSERT_TRUE(CMP(GE, (__u64)1 << 63, 0), "2^63 >= 0");
		ASSERT_FALSE(CMP(EQ, (__u32)~0U, -1), "u32 ~0 is not -1");
		ASSERT_TRUE(CMP(EQ, (__u32)~0U, 4294967295LL), "u32 ~0, as s64");
		ASSERT_TRUE(CMP(EQ, (__s8)-1, -1LL), "s8 -1 is -1");
		ASSERT_TRUE(CMP(EQ, (char)'x', 'x'), "char");
		ASSERT_TRUE(CMP(LE, -5, -5L), "-5 <= -5");
		ASSERT_TRUE(CMP(LT, -6, -5L), "-6 < -5");
		ASSERT_TRUE(CMP(EQ, true, 1U), "bool");
	}
	SUBTEST("bitfield") {
		struct {
			unsigned int u : 3;
			int s : 3;
		} bf = { .u = 7, .s = -1 };

		ASSERT_EQ(bf.u, 7, "unsigned bit-field");
		ASSERT_EQ(bf.s, -1, "signed bit-field");
		ASSERT_TRUE(CMP(LT, bf.s, bf.u), "-1 < 7");
	}
	SUBTEST("float") {
		/* compared as long double, not truncated to an integer */
		ASSERT_FALSE(CMP(EQ, 0.5, 0), "0.5 is not 0");
		ASSERT_TRUE(CMP(LT, 0.5, 1U), "0.5 < 1");
		ASSERT_TRUE(CMP(GT, -0.5, -1), "-0.5 > -1");
		ASSERT_TRUE(CMP(EQ, 2.0f, 2ULL), "2.0f == 2");
		ASSERT_FALSE(CMP(EQ, __builtin_nan(""), __builtin_nan("")),
			     "NaN is unordered");
		ASSERT_FALSE(CMP(LE, __builtin_nan(""), 0), "NaN is unordered");
	}
	SUBTEST("pointer") {
		int x[2];

		ASSERT_EQ(&x[0], x, "same address");
		ASSERT_NEQ(&x[1], NULL, "not NULL");
		ASSERT_LT(&x[0], &x[1], "ordered");
		ASSERT_TRUE(CMP(EQ, (void *)0, NULL), "NULL");
	}
	SUBTEST("once") {
		int i = 0, j = 5;

		ASSERT_EQ(i++, 0, "operand evaluated once");
		ASSERT_EQ(i, 1, "operand evaluated once");
		ASSERT_LT(i++, j--, "both operands evaluated once");
		ASSERT_EQ(i, 2, "left operand evaluated once");
		ASSERT_EQ(j, 4, "right operand evaluated once");
		ASSERT_OK(i - 2, "ASSERT_OK evaluates once");
		ASSERT_ERR(i-- - 3, "ASSERT_ERR evaluates once");
		ASSERT_EQ(i, 1, "ASSERT_ERR evaluated its operand once");
	}
	SUBTEST("ok_err") {
		/* an error is a negative number, not a large unsigned one */
		ASSERT_TRUE(CMP(LT, -22, 0), "-EINVAL is an error");
		ASSERT_FALSE(CMP(LT, (__u64)-22, 0), "a u64 is never an error");
	}
}

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test.h - the unit-test harness, in the manner of the kernel's test_progs:
 * every TEST(name) registers itself, ASSERT_* macros print what differed
 * and where, return false, and mark the running test (or subtest) failed. A
 * test stops at its first failed assertion only if it checks the result
 * (the macros return bool): `if (!ASSERT_EQ(a, b, "what")) return;`.
 *
 * Skipping: SKIP("why %s", ...) marks the running test, or subtest, skipped
 * and returns from the calling function; xnf_test_skip() only marks it.
 *
 * Subtests: a test runs named parts of itself, each reported on its own
 * line as NAME/SUB and counted on its own; a subtest ends where the next
 * one starts or the test returns:
 *	SUBTEST("v4") {
 *		...
 *	}
 *
 *   build/test_unit                 run all tests
 *   build/test_unit -t fw,l3fwd     tests whose name contains "fw" or "l3fwd"
 *   build/test_unit -t fw_compile/v4  and of those, subtests containing "v4"
 *   build/test_unit -v              print every assertion, and the library's
 *                                   stderr even of tests that pass
 * Without -v, what a test writes on stderr (the library's Error: lines of
 * negative tests, a child's chatter) is kept and shown only if it fails.
 * One line per test and per subtest: "ok   NAME", "FAIL NAME/SUB",
 * "skip NAME: why". The last line counts those lines, and is exactly
 * "N passed, N failed, N skipped"; the exit code is 1 if any failed.
 *
 * ASSERT_EQ and friends compare integers as the numbers they are, whatever
 * their types: (__u64)~0 does not equal -1, and a negative int is less
 * than any unsigned value. Floating point is compared as long double.
 */
#ifndef XNF_TEST_H
#define XNF_TEST_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <stdint.h>
#include <inttypes.h>

struct xnf_test {
	const char *name;
	void (*fn)(void);
	struct xnf_test *next;
};

void xnf_test_register(struct xnf_test *t);
extern int xnf_test_failed; /* assertions failed in the running test */
extern int xnf_test_verbose;

#define TEST(name)                                                             \
	static void test_##name(void);                                         \
	static struct xnf_test xnf_test_##name = { #name, test_##name, NULL }; \
	__attribute__((constructor)) static void xnf_test_reg_##name(void)     \
	{                                                                      \
		xnf_test_register(&xnf_test_##name);                           \
	}                                                                      \
	static void test_##name(void)

/* Ends the running subtest, if any, and starts @name: false if the -t
 * filter leaves it out, then the caller skips its body. */
bool xnf_test_start_subtest(const char *name);
#define SUBTEST(name) if (xnf_test_start_subtest(name))

void xnf_test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define SKIP(...)                           \
	do {                                \
		xnf_test_skip(__VA_ARGS__); \
		return;                     \
	} while (0)

bool xnf_test_check(bool ok, const char *file, int line, const char *what,
		    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/*
 * A value to compare, as its type classes it. The class is chosen with
 * _Generic on the promoted type ((x) + 0), so char and short count as int,
 * and bit-fields work; only the chosen branch is evaluated, once.
 */
enum xnf_test_kind {
	XNF_TK_UNSIGNED,
	XNF_TK_SIGNED,
	XNF_TK_FLOAT,
	XNF_TK_POINTER,
};

struct xnf_test_val {
	enum xnf_test_kind kind;
	union {
		unsigned long long u; /* UNSIGNED and POINTER */
		long long s;	      /* SIGNED */
		long double f;	      /* FLOAT */
	};
};

static inline struct xnf_test_val xnf_test_u(unsigned long long u)
{
	return (struct xnf_test_val){ .kind = XNF_TK_UNSIGNED, .u = u };
}

static inline struct xnf_test_val xnf_test_s(long long s)
{
	return (struct xnf_test_val){ .kind = XNF_TK_SIGNED, .s = s };
}

static inline struct xnf_test_val xnf_test_f(long double f)
{
	return (struct xnf_test_val){ .kind = XNF_TK_FLOAT, .f = f };
}

static inline struct xnf_test_val xnf_test_p(const volatile void *p)
{
	return (struct xnf_test_val){ .kind = XNF_TK_POINTER, .u = (uintptr_t)p };
}

/* The operand itself where its promoted type is one of the three listed,
 * else a constant of the first: every association of a _Generic must be
 * valid for every operand, and this keeps, e.g., a pointer away from a
 * conversion to long double. */
/* clang-format 14 breaks the associations of a _Generic apart */
/* clang-format off */
#define XNF_TEST_AS(x, t1, t2, t3)					\
	_Generic((x) + 0, t1: (x) + 0, t2: (x) + 0, t3: (x) + 0,	\
		 default: (t1)0)
#define XNF_TEST_PTR(x)							\
	_Generic((x) + 0, int: (void *)0, long: (void *)0,		\
		 long long: (void *)0, unsigned int: (void *)0,		\
		 unsigned long: (void *)0, unsigned long long: (void *)0, \
		 float: (void *)0, double: (void *)0,			\
		 long double: (void *)0, default: (x) + 0)

#define XNF_TEST_VAL(x)							\
	_Generic((x) + 0,						\
		 int: xnf_test_s(XNF_TEST_AS(x, long long, long, int)),	\
		 long: xnf_test_s(XNF_TEST_AS(x, long long, long, int)),	\
		 long long: xnf_test_s(XNF_TEST_AS(x, long long, long, int)), \
		 unsigned int: xnf_test_u(XNF_TEST_AS(x, unsigned long long, \
						      unsigned long,	\
						      unsigned int)),	\
		 unsigned long: xnf_test_u(XNF_TEST_AS(x, unsigned long long, \
						       unsigned long,	\
						       unsigned int)),	\
		 unsigned long long: xnf_test_u(XNF_TEST_AS(x,		\
						unsigned long long,	\
						unsigned long, unsigned int)), \
		 float: xnf_test_f(XNF_TEST_AS(x, long double, double, float)), \
		 double: xnf_test_f(XNF_TEST_AS(x, long double, double, float)), \
		 long double: xnf_test_f(XNF_TEST_AS(x, long double, double, \
						     float)),		\
		 default: xnf_test_p(XNF_TEST_PTR(x)))
/* clang-format on */

enum xnf_test_op {
	XNF_OP_EQ,
	XNF_OP_NEQ,
	XNF_OP_LT,
	XNF_OP_LE,
	XNF_OP_GT,
	XNF_OP_GE,
};

/* The predicate of ASSERT_EQ and friends: a OP b, by value. */
bool xnf_test_cmp(enum xnf_test_op op, struct xnf_test_val a,
		  struct xnf_test_val b);
bool xnf_test_check_cmp(enum xnf_test_op op, struct xnf_test_val a,
			struct xnf_test_val b, const char *as, const char *bs,
			const char *file, int line, const char *what);

#define XNF_ASSERT_CMP(op, a, b, what)                                   \
	xnf_test_check_cmp(op, XNF_TEST_VAL(a), XNF_TEST_VAL(b), #a, #b, \
			   __FILE__, __LINE__, what)

#define ASSERT_TRUE(cond, what) \
	xnf_test_check(!!(cond), __FILE__, __LINE__, what, "%s", #cond)
#define ASSERT_FALSE(cond, what) \
	xnf_test_check(!(cond), __FILE__, __LINE__, what, "!(%s)", #cond)
#define ASSERT_EQ(a, b, what)  XNF_ASSERT_CMP(XNF_OP_EQ, a, b, what)
#define ASSERT_NEQ(a, b, what) XNF_ASSERT_CMP(XNF_OP_NEQ, a, b, what)
#define ASSERT_LT(a, b, what)  XNF_ASSERT_CMP(XNF_OP_LT, a, b, what)
#define ASSERT_LE(a, b, what)  XNF_ASSERT_CMP(XNF_OP_LE, a, b, what)
#define ASSERT_GT(a, b, what)  XNF_ASSERT_CMP(XNF_OP_GT, a, b, what)
#define ASSERT_GE(a, b, what)  XNF_ASSERT_CMP(XNF_OP_GE, a, b, what)

/* 0 is success; a negative value is an -errno and is printed as one. */
bool xnf_test_check_ok(struct xnf_test_val v, const char *s, const char *file,
		       int line, const char *what);
/* An error is a negative value (of a signed type). */
bool xnf_test_check_err(struct xnf_test_val v, const char *s, const char *file,
			int line, const char *what);
#define ASSERT_OK(err, what) \
	xnf_test_check_ok(XNF_TEST_VAL(err), #err, __FILE__, __LINE__, what)
#define ASSERT_ERR(err, what) \
	xnf_test_check_err(XNF_TEST_VAL(err), #err, __FILE__, __LINE__, what)

/* Byte-wise comparison; prints the first differing offset and both bytes. */
bool xnf_test_mem(const void *got, const void *want, size_t len,
		  const char *file, int line, const char *what);
#define ASSERT_MEM(got, want, len, what) \
	xnf_test_mem(got, want, len, __FILE__, __LINE__, what)

#endif /* XNF_TEST_H */

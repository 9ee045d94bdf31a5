/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test.h - the unit-test harness, in the manner of the kernel's test_progs:
 * every TEST(name) registers itself, ASSERT_* macros print what differed
 * and where, return false, and mark the running test failed. A test stops at
 * its first failed assertion only if it checks the result (the macros return
 * bool): `if (!ASSERT_EQ(a, b, "what")) return;`.
 *
 *   build/test_unit              run all tests
 *   build/test_unit -t firewall  run tests whose name contains "firewall"
 *   build/test_unit -v           print every assertion
 * The last line is "N passed, N failed".
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
extern int xnf_test_failed;   /* assertions failed in the running test */
extern int xnf_test_verbose;

#define TEST(name)							\
	static void test_##name(void);					\
	static struct xnf_test xnf_test_##name = { #name, test_##name, NULL }; \
	__attribute__((constructor)) static void xnf_test_reg_##name(void) \
	{ xnf_test_register(&xnf_test_##name); }			\
	static void test_##name(void)

bool xnf_test_check(bool ok, const char *file, int line, const char *what,
		    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#define ASSERT_TRUE(cond, what)						\
	xnf_test_check(!!(cond), __FILE__, __LINE__, what, "%s", #cond)
#define ASSERT_FALSE(cond, what)					\
	xnf_test_check(!(cond), __FILE__, __LINE__, what, "!(%s)", #cond)
#define ASSERT_EQ(a, b, what) ({					\
	long long _a = (long long)(a), _b = (long long)(b);		\
	xnf_test_check(_a == _b, __FILE__, __LINE__, what,		\
		       "%s == %s: %lld != %lld", #a, #b, _a, _b); })
#define ASSERT_NEQ(a, b, what) ({					\
	long long _a = (long long)(a), _b = (long long)(b);		\
	xnf_test_check(_a != _b, __FILE__, __LINE__, what,		\
		       "%s != %s: both %lld", #a, #b, _a); })
#define ASSERT_GE(a, b, what) ({					\
	long long _a = (long long)(a), _b = (long long)(b);		\
	xnf_test_check(_a >= _b, __FILE__, __LINE__, what,		\
		       "%s >= %s: %lld < %lld", #a, #b, _a, _b); })
#define ASSERT_LE(a, b, what) ({					\
	long long _a = (long long)(a), _b = (long long)(b);		\
	xnf_test_check(_a <= _b, __FILE__, __LINE__, what,		\
		       "%s <= %s: %lld > %lld", #a, #b, _a, _b); })
#define ASSERT_OK(err, what) ({						\
	long long _e = (long long)(err);				\
	xnf_test_check(_e == 0, __FILE__, __LINE__, what,		\
		       "%s: %lld (%s)", #err, _e, _e < 0 ? strerror((int)-_e) : "not 0"); })
#define ASSERT_ERR(err, what) ({					\
	long long _e = (long long)(err);				\
	xnf_test_check(_e < 0, __FILE__, __LINE__, what,		\
		       "%s: expected an error, got %lld", #err, _e); })
/* Byte-wise comparison; prints the first differing offset and both bytes. */
bool xnf_test_mem(const void *got, const void *want, size_t len,
		  const char *file, int line, const char *what);
#define ASSERT_MEM(got, want, len, what)				\
	xnf_test_mem(got, want, len, __FILE__, __LINE__, what)

#endif /* XNF_TEST_H */

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The names operators see for the enums of include/uapi/: the NFs and the
 * reasons from their lists (XNF_NFS in xnf_nfs.h, XNF_REASONS in
 * xnf_dp.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "xnf.h"

#define NF_NAME_(id, name, flags) [XNF_NF_##id] = #name,
static const char *const nf_names[__XNF_NF_MAX] = { [XNF_NF_ENTRY] = "entry",
						    XNF_NFS(NF_NAME_) };

#define NF_FLAGS_(id, name, flags) [XNF_NF_##id] = (flags),
static const __u32 nf_flags[__XNF_NF_MAX] = { XNF_NFS(NF_FLAGS_) };

#define REASON_NAME_(id, name) [XNF_R_##id] = #name,
static const char *const reason_names[__XNF_R_MAX] = { XNF_REASONS(REASON_NAME_) };

static const char *const verdict_names[__XNF_V_MAX] = {
	[XNF_V_PASS] = "pass",	       [XNF_V_DROP] = "drop",
	[XNF_V_REDIRECT] = "redirect", [XNF_V_FLOOD] = "flood",
	[XNF_V_XSK] = "xsk",
};

const char *xnf_nf_name(__u32 nf)
{
	return nf < __XNF_NF_MAX ? nf_names[nf] : NULL;
}

__u32 xnf_nf_flags(__u32 nf)
{
	return nf < __XNF_NF_MAX ? nf_flags[nf] : 0;
}

int xnf_nf_from_name(const char *name)
{
	int i;

	for (i = XNF_NF_ENTRY + 1; i < __XNF_NF_MAX; i++)
		if (!strcmp(name, nf_names[i]))
			return i;
	return -EINVAL;
}

int xnf_nf_list(char *buf, size_t len, const char *sep)
{
	size_t off = 0;
	int i;

	buf[0] = '\0';
	for (i = XNF_NF_ENTRY + 1; i < __XNF_NF_MAX && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%s",
				i > XNF_NF_ENTRY + 1 ? sep : "", nf_names[i]);
	return off < len ? 0 : -ENAMETOOLONG;
}

const char *xnf_reason_name(__u32 reason)
{
	return reason < __XNF_R_MAX ? reason_names[reason] : "?";
}

const char *xnf_verdict_name(__u32 verdict)
{
	return verdict < __XNF_V_MAX ? verdict_names[verdict] : "?";
}

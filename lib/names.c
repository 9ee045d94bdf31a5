// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The names operators see for the enums of include/uapi/. */
#include <errno.h>
#include <string.h>

#include "xnf.h"

static const char *const nf_names[__XNF_NF_MAX] = {
	[XNF_NF_ENTRY] = "entry", [XNF_NF_FIREWALL] = "firewall",
	[XNF_NF_L3FWD] = "l3fwd", [XNF_NF_L2FWD] = "l2fwd",
	[XNF_NF_XSK] = "xsk",
};

static const char *const reason_names[__XNF_R_MAX] = {
	[XNF_R_NONE] = "none",
	[XNF_R_MALFORMED] = "malformed",
	[XNF_R_NOT_IP] = "not_ip",
	[XNF_R_VLAN] = "vlan",
	[XNF_R_FW_DENY] = "fw_deny",
	[XNF_R_NO_ROUTE] = "no_route",
	[XNF_R_BLACKHOLE] = "blackhole",
	[XNF_R_TTL] = "ttl_expired",
	[XNF_R_LOCAL] = "local",
	[XNF_R_NO_NEIGH] = "no_neigh",
	[XNF_R_FIB] = "fib_other",
	[XNF_R_FRAG_NEEDED] = "frag_needed",
	[XNF_R_NOT_PORT] = "not_xnf_port",
	[XNF_R_L2_MISS] = "l2_miss",
	[XNF_R_HAIRPIN] = "hairpin",
	[XNF_R_REDIRECT] = "redirect",
	[XNF_R_TAIL_CALL] = "tail_call",
	[XNF_R_XSK] = "xsk_no_socket",
	[XNF_R_INTERNAL] = "internal",
	[XNF_R_POLICED] = "policed",
	[XNF_R_BAD_CSUM] = "bad_csum",
	[XNF_R_MARTIAN] = "martian",
};

static const char *const verdict_names[__XNF_V_MAX] = {
	[XNF_V_PASS] = "pass",	       [XNF_V_DROP] = "drop",
	[XNF_V_REDIRECT] = "redirect", [XNF_V_FLOOD] = "flood",
	[XNF_V_XSK] = "xsk",
};

const char *xnf_nf_name(__u32 nf)
{
	return nf < __XNF_NF_MAX ? nf_names[nf] : NULL;
}

int xnf_nf_from_name(const char *name)
{
	int i;

	for (i = XNF_NF_ENTRY + 1; i < __XNF_NF_MAX; i++)
		if (!strcmp(name, nf_names[i]))
			return i;
	return -EINVAL;
}

const char *xnf_reason_name(__u32 reason)
{
	return reason < __XNF_R_MAX ? reason_names[reason] : "?";
}

const char *xnf_verdict_name(__u32 verdict)
{
	return verdict < __XNF_V_MAX ? verdict_names[verdict] : "?";
}

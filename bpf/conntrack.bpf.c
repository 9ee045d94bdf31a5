// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The conntrack NF as a tail-called chain program (logic in
 * conntrack.bpf.h). */
#include "conntrack.bpf.h"

XNF_NF_PROGRAM(xnf_conntrack, XNF_NF_CONNTRACK, xnf_conntrack_run)

char LICENSE[] SEC("license") = "Dual BSD/GPL";

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The l3fwd NF as a tail-called chain program (logic in l3fwd.bpf.h). */
#include "l3fwd.bpf.h"

XNF_NF_PROGRAM(xnf_l3fwd, XNF_NF_L3FWD, xnf_l3fwd_run)

char LICENSE[] SEC("license") = "Dual BSD/GPL";

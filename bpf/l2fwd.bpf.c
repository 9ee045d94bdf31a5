// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The l2fwd NF as a tail-called chain program (logic in l2fwd.bpf.h). */
#include "l2fwd.bpf.h"

XNF_NF_PROGRAM(xnf_l2fwd, XNF_NF_L2FWD, xnf_l2fwd_run)

char LICENSE[] SEC("license") = "Dual BSD/GPL";

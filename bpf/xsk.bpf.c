// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The xsk NF as a tail-called chain program (logic in xsk.bpf.h). */
#include "xsk.bpf.h"

XNF_NF_PROGRAM(xnf_xsk, XNF_NF_XSK, xnf_xsk_run)

char LICENSE[] SEC("license") = "Dual BSD/GPL";

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The nat NF as a tail-called chain program (logic in nat.bpf.h). */
#include "nat.bpf.h"

XNF_NF_PROGRAM(xnf_nat, XNF_NF_NAT, xnf_nat_run)

char LICENSE[] SEC("license") = "Dual BSD/GPL";

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The firewall NF as a tail-called chain program (logic in firewall.bpf.h). */
#include "firewall.bpf.h"

XNF_NF_PROGRAM(xnf_firewall, XNF_NF_FIREWALL, xnf_firewall_run)

char LICENSE[] SEC("license") = "Dual BSD/GPL";

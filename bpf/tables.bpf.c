// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* No programs: the shared tables, so the loader can create and pin them
 * (and fill them) before any chain is attached. */
#include "common.bpf.h"
#include "tables.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

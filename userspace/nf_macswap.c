// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * nf_macswap.c - swaps the source and destination MACs of every frame and
 * sends it out of the worker's default egress (its `egress` option, else
 * the device it came in on): what xdpsock's l2fwd mode does, the baseline
 * a bare AF_XDP forwarder is measured with. Any frame, IP or not; no
 * tables, no options.
 */
#include <string.h>
#include <linux/if_ether.h>

#include "unf.h"

static void macswap_run(struct xnf_unf *nf, struct xnf_upkt *pkts, __u32 n)
{
	__u32 egress = nf->env.default_egress, i;
	__u8 tmp[ETH_ALEN];

	for (i = 0; i < n; i++) {
		struct xnf_upkt *pk = &pkts[i];

		if (xnf_upkt_decided(pk))
			continue;
		if (pk->len < ETH_HLEN) {
			xnf_upkt_exception(pk, XNF_ACT_DROP, XNF_R_INTERNAL);
			continue;
		}
		memcpy(tmp, pk->data, ETH_ALEN);
		memcpy(pk->data, pk->data + ETH_ALEN, ETH_ALEN);
		memcpy(pk->data + ETH_ALEN, tmp, ETH_ALEN);
		xnf_upkt_redirect(pk, egress);
	}
}

const struct xnf_unf_ops xnf_unf_macswap_ops = {
	.name = "macswap",
	.help = "swaps source and destination MACs and sends the frame out of "
		"the default egress (xdpsock l2fwd); no options",
	.run = macswap_run,
};

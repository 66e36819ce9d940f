// SPDX-License-Identifier: GPL-2.0
/*
 * The struct nid_update_info given to NID update callbacks (nid_update.rs).
 * In C because the generic radix tree it holds its NIDs in is reached
 * through macros (genradix_init(), genradix_ptr_alloc(), genradix_free()).
 */
#include <linux/slab.h>
#include <linux/lnet/lib-lnet.h>

struct nid_update_info *lnet_nui_new(__u32 net, const struct lnet_nid *nids,
				     unsigned int count);
void lnet_nui_free(struct nid_update_info *nui);

/* An update for net holding count NIDs; NULL when out of memory. */
struct nid_update_info *lnet_nui_new(__u32 net, const struct lnet_nid *nids,
				     unsigned int count)
{
	struct nid_update_info *nui = kzalloc(sizeof(*nui), GFP_KERNEL);
	unsigned int i;

	if (!nui)
		return NULL;
	genradix_init(&nui->nui_rdx);
	nui->nui_net = net;
	for (i = 0; i < count; i++) {
		struct lnet_nid *slot = genradix_ptr_alloc(&nui->nui_rdx, i,
							   GFP_KERNEL);

		if (!slot) {
			lnet_nui_free(nui);
			return NULL;
		}
		*slot = nids[i];
	}
	nui->nui_count = count;
	return nui;
}

void lnet_nui_free(struct nid_update_info *nui)
{
	genradix_free(&nui->nui_rdx);
	kfree(nui);
}

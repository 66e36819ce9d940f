// SPDX-License-Identifier: GPL-2.0
/*
 * The symbols lnet.ko exports to upper layers and LNDs. The functions are
 * written in Rust (api.rs); C is needed only for EXPORT_SYMBOL_GPL and for
 * virt_to_page(), which is a macro.
 */
#include <linux/export.h>
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <lnet/api.h>
#include <lnet/lnd.h>

/* Lowmem by its linear mapping; vmalloc and module memory by page table. */
struct page *lnet_kvaddr_to_page(unsigned long vaddr)
{
	if (virt_addr_valid((void *)vaddr))
		return virt_to_page((void *)vaddr);
	return vmalloc_to_page((void *)vaddr);
}
EXPORT_SYMBOL_GPL(lnet_kvaddr_to_page);

EXPORT_SYMBOL_GPL(LNetNIInit);
EXPORT_SYMBOL_GPL(LNetNIFini);
EXPORT_SYMBOL_GPL(LNetGetId);
EXPORT_SYMBOL_GPL(LNetMEAttach);
EXPORT_SYMBOL_GPL(LNetMDAttach);
EXPORT_SYMBOL_GPL(LNetMDBind);
EXPORT_SYMBOL_GPL(__LNetMDUnlink);
EXPORT_SYMBOL_GPL(LNetPut);
EXPORT_SYMBOL_GPL(LNetGet);
EXPORT_SYMBOL_GPL(LNetPutTimeout);
EXPORT_SYMBOL_GPL(LNetGetTimeout);
EXPORT_SYMBOL_GPL(lnet_counters_get);
EXPORT_SYMBOL_GPL(LNetSetLazyPortal);
EXPORT_SYMBOL_GPL(LNetClearLazyPortal);
EXPORT_SYMBOL_GPL(LNetDist);

EXPORT_SYMBOL_GPL(lnet_register_lnd);
EXPORT_SYMBOL_GPL(lnet_unregister_lnd);
EXPORT_SYMBOL_GPL(lnet_ni_nid);
EXPORT_SYMBOL_GPL(lnet_ni_set_data);
EXPORT_SYMBOL_GPL(lnet_ni_data);
EXPORT_SYMBOL_GPL(lnet_parse);
EXPORT_SYMBOL_GPL(lnet_finalize);

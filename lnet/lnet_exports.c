// SPDX-License-Identifier: GPL-2.0
/*
 * The symbols lnet.ko exports to upper layers and LNDs. The functions are
 * written in Rust (api.rs); C is needed only for EXPORT_SYMBOL_GPL and for
 * virt_to_page(), which is a macro.
 */
#include <linux/export.h>
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <linux/netdevice.h>
#include <linux/inetdevice.h>
#include <linux/nodemask.h>
#include <linux/topology.h>
#include <net/net_namespace.h>
#include <linux/lnet/api.h>
#include <linux/lnet/lib-lnet.h>
#include <linux/lnet/lnet_rdma.h>
#include <linux/lnet/lnd.h>
#include <linux/lnet/lnet-rs.h>
#include <linux/lnet/lib-types.h>
#include <linux/lnet/lnet_crypto.h>

#include "../rust/kapi/kapi_helpers.c"
#include "../rust/kapi/cpumask_helpers.c"
#include "../rust/kapi/crypto_helpers.c"
#include <linux/lnet/lib-cpt.h>

/* The global CPU partition table, built at load by lnet/cpt.rs. */
struct cfs_cpt_table *cfs_cpt_tab __read_mostly;
EXPORT_SYMBOL_GPL(cfs_cpt_tab);

/* The same table as PtlRPC reads it, through the_lnet (lib-types.h). */
struct lnet the_lnet __read_mostly;
EXPORT_SYMBOL_GPL(the_lnet);

void lnet_publish_cpt_table(struct cfs_cpt_table *table, unsigned int number);

/* Called with the table built at load, and with NULL, 0 at unload. */
void lnet_publish_cpt_table(struct cfs_cpt_table *table, unsigned int number)
{
	the_lnet.ln_cpt_table = table;
	the_lnet.ln_cpt_number = number;
	the_lnet.ln_cpt_bits = number > 1 ? order_base_2(number) : 0;
}

/* Lowmem by its linear mapping; vmalloc and module memory by page table. */
struct page *lnet_kvaddr_to_page(unsigned long vaddr)
{
	if (virt_addr_valid((void *)vaddr))
		return virt_to_page((void *)vaddr);
	return vmalloc_to_page((void *)vaddr);
}
EXPORT_SYMBOL_GPL(lnet_kvaddr_to_page);

/*
 * The first IPv4 address (host order) of each interface that is up and not
 * loopback, at most max of them; returns how many (ip2nets matches these).
 */
int lnet_inet_addrs(__u32 *addrs, int max)
{
	struct net_device *dev;
	int n = 0;

	rcu_read_lock();
	for_each_netdev_rcu(&init_net, dev) {
		struct in_device *in_dev;
		const struct in_ifaddr *ifa;

		if (n >= max)
			break;
		if ((dev->flags & IFF_LOOPBACK) || !(dev->flags & IFF_UP))
			continue;
		in_dev = __in_dev_get_rcu(dev);
		if (!in_dev)
			continue;
		in_dev_for_each_ifa_rcu(ifa, in_dev) {
			addrs[n++] = ntohl(ifa->ifa_local);
			break;
		}
	}
	rcu_read_unlock();
	return n;
}

/*
 * The IPv4 address (host order) of interface "name", or, with an empty
 * name, of the first interface that is up, not loopback and has one; that
 * interface's name goes to "found". In C for the RCU list walks.
 */
int lnet_inet_addr(const char *name, char *found, size_t found_len,
		   __u32 *addr)
{
	struct net_device *dev;
	int rc = name[0] ? -ENODEV : -ENETDOWN;

	rcu_read_lock();
	for_each_netdev_rcu(&init_net, dev) {
		struct in_device *in_dev;
		const struct in_ifaddr *ifa;

		if (name[0] && strcmp(dev->name, name))
			continue;
		if (!name[0] && ((dev->flags & IFF_LOOPBACK) ||
				 !(dev->flags & IFF_UP)))
			continue;
		in_dev = __in_dev_get_rcu(dev);
		if (in_dev) {
			in_dev_for_each_ifa_rcu(ifa, in_dev) {
				*addr = ntohl(ifa->ifa_local);
				strscpy(found, dev->name, found_len);
				rc = 0;
				break;
			}
		}
		if (rc == 0 || name[0]) {
			if (rc)
				rc = -EADDRNOTAVAIL;
			break;
		}
	}
	rcu_read_unlock();
	return rc;
}

EXPORT_SYMBOL_GPL(LNetNIInit);
EXPORT_SYMBOL_GPL(LNetNIFini);
EXPORT_SYMBOL_GPL(LNetGetId);
EXPORT_SYMBOL_GPL(LNetMEAttach);
EXPORT_SYMBOL_GPL(LNetMDAttach);
EXPORT_SYMBOL_GPL(LNetMDBind);
EXPORT_SYMBOL_GPL(LNetMDUnlink);
EXPORT_SYMBOL_GPL(__LNetMDUnlink);
EXPORT_SYMBOL_GPL(lnet_assert_handler_unused);
EXPORT_SYMBOL_GPL(LNetPut);
EXPORT_SYMBOL_GPL(LNetGet);
EXPORT_SYMBOL_GPL(LNetPutTimeout);
EXPORT_SYMBOL_GPL(LNetGetTimeout);
EXPORT_SYMBOL_GPL(lnet_counters_get);
EXPORT_SYMBOL_GPL(LNetSetLazyPortal);
EXPORT_SYMBOL_GPL(LNetClearLazyPortal);
EXPORT_SYMBOL_GPL(LNetDist);
EXPORT_SYMBOL_GPL(LNetPrimaryNID);
EXPORT_SYMBOL_GPL(LNetLocalPrimaryNID);
EXPORT_SYMBOL_GPL(LNetPeerDiscovered);
EXPORT_SYMBOL_GPL(LNetGetPeerDiscoveryStatus);
EXPORT_SYMBOL_GPL(LNetDebugPeer);
EXPORT_SYMBOL_GPL(LNetAddPeer);
EXPORT_SYMBOL_GPL(LNetIsPeerLocal);
EXPORT_SYMBOL_GPL(LNetHasLocalNet);
EXPORT_SYMBOL_GPL(LNetFetchNIDs);
EXPORT_SYMBOL_GPL(LNetRegisterNIDUpdates);
EXPORT_SYMBOL_GPL(LNetUnRegisterNIDUpdates);
EXPORT_SYMBOL_GPL(lnet_cpt_of_nid);
EXPORT_SYMBOL_GPL(lnet_is_rdma_only_page);
EXPORT_SYMBOL_GPL(libcfs_strnid);
EXPORT_SYMBOL_GPL(libcfs_str2net);
EXPORT_SYMBOL_GPL(libcfs_nid2str_r);
EXPORT_SYMBOL_GPL(libcfs_nidstr_r);
EXPORT_SYMBOL_GPL(libcfs_idstr);
EXPORT_SYMBOL_GPL(libcfs_next_nidstring);
EXPORT_SYMBOL_GPL(libcfs_net2str_r);
EXPORT_SYMBOL_GPL(libcfs_str2nid);
EXPORT_SYMBOL_GPL(libcfs_str2anynid);
EXPORT_SYMBOL_GPL(libcfs_id2str);
EXPORT_SYMBOL_GPL(cfs_expr_list_parse);
EXPORT_SYMBOL_GPL(cfs_expr_list_values);
EXPORT_SYMBOL_GPL(cfs_expr_list_free);
EXPORT_SYMBOL_GPL(cfs_parse_nidlist);
EXPORT_SYMBOL_GPL(cfs_free_nidlist);
EXPORT_SYMBOL_GPL(cfs_match_nid);
EXPORT_SYMBOL_GPL(cfs_print_nidlist);
EXPORT_SYMBOL_GPL(cfs_nidmask_get_length);
EXPORT_SYMBOL_GPL(cfs_nidmask_get_base_nidstr);

/* Checksums and digests (lnet/crypto.rs); the speeds are a Rust static. */
EXPORT_SYMBOL_GPL(cfs_crypto_hash_init);
EXPORT_SYMBOL_GPL(cfs_crypto_hash_update_page);
EXPORT_SYMBOL_GPL(cfs_crypto_hash_update);
EXPORT_SYMBOL_GPL(cfs_crypto_hash_final);
EXPORT_SYMBOL_GPL(cfs_crypto_hash_digest);
EXPORT_SYMBOL_GPL(cfs_crypto_hash_speed);
EXPORT_SYMBOL_GPL(cfs_crypto_hash_speeds);

EXPORT_SYMBOL_GPL(lnet_register_lnd);
EXPORT_SYMBOL_GPL(lnet_unregister_lnd);
EXPORT_SYMBOL_GPL(lnet_ni_nid);
EXPORT_SYMBOL_GPL(lnet_ni_set_data);
EXPORT_SYMBOL_GPL(lnet_ni_data);
EXPORT_SYMBOL_GPL(lnet_ni_iface);
EXPORT_SYMBOL_GPL(lnet_set_link_fatal_state);
EXPORT_SYMBOL_GPL(lnet_notify);
EXPORT_SYMBOL_GPL(lnet_ni_default_tunables);
EXPORT_SYMBOL_GPL(lnet_ni_lnd_tunables);
EXPORT_SYMBOL_GPL(lnet_get_lnd_timeout);
EXPORT_SYMBOL_GPL(lnet_parse);
EXPORT_SYMBOL_GPL(lnet_finalize);
EXPORT_SYMBOL_GPL(lnet_msg_set_hstatus);
EXPORT_SYMBOL_GPL(lnet_create_reply_msg);
EXPORT_SYMBOL_GPL(lnet_set_reply_msg_len);

/* CPU partitions (lnet/cpt.rs). */
EXPORT_SYMBOL_GPL(cfs_cpt_table_alloc);
EXPORT_SYMBOL_GPL(cfs_cpt_table_free);
EXPORT_SYMBOL_GPL(cfs_cpt_table_print);
EXPORT_SYMBOL_GPL(cfs_cpt_distance_print);
EXPORT_SYMBOL_GPL(cfs_cpt_number);
EXPORT_SYMBOL_GPL(cfs_cpt_weight);
EXPORT_SYMBOL_GPL(cfs_cpt_online);
EXPORT_SYMBOL_GPL(cfs_cpt_cpumask);
EXPORT_SYMBOL_GPL(cfs_cpt_nodemask);
EXPORT_SYMBOL_GPL(cfs_cpt_distance);
EXPORT_SYMBOL_GPL(cfs_cpt_current);
EXPORT_SYMBOL_GPL(cfs_cpt_of_cpu);
EXPORT_SYMBOL_GPL(cfs_cpt_of_node);
EXPORT_SYMBOL_GPL(cfs_cpt_bind);
EXPORT_SYMBOL_GPL(cfs_cpt_set_cpu);
EXPORT_SYMBOL_GPL(cfs_cpt_unset_cpu);
EXPORT_SYMBOL_GPL(cfs_cpt_set_node);
EXPORT_SYMBOL_GPL(cfs_cpt_unset_node);
EXPORT_SYMBOL_GPL(cfs_cpt_spread_node);
EXPORT_SYMBOL_GPL(cfs_percpt_alloc);
EXPORT_SYMBOL_GPL(cfs_percpt_free);
EXPORT_SYMBOL_GPL(cfs_percpt_number);

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
#include <linux/lnet/lnet_crypto.h>

#include "../rust/kapi/kapi_helpers.c"
#include "../rust/kapi/crypto_helpers.c"

/* Lowmem by its linear mapping; vmalloc and module memory by page table. */
struct page *lnet_kvaddr_to_page(unsigned long vaddr)
{
	if (virt_addr_valid((void *)vaddr))
		return virt_to_page((void *)vaddr);
	return vmalloc_to_page((void *)vaddr);
}
EXPORT_SYMBOL_GPL(lnet_kvaddr_to_page);

/*
 * NUMA placement for selection (selection.md §2, criterion 5): the node of
 * an interface's device and of a payload page, and the distance between
 * two nodes. In C: dev_to_node(), page_to_nid() and node_distance() are
 * inlines or macros. Called from lnet/numa.rs only.
 */
int lnet_netdev_node(const char *name);
int lnet_page_node(struct page *page);
int lnet_node_distance(int a, int b);
int lnet_max_node_distance(void);
int lnet_online_nodes(void);
int lnet_nth_online_node(int k);

int lnet_netdev_node(const char *name)
{
	struct net_device *dev;
	int node = NUMA_NO_NODE;

	rcu_read_lock();
	dev = dev_get_by_name_rcu(&init_net, name);
	if (dev)
		node = dev_to_node(&dev->dev);
	rcu_read_unlock();
	return node;
}

int lnet_page_node(struct page *page)
{
	return page_to_nid(page);
}

/* node_distance(a, b), or -1 unless both nodes are online. */
int lnet_node_distance(int a, int b)
{
	if (a >= 0 && b >= 0 && a < MAX_NUMNODES && b < MAX_NUMNODES &&
	    node_online(a) && node_online(b))
		return node_distance(a, b);
	return -1;
}

/* The largest distance between online nodes. */
int lnet_max_node_distance(void)
{
	int i, j, max = LOCAL_DISTANCE;

	for_each_online_node(i)
		for_each_online_node(j)
			max = max(max, node_distance(i, j));
	return max;
}

/* lnet-rs's CPTs are the online nodes (lnet_cpt_of_nid). */
int lnet_online_nodes(void)
{
	return num_online_nodes();
}

/* The k'th online node, or -1 past the last. */
int lnet_nth_online_node(int k)
{
	int node;

	for_each_online_node(node)
		if (k-- == 0)
			return node;
	return -1;
}

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
EXPORT_SYMBOL_GPL(lnet_cpt_of_nid);
EXPORT_SYMBOL_GPL(lnet_is_rdma_only_page);
EXPORT_SYMBOL_GPL(libcfs_strnid);
EXPORT_SYMBOL_GPL(libcfs_str2net);
EXPORT_SYMBOL_GPL(libcfs_nid2str_r);
EXPORT_SYMBOL_GPL(libcfs_nidstr_r);
EXPORT_SYMBOL_GPL(libcfs_idstr);
EXPORT_SYMBOL_GPL(libcfs_next_nidstring);

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
EXPORT_SYMBOL_GPL(lnet_ni_default_tunables);
EXPORT_SYMBOL_GPL(lnet_get_lnd_timeout);
EXPORT_SYMBOL_GPL(lnet_parse);
EXPORT_SYMBOL_GPL(lnet_finalize);
EXPORT_SYMBOL_GPL(lnet_msg_set_hstatus);
EXPORT_SYMBOL_GPL(lnet_create_reply_msg);
EXPORT_SYMBOL_GPL(lnet_set_reply_msg_len);

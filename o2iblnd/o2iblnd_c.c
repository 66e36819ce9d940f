// SPDX-License-Identifier: GPL-2.0
/*
 * ko2iblnd's C: the kapi RDMA helpers (static inlines and macros of the
 * verbs and RDMA CM interfaces), built into this module only, and the
 * common ones every module built with rust/kapi links.
 */
#include "../rust/kapi/kapi_helpers.c"
#include "../rust/kapi/rdma_helpers.c"

/*
 * The link under an NI (Lustre's kiblnd_handle_link_state_change and
 * kiblnd_inetaddr_event): its interface not running, without carrier or
 * without the NI's address makes the NI fatal. Each started NI watches its
 * interface by name; netdev and inetaddr events, and the watch itself,
 * report the state to kiblnd_link_event (Rust) with kib_link_lock held,
 * which kiblnd_link_unwatch takes too, so no report outlives the watch.
 * The notifiers run under RTNL or the inetaddr chain's rwsem, so the
 * report only flips flags.
 */
#include <linux/inetdevice.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <net/net_namespace.h>

void kiblnd_link_event(void *ni, int down);
int kiblnd_notifiers_register(void);
void kiblnd_notifiers_unregister(void);
int kiblnd_link_watch(const char *name, __u32 addr, void *ni);
void kiblnd_link_unwatch(void *ni);

struct kib_link_watch {
	struct list_head lw_list;
	char lw_name[IFNAMSIZ];
	__be32 lw_addr;
	void *lw_ni;
};

static LIST_HEAD(kib_link_watches);
static DEFINE_MUTEX(kib_link_lock);

static bool kib_link_down(struct net_device *dev, __be32 addr)
{
	const struct in_ifaddr *ifa;
	struct in_device *in;
	bool found = false;

	if (!netif_running(dev) || !netif_carrier_ok(dev))
		return true;
	rcu_read_lock();
	in = __in_dev_get_rcu(dev);
	if (in) {
		in_dev_for_each_ifa_rcu(ifa, in) {
			if (ifa->ifa_local == addr) {
				found = true;
				break;
			}
		}
	}
	rcu_read_unlock();
	return !found;
}

/* Reports dev's state to every NI watching it; gone: being unregistered. */
static void kib_link_report(struct net_device *dev, bool gone)
{
	struct kib_link_watch *w;

	mutex_lock(&kib_link_lock);
	list_for_each_entry(w, &kib_link_watches, lw_list)
		if (!strncmp(w->lw_name, dev->name, IFNAMSIZ))
			kiblnd_link_event(w->lw_ni,
					  gone || kib_link_down(dev, w->lw_addr));
	mutex_unlock(&kib_link_lock);
}

static int kib_netdev_event(struct notifier_block *nb, unsigned long event,
			    void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);

	switch (event) {
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
	case NETDEV_UNREGISTER:
		break;
	default:
		return NOTIFY_DONE;
	}
	if (net_eq(dev_net(dev), &init_net))
		kib_link_report(dev, event == NETDEV_UNREGISTER);
	return NOTIFY_DONE;
}

/* An address added or removed: on removal it is already off the list. */
static int kib_inetaddr_event(struct notifier_block *nb, unsigned long event,
			      void *ptr)
{
	struct in_ifaddr *ifa = ptr;
	struct net_device *dev = ifa->ifa_dev ? ifa->ifa_dev->dev : NULL;

	if ((event == NETDEV_UP || event == NETDEV_DOWN) && dev &&
	    net_eq(dev_net(dev), &init_net))
		kib_link_report(dev, false);
	return NOTIFY_DONE;
}

static struct notifier_block kib_netdev_nb = {
	.notifier_call = kib_netdev_event,
};

static struct notifier_block kib_inetaddr_nb = {
	.notifier_call = kib_inetaddr_event,
};

int kiblnd_notifiers_register(void)
{
	int rc = register_netdevice_notifier(&kib_netdev_nb);

	if (rc)
		return rc;
	rc = register_inetaddr_notifier(&kib_inetaddr_nb);
	if (rc)
		unregister_netdevice_notifier(&kib_netdev_nb);
	return rc;
}

void kiblnd_notifiers_unregister(void)
{
	unregister_inetaddr_notifier(&kib_inetaddr_nb);
	unregister_netdevice_notifier(&kib_netdev_nb);
}

/*
 * Watches interface name, which should carry addr (host order), for ni and
 * reports its state now, under the lock the notifiers take, so that no
 * event is overtaken. An interface that is gone counts as down.
 */
int kiblnd_link_watch(const char *name, __u32 addr, void *ni)
{
	struct kib_link_watch *w = kzalloc(sizeof(*w), GFP_KERNEL);
	struct net_device *dev;
	bool down = true;

	if (!w)
		return -ENOMEM;
	strscpy(w->lw_name, name, sizeof(w->lw_name));
	w->lw_addr = htonl(addr);
	w->lw_ni = ni;
	mutex_lock(&kib_link_lock);
	list_add_tail(&w->lw_list, &kib_link_watches);
	dev = dev_get_by_name(&init_net, w->lw_name);
	if (dev) {
		down = kib_link_down(dev, w->lw_addr);
		dev_put(dev);
	}
	kiblnd_link_event(ni, down);
	mutex_unlock(&kib_link_lock);
	return 0;
}

/* Stops watching for ni; no report for it runs once this returns. */
void kiblnd_link_unwatch(void *ni)
{
	struct kib_link_watch *w, *tmp;

	mutex_lock(&kib_link_lock);
	list_for_each_entry_safe(w, tmp, &kib_link_watches, lw_list) {
		if (w->lw_ni == ni) {
			list_del(&w->lw_list);
			kfree(w);
		}
	}
	mutex_unlock(&kib_link_lock);
}

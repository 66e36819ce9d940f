// SPDX-License-Identifier: GPL-2.0
/*
 * The link under an LND's NIs (health.md §8; Lustre's
 * ksocknal_handle_link_state_change, kiblnd_handle_link_state_change and
 * kiblnd_inetaddr_event), included by each LND's C file: its interface not
 * running, without carrier or, when an address is watched, without that
 * address, is down. Each started NI watches its interface by name; netdev
 * and inetaddr events, and the watch itself, report the state to the
 * module's kapi_link_event (Rust) with kapi_link_lock held, which
 * kapi_link_unwatch takes too, so no report outlives the watch. The
 * notifiers run under RTNL or the inetaddr chain's rwsem, so a report may
 * only flip flags. In C because the notifier API is callbacks and macros.
 */
#include <linux/inetdevice.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <net/net_namespace.h>

/* Rust, in each LND: the link under the NI whose data is data changed. */
void kapi_link_event(void *data, int down);
/* Called from Rust. */
int kapi_link_notifiers_register(void);
void kapi_link_notifiers_unregister(void);
int kapi_link_watch(const char *name, __u32 addr, void *data);
void kapi_link_unwatch(void *data);

struct kapi_link_watch {
	struct list_head lw_list;
	char lw_name[IFNAMSIZ];
	__be32 lw_addr;		/* 0: no address watched */
	void *lw_data;
};

static LIST_HEAD(kapi_link_watches);
static DEFINE_MUTEX(kapi_link_lock);

static bool kapi_link_down(struct net_device *dev, __be32 addr)
{
	const struct in_ifaddr *ifa;
	struct in_device *in;
	bool found = false;

	if (!netif_running(dev) || !netif_carrier_ok(dev))
		return true;
	if (!addr)
		return false;
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
static void kapi_link_report(struct net_device *dev, bool gone)
{
	struct kapi_link_watch *w;

	mutex_lock(&kapi_link_lock);
	list_for_each_entry(w, &kapi_link_watches, lw_list)
		if (!strncmp(w->lw_name, dev->name, IFNAMSIZ))
			kapi_link_event(w->lw_data,
					gone || kapi_link_down(dev, w->lw_addr));
	mutex_unlock(&kapi_link_lock);
}

static int kapi_netdev_event(struct notifier_block *nb, unsigned long event,
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
		kapi_link_report(dev, event == NETDEV_UNREGISTER);
	return NOTIFY_DONE;
}

/* An address added or removed: on removal it is already off the list. */
static int kapi_inetaddr_event(struct notifier_block *nb, unsigned long event,
			       void *ptr)
{
	struct in_ifaddr *ifa = ptr;
	struct net_device *dev = ifa->ifa_dev ? ifa->ifa_dev->dev : NULL;

	if ((event == NETDEV_UP || event == NETDEV_DOWN) && dev &&
	    net_eq(dev_net(dev), &init_net))
		kapi_link_report(dev, false);
	return NOTIFY_DONE;
}

static struct notifier_block kapi_netdev_nb = {
	.notifier_call = kapi_netdev_event,
};

static struct notifier_block kapi_inetaddr_nb = {
	.notifier_call = kapi_inetaddr_event,
};

/*
 * Registrations of the notifiers, each paired with an unregistration: the
 * first registers them, the last unregisters them. Not kapi_link_lock: the
 * netdev notifier's registration replays events, which take that lock.
 */
static DEFINE_MUTEX(kapi_link_reg_lock);
static unsigned int kapi_link_users;

int kapi_link_notifiers_register(void)
{
	int rc = 0;

	mutex_lock(&kapi_link_reg_lock);
	if (kapi_link_users == 0) {
		rc = register_netdevice_notifier(&kapi_netdev_nb);
		if (!rc) {
			rc = register_inetaddr_notifier(&kapi_inetaddr_nb);
			if (rc)
				unregister_netdevice_notifier(&kapi_netdev_nb);
		}
	}
	if (!rc)
		kapi_link_users++;
	mutex_unlock(&kapi_link_reg_lock);
	return rc;
}

void kapi_link_notifiers_unregister(void)
{
	mutex_lock(&kapi_link_reg_lock);
	if (kapi_link_users > 0 && --kapi_link_users == 0) {
		unregister_inetaddr_notifier(&kapi_inetaddr_nb);
		unregister_netdevice_notifier(&kapi_netdev_nb);
	}
	mutex_unlock(&kapi_link_reg_lock);
}

/*
 * Watches interface name, which should carry addr (host order; 0 for any)
 * for data, and reports its state now, under the lock the notifiers take,
 * so that no event is overtaken. An interface that is gone counts as down.
 */
int kapi_link_watch(const char *name, __u32 addr, void *data)
{
	struct kapi_link_watch *w = kzalloc(sizeof(*w), GFP_KERNEL);
	struct net_device *dev;
	bool down = true;

	if (!w)
		return -ENOMEM;
	strscpy(w->lw_name, name, sizeof(w->lw_name));
	w->lw_addr = htonl(addr);
	w->lw_data = data;
	mutex_lock(&kapi_link_lock);
	list_add_tail(&w->lw_list, &kapi_link_watches);
	dev = dev_get_by_name(&init_net, w->lw_name);
	if (dev) {
		down = kapi_link_down(dev, w->lw_addr);
		dev_put(dev);
	}
	kapi_link_event(data, down);
	mutex_unlock(&kapi_link_lock);
	return 0;
}

/* Stops watching for data; no report for it runs once this returns. */
void kapi_link_unwatch(void *data)
{
	struct kapi_link_watch *w, *tmp;

	mutex_lock(&kapi_link_lock);
	list_for_each_entry_safe(w, tmp, &kapi_link_watches, lw_list) {
		if (w->lw_data == data) {
			list_del(&w->lw_list);
			kfree(w);
		}
	}
	mutex_unlock(&kapi_link_lock);
}

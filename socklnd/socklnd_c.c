// SPDX-License-Identifier: GPL-2.0
/*
 * ksocklnd's C: the kapi helpers its sockets use, and the netdev notifier
 * that tells each NI when its interface's link goes down or comes back
 * (health.md §8). The notifier block and list are C because the kernel's
 * notifier API is macros and callbacks; what a link change does is Rust
 * (ksocknal_link_event).
 */
#include "../rust/kapi/kapi_helpers.c"

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <net/net_namespace.h>

/* Rust: the link under the NI whose data is sni went down or came up. */
void ksocknal_link_event(void *sni, int down);
/* Called from Rust. */
int ksocknal_notifier_register(void);
void ksocknal_notifier_unregister(void);
int ksocknal_link_watch(const char *name, void *sni);
void ksocknal_link_unwatch(void *sni);

struct ksock_link_watch {
	struct list_head lw_list;
	char lw_name[IFNAMSIZ];
	void *lw_sni;
};

static LIST_HEAD(ksock_link_watches);
/* Held around every callback, so unwatch returns only once none runs. */
static DEFINE_MUTEX(ksock_link_lock);

static bool ksock_dev_down(struct net_device *dev)
{
	return !netif_running(dev) || !netif_carrier_ok(dev);
}

static int ksock_netdev_event(struct notifier_block *nb, unsigned long event,
			      void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);
	struct ksock_link_watch *w;
	int down;

	switch (event) {
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
	case NETDEV_UNREGISTER:
		break;
	default:
		return NOTIFY_DONE;
	}
	if (!net_eq(dev_net(dev), &init_net))
		return NOTIFY_DONE;
	down = event == NETDEV_UNREGISTER || ksock_dev_down(dev);
	mutex_lock(&ksock_link_lock);
	list_for_each_entry(w, &ksock_link_watches, lw_list)
		if (!strncmp(w->lw_name, dev->name, IFNAMSIZ))
			ksocknal_link_event(w->lw_sni, down);
	mutex_unlock(&ksock_link_lock);
	return NOTIFY_DONE;
}

static struct notifier_block ksock_netdev_nb = {
	.notifier_call = ksock_netdev_event,
};

int ksocknal_notifier_register(void)
{
	return register_netdevice_notifier(&ksock_netdev_nb);
}

void ksocknal_notifier_unregister(void)
{
	unregister_netdevice_notifier(&ksock_netdev_nb);
}

/*
 * Watches interface name for sni and reports its link state now, under the
 * same lock as the notifier, so no event is overtaken. An interface that
 * is gone counts as down.
 */
int ksocknal_link_watch(const char *name, void *sni)
{
	struct ksock_link_watch *w = kzalloc(sizeof(*w), GFP_KERNEL);
	struct net_device *dev;
	int down = 1;

	if (!w)
		return -ENOMEM;
	strscpy(w->lw_name, name, sizeof(w->lw_name));
	w->lw_sni = sni;
	mutex_lock(&ksock_link_lock);
	list_add_tail(&w->lw_list, &ksock_link_watches);
	dev = dev_get_by_name(&init_net, w->lw_name);
	if (dev) {
		down = ksock_dev_down(dev);
		dev_put(dev);
	}
	ksocknal_link_event(sni, down);
	mutex_unlock(&ksock_link_lock);
	return 0;
}

/* Stops watching for sni; no callback for it runs once this returns. */
void ksocknal_link_unwatch(void *sni)
{
	struct ksock_link_watch *w, *tmp;

	mutex_lock(&ksock_link_lock);
	list_for_each_entry_safe(w, tmp, &ksock_link_watches, lw_list) {
		if (w->lw_sni == sni) {
			list_del(&w->lw_list);
			kfree(w);
		}
	}
	mutex_unlock(&ksock_link_lock);
}

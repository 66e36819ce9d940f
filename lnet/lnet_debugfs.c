// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs lnet/, where lnet_lnd_timeout shows. On a Lustre node that
 * directory is Lustre's libcfs.ko's: its init creates it for its debug
 * tunables (debug, debug_mb, dump_kernel... that lctl drives) and fails to
 * if the name is taken. So our own lnet/ lives only while libcfs is away:
 * it gives way when libcfs comes, and our file then goes into libcfs's
 * directory, libcfs pinned by a symbol_get() as Lustre's lnet.ko pins it by
 * depending on it (libcfs's exit removes the directory with all it holds).
 * In C for the module notifier and symbol_get(), which come with no
 * binding.
 */
#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/string.h>

int lnet_debugfs_init(u32 *lnd_timeout);
void lnet_debugfs_fini(void);

/* Exported by libcfs.ko with EXPORT_SYMBOL_GPL, as symbol_get() needs. */
#define LIBCFS_PIN "lnet_insert_debugfs"
#define LND_TIMEOUT "lnet_lnd_timeout"

static DEFINE_MUTEX(lnet_debugfs_mutex);
/* Under lnet_debugfs_mutex: our lnet/ or NULL; libcfs pinned or not. */
static struct dentry *own_dir;
static bool libcfs_pinned;
static u32 *lnd_timeout_value;

/* Puts our file in libcfs's lnet/ if libcfs is live, else in our own. */
static void lnet_debugfs_place(void)
{
	struct dentry *dir;

	if (__symbol_get(LIBCFS_PIN)) {
		libcfs_pinned = true;
		dir = debugfs_lookup("lnet", NULL);
		if (!IS_ERR_OR_NULL(dir)) {
			debugfs_create_u32(LND_TIMEOUT, 0444, dir,
					   lnd_timeout_value);
			dput(dir);
		}
		return;
	}
	dir = debugfs_create_dir("lnet", NULL);
	if (IS_ERR(dir)) {
		pr_info("lnet: no debugfs lnet/ (%ld): " LND_TIMEOUT
			" not shown\n", PTR_ERR(dir));
		return;
	}
	own_dir = dir;
	debugfs_create_u32(LND_TIMEOUT, 0444, own_dir, lnd_timeout_value);
}

/* Takes our file and our lnet/ away, and unpins libcfs. */
static void lnet_debugfs_clear(void)
{
	struct dentry *dir;

	if (libcfs_pinned) {
		dir = debugfs_lookup("lnet", NULL);
		if (!IS_ERR_OR_NULL(dir)) {
			debugfs_lookup_and_remove(LND_TIMEOUT, dir);
			dput(dir);
		}
		__symbol_put(LIBCFS_PIN);
		libcfs_pinned = false;
	}
	debugfs_remove(own_dir);
	own_dir = NULL;
}

static int lnet_debugfs_module_event(struct notifier_block *nb,
				     unsigned long state, void *data)
{
	struct module *mod = data;

	if (strcmp(mod->name, "libcfs"))
		return NOTIFY_DONE;
	mutex_lock(&lnet_debugfs_mutex);
	switch (state) {
	case MODULE_STATE_COMING:
		/* Before libcfs's init, which creates lnet/. */
		debugfs_remove(own_dir);
		own_dir = NULL;
		break;
	case MODULE_STATE_LIVE:
	case MODULE_STATE_GOING:
		/*
		 * Live: into its directory. Going (only if never pinned: its
		 * init failed, or it went unpinned): lnet/ is free again.
		 */
		if (!libcfs_pinned && !own_dir)
			lnet_debugfs_place();
		break;
	}
	mutex_unlock(&lnet_debugfs_mutex);
	return NOTIFY_OK;
}

static struct notifier_block lnet_debugfs_nb = {
	.notifier_call = lnet_debugfs_module_event,
};

/* lnd_timeout: what lnet_lnd_timeout shows, valid until lnet_debugfs_fini. */
int lnet_debugfs_init(u32 *lnd_timeout)
{
	int rc;

	lnd_timeout_value = lnd_timeout;
	/* First, so that a libcfs loading meanwhile is not missed. */
	rc = register_module_notifier(&lnet_debugfs_nb);
	if (rc)
		return rc;
	mutex_lock(&lnet_debugfs_mutex);
	lnet_debugfs_place();
	mutex_unlock(&lnet_debugfs_mutex);
	return 0;
}

void lnet_debugfs_fini(void)
{
	unregister_module_notifier(&lnet_debugfs_nb);
	mutex_lock(&lnet_debugfs_mutex);
	lnet_debugfs_clear();
	mutex_unlock(&lnet_debugfs_mutex);
}

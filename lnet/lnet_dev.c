// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/lnet: the misc device lnetctl talks to. Registration is C; the
 * ioctls (include/uapi/linux/lnet/lnet-rs-ioctl.h) are handled in dev.rs.
 */
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>

/*
 * The per-open state dev.rs keeps (the last ping reply): made at open,
 * given to each ioctl, freed at release, after the file's last ioctl.
 */
void *lnet_dev_state_new(void);
void lnet_dev_state_free(void *state);
long lnet_dev_state_ioctl(const void *state, unsigned int cmd,
			  unsigned long arg);

int lnet_dev_register(void);
void lnet_dev_deregister(void);

static int lnet_dev_open(struct inode *inode, struct file *file)
{
	file->private_data = lnet_dev_state_new();
	return file->private_data ? 0 : -ENOMEM;
}

static int lnet_dev_release(struct inode *inode, struct file *file)
{
	lnet_dev_state_free(file->private_data);
	return 0;
}

static long lnet_dev_ioctl(struct file *file, unsigned int cmd,
			   unsigned long arg)
{
	return lnet_dev_state_ioctl(file->private_data, cmd, arg);
}

static const struct file_operations lnet_dev_fops = {
	.owner		= THIS_MODULE,
	.open		= lnet_dev_open,
	.release	= lnet_dev_release,
	.unlocked_ioctl	= lnet_dev_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
};

static struct miscdevice lnet_dev = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "lnet",
	.fops	= &lnet_dev_fops,
	/* Root's only (0600), as Lustre's; each ioctl also asks CAP_SYS_ADMIN. */
};

int lnet_dev_register(void)
{
	return misc_register(&lnet_dev);
}

void lnet_dev_deregister(void)
{
	misc_deregister(&lnet_dev);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/lnet: the misc device lnetctl talks to. Registration is C; the
 * ioctls (include/uapi/linux/lnet/lnet-rs-ioctl.h) are handled in dev.rs.
 */
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>

long lnet_dev_ioctl(struct file *file, unsigned int cmd, unsigned long arg);
int lnet_dev_open(struct inode *inode, struct file *file);
int lnet_dev_release(struct inode *inode, struct file *file);
int lnet_dev_register(void);
void lnet_dev_deregister(void);

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

/* The per-open data dev.rs keeps (the last ping reply). */
void *lnet_dev_file_data(struct file *file);
void lnet_dev_set_file_data(struct file *file, void *data);

void *lnet_dev_file_data(struct file *file)
{
	return file->private_data;
}

void lnet_dev_set_file_data(struct file *file, void *data)
{
	file->private_data = data;
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A module's parameter table as lnet.ko, ksocklnd.ko and ko2iblnd.ko
 * declare theirs. Only C can place entries in the __param section, so the
 * names, modes and descriptions are C; one pair of Rust callbacks,
 * <prefix>_param_set and <prefix>_param_get, parses each write, checks
 * its range and keeps the live values.
 *
 *	LNET_RS_PARAM_OPS(prefix);
 *	LNET_RS_PARAM(prefix, name, mode, description);
 */
#ifndef LNET_RS_PARAM_TABLE_H
#define LNET_RS_PARAM_TABLE_H

#include <linux/module.h>
#include <linux/moduleparam.h>

#define LNET_RS_PARAM_OPS(pfx)						\
	int pfx##_param_set(const char *val, const struct kernel_param *kp); \
	int pfx##_param_get(char *buffer, const struct kernel_param *kp); \
	static const struct kernel_param_ops pfx##_param_ops = {	\
		.set = pfx##_param_set,					\
		.get = pfx##_param_get,					\
	}

#define LNET_RS_PARAM(pfx, name, mode, desc)				\
	module_param_cb(name, &pfx##_param_ops, NULL, mode);		\
	MODULE_PARM_DESC(name, desc)

#endif

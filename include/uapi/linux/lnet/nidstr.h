/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lnet-rs: NIDs, nets and process ids as text, with the signatures of
 * Lustre's <uapi/linux/lnet/nidstr.h>, exported by lnet.ko. The parsing and
 * formatting are lnet-core's (rust/lnet-core/src/nid.rs), which documents
 * where it is stricter than Lustre.
 */
#ifndef __LNET_RS_NIDSTR_H__
#define __LNET_RS_NIDSTR_H__

#include <uapi/linux/lnet/lnet-types.h>

#define LNET_NIDSTR_COUNT 1024	/* strings in the ring */
#define LNET_NIDSTR_SIZE  64	/* bytes of each */

/*
 * The next string of a ring of LNET_NIDSTR_COUNT, LNET_NIDSTR_SIZE bytes
 * each: it stays valid until that many more have been taken, so callers
 * format into it for a log line and never free it.
 */
char *libcfs_next_nidstring(void);

/* "192.168.1.2@tcp1", "0@lo", "<?>" for LNET_NID_ANY; cut to buf_size. */
char *libcfs_nid2str_r(lnet_nid_t nid, char *buf, __kernel_size_t buf_size);
static inline char *libcfs_nid2str(lnet_nid_t nid)
{
	return libcfs_nid2str_r(nid, libcfs_next_nidstring(),
				LNET_NIDSTR_SIZE);
}

/* As libcfs_nid2str_r(), for a NID in its large form (IPv6 too). */
char *libcfs_nidstr_r(const struct lnet_nid *nid,
		      char *buf, __kernel_size_t buf_size);
static inline char *libcfs_nidstr(const struct lnet_nid *nid)
{
	return libcfs_nidstr_r(nid, libcfs_next_nidstring(),
			       LNET_NIDSTR_SIZE);
}

/* Parses a NID in its text form ("10.0.0.1@tcp", "0@lo"): 0 or -EINVAL. */
int libcfs_strnid(struct lnet_nid *nid, const char *str);

/* "12345-0@lo", "U7-..." for a user pid, "LNET_PID_ANY-..."; in the ring. */
char *libcfs_idstr(struct lnet_processid *id);

/* A net from its text ("tcp1", "o2ib"), or LNET_NET_ANY. */
__u32 libcfs_str2net(const char *str);

#endif /* __LNET_RS_NIDSTR_H__ */

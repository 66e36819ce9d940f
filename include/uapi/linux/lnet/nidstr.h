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

/* "tcp1", "o2ib", "<17:3>" for an LND with no name; cut to buf_size. */
char *libcfs_net2str_r(__u32 net, char *buf, __kernel_size_t buf_size);
static inline char *libcfs_net2str(__u32 net)
{
	return libcfs_net2str_r(net, libcfs_next_nidstring(),
				LNET_NIDSTR_SIZE);
}

/*
 * A NID4 from its text ("10.0.0.1@tcp", "10.0.0.1" on tcp, "5@gni"), or
 * LNET_NID_ANY if it is not one or its address needs more than 4 bytes.
 */
lnet_nid_t libcfs_str2nid(const char *str);

/* As libcfs_str2nid(), and "*" is LNET_NID_ANY: 1, or 0 if no NID. */
int libcfs_str2anynid(lnet_nid_t *nid, const char *str);

/* "12345-10.0.0.1@tcp" for a NID4 process id, in the ring. */
char *libcfs_id2str(struct lnet_process_id id);

/*
 * NID lists: "192.168.[1-2].[1-254/2]@tcp 10.0.0.0/8@o2ib *@tcp1
 * [1-5]@gni 2001:db8::/32@tcp". cfs_parse_nidlist() initializes list and
 * links its entries into it: 0, -EINVAL (bad syntax, or no range) or
 * -ENOMEM, the list left empty on error. cfs_free_nidlist() unlinks and
 * frees them. cfs_match_nid() is 1 if nid is in the list.
 * cfs_print_nidlist() writes the list back (at most count - 1 characters
 * and a NUL) and returns the characters written.
 */
struct list_head;
int cfs_parse_nidlist(char *str, int len, struct list_head *list);
void cfs_free_nidlist(struct list_head *list);
int cfs_match_nid(const struct lnet_nid *nid, struct list_head *list);
int cfs_print_nidlist(char *buffer, int count, struct list_head *list);

#ifdef __KERNEL__
/*
 * For a list holding one netmask: its prefix length (0 if the list holds
 * none or several), and its address and net without the prefix
 * ("10.1.0.0@tcp"; 0, the buffer untouched if there is none, -EINVAL if
 * several).
 */
u8 cfs_nidmask_get_length(struct list_head *nidlist);
int cfs_nidmask_get_base_nidstr(char *buf, int count,
				struct list_head *nidlist);
#endif

#endif /* __LNET_RS_NIDSTR_H__ */

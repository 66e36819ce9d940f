/* SPDX-License-Identifier: GPL-2.0 */
/* kapi C helpers; see kapi_helpers.c and rust/kapi/sock.rs. */
#ifndef __KAPI_HELPERS_H__
#define __KAPI_HELPERS_H__

#include <linux/types.h>

struct socket;
struct list_head;

void kapi_cond_resched(void);
void kapi_might_sleep(void);
int kapi_sock_wmem_queued(struct socket *sock);
u32 kapi_sock_snd_una(struct socket *sock);
void kapi_sock_tcp_timing(struct socket *sock, u32 *rto_retransmits,
			  u32 *srtt_us);
int kapi_sock_zc_capable(struct socket *sock);
int kapi_sock_create_tcp(struct socket **res);
void kapi_sock_set_timeouts(struct socket *sock, unsigned int rcv_ms,
			    unsigned int snd_ms);
/* Socket options; the layout is mirrored by SockOpts in sock.rs. */
struct kapi_sock_opts {
	int keepalive_idle;
	int keepalive_intvl;
	int keepalive_count;
	int nagle;
	int tx_buffer_size;
	int rx_buffer_size;
	int tos;
};

void kapi_sock_tune(struct socket *sock, const struct kapi_sock_opts *o);
int kapi_sock_bind4(struct socket *sock, __u32 addr, __u16 port);
int kapi_sock_connect4(struct socket *sock, __u32 addr, __u16 port);
int kapi_sock_peer4(struct socket *sock, __u32 *addr, __u16 *port);

/* C list_heads (static inlines in <linux/list.h>), for rust/kapi/clist.rs. */
void kapi_list_init(struct list_head *head);
void kapi_list_add_tail(struct list_head *entry, struct list_head *head);
void kapi_list_del(struct list_head *entry);
/* memalloc_nofs_save()/restore(), for rust/kapi/clist.rs's NoFs. */
unsigned int kapi_nofs_save(void);
void kapi_nofs_restore(unsigned int flags);

#endif

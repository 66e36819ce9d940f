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
void kapi_sock_bufs(struct socket *sock, int *txmem, int *rxmem, int *nagle);
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

/*
 * A socket's readiness callbacks redirected to `event` (rust/kapi/sock.rs,
 * Socket::watch). The layout is mirrored by Watch in sock.rs; C fills the
 * saved callbacks.
 */
struct sock;
struct kapi_sock_watch {
	void (*event)(const void *data, unsigned int what);
	const void *data;
	void (*saved_data_ready)(struct sock *sk);
	void (*saved_write_space)(struct sock *sk);
	void (*saved_state_change)(struct sock *sk);
};

#define KAPI_SOCK_READABLE 1
#define KAPI_SOCK_WRITABLE 2
#define KAPI_SOCK_STATE 3

int kapi_sock_watch(struct socket *sock, struct kapi_sock_watch *w);
void kapi_sock_unwatch(struct socket *sock, struct kapi_sock_watch *w);

/* C list_heads (static inlines in <linux/list.h>), for rust/kapi/clist.rs. */
void kapi_list_init(struct list_head *head);
void kapi_list_add_tail(struct list_head *entry, struct list_head *head);
void kapi_list_del(struct list_head *entry);
/* memalloc_nofs_save()/restore(), for rust/kapi/clist.rs's NoFs. */
unsigned int kapi_nofs_save(void);
void kapi_nofs_restore(unsigned int flags);

#endif

// SPDX-License-Identifier: GPL-2.0
/*
 * kapi C helpers: socket option setters and IPv4 socket addresses, which
 * are static inlines or need struct sockaddr_in. A module that uses
 * rust/kapi/sock.rs includes this file from one of its C files.
 */
#include <linux/in.h>
#include <linux/net.h>
#include <linux/tcp.h>
#include <net/sock.h>
#include <net/tcp.h>
#include <linux/list.h>
#include <linux/sched/mm.h>
#include "kapi_helpers.h"

/*
 * Gives the CPU away if the scheduler wants it. Long socket loops need it on
 * kernels without preemption: a thread that always finds data to move would
 * otherwise starve its peers on the same CPU.
 */
void kapi_cond_resched(void)
{
	cond_resched();
}

void kapi_might_sleep(void)
{
	might_sleep();
}

/*
 * Bytes queued in the socket and not yet acknowledged by the peer, and the
 * sequence number of the oldest of them, which moves whenever the peer
 * acknowledges anything.
 */
int kapi_sock_wmem_queued(struct socket *sock)
{
	return READ_ONCE(sock->sk->sk_wmem_queued);
}

u32 kapi_sock_snd_una(struct socket *sock)
{
	return READ_ONCE(tcp_sk(sock->sk)->snd_una);
}

/*
 * Retransmission timeouts in a row since the peer last acknowledged
 * anything, and the smoothed RTT in microseconds (0 before a sample): what
 * tells a silent path from a slow one. A lock-free snapshot.
 */
void kapi_sock_tcp_timing(struct socket *sock, u32 *rto_retransmits,
			  u32 *srtt_us)
{
	*rto_retransmits = READ_ONCE(inet_csk(sock->sk)->icsk_retransmits);
	*srtt_us = READ_ONCE(tcp_sk(sock->sk)->srtt_us) >> 3;
}

/* The socket's send and receive buffer sizes and whether Nagle's algorithm
 * is on (Lustre's ksocknal_lib_get_conn_tunables); a lock-free snapshot. */
void kapi_sock_bufs(struct socket *sock, int *txmem, int *rxmem, int *nagle)
{
	struct sock *sk = sock->sk;

	*txmem = READ_ONCE(sk->sk_sndbuf);
	*rxmem = READ_ONCE(sk->sk_rcvbuf);
	*nagle = !(tcp_sk(sk)->nonagle & TCP_NAGLE_OFF);
}

/* The route offers scatter-gather and checksum offload (Lustre's test for
 * zero-copy sends). */
int kapi_sock_zc_capable(struct socket *sock)
{
	netdev_features_t caps = READ_ONCE(sock->sk->sk_route_caps);

	return (caps & NETIF_F_SG) && (caps & NETIF_F_CSUM_MASK);
}

/* A TCP/IPv4 socket in the initial namespace. */
int kapi_sock_create_tcp(struct socket **res)
{
	return sock_create_kern(&init_net, AF_INET, SOCK_STREAM, IPPROTO_TCP,
				res);
}

/* 0 means "wait forever". */
void kapi_sock_set_timeouts(struct socket *sock, unsigned int rcv_ms,
			    unsigned int snd_ms)
{
	struct sock *sk = sock->sk;

	lock_sock(sk);
	sk->sk_rcvtimeo = rcv_ms ? msecs_to_jiffies(rcv_ms) : MAX_SCHEDULE_TIMEOUT;
	sk->sk_sndtimeo = snd_ms ? msecs_to_jiffies(snd_ms) : MAX_SCHEDULE_TIMEOUT;
	release_sock(sk);
}

/*
 * Address and port reuse (port reuse as Lustre's sockets have it, so that
 * either LNet can listen on port 988 while the other's closed connections
 * wait in TIME_WAIT); Nagle off unless asked for; TCP keepalive when all three
 * values are > 0; buffer sizes and IP TOS when >= 0 (0 and -1 keep the
 * system's).
 */
void kapi_sock_tune(struct socket *sock, const struct kapi_sock_opts *o)
{
	struct sock *sk = sock->sk;

	sock_set_reuseaddr(sk);
	sock_set_reuseport(sk);
	if (!o->nagle)
		tcp_sock_set_nodelay(sk);
	if (o->keepalive_idle > 0 && o->keepalive_intvl > 0 &&
	    o->keepalive_count > 0) {
		sock_set_keepalive(sk);
		tcp_sock_set_keepidle(sk, o->keepalive_idle);
		tcp_sock_set_keepintvl(sk, o->keepalive_intvl);
		tcp_sock_set_keepcnt(sk, o->keepalive_count);
	}
	if (o->tx_buffer_size > 0) {
		/* As SO_SNDBUF does: the kernel doubles the value. */
		lock_sock(sk);
		sk->sk_userlocks |= SOCK_SNDBUF_LOCK;
		WRITE_ONCE(sk->sk_sndbuf,
			   max_t(int, o->tx_buffer_size * 2, SOCK_MIN_SNDBUF));
		sk->sk_write_space(sk);
		release_sock(sk);
	}
	if (o->rx_buffer_size > 0)
		sock_set_rcvbuf(sk, o->rx_buffer_size);
	if (o->tos >= 0)
		ip_sock_set_tos(sk, o->tos);
}

/* Addresses and ports in host order. */
int kapi_sock_bind4(struct socket *sock, __u32 addr, __u16 port)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(addr),
	};

	return kernel_bind(sock, (struct sockaddr *)&sin, sizeof(sin));
}

int kapi_sock_connect4(struct socket *sock, __u32 addr, __u16 port)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(addr),
	};

	return kernel_connect(sock, (struct sockaddr *)&sin, sizeof(sin), 0);
}

int kapi_sock_peer4(struct socket *sock, __u32 *addr, __u16 *port)
{
	struct sockaddr_in sin;
	int rc = kernel_getpeername(sock, (struct sockaddr *)&sin);

	if (rc < 0)
		return rc;
	if (sin.sin_family != AF_INET)
		return -EAFNOSUPPORT;
	*addr = ntohl(sin.sin_addr.s_addr);
	*port = ntohs(sin.sin_port);
	return 0;
}

/*
 * The callbacks of a watched socket. The socket calls them in softirq (or
 * with its lock held in process context); they read the watch under the
 * socket's callback lock, which kapi_sock_unwatch takes for writing before
 * the watch may go, so that none of them still uses it after.
 */
static void kapi_sock_notify(struct sock *sk, unsigned int what)
{
	struct kapi_sock_watch *w;

	read_lock_bh(&sk->sk_callback_lock);
	w = sk->sk_user_data;
	if (w)
		w->event(w->data, what);
	read_unlock_bh(&sk->sk_callback_lock);
}

static void kapi_sk_data_ready(struct sock *sk)
{
	kapi_sock_notify(sk, KAPI_SOCK_READABLE);
}

static void kapi_sk_write_space(struct sock *sk)
{
	/*
	 * As sk_stream_write_space: only once a useful amount is free, and
	 * SOCK_NOSPACE cleared so that the next full buffer asks again.
	 */
	if (!__sk_stream_is_writeable(sk, 1) || !sk->sk_socket)
		return;
	clear_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
	kapi_sock_notify(sk, KAPI_SOCK_WRITABLE);
}

static void kapi_sk_state_change(struct sock *sk)
{
	kapi_sock_notify(sk, KAPI_SOCK_STATE);
}

/* -EBUSY if something else already uses the socket's user data. */
int kapi_sock_watch(struct socket *sock, struct kapi_sock_watch *w)
{
	struct sock *sk = sock->sk;
	int rc = 0;

	write_lock_bh(&sk->sk_callback_lock);
	if (sk->sk_user_data) {
		rc = -EBUSY;
	} else {
		w->saved_data_ready = sk->sk_data_ready;
		w->saved_write_space = sk->sk_write_space;
		w->saved_state_change = sk->sk_state_change;
		sk->sk_user_data = w;
		sk->sk_data_ready = kapi_sk_data_ready;
		sk->sk_write_space = kapi_sk_write_space;
		sk->sk_state_change = kapi_sk_state_change;
	}
	write_unlock_bh(&sk->sk_callback_lock);
	return rc;
}

/* Once this returns, no callback uses `w`. */
void kapi_sock_unwatch(struct socket *sock, struct kapi_sock_watch *w)
{
	struct sock *sk = sock->sk;

	write_lock_bh(&sk->sk_callback_lock);
	if (sk->sk_user_data == w) {
		sk->sk_user_data = NULL;
		sk->sk_data_ready = w->saved_data_ready;
		sk->sk_write_space = w->saved_write_space;
		sk->sk_state_change = w->saved_state_change;
	}
	write_unlock_bh(&sk->sk_callback_lock);
}

/*
 * Lists whose heads callers own (Lustre's NID and expression lists): the
 * list primitives are static inlines, and with CONFIG_DEBUG_LIST they check
 * each link.
 */
void kapi_list_init(struct list_head *head)
{
	INIT_LIST_HEAD(head);
}

void kapi_list_add_tail(struct list_head *entry, struct list_head *head)
{
	list_add_tail(entry, head);
}

void kapi_list_del(struct list_head *entry)
{
	list_del(entry);
}

/* Allocations in the scope do not recurse into file systems. */
unsigned int kapi_nofs_save(void)
{
	return memalloc_nofs_save();
}

void kapi_nofs_restore(unsigned int flags)
{
	memalloc_nofs_restore(flags);
}

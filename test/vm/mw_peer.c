/* SPDX-License-Identifier: BSD-3-Clause */
/* mw_peer: a type 2 memory window bound by one RC peer and used by the other, for the
 * soft-RoCE VM test (run_rxe_test.sh, rc mode) and two dpverbs processes on a veth pair
 * (run_mw_peer_veth.sh). No rdma-core tool binds windows, so this is our own verbs program,
 * built against rdma-core's <infiniband/verbs.h> and linked against the system's
 * libibverbs: the same binary runs on rxe in the guest and on dpverbs through dpv-run.
 *
 *   mw_peer [-d DEV] [-g GID_INDEX] [-p TCP_PORT] -o server|client [HOST]
 *
 * Without HOST it listens on TCP_PORT (default 18515, as the pingpongs), with HOST it
 * connects; -o says which of the two (the listener or the connecting side) owns the window.
 * The same arguments on both sides, then (the harness adds HOST to the client's).
 *   owner: registers an MR with IBV_ACCESS_MW_BIND, allocates a type 2 window, binds it with
 *     IBV_WR_BIND_MW (remote READ and WRITE, 8 KiB inside the MR) and sends address, key and
 *     length over TCP; it then checks what the user asks it to check (its memory, the
 *     receive completion of the user's SEND_WITH_INV: IBV_WC_WITH_INV and the key).
 *   user: READs the window (the owner's bytes), WRITEs half of it and READs it back, sends
 *     SEND_WITH_INV with the window's key, then WRITEs through the key again: that must
 *     complete with IBV_WC_REM_ACCESS_ERR, and the owner's bytes must stay as they were.
 * Then, each on a fresh QP pair (an access error leaves both QPs in ERR), the owner binds the
 * window again: the user READs through it, the owner invalidates it with IBV_WR_LOCAL_INV,
 * the user's next READ must complete with IBV_WC_REM_ACCESS_ERR; and the owner binds it once
 * more, the user sends SEND_WITH_INV of a key that names no window: the owner's receive
 * completes in error; the user's SEND gets IBV_WC_REM_INV_REQ_ERR from dpverbs, but
 * IBV_WC_SUCCESS from rxe, which ACKs it (the owner says in its message whether it is rxe).
 * Each side prints what it checked and "mw_peer: passed (owner|user)" when everything held;
 * exit 0 then, 1 otherwise. While waiting for the peer's TCP message a side polls its CQ,
 * as a dpverbs program with direct progress must (doc/roce-rc.md, "A passive target"). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "peer_util.h"

#define BUF_LEN (64 * 1024)
#define WOFF 4096               /* owner: the window's first byte in its buffer */
#define WLEN 8192               /* the window's length */
#define RXOFF (32 * 1024)       /* owner: the SEND_WITH_INV lands here; user: READs land here */
#define TXOFF (16 * 1024)       /* user: WRITE and SEND from here */
#define SEND_LEN 64
#define OUTSIDE 0xa5            /* owner: every byte of its buffer outside the window */
#define WAIT_S 60.0             /* at most this long for a completion or a message */
/* rxe (Linux 6.1, rdma-core 44) hands user space the kernel's wc_flags unchanged, where
 * IB_WC_WITH_INVALIDATE is bit 2 (verbs.h's IBV_WC_IP_CSUM_OK) and IBV_WC_WITH_INV bit 3:
 * a receive completion of a SEND_WITH_INV on rxe has this bit instead (doc/roce.md). */
#define RXE_WITH_INV (1u << 2)

enum kind { M_WINDOW = 1, M_CHECK_WRITE, M_CHECK_INV, M_CHECK_AFTER, M_RESULT, M_LOCAL_INV };
#define BOGUS_KEY 0xfffffe11u   /* names no window or MR on either side (round 3) */

struct conn {                   /* the connection exchange */
	uint32_t qpn, psn;
	uint8_t gid[16];
};

struct msg {                    /* every later message */
	uint32_t kind, rkey, len, status;
	uint64_t addr;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qp;
static struct ibv_mr *mr;
static uint8_t *buf;
static bool owner;
static bool on_rxe;             /* the device is Linux soft-RoCE (see RXE_WITH_INV) */
static struct ibv_mw *mw;               /* the owner's window */
static int gidx = 1;

/* The window's bytes as the owner writes them, and as the user's WRITE puts them. */
static uint8_t owner_byte(size_t i)
{
	return peer_pattern_byte((uint64_t)0x0a11ce5u << 32, i);
}

static uint8_t user_byte(size_t i)
{
	return peer_pattern_byte((uint64_t)0xb0b5eedu << 32, i);
}

static void send_msg(enum kind kind, uint32_t rkey, uint64_t addr, uint32_t len, uint32_t status)
{
	struct msg m = { .kind = kind, .rkey = rkey, .len = len, .status = status, .addr = addr };

	peer_write(&m, sizeof(m));
}

static struct msg recv_msg(enum kind kind)
{
	struct msg m;

	peer_read_kind(&m, sizeof(m), kind, WAIT_S);
	return m;
}

/* The peer's verdict on what it just checked. */
static void peer_result(const char *what)
{
	struct msg m = recv_msg(M_RESULT);

	peer_check(m.status == 0, "the owner: %s", what);
}

/* The completion of WR @wr_id, checked for @status (and @opcode on success). */
static struct ibv_wc expect_wc(uint64_t wr_id, enum ibv_wc_status status,
			       enum ibv_wc_opcode opcode, const char *what)
{
	struct ibv_wc wc = peer_next_wc(WAIT_S);

	peer_check(wc.wr_id == wr_id && wc.status == status &&
	      (status != IBV_WC_SUCCESS || wc.opcode == opcode),
	      "%s: completion %s (wr_id %llu, opcode %d; expected %s)", what,
	      ibv_wc_status_str(wc.status), (unsigned long long)wc.wr_id, wc.opcode,
	      ibv_wc_status_str(status));
	return wc;
}

static void post_send(struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	int rc = ibv_post_send(qp, wr, &bad);

	if (rc != 0) {
		errno = rc;
		peer_die("ibv_post_send");
	}
}

/* An RDMA READ or WRITE of @len bytes at local @off through @rkey at @raddr. */
static void rdma(enum ibv_wr_opcode op, uint64_t wr_id, size_t off, uint32_t len,
		 uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf + off, .length = len, .lkey = mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	};

	post_send(&wr);
}

/* RESET -> INIT -> RTR -> RTS towards the peer's QP. */
static void connect_qp(const struct conn *me, const struct conn *peer, int gidx)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
		/* the responder's QP must allow remote READ and WRITE at all (rxe and dpverbs
		 * answer an invalid request NAK otherwise); the window then grants its range */
		.qp_access_flags = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE,
	};

	peer_modify(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
		    "INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer->qpn;
	a.rq_psn = peer->psn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.grh.sgid_index = gidx;
	memcpy(a.ah_attr.grh.dgid.raw, peer->gid, 16);
	peer_modify(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
		    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER, "RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 18;         /* ~1 s: a late ACK (a peer's keeper, a TCG guest) is no retry */
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = me->psn;
	a.max_rd_atomic = 1;
	peer_modify(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		    IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC, "RTS");
}

/* The owner's buffer is OUTSIDE everywhere but the window; @written bytes of the window's
 * start hold the user's WRITE, the rest the owner's own bytes. */
static bool owner_memory_ok(size_t written, size_t *bad)
{
	for (size_t i = 0; i < RXOFF; i++) {
		uint8_t want = OUTSIDE;

		if (i >= WOFF && i < WOFF + WLEN)
			want = i - WOFF < written ? user_byte(i - WOFF) : owner_byte(i - WOFF);
		if (buf[i] != want) {
			*bad = i;
			return false;
		}
	}
	return true;
}

/* A fresh RC QP connected to the peer's fresh one (the one before destroyed, its
 * completions dropped): QPN, PSN and GID over TCP. */
static void new_connection(void)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct conn me = { 0 }, peer;
	union ibv_gid gid;
	char g[INET6_ADDRSTRLEN];
	struct ibv_wc wc;

	if (qp != NULL && ibv_destroy_qp(qp) != 0)
		peer_die("ibv_destroy_qp");
	while (ibv_poll_cq(cq, 1, &wc) > 0)
		;
	peer_stash_clear();
	qp = ibv_create_qp(pd, &init);
	if (qp == NULL)
		peer_die("ibv_create_qp(RC)");
	if (ibv_query_gid(ctx, 1, gidx, &gid) != 0)
		peer_die("ibv_query_gid");
	me.qpn = qp->qp_num;
	me.psn = lrand48() & 0xffffff;
	memcpy(me.gid, gid.raw, 16);
	peer_write(&me, sizeof(me));
	peer_read(&peer, sizeof(peer), WAIT_S);
	inet_ntop(AF_INET6, peer.gid, g, sizeof(g));
	printf("local QPN %#x PSN %#x; remote QPN %#x PSN %#x GID %s\n", me.qpn, me.psn,
	       peer.qpn, peer.psn, g);
	connect_qp(&me, &peer, gidx);
}

static void post_recv7(uint64_t wr_id)
{
	struct ibv_sge rsge = { .addr = (uintptr_t)buf + RXOFF, .length = SEND_LEN * 2,
				.lkey = mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = wr_id, .sg_list = &rsge, .num_sge = 1 }, *rbad;
	int rc = ibv_post_recv(qp, &rwr, &rbad);

	if (rc != 0) {
		errno = rc;
		peer_die("ibv_post_recv");
	}
}

/* The owner binds the window (8 KiB at WOFF, remote READ and WRITE) with the next key on the
 * current QP and tells the user; the key. mw->rkey is set to it, as rxe and mlx5 want of an
 * application (dpverbs has set it already). */
static uint32_t bind_window(uint64_t wr_id)
{
	uint32_t rkey = ibv_inc_rkey(mw->rkey);
	struct ibv_send_wr bind = {
		.wr_id = wr_id, .opcode = IBV_WR_BIND_MW, .send_flags = IBV_SEND_SIGNALED,
		.bind_mw = { .mw = mw, .rkey = rkey, .bind_info = {
			.mr = mr, .addr = (uintptr_t)buf + WOFF, .length = WLEN,
			.mw_access_flags = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE } },
	};
	struct ibv_wc wc;

	post_send(&bind);
	wc = expect_wc(wr_id, IBV_WC_SUCCESS, IBV_WC_BIND_MW, "BIND_MW of a type 2 window");
	if (wc.status != IBV_WC_SUCCESS)
		exit(1);
	printf("window: key %#x (mw->rkey after the bind %#x), %d bytes at %p\n", rkey, mw->rkey,
	       WLEN, (void *)(buf + WOFF));
	mw->rkey = rkey;
	send_msg(M_WINDOW, rkey, (uintptr_t)buf + WOFF, WLEN, on_rxe);   /* status: rxe owns */
	return rkey;
}

static void run_owner(void)
{
	uint32_t rkey;
	size_t bad = 0;
	struct ibv_wc wc;
	bool ok, bytes_ok, with_inv;

	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	if (mw == NULL)
		peer_die("ibv_alloc_mw(IBV_MW_TYPE_2)");
	post_recv7(7);
	rkey = bind_window(1);

	/* the user's WRITE of the first half, through the window */
	recv_msg(M_CHECK_WRITE);
	ok = owner_memory_ok(WLEN / 2, &bad);
	peer_check(ok, "the user's WRITE is in the window's first half, nothing else changed%s",
	      ok ? "" : " (first difference below)");
	if (!ok)
		printf("  byte %zu: %#x\n", bad, buf[bad]);
	send_msg(M_RESULT, 0, 0, 0, !ok);

	/* the user's SEND_WITH_INV */
	recv_msg(M_CHECK_INV);
	wc = peer_next_wc(WAIT_S);
	with_inv = wc.wc_flags & IBV_WC_WITH_INV;
	if (!with_inv && on_rxe && (wc.wc_flags & RXE_WITH_INV)) {
		printf("note: rxe's wc_flags %#x carry the kernel's IB_WC_WITH_INVALIDATE (%#x), "
		       "not IBV_WC_WITH_INV (%#x)\n", wc.wc_flags, RXE_WITH_INV, IBV_WC_WITH_INV);
		with_inv = true;
	}
	ok = wc.status == IBV_WC_SUCCESS && wc.wr_id == 7 && wc.opcode == IBV_WC_RECV &&
	     with_inv && wc.invalidated_rkey == rkey && wc.byte_len == SEND_LEN;
	peer_check(ok, "receive completion: %s, opcode %d, wc_flags %#x, invalidated_rkey %#x, "
	      "byte_len %u (expected SUCCESS, IBV_WC_RECV, IBV_WC_WITH_INV, %#x, %d)",
	      ibv_wc_status_str(wc.status), wc.opcode, wc.wc_flags, wc.invalidated_rkey,
	      wc.byte_len, rkey, SEND_LEN);
	bytes_ok = true;
	for (int i = 0; i < SEND_LEN; i++)
		bytes_ok &= buf[RXOFF + i] == user_byte(1000 + i);
	peer_check(bytes_ok, "the SEND_WITH_INV's %d bytes received", SEND_LEN);
	send_msg(M_RESULT, 0, 0, 0, !(ok && bytes_ok));

	/* the user's WRITE through the invalidated key */
	recv_msg(M_CHECK_AFTER);
	ok = owner_memory_ok(WLEN / 2, &bad);
	peer_check(ok, "after the WRITE through the invalidated key: the window's bytes unchanged");
	send_msg(M_RESULT, 0, 0, 0, !ok);

	/* round 2: bound again, READ by the user, LOCAL_INV here */
	printf("-- round 2: LOCAL_INV\n");
	new_connection();
	rkey = bind_window(11);
	recv_msg(M_LOCAL_INV);
	struct ibv_send_wr inv = { .wr_id = 12, .opcode = IBV_WR_LOCAL_INV,
				   .send_flags = IBV_SEND_SIGNALED, .invalidate_rkey = rkey };
	post_send(&inv);
	wc = expect_wc(12, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV, "LOCAL_INV of the window's key");
	send_msg(M_RESULT, 0, 0, 0, wc.status != IBV_WC_SUCCESS);
	recv_msg(M_CHECK_AFTER);
	ok = owner_memory_ok(WLEN / 2, &bad);
	peer_check(ok, "after the READ through the invalidated key: the window's bytes unchanged");
	send_msg(M_RESULT, 0, 0, 0, !ok);

	/* round 3: bound again; the user's SEND_WITH_INV names no window */
	printf("-- round 3: SEND_WITH_INV of a key that names nothing\n");
	new_connection();
	post_recv7(13);
	rkey = bind_window(14);
	recv_msg(M_CHECK_INV);
	wc = peer_next_wc(5);
	ok = wc.wr_id == 13 && wc.status != IBV_WC_SUCCESS;
	peer_check(ok, "the receive of a SEND_WITH_INV of key %#x: %s (wr_id %llu; expected an error)",
	      BOGUS_KEY, ibv_wc_status_str(wc.status), (unsigned long long)wc.wr_id);
	send_msg(M_RESULT, 0, 0, 0, !ok);
	ibv_dealloc_mw(mw);
}

static void run_user(void)
{
	struct msg w = recv_msg(M_WINDOW);
	size_t i;
	bool ok;

	printf("window: key %#x, %u bytes at %#llx\n", w.rkey, w.len, (unsigned long long)w.addr);
	if (w.len != WLEN) {
		peer_check(false, "the window is %u bytes, not %d", w.len, WLEN);
		return;
	}
	/* READ: the owner's bytes */
	memset(buf + RXOFF, 0, WLEN);
	rdma(IBV_WR_RDMA_READ, 1, RXOFF, WLEN, w.addr, w.rkey);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, "RDMA READ of the window");
	for (i = 0; i < WLEN && buf[RXOFF + i] == owner_byte(i); i++)
		;
	peer_check(i == WLEN, "READ: the window's %d bytes are the owner's%s", WLEN,
	      i == WLEN ? "" : " (not all)");

	/* WRITE the first half, READ the whole window back */
	for (i = 0; i < WLEN / 2; i++)
		buf[TXOFF + i] = user_byte(i);
	rdma(IBV_WR_RDMA_WRITE, 2, TXOFF, WLEN / 2, w.addr, w.rkey);
	expect_wc(2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, "RDMA WRITE through the window");
	memset(buf + RXOFF, 0, WLEN);
	rdma(IBV_WR_RDMA_READ, 3, RXOFF, WLEN, w.addr, w.rkey);
	expect_wc(3, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, "RDMA READ back");
	for (i = 0; i < WLEN; i++)
		if (buf[RXOFF + i] != (i < WLEN / 2 ? user_byte(i) : owner_byte(i)))
			break;
	peer_check(i == WLEN, "READ back: the WRITE's %d bytes, then the owner's", WLEN / 2);
	send_msg(M_CHECK_WRITE, 0, 0, 0, 0);
	peer_result("the WRITE landed in the window, nothing around it changed");

	/* SEND_WITH_INV of the window's key */
	for (i = 0; i < SEND_LEN; i++)
		buf[TXOFF + i] = user_byte(1000 + i);
	struct ibv_sge sge = { .addr = (uintptr_t)buf + TXOFF, .length = SEND_LEN,
			       .lkey = mr->lkey };
	struct ibv_send_wr inv = {
		.wr_id = 4, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND_WITH_INV,
		.send_flags = IBV_SEND_SIGNALED, .invalidate_rkey = w.rkey,
	};
	post_send(&inv);
	expect_wc(4, IBV_WC_SUCCESS, IBV_WC_SEND, "SEND_WITH_INV");
	send_msg(M_CHECK_INV, 0, 0, 0, 0);
	peer_result("its receive completion says WITH_INV and the key");

	/* the old key reaches nothing */
	for (i = 0; i < 256; i++)
		buf[TXOFF + i] = 0x3c;
	rdma(IBV_WR_RDMA_WRITE, 5, TXOFF, 256, w.addr, w.rkey);
	expect_wc(5, IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_WRITE,
		  "RDMA WRITE through the invalidated key");
	send_msg(M_CHECK_AFTER, 0, 0, 0, 0);
	peer_result("the window's bytes are unchanged");

	/* round 2: READ through the window bound again, then through it after LOCAL_INV */
	printf("-- round 2: LOCAL_INV\n");
	new_connection();
	w = recv_msg(M_WINDOW);
	printf("window: key %#x\n", w.rkey);
	memset(buf + RXOFF, 0, 64);
	rdma(IBV_WR_RDMA_READ, 11, RXOFF, 64, w.addr + WLEN / 2, w.rkey);
	expect_wc(11, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, "RDMA READ through the window bound again");
	for (i = 0; i < 64 && buf[RXOFF + i] == owner_byte(WLEN / 2 + i); i++)
		;
	peer_check(i == 64, "READ: 64 of the owner's bytes");
	send_msg(M_LOCAL_INV, 0, 0, 0, 0);
	peer_result("its LOCAL_INV of the key completed");
	rdma(IBV_WR_RDMA_READ, 12, RXOFF, 64, w.addr + WLEN / 2, w.rkey);
	expect_wc(12, IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_READ,
		  "RDMA READ through the key invalidated by the owner's LOCAL_INV");
	send_msg(M_CHECK_AFTER, 0, 0, 0, 0);
	peer_result("the window's bytes are unchanged");

	/* round 3: SEND_WITH_INV of a key that names no window */
	printf("-- round 3: SEND_WITH_INV of a key that names nothing\n");
	new_connection();
	w = recv_msg(M_WINDOW);
	struct ibv_send_wr bogus = {
		.wr_id = 13, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND_WITH_INV,
		.send_flags = IBV_SEND_SIGNALED, .invalidate_rkey = BOGUS_KEY,
	};
	post_send(&bogus);
	/* rxe's responder completes its receive in error and moves to ERR, but ACKs the SEND
	 * (its RESPST_ERR_INVALIDATE_RKEY, "Class J"); dpverbs NAKs it (invalid request) */
	if (w.status)
		printf("note: the owner is rxe, which ACKs a SEND_WITH_INV it cannot honour\n");
	expect_wc(13, w.status ? IBV_WC_SUCCESS : IBV_WC_REM_INV_REQ_ERR, IBV_WC_SEND,
		  "SEND_WITH_INV of a key naming nothing");
	send_msg(M_CHECK_INV, 0, 0, 0, 0);
	peer_result("its receive completed in error");
	(void)ok;
}

static void usage(void)
{
	fprintf(stderr, "usage: mw_peer [-d DEV] [-g GID_INDEX] [-p TCP_PORT] -o server|client [HOST]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *dev_name = NULL, *port = "18515", *host = NULL, *own = NULL;
	int c, i;

	while ((c = getopt(argc, argv, "d:g:p:o:")) != -1) {
		switch (c) {
		case 'd': dev_name = optarg; break;
		case 'g': gidx = atoi(optarg); break;
		case 'p': port = optarg; break;
		case 'o': own = optarg; break;
		default: usage();
		}
	}
	if (optind < argc)
		host = argv[optind];
	if (own == NULL || (strcmp(own, "server") && strcmp(own, "client")))
		usage();
	owner = !strcmp(own, host ? "client" : "server");
	peer_name = owner ? "mw_peer (owner)" : "mw_peer (user)";
	peer_idle = peer_poll_stash;
	setvbuf(stdout, NULL, _IOLBF, 0);

	ctx = peer_open_device(dev_name);
	on_rxe = !strncmp(ibv_get_device_name(ctx->device), "rxe", 3);
	printf("mw_peer: %s on %s, GID index %d\n", owner ? "owner" : "user",
	       ibv_get_device_name(ctx->device), gidx);
	buf = aligned_alloc(4096, BUF_LEN);
	if (buf == NULL)
		peer_die("aligned_alloc");
	memset(buf, OUTSIDE, BUF_LEN);
	if (owner)
		for (i = 0; i < WLEN; i++)
			buf[WOFF + i] = owner_byte(i);
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 64, NULL, NULL, 0) : NULL;
	if (cq == NULL)
		peer_die("ibv_alloc_pd/ibv_create_cq");
	peer_cq = cq;
	mr = ibv_reg_mr(pd, buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE |
			(owner ? IBV_ACCESS_MW_BIND : 0));
	if (mr == NULL)
		peer_die(owner ? "ibv_reg_mr(LOCAL_WRITE | MW_BIND)" : "ibv_reg_mr");
	srand48(getpid() ^ time(NULL));
	peer_sock = peer_tcp(host, port, WAIT_S);
	new_connection();

	if (owner)
		run_owner();
	else
		run_user();

	close(peer_sock);
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	free(buf);
	if (peer_failures == 0)
		printf("mw_peer: passed (%s)\n", owner ? "owner" : "user");
	else
		printf("mw_peer: %d checks failed (%s)\n", peer_failures, owner ? "owner" : "user");
	return peer_failures != 0;
}

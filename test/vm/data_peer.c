/* SPDX-License-Identifier: BSD-3-Clause */
/* data_peer: the bytes of SENDs, WRITEs, READs and atomics checked where they land, between
 * two verbs peers: two dpverbs processes (compat_data_peer) or dpverbs and rxe in the soft-RoCE
 * guest (run_rxe_test.sh). The unmodified pingpongs and perftest tools check no payload (the
 * pingpongs' -c reads one byte per page, perftest nothing): this program is their oracle.
 * Built against rdma-core's <infiniband/verbs.h> and the system's libibverbs, as mw_peer: the
 * same binary runs on rxe and on dpverbs through dpv-run.
 *
 *   data_peer [-d DEV] [-g GID_INDEX] [-p TCP_PORT] [-t rc|uc|ud|srq|xrc]
 *             [-o send|write|read|fa|cs] [-s SIZE] [-n COUNT] [HOST]
 *
 * Without HOST it listens on TCP_PORT (default 18515), with HOST it connects; the same other
 * arguments on both sides. The client acts first (COUNT operations of SIZE bytes), then the
 * server; the side whose memory the operation reaches checks it:
 *   send (every transport): the receiver's COUNT receive completions in order, each SUCCESS,
 *     IBV_WC_RECV, byte_len SIZE (+ 40 on UD), the QP number (and on UD the source QPN and
 *     the GRH: IPv4 or IPv6 addresses, the peer's as source, ours as destination), and every
 *     byte; the bytes after SIZE in each slot untouched;
 *   write (rc, uc): COUNT WRITEs into COUNT slots of the target; the target checks every slot's
 *     bytes (polling until they are all there: a UC WRITE completes at its sender) and that
 *     the guard after the last slot is untouched;
 *   read (rc): COUNT READs of the target's slots, checked by the reader;
 *   fa, cs (rc): FETCH_AND_ADD / CMP_AND_SWAP on COUNT 8-byte slots of the target: the
 *     initiator checks each original value returned, the target each slot's final value
 *     (CMP_AND_SWAP: even slots compare equal and are swapped, odd ones do not and stay).
 * Payload bytes are unique by position: a 32-bit hash of (sender, message, 4-byte word), so a
 * packet placed at the wrong offset, in the wrong message or from the wrong side shows.
 * Each check prints "ok: ..." or "FAIL: ..."; the last line is "data_peer: passed (server|
 * client)" and exit 0 when everything held, exit 1 otherwise. While waiting for the peer's TCP
 * message a side polls its CQ (a dpverbs program with direct progress must,
 * doc/roce-rc.md, "A passive target"). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "peer_util.h"

#define GRH_LEN 40
#define GUARD 0xc3              /* every byte no operation may reach */
#define WAIT_S 60.0             /* at most this long for a completion or a message */
#define QKEY 0x11111111u
#define DEPTH 32                /* send WRs in flight at most */

enum op { OP_SEND, OP_WRITE, OP_READ, OP_FA, OP_CS };
enum kind { M_READY = 1, M_DONE, M_RESULT };

struct conn {                   /* the connection exchange */
	uint32_t qpn, qpn2, srqn, psn;  /* qpn2: XRC, the XRC_RECV QP */
	uint64_t addr;
	uint32_t rkey, pad;
	uint8_t gid[16];
};

struct msg {
	uint32_t kind, status;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qp, *qp_recv;     /* qp_recv: XRC's XRC_RECV QP */
static struct ibv_srq *srq;
static struct ibv_xrcd *xrcd;
static struct ibv_ah *ah;
static struct ibv_mr *mr;
static uint8_t *buf;
static size_t buf_len, slot;
static bool is_client;
static enum ibv_qp_type type = IBV_QPT_RC;
static bool use_srq;
static enum op op = OP_SEND;
static uint32_t size = 4096, count = 20;
static int gidx = 1;
static struct conn me, peer;

static const char *side(bool client)
{
	return client ? "client" : "server";
}

/* Byte @off of message @i from the client (@client) or the server. */
static uint8_t pattern(bool client, uint32_t i, size_t off)
{
	return peer_pattern_byte(((uint64_t)client << 63) ^ ((uint64_t)i << 32), off);
}

/* The target's 8-byte atomic slot @i before the operation, and what is added / swapped in. */
static uint64_t atomic_before(uint32_t i)
{
	return 0x0101010100000000ull * (i + 1) + 0x1000 * i + 7;
}

static uint64_t atomic_operand(uint32_t i)
{
	return 0x9e3779b97f4a7c15ull ^ ((uint64_t)i << 20);
}

static void send_msg(enum kind kind, uint32_t status)
{
	struct msg m = { .kind = kind, .status = status };

	peer_write(&m, sizeof(m));
}

static struct msg recv_msg(enum kind kind)
{
	struct msg m;

	peer_read_kind(&m, sizeof(m), kind, WAIT_S);
	return m;
}

static void to_init(struct ibv_qp *q)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1, .qkey = QKEY,
		.qp_access_flags = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	if (type == IBV_QPT_UD)
		mask |= IBV_QP_QKEY;
	else
		mask |= IBV_QP_ACCESS_FLAGS;
	if (type == IBV_QPT_UC)
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	peer_modify(q, &a, mask, "INIT");
}

/* INIT -> RTR towards @dest_qpn (connected types) -> RTS. XRC: the XRC_SEND QP is the
 * requester only (no responder's attributes in RTR), the XRC_RECV QP the responder only (none
 * of the requester's in RTS). */
static void connect_qp(struct ibv_qp *q, uint32_t dest_qpn)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };
	int mask = IBV_QP_STATE;
	bool rc = type != IBV_QPT_UD && type != IBV_QPT_UC;
	bool requester = q->qp_type != IBV_QPT_XRC_RECV;
	bool responder = q->qp_type != IBV_QPT_XRC_SEND;

	to_init(q);
	if (type != IBV_QPT_UD) {
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = dest_qpn;
		a.rq_psn = peer.psn;
		a.ah_attr.is_global = 1;
		a.ah_attr.port_num = 1;
		a.ah_attr.grh.hop_limit = 1;
		a.ah_attr.grh.sgid_index = gidx;
		memcpy(a.ah_attr.grh.dgid.raw, peer.gid, 16);
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		if (rc && responder) {
			a.max_dest_rd_atomic = 1;
			a.min_rnr_timer = 12;
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
	}
	peer_modify(q, &a, mask, "RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = me.psn;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (rc) {
		a.timeout = 18;
		mask |= IBV_QP_TIMEOUT;
	}
	if (rc && requester) {
		/* 1.07 s per try: a peer's keeper or a TCG guest may answer late, never lose */
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.max_rd_atomic = 1;
		mask |= IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	peer_modify(q, &a, mask, "RTS");
}

static void create_xrc(void)
{
	struct ibv_xrcd_init_attr xa = { .comp_mask = IBV_XRCD_INIT_ATTR_FD |
					 IBV_XRCD_INIT_ATTR_OFLAGS, .fd = -1, .oflags = O_CREAT };
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = count, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC, .pd = pd, .cq = cq,
	};
	struct ibv_qp_init_attr_ex send = {
		.qp_type = IBV_QPT_XRC_SEND, .send_cq = cq, .pd = pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.cap = { .max_send_wr = DEPTH, .max_send_sge = 1 },
	};
	struct ibv_qp_init_attr_ex recv = {
		.qp_type = IBV_QPT_XRC_RECV, .comp_mask = IBV_QP_INIT_ATTR_XRCD,
	};

	xrcd = ibv_open_xrcd(ctx, &xa);
	if (xrcd == NULL)
		peer_die("ibv_open_xrcd");
	sa.xrcd = xrcd;
	srq = ibv_create_srq_ex(ctx, &sa);
	if (srq == NULL || ibv_get_srq_num(srq, &me.srqn) != 0)
		peer_die("ibv_create_srq_ex(XRC)");
	recv.xrcd = xrcd;
	qp = ibv_create_qp_ex(ctx, &send);
	qp_recv = qp ? ibv_create_qp_ex(ctx, &recv) : NULL;
	if (qp_recv == NULL)
		peer_die("ibv_create_qp_ex(XRC_SEND, XRC_RECV)");
	me.qpn2 = qp_recv->qp_num;
}

static void create_qps(void)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq, .recv_cq = cq, .qp_type = type,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = count, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};

	if (type == IBV_QPT_XRC_SEND) {
		create_xrc();
		return;
	}
	if (use_srq) {
		struct ibv_srq_init_attr sa = { .attr = { .max_wr = count, .max_sge = 1 } };

		srq = ibv_create_srq(pd, &sa);
		if (srq == NULL)
			peer_die("ibv_create_srq");
		init.srq = srq;
	}
	qp = ibv_create_qp(pd, &init);
	if (qp == NULL)
		peer_die("ibv_create_qp");
}

/* Exchange QPNs, PSNs, GIDs and the buffer's address and key; connect. */
static void connect_peer(void)
{
	union ibv_gid gid;
	char g[INET6_ADDRSTRLEN];

	if (ibv_query_gid(ctx, 1, gidx, &gid) != 0)
		peer_die("ibv_query_gid");
	me.qpn = qp->qp_num;
	me.psn = lrand48() & 0xffffff;
	me.addr = (uintptr_t)buf;
	me.rkey = mr->rkey;
	memcpy(me.gid, gid.raw, 16);
	peer_write(&me, sizeof(me));
	peer_read(&peer, sizeof(peer), WAIT_S);
	inet_ntop(AF_INET6, peer.gid, g, sizeof(g));
	printf("local QPN %#x PSN %#x; remote QPN %#x PSN %#x GID %s\n", me.qpn, me.psn,
	       peer.qpn, peer.psn, g);
	if (type == IBV_QPT_XRC_SEND) {
		connect_qp(qp, peer.qpn2);
		connect_qp(qp_recv, peer.qpn);
	} else if (type == IBV_QPT_UD) {
		struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
			.grh = { .hop_limit = 1, .sgid_index = gidx } };

		memcpy(aa.grh.dgid.raw, peer.gid, 16);
		connect_qp(qp, 0);
		ah = ibv_create_ah(pd, &aa);
		if (ah == NULL)
			peer_die("ibv_create_ah");
	} else {
		connect_qp(qp, peer.qpn);
	}
}

static void post_recvs(void)
{
	for (uint32_t i = 0; i < count; i++) {
		struct ibv_sge sge = { .addr = (uintptr_t)buf + i * slot, .length = slot,
				       .lkey = mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;
		int rc = srq ? ibv_post_srq_recv(srq, &wr, &bad) : ibv_post_recv(qp, &wr, &bad);

		if (rc != 0) {
			errno = rc;
			peer_die("ibv_post_recv");
		}
	}
}

/* Operation @i of the initiator, from / into its slot @i. */
static void post_op(uint32_t i)
{
	bool atomic = op == OP_FA || op == OP_CS;
	struct ibv_sge sge = { .addr = (uintptr_t)buf + i * slot, .length = atomic ? 8 : size,
			       .lkey = mr->lkey };
	struct ibv_send_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	uint64_t raddr = peer.addr + (uint64_t)i * slot;
	int rc;

	switch (op) {
	case OP_SEND:
		wr.opcode = IBV_WR_SEND;
		if (type == IBV_QPT_UD) {
			wr.wr.ud.ah = ah;
			wr.wr.ud.remote_qpn = peer.qpn;
			wr.wr.ud.remote_qkey = QKEY;
		}
		if (type == IBV_QPT_XRC_SEND)
			wr.qp_type.xrc.remote_srqn = peer.srqn;
		break;
	case OP_WRITE:
	case OP_READ:
		wr.opcode = op == OP_WRITE ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = peer.rkey;
		break;
	case OP_FA:
	case OP_CS:
		wr.opcode = op == OP_FA ? IBV_WR_ATOMIC_FETCH_AND_ADD : IBV_WR_ATOMIC_CMP_AND_SWP;
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = peer.rkey;
		wr.wr.atomic.compare_add = op == OP_FA ? atomic_operand(i) :
					   atomic_before(i) + (i & 1);
		wr.wr.atomic.swap = atomic_operand(i);
		break;
	}
	rc = ibv_post_send(qp, &wr, &bad);
	if (rc != 0) {
		errno = rc;
		peer_die("ibv_post_send");
	}
}

/* The first byte of slot @i (from @from) that is not pattern(@client, @i, .), or @len. */
static size_t first_bad(const uint8_t *from, bool client, uint32_t i, size_t len)
{
	size_t k;

	for (k = 0; k < len && from[k] == pattern(client, i, k); k++)
		;
	return k;
}

static bool guard_ok(const uint8_t *p, size_t len)
{
	for (size_t k = 0; k < len; k++)
		if (p[k] != GUARD)
			return false;
	return true;
}

/* UD: the 40 bytes before the payload, the peer's address as source and ours as destination
 * (an IPv4 header in the last 20 for an IPv4-mapped GID, RFC 4391 / RoCE v2; a GRH else). */
static bool grh_ok(const uint8_t *grh)
{
	if (!memcmp(me.gid, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12))
		return grh[20] >> 4 == 4 && !memcmp(grh + 32, peer.gid + 12, 4) &&
		       !memcmp(grh + 36, me.gid + 12, 4);
	return grh[0] >> 4 == 6 && !memcmp(grh + 8, peer.gid, 16) && !memcmp(grh + 24, me.gid, 16);
}

/* The receiver of SENDs: @count completions in order, each checked with its bytes. */
static void check_recvs(void)
{
	size_t hdr = type == IBV_QPT_UD ? GRH_LEN : 0, bad;
	uint32_t bytes_bad = 0, wc_bad = 0, grh_bad = 0, tail_bad = 0;

	for (uint32_t i = 0; i < count; i++) {
		struct ibv_wc wc = peer_next_wc(WAIT_S);
		uint32_t qpn = type == IBV_QPT_XRC_SEND ? me.qpn2 : me.qpn;
		const uint8_t *s = buf + i * slot;
		bool ok = wc.status == IBV_WC_SUCCESS && wc.wr_id == i && wc.opcode == IBV_WC_RECV &&
			  wc.byte_len == size + hdr && (wc.qp_num == qpn || type == IBV_QPT_XRC_SEND);

		if (type == IBV_QPT_UD)
			ok = ok && wc.src_qp == peer.qpn && (wc.wc_flags & IBV_WC_GRH);
		if (!ok && wc_bad++ < 3)
			printf("  receive %u: %s, wr_id %llu, opcode %d, byte_len %u, qp_num %#x, "
			       "src_qp %#x, wc_flags %#x\n", i, ibv_wc_status_str(wc.status),
			       (unsigned long long)wc.wr_id, wc.opcode, wc.byte_len, wc.qp_num,
			       wc.src_qp, wc.wc_flags);
		if (hdr && !grh_ok(s) && grh_bad++ < 3)
			printf("  receive %u: the GRH does not name the peer and us\n", i);
		bad = first_bad(s + hdr, !is_client, i, size);
		if (bad < size && bytes_bad++ < 3)
			printf("  message %u: byte %zu is %#x, not %#x\n", i, bad, s[hdr + bad],
			       pattern(!is_client, i, bad));
		tail_bad += !guard_ok(s + hdr + size, slot - hdr - size);
	}
	peer_check(wc_bad == 0, "%u receive completions in order: SUCCESS, RECV, byte_len %zu%s "
	      "(%u not)", count, size + hdr, type == IBV_QPT_UD ? ", the peer's QPN, GRH" : "",
	      wc_bad);
	if (hdr)
		peer_check(grh_bad == 0, "%u GRHs: the peer's address as source, ours as destination "
		      "(%u not)", count, grh_bad);
	peer_check(bytes_bad == 0, "%u messages of %u bytes, every byte the peer's (%u not)", count,
	      size, bytes_bad);
	peer_check(tail_bad == 0, "nothing written after a message's end (%u slots were)", tail_bad);
}

/* The target of WRITEs: every slot the peer's, the guard after them untouched; polled (and
 * the port with it) until all is there or WAIT_S passed: a UC WRITE completes at its sender
 * before it arrives. */
static void check_written(void)
{
	double t0 = peer_now();
	uint32_t i, bad;

	do {
		peer_poll_stash();
		for (i = 0, bad = 0; i < count; i++)
			bad += first_bad(buf + i * slot, !is_client, i, size) < size;
	} while (bad != 0 && peer_now() - t0 < WAIT_S);
	peer_check(bad == 0, "%u WRITEs of %u bytes, each in its slot, every byte the peer's "
	      "(%u slots not)", count, size, bad);
	for (i = 0, bad = 0; i < count; i++)
		bad += !guard_ok(buf + i * slot + size, slot - size);
	peer_check(bad == 0 && guard_ok(buf + count * slot, buf_len - count * slot),
	      "nothing written outside the slots");
}

/* The target of atomics: each slot's final value. */
static void check_atomic_target(void)
{
	uint32_t bad = 0;

	for (uint32_t i = 0; i < count; i++) {
		uint64_t v, want = atomic_before(i);

		memcpy(&v, buf + i * slot, 8);
		if (op == OP_FA)
			want += atomic_operand(i);
		else if (!(i & 1))
			want = atomic_operand(i);
		if (v != want && bad++ < 3)
			printf("  slot %u: %#llx, not %#llx\n", i, (unsigned long long)v,
			       (unsigned long long)want);
	}
	peer_check(bad == 0, "%u %s slots hold their final values (%u not)", count,
	      op == OP_FA ? "FETCH_AND_ADD" : "CMP_AND_SWAP", bad);
}

/* The initiator: @count operations, DEPTH in flight; READs and atomics checked as they
 * complete (the bytes read, the original values returned). */
static void initiate(void)
{
	uint32_t posted = 0, done = 0, wc_bad = 0, data_bad = 0;

	while (done < count) {
		while (posted < count && posted - done < DEPTH)
			post_op(posted++);
		struct ibv_wc wc = peer_next_wc(WAIT_S);
		uint32_t i = (uint32_t)wc.wr_id;

		if ((wc.status != IBV_WC_SUCCESS || wc.wr_id != done) && wc_bad++ < 3)
			printf("  operation %u: %s, wr_id %llu\n", done,
			       ibv_wc_status_str(wc.status), (unsigned long long)wc.wr_id);
		if (wc.wr_id == UINT64_MAX)
			break;
		done++;
		if (op == OP_READ && first_bad(buf + i * slot, !is_client, i, size) < size)
			data_bad++;
		if (op == OP_FA || op == OP_CS) {
			uint64_t v;

			memcpy(&v, buf + i * slot, 8);
			data_bad += v != atomic_before(i);
		}
	}
	peer_check(wc_bad == 0, "%u operations completed in order, SUCCESS (%u not)", count, wc_bad);
	if (op == OP_READ)
		peer_check(data_bad == 0, "%u READs of %u bytes, every byte the peer's (%u not)", count,
		      size, data_bad);
	if (op == OP_FA || op == OP_CS)
		peer_check(data_bad == 0, "%u original values returned (%u wrong)", count, data_bad);
}

/* This side's memory before a round: the slots the peer READs or swaps its values in, the
 * slots the initiator SENDs or WRITEs from, GUARD everywhere else. */
static void fill(bool initiator)
{
	memset(buf, GUARD, buf_len);
	for (uint32_t i = 0; i < count; i++) {
		uint8_t *s = buf + i * slot;
		uint64_t v = atomic_before(i);

		if ((op == OP_SEND || op == OP_WRITE) == initiator && op != OP_FA && op != OP_CS)
			for (size_t k = 0; k < size; k++)
				s[k] = pattern(is_client, i, k);
		if ((op == OP_FA || op == OP_CS) && !initiator)
			memcpy(s, &v, 8);
	}
}

/* One round, this side the @initiator or the target. */
static void run_round(bool initiator)
{
	int failed = peer_failures;
	bool ok;

	printf("-- %s acts\n", side(initiator ? is_client : !is_client));
	fill(initiator);
	if (!initiator && op == OP_SEND)
		post_recvs();
	if (initiator) {
		recv_msg(M_READY);
		initiate();
		send_msg(M_DONE, 0);
		ok = recv_msg(M_RESULT).status == 0;
		peer_check(ok, "the peer found its memory as it must be");
		return;
	}
	send_msg(M_READY, 0);
	if (op == OP_SEND)
		check_recvs();
	recv_msg(M_DONE);
	if (op == OP_WRITE)
		check_written();
	if (op == OP_FA || op == OP_CS)
		check_atomic_target();
	send_msg(M_RESULT, peer_failures != failed);
}

static void usage(void)
{
	fprintf(stderr, "usage: data_peer [-d DEV] [-g GID_INDEX] [-p TCP_PORT] "
		"[-t rc|uc|ud|srq|xrc] [-o send|write|read|fa|cs] [-s SIZE] [-n COUNT] [HOST]\n");
	exit(2);
}

static void parse_type(const char *t)
{
	static const char *const types[] = { "rc", "uc", "ud", "srq", "xrc" };
	static const enum ibv_qp_type qpt[] = { IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD, IBV_QPT_RC,
						IBV_QPT_XRC_SEND };

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (!strcmp(t, types[i])) {
			type = qpt[i];
			use_srq = i == 3;
			return;
		}
	usage();
}

static void parse_op(const char *o)
{
	static const char *const ops[] = { "send", "write", "read", "fa", "cs" };

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(o, ops[i])) {
			op = (enum op)i;
			return;
		}
	usage();
}

int main(int argc, char **argv)
{
	const char *dev_name = NULL, *port = "18515", *host = NULL;
	int c;

	while ((c = getopt(argc, argv, "d:g:p:t:o:s:n:")) != -1) {
		switch (c) {
		case 'd': dev_name = optarg; break;
		case 'g': gidx = atoi(optarg); break;
		case 'p': port = optarg; break;
		case 't': parse_type(optarg); break;
		case 'o': parse_op(optarg); break;
		case 's': size = strtoul(optarg, NULL, 0); break;
		case 'n': count = strtoul(optarg, NULL, 0); break;
		default: usage();
		}
	}
	if (optind < argc)
		host = argv[optind];
	if (op == OP_FA || op == OP_CS)
		size = 8;
	if (count == 0 || size == 0 || (op != OP_SEND && type != IBV_QPT_RC && type != IBV_QPT_UC) ||
	    (op != OP_SEND && op != OP_WRITE && type != IBV_QPT_RC) || (use_srq && op != OP_SEND))
		usage();
	is_client = host != NULL;
	peer_name = is_client ? "data_peer (client)" : "data_peer (server)";
	peer_idle = peer_poll_stash;
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* a slot: the message, room for UD's GRH, 64 guard bytes; 8-aligned for atomics */
	slot = (size + GRH_LEN + 64 + 7) & ~(size_t)7;
	buf_len = count * slot + 4096;
	ctx = peer_open_device(dev_name);
	printf("data_peer: %s on %s, GID index %d, %u x %u bytes\n", side(is_client),
	       ibv_get_device_name(ctx->device), gidx, count, size);
	buf = aligned_alloc(4096, (buf_len + 4095) & ~(size_t)4095);
	pd = buf ? ibv_alloc_pd(ctx) : NULL;
	cq = pd ? ibv_create_cq(ctx, 2 * count + DEPTH, NULL, NULL, 0) : NULL;
	if (cq == NULL)
		peer_die("aligned_alloc/ibv_alloc_pd/ibv_create_cq");
	peer_cq = cq;
	mr = ibv_reg_mr(pd, buf, buf_len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			(type == IBV_QPT_UC ? 0 : IBV_ACCESS_REMOTE_READ |
			 IBV_ACCESS_REMOTE_ATOMIC));
	if (mr == NULL)
		peer_die("ibv_reg_mr");
	create_qps();
	srand48(getpid() ^ time(NULL));
	peer_sock = peer_tcp(host, port, WAIT_S);
	connect_peer();
	run_round(is_client);
	run_round(!is_client);

	close(peer_sock);
	if (ah)
		ibv_destroy_ah(ah);
	ibv_destroy_qp(qp);
	if (qp_recv)
		ibv_destroy_qp(qp_recv);
	if (srq)
		ibv_destroy_srq(srq);
	if (xrcd)
		ibv_close_xrcd(xrcd);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	free(buf);
	if (peer_failures == 0)
		printf("data_peer: passed (%s)\n", side(is_client));
	else
		printf("data_peer: %d checks failed (%s)\n", peer_failures, side(is_client));
	return peer_failures != 0;
}

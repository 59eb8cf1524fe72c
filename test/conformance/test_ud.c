/* SPDX-License-Identifier: BSD-3-Clause */
/* UD QPs over RoCEv2 on one port, as an application sees them: the port gets an IPv4 and an
 * IPv6 address (dpv_port_add_addr), and UD QPs of the device talk to each other through
 * address handles to the port's own GIDs, which loop back inside dpverbs. Checked: the
 * device's UD limits; the state machine's UD attributes (required, optional, refused) and
 * ibv_query_qp; address handle errors (no GRH, a bad or empty sgid_index, mixed families, an
 * unreachable peer); SEND and SEND_WITH_IMM of 0, 1, 63, 1000 and path-MTU bytes both ways
 * and to the QP itself, with exact completions (byte_len, wc_flags, imm_data, src_qp) and the
 * exact GRH (IPv4 header in bytes 20-39, or the IPv6 header) and payload, nothing written
 * past them; a wrong Q_Key delivers nothing and is counted, the QP's own Q_Key with the high
 * bit; a message above the MTU completes successfully and sends nothing (counted); a QPN
 * nobody has (counted); a delivered datagram and one to no QP seen by a RAW SNIFFER flow,
 * by no default flow;
 * ibv_init_ah_from_wc / ibv_create_ah_from_wc answering the sender;
 * signaled and unsignaled sends; SOLICITED waking a CQ armed for solicited events only;
 * INLINE; gather and scatter lists; an SGE outside its MR and an AH of another PD (error
 * completions, SQE); a receive buffer too small (LOC_LEN_ERR, QP to ERR); UD
 * TSO; the ibv_wr_* API; two threads exchanging datagrams while a third churns QPs and
 * groups; receive faults on looped datagrams; multicast attach/detach errors; post-time
 * errors. DPV_EAL_ARGS: --vdev=net_ring0. */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>

#include "dpv_test_ud.h"

#define QKEY_A 0x11111111u
#define QKEY_B 0x22222222u
#define SLOT 8192                   /* receive slots of the buffer */
#define RX_BASE (256 * 1024)

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *scq, *rcq;
static struct ibv_mr *mr;
static uint8_t *buf;                /* [0, RX_BASE): send data; then receive slots */
static uint32_t mtu;                /* the path MTU in bytes */
static union ibv_gid gid4, gid6;    /* the port's GIDs 1 (10.1.0.1) and 2 (fd00::1) */

static struct ibv_qp *ud_qp_make(struct ibv_cq *s, struct ibv_cq *r, int sig_all)
{
	return ud_qp_create(pd, s, r, sig_all);
}

static struct ibv_qp *ud_qp(uint32_t qkey, uint32_t psn, int sig_all)
{
	return ud_qp_rts(pd, scq, rcq, qkey, psn, sig_all);
}

static struct ibv_ah *ah_make(int sgid_index, const union ibv_gid *dgid, uint8_t tclass,
			      uint32_t flow, uint8_t hop)
{
	return ud_ah(pd, sgid_index, dgid, tclass, flow, hop);
}

static uint8_t *slot_of(int slot)
{
	return buf + RX_BASE + (size_t)slot * SLOT;
}

static int post_recv(struct ibv_qp *qp, int slot, uint32_t len, uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)slot_of(slot), len, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;

	memset(slot_of(slot), GUARD, SLOT);
	return ibv_post_recv(qp, &wr, &bad);
}

static int send_ud(struct ibv_qp *qp, struct ibv_ah *ah, uint32_t rqpn, uint32_t qkey,
		   enum ibv_wr_opcode op, uint32_t imm, uint32_t len, unsigned int flags,
		   uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)buf, len, mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = flags, .imm_data = htonl(imm),
		.wr.ud = { .ah = ah, .remote_qpn = rqpn, .remote_qkey = qkey },
	}, *bad;

	return ibv_post_send(qp, &wr, &bad);
}

/* Nothing more arrives on @cq for a moment (loopback frames land on the next poll). */
static int quiet(struct ibv_cq *cq)
{
	struct ibv_wc wc[4];

	return test_poll_for(cq, wc, 4, 0.2);
}

static struct dpv_port_stats stats(void)
{
	struct dpv_port_stats st;

	dpv_query_port_stats(ctx, &st);
	return st;
}

/* One datagram from @s to @r: SEND or SEND_WITH_IMM of @len bytes, both completions and the
 * receive buffer exact. */
static void exchange(struct ibv_qp *s, struct ibv_qp *r, uint32_t rqkey, struct ibv_ah *ah,
		     const union ibv_gid *src, const union ibv_gid *dst, uint32_t len, bool imm,
		     uint8_t tclass, uint32_t flow, uint8_t hop)
{
	struct ibv_wc wc;
	uint8_t seed = (uint8_t)(len * 3 + imm);
	const uint8_t *rb = slot_of(0);
	uint64_t id = 1000 + len * 2 + imm;

	CHECK_EQ(post_recv(r, 0, SLOT, id), 0);
	pattern(buf, len, seed);
	CHECK_EQ(send_ud(s, ah, r->qp_num, rqkey, imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
			 0xdeadbe00 + len, len, IBV_SEND_SIGNALED, id), 0);
	CHECK(test_poll(scq, &wc, 1) == 1, "len %u: no send completion", len);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND && wc.wr_id == id &&
	      wc.qp_num == s->qp_num, "len %u: send wc status %d opcode %d", len, wc.status,
	      wc.opcode);
	if (test_poll(rcq, &wc, 1) != 1) {
		CHECK(0, "len %u imm %d: nothing received", len, imm);
		return;
	}
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.opcode, IBV_WC_RECV);
	CHECK_EQ(wc.wr_id, id);
	CHECK_EQ(wc.qp_num, r->qp_num);
	CHECK_EQ(wc.byte_len, len + 40);
	CHECK_EQ(wc.wc_flags, IBV_WC_GRH | (imm ? IBV_WC_WITH_IMM : 0));
	if (imm)
		CHECK_EQ(ntohl(wc.imm_data), 0xdeadbe00 + len);
	CHECK_EQ(wc.src_qp, s->qp_num);
	CHECK_EQ(wc.pkey_index, 0);
	CHECK_EQ(wc.slid, 0);
	CHECK_EQ(wc.sl, 0);
	check_grh(rb, src, dst, len, imm, tclass, flow, hop);
	pattern(buf + RX_BASE - len, len, seed);   /* the expected bytes, apart */
	CHECK(memcmp(rb + 40, buf + RX_BASE - len, len) == 0, "len %u: payload differs", len);
	check_guard(rb, 40 + len, SLOT, "exchange");
}

static void check_device(void)
{
	struct ibv_device_attr da;
	struct ibv_device_attr_ex dx;
	struct ibv_port_attr pa;

	CHECK_EQ(ibv_query_device(ctx, &da), 0);
	CHECK(da.max_qp >= 1024 && da.max_qp < (1 << 24), "max_qp %d", da.max_qp);
	CHECK(da.max_ah >= 1024, "max_ah %d", da.max_ah);
	CHECK(da.max_mcast_grp > 0 && da.max_mcast_qp_attach > 0 &&
	      da.max_total_mcast_qp_attach >= da.max_mcast_qp_attach, "multicast limits");
	CHECK_EQ(da.max_pkeys, 1);
	CHECK_EQ(ibv_query_device_ex(ctx, NULL, &dx), 0);
	CHECK(dx.tso_caps.supported_qpts & (1u << IBV_QPT_UD), "UD TSO not reported");
	CHECK_EQ(ibv_query_port(ctx, 1, &pa), 0);
	mtu = 128u << pa.active_mtu;
	CHECK(mtu >= 256 && mtu <= 4096, "active MTU %u", mtu);
}

/* The UD columns of the state machine, and what ibv_query_qp returns. */
static void check_states(void)
{
	struct ibv_qp *qp = ud_qp_make(scq, rcq, 0);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 7 }, q;
	struct ibv_qp_init_attr qi;
	const int init = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;

	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT | IBV_QP_QKEY), EINVAL);
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT), EINVAL);
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_QKEY), EINVAL);
	CHECK_EQ(ibv_modify_qp(qp, &a, init | IBV_QP_SQ_PSN), EINVAL);
	CHECK_EQ(ibv_modify_qp(qp, &a, init | IBV_QP_ACCESS_FLAGS), EINVAL);
	a.port_num = 2;
	CHECK_EQ(ibv_modify_qp(qp, &a, init), EINVAL);
	a.port_num = 1;
	a.pkey_index = 1;
	CHECK_EQ(ibv_modify_qp(qp, &a, init), EINVAL);
	a.pkey_index = 0;
	CHECK_EQ(send_ud(qp, NULL, 1, 1, IBV_WR_SEND, 0, 0, 0, 0), EINVAL);   /* RESET */
	CHECK_EQ(ibv_modify_qp(qp, &a, init), 0);
	CHECK_EQ(ibv_query_qp(qp, &q, IBV_QP_STATE | IBV_QP_QKEY | IBV_QP_PORT, &qi), 0);
	CHECK(q.qp_state == IBV_QPS_INIT && q.qkey == 7 && q.port_num == 1 && q.pkey_index == 0,
	      "query after INIT: state %d qkey %#x port %u", q.qp_state, q.qkey, q.port_num);
	CHECK_EQ(qi.qp_type, IBV_QPT_UD);
	/* INIT -> INIT may change the Q_Key */
	a.qkey = 8;
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_QKEY), 0);
	/* INIT -> RTR: no address vector, no path MTU, no destination QPN for UD */
	a.qp_state = IBV_QPS_RTR;
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV), EINVAL);
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_DEST_QPN), EINVAL);
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PATH_MTU), EINVAL);
	CHECK_EQ(send_ud(qp, NULL, 1, 1, IBV_WR_SEND, 0, 0, 0, 0), EINVAL);   /* INIT */
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
	CHECK_EQ(send_ud(qp, NULL, 1, 1, IBV_WR_SEND, 0, 0, 0, 0), EINVAL);   /* RTR */
	/* RTR -> RTS needs the SQ PSN, takes no retry counts */
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x123456;
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE), EINVAL);
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_RETRY_CNT), EINVAL);
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT), EINVAL);
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
	CHECK_EQ(ibv_query_qp(qp, &q, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_QKEY, &qi), 0);
	CHECK(q.qp_state == IBV_QPS_RTS && q.sq_psn == 0x123456 && q.qkey == 8,
	      "query after RTS: state %d psn %#x qkey %#x", q.qp_state, q.sq_psn, q.qkey);
	/* RTS -> RTS: the Q_Key may change, the PSN may not */
	a.qkey = 9;
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN), EINVAL);
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_QKEY), 0);
	CHECK_EQ(ibv_query_qp(qp, &q, IBV_QP_QKEY, &qi), 0);
	CHECK_EQ(q.qkey, 9);
	/* RTS -> SQD -> RTS; then RESET and back */
	CHECK_EQ(ud_to_state(qp, IBV_QPS_SQD, 0, 0), 0);
	CHECK_EQ(ud_to_state(qp, IBV_QPS_RTS, 0, 0), 0);
	/* SQD with EN_SQD_ASYNC_NOTIFY and nothing under way: drained at once, one event */
	{
		struct ibv_qp_attr d = { .qp_state = IBV_QPS_SQD, .en_sqd_async_notify = 1 };
		struct ibv_async_event ev;
		int flags = fcntl(ctx->async_fd, F_GETFL), n = 0;

		CHECK_EQ(ibv_modify_qp(qp, &d, IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY), 0);
		CHECK_EQ(ibv_query_qp(qp, &q, IBV_QP_STATE, &qi), 0);
		CHECK(q.qp_state == IBV_QPS_SQD && q.sq_draining == 0, "UD SQD: state %d draining %d",
		      q.qp_state, q.sq_draining);
		fcntl(ctx->async_fd, F_SETFL, flags | O_NONBLOCK);
		while (ibv_get_async_event(ctx, &ev) == 0) {
			n += ev.event_type == IBV_EVENT_SQ_DRAINED && ev.element.qp == qp;
			ibv_ack_async_event(&ev);
		}
		fcntl(ctx->async_fd, F_SETFL, flags);
		CHECK_EQ(n, 1);
	}
	CHECK_EQ(ud_to_state(qp, IBV_QPS_RTS, 0, 0), 0);
	CHECK_EQ(ud_to_state(qp, IBV_QPS_RESET, 0, 0), 0);
	CHECK_EQ(ud_to_init(qp, 10), 0);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
}

static void check_ah_errors(void)
{
	struct ibv_ah_attr a = { .is_global = 0, .port_num = 1,
				 .grh = { .dgid = gid4, .sgid_index = 1, .hop_limit = 64 } };
	union ibv_gid far;
	struct ibv_ah *ah;

	errno = 0;
	CHECK(ibv_create_ah(pd, &a) == NULL && errno == EINVAL, "no GRH: errno %d", errno);
	a.is_global = 1;
	a.port_num = 2;
	errno = 0;
	CHECK(ibv_create_ah(pd, &a) == NULL && errno == EINVAL, "port 2: errno %d", errno);
	a.port_num = 1;
	a.grh.sgid_index = 7;                   /* an empty entry */
	errno = 0;
	CHECK(ibv_create_ah(pd, &a) == NULL && errno == EINVAL, "empty sgid: errno %d", errno);
	a.grh.sgid_index = 200;                 /* outside the table */
	errno = 0;
	CHECK(ibv_create_ah(pd, &a) == NULL && errno == EINVAL, "sgid 200: errno %d", errno);
	a.grh.sgid_index = 2;                   /* IPv6 source, IPv4 destination */
	errno = 0;
	CHECK(ibv_create_ah(pd, &a) == NULL && errno == EINVAL, "mixed: errno %d", errno);
	gid_v4(&far, "10.1.0.99");              /* nobody answers ARP for it */
	a.grh.sgid_index = 1;
	a.grh.dgid = far;
	errno = 0;
	CHECK(ibv_create_ah(pd, &a) == NULL && errno == EHOSTUNREACH, "unreachable: errno %d",
	      errno);
	a.grh.dgid = gid4;
	ah = ibv_create_ah(pd, &a);
	CHECK(ah != NULL && ah->pd == pd && ah->context == ctx, "create_ah: %s", strerror(errno));
	CHECK_EQ(ibv_dealloc_pd(pd), EBUSY);    /* an AH uses it */
	CHECK_EQ(ibv_destroy_ah(ah), 0);
}

/* Every size both ways, to the QP itself, over IPv4 and IPv6. */
static void check_exchange(struct ibv_qp *qa, struct ibv_qp *qb)
{
	const uint32_t sizes[] = { 0, 1, 63, 1000, mtu };
	struct ibv_ah *ah4 = ah_make(1, &gid4, 0, 0, 64), *ah6 = ah_make(2, &gid6, 0x28, 0x12345, 9);
	struct ibv_ah *ah4tc = ah_make(1, &gid4, 0xb8, 0, 3);

	CHECK(ah4 != NULL && ah6 != NULL && ah4tc != NULL, "create_ah: %s", strerror(errno));
	if (ah4 == NULL || ah6 == NULL || ah4tc == NULL)
		return;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		for (int imm = 0; imm < 2; imm++) {
			exchange(qa, qb, QKEY_B, ah4, &gid4, &gid4, sizes[i], imm, 0, 0, 64);
			exchange(qb, qa, QKEY_A, ah4, &gid4, &gid4, sizes[i], imm, 0, 0, 64);
			exchange(qa, qa, QKEY_A, ah6, &gid6, &gid6, sizes[i], imm, 0x28, 0x12345, 9);
		}
	exchange(qb, qa, QKEY_A, ah6, &gid6, &gid6, 100, true, 0x28, 0x12345, 9);
	exchange(qa, qb, QKEY_B, ah4tc, &gid4, &gid4, 33, false, 0xb8, 0, 3);
	ibv_destroy_ah(ah4);
	ibv_destroy_ah(ah6);
	ibv_destroy_ah(ah4tc);
}

/* What is dropped: another QP's Q_Key, a QPN nobody has, a message above the MTU. */
static void check_drops(struct ibv_qp *qa, struct ibv_qp *qb)
{
	struct ibv_ah *ah = ah_make(1, &gid4, 0, 0, 64);
	struct dpv_port_stats s0 = stats(), s1;
	struct ibv_wc wc;

	CHECK_EQ(post_recv(qb, 0, SLOT, 1), 0);
	/* the Q_Key of A, not B's */
	CHECK_EQ(send_ud(qa, ah, qb->qp_num, QKEY_A, IBV_WR_SEND, 0, 10, IBV_SEND_SIGNALED, 2), 0);
	CHECK(test_poll(scq, &wc, 1) == 1 && wc.status == IBV_WC_SUCCESS, "send, wrong Q_Key");
	CHECK_EQ(quiet(rcq), 0);
	s1 = stats();
	CHECK_EQ(s1.rx_roce_bad_qkey - s0.rx_roce_bad_qkey, 1);
	check_guard(slot_of(0), 0, SLOT, "wrong Q_Key");
	/* a QPN nobody has */
	CHECK_EQ(send_ud(qa, ah, 0xabcde, QKEY_B, IBV_WR_SEND, 0, 10, IBV_SEND_SIGNALED, 3), 0);
	CHECK(test_poll(scq, &wc, 1) == 1 && wc.status == IBV_WC_SUCCESS, "send, no QPN");
	CHECK_EQ(quiet(rcq), 0);
	s0 = stats();
	CHECK_EQ(s0.rx_roce_no_qp - s1.rx_roce_no_qp, 1);
	/* above the MTU: success, nothing on the way */
	CHECK_EQ(send_ud(qa, ah, qb->qp_num, QKEY_B, IBV_WR_SEND, 0, mtu + 1, IBV_SEND_SIGNALED,
			 4), 0);
	CHECK(test_poll(scq, &wc, 1) == 1 && wc.status == IBV_WC_SUCCESS && wc.wr_id == 4,
	      "send above the MTU: status %d", wc.status);
	CHECK_EQ(quiet(rcq), 0);
	s1 = stats();
	CHECK_EQ(s1.tx_ud_oversize - s0.tx_ud_oversize, 1);
	CHECK_EQ(s1.tx_roce_loopback, s0.tx_roce_loopback);
	check_guard(slot_of(0), 0, SLOT, "above the MTU");
	/* the high bit of remote_qkey: the sender's own Q_Key (A's set to B's for this) */
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS, .qkey = QKEY_B };

	CHECK_EQ(ibv_modify_qp(qa, &a, IBV_QP_STATE | IBV_QP_QKEY), 0);
	CHECK_EQ(send_ud(qa, ah, qb->qp_num, 0x80000000, IBV_WR_SEND, 0, 5, IBV_SEND_SIGNALED, 5),
		 0);
	CHECK(test_poll(scq, &wc, 1) == 1 && wc.status == IBV_WC_SUCCESS, "send, own Q_Key");
	CHECK(test_poll(rcq, &wc, 1) == 1 && wc.status == IBV_WC_SUCCESS && wc.wr_id == 1 &&
	      wc.byte_len == 45, "the QP's own Q_Key: not delivered");
	a.qkey = QKEY_A;
	CHECK_EQ(ibv_modify_qp(qa, &a, IBV_QP_STATE | IBV_QP_QKEY), 0);
	ibv_destroy_ah(ah);
}

/* RoCE frames a RAW_PACKET SNIFFER flow still sees (issue #14), and a RAW default flow does
 * not: a datagram delivered to a UD QP and one to a QPN nobody has (dropped, counted) each
 * reach the sniffer whole (UDP to 4791, the BTH's destination QP) and nothing else. */
/* Is the ICRC of @f (Ethernet, IPv4 without options, UDP, BTH...: @len bytes) right? IBA
 * A17.3.3 written out bit by bit, apart from the library: CRC-32 over 8 bytes of ones (the
 * LRH), the IP header with TOS, TTL and checksum as ones, UDP with its checksum as ones, the
 * BTH with its FECN/BECN byte as ones, then everything up to the ICRC; stored inverted,
 * little-endian. */
static bool icrc_ok(const uint8_t *f, uint32_t len)
{
	uint8_t m[8 + 20 + 8 + 12];
	uint32_t crc = ~0u, want;

	if (len < 14 + sizeof(m) - 8 + 4)
		return false;
	memset(m, 0xFF, 8);
	memcpy(m + 8, f + 14, sizeof(m) - 8);
	m[8 + 1] = m[8 + 8] = m[8 + 10] = m[8 + 11] = 0xFF;
	m[8 + 20 + 6] = m[8 + 20 + 7] = 0xFF;
	m[8 + 28 + 4] = 0xFF;
	for (uint32_t i = 0; i < sizeof(m) + len - 4 - (14 + sizeof(m) - 8); i++) {
		crc ^= i < sizeof(m) ? m[i] : f[14 + sizeof(m) - 8 + i - sizeof(m)];
		for (int k = 0; k < 8; k++)
			crc = crc & 1 ? 0xEDB88320 ^ crc >> 1 : crc >> 1;
	}
	want = (uint32_t)f[len - 4] | (uint32_t)f[len - 3] << 8 | (uint32_t)f[len - 2] << 16 |
	       (uint32_t)f[len - 1] << 24;
	return ~crc == want;
}

static void check_sniffer(struct ibv_qp *qa, struct ibv_qp *qb)
{
	struct ibv_qp_cap cap = { .max_send_wr = 4, .max_send_sge = 1, .max_recv_wr = 4,
				  .max_recv_sge = 1 };
	struct ibv_cq *sn_cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_cq *df_cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp *sn = test_raw_qp(pd, sn_cq, cap), *df = test_raw_qp(pd, df_cq, cap);
	struct ibv_flow_attr fs = { .type = IBV_FLOW_ATTR_SNIFFER, .size = sizeof(fs), .port = 1 };
	struct ibv_flow_attr fd = { .type = IBV_FLOW_ATTR_ALL_DEFAULT, .size = sizeof(fd),
				    .port = 1 };
	struct ibv_flow *fls = ibv_create_flow(sn, &fs), *fld = ibv_create_flow(df, &fd);
	struct ibv_ah *ah = ah_make(1, &gid4, 0, 0, 64);
	const uint32_t to[2] = { qb->qp_num, 0xabcde };
	struct dpv_port_stats s0 = stats(), s1;
	struct dpv_qp_counters qc;
	struct ibv_wc wc;
	bool svc;
	int got;

	CHECK(fls != NULL && fld != NULL && ah != NULL, "sniffer setup: %s", strerror(errno));
	for (int i = 0; i < 4; i++) {
		CHECK_EQ(post_recv(sn, 60 + i, SLOT, 60 + i), 0);
		CHECK_EQ(post_recv(df, 64 + i, SLOT, 64 + i), 0);
	}
	CHECK_EQ(post_recv(qb, 0, SLOT, 1), 0);
	for (int k = 0; k < 2; k++) {
		const uint8_t *f = slot_of(60 + k);

		CHECK_EQ(send_ud(qa, ah, to[k], QKEY_B, IBV_WR_SEND, 0, 21, IBV_SEND_SIGNALED,
				 10 + k), 0);
		CHECK(test_poll(scq, &wc, 1) == 1 && wc.status == IBV_WC_SUCCESS, "send %d", k);
		CHECK(test_poll(sn_cq, &wc, 1) == 1 && wc.status == IBV_WC_SUCCESS &&
		      wc.wr_id == (uint64_t)(60 + k), "datagram %d: the sniffer saw nothing", k);
		/* Ethernet 14, IPv4 20, UDP 8, BTH 12, DETH 8, 21 bytes + pad 3, ICRC 4 */
		CHECK_EQ(wc.byte_len, 14 + 20 + 8 + 12 + 8 + 24 + 4);
		CHECK(f[12] == 0x08 && f[13] == 0x00 && f[14 + 9] == 17 &&
		      (f[36] << 8 | f[37]) == 4791 && f[42] == 0x64 &&
		      (uint32_t)(f[47] << 16 | f[48] << 8 | f[49]) == to[k],
		      "datagram %d: the sniffer's frame is not the UD SEND", k);
		CHECK(icrc_ok(f, wc.byte_len), "datagram %d: the sniffer's frame has a wrong ICRC", k);
	}
	CHECK(test_poll(rcq, &wc, 1) == 1 && wc.status == IBV_WC_SUCCESS && wc.wr_id == 1 &&
	      wc.byte_len == 40 + 21, "the UD QP's datagram");
	CHECK_EQ(quiet(df_cq), 0);          /* RoCE took both: no default flow sees them */
	CHECK_EQ(quiet(sn_cq), 0);
	s1 = stats();
	CHECK_EQ(s1.rx_roce - s0.rx_roce, 2);
	CHECK_EQ(s1.rx_roce_no_qp - s0.rx_roce_no_qp, 1);
	/* A frame to the port's own GID is built without its ICRC while nobody could see it
	 * (doc/roce.md, "Loopback"); a sniffer that comes between the send and the receive still
	 * gets the frame whole, ICRC included, and the QP its datagram. With a service-mode QP
	 * on the port (the RAW ones here, under service.conf) a service lcore polls the port on
	 * its own time: the datagram may arrive before the sniffer does (then it sees nothing);
	 * whatever it sees has its ICRC. */
	CHECK_EQ(dpv_query_qp_counters(sn, &qc), 0);
	svc = qc.progress == DPV_PROGRESS_SERVICE;
	CHECK_EQ(ibv_destroy_flow(fls), 0);
	CHECK_EQ(post_recv(qb, 1, SLOT, 2), 0);
	CHECK_EQ(send_ud(qa, ah, qb->qp_num, QKEY_B, IBV_WR_SEND, 0, 33, 0, 12), 0);
	fls = ibv_create_flow(sn, &fs);
	CHECK(fls != NULL, "sniffer again: %s", strerror(errno));
	got = svc ? test_poll_for(sn_cq, &wc, 1, 0.5) : test_poll(sn_cq, &wc, 1);
	CHECK(got == 1 || svc, "a sniffer made after the send saw nothing");
	if (svc)
		printf("service mode: the late sniffer %s the datagram\n",
		       got == 1 ? "saw" : "came after");
	if (got == 1) {
		CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 62 &&
		      wc.byte_len == 14 + 20 + 8 + 12 + 8 + 36 + 4, "the late sniffer's frame");
		CHECK(icrc_ok(slot_of(62), wc.byte_len), "the late sniffer's frame has a wrong ICRC");
	}
	CHECK(test_poll(rcq, &wc, 1) == 1 && wc.status == IBV_WC_SUCCESS && wc.wr_id == 2 &&
	      wc.byte_len == 40 + 33 && memcmp(slot_of(1) + 40, buf + 0, 33) == 0,
	      "the datagram the late sniffer saw");
	ibv_destroy_ah(ah);
	CHECK_EQ(ibv_destroy_flow(fls), 0);
	CHECK_EQ(ibv_destroy_flow(fld), 0);
	CHECK_EQ(ibv_destroy_qp(sn), 0);
	CHECK_EQ(ibv_destroy_qp(df), 0);
	CHECK_EQ(ibv_destroy_cq(sn_cq), 0);
	CHECK_EQ(ibv_destroy_cq(df_cq), 0);
}

/* Answering a datagram: the AH made from its completion and GRH reaches the sender. */
static void check_ah_from_wc(struct ibv_qp *qa, struct ibv_qp *qb)
{
	for (int v6 = 0; v6 < 2; v6++) {
		const union ibv_gid *g = v6 ? &gid6 : &gid4;
		struct ibv_ah *ah = ah_make(v6 ? 2 : 1, g, 0x10, v6 ? 0x777 : 0, 17), *back;
		struct ibv_ah_attr aa;
		struct ibv_wc wc, rwc;

		CHECK_EQ(post_recv(qb, 1, SLOT, 77), 0);
		CHECK_EQ(send_ud(qa, ah, qb->qp_num, QKEY_B, IBV_WR_SEND, 0, 20, 0, 6), 0);
		if (test_poll(rcq, &rwc, 1) != 1) {
			CHECK(0, "v6 %d: nothing received", v6);
			ibv_destroy_ah(ah);
			continue;
		}
		CHECK_EQ(ibv_init_ah_from_wc(ctx, 1, &rwc, (struct ibv_grh *)slot_of(1), &aa), 0);
		CHECK(aa.is_global == 1 && aa.port_num == 1 &&
		      memcmp(&aa.grh.dgid, g, 16) == 0 && aa.grh.sgid_index == (v6 ? 2 : 1) &&
		      aa.grh.hop_limit == 17 && aa.grh.traffic_class == 0x10 &&
		      aa.grh.flow_label == (v6 ? 0x777u : 0u),
		      "v6 %d: ah_attr: global %d sgid %u hop %u class %#x flow %#x", v6,
		      aa.is_global, aa.grh.sgid_index, aa.grh.hop_limit, aa.grh.traffic_class,
		      aa.grh.flow_label);
		back = ibv_create_ah_from_wc(pd, &rwc, (struct ibv_grh *)slot_of(1), 1);
		CHECK(back != NULL, "create_ah_from_wc: %s", strerror(errno));
		CHECK_EQ(post_recv(qa, 2, SLOT, 78), 0);
		CHECK_EQ(send_ud(qb, back, rwc.src_qp, QKEY_A, IBV_WR_SEND, 0, 21, 0, 7), 0);
		CHECK(test_poll(rcq, &wc, 1) == 1 && wc.wr_id == 78 && wc.qp_num == qa->qp_num &&
		      wc.src_qp == qb->qp_num && wc.byte_len == 61, "v6 %d: the answer", v6);
		/* without a GRH: no global route, nothing looked up */
		rwc.wc_flags = 0;
		CHECK_EQ(ibv_init_ah_from_wc(ctx, 1, &rwc, (struct ibv_grh *)slot_of(1), &aa), 0);
		CHECK_EQ(aa.is_global, 0);
		ibv_destroy_ah(back);
		ibv_destroy_ah(ah);
	}
}

/* Unsignaled WRs complete silently; sq_sig_all signals every one. */
static void check_signaling(struct ibv_qp *qa, struct ibv_qp *qb)
{
	struct ibv_ah *ah = ah_make(1, &gid4, 0, 0, 64);
	struct ibv_wc wc[8];

	for (int i = 0; i < 4; i++)
		CHECK_EQ(post_recv(qb, 3 + i, SLOT, 300 + (uint64_t)i), 0);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(send_ud(qa, ah, qb->qp_num, QKEY_B, IBV_WR_SEND, 0, 8, i == 3 ?
				 IBV_SEND_SIGNALED : 0, 400 + (uint64_t)i), 0);
	CHECK_EQ(test_poll(scq, wc, 1), 1);
	CHECK_EQ(wc[0].wr_id, 403);
	CHECK_EQ(test_poll(rcq, wc, 4), 4);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(wc[i].wr_id, 300 + (uint64_t)i);
	CHECK_EQ(quiet(scq), 0);
	ibv_destroy_ah(ah);
}

/* BTH.SE: a CQ armed for solicited completions wakes only for a SOLICITED send. */
static void check_solicited(struct ibv_qp *qa)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, ch, 0), *ev_cq;
	struct ibv_qp *qr = ud_qp_make(scq, cq, 0);
	struct ibv_ah *ah = ah_make(1, &gid4, 0, 0, 64);
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct ibv_wc wc[2];
	void *cctx;

	CHECK(ud_to_init(qr, QKEY_B) == 0 && ud_to_state(qr, IBV_QPS_RTR, 0, 0) == 0, "qr to RTR");
	CHECK_EQ(post_recv(qr, 8, SLOT, 1), 0);
	CHECK_EQ(post_recv(qr, 9, SLOT, 2), 0);
	CHECK_EQ(ibv_req_notify_cq(cq, 1), 0);
	CHECK_EQ(send_ud(qa, ah, qr->qp_num, QKEY_B, IBV_WR_SEND, 0, 4, 0, 1), 0);
	test_poll_for(scq, wc, 2, 0.2);            /* progress: the datagram lands */
	CHECK_EQ(poll(&pfd, 1, 0), 0);             /* not solicited: no event */
	CHECK_EQ(send_ud(qa, ah, qr->qp_num, QKEY_B, IBV_WR_SEND_WITH_IMM, 5, 4,
			 IBV_SEND_SOLICITED, 2), 0);
	test_poll_for(scq, wc, 2, 0.2);
	CHECK_EQ(poll(&pfd, 1, 1000), 1);
	CHECK(ibv_get_cq_event(ch, &ev_cq, &cctx) == 0 && ev_cq == cq, "the solicited event");
	ibv_ack_cq_events(cq, 1);
	CHECK_EQ(test_poll(cq, wc, 2), 2);
	CHECK(wc[0].wr_id == 1 && wc[1].wr_id == 2 && wc[1].wc_flags & IBV_WC_WITH_IMM,
	      "the two datagrams in order");
	ibv_destroy_ah(ah);
	ibv_destroy_qp(qr);
	ibv_destroy_cq(cq);
	ibv_destroy_comp_channel(ch);
}

/* INLINE from unregistered memory, a gather list, a scatter list splitting the GRH. */
static void check_sg(struct ibv_qp *qa, struct ibv_qp *qb)
{
	struct ibv_ah *ah = ah_make(1, &gid4, 0, 0, 64);
	uint8_t local[100], want[300];
	struct ibv_sge ssge[3] = { { (uintptr_t)buf, 50, mr->lkey },
				   { (uintptr_t)buf + 1000, 0, 0xdead },     /* skipped */
				   { (uintptr_t)buf + 2000, 150, mr->lkey } };
	struct ibv_sge rsge[3] = { { (uintptr_t)slot_of(10), 10, mr->lkey },
				   { (uintptr_t)slot_of(11), 100, mr->lkey },
				   { (uintptr_t)slot_of(12), 500, mr->lkey } };
	struct ibv_recv_wr rwr = { .wr_id = 9, .sg_list = rsge, .num_sge = 3 }, *rbad;
	struct ibv_send_wr wr = { .wr_id = 8, .sg_list = ssge, .num_sge = 3, .opcode = IBV_WR_SEND,
				  .wr.ud = { .ah = ah, .remote_qpn = qb->qp_num,
					     .remote_qkey = QKEY_B } }, *bad;
	struct ibv_sge isge = { (uintptr_t)local, sizeof(local), 0 };
	struct ibv_wc wc;
	uint8_t got[300];

	pattern(buf, 50, 1);
	pattern(buf + 2000, 150, 2);
	memcpy(want, buf, 50);
	memcpy(want + 50, buf + 2000, 150);
	for (int i = 10; i < 13; i++)
		memset(slot_of(i), GUARD, SLOT);
	CHECK_EQ(ibv_post_recv(qb, &rwr, &rbad), 0);
	CHECK_EQ(ibv_post_send(qa, &wr, &bad), 0);
	CHECK(test_poll(rcq, &wc, 1) == 1 && wc.status == IBV_WC_SUCCESS && wc.byte_len == 240,
	      "gather/scatter: status %d len %u", wc.status, wc.byte_len);
	memcpy(got, slot_of(10), 10);
	memcpy(got + 10, slot_of(11), 100);
	memcpy(got + 110, slot_of(12), 130);
	CHECK(got[20] == 0x45 && memcmp(got + 40, want, 200) == 0, "gather/scatter bytes");
	check_guard(slot_of(12), 130, SLOT, "scatter");
	/* INLINE: the lkey is not checked, the buffer reusable at once */
	pattern(local, sizeof(local), 9);
	memcpy(want, local, sizeof(local));
	wr.sg_list = &isge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_INLINE;
	CHECK_EQ(post_recv(qb, 13, SLOT, 10), 0);
	CHECK_EQ(ibv_post_send(qa, &wr, &bad), 0);
	memset(local, 0, sizeof(local));
	CHECK(test_poll(rcq, &wc, 1) == 1 && wc.status == IBV_WC_SUCCESS && wc.byte_len == 140 &&
	      memcmp(slot_of(13) + 40, want, 100) == 0, "INLINE");
	/* an SGE outside its MR: LOC_PROT_ERR, the QP to SQE, nothing sent */
	isge.lkey = mr->lkey;
	isge.addr = (uintptr_t)local;
	wr.send_flags = IBV_SEND_SIGNALED;
	CHECK_EQ(ibv_post_send(qa, &wr, &bad), 0);
	CHECK(test_poll(scq, &wc, 1) == 1 && wc.status == IBV_WC_LOC_PROT_ERR,
	      "SGE outside its MR: status %d", wc.status);
	CHECK_EQ(quiet(rcq), 0);
	struct ibv_qp_attr qa_attr;
	struct ibv_qp_init_attr qi;

	CHECK(ibv_query_qp(qa, &qa_attr, IBV_QP_STATE, &qi) == 0 &&
	      qa_attr.qp_state == IBV_QPS_SQE, "state after a send error: %d", qa_attr.qp_state);
	CHECK_EQ(ud_to_state(qa, IBV_QPS_RTS, 0, 0), 0);        /* SQE -> RTS */
	/* an AH of another PD: LOC_QP_OP_ERR when the WR executes (as rxe), the QP to SQE */
	struct ibv_pd *pd2 = ibv_alloc_pd(ctx);
	struct ibv_ah *other = pd2 ? ud_ah(pd2, 1, &gid4, 0, 0, 64) : NULL;

	CHECK(other != NULL, "AH on a second PD: %s", strerror(errno));
	if (other != NULL) {
		CHECK_EQ(send_ud(qa, other, qb->qp_num, QKEY_B, IBV_WR_SEND, 0, 4, 0, 66), 0);
		CHECK(test_poll(scq, &wc, 1) == 1 && wc.status == IBV_WC_LOC_QP_OP_ERR &&
		      wc.wr_id == 66, "AH of another PD: status %d", wc.status);
		CHECK_EQ(quiet(rcq), 0);
		CHECK(ibv_query_qp(qa, &qa_attr, IBV_QP_STATE, &qi) == 0 &&
		      qa_attr.qp_state == IBV_QPS_SQE, "state: %d", qa_attr.qp_state);
		CHECK_EQ(ud_to_state(qa, IBV_QPS_RTS, 0, 0), 0);
		ibv_destroy_ah(other);
	}
	if (pd2 != NULL)
		CHECK_EQ(ibv_dealloc_pd(pd2), 0);
	ibv_destroy_ah(ah);
}

/* A datagram larger than the receive WQE: LOC_LEN_ERR, the QP to ERR, the rest flushed. */
static void check_short_buffer(void)
{
	struct ibv_qp *qs = ud_qp(QKEY_A, 0, 0), *qr = ud_qp(QKEY_B, 0, 0);
	struct ibv_ah *ah = ah_make(1, &gid4, 0, 0, 64);
	struct ibv_wc wc[2];

	CHECK_EQ(post_recv(qr, 14, 100, 1), 0);
	CHECK_EQ(post_recv(qr, 15, SLOT, 2), 0);
	CHECK_EQ(send_ud(qs, ah, qr->qp_num, QKEY_B, IBV_WR_SEND, 0, 61, 0, 1), 0);
	CHECK_EQ(test_poll(rcq, wc, 2), 2);
	CHECK(wc[0].wr_id == 1 && wc[0].status == IBV_WC_LOC_LEN_ERR, "status %d", wc[0].status);
	CHECK(wc[1].wr_id == 2 && wc[1].status == IBV_WC_WR_FLUSH_ERR, "status %d", wc[1].status);
	check_guard(slot_of(14), 100, SLOT, "short buffer");
	ibv_destroy_ah(ah);
	ibv_destroy_qp(qs);
	ibv_destroy_qp(qr);
}

/* UD TSO: each segment one message, its header as RAW TSO's segment. */
static void check_tso(struct ibv_qp *qa, struct ibv_qp *qb)
{
	struct ibv_ah *ah = ah_make(1, &gid4, 0, 0, 64);
	uint8_t hdr[54] = { 2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00,
			    0x45, 0, 0, 0, 0x10, 0x00, 0x40, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
			    0x12, 0x34, 0x56, 0x78, 0, 0, 0x03, 0xe8, 0, 0, 0, 0, 0x50,
			    0x19 /* FIN PSH ACK */, 0xff, 0xff, 0, 0, 0, 0 };
	struct ibv_sge sge = { (uintptr_t)buf, 250, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 50, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_TSO,
				  .send_flags = IBV_SEND_SIGNALED,
				  .wr.ud = { .ah = ah, .remote_qpn = qb->qp_num,
					     .remote_qkey = QKEY_B } }, *bad;
	struct ibv_wc wc[3];

	wr.tso.hdr = hdr;
	wr.tso.hdr_sz = sizeof(hdr);
	wr.tso.mss = 100;
	pattern(buf, 250, 4);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(post_recv(qb, 16 + i, SLOT, 60 + (uint64_t)i), 0);
	CHECK_EQ(ibv_post_send(qa, &wr, &bad), 0);
	CHECK(test_poll(scq, wc, 1) == 1 && wc[0].status == IBV_WC_SUCCESS &&
	      wc[0].opcode == IBV_WC_TSO, "TSO send completion");
	if (test_poll(rcq, wc, 3) != 3) {
		CHECK(0, "TSO: not three messages");
		return;
	}
	for (uint32_t i = 0; i < 3; i++) {
		const uint8_t *m = slot_of(16 + (int)i) + 40, *ip = m + 14, *tcp = ip + 20;
		uint32_t chunk = i < 2 ? 100 : 50, seq = 1000 + i * 100;
		uint8_t ph[12] = { 10, 0, 0, 1, 10, 0, 0, 2, 0, 6 };

		CHECK_EQ(wc[i].byte_len, 40 + 54 + chunk);
		CHECK(memcmp(m, hdr, 14) == 0, "segment %u: Ethernet header", i);
		CHECK_EQ(be16(ip + 2), 40 + chunk);
		CHECK_EQ(be16(ip + 4), 0x1000 + i);
		CHECK_EQ(sum16(ip, 20, 0), 0xffff);
		CHECK_EQ((uint32_t)be16(tcp + 4) << 16 | be16(tcp + 6), seq);
		CHECK_EQ(tcp[13], i == 2 ? 0x19 : 0x10);
		ph[10] = (uint8_t)((20 + chunk) >> 8);
		ph[11] = (uint8_t)(20 + chunk);
		CHECK_EQ(sum16(tcp, 20 + chunk, sum16(ph, 12, 0)), 0xffff);
		CHECK(memcmp(tcp + 20, buf + i * 100, chunk) == 0, "segment %u: payload", i);
	}
	/* a segment message above the MTU is not sent; the others are */
	wr.tso.mss = (uint16_t)(mtu - 54 + 1);
	sge.length = wr.tso.mss + 10;
	CHECK_EQ(post_recv(qb, 16, SLOT, 63), 0);
	CHECK_EQ(ibv_post_send(qa, &wr, &bad), 0);
	CHECK(test_poll(scq, wc, 1) == 1 && wc[0].status == IBV_WC_SUCCESS, "TSO completion");
	CHECK(test_poll(rcq, wc, 1) == 1 && wc[0].byte_len == 40 + 54 + 10,
	      "TSO above the MTU: the last segment (len %u)", wc[0].byte_len);
	CHECK_EQ(quiet(rcq), 0);
	ibv_destroy_ah(ah);
}

/* The ibv_wr_* API on a UD QP: ibv_wr_send_imm + ibv_wr_set_ud_addr make the same datagram. */
static void check_qp_ex(struct ibv_qp *qb)
{
	struct ibv_qp_init_attr_ex ex = {
		.send_cq = scq, .recv_cq = rcq, .qp_type = IBV_QPT_UD, .pd = pd,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM,
	};
	struct ibv_qp *q = ibv_create_qp_ex(ctx, &ex);
	struct ibv_qp_ex *x = q != NULL ? ibv_qp_to_qp_ex(q) : NULL;
	struct ibv_ah *ah = ah_make(1, &gid4, 0, 0, 64);
	struct ibv_wc wc;

	CHECK(x != NULL, "a UD ibv_qp_ex: %s", strerror(errno));
	if (x == NULL)
		return;
	ex.send_ops_flags |= IBV_QP_EX_WITH_RDMA_WRITE;
	errno = 0;
	CHECK(ibv_create_qp_ex(ctx, &ex) == NULL && errno == EOPNOTSUPP, "RDMA WRITE on UD");
	CHECK(ud_to_init(q, QKEY_A) == 0 && ud_to_state(q, IBV_QPS_RTR, 0, 0) == 0 &&
	      ud_to_state(q, IBV_QPS_RTS, IBV_QP_SQ_PSN, 0) == 0, "qp_ex to RTS");
	CHECK_EQ(post_recv(qb, 19, SLOT, 90), 0);
	pattern(buf, 30, 6);
	ibv_wr_start(x);
	x->wr_id = 91;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_imm(x, htonl(1234));
	ibv_wr_set_ud_addr(x, ah, qb->qp_num, QKEY_B);
	ibv_wr_set_sge(x, mr->lkey, (uintptr_t)buf, 30);
	CHECK_EQ(ibv_wr_complete(x), 0);
	CHECK(test_poll(scq, &wc, 1) == 1 && wc.wr_id == 91 && wc.status == IBV_WC_SUCCESS,
	      "qp_ex send completion");
	CHECK(test_poll(rcq, &wc, 1) == 1 && wc.wr_id == 90 && wc.byte_len == 70 &&
	      ntohl(wc.imm_data) == 1234 && wc.src_qp == q->qp_num &&
	      memcmp(slot_of(19) + 40, buf, 30) == 0, "qp_ex datagram");
	ibv_destroy_ah(ah);
	ibv_destroy_qp(q);
}

/* Two threads, each with its own QP and CQs, send 4096 numbered datagrams to the other's QP
 * through the loopback while a third creates, attaches, detaches and destroys UD QPs: every
 * datagram arrives, once, in order, and nothing deadlocks. */
#define T_MSGS 4096

struct peer {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;                   /* T_MSGS receive slots of 64 bytes, then the send data */
	uint32_t to_qpn;
	struct ibv_ah *ah;
	int got, in_order, sent_ok;
};

static pthread_barrier_t t_start;
static int t_running;          /* __atomic: the threads' stop sign */

static void *peer_run(void *arg)
{
	struct peer *p = arg;
	struct ibv_wc wc[32];
	int sent = 0, done = 0;

	pthread_barrier_wait(&t_start);
	while ((p->got < T_MSGS || done < sent || sent < T_MSGS) &&
	       __atomic_load_n(&t_running, __ATOMIC_ACQUIRE)) {
		struct ibv_send_wr wr[16], *bad;
		struct ibv_sge sge[16];
		int k = 0;

		for (; k < 16 && sent + k < T_MSGS && sent + k - done < 48; k++) {
			uint8_t *d = p->buf + T_MSGS * 64 + (size_t)((sent + k) % 64) * 16;

			memcpy(d, &(uint32_t){ (uint32_t)(sent + k) }, 4);
			sge[k] = (struct ibv_sge){ (uintptr_t)d, 4, p->mr->lkey };
			wr[k] = (struct ibv_send_wr){ .wr_id = (uint64_t)(sent + k), .sg_list = &sge[k],
						      .num_sge = 1, .opcode = IBV_WR_SEND,
						      .send_flags = IBV_SEND_SIGNALED,
						      .wr.ud = { .ah = p->ah, .remote_qpn = p->to_qpn,
								 .remote_qkey = QKEY_A },
						      .next = NULL };
			if (k > 0)
				wr[k - 1].next = &wr[k];
		}
		if (k > 0 && ibv_post_send(p->qp, wr, &bad) == 0)
			sent += k;
		int n = ibv_poll_cq(p->cq, 32, wc);

		for (int i = 0; i < n; i++) {
			if (wc[i].opcode == IBV_WC_SEND) {
				__atomic_fetch_add(&p->sent_ok, wc[i].status == IBV_WC_SUCCESS,
						   __ATOMIC_RELEASE);
				done++;
				continue;
			}
			uint32_t seq;

			memcpy(&seq, p->buf + wc[i].wr_id * 64 + 40, 4);
			p->in_order += wc[i].status == IBV_WC_SUCCESS && seq == (uint32_t)p->got &&
				       wc[i].wr_id == (uint64_t)p->got;
			__atomic_fetch_add(&p->got, 1, __ATOMIC_RELEASE);
		}
	}
	return NULL;
}

static void *churn_run(void *arg)
{
	union ibv_gid grp;
	int *rounds = arg;

	gid_v4(&grp, "239.9.9.9");
	pthread_barrier_wait(&t_start);
	while (__atomic_load_n(&t_running, __ATOMIC_ACQUIRE)) {
		struct ibv_qp *q = ud_qp(QKEY_B, 0, 0);

		ibv_attach_mcast(q, &grp, 0);
		if (*rounds % 2)
			ibv_detach_mcast(q, &grp, 0);
		ibv_destroy_qp(q);
		__atomic_fetch_add(rounds, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void check_threads(void)
{
	struct peer p[2];
	pthread_t th[3];
	int rounds = 0;

	pthread_barrier_init(&t_start, NULL, 3);
	for (int i = 0; i < 2; i++) {
		struct ibv_qp_init_attr a = { .qp_type = IBV_QPT_UD,
					      .cap = { .max_send_wr = 64, .max_recv_wr = T_MSGS,
						       .max_send_sge = 1, .max_recv_sge = 1 } };

		memset(&p[i], 0, sizeof(p[i]));
		p[i].cq = ibv_create_cq(ctx, 2 * T_MSGS + 64, NULL, NULL, 0);
		a.send_cq = a.recv_cq = p[i].cq;
		p[i].qp = ibv_create_qp(pd, &a);
		p[i].buf = aligned_alloc(4096, T_MSGS * 64 + 4096);
		p[i].mr = p[i].buf ? ibv_reg_mr(pd, p[i].buf, T_MSGS * 64 + 4096,
						IBV_ACCESS_LOCAL_WRITE) : NULL;
		p[i].ah = ah_make(1, &gid4, 0, 0, 64);
		if (p[i].cq == NULL || p[i].qp == NULL || p[i].mr == NULL || p[i].ah == NULL ||
		    ud_to_init(p[i].qp, QKEY_A) || ud_to_state(p[i].qp, IBV_QPS_RTR, 0, 0) ||
		    ud_to_state(p[i].qp, IBV_QPS_RTS, IBV_QP_SQ_PSN, 0)) {
			CHECK(0, "thread setup: %s", strerror(errno));
			return;
		}
		for (int k = 0; k < T_MSGS; k++) {
			struct ibv_sge sge = { (uintptr_t)p[i].buf + (size_t)k * 64, 64, p[i].mr->lkey };
			struct ibv_recv_wr wr = { .wr_id = (uint64_t)k, .sg_list = &sge,
						  .num_sge = 1 }, *bad;

			CHECK_EQ(ibv_post_recv(p[i].qp, &wr, &bad), 0);
		}
	}
	p[0].to_qpn = p[1].qp->qp_num;
	p[1].to_qpn = p[0].qp->qp_num;
	__atomic_store_n(&t_running, 1, __ATOMIC_RELEASE);
	pthread_create(&th[0], NULL, peer_run, &p[0]);
	pthread_create(&th[1], NULL, peer_run, &p[1]);
	pthread_create(&th[2], NULL, churn_run, &rounds);
	for (double end = test_now() + 60; test_now() < end &&
	     (__atomic_load_n(&p[0].got, __ATOMIC_ACQUIRE) < T_MSGS ||
	      __atomic_load_n(&p[1].got, __ATOMIC_ACQUIRE) < T_MSGS ||
	      __atomic_load_n(&p[0].sent_ok, __ATOMIC_ACQUIRE) < T_MSGS ||
	      __atomic_load_n(&p[1].sent_ok, __ATOMIC_ACQUIRE) < T_MSGS);)
		usleep(10000);
	__atomic_store_n(&t_running, 0, __ATOMIC_RELEASE);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 2; i++) {
		CHECK(p[i].got == T_MSGS && p[i].in_order == T_MSGS && p[i].sent_ok == T_MSGS,
		      "thread %d: %d received, %d in order, %d sent", i, p[i].got, p[i].in_order,
		      p[i].sent_ok);
		ibv_destroy_ah(p[i].ah);
		ibv_destroy_qp(p[i].qp);
		ibv_dereg_mr(p[i].mr);
		ibv_destroy_cq(p[i].cq);
		free(p[i].buf);
	}
	CHECK(rounds > 0, "the churning thread ran");
	pthread_barrier_destroy(&t_start);
}

/* Receive faults act on looped-back datagrams too (doc/faults.md): every frame corrupted —
 * the ICRC catches each one, nothing is delivered; every frame duplicated — UD delivers
 * both copies. */
static void check_faults(struct ibv_qp *qa, struct ibv_qp *qb)
{
	struct ibv_ah *ah = ah_make(1, &gid4, 0, 0, 64);
	struct dpv_faults corrupt = { .corrupt_ppm = 1000000, .seed = 3 };
	struct dpv_faults dup = { .dup_ppm = 1000000, .seed = 4 }, off = { 0 };
	struct dpv_port_stats s0 = stats(), s1;
	struct ibv_wc wc[16];
	int got;

	for (int i = 0; i < 16; i++)
		CHECK_EQ(post_recv(qb, 20 + i, SLOT, 700 + (uint64_t)i), 0);
	CHECK_EQ(dpv_set_port_faults(ctx, DPV_FAULT_RX, &corrupt), 0);
	for (int i = 0; i < 8; i++)   /* 200 bytes: the second half of the frame is all ICRC'd */
		CHECK_EQ(send_ud(qa, ah, qb->qp_num, QKEY_B, IBV_WR_SEND, 0, 200, 0, 800), 0);
	CHECK_EQ(quiet(rcq), 0);
	s1 = stats();
	CHECK_EQ(s1.rx_roce_bad_icrc - s0.rx_roce_bad_icrc, 8);
	CHECK_EQ(dpv_set_port_faults(ctx, DPV_FAULT_RX, &dup), 0);
	for (int i = 0; i < 8; i++)
		CHECK_EQ(send_ud(qa, ah, qb->qp_num, QKEY_B, IBV_WR_SEND, 0, 100, 0, 801), 0);
	got = test_poll_for(rcq, wc, 16, 1.0);
	CHECK_EQ(got, 16);
	for (int i = 0; i < got; i++)
		CHECK(wc[i].status == IBV_WC_SUCCESS && wc[i].byte_len == 140, "duplicate %d", i);
	CHECK_EQ(dpv_set_port_faults(ctx, DPV_FAULT_RX, &off), 0);
	CHECK_EQ(quiet(rcq), 0);
	ibv_destroy_ah(ah);
}

/* Post-time checks of the UD column, and multicast attach errors. */
static void check_post_errors(struct ibv_qp *qa)
{
	struct ibv_ah *ah = ah_make(1, &gid4, 0, 0, 64);
	union ibv_gid grp, uni = gid4;
	struct ibv_wc wc;

	CHECK_EQ(send_ud(qa, NULL, 1, 1, IBV_WR_SEND, 0, 1, 0, 0), EINVAL);       /* no AH */
	CHECK_EQ(send_ud(qa, ah, 1, 1, IBV_WR_RDMA_WRITE, 0, 1, 0, 0), EINVAL);
	CHECK_EQ(send_ud(qa, ah, 1, 1, IBV_WR_SEND, 0, 1, IBV_SEND_IP_CSUM, 0), EINVAL);
	CHECK_EQ(send_ud(qa, ah, 1, 1, IBV_WR_SEND, 0, 1, IBV_SEND_FENCE, 0), EINVAL);
	CHECK_EQ(send_ud(qa, ah, 1, 1, IBV_WR_SEND, 0, 300, IBV_SEND_INLINE, 0), EINVAL);
	CHECK_EQ(quiet(scq), 0);
	gid_v4(&grp, "239.1.2.3");
	CHECK_EQ(ibv_attach_mcast(qa, &uni, 0), EINVAL);       /* not a group */
	CHECK_EQ(ibv_detach_mcast(qa, &grp, 0), EINVAL);       /* not attached */
	CHECK_EQ(ibv_attach_mcast(qa, &grp, 0), 0);
	CHECK_EQ(ibv_attach_mcast(qa, &grp, 0), 0);            /* once is enough */
	CHECK_EQ(ibv_detach_mcast(qa, &grp, 0), 0);
	CHECK_EQ(ibv_detach_mcast(qa, &grp, 0), EINVAL);
	inet_pton(AF_INET6, "ff0e::1:2", grp.raw);
	CHECK_EQ(ibv_attach_mcast(qa, &grp, 0), 0);            /* left for ibv_destroy_qp */
	(void)wc;
	ibv_destroy_ah(ah);
}

int main(void)
{
	struct ibv_qp *qa, *qb;

	ctx = test_open(NULL);
	if (dpv_port_add_addr(ctx, "10.1.0.1") != 0 || dpv_port_add_addr(ctx, "fd00::1") != 0) {
		fprintf(stderr, "dpv_port_add_addr failed\n");
		return 1;
	}
	gid_v4(&gid4, "10.1.0.1");
	gid_v6(&gid6, "fd00::1");
	pd = ibv_alloc_pd(ctx);
	scq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	rcq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	buf = aligned_alloc(4096, 1 << 20);
	mr = ibv_reg_mr(pd, buf, 1 << 20, IBV_ACCESS_LOCAL_WRITE);
	if (pd == NULL || scq == NULL || rcq == NULL || mr == NULL) {
		fprintf(stderr, "setup: %s\n", strerror(errno));
		return 1;
	}
	check_device();
	check_states();
	check_ah_errors();
	qa = ud_qp(QKEY_A, 0xfffff0, 0);
	qb = ud_qp(QKEY_B, 7, 0);
	CHECK(qa->qp_num > 1 && qb->qp_num > 1 && qa->qp_num != qb->qp_num, "QPNs %u %u",
	      qa->qp_num, qb->qp_num);
	check_exchange(qa, qb);
	check_drops(qa, qb);
	check_sniffer(qa, qb);
	check_ah_from_wc(qa, qb);
	check_signaling(qa, qb);
	check_solicited(qa);
	check_sg(qa, qb);
	check_short_buffer();
	check_tso(qa, qb);
	check_qp_ex(qb);
	check_threads();
	check_faults(qa, qb);
	check_post_errors(qa);
	CHECK_EQ(ibv_destroy_qp(qa), 0);
	CHECK_EQ(ibv_destroy_qp(qb), 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK_EQ(ibv_destroy_cq(scq), 0);
	CHECK_EQ(ibv_destroy_cq(rcq), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
	free(buf);
	return test_done("ud");
}

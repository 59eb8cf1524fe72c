/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer harness: XRC requests from the wire into an XRC_RECV QP and the XRC SRQs it may
 * take receive WQEs from. Frames go out of a RAW_PACKET QP on a net_ring port (its transmit
 * ring is its receive ring) and take the path of every received frame: the RoCE demux, the
 * codec's parser, the QPN table, the XRCETH's SRQ lookup and domain check, the RC responder,
 * the SRQ take and the scatter. The input is a good XRC request (an XRC opcode of RC's
 * requests, the expected PSN or near it, an XRCETH naming the QP's domain's SRQ, another
 * domain's SRQ or any number, a RETH/AtomicETH with the MR's rkey or another) with byte
 * mutations, its ICRC made right again or not, or raw bytes. Each input gets a fresh QP (RESET
 * to RTS) and fresh SRQs: SRQ A in the QP's domain with two WQEs of one to three SGEs of fuzzed
 * lengths, SRQ B of another domain with one. What must hold:
 * - nothing ever completes from SRQ B, and no byte of its WQE changes (another domain's SRQ is
 *   never written, whatever the XRCETH says);
 * - every completion on A's CQ is one of A's WQEs, in post order, with qp_num the XRC_RECV
 *   QP's; a successful one's byte_len fits its WQE;
 * - no byte of the buffer outside A's WQEs' scatter windows changes (the MR grants no remote
 *   access: WRITE, READ and atomics write nothing);
 * - the SRQs can be destroyed afterwards (the QP let go of them at RESET);
 * - with the codec's own parse of the frame as the oracle (as fuzz_ud_recv): a frame the
 *   parser accepts, from and to the QP's path (the port's GID both ways), to the QP's number,
 *   an XRC SEND_ONLY or SEND_ONLY_WITH_IMM at the expected PSN with at most an MTU of payload,
 *   naming SRQ A, is delivered: A's first WQE completes, successfully, opcode RECV, byte_len
 *   the payload's, WITH_IMM and imm_data as the frame has them, and the buffer is the guard
 *   but for exactly the payload scattered over that WQE's windows; if it does not fit the
 *   WQE, the WQE completes with IBV_WC_LOC_LEN_ERR and nothing is written. Nothing else
 *   completes then.
 * A marker datagram to a UD QP, sent after each frame, says the frame went through. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "fuzz_input.h"
#include "fuzz_roce_fixture.h"
#include "roce_wire.h"

#define GUARD 0xA5
#define AREA (4 * 2048)               /* A's two WQEs (three windows each), B's WQE */
#define WIN 640                       /* the most an SGE window takes */
#define MAX_FRAME 1514
#define MAX_PAYLOAD 1100
#define PSN0 0x777

static struct ibv_cq *acq, *bcq;
static struct ibv_qp *tgt;
static struct ibv_xrcd *xa, *xb;
static struct ibv_mr *mr;
static uint8_t *area;

static void modify(struct ibv_qp *q, struct ibv_qp_attr *a, int mask)
{
	if (ibv_modify_qp(q, a, mask) != 0)
		fx_die("modify_qp");
}

/* The XRC_RECV QP from RESET to RTS, its peer QP 0x12345 on the port's own GID. */
static void tgt_up(void)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	modify(tgt, &a, IBV_QP_STATE);
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT, .port_num = 1,
				  .qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
						     IBV_ACCESS_REMOTE_READ |
						     IBV_ACCESS_REMOTE_ATOMIC };
	modify(tgt, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
				  .dest_qp_num = 0x12345, .rq_psn = PSN0, .max_dest_rd_atomic = 1,
				  .min_rnr_timer = 1,
				  .ah_attr = { .is_global = 1, .port_num = 1,
					       .grh = { .sgid_index = 1, .hop_limit = 64 } } };
	memcpy(a.ah_attr.grh.dgid.raw, fx.gid[1], 16);
	modify(tgt, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
	       IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .timeout = 0, .sq_psn = 1 };
	modify(tgt, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_SQ_PSN);
}

static struct ibv_srq *xrc_srq(struct ibv_xrcd *x, struct ibv_cq *c)
{
	struct ibv_srq_init_attr_ex a = {
		.attr = { .max_wr = 4, .max_sge = 3 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD |
			     IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_PD,
		.srq_type = IBV_SRQT_XRC, .xrcd = x, .cq = c, .pd = fx.pd,
	};
	struct ibv_srq *s = ibv_create_srq_ex(fx.ctx, &a);

	if (s == NULL)
		fx_die("create_srq_ex");
	return s;
}

/* At exit, before the fixture's: the XRC_RECV QP, its domains and buffer. */
static void cleanup(void)
{
	if (tgt != NULL && ibv_destroy_qp(tgt) != 0)
		fprintf(stderr, "fuzz_xrc_recv: ibv_destroy_qp: %s\n", strerror(errno));
	ibv_close_xrcd(xa);
	ibv_close_xrcd(xb);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(acq);
	ibv_destroy_cq(bcq);
	free(area);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const addrs[] = { "10.4.0.1" };                 /* GID 1 */
	struct ibv_xrcd_init_attr xa_attr = { .comp_mask = IBV_XRCD_INIT_ATTR_FD |
							  IBV_XRCD_INIT_ATTR_OFLAGS,
					      .fd = -1, .oflags = 0 };

	fx_open("fuzz_xrc_recv", addrs, 1);
	acq = ibv_create_cq(fx.ctx, 64, NULL, NULL, 0);
	bcq = ibv_create_cq(fx.ctx, 64, NULL, NULL, 0);
	area = aligned_alloc(4096, AREA);
	CHECK(acq != NULL && bcq != NULL && area != NULL);
	mr = ibv_reg_mr(fx.pd, area, AREA, IBV_ACCESS_LOCAL_WRITE);
	xa = ibv_open_xrcd(fx.ctx, &xa_attr);
	xb = ibv_open_xrcd(fx.ctx, &xa_attr);
	CHECK(mr != NULL && xa != NULL && xb != NULL);
	tgt = ibv_create_qp_ex(fx.ctx, &(struct ibv_qp_init_attr_ex){
		.qp_type = IBV_QPT_XRC_RECV, .comp_mask = IBV_QP_INIT_ATTR_XRCD, .xrcd = xa });
	CHECK(tgt != NULL);
	atexit(cleanup);                          /* runs before the fixture's */
	return 0;
}

/* RC's request opcodes (the XRC ones are these | 0xA0). */
static const uint8_t req_ops[] = {
	DPV_ROCE_SEND_FIRST, DPV_ROCE_SEND_MIDDLE, DPV_ROCE_SEND_LAST, DPV_ROCE_SEND_LAST_IMM,
	DPV_ROCE_SEND_ONLY, DPV_ROCE_SEND_ONLY_IMM, DPV_ROCE_WRITE_FIRST, DPV_ROCE_WRITE_LAST,
	DPV_ROCE_WRITE_ONLY, DPV_ROCE_WRITE_ONLY_IMM, DPV_ROCE_READ_REQUEST, DPV_ROCE_CMP_SWAP,
	DPV_ROCE_FETCH_ADD,
};

/* A good XRC request to the QP, built by the codec. */
static size_t template(uint8_t *f, struct fuzz_input *in, uint8_t ctl, uint32_t srqn_a,
		       uint32_t srqn_b)
{
	struct dpv_roce_path p = { .hop_limit = 64, .sport = 0xC321 };
	struct dpv_roce_hdrs h = { .bth = { .pkey = 0xFFFF, .dqpn = tgt->qp_num } };
	uint8_t payload[MAX_PAYLOAD], sel = fuzz_u8(in);
	uint32_t len;
	int n;

	h.bth.opcode = DPV_ROCE_XRC | req_ops[fuzz_u8(in) % sizeof(req_ops)];
	h.bth.psn = (PSN0 + (ctl & 0x40 ? fuzz_u8(in) % 3 : 0)) & 0xFFFFFF;
	h.bth.ackreq = ctl & 0x10;
	h.xrceth.srqn = sel % 4 == 0 ? srqn_b : sel % 4 == 1 ? fuzz_u32(in) & 0xFFFFFF : srqn_a;
	h.imm = fuzz_u32(in);
	h.reth.va = (uintptr_t)area + fuzz_u16(in);
	h.reth.rkey = ctl & 0x80 ? fuzz_u32(in) : mr->rkey;
	h.reth.len = fuzz_u16(in);
	h.atomic.va = h.reth.va & ~7ull;
	h.atomic.rkey = h.reth.rkey;
	len = fuzz_u16(in) % MAX_PAYLOAD;
	if (!(dpv__roce_opinfo(h.bth.opcode)->flags & DPV_ROCE_F_PAYLOAD))
		len = 0;
	memset(payload, 0x5A, len);
	fuzz_bytes(in, payload, len);
	memcpy(p.dmac, fx.mac, 6);
	memcpy(p.smac, fx.mac, 6);
	memcpy(p.dgid, fx.gid[1], 16);
	memcpy(p.sgid, fx.gid[1], 16);
	n = dpv__roce_frame_build(f, MAX_FRAME + 64, &p, &h, payload, len);
	return n > 0 ? (size_t)n : 0;
}

/* A datagram to the marker QP after the frame: once it is there, so is the frame (unless the
 * frame itself was one for the marker: then both completions are taken). */
static void sync_marker(void)
{
	struct ibv_wc wc;

	fx_send_marker();
	do
		fx_poll_one(fx.mcq, &wc);
	while (wc.byte_len != FX_MARKER_LEN);
}

static void post(struct ibv_srq *s, uint64_t wr_id, struct ibv_sge *sge, int nsge)
{
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = sge, .num_sge = nsge }, *bad;

	CHECK(ibv_post_srq_recv(s, &wr, &bad) == 0);
}

/* Would the XRC_RECV QP take this frame as a whole SEND into SRQ @srqn's WQE? Then *@fr is
 * what it takes. */
static bool deliverable(const uint8_t *f, size_t len, struct dpv_roce_frame *fr, uint32_t srqn)
{
	uint8_t op;

	if (dpv__roce_frame_parse(f, len, fr) != 0)
		return false;
	op = fr->h.bth.opcode;
	return memcmp(fr->dgid, fx.gid[1], 16) == 0 && memcmp(fr->sgid, fx.gid[1], 16) == 0 &&
	       fr->h.bth.dqpn == tgt->qp_num && fr->h.bth.psn == PSN0 &&
	       (op == (DPV_ROCE_XRC | DPV_ROCE_SEND_ONLY) ||
		op == (DPV_ROCE_XRC | DPV_ROCE_SEND_ONLY_IMM)) &&
	       fr->h.xrceth.srqn == srqn && fr->payload_len <= 1024;
}

/* The buffer after the frame: @want (@n bytes, NULL: none) scattered over @sge, guard bytes
 * everywhere else. */
static void check_area(const struct ibv_sge *sge, int nsge, const uint8_t *want, uint32_t n)
{
	CHECK(fx_scatter_ok(area, AREA, GUARD, sge, nsge, want, n));
}

static bool in_windows(size_t off, const struct ibv_sge *sge, int n)
{
	for (int i = 0; i < n; i++)
		if ((uintptr_t)area + off >= sge[i].addr &&
		    (uintptr_t)area + off < sge[i].addr + sge[i].length)
			return true;
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in = { data, size };
	uint8_t ctl = fuzz_u8(&in), nsge = 1 + fuzz_u8(&in) % 3, f[MAX_FRAME + 64];
	struct ibv_sge sge[7];
	struct ibv_srq *a, *b;
	uint32_t na, nb, room[2] = { 0, 0 };
	struct ibv_wc wc[4];
	struct dpv_roce_frame fr;
	size_t len;
	bool deliver = false;
	int got;

	for (int w = 0; w < 2; w++)
		for (int i = 0; i < 3; i++) {
			sge[w * 3 + i] = (struct ibv_sge){
				(uintptr_t)area + (uint32_t)(w * 3 + i) * 1024 + 9,
				fuzz_u16(&in) % WIN, mr->lkey };
			room[w] += i < nsge ? sge[w * 3 + i].length : 0;
		}
	sge[6] = (struct ibv_sge){ (uintptr_t)area + 6 * 1024 + 9, WIN, mr->lkey };
	memset(area, GUARD, AREA);
	tgt_up();
	a = xrc_srq(xa, acq);
	b = xrc_srq(xb, bcq);
	CHECK(ibv_get_srq_num(a, &na) == 0 && ibv_get_srq_num(b, &nb) == 0);
	post(a, 100, &sge[0], nsge);
	post(a, 101, &sge[3], nsge);
	post(b, 200, &sge[6], 1);
	if (ctl & 1)
		len = fuzz_flip(&in, f, template(f, &in, ctl, na, nb));
	else
		len = fuzz_bytes(&in, f, MAX_FRAME);
	if (ctl & 0x20)
		fx_fix_icrc(f, len);
	if (len >= 14) {
		deliver = deliverable(f, len, &fr, na);
		fx_raw_send(f, len);
		sync_marker();
	}
	/* nothing from B, ever; A's in order, the QP's, fitting */
	CHECK(ibv_poll_cq(bcq, 1, wc) == 0);
	got = ibv_poll_cq(acq, 4, wc);
	CHECK(got >= 0 && got <= 2);
	for (int i = 0; i < got; i++) {
		CHECK(wc[i].wr_id == (uint64_t)(100 + i) && wc[i].qp_num == tgt->qp_num);
		CHECK(wc[i].status != IBV_WC_SUCCESS || wc[i].byte_len <= room[i]);
	}
	for (size_t off = 0; off < AREA; off++)
		CHECK(area[off] == GUARD || in_windows(off, sge, 6));
	if (deliver) {
		CHECK(got == 1);
		if (fr.payload_len > room[0]) {
			CHECK(wc[0].status == IBV_WC_LOC_LEN_ERR);
			check_area(sge, nsge, NULL, 0);
		} else {
			CHECK(wc[0].status == IBV_WC_SUCCESS && wc[0].opcode == IBV_WC_RECV &&
			      wc[0].byte_len == fr.payload_len);
			bool imm = fr.h.bth.opcode == (DPV_ROCE_XRC | DPV_ROCE_SEND_ONLY_IMM);

			CHECK(wc[0].wc_flags == (imm ? IBV_WC_WITH_IMM : 0));
			CHECK(!imm || wc[0].imm_data == fr.h.imm);
			check_area(sge, nsge, f + fr.payload_off, fr.payload_len);
		}
	}
	/* RESET lets go of the SRQs: they can go */
	modify(tgt, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_RESET }, IBV_QP_STATE);
	while (ibv_poll_cq(acq, 4, wc) > 0)
		;
	CHECK(ibv_destroy_srq(a) == 0 && ibv_destroy_srq(b) == 0);
	return 0;
}

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
 * - the SRQs can be destroyed afterwards (the QP let go of them at RESET).
 * A marker datagram to a UD QP, sent after each frame, says the frame went through. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <dpverbs.h>

#include "fuzz_input.h"
#include "roce_wire.h"

#define GUARD 0xA5
#define MARKER_QKEY 0x3A3A3A3Au
#define AREA (4 * 2048)               /* A's two WQEs (three windows each), B's WQE */
#define WIN 640                       /* the most an SGE window takes */
#define MAX_FRAME 1514
#define MAX_PAYLOAD 1100
#define PSN0 0x777

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *acq, *bcq, *mcq, *rcq;
static struct ibv_qp *tgt, *marker, *raw;
static struct ibv_xrcd *xa, *xb;
static struct ibv_mr *mr, *smr;
static uint8_t *area, *sbuf;
static uint8_t mac[6], gid1[16];

static void die(const char *what)
{
	fprintf(stderr, "fuzz_xrc_recv: %s does not hold\n", what);
	abort();
}

#define CHECK(cond) do { if (!(cond)) die(#cond); } while (0)

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void modify(struct ibv_qp *q, struct ibv_qp_attr *a, int mask)
{
	if (ibv_modify_qp(q, a, mask) != 0)
		die("modify_qp");
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
	memcpy(a.ah_attr.grh.dgid.raw, gid1, 16);
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
		.srq_type = IBV_SRQT_XRC, .xrcd = x, .cq = c, .pd = pd,
	};
	struct ibv_srq *s = ibv_create_srq_ex(ctx, &a);

	if (s == NULL)
		die("create_srq_ex");
	return s;
}

static void cleanup(void)
{
	struct ibv_qp *q[3] = { tgt, marker, raw };

	for (int i = 0; i < 3; i++)
		if (q[i] != NULL && ibv_destroy_qp(q[i]) != 0)
			fprintf(stderr, "fuzz_xrc_recv: ibv_destroy_qp: %s\n", strerror(errno));
	ibv_close_xrcd(xa);
	ibv_close_xrcd(xb);
	ibv_dereg_mr(mr);
	ibv_dereg_mr(smr);
	ibv_destroy_cq(acq);
	ibv_destroy_cq(bcq);
	ibv_destroy_cq(mcq);
	ibv_destroy_cq(rcq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	free(area);
	free(sbuf);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct ibv_xrcd_init_attr xa_attr = { .comp_mask = IBV_XRCD_INIT_ATTR_FD |
							  IBV_XRCD_INIT_ATTR_OFLAGS,
					      .fd = -1, .oflags = 0 };
	struct ibv_device **list;
	union ibv_gid g;
	int n = 0;

	setenv("DPV_EAL_ARGS", "--vdev=net_ring0 --log-level=lib.eal:error "
	       "--log-level=lib.telemetry:error", 1);
	list = ibv_get_device_list(&n);
	if (list == NULL || n < 1 || (ctx = ibv_open_device(list[0])) == NULL)
		die("a net_ring device");
	ibv_free_device_list(list);
	if (dpv_port_add_addr(ctx, "10.4.0.1") != 0)
		die("dpv_port_add_addr");
	CHECK(ibv_query_gid(ctx, 1, 1, &g) == 0);
	memcpy(gid1, g.raw, 16);
	CHECK(ibv_query_gid(ctx, 1, 0, &g) == 0);
	CHECK(dpv__roce_gid_to_mac(g.raw, mac) == 0);
	pd = ibv_alloc_pd(ctx);
	acq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	bcq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	mcq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	rcq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	area = aligned_alloc(4096, AREA + 4096);      /* AREA, then the marker's buffer */
	sbuf = aligned_alloc(4096, 4 * 4096);
	CHECK(pd != NULL && acq != NULL && bcq != NULL && mcq != NULL && rcq != NULL && area &&
	      sbuf);
	mr = ibv_reg_mr(pd, area, AREA + 4096, IBV_ACCESS_LOCAL_WRITE);
	smr = ibv_reg_mr(pd, sbuf, 4 * 4096, IBV_ACCESS_LOCAL_WRITE);
	xa = ibv_open_xrcd(ctx, &xa_attr);
	xb = ibv_open_xrcd(ctx, &xa_attr);
	CHECK(mr != NULL && smr != NULL && xa != NULL && xb != NULL);
	tgt = ibv_create_qp_ex(ctx, &(struct ibv_qp_init_attr_ex){
		.qp_type = IBV_QPT_XRC_RECV, .comp_mask = IBV_QP_INIT_ATTR_XRCD, .xrcd = xa });
	marker = ibv_create_qp(pd, &(struct ibv_qp_init_attr){
		.send_cq = mcq, .recv_cq = mcq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 1, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1 } });
	raw = ibv_create_qp(pd, &(struct ibv_qp_init_attr){
		.send_cq = rcq, .recv_cq = rcq, .qp_type = IBV_QPT_RAW_PACKET, .sq_sig_all = 1,
		.cap = { .max_send_wr = 64, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 } });
	CHECK(tgt != NULL && marker != NULL && raw != NULL);
	modify(marker, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT, .port_num = 1,
					      .qkey = MARKER_QKEY },
	       IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
	modify(marker, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR }, IBV_QP_STATE);
	modify(raw, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT, .port_num = 1 },
	       IBV_QP_STATE | IBV_QP_PORT);
	modify(raw, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR }, IBV_QP_STATE);
	modify(raw, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS }, IBV_QP_STATE);
	atexit(cleanup);
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
	memcpy(p.dmac, mac, 6);
	memcpy(p.smac, mac, 6);
	memcpy(p.dgid, gid1, 16);
	memcpy(p.sgid, gid1, 16);
	n = dpv__roce_frame_build(f, MAX_FRAME + 64, &p, &h, payload, len);
	return n > 0 ? (size_t)n : 0;
}

static void fix_icrc(uint8_t *f, size_t len)
{
	struct dpv_roce_frame fr;

	if (dpv__roce_frame_parse(f, len, &fr) == -EILSEQ) {
		size_t at = (size_t)fr.payload_off + fr.payload_len + fr.h.bth.pad;
		uint32_t icrc = dpv__roce_icrc(f + fr.l2_len, fr.ipv6, at - fr.l2_len);

		for (int i = 0; i < 4; i++, icrc >>= 8)
			f[at + i] = (uint8_t)icrc;
	}
}

static void raw_send(const uint8_t *f, size_t len)
{
	struct ibv_sge sge = { (uintptr_t)sbuf, (uint32_t)len, smr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND }, *bad;
	struct ibv_wc wc;

	memcpy(sbuf, f, len);
	CHECK(ibv_post_send(raw, &wr, &bad) == 0);
	for (double end = now() + 5; ibv_poll_cq(rcq, 1, &wc) == 0;)
		CHECK(now() < end);
	CHECK(wc.status == IBV_WC_SUCCESS);
}

/* A datagram to the marker QP after the frame: once it is there, so is the frame (unless the
 * frame itself was one for the marker: then both completions are taken). */
static void sync_marker(void)
{
	struct ibv_sge sge = { (uintptr_t)area + AREA, 2048, mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *rbad;
	struct dpv_roce_path p = { .hop_limit = 64, .sport = 0xC123 };
	struct dpv_roce_hdrs h = { .bth = { .opcode = 0x64, .pkey = 0xFFFF,
					    .dqpn = marker->qp_num },
				   .deth = { .qkey = MARKER_QKEY, .sqpn = 1 } };
	uint8_t f[128];
	struct ibv_wc wc;
	int n;

	memcpy(p.dmac, mac, 6);
	memcpy(p.smac, mac, 6);
	memcpy(p.sgid, gid1, 16);
	memcpy(p.dgid, gid1, 16);
	n = dpv__roce_frame_build(f, sizeof(f), &p, &h, "mark", 4);
	CHECK(n > 0 && ibv_post_recv(marker, &rwr, &rbad) == 0);
	raw_send(f, (size_t)n);
	for (double end = now() + 5;;) {
		CHECK(now() < end);
		if (ibv_poll_cq(mcq, 1, &wc) == 1 && wc.byte_len == 44)
			break;
	}
}

static void post(struct ibv_srq *s, uint64_t wr_id, struct ibv_sge *sge, int nsge)
{
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = sge, .num_sge = nsge }, *bad;

	CHECK(ibv_post_srq_recv(s, &wr, &bad) == 0);
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
	size_t len;
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
	if (ctl & 1) {
		len = template(f, &in, ctl, na, nb);
		for (int k = fuzz_u8(&in) % 8; k > 0 && len > 0; k--) {
			uint16_t at = fuzz_u16(&in);

			f[at % len] ^= fuzz_u8(&in);
		}
	} else {
		len = fuzz_bytes(&in, f, MAX_FRAME);
	}
	if (ctl & 0x20)
		fix_icrc(f, len);
	if (len >= 14) {
		raw_send(f, len);
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
	/* RESET lets go of the SRQs: they can go */
	modify(tgt, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_RESET }, IBV_QP_STATE);
	while (ibv_poll_cq(acq, 4, wc) > 0)
		;
	CHECK(ibv_destroy_srq(a) == 0 && ibv_destroy_srq(b) == 0);
	return 0;
}

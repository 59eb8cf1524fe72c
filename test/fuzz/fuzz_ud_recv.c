/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer harness: random frames through a port's receive side into a UD QP. The frames go
 * out of a RAW_PACKET QP on a net_ring port, whose transmit ring is its receive ring, so they
 * take the path every received frame takes (ARP/ND, the RoCE demux, the codec's parser, the
 * QPN table, the Q_Key, the GRH and the scatter into a receive WQE). The input is either a raw
 * frame or a good UD datagram to the QP (IPv4 or IPv6, a VLAN tag, immediate data, another
 * Q_Key or QPN) with byte mutations, its ICRC made right again or not; the receive WQE has
 * one to three SGEs of fuzzed lengths inside a registered buffer filled with a guard byte.
 * What must hold, with the codec's own parse of the frame as the oracle:
 * - a frame the parser accepts, to one of the port's GIDs, of a UD opcode, to the QP's number
 *   with its Q_Key, is delivered: the GRH (IPv4 header in bytes 20-39, or the IPv6 header)
 *   and the payload exactly, byte_len = payload + 40, IBV_WC_GRH (+ WITH_IMM, imm_data),
 *   src_qp from the DETH — or, when the WQE is too small, IBV_WC_LOC_LEN_ERR with nothing
 *   written;
 * - any other frame delivers nothing;
 * - no byte outside the delivered bytes of the scatter list changes, ever.
 * A marker datagram to a second UD QP, sent after each frame, says the frame went through. */
#include <arpa/inet.h>
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
#define QKEY 0x600DF00Du
#define AREA (3 * 2048)               /* the receive buffer: three SGE windows */
#define SGE_ROOM 1600                 /* the most an SGE window takes */
#define MAX_FRAME 1514
#define MAX_PAYLOAD 1100

static struct ibv_cq *cq;
static struct ibv_qp *qp;
static struct ibv_mr *mr;
static uint8_t *area;

static void modify(struct ibv_qp *q, enum ibv_qp_state s)
{
	struct ibv_qp_attr a = { .qp_state = s, .port_num = 1, .qkey = QKEY };
	int mask = IBV_QP_STATE;

	if (s == IBV_QPS_INIT)
		mask |= IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;
	if (s == IBV_QPS_RTS)
		mask |= IBV_QP_SQ_PSN;
	if (ibv_modify_qp(q, &a, mask) != 0)
		fx_die("modify_qp");
}

/* At exit, before the fixture's: the UD QP and its buffer. */
static void cleanup(void)
{
	if (qp != NULL && ibv_destroy_qp(qp) != 0)
		fprintf(stderr, "fuzz_ud_recv: ibv_destroy_qp: %s\n", strerror(errno));
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	free(area);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const addrs[] = { "10.3.0.1", "fd03::1" };   /* GIDs 1 and 2 */

	fx_open("fuzz_ud_recv", addrs, 2);
	cq = ibv_create_cq(fx.ctx, 64, NULL, NULL, 0);
	area = aligned_alloc(4096, 2 * 4096);
	CHECK(cq != NULL && area != NULL);
	mr = ibv_reg_mr(fx.pd, area, AREA, IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr != NULL);
	qp = ibv_create_qp(fx.pd, &(struct ibv_qp_init_attr){
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD, .sq_sig_all = 1,
		.cap = { .max_send_wr = 64, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 3 } });
	CHECK(qp != NULL);
	modify(qp, IBV_QPS_INIT);
	modify(qp, IBV_QPS_RTR);
	modify(qp, IBV_QPS_RTS);
	atexit(cleanup);                          /* runs before the fixture's */
	return 0;
}

/* A good UD datagram from 10.3.0.2 (or fd03::2) to the port, built by the codec. Input:
 * traffic class u8, PSN u32, immediate u32, payload length u16, payload, IPv6 flow label u32. */
static size_t template(uint8_t *f, struct fuzz_input *in, uint8_t ctl, uint32_t dqpn)
{
	struct dpv_roce_path p = { .hop_limit = 64, .sport = 0xC123, .vlan = ctl & 4,
				   .vlan_tci = 7 };
	struct dpv_roce_hdrs h = { .bth = { .opcode = ctl & 8 ? 0x65 : 0x64, .pkey = 0xFFFF,
					    .dqpn = dqpn },
				   .deth = { .qkey = QKEY ^ (ctl & 0x40 ? 1 : 0), .sqpn = 0x4321 } };
	uint8_t payload[MAX_PAYLOAD];
	uint32_t len;
	int n;

	p.traffic_class = fuzz_u8(in);
	h.bth.psn = fuzz_u32(in) & 0xFFFFFF;
	h.imm = fuzz_u32(in);
	len = fuzz_u16(in) % MAX_PAYLOAD;
	memset(payload, 0x5A, len);
	fuzz_bytes(in, payload, len);
	memcpy(p.dmac, fx.mac, 6);
	memcpy(p.smac, "\x02\x00\x00\x00\x00\x09", 6);
	if (ctl & 2) {
		memcpy(p.dgid, fx.gid[2], 16);
		memcpy(p.sgid, fx.gid[2], 16);
		p.sgid[15] = 2;
		p.flow_label = fuzz_u32(in) & 0xFFFFF;
	} else {
		dpv__roce_gid_from_ipv4(p.dgid, htonl(0x0A030001));
		dpv__roce_gid_from_ipv4(p.sgid, htonl(0x0A030002));
	}
	n = dpv__roce_frame_build(f, MAX_FRAME + 64, &p, &h, payload, len);
	return n > 0 ? (size_t)n : 0;
}

/* A datagram to the marker QP after the frame: once it is there, so is the frame. @extra:
 * the frame itself goes to the marker QP too (a mutation made its QPN and Q_Key the
 * marker's): its completion comes first. */
static void sync_marker(bool extra, uint32_t extra_len)
{
	struct ibv_wc wc;

	fx_send_marker();
	for (int k = extra ? 2 : 1; k > 0; k--) {
		fx_poll_one(fx.mcq, &wc);
		CHECK(wc.status == IBV_WC_SUCCESS &&
		      wc.byte_len == (k == 1 ? FX_MARKER_LEN : extra_len));
	}
}

/* Would a UD QP numbered @qpn with @qkey take this frame? Then *@fr is what it takes. */
static bool deliverable(const uint8_t *f, size_t len, struct dpv_roce_frame *fr, uint32_t qpn,
			uint32_t qkey)
{
	bool local = false;

	if (dpv__roce_frame_parse(f, len, fr) != 0)
		return false;
	for (int i = 0; i < 3; i++)
		local |= memcmp(fr->dgid, fx.gid[i], 16) == 0;
	return local && (fr->h.bth.opcode == 0x64 || fr->h.bth.opcode == 0x65) &&
	       fr->h.bth.dqpn == qpn && fr->h.deth.qkey == qkey;
}

/* The receive buffer after the frame: @want (@n bytes, NULL: none) scattered over the SGE
 * windows, guard bytes everywhere else. */
static void check_area(const struct ibv_sge *sge, int nsge, const uint8_t *want, uint32_t n)
{
	CHECK(fx_scatter_ok(area, AREA, GUARD, sge, nsge, want, n));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in = { data, size };
	uint8_t ctl = fuzz_u8(&in), nsge = 1 + fuzz_u8(&in) % 3, f[MAX_FRAME + 64];
	uint8_t want[40 + MAX_FRAME];
	struct ibv_sge sge[3];
	struct ibv_recv_wr rwr = { .wr_id = 7, .sg_list = sge, .num_sge = nsge }, *bad;
	struct dpv_roce_frame fr;
	struct ibv_wc wc;
	uint32_t room = 0;
	size_t len;
	bool deliver;

	for (int i = 0; i < 3; i++) {
		sge[i] = (struct ibv_sge){ (uintptr_t)area + (uint32_t)i * 2048 + 17,
					   fuzz_u16(&in) % SGE_ROOM, mr->lkey };
		room += i < nsge ? sge[i].length : 0;
	}
	if (ctl & 1)
		len = fuzz_flip(&in, f, template(f, &in, ctl, ctl & 0x80 ? 0xABCDE : qp->qp_num));
	else
		len = fuzz_bytes(&in, f, MAX_FRAME);
	if (ctl & 0x20)
		fx_fix_icrc(f, len);
	if (len < 14)
		return 0;                 /* RAW_PACKET sends nothing shorter */
	/* a fresh QP state and WQE for every input (LOC_LEN_ERR leaves the QP in ERR) */
	modify(qp, IBV_QPS_RESET);
	modify(qp, IBV_QPS_INIT);
	modify(qp, IBV_QPS_RTR);
	memset(area, GUARD, AREA);
	CHECK(ibv_post_recv(qp, &rwr, &bad) == 0);
	deliver = deliverable(f, len, &fr, qp->qp_num, QKEY);
	if (!deliver && deliverable(f, len, &fr, fx.marker->qp_num, FX_MARKER_QKEY)) {
		fx_marker_recv();
		fx_raw_send(f, len);
		sync_marker(true, 40 + fr.payload_len);
		CHECK(ibv_poll_cq(cq, 1, &wc) == 0);
		check_area(sge, nsge, NULL, 0);
		return 0;
	}
	fx_raw_send(f, len);
	sync_marker(false, 0);
	if (!deliver) {
		CHECK(ibv_poll_cq(cq, 1, &wc) == 0);
		check_area(sge, nsge, NULL, 0);
		return 0;
	}
	CHECK(ibv_poll_cq(cq, 1, &wc) == 1 && wc.wr_id == 7);
	if (40 + fr.payload_len > room) {
		CHECK(wc.status == IBV_WC_LOC_LEN_ERR);
		check_area(sge, nsge, NULL, 0);
		return 0;
	}
	memset(want, 0, 20);
	memcpy(fr.ipv6 ? want : want + 20, f + fr.l2_len, fr.ipv6 ? 40 : 20);
	memcpy(want + 40, f + fr.payload_off, fr.payload_len);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
	      wc.byte_len == 40 + fr.payload_len && wc.src_qp == fr.h.deth.sqpn &&
	      wc.qp_num == qp->qp_num);
	CHECK(wc.wc_flags == (IBV_WC_GRH | (fr.h.bth.opcode == 0x65 ? IBV_WC_WITH_IMM : 0)));
	CHECK(fr.h.bth.opcode != 0x65 || wc.imm_data == fr.h.imm);
	check_area(sge, nsge, want, wc.byte_len);
	return 0;
}

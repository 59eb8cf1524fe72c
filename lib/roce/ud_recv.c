/* SPDX-License-Identifier: BSD-3-Clause */
/* UD receive: a datagram the demux (roce_rx.c) found for a QP lands in the QP's next receive
 * WQE as verbs has it: the first 40 bytes get the GRH — for an IPv4 peer 20 zero bytes then
 * the IPv4 header as received, as rxe and mlx5 write it; for IPv6 the IPv6 header — then the
 * payload. Each SGE is checked against an MR of the QP's PD with local write access before
 * anything is written into it. Completion: IBV_WC_RECV, byte_len = payload + 40, IBV_WC_GRH
 * (+ IBV_WC_WITH_IMM and imm_data), src_qp from the DETH, pkey_index 0, sl and slid 0. A
 * datagram larger than the WQE: IBV_WC_LOC_LEN_ERR; an SGE outside its MR:
 * IBV_WC_LOC_PROT_ERR; both move the QP to ERR, as for RAW_PACKET. */
#include <string.h>

#include "roce_ud.h"

#define GRH_LEN 40

static bool receiving(const struct dpv_qp *qp)
{
	enum ibv_qp_state s = dpv__qp_state(qp);

	return s == IBV_QPS_RTR || s == IBV_QPS_RTS || s == IBV_QPS_SQD || s == IBV_QPS_SQE;
}

struct piece {
	const uint8_t *p;
	uint32_t len;
};

/* Scatter @src (two pieces, @len bytes) into the SGEs of one WQE; an IBV_WC_* status. */
static int scatter(struct dpv_qp *qp, const struct ibv_sge *sge, uint16_t nsge,
		   const struct piece *src, uint32_t len)
{
	uint32_t si = 0, soff = 0;

	for (uint16_t i = 0; i < nsge && len > 0; i++) {
		uint32_t take = RTE_MIN(sge[i].length, len);
		struct dpv_mr *mr;
		uint8_t *va;

		if (take == 0)
			continue;
		mr = dpv__mr_lookup(qp->ctx, qp->pd, sge[i].lkey, sge[i].addr, take, &va);
		if (mr == NULL || !(mr->access & IBV_ACCESS_LOCAL_WRITE))
			return IBV_WC_LOC_PROT_ERR;
		len -= take;
		while (take > 0) {
			uint32_t k = RTE_MIN(take, src[si].len - soff);

			memcpy(va, src[si].p + soff, k);
			va += k;
			take -= k;
			soff += k;
			if (soff == src[si].len) {
				si++;
				soff = 0;
			}
		}
	}
	return IBV_WC_SUCCESS;
}

enum dpv_ud_rx dpv__ud_deliver(struct dpv_qp *qp, const uint8_t *f,
			       const struct dpv_roce_frame *fr, struct dpv_cqe_batch *b)
{
	struct dpv_rq *rq = &qp->rq;
	const struct ibv_sge *sge;
	struct dpv_rwqe *w;
	uint8_t grh[GRH_LEN];

	dpv__qp_assert_locked(qp);	struct piece src[2] = { { grh, GRH_LEN }, { f + fr->payload_off, fr->payload_len } };
	uint32_t len = GRH_LEN + fr->payload_len, room = 0;
	bool imm = fr->h.bth.opcode == (DPV_ROCE_UD | DPV_ROCE_SEND_ONLY_IMM);
	int st;

	if (qp->type != IBV_QPT_UD || !receiving(qp))
		return DPV_UD_RX_NO_QP;
	if ((fr->h.bth.opcode & 0xE0) != DPV_ROCE_UD)
		return DPV_UD_RX_BAD_OPCODE;
	if (fr->h.deth.qkey != qp->qkey)
		return DPV_UD_RX_BAD_QKEY;
	if (!dpv__rq_ready(qp)) {       /* its own WQE, or one from its SRQ */
		qp->ctx->dev->rx_no_wqe++;
		return DPV_UD_RX_DELIVERED;
	}
	w = &rq->wqe[rq->tail & rq->mask];
	sge = dpv__rq_sges(rq, rq->tail & rq->mask);
	if (fr->ipv6) {
		memcpy(grh, f + fr->l2_len, GRH_LEN);
	} else {
		memset(grh, 0, 20);
		memcpy(grh + 20, f + fr->l2_len, 20);
	}
	for (uint16_t i = 0; i < w->nsge; i++)
		room += sge[i].length;
	st = len > room ? IBV_WC_LOC_LEN_ERR : scatter(qp, sge, w->nsge, src, len);
	rq->tail++;
	if (st != IBV_WC_SUCCESS) {
		dpv__rq_batch_flush(b);   /* what came before, then the error, then the flushes */
		dpv__rq_complete(qp, w->wr_id, st, 0, 0, NULL);
		dpv__qp_fail(qp);
		return DPV_UD_RX_DELIVERED;
	}
	dpv__rq_complete_from(qp, w->wr_id, len, IBV_WC_GRH | (imm ? IBV_WC_WITH_IMM : 0),
			      fr->h.deth.sqpn, imm ? fr->h.imm : 0, fr->h.bth.se, b);
	return DPV_UD_RX_DELIVERED;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* The transmit engines:
 *   txonly  bursts of UDP frames (set txpkts: one SGE per segment; set txflags)
 *   tso     bursts of TSO WRs: TCP headers in tso.hdr, set txpkts as the payload, tso set mss */
#include "fwd_priv.h"

#define TSO_MAX_PAYLOAD 262144   /* the device's max_tso */

static int txonly_check(unsigned int p, uint32_t len)
{
	uint32_t max = tp.port[p].info.max_frame;

	if (len < 42 || len > max)
		return tp_error("txonly frames of %u bytes do not fit port %u: set txpkts to "
				"42..%u bytes in all (Ethernet/IPv4/UDP headers to the MTU)",
				len, p, max);
	return 0;
}

static void txonly_prepare(unsigned int p, struct fwd_port *fp)
{
	udp_frame(fp->tx, fp->frame_len, tp.port[p].mac, fp->peer, !tp.cfg.ip_csum);
}

const struct fwd_engine fwd_txonly_engine = {
	.name = "txonly",
	.transmits = true,
	.check = txonly_check,
	.prepare = txonly_prepare,
};

static int tso_check(unsigned int p, uint32_t len)
{
	if (tp.port[p].tso_mss == 0)
		return tp_error("forwarding mode tso needs a segment size on port %u: "
				"tso set 1448 %u", p, p);
	if (len > TSO_MAX_PAYLOAD)
		return tp_error("a TSO payload of %u bytes is above max_tso (%u): set txpkts "
				"lower", len, TSO_MAX_PAYLOAD);
	return 0;
}

/* The payload: a pattern that shows a misplaced segment. */
static void tso_prepare(unsigned int p, struct fwd_port *fp)
{
	(void)p;
	for (uint32_t i = 0; i < fp->frame_len; i++)
		fp->tx[i] = (uint8_t)(i * 7 + (i >> 8));
}

/* WR number n of the port carries TCP sequence n * payload and IPv4 ID 1 + n * segments, so
 * the WRs a full SQ refused are sent again with the same headers. */
static void tso_wr(unsigned int p, struct fwd_port *fp, uint32_t i)
{
	struct ibv_send_wr *wr = &fp->wr[i];
	uint64_t n = wr->wr_id;
	uint16_t mss = tp.port[p].tso_mss;
	uint32_t segs = (fp->frame_len + mss - 1) / mss;

	tcp_header(fp->hdr[i], tp.port[p].mac, fp->peer, (uint32_t)(n * fp->frame_len),
		   (uint16_t)(1 + n * segs));
	wr->opcode = IBV_WR_TSO;
	wr->tso.hdr = fp->hdr[i];
	wr->tso.hdr_sz = TCP_HDR_LEN;
	wr->tso.mss = mss;
}

const struct fwd_engine fwd_tso_engine = {
	.name = "tso",
	.transmits = true,
	.max_tso_header = TCP_HDR_LEN,
	.check = tso_check,
	.prepare = tso_prepare,
	.tx_wr = tso_wr,
};

/* SPDX-License-Identifier: BSD-3-Clause */
/* The loop every forwarding engine runs, a step over one port's RAW_PACKET QP: poll its CQ;
 * a transmit engine (fwd_tx.c) posts bursts of its WRs, a receive engine (fwd_rx.c) posts each
 * frame it received again from the paired port (zero-copy from the receive buffer) or keeps
 * it, and posts the buffer again once the frame is gone. */
#include <errno.h>
#include <string.h>

#include "fwd_priv.h"

/* Receiving engines count frames over every port together (start count <n>). */
static uint64_t rx_left;

void fwd_engine_count(uint64_t count)
{
	rx_left = count ? count : UINT64_MAX;
}

void fwd_engine_stop_receiving(void)
{
	rx_left = 0;
}

static int post_recv_slot(unsigned int p, uint32_t slot)
{
	struct fwd_port *fp = &fwd_ports[p];
	struct ibv_sge sge = { (uintptr_t)port_area(p) + (size_t)slot * TP_SLOT_SIZE, TP_SLOT_SIZE,
			       tp.port[p].mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = FWD_RECV | slot, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(fp->qp, &wr, &bad);
}

static bool tx_engine(void)
{
	return tp.cfg.engine->transmits;
}

int fwd_engine_prepare(unsigned int p)
{
	struct fwd_port *fp = &fwd_ports[p];

	fp->tx = port_area(p) + TP_RX_SLOTS * TP_SLOT_SIZE;
	fp->frame_len = fwd_frame_len();
	peer_mac(p, fp->peer);
	if (tx_engine()) {
		tp.cfg.engine->prepare(p, fp);
		return 0;
	}
	for (uint32_t s = 0; s < tp.qp[fp->qp_id].rq; s++) {
		int rc = post_recv_slot(p, s);

		if (rc != 0)
			return tp_error("port %u: ibv_post_recv: %s", p, strerror(rc));
	}
	return 0;
}

static bool signaled(uint64_t index, uint32_t i, uint32_t n, uint64_t last)
{
	uint32_t every = tp.cfg.signaled_every;

	return index + 1 == last || (every == 0 ? i + 1 == n : (index + 1) % every == 0);
}

/* The WR @i of a transmit burst. */
static void tx_wr_fill(unsigned int p, struct fwd_port *fp, uint32_t i, uint64_t index, bool sig)
{
	struct ibv_send_wr *wr = &fp->wr[i];
	uintptr_t at = (uintptr_t)fp->tx;
	int n = tp.cfg.nb_txpkts;

	for (int s = 0; s < n; s++) {
		fp->sge[i][s] = (struct ibv_sge){ at, tp.cfg.txpkts[s], tp.port[p].mr->lkey };
		at += tp.cfg.txpkts[s];
	}
	*wr = (struct ibv_send_wr){ .wr_id = index, .sg_list = fp->sge[i], .num_sge = n,
				    .opcode = IBV_WR_SEND };
	wr->send_flags = (sig ? IBV_SEND_SIGNALED : 0) | (tp.cfg.inline_data ? IBV_SEND_INLINE : 0) |
			 (tp.cfg.ip_csum ? IBV_SEND_IP_CSUM : 0);
	if (tp.cfg.engine->tx_wr != NULL)
		tp.cfg.engine->tx_wr(p, fp, i);
}

static void tx_post(unsigned int p, struct fwd_port *fp)
{
	uint64_t room = tp.qp[fp->qp_id].sq - (fp->posted - fp->completed);
	uint32_t n = tp.cfg.burst;
	struct ibv_send_wr *bad = NULL;
	uint64_t last = fp->budget == UINT64_MAX ? 0 : fp->posted + fp->budget;
	int rc;

	if (n > fp->budget)
		n = (uint32_t)fp->budget;
	if (n > room)
		n = (uint32_t)room;
	if (n == 0)
		return;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t index = fp->posted + i;

		tx_wr_fill(p, fp, i, index, signaled(index, i, n, last));
		fp->wr[i].next = i + 1 < n ? &fp->wr[i + 1] : NULL;
	}
	rc = ibv_post_send(fp->qp, fp->wr, &bad);
	if (rc != 0) {
		uint32_t ok = (uint32_t)(bad - fp->wr);

		fwd_count(rc == ENOMEM ? &tp.port[p].fwd.sq_full : &tp.port[p].fwd.errors, 1);
		if (rc != ENOMEM && tp.cfg.verbose)
			printf("port %u: ibv_post_send: %s\n", p, errno_name(rc));
		n = ok;
	}
	for (uint32_t i = 0; i < n; i++)
		if (fp->wr[i].send_flags & IBV_SEND_SIGNALED)
			fp->signaled_upto = fp->posted + i + 1;
	fp->posted += n;
	fp->budget -= n;
	fwd_count(&tp.port[p].fwd.tx_wrs, n);
}

/* A frame received on port @p leaves from its out port. */
static void forward(unsigned int p, struct fwd_port *fp, uint64_t slot, uint32_t len,
		    bool csum_ok)
{
	unsigned int o = (unsigned int)fp->out;
	uint8_t *f = port_area(p) + slot * TP_SLOT_SIZE;
	struct ibv_sge sge = { (uintptr_t)f, len, tp.port[o].mr->lkey };
	struct ibv_send_wr wr = { .wr_id = FWD_FWD | (uint64_t)p << 32 | slot, .sg_list = &sge,
				  .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	int rc;

	if (tp.cfg.engine->rewrite != NULL)
		tp.cfg.engine->rewrite(p, o, f, len, csum_ok, &wr);
	rc = ibv_post_send(fwd_ports[o].qp, &wr, &bad);
	if (rc == 0) {
		fp->in_flight++;
		fwd_count(&tp.port[o].fwd.tx_wrs, 1);
		return;
	}
	fwd_count(rc == ENOMEM ? &tp.port[o].fwd.sq_full : &tp.port[o].fwd.errors, 1);
	post_recv_slot(p, (uint32_t)slot);
}

static void on_recv(unsigned int p, struct fwd_port *fp, const struct ibv_wc *wc)
{
	uint64_t slot = wc->wr_id & 0xffffffffu;

	if (wc->status != IBV_WC_SUCCESS) {
		fwd_count(&tp.port[p].fwd.errors, wc->status != IBV_WC_WR_FLUSH_ERR);
		return;
	}
	fwd_count(&tp.port[p].fwd.rx, 1);
	if (tp.cfg.verbose) {
		const uint8_t *f = port_area(p) + slot * TP_SLOT_SIZE;
		char d[18], s[18];

		printf("port %u rx: %u bytes %s > %s type 0x%02x%02x%s\n", p, wc->byte_len,
		       mac_str(f + 6, s), mac_str(f, d), f[12], f[13],
		       wc->wc_flags & IBV_WC_IP_CSUM_OK ? " IP_CSUM_OK" : "");
	}
	if (rx_left != UINT64_MAX && rx_left > 0)
		rx_left--;
	if (!tp.cfg.engine->forwards) {
		if (rx_left > 0)
			post_recv_slot(p, (uint32_t)slot);
		return;
	}
	forward(p, fp, slot, wc->byte_len, wc->wc_flags & IBV_WC_IP_CSUM_OK);
}

static void on_send(unsigned int p, struct fwd_port *fp, const struct ibv_wc *wc)
{
	if (wc->status != IBV_WC_SUCCESS) {
		fwd_count(&tp.port[p].fwd.errors, 1);
		if (tp.cfg.verbose)
			printf("port %u: completion of WR %llu: %s\n", p,
			       (unsigned long long)(wc->wr_id & ~(FWD_FWD | FWD_RECV)),
			       ibv_wc_status_str(wc->status));
	} else {
		fwd_count(&tp.port[p].fwd.completions, 1);
		if (tp.cfg.verbose > 1)
			printf("port %u: completion of WR %llu: %s\n", p,
			       (unsigned long long)(wc->wr_id & ~(FWD_FWD | FWD_RECV)),
			       wc_opcode_name(wc->opcode));
	}
	if (wc->wr_id & FWD_FWD) {
		unsigned int rx = (unsigned int)(wc->wr_id >> 32 & 0xffff);
		uint32_t slot = (uint32_t)(wc->wr_id & 0xffffffffu);

		fwd_ports[rx].in_flight--;
		if (rx_left > 0)
			post_recv_slot(rx, slot);
		return;
	}
	if (wc->wr_id + 1 > fp->completed)
		fp->completed = wc->wr_id + 1;
}

void fwd_engine_step(unsigned int p)
{
	struct fwd_port *fp = &fwd_ports[p];
	struct ibv_wc wc[FWD_POLL];
	int n = ibv_poll_cq(fp->cq, FWD_POLL, wc);

	for (int i = 0; i < n; i++) {
		if (wc[i].wr_id & FWD_RECV)
			on_recv(p, fp, &wc[i]);
		else
			on_send(p, fp, &wc[i]);
	}
	if (tx_engine() && fp->budget > 0)
		tx_post(p, fp);
}

bool fwd_engine_done(unsigned int p)
{
	const struct fwd_port *fp = &fwd_ports[p];

	if (tx_engine())
		return fp->budget == 0 && fp->completed >= fp->signaled_upto;
	return rx_left == 0 && fp->in_flight == 0;
}

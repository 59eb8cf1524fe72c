/* SPDX-License-Identifier: BSD-3-Clause */
/* The receiving engines (an ALL_DEFAULT flow on each port):
 *   rxonly  receive, count, post the buffer again
 *   io      receive, send the frame unchanged from the paired port, zero-copy from the buffer
 *   mac     as io, with the source MAC of the sending port and the peer's destination MAC
 *   csum    as io, sent with IBV_SEND_IP_CSUM; counts IP frames received without IP_CSUM_OK */
#include <string.h>

#include "fwd_priv.h"

const struct fwd_engine fwd_rxonly_engine = {
	.name = "rxonly",
};

const struct fwd_engine fwd_io_engine = {
	.name = "io",
	.forwards = true,
};

static void mac_rewrite(unsigned int p, unsigned int o, uint8_t *f, uint32_t len, bool csum_ok,
			struct ibv_send_wr *wr)
{
	(void)p, (void)csum_ok, (void)wr;
	if (len < 12)
		return;
	peer_mac(o, f);
	memcpy(f + 6, tp.port[o].mac, 6);
}

const struct fwd_engine fwd_mac_engine = {
	.name = "mac",
	.forwards = true,
	.rewrite = mac_rewrite,
};

static void csum_rewrite(unsigned int p, unsigned int o, uint8_t *f, uint32_t len, bool csum_ok,
			 struct ibv_send_wr *wr)
{
	(void)o;
	wr->send_flags |= IBV_SEND_IP_CSUM;
	if (!csum_ok && frame_is_ip(f, len))
		fwd_count(&tp.port[p].fwd.bad_csum, 1);
}

static void csum_totals(unsigned int p)
{
	printf(", bad checksums %llu", (unsigned long long)tp.port[p].fwd.bad_csum);
}

const struct fwd_engine fwd_csum_engine = {
	.name = "csum",
	.forwards = true,
	.rewrite = csum_rewrite,
	.totals = csum_totals,
};

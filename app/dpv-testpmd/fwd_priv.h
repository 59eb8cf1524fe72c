/* SPDX-License-Identifier: BSD-3-Clause */
/* The forwarding engine's per-port state, shared by its control (fwd.c) and its engines
 * (fwd_engines.c). One worker thread runs every port's engine step in turn. */
#ifndef DPV_TESTPMD_FWD_PRIV_H
#define DPV_TESTPMD_FWD_PRIV_H

#include "testpmd.h"

#define FWD_RECV (1ull << 63)      /* wr_id of a receive WQE: FWD_RECV | slot */
#define FWD_FWD  (1ull << 62)      /* wr_id of a forwarded frame: FWD_FWD | rx port << 32 | slot */
#define FWD_MAX_BURST 512
#define FWD_POLL 64

struct fwd_port {
	bool active;
	int qp_id;
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	int out;                    /* the port a frame received here leaves from */
	uint64_t budget;            /* transmit engines: WRs still to post */
	uint64_t posted;            /* transmit engines: index of the next WR */
	uint64_t signaled_upto;     /* ... 1 + index of the last signaled WR posted */
	uint64_t completed;         /* ... every WR below this index completed */
	uint64_t in_flight;         /* forwarding engines: frames sent out, not completed */
	uint32_t frame_len;         /* transmit engines: frame (txonly) or payload (tso) bytes */
	uint8_t *tx;                /* transmit engines: the frame template in the arena */
	uint8_t peer[6];            /* destination MAC of what this port sends */
	uint8_t hdr[FWD_MAX_BURST][TCP_HDR_LEN];
	struct ibv_send_wr wr[FWD_MAX_BURST];
	struct ibv_sge sge[FWD_MAX_BURST][TP_MAX_TXSEGS];
};

extern struct fwd_port fwd_ports[TP_MAX_PORTS];

/* A forwarding engine, as testpmd's struct fwd_engine: what it sends (fwd_tx.c) or does to a
 * received frame before it leaves from the paired port (fwd_rx.c). */
struct fwd_engine {
	const char *name;
	bool transmits;             /* posts bursts of its own and receives nothing */
	uint32_t max_tso_header;    /* the QP's IBV_QP_INIT_ATTR_MAX_TSO_HEADER */
	/* optional: port @p can run it with @len-byte frames (0), or a printed error */
	int (*check)(unsigned int p, uint32_t len);
	/* Transmit engines: write port @p's frame template. */
	void (*prepare)(unsigned int p, struct fwd_port *fp);
	/* optional, transmit engines: finish WR @i of a burst (wr_id: its index) */
	void (*tx_wr)(unsigned int p, struct fwd_port *fp, uint32_t i);
	/* Receive engines: false keeps a received frame here (its buffer is posted again). */
	bool forwards;
	/* optional: rewrite frame @f received on @p, and its WR, before it leaves from @o */

	void (*rewrite)(unsigned int p, unsigned int o, uint8_t *f, uint32_t len, bool csum_ok,
			struct ibv_send_wr *wr);
	/* What `stop` prints for port @p beyond the common totals. Optional. */
	void (*totals)(unsigned int p);
};

extern const struct fwd_engine fwd_txonly_engine, fwd_tso_engine, fwd_rxonly_engine,
	fwd_mac_engine, fwd_csum_engine;

/* Count @n more on counter @c, read by the stats lines of the control thread. */
static inline void fwd_count(uint64_t *c, uint64_t n)
{
	__atomic_store_n(c, *c + n, __ATOMIC_RELAXED);
}

/* One step of the configured engine on port @p: poll its CQ, post what there is room for. */
void fwd_engine_step(unsigned int p);
/* Prepare port @p's templates and receive WQEs before the worker starts. */
int fwd_engine_prepare(unsigned int p);
/* The count of `start count`: transmit engines per port, receiving engines all ports together
 * (0: no count). */
void fwd_engine_count(uint64_t count);
/* Receive buffers are not posted again (stop). */
void fwd_engine_stop_receiving(void);
/* True once port @p reached its count and every WR it posted completed. */
bool fwd_engine_done(unsigned int p);

#endif

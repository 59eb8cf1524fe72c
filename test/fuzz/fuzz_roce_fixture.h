/* SPDX-License-Identifier: BSD-3-Clause */
/* The setup the fuzz_*_recv harnesses share: one net_ring port (its transmit ring is its
 * receive ring) with RoCE addresses, a RAW_PACKET QP that puts any frame on that ring, so that
 * it takes the path of every received frame, and a UD marker QP whose datagram, sent after a
 * frame, says the frame went through. A harness calls fx_open from LLVMFuzzerInitialize,
 * before it registers its own exit handler (which then runs first). */
#ifndef FUZZ_ROCE_FIXTURE_H
#define FUZZ_ROCE_FIXTURE_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#define FX_MARKER_QKEY 0x3A3A3A3Au
#define FX_MARKER_LEN 44              /* the marker's byte_len: GRH + "mark" */
#define FX_MAX_ADDRS 2

struct roce_fixture {
	const char *name;                  /* the harness, for fx_die's message */
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *mcq;                /* the marker QP's */
	struct ibv_qp *marker, *raw;
	uint8_t mac[6];                    /* the port's */
	uint8_t gid[1 + FX_MAX_ADDRS][16]; /* GID 0 (link-local), then one per address */
	/* private: the RAW QP's CQ, the send buffer (a frame, then the marker's receive) */
	struct ibv_cq *rcq;
	struct ibv_mr *smr;
	uint8_t *sbuf;
};

extern struct roce_fixture fx;

/* Report @what as a property that does not hold (libFuzzer keeps the input). */
void fx_die(const char *what) __attribute__((noreturn));

#define CHECK(cond) do { if (!(cond)) fx_die(#cond); } while (0)

/* Open the net_ring port as harness @name, give it the @n (<= FX_MAX_ADDRS) addresses, and set
 * up fx; every object goes again at exit. */
void fx_open(const char *name, const char *const *addrs, int n);

/* CLOCK_MONOTONIC in seconds. */
double fx_now(void);

/* One completion of @cq into *@wc, waiting up to 5 s for it. */
void fx_poll_one(struct ibv_cq *cq, struct ibv_wc *wc);

/* Whether @area (@len bytes) holds @want (@n bytes, NULL: none) scattered over the @nsge
 * windows of @sge (addresses inside @area) and @guard everywhere else: what a receive may have
 * written, and nothing more. */
bool fx_scatter_ok(const uint8_t *area, size_t len, uint8_t guard, const struct ibv_sge *sge,
		   int nsge, const uint8_t *want, uint32_t n);

/* Make the ICRC of @f right again, where the parser looks for it (after mutations). */
void fx_fix_icrc(uint8_t *f, size_t len);

/* @f (@len bytes, 14..2048) out of the RAW_PACKET QP onto the ring; returns once sent. */
void fx_raw_send(const uint8_t *f, size_t len);

/* Post a receive WQE on the marker QP (into fixture memory), for a datagram of up to 2048
 * bytes. */
void fx_marker_recv(void);

/* A datagram to the marker QP from and to the port's first address (GID 1), after the frames
 * sent before it, with a receive WQE posted for it: its completion (byte_len FX_MARKER_LEN)
 * on fx.mcq says they went through. */
void fx_send_marker(void);

#endif

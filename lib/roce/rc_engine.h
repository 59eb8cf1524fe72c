/* SPDX-License-Identifier: BSD-3-Clause */
/* The RC and UC protocol engine (IBA vol. 1 ch. 9.7-9.9, as Linux rdma_rxe speaks it): the
 * requester (segmenting WRs into packets, go-back-N, retry and RNR counters, the READ/atomic
 * window, fences), the responder (PSN checks, receive WQEs, RDMA WRITE/READ, atomics with a
 * replay cache, ACK/NAK) and the completer (ACKs, NAKs, READ responses, timeouts) of one QP.
 * "Sans-IO": no DPDK, no driver, no verbs object. It is driven by calls (post a WR, post a
 * receive, a received packet, the time) and answers through the callbacks of struct
 * dpv_rc_ops; timers are deadlines in nanoseconds the caller polls. doc/roce-rc.md, "RC/UC
 * engine". Functions return 0 or a negative errno. Not thread-safe: one caller at a time, and
 * the callbacks must not call back into the same engine. */
#ifndef DPV_RC_ENGINE_H
#define DPV_RC_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "roce_wire.h"

#define DPV_RC_NEVER		UINT64_MAX	/* no deadline */
#define DPV_RC_MAX_MSG		(1u << 31)	/* largest message (verbs' max_msg_sz) */
#define DPV_RC_MAX_UNACKED	128	/* PSNs in flight beyond the oldest unacknowledged */
#define DPV_RC_ACKREQ_EVERY	32	/* AckReq at least every this many packets */
#define DPV_RC_BURST		256	/* READ response packets per call before yielding */

/* WR opcodes: the numbers of enum ibv_wr_opcode, so rc_verbs.c passes them through. */
enum dpv_rc_wr_opcode {
	DPV_RC_WR_WRITE = 0,
	DPV_RC_WR_WRITE_IMM = 1,
	DPV_RC_WR_SEND = 2,
	DPV_RC_WR_SEND_IMM = 3,
	DPV_RC_WR_READ = 4,
	DPV_RC_WR_CMP_SWP = 5,
	DPV_RC_WR_FETCH_ADD = 6,
	DPV_RC_WR_SEND_INV = 9,	/* RC only: IETH on its last packet */
};

/* send flags: the bits of enum ibv_send_flags */
enum {
	DPV_RC_SEND_FENCE = 1 << 0,	/* wait until every earlier READ/atomic is answered */
	DPV_RC_SEND_SIGNALED = 1 << 1,	/* carried for the caller; every WR is reported */
	DPV_RC_SEND_SOLICITED = 1 << 2,	/* BTH.SE on the last packet of a SEND / WRITE_IMM */
	DPV_RC_SEND_INLINE = 1 << 3,	/* carried for the caller (its payload reader) */
};

/* remote access rights: the bits of enum ibv_access_flags */
enum {
	DPV_RC_ACCESS_REMOTE_WRITE = 1 << 1,
	DPV_RC_ACCESS_REMOTE_READ = 1 << 2,
	DPV_RC_ACCESS_REMOTE_ATOMIC = 1 << 3,
};

/* completion status: the numbers of enum ibv_wc_status */
enum dpv_rc_status {
	DPV_RC_WC_SUCCESS = 0,
	DPV_RC_WC_LOC_LEN_ERR = 1,
	DPV_RC_WC_LOC_QP_OP_ERR = 2,
	DPV_RC_WC_LOC_PROT_ERR = 4,
	DPV_RC_WC_WR_FLUSH_ERR = 5,
	DPV_RC_WC_REM_INV_REQ_ERR = 9,
	DPV_RC_WC_REM_ACCESS_ERR = 10,
	DPV_RC_WC_REM_OP_ERR = 11,
	DPV_RC_WC_RETRY_EXC_ERR = 12,
	DPV_RC_WC_RNR_RETRY_EXC_ERR = 13,
};

/* completion opcode: the numbers of enum ibv_wc_opcode */
enum dpv_rc_wc_opcode {
	DPV_RC_WC_SEND = 0,
	DPV_RC_WC_RDMA_WRITE = 1,
	DPV_RC_WC_RDMA_READ = 2,
	DPV_RC_WC_COMP_SWAP = 3,
	DPV_RC_WC_FETCH_ADD = 4,
	DPV_RC_WC_RECV = 128,
	DPV_RC_WC_RECV_RDMA_WITH_IMM = 129,
};

/* AETH syndrome (IBA 9.3.5): type in bits 6-5, a credit count, RNR timer or NAK code below */
enum {
	DPV_AETH_TYPE_MASK = 0x60,
	DPV_AETH_ACK = 0x00,
	DPV_AETH_RNR_NAK = 0x20,
	DPV_AETH_NAK = 0x60,
	DPV_AETH_CREDIT_INVALID = 0x1F,	/* "invalid credit count": what rxe always sends */
	DPV_AETH_NAK_PSN_SEQ = 0x60,
	DPV_AETH_NAK_INV_REQ = 0x61,
	DPV_AETH_NAK_REM_ACCESS = 0x62,
	DPV_AETH_NAK_REM_OP = 0x63,
	DPV_AETH_NAK_INV_RD_REQ = 0x64,
};

/* A send WR as the engine needs it; the gather list stays with the caller behind @handle. */
struct dpv_rc_send_wr {
	uint64_t handle;	/* opaque, given back in every callback about this WR */
	uint8_t opcode;		/* enum dpv_rc_wr_opcode */
	uint8_t flags;		/* DPV_RC_SEND_* */
	uint32_t length;	/* bytes to send / write / read; atomics: 8 */
	uint64_t remote_addr;	/* WRITE, READ, atomics */
	uint32_t rkey;
	uint32_t imm;		/* *_IMM, as on the wire (verbs' imm_data is big-endian too) */
	uint32_t inv_rkey;	/* SEND_INV: the peer's key to invalidate */
	uint64_t compare_add;	/* CMP_SWP: the compare value; FETCH_ADD: the addend */
	uint64_t swap;		/* CMP_SWP */
	uint32_t xrc_srqn;	/* XRC: the XRCETH of its requests, the SRQ it lands in */
};

struct dpv_rc_config {
	bool uc;			/* UC: no ACKs, no READ/atomics, a lost packet drops its message */
	bool xrc;			/* XRC: RC with the XRC opcodes, an XRCETH on requests */
	uint32_t mtu;			/* path MTU in bytes: 256, 512, 1024, 2048 or 4096 */
	uint32_t qpn, dest_qpn;		/* 24 bits */
	uint32_t sq_psn, rq_psn;	/* 24 bits */
	uint16_t pkey;			/* 0 means 0xFFFF */
	uint8_t timeout;		/* local ACK timeout 4.096 us << timeout; 0 = none (0..31) */
	uint8_t retry_cnt;		/* 0..7: retries after a timeout or sequence NAK */
	uint8_t rnr_retry;		/* 0..7, 7 = retry forever */
	uint8_t min_rnr_timer;		/* 0..31, the IBA's encoded RNR time sent in RNR NAKs */
	uint8_t max_rd_atomic;		/* READ/atomics this side may have outstanding */
	uint8_t max_dest_rd_atomic;	/* responder resources for the peer's READ/atomics */
	uint32_t access;		/* DPV_RC_ACCESS_*: what the peer may do here */
	uint32_t max_send_wr, max_recv_wr;	/* WRs the engine tracks at once (>= 1) */
};

/* Where an emitted packet's payload comes from: the caller reads it when it builds the frame,
 * so a retransmission reads the WR's memory again. */
enum dpv_rc_payload_src {
	DPV_RC_PAYLOAD_NONE,	/* no payload (or a zero-length one) */
	DPV_RC_PAYLOAD_WR,	/* @len bytes of send WR @handle's data from @offset */
	DPV_RC_PAYLOAD_MEM,	/* @len bytes of local memory at @va under @rkey (READ responses);
				 * the range was checked with mem_check(REMOTE_READ) */
};

struct dpv_rc_payload {
	uint8_t src;		/* enum dpv_rc_payload_src */
	uint32_t len;
	uint64_t handle;	/* WR */
	uint32_t offset;	/* WR */
	uint32_t rkey;		/* MEM */
	uint64_t va;		/* MEM */
};

struct dpv_rc_send_cqe {
	uint64_t handle;
	uint8_t status;		/* enum dpv_rc_status */
	uint8_t opcode;		/* enum dpv_rc_wc_opcode */
	uint32_t byte_len;
};

struct dpv_rc_recv_cqe {
	uint64_t handle;
	uint8_t status;		/* enum dpv_rc_status */
	uint8_t opcode;		/* DPV_RC_WC_RECV or DPV_RC_WC_RECV_RDMA_WITH_IMM */
	bool with_imm, solicited;
	bool with_inv;		/* a SEND_WITH_INV that invalidated @inv_rkey */
	uint32_t byte_len;	/* SEND: bytes received; WRITE_IMM: the RDMA WRITE's length */
	uint32_t imm;		/* wire order */
	uint32_t inv_rkey;
};

/* What the engine asks of its caller. @ctx is the pointer given to dpv__rc_init. */
struct dpv_rc_ops {
	/* Transmit one packet: @h holds the BTH and the extension headers of h->bth.opcode
	 * (PadCnt is the caller's: it follows from pl->len). 0 when sent (or lost: the protocol
	 * recovers); -ENOBUFS or -EAGAIN: no room now, the engine offers it again later (its
	 * deadline becomes "now"); -EFAULT: the payload's memory cannot be read (a send WR:
	 * LOC_PROT_ERR; a READ response: a remote access NAK). */
	int (*emit)(void *ctx, const struct dpv_roce_hdrs *h, const struct dpv_rc_payload *pl);
	/* Store @len bytes of a READ response (or the 8 bytes of an atomic's original value,
	 * host order) at @offset of send WR @handle's scatter list; offset + len never exceeds
	 * the WR's length. 0, or a negative errno (the WR completes with LOC_PROT_ERR). */
	int (*wr_write)(void *ctx, uint64_t handle, uint32_t offset, const void *data,
			uint32_t len);
	/* Store @len bytes of a received SEND at @offset of receive WQE @handle; offset + len
	 * never exceeds the length it was posted with. 0, or a negative errno (LOC_PROT_ERR). */
	int (*recv_write)(void *ctx, uint64_t handle, uint32_t offset, const void *data,
			  uint32_t len);
	/* May the peer do @access (one DPV_RC_ACCESS_*) on [va, va + len) under @rkey? 0, or
	 * -EACCES (no such key, outside it, right not granted: a remote access NAK); any other
	 * negative errno gives a remote operational error NAK. @len > 0, va + len does not wrap. */
	int (*mem_check)(void *ctx, uint32_t rkey, uint64_t va, uint32_t len, uint32_t access);
	/* An RDMA WRITE's bytes, inside a range mem_check granted. 0, or as mem_check. */
	int (*mem_write)(void *ctx, uint32_t rkey, uint64_t va, const void *data, uint32_t len);
	/* Execute an 8-byte atomic (@opcode DPV_RC_WR_CMP_SWP: if *va == @compare_add store
	 * @swap; DPV_RC_WR_FETCH_ADD: add @compare_add) at an 8-aligned @va mem_check granted,
	 * returning the old value in *@orig. Called once per atomic request, never for a
	 * duplicate. 0, or as mem_check. */
	int (*mem_atomic)(void *ctx, uint32_t rkey, uint64_t va, uint8_t opcode,
			  uint64_t compare_add, uint64_t swap, uint64_t *orig);
	/* Invalidate @rkey, named by the IETH of a SEND_WITH_INV's last packet, before its
	 * receive completes: every later access under it fails. 0, or a negative errno (not a
	 * key the peer may invalidate: an invalid request NAK, the receive WQE completes with
	 * REM_INV_REQ_ERR). Called once per message, never for a duplicate. */
	int (*mem_invalidate)(void *ctx, uint32_t rkey);
	/* A send WR is done (every WR, signaled or not, in post order). */
	void (*send_done)(void *ctx, const struct dpv_rc_send_cqe *c);
	/* A receive WQE is done (in post order). */
	void (*recv_done)(void *ctx, const struct dpv_rc_recv_cqe *c);
	/* The engine moved the QP to ERR by itself (after completing the WR that failed); it
	 * then flushes every other WR and receive WQE. */
	void (*qp_error)(void *ctx);
};

/* What happened, for statistics and tests. */
struct dpv_rc_stats {
	uint64_t pkts_sent, pkts_rcvd;
	uint64_t retransmits;		/* requests sent again */
	uint64_t timeouts;		/* local ACK timeouts that fired */
	uint64_t seq_naks_sent, seq_naks_rcvd;
	uint64_t seq_retries;		/* go-back-N started by a sequence NAK */
	uint64_t rnr_naks_sent, rnr_naks_rcvd;
	uint64_t implied_naks;		/* retries: a READ/atomic answer found missing */
	uint64_t dup_requests;		/* duplicate requests answered (or dropped) */
	uint64_t dropped;		/* packets ignored: unexpected, stale, malformed, UC loss */
	uint64_t tx_stalls;		/* emit said -ENOBUFS/-EAGAIN */
};

struct dpv_rc_swqe;
struct dpv_rc_rwqe;
struct dpv_rc_res;

/* One QP's protocol state. Its fields are the engine's; callers use the functions below. */
struct dpv_rc {
	struct dpv_rc_config cfg;
	const struct dpv_rc_ops *ops;
	void *ctx;
	bool err;		/* the QP is in ERR: everything flushed, packets ignored */
	bool tx_stalled;	/* emit had no room: try again at the next tick */
	uint64_t timeout_ns;	/* 0: no local ACK timer */
	uint32_t rd_atomic_max;	/* max_rd_atomic, at least 1 */

	/* send queue: [sq_head, sq_cur) started, [sq_cur, sq_tail) not yet sent */
	struct dpv_rc_swqe *sq;
	uint32_t sq_mask, sq_head, sq_cur, sq_tail;

	struct {
		uint32_t psn;		/* of the next packet to send (in the WR at sq_cur) */
		uint32_t next_psn;	/* first PSN of the next WR not started */
		uint32_t sent_max;	/* one after the highest PSN sent (responses below it) */
		uint32_t noack;		/* packets since the last AckReq */
		uint32_t rd_atomic;	/* READ/atomics started and not answered */
		bool sqd;		/* SQD: no WR starts (the one under way goes on) */
	} req;

	struct {
		uint32_t psn;		/* oldest PSN not acknowledged */
		uint8_t retry_left, rnr_left;
		bool retried;		/* a retry started since the last progress */
		bool rnr_wait;
		uint64_t ack_deadline, rnr_deadline;
	} comp;

	/* receive queue: [rq_head, rq_tail) posted, rq_head the one a SEND is filling */
	struct dpv_rc_rwqe *rq;
	uint32_t rq_mask, rq_head, rq_tail;

	struct {
		uint32_t psn;		/* expected PSN */
		uint32_t ack_psn;	/* one after the last SEND/WRITE/atomic PSN executed */
		uint32_t msn;
		uint8_t in_msg;		/* none, or a SEND or RDMA WRITE under way */
		bool nak_sent;		/* a sequence NAK for psn is out (send one only) */
		bool ack_due;		/* requests asked for an ACK not sent yet: ack_due_psn */
		uint32_t ack_due_psn;	/* the last of them */
		bool drop_msg;		/* UC: dropping until the next FIRST/ONLY */
		uint32_t recv_off;	/* bytes of the SEND at rq_head so far */
		uint32_t w_rkey, w_len, w_resid;	/* the RDMA WRITE under way */
		uint64_t w_va;
		struct dpv_rc_res *res;	/* max_dest_rd_atomic READ/atomic resources */
		uint32_t res_next;	/* the one to (re)use next */
		struct dpv_rc_res *rd;	/* a READ whose responses are not all sent */
	} resp;

	struct dpv_rc_stats stats;
};

/* Set up @rc for @cfg (copied). -EINVAL for a bad configuration, -ENOMEM. */
int dpv__rc_init(struct dpv_rc *rc, const struct dpv_rc_config *cfg,
		 const struct dpv_rc_ops *ops, void *ctx);

/* SQD (@on) or back to RTS: while on, no WR not yet started starts; the message under way
 * and what is unacknowledged go on (retransmissions included). Off: the queue goes on. */
void dpv__rc_set_sqd(struct dpv_rc *rc, bool on, uint64_t now);
/* Whether every WR started so far is done (acknowledged or answered): SQD has drained. */
bool dpv__rc_sq_drained(const struct dpv_rc *rc);

/* Free what dpv__rc_init allocated; no callback is made (RESET discards the WRs). */
void dpv__rc_fini(struct dpv_rc *rc);

/* The requester's attributes, given at RTS when the engine was set up at RTR: sq_psn,
 * timeout, retry_cnt, rnr_retry, max_rd_atomic of @cfg. -EBUSY once a WR was posted. */
int dpv__rc_set_requester(struct dpv_rc *rc, const struct dpv_rc_config *cfg);
/* SQD -> SQD: the requester's timeout, retry_cnt, rnr_retry and max_rd_atomic of @cfg from
 * now on (the next timer armed, the next WR started); the WR under way keeps no more retries
 * than the new counts. -EINVAL out of range. */
int dpv__rc_set_retry(struct dpv_rc *rc, const struct dpv_rc_config *cfg);

/* Whether a QP configured as @cfg (its uc flag and mtu) can carry @wr: 0, or -EINVAL for an
 * unknown opcode, READ/atomic/SEND_INV on UC, an atomic whose length is not 8 or whose
 * address is not 8-aligned, a length above DPV_RC_MAX_MSG, a READ of more than 2^22
 * responses. The one check of a send WR's transport semantics; dpv__rc_post_send runs it. */
int dpv__rc_wr_check(const struct dpv_rc_config *cfg, const struct dpv_rc_send_wr *wr);

/* Queue a send WR and send what the windows allow. -EINVAL: dpv__rc_wr_check refused it;
 * -ENOMEM: max_send_wr WRs outstanding. In ERR the WR is accepted and flushed at once. */
int dpv__rc_post_send(struct dpv_rc *rc, const struct dpv_rc_send_wr *wr, uint64_t now);

/* Queue a receive WQE of @length bytes. -ENOMEM when max_recv_wr are posted. In ERR it is
 * accepted and flushed at once. */
int dpv__rc_post_recv(struct dpv_rc *rc, uint64_t handle, uint32_t length);

/* Would the responder, given packet @h now, need a receive WQE it has none of? (A SEND that
 * starts a message, or the end of an RDMA WRITE with immediate, at the PSN it expects.) For a
 * caller that hands out receive WQEs only when needed (a shared receive queue). */
bool dpv__rc_resp_wants_wqe(const struct dpv_rc *rc, const struct dpv_roce_hdrs *h);

/* The responder refuses request @h (an XRC request naming an SRQ outside the receiving QP's
 * XRC domain, found by the caller): at the expected PSN, the invalid request NAK and ERR
 * (a class C error), as an opcode the QP may not take; otherwise as dpv__rc_rx would. */
void dpv__rc_resp_reject(struct dpv_rc *rc, const struct dpv_roce_hdrs *h);

/* A received packet for this QP: @h decoded by dpv__roce_hdrs_decode and its ICRC checked,
 * @payload the @len bytes after the headers (pad excluded). Anything is accepted: what the
 * protocol does not expect is dropped and counted. */
void dpv__rc_rx(struct dpv_rc *rc, const struct dpv_roce_hdrs *h, const uint8_t *payload,
		uint32_t len, uint64_t now);

/* The caller has no more packets for this QP just now (the end of a receive burst): the
 * acknowledgement that the requests since the last call asked for goes out, one ACK of the
 * last of them for all (a coalesced ACK, IBA 9.7.5.1.2). Without the call it goes at the next
 * dpv__rc_tick (the deadline is "now" meanwhile). */
void dpv__rc_rx_flush(struct dpv_rc *rc);

/* Run what is due at @now: the local ACK timeout, the end of an RNR wait, transmission that
 * had to wait for room. */
void dpv__rc_tick(struct dpv_rc *rc, uint64_t now);

/* When dpv__rc_tick has something to do: a time in ns, 0 for "now", DPV_RC_NEVER. */
uint64_t dpv__rc_next_deadline(const struct dpv_rc *rc);

/* Move to ERR from outside (modify_qp): every outstanding WR and receive WQE completes with
 * WR_FLUSH_ERR, in order; no qp_error callback. */
void dpv__rc_set_error(struct dpv_rc *rc);

/* Nanoseconds of an IBA encoded RNR timer value (0..31; 0 is the longest, 655.36 ms). */
uint64_t dpv__rc_rnr_ns(uint8_t code);

/* 24-bit PSN difference a - b as a signed number (-2^23 .. 2^23 - 1). */
static inline int32_t dpv__psn_diff(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8) >> 8;
}

#endif

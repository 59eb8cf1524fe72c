/* SPDX-License-Identifier: BSD-3-Clause */
/* The IBA opcode table and the transport headers (BTH and extension headers): encoded from
 * and decoded into struct dpv_roce_hdrs. Received bytes are untrusted: every read is checked
 * against the length first. */
#include <errno.h>

#include "roce_wire.h"

#define F_DETH		DPV_ROCE_F_DETH
#define F_XRCETH	DPV_ROCE_F_XRCETH
#define F_RETH		DPV_ROCE_F_RETH
#define F_ATOMIC	DPV_ROCE_F_ATOMIC
#define F_AETH		DPV_ROCE_F_AETH
#define F_ATOMIC_ACK	DPV_ROCE_F_ATOMIC_ACK
#define F_IMM		DPV_ROCE_F_IMM
#define F_IETH		DPV_ROCE_F_IETH
#define F_PAYLOAD	DPV_ROCE_F_PAYLOAD
#define F_FIRST		DPV_ROCE_F_FIRST
#define F_MIDDLE	DPV_ROCE_F_MIDDLE
#define F_LAST		DPV_ROCE_F_LAST
#define F_ONLY		(F_FIRST | F_LAST)
#define F_REQ		DPV_ROCE_F_REQ
#define SEND		(DPV_ROCE_F_SEND | F_REQ | F_PAYLOAD)
#define WRITE		(DPV_ROCE_F_WRITE | F_REQ | F_PAYLOAD)
#define READ_RESP	(DPV_ROCE_F_READ | F_PAYLOAD)

/* header length from the flags: a constant expression, so the table below is all static */
#define HLEN(f) (DPV_ROCE_BTH_LEN + \
	((f) & F_DETH ? DPV_ROCE_DETH_LEN : 0) + ((f) & F_XRCETH ? DPV_ROCE_XRCETH_LEN : 0) + \
	((f) & F_RETH ? DPV_ROCE_RETH_LEN : 0) + ((f) & F_ATOMIC ? DPV_ROCE_ATOMIC_LEN : 0) + \
	((f) & F_AETH ? DPV_ROCE_AETH_LEN : 0) + \
	((f) & F_ATOMIC_ACK ? DPV_ROCE_ATOMIC_ACK_LEN : 0) + \
	((f) & F_IMM ? DPV_ROCE_IMM_LEN : 0) + ((f) & F_IETH ? DPV_ROCE_IETH_LEN : 0))

#define ROW(tr, op, f) [DPV_ROCE_##tr | DPV_ROCE_##op] = { #tr "_" #op, (f), HLEN(f) },

/* sends and RDMA writes: UC has these only; @x is F_XRCETH on XRC requests */
#define SEND_WRITE_ROWS(tr, x) \
	ROW(tr, SEND_FIRST, SEND | F_FIRST | (x)) \
	ROW(tr, SEND_MIDDLE, SEND | F_MIDDLE | (x)) \
	ROW(tr, SEND_LAST, SEND | F_LAST | (x)) \
	ROW(tr, SEND_LAST_IMM, SEND | F_LAST | F_IMM | (x)) \
	ROW(tr, SEND_ONLY, SEND | F_ONLY | (x)) \
	ROW(tr, SEND_ONLY_IMM, SEND | F_ONLY | F_IMM | (x)) \
	ROW(tr, WRITE_FIRST, WRITE | F_FIRST | F_RETH | (x)) \
	ROW(tr, WRITE_MIDDLE, WRITE | F_MIDDLE | (x)) \
	ROW(tr, WRITE_LAST, WRITE | F_LAST | (x)) \
	ROW(tr, WRITE_LAST_IMM, WRITE | F_LAST | F_IMM | (x)) \
	ROW(tr, WRITE_ONLY, WRITE | F_ONLY | F_RETH | (x)) \
	ROW(tr, WRITE_ONLY_IMM, WRITE | F_ONLY | F_RETH | F_IMM | (x))

/* what only the reliable transports have; responses never carry an XRCETH (IBA 9.3, and the
 * rxe XRC opcode table) */
#define RELIABLE_ROWS(tr, x) \
	ROW(tr, READ_REQUEST, F_REQ | DPV_ROCE_F_READ | F_ONLY | F_RETH | (x)) \
	ROW(tr, READ_RESP_FIRST, READ_RESP | F_FIRST | F_AETH) \
	ROW(tr, READ_RESP_MIDDLE, READ_RESP | F_MIDDLE) \
	ROW(tr, READ_RESP_LAST, READ_RESP | F_LAST | F_AETH) \
	ROW(tr, READ_RESP_ONLY, READ_RESP | F_ONLY | F_AETH) \
	ROW(tr, ACK, F_ONLY | F_AETH) \
	ROW(tr, ATOMIC_ACK, DPV_ROCE_F_ATOMIC_OP | F_ONLY | F_AETH | F_ATOMIC_ACK) \
	ROW(tr, CMP_SWAP, F_REQ | DPV_ROCE_F_ATOMIC_OP | F_ONLY | F_ATOMIC | (x)) \
	ROW(tr, FETCH_ADD, F_REQ | DPV_ROCE_F_ATOMIC_OP | F_ONLY | F_ATOMIC | (x)) \
	ROW(tr, SEND_LAST_INV, SEND | F_LAST | F_IETH | (x)) \
	ROW(tr, SEND_ONLY_INV, SEND | F_ONLY | F_IETH | (x))

/* IBA 9.2 table 35. Left out on purpose: RD (no verbs QP type uses it), CNP 0x81 (congestion
 * notification, which rxe neither sends nor accepts) and the reserved values. */
static const struct dpv_roce_opinfo opcodes[256] = {
	SEND_WRITE_ROWS(RC, 0)
	RELIABLE_ROWS(RC, 0)
	SEND_WRITE_ROWS(UC, 0)
	ROW(UD, SEND_ONLY, SEND | F_ONLY | F_DETH)
	ROW(UD, SEND_ONLY_IMM, SEND | F_ONLY | F_DETH | F_IMM)
	SEND_WRITE_ROWS(XRC, F_XRCETH)
	RELIABLE_ROWS(XRC, F_XRCETH)
};

const struct dpv_roce_opinfo *dpv__roce_opinfo(uint8_t opcode)
{
	return &opcodes[opcode];
}

static uint8_t *put_be(uint8_t *p, uint64_t v, int n)
{
	for (int i = n - 1; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
	return p + n;
}

static uint64_t get_be(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static uint8_t *bth_encode(uint8_t *p, const struct dpv_roce_hdrs *h, uint32_t payload)
{
	uint8_t pad = (uint8_t)(-payload & 3);

	p[0] = h->bth.opcode;
	p[1] = (uint8_t)(h->bth.se << 7 | h->bth.mig << 6 | pad << 4);	/* TVer 0 */
	put_be(p + 2, h->bth.pkey, 2);
	p[4] = (uint8_t)(h->bth.fecn << 7 | h->bth.becn << 6);
	put_be(p + 5, h->bth.dqpn & DPV_ROCE_QPN_MASK, 3);
	p[8] = (uint8_t)(h->bth.ackreq << 7);
	put_be(p + 9, h->bth.psn & DPV_ROCE_PSN_MASK, 3);
	return p + DPV_ROCE_BTH_LEN;
}

/* The extension headers in IBA order: DETH, XRCETH, RETH, AtomicETH, AETH, AtomicAckETH,
 * ImmDt, IETH (no opcode carries two that would disagree on the order). */
static void ext_encode(uint8_t *p, uint32_t f, const struct dpv_roce_hdrs *h)
{
	if (f & F_DETH) {
		p = put_be(p, h->deth.qkey, 4);
		p = put_be(p, h->deth.sqpn & DPV_ROCE_QPN_MASK, 4);	/* 8 reserved bits */
	}
	if (f & F_XRCETH)
		p = put_be(p, h->xrceth.srqn & DPV_ROCE_QPN_MASK, 4);
	if (f & F_RETH) {
		p = put_be(p, h->reth.va, 8);
		p = put_be(p, h->reth.rkey, 4);
		p = put_be(p, h->reth.len, 4);
	}
	if (f & F_ATOMIC) {
		p = put_be(p, h->atomic.va, 8);
		p = put_be(p, h->atomic.rkey, 4);
		p = put_be(p, h->atomic.swap_add, 8);
		p = put_be(p, h->atomic.compare, 8);
	}
	if (f & F_AETH)
		p = put_be(p, (uint32_t)h->aeth.syndrome << 24 | (h->aeth.msn & 0xFFFFFF), 4);
	if (f & F_ATOMIC_ACK)
		p = put_be(p, h->atomic_ack.orig, 8);
	if (f & F_IMM)
		p = (uint8_t *)__builtin_memcpy(p, &h->imm, 4) + 4;
	if (f & F_IETH)
		put_be(p, h->ieth_rkey, 4);
}

int dpv__roce_hdrs_encode(uint8_t *buf, size_t cap, const struct dpv_roce_hdrs *h,
			 uint32_t payload)
{
	const struct dpv_roce_opinfo *op = dpv__roce_opinfo(h->bth.opcode);

	if (op->name == NULL || (payload != 0 && !(op->flags & F_PAYLOAD)))
		return -EINVAL;
	if (cap < op->hdr_len)
		return -ENOSPC;
	ext_encode(bth_encode(buf, h, payload), op->flags, h);
	return op->hdr_len;
}

static void bth_decode(const uint8_t *p, struct dpv_roce_hdrs *h)
{
	h->bth.opcode = p[0];
	h->bth.se = p[1] >> 7;
	h->bth.mig = p[1] >> 6 & 1;
	h->bth.pad = p[1] >> 4 & 3;
	h->bth.tver = p[1] & 0xF;
	h->bth.pkey = (uint16_t)get_be(p + 2, 2);
	h->bth.fecn = p[4] >> 7;
	h->bth.becn = p[4] >> 6 & 1;
	h->bth.dqpn = (uint32_t)get_be(p + 5, 3);
	h->bth.ackreq = p[8] >> 7;
	h->bth.psn = (uint32_t)get_be(p + 9, 3);
}

static void ext_decode(const uint8_t *p, uint32_t f, struct dpv_roce_hdrs *h)
{
	if (f & F_DETH) {
		h->deth.qkey = (uint32_t)get_be(p, 4);
		h->deth.sqpn = (uint32_t)get_be(p + 5, 3);
		p += DPV_ROCE_DETH_LEN;
	}
	if (f & F_XRCETH) {
		h->xrceth.srqn = (uint32_t)get_be(p + 1, 3);
		p += DPV_ROCE_XRCETH_LEN;
	}
	if (f & F_RETH) {
		h->reth.va = get_be(p, 8);
		h->reth.rkey = (uint32_t)get_be(p + 8, 4);
		h->reth.len = (uint32_t)get_be(p + 12, 4);
		p += DPV_ROCE_RETH_LEN;
	}
	if (f & F_ATOMIC) {
		h->atomic.va = get_be(p, 8);
		h->atomic.rkey = (uint32_t)get_be(p + 8, 4);
		h->atomic.swap_add = get_be(p + 12, 8);
		h->atomic.compare = get_be(p + 20, 8);
		p += DPV_ROCE_ATOMIC_LEN;
	}
	if (f & F_AETH) {
		h->aeth.syndrome = p[0];
		h->aeth.msn = (uint32_t)get_be(p + 1, 3);
		p += DPV_ROCE_AETH_LEN;
	}
	if (f & F_ATOMIC_ACK) {
		h->atomic_ack.orig = get_be(p, 8);
		p += DPV_ROCE_ATOMIC_ACK_LEN;
	}
	if (f & F_IMM) {
		__builtin_memcpy(&h->imm, p, 4);
		p += DPV_ROCE_IMM_LEN;
	}
	if (f & F_IETH)
		h->ieth_rkey = (uint32_t)get_be(p, 4);
}

/* What follows the headers: payload + pad + ICRC. Packets are whole 4-byte words; a pad needs
 * payload bytes to pad; opcodes without payload carry none (IBA 9.2.3, stricter than rxe,
 * which does not look). */
static int payload_check(uint32_t rest, uint8_t pad, uint32_t flags)
{
	if (!(flags & F_PAYLOAD))
		return rest == 0 && pad == 0 ? 0 : -EBADMSG;
	if (rest % 4 != 0 || pad > rest || (pad != 0 && rest == pad))
		return -EBADMSG;
	return 0;
}

int dpv__roce_hdrs_decode(const uint8_t *buf, size_t len, struct dpv_roce_hdrs *h,
			 uint32_t *hdr_len, uint32_t *payload)
{
	const struct dpv_roce_opinfo *op;
	uint32_t rest;
	int rc;

	if (len < DPV_ROCE_BTH_LEN + DPV_ROCE_ICRC_LEN)
		return -EBADMSG;
	bth_decode(buf, h);
	if (h->bth.tver != 0)
		return -EPROTO;
	op = dpv__roce_opinfo(h->bth.opcode);
	if (op->name == NULL)
		return -EPROTONOSUPPORT;
	if (len < (size_t)op->hdr_len + DPV_ROCE_ICRC_LEN)
		return -EBADMSG;
	/* rxe's pkey_match against the default P_Key: 0x7FFF (limited) or 0xFFFF (full) */
	if ((h->bth.pkey & 0x7FFF) != 0x7FFF)
		return -EACCES;
	rest = (uint32_t)(len - op->hdr_len - DPV_ROCE_ICRC_LEN);
	rc = payload_check(rest, h->bth.pad, op->flags);
	if (rc < 0)
		return rc;
	ext_decode(buf + DPV_ROCE_BTH_LEN, op->flags, h);
	*hdr_len = op->hdr_len;
	*payload = rest - h->bth.pad;
	return 0;
}

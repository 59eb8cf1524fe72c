/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers of the UD tests (test_ud, test_ud_wire): UD QPs to RTS, address handles, GIDs,
 * and the checks of what a receive buffer holds (GRH, guard bytes). */
#ifndef DPV_TEST_UD_H
#define DPV_TEST_UD_H

#include <arpa/inet.h>
#include <stdbool.h>

#include "dpv_test.h"

#define GUARD 0xA5               /* receive buffers are filled with it before each post */

static inline void gid_v4(union ibv_gid *g, const char *a)
{
	memset(g, 0, sizeof(*g));
	g->raw[10] = g->raw[11] = 0xff;
	inet_pton(AF_INET, a, &g->raw[12]);
}

static inline void gid_v6(union ibv_gid *g, const char *a)
{
	inet_pton(AF_INET6, a, g->raw);
}

static inline struct ibv_qp *ud_qp_create(struct ibv_pd *pd, struct ibv_cq *s, struct ibv_cq *r,
					  int sig_all)
{
	struct ibv_qp_init_attr init = {
		.send_cq = s, .recv_cq = r, .qp_type = IBV_QPT_UD, .sq_sig_all = sig_all,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64, .max_send_sge = 4,
			 .max_recv_sge = 4, .max_inline_data = 256 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &init);

	if (qp == NULL) {
		fprintf(stderr, "ibv_create_qp(UD): %s\n", strerror(errno));
		exit(1);
	}
	return qp;
}

static inline int ud_to_init(struct ibv_qp *qp, uint32_t qkey)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
				 .qkey = qkey };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
}

static inline int ud_to_state(struct ibv_qp *qp, enum ibv_qp_state s, int extra, uint32_t psn)
{
	struct ibv_qp_attr a = { .qp_state = s, .sq_psn = psn };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | extra);
}

/* A UD QP in RTS with Q_Key @qkey, its first PSN @psn. */
static inline struct ibv_qp *ud_qp_rts(struct ibv_pd *pd, struct ibv_cq *s, struct ibv_cq *r,
				       uint32_t qkey, uint32_t psn, int sig_all)
{
	struct ibv_qp *qp = ud_qp_create(pd, s, r, sig_all);

	if (ud_to_init(qp, qkey) || ud_to_state(qp, IBV_QPS_RTR, 0, 0) ||
	    ud_to_state(qp, IBV_QPS_RTS, IBV_QP_SQ_PSN, psn)) {
		fprintf(stderr, "UD QP to RTS: %s\n", strerror(errno));
		exit(1);
	}
	return qp;
}

static inline struct ibv_ah *ud_ah(struct ibv_pd *pd, int sgid_index, const union ibv_gid *dgid,
				   uint8_t tclass, uint32_t flow, uint8_t hop)
{
	struct ibv_ah_attr a = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = *dgid, .sgid_index = (uint8_t)sgid_index, .hop_limit = hop,
			 .traffic_class = tclass, .flow_label = flow },
	};

	return ibv_create_ah(pd, &a);
}

static inline void pattern(uint8_t *p, uint32_t len, uint8_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i * 7);
}

/* The Internet checksum's folded sum of @len bytes, added to @sum. */
static inline uint16_t sum16(const uint8_t *p, size_t len, uint32_t sum)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

static inline uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline bool gid_is_v4(const union ibv_gid *g)
{
	static const uint8_t prefix[12] = { [10] = 0xff, [11] = 0xff };

	return memcmp(g->raw, prefix, 12) == 0;
}

/* The GRH of a datagram from @src to @dst (GIDs of one family) carrying @len payload bytes
 * (+ 4 of immediate data), as the first 40 bytes of the receive buffer must hold it: for
 * IPv4 20 zero bytes, then the IPv4 header; else the IPv6 header. */
static inline void check_grh(const uint8_t *g, const union ibv_gid *src, const union ibv_gid *dst,
			     uint32_t len, bool imm, uint8_t tclass, uint32_t flow, uint8_t hop)
{
	uint32_t udp = 8 + 12 + 8 + (imm ? 4 : 0) + len + (-len & 3) + 4;
	static const uint8_t zero[20];

	if (gid_is_v4(src)) {
		const uint8_t *ip = g + 20;

		CHECK(memcmp(g, zero, 20) == 0, "IPv4 GRH: bytes 0-19 not zero");
		CHECK_EQ(ip[0], 0x45);
		CHECK_EQ(ip[1], tclass);
		CHECK_EQ(be16(ip + 2), 20 + udp);
		CHECK_EQ(be16(ip + 6), 0x4000);        /* DF */
		CHECK_EQ(ip[8], hop);
		CHECK_EQ(ip[9], 17);
		CHECK_EQ(sum16(ip, 20, 0), 0xffff);     /* header checksum right */
		CHECK(memcmp(ip + 12, src->raw + 12, 4) == 0, "IPv4 source");
		CHECK(memcmp(ip + 16, dst->raw + 12, 4) == 0, "IPv4 destination");
	} else {
		uint32_t vtf = (uint32_t)g[0] << 24 | (uint32_t)g[1] << 16 | (uint32_t)g[2] << 8 |
			       g[3];

		CHECK_EQ(vtf, 6u << 28 | (uint32_t)tclass << 20 | flow);
		CHECK_EQ(be16(g + 4), udp);
		CHECK_EQ(g[6], 17);
		CHECK_EQ(g[7], hop);
		CHECK(memcmp(g + 8, src->raw, 16) == 0, "IPv6 source");
		CHECK(memcmp(g + 24, dst->raw, 16) == 0, "IPv6 destination");
	}
}

/* Bytes [from, to) of @p still hold the guard pattern. */
static inline void check_guard(const uint8_t *p, size_t from, size_t to, const char *what)
{
	size_t bad = 0;

	for (size_t i = from; i < to; i++)
		bad += p[i] != GUARD;
	CHECK(bad == 0, "%s: %zu bytes written outside the datagram", what, bad);
}

#endif

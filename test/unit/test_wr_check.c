/* SPDX-License-Identifier: BSD-3-Clause */
/* The post-time checks of ibv_post_send(3) for all five QP types, from the man page's opcode
 * table (written out here, not taken from the library), and every row of the contract table
 * that does not need a transport. */
#include "dpv_test.h"
#include "wr_check.h"

enum { UD, UC, RC, XRC, RAW, NT };
static const enum ibv_qp_type qpt[NT] = { IBV_QPT_UD, IBV_QPT_UC, IBV_QPT_RC, IBV_QPT_XRC_SEND,
					   IBV_QPT_RAW_PACKET };

/* ibv_post_send(3): which QP types take each opcode */
static const struct { enum ibv_wr_opcode op; bool ok[NT]; } man_table[] = {
	{ IBV_WR_SEND,                 { 1, 1, 1, 1, 1 } },
	{ IBV_WR_SEND_WITH_IMM,        { 1, 1, 1, 1, 0 } },
	{ IBV_WR_RDMA_WRITE,           { 0, 1, 1, 1, 0 } },
	{ IBV_WR_RDMA_WRITE_WITH_IMM,  { 0, 1, 1, 1, 0 } },
	{ IBV_WR_RDMA_READ,            { 0, 0, 1, 1, 0 } },
	{ IBV_WR_ATOMIC_CMP_AND_SWP,   { 0, 0, 1, 1, 0 } },
	{ IBV_WR_ATOMIC_FETCH_AND_ADD, { 0, 0, 1, 1, 0 } },
	{ IBV_WR_LOCAL_INV,            { 0, 1, 1, 1, 0 } },
	{ IBV_WR_BIND_MW,              { 0, 1, 1, 1, 0 } },
	{ IBV_WR_SEND_WITH_INV,        { 0, 1, 1, 1, 0 } },
	{ IBV_WR_TSO,                  { 1, 0, 0, 0, 1 } },
	{ IBV_WR_DRIVER1,              { 0, 0, 0, 0, 0 } },
	{ IBV_WR_ATOMIC_WRITE,         { 0, 0, 0, 0, 0 } },
	{ 77,                          { 0, 0, 0, 0, 0 } },
};

static struct dpv_wr_limits lim(int t)
{
	return (struct dpv_wr_limits){ .qp_type = qpt[t], .max_send_sge = 4,
				       .max_inline_data = 64, .max_tso_header = 128,
				       .max_tso = 262144, .max_frame = 1514,
				       .ip_csum = qpt[t] == IBV_QPT_RAW_PACKET,
				       .frame_sends = qpt[t] == IBV_QPT_RAW_PACKET };
}

static uint8_t data[2048];

static void check_opcodes(void)
{
	struct ibv_sge sge = { (uintptr_t)data, 64, 1 };

	for (size_t r = 0; r < sizeof(man_table) / sizeof(man_table[0]); r++)
		for (int t = 0; t < NT; t++) {
			struct dpv_wr_limits l = lim(t);
			struct ibv_send_wr wr = { .opcode = man_table[r].op, .sg_list = &sge,
						  .num_sge = 1 };

			CHECK_EQ(dpv__wr_check_basic(&l, &wr, dpv__wr_length(&wr)), man_table[r].ok[t] ? 0 : -EINVAL);
		}
}

static int basic(int t, enum ibv_wr_opcode op, unsigned int flags, int num_sge, uint32_t len)
{
	struct dpv_wr_limits l = lim(t);
	struct ibv_sge sge[8];
	struct ibv_send_wr wr = { .opcode = op, .send_flags = flags, .sg_list = sge,
				  .num_sge = num_sge };

	for (int i = 0; i < 8; i++)
		sge[i] = (struct ibv_sge){ (uintptr_t)data, len, 1 };
	return dpv__wr_check_basic(&l, &wr, num_sge >= 0 && num_sge <= 8 ? dpv__wr_length(&wr) : 0);
}

static void check_flags(void)
{
	CHECK_EQ(basic(RAW, IBV_WR_SEND, 1 << 7, 1, 64), -EINVAL);           /* unknown flag */
	CHECK_EQ(basic(RC, IBV_WR_SEND, IBV_SEND_FENCE, 1, 64), 0);
	CHECK_EQ(basic(XRC, IBV_WR_SEND, IBV_SEND_FENCE, 1, 64), 0);
	CHECK_EQ(basic(UD, IBV_WR_SEND, IBV_SEND_FENCE, 1, 64), -EINVAL);
	CHECK_EQ(basic(UC, IBV_WR_SEND, IBV_SEND_FENCE, 1, 64), -EINVAL);
	CHECK_EQ(basic(RAW, IBV_WR_SEND, IBV_SEND_FENCE, 1, 64), -EINVAL);
	CHECK_EQ(basic(RC, IBV_WR_SEND_WITH_IMM, IBV_SEND_SOLICITED, 1, 64), 0);
	CHECK_EQ(basic(RC, IBV_WR_SEND_WITH_INV, IBV_SEND_SOLICITED, 1, 64), 0);
	CHECK_EQ(basic(RC, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_SEND_SOLICITED, 1, 64), 0);
	CHECK_EQ(basic(RC, IBV_WR_RDMA_WRITE, IBV_SEND_SOLICITED, 1, 64), -EINVAL);
	CHECK_EQ(basic(RC, IBV_WR_RDMA_READ, IBV_SEND_SOLICITED, 1, 64), -EINVAL);
	CHECK_EQ(basic(RAW, IBV_WR_TSO, IBV_SEND_SOLICITED, 1, 64), -EINVAL);
	CHECK_EQ(basic(RC, IBV_WR_RDMA_WRITE, IBV_SEND_INLINE, 1, 64), 0);
	CHECK_EQ(basic(RAW, IBV_WR_TSO, IBV_SEND_INLINE, 1, 64), 0);
	CHECK_EQ(basic(RC, IBV_WR_RDMA_READ, IBV_SEND_INLINE, 1, 64), -EINVAL);
	CHECK_EQ(basic(RC, IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_SEND_INLINE, 1, 8), -EINVAL);
	CHECK_EQ(basic(RC, IBV_WR_LOCAL_INV, IBV_SEND_INLINE, 1, 8), -EINVAL);
	CHECK_EQ(basic(RAW, IBV_WR_SEND, IBV_SEND_IP_CSUM, 1, 64), 0);
	CHECK_EQ(basic(UD, IBV_WR_SEND, IBV_SEND_IP_CSUM, 1, 64), -EINVAL);  /* no UD_IP_CSUM */
}

static void check_sizes(void)
{
	CHECK_EQ(basic(RAW, IBV_WR_SEND, 0, 4, 64), 0);
	CHECK_EQ(basic(RAW, IBV_WR_SEND, 0, 5, 64), -EINVAL);                /* > max_send_sge */
	CHECK_EQ(basic(RAW, IBV_WR_SEND, 0, -1, 64), -EINVAL);
	CHECK_EQ(basic(RAW, IBV_WR_SEND, 0, 0, 64), 0);                      /* shape says 14 */
	CHECK_EQ(basic(RAW, IBV_WR_SEND, IBV_SEND_INLINE, 1, 64), 0);         /* == max_inline */
	CHECK_EQ(basic(RAW, IBV_WR_SEND, IBV_SEND_INLINE, 1, 65), -EINVAL);
	CHECK_EQ(basic(RAW, IBV_WR_SEND, IBV_SEND_INLINE, 2, 32), 0);
	CHECK_EQ(basic(RAW, IBV_WR_SEND, IBV_SEND_INLINE, 3, 22), -EINVAL);   /* 66 in all */
	CHECK_EQ(basic(RAW, IBV_WR_SEND, 0, 1, 1 << 20), 0);                 /* not inline */
}

static int shape(int t, struct ibv_send_wr *wr, int vlans)
{
	struct dpv_wr_limits l = lim(t);
	uint8_t l2[22] = { 0 };

	for (int i = 0; i < vlans; i++) {
		l2[12 + 4 * i] = 0x81;
		l2[13 + 4 * i] = 0x00;
	}
	l2[12 + 4 * vlans] = 0x08;
	return dpv__wr_check_shape(&l, wr, dpv__wr_length(wr), l2, sizeof(l2), NULL);
}

static void check_frame_size(void)
{
	struct ibv_sge sge = { (uintptr_t)data, 0, 1 };
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND, .sg_list = &sge, .num_sge = 1 };
	const struct { uint32_t len; int vlans, rc; } rows[] = {
		{ 13, 0, -EINVAL }, { 14, 0, 0 }, { 1514, 0, 0 }, { 1515, 0, -EINVAL },
		{ 1518, 1, 0 }, { 1519, 1, -EINVAL }, { 1522, 2, 0 }, { 1523, 2, -EINVAL },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		sge.length = rows[i].len;
		CHECK(shape(RAW, &wr, rows[i].vlans) == rows[i].rc, "frame of %u bytes, %d tags",
		      rows[i].len, rows[i].vlans);
	}
	wr.num_sge = 0;
	CHECK_EQ(shape(RAW, &wr, 0), -EINVAL);          /* an empty frame */
	sge.length = 1 << 16;
	wr.num_sge = 1;
	CHECK_EQ(shape(UD, &wr, 0), 0);                  /* the RAW frame rule only */
}

static void check_tso(void)
{
	uint8_t hdr[54] = { [12] = 0x08, [13] = 0x00, [14] = 0x45, [23] = 6, [46] = 0x50 };
	struct ibv_sge sge = { (uintptr_t)data, 2048, 1 };
	struct ibv_send_wr wr = { .opcode = IBV_WR_TSO, .sg_list = &sge, .num_sge = 1,
				  .tso = { .hdr = hdr, .hdr_sz = 54, .mss = 1460 } };

	CHECK_EQ(shape(RAW, &wr, 0), 0);
	wr.tso.hdr = NULL;
	CHECK_EQ(shape(RAW, &wr, 0), -EINVAL);
	wr.tso.hdr = hdr;
	wr.tso.mss = 0;
	CHECK_EQ(shape(RAW, &wr, 0), -EINVAL);
	wr.tso.mss = 1460;
	wr.tso.hdr_sz = 13;
	CHECK_EQ(shape(RAW, &wr, 0), -EINVAL);
	wr.tso.hdr_sz = 53;
	CHECK_EQ(shape(RAW, &wr, 0), -EINVAL);            /* not exactly Eth/IPv4/TCP */
	wr.tso.hdr_sz = 54;
	hdr[23] = 17;
	CHECK_EQ(shape(RAW, &wr, 0), -EINVAL);            /* UDP */
	hdr[23] = 6;
	sge.length = 262145;
	CHECK_EQ(shape(RAW, &wr, 0), -EINVAL);            /* payload > max_tso */
	sge.length = 0;
	CHECK_EQ(shape(RAW, &wr, 0), 0);                  /* header only is fine */
	{
		struct dpv_wr_limits l = lim(RAW);

		l.max_tso_header = 40;
		CHECK_EQ(dpv__wr_check_shape(&l, &wr, dpv__wr_length(&wr), NULL, 0, NULL), -EINVAL);
	}
}

static void check_atomics(void)
{
	struct ibv_sge sge = { (uintptr_t)data, 8, 1 };
	struct ibv_send_wr wr = { .opcode = IBV_WR_ATOMIC_CMP_AND_SWP, .sg_list = &sge,
				  .num_sge = 1, .wr.atomic = { .remote_addr = 0x1000 } };

	CHECK_EQ(shape(RC, &wr, 0), 0);
	wr.wr.atomic.remote_addr = 0x1004;
	CHECK_EQ(shape(RC, &wr, 0), -EINVAL);
	wr.wr.atomic.remote_addr = 0x1000;
	sge.length = 4;
	CHECK_EQ(shape(RC, &wr, 0), -EINVAL);
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	sge.length = 16;
	CHECK_EQ(shape(XRC, &wr, 0), -EINVAL);
}

int main(void)
{
	check_opcodes();
	check_flags();
	check_sizes();
	check_frame_size();
	check_tso();
	check_atomics();
	CHECK_EQ(dpv__wr_wc_opcode(IBV_WR_TSO), IBV_WC_TSO);
	CHECK_EQ(dpv__wr_wc_opcode(IBV_WR_SEND), IBV_WC_SEND);
	CHECK_EQ(dpv__wr_wc_opcode(IBV_WR_RDMA_READ), IBV_WC_RDMA_READ);
	return test_done("wr_check");
}

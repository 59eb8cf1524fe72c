/* SPDX-License-Identifier: BSD-3-Clause */
/* The post-time checks of ibv_post_send(3), one table for every QP type. Pure logic (no DPDK,
 * no QP state): tests call it directly. Functions return 0 or a negative errno. */
#ifndef DPV_WR_CHECK_H
#define DPV_WR_CHECK_H

#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>

struct dpv_hdr_info;

struct dpv_wr_limits {
	enum ibv_qp_type qp_type;
	uint32_t max_send_sge;
	uint32_t max_inline_data;
	uint32_t max_tso_header;
	uint32_t max_tso;          /* largest TSO payload */
	uint32_t max_frame;        /* MTU + Ethernet header, without VLAN tags */
	bool ip_csum;              /* the device offers IP_CSUM for this QP type */
	bool frame_sends;          /* a SEND is one whole Ethernet frame (the RAW_PACKET transport
				    * sets it): its size is checked against max_frame */
};

/* Opcode, flags and gather-list checks (the rows before "SQ full"). @len is
 * dpv__wr_length(wr), valid only when the gather list is (num_sge within bounds). */
int dpv__wr_check_basic(const struct dpv_wr_limits *lim, const struct ibv_send_wr *wr,
		       uint64_t len);

/* Frame size, TSO header and atomic operand checks (the rows after "SQ full"). @l2: the
 * frame's first @l2_len bytes (VLAN tags), or NULL. A TSO header parsed goes to @tso_info. */

int dpv__wr_check_shape(const struct dpv_wr_limits *lim, const struct ibv_send_wr *wr,
		       uint64_t len, const uint8_t *l2, uint32_t l2_len,
		       struct dpv_hdr_info *tso_info);

/* The completion opcode of a send opcode (IBV_WC_SEND, IBV_WC_TSO ...). */
enum ibv_wc_opcode dpv__wr_wc_opcode(enum ibv_wr_opcode opcode);

/* The IBV_QP_EX_WITH_* operations (ibv_wr_* builders) a QP type takes: the opcode table's
 * column for the type. */
uint64_t dpv__wr_send_ops(enum ibv_qp_type qp_type);

/* Bytes in the WR's gather list. */
uint64_t dpv__wr_length(const struct ibv_send_wr *wr);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* The QP state machine: which transitions exist, and for each QP type which attributes a
 * transition requires and which it allows (the IB spec's table, as the Linux kernel's
 * ib_modify_qp_is_ok() applies it). One table for every transport. */
#include <errno.h>

#include "verbs_qp.h"

enum { T_UD, T_UC, T_RC, T_RAW, T_XRC, T_XRC_TGT, T_MAX };

struct transition {
	bool valid;
	int req[T_MAX];
	int opt[T_MAX];
};

#define S(x) IBV_QPS_ ## x
#define A(x) IBV_QP_ ## x

static const struct transition table[IBV_QPS_ERR + 1][IBV_QPS_ERR + 1] = {
	[S(RESET)] = {
		[S(RESET)] = { .valid = true },
		[S(ERR)] = { .valid = true },
		[S(INIT)] = { .valid = true, .req = {
			[T_UD] = A(PKEY_INDEX) | A(PORT) | A(QKEY),
			[T_RAW] = A(PORT),
			[T_UC] = A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS),
			[T_RC] = A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS),
			[T_XRC] = A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS),
			[T_XRC_TGT] = A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS) } },
	},
	[S(INIT)] = {
		[S(RESET)] = { .valid = true },
		[S(ERR)] = { .valid = true },
		[S(INIT)] = { .valid = true, .opt = {
			[T_UD] = A(PKEY_INDEX) | A(PORT) | A(QKEY),
			[T_UC] = A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS),
			[T_RC] = A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS),
			[T_XRC] = A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS),
			[T_XRC_TGT] = A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS) } },
		[S(RTR)] = { .valid = true, .req = {
			[T_UC] = A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN),
			[T_RC] = A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN) |
				 A(MAX_DEST_RD_ATOMIC) | A(MIN_RNR_TIMER),
			[T_XRC] = A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN),
			[T_XRC_TGT] = A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN) |
				      A(MAX_DEST_RD_ATOMIC) | A(MIN_RNR_TIMER) },
			.opt = {
			[T_UD] = A(PKEY_INDEX) | A(QKEY),
			[T_UC] = A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX),
			[T_RC] = A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX),
			[T_XRC] = A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX),
			[T_XRC_TGT] = A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX) } },
	},
	[S(RTR)] = {
		[S(RESET)] = { .valid = true },
		[S(ERR)] = { .valid = true },
		[S(RTS)] = { .valid = true, .req = {
			[T_UD] = A(SQ_PSN),
			[T_UC] = A(SQ_PSN),
			[T_RC] = A(TIMEOUT) | A(RETRY_CNT) | A(RNR_RETRY) | A(SQ_PSN) |
				 A(MAX_QP_RD_ATOMIC),
			[T_XRC] = A(TIMEOUT) | A(RETRY_CNT) | A(RNR_RETRY) | A(SQ_PSN) |
				  A(MAX_QP_RD_ATOMIC),
			[T_XRC_TGT] = A(TIMEOUT) | A(SQ_PSN) },
			.opt = {
			[T_UD] = A(CUR_STATE) | A(QKEY),
			[T_UC] = A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) | A(PATH_MIG_STATE),
			[T_RC] = A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) | A(MIN_RNR_TIMER) |
				 A(PATH_MIG_STATE),
			[T_XRC] = A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) | A(PATH_MIG_STATE),
			[T_XRC_TGT] = A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) |
				      A(MIN_RNR_TIMER) | A(PATH_MIG_STATE),
			[T_RAW] = A(RATE_LIMIT) } },
	},
	[S(RTS)] = {
		[S(RESET)] = { .valid = true },
		[S(ERR)] = { .valid = true },
		[S(RTS)] = { .valid = true, .opt = {
			[T_UD] = A(CUR_STATE) | A(QKEY),
			[T_UC] = A(CUR_STATE) | A(ACCESS_FLAGS) | A(ALT_PATH) | A(PATH_MIG_STATE),
			[T_RC] = A(CUR_STATE) | A(ACCESS_FLAGS) | A(ALT_PATH) | A(PATH_MIG_STATE) |
				 A(MIN_RNR_TIMER),
			[T_XRC] = A(CUR_STATE) | A(ACCESS_FLAGS) | A(ALT_PATH) | A(PATH_MIG_STATE),
			[T_XRC_TGT] = A(CUR_STATE) | A(ACCESS_FLAGS) | A(ALT_PATH) |
				      A(PATH_MIG_STATE) | A(MIN_RNR_TIMER),
			[T_RAW] = A(RATE_LIMIT) } },
		[S(SQD)] = { .valid = true, .opt = {
			[T_UD] = A(EN_SQD_ASYNC_NOTIFY),
			[T_UC] = A(EN_SQD_ASYNC_NOTIFY),
			[T_RC] = A(EN_SQD_ASYNC_NOTIFY),
			[T_XRC] = A(EN_SQD_ASYNC_NOTIFY),
			[T_XRC_TGT] = A(EN_SQD_ASYNC_NOTIFY) } },
	},
	[S(SQD)] = {
		[S(RESET)] = { .valid = true },
		[S(ERR)] = { .valid = true },
		[S(RTS)] = { .valid = true, .opt = {
			[T_UD] = A(CUR_STATE) | A(QKEY),
			[T_UC] = A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) | A(PATH_MIG_STATE),
			[T_RC] = A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) | A(MIN_RNR_TIMER) |
				 A(PATH_MIG_STATE),
			[T_XRC] = A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) | A(PATH_MIG_STATE),
			[T_XRC_TGT] = A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) |
				      A(MIN_RNR_TIMER) | A(PATH_MIG_STATE) } },
		[S(SQD)] = { .valid = true, .opt = {
			[T_UD] = A(PKEY_INDEX) | A(QKEY),
			[T_UC] = A(AV) | A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX) |
				 A(PATH_MIG_STATE),
			[T_RC] = A(PORT) | A(AV) | A(TIMEOUT) | A(RETRY_CNT) | A(RNR_RETRY) |
				 A(MAX_QP_RD_ATOMIC) | A(MAX_DEST_RD_ATOMIC) | A(ALT_PATH) |
				 A(ACCESS_FLAGS) | A(PKEY_INDEX) | A(MIN_RNR_TIMER) | A(PATH_MIG_STATE),
			[T_XRC] = A(PORT) | A(AV) | A(TIMEOUT) | A(RETRY_CNT) | A(RNR_RETRY) |
				  A(MAX_QP_RD_ATOMIC) | A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX) |
				  A(PATH_MIG_STATE),
			[T_XRC_TGT] = A(PORT) | A(AV) | A(TIMEOUT) | A(MAX_DEST_RD_ATOMIC) |
				      A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX) |
				      A(MIN_RNR_TIMER) | A(PATH_MIG_STATE) } },
	},
	[S(SQE)] = {
		[S(RESET)] = { .valid = true },
		[S(ERR)] = { .valid = true },
		[S(RTS)] = { .valid = true, .opt = {
			[T_UD] = A(CUR_STATE) | A(QKEY),
			[T_UC] = A(CUR_STATE) | A(ACCESS_FLAGS) } },
	},
	[S(ERR)] = {
		[S(RESET)] = { .valid = true },
		[S(ERR)] = { .valid = true },
	},
};

static int type_index(enum ibv_qp_type type)
{
	switch (type) {
	case IBV_QPT_UD: return T_UD;
	case IBV_QPT_UC: return T_UC;
	case IBV_QPT_RC: return T_RC;
	case IBV_QPT_RAW_PACKET: return T_RAW;
	case IBV_QPT_XRC_SEND: return T_XRC;
	case IBV_QPT_XRC_RECV: return T_XRC_TGT;
	default: return -1;
	}
}

int dpv__qp_check_transition(enum ibv_qp_type type, enum ibv_qp_state cur,
			    enum ibv_qp_state next, int mask)
{
	const struct transition *t;
	int ti = type_index(type), req, opt;

	if (DPV_WARN_ONCE(ti < 0, "state table: QP type %d", type))   /* created: a type we have */
		return -EINVAL;
	if (cur < IBV_QPS_RESET || cur > IBV_QPS_ERR || next < IBV_QPS_RESET ||
	    next > IBV_QPS_ERR)
		return -EINVAL;
	if ((mask & IBV_QP_CUR_STATE) && cur != IBV_QPS_RTR && cur != IBV_QPS_RTS &&
	    cur != IBV_QPS_SQD && cur != IBV_QPS_SQE)
		return -EINVAL;
	t = &table[cur][next];
	if (!t->valid)
		return -EINVAL;
	req = t->req[ti];
	opt = t->opt[ti];
	if ((mask & req) != req || (mask & ~(req | opt | IBV_QP_STATE)) != 0)
		return -EINVAL;
	return 0;
}

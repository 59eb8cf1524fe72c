/* SPDX-License-Identifier: BSD-3-Clause */
/* The context's op tables. Every slot is filled: what dpverbs does not implement (yet) answers
 * EOPNOTSUPP, as rdma-core's dummy ops do, so neither the core nor verbs.h's inline functions
 * ever meet a NULL pointer. */
#include <errno.h>

#include "verbs_device.h"
#include "verbs_pd.h"
#include "verbs_mr.h"
#include "verbs_cq.h"
#include "verbs_ring.h"
#include "verbs_qp.h"
#include "verbs_srq.h"

#define UNSUP_INT(name, ...) \
	static int name(__VA_ARGS__) { return EOPNOTSUPP; }
#define UNSUP_PTR(type, name, ...) \
	static type *name(__VA_ARGS__) { errno = EOPNOTSUPP; return NULL; }

UNSUP_INT(unsup_advise_mr, struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags,
	  struct ibv_sge *sg_list, uint32_t num_sges)
UNSUP_PTR(struct ibv_mr, unsup_alloc_null_mr, struct ibv_pd *pd)
UNSUP_INT(unsup_read_counters, struct ibv_counters *c, uint64_t *v, uint32_t n, uint32_t flags)
UNSUP_INT(unsup_attach_counters_point_flow, struct ibv_counters *c,
	  struct ibv_counter_attach_attr *attr, struct ibv_flow *flow)
UNSUP_PTR(struct ibv_counters, unsup_create_counters, struct ibv_context *context,
	  struct ibv_counters_init_attr *init_attr)
UNSUP_INT(unsup_destroy_counters, struct ibv_counters *c)
UNSUP_PTR(struct ibv_mr, unsup_reg_dm_mr, struct ibv_pd *pd, struct ibv_dm *dm, uint64_t off,
	  size_t length, unsigned int access)
UNSUP_PTR(struct ibv_dm, unsup_alloc_dm, struct ibv_context *context, struct ibv_alloc_dm_attr *a)
UNSUP_INT(unsup_free_dm, struct ibv_dm *dm)
UNSUP_INT(unsup_modify_flow_action_esp, struct ibv_flow_action *action,
	  struct ibv_flow_action_esp_attr *attr)
UNSUP_INT(unsup_destroy_flow_action, struct ibv_flow_action *action)
UNSUP_PTR(struct ibv_flow_action, unsup_create_flow_action_esp, struct ibv_context *context,
	  struct ibv_flow_action_esp_attr *attr)
UNSUP_INT(unsup_modify_cq, struct ibv_cq *cq, struct ibv_modify_cq_attr *attr)
UNSUP_INT(unsup_post_srq_ops, struct ibv_srq *srq, struct ibv_ops_wr *op, struct ibv_ops_wr **bad)
UNSUP_INT(unsup_destroy_rwq_ind_table, struct ibv_rwq_ind_table *t)
UNSUP_PTR(struct ibv_rwq_ind_table, unsup_create_rwq_ind_table, struct ibv_context *context,
	  struct ibv_rwq_ind_table_init_attr *init_attr)
UNSUP_INT(unsup_destroy_flow, struct ibv_flow *flow)
UNSUP_PTR(struct ibv_flow, unsup_create_flow, struct ibv_qp *qp, struct ibv_flow_attr *attr)
UNSUP_INT(unsup_destroy_wq, struct ibv_wq *wq)
UNSUP_INT(unsup_modify_wq, struct ibv_wq *wq, struct ibv_wq_attr *attr)
UNSUP_PTR(struct ibv_wq, unsup_create_wq, struct ibv_context *context, struct ibv_wq_init_attr *a)
UNSUP_INT(unsup_compat_query_device, struct ibv_context *context, struct ibv_device_attr *attr)
UNSUP_INT(unsup_compat_query_port, struct ibv_context *context, uint8_t port,
	  struct _compat_ibv_port_attr *attr)
UNSUP_PTR(void, unsup_compat, void)
static void unsup_placeholder(void) { }


void dpv__context_ops_init(struct verbs_context *v)
{
	struct ibv_context_ops *o = &v->context.ops;

	o->_compat_query_device = unsup_compat_query_device;
	o->_compat_query_port = unsup_compat_query_port;
	o->_compat_alloc_pd = o->_compat_dealloc_pd = o->_compat_reg_mr = unsup_compat;
	o->_compat_rereg_mr = o->_compat_dereg_mr = o->_compat_create_cq = unsup_compat;
	o->_compat_cq_event = o->_compat_resize_cq = o->_compat_destroy_cq = unsup_compat;
	o->_compat_create_srq = o->_compat_modify_srq = o->_compat_query_srq = unsup_compat;
	o->_compat_destroy_srq = o->_compat_create_qp = o->_compat_query_qp = unsup_compat;
	o->_compat_modify_qp = o->_compat_destroy_qp = o->_compat_create_ah = unsup_compat;
	o->_compat_destroy_ah = o->_compat_attach_mcast = o->_compat_detach_mcast = unsup_compat;
	o->_compat_async_event = unsup_compat;
	o->alloc_mw = dpv_alloc_mw;
	o->bind_mw = dpv_bind_mw;
	o->dealloc_mw = dpv_dealloc_mw;
	o->poll_cq = dpv_poll_cq;
	o->req_notify_cq = dpv_req_notify_cq;
	o->post_srq_recv = dpv_post_srq_recv;
	o->post_send = dpv_post_send;
	o->post_recv = dpv_post_recv;

	v->query_port = dpv_query_port;
	v->advise_mr = unsup_advise_mr;
	v->alloc_null_mr = unsup_alloc_null_mr;
	v->read_counters = unsup_read_counters;
	v->attach_counters_point_flow = unsup_attach_counters_point_flow;
	v->create_counters = unsup_create_counters;
	v->destroy_counters = unsup_destroy_counters;
	v->reg_dm_mr = unsup_reg_dm_mr;
	v->alloc_dm = unsup_alloc_dm;
	v->free_dm = unsup_free_dm;
	v->modify_flow_action_esp = unsup_modify_flow_action_esp;
	v->destroy_flow_action = unsup_destroy_flow_action;
	v->create_flow_action_esp = unsup_create_flow_action_esp;
	v->modify_qp_rate_limit = dpv_modify_qp_rate_limit;
	v->alloc_parent_domain = dpv_alloc_parent_domain;
	v->dealloc_td = dpv_dealloc_td;
	v->alloc_td = dpv_alloc_td;
	v->modify_cq = unsup_modify_cq;
	v->post_srq_ops = unsup_post_srq_ops;
	v->destroy_rwq_ind_table = unsup_destroy_rwq_ind_table;
	v->create_rwq_ind_table = unsup_create_rwq_ind_table;
	v->destroy_wq = unsup_destroy_wq;
	v->modify_wq = unsup_modify_wq;
	v->create_wq = unsup_create_wq;
	v->query_rt_values = dpv_query_rt_values;
	v->create_cq_ex = dpv_create_cq_ex;
	v->query_device_ex = dpv_query_device_ex;
	v->ibv_destroy_flow = unsup_destroy_flow;   /* RAW's context_init hook sets both */
	v->ABI_placeholder2 = unsup_placeholder;
	v->ibv_create_flow = unsup_create_flow;
	v->ABI_placeholder1 = unsup_placeholder;
	v->open_qp = dpv_open_qp;
	v->create_qp_ex = dpv_create_qp_ex;
	v->get_srq_num = dpv_get_srq_num;
	v->create_srq_ex = dpv_create_srq_ex;
	v->open_xrcd = dpv_open_xrcd;
	v->close_xrcd = dpv_close_xrcd;
}

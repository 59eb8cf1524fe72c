/* SPDX-License-Identifier: BSD-3-Clause */
/* The QPs and flows the command line made, by id (an index that `show`, `post send` and
 * `flow create` name). Each QP has a CQ of its own (same id) for its send and receive
 * completions. A QP comes up in RTS; `qp modify` walks the state machine by hand. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "testpmd.h"

static const char *const state_names[] = {
	[IBV_QPS_RESET] = "reset", [IBV_QPS_INIT] = "init", [IBV_QPS_RTR] = "rtr",
	[IBV_QPS_RTS] = "rts", [IBV_QPS_SQD] = "sqd", [IBV_QPS_SQE] = "sqe", [IBV_QPS_ERR] = "err",
};

const char *qp_state_name(enum ibv_qp_state s)
{
	return (unsigned int)s <= IBV_QPS_ERR ? state_names[s] : "?";
}

int qp_state_parse(const char *s, enum ibv_qp_state *out)
{
	for (int i = 0; i <= IBV_QPS_ERR; i++)
		if (strcasecmp(s, state_names[i]) == 0) {
			*out = (enum ibv_qp_state)i;
			return 0;
		}
	return -EINVAL;
}

/* One ibv_modify_qp to @s with the attributes a RAW_PACKET QP needs for it. */
int qp_to_state(struct ibv_qp *qp, enum ibv_qp_state s)
{
	struct ibv_qp_attr a = { .qp_state = s, .port_num = 1 };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | (s == IBV_QPS_INIT ? IBV_QP_PORT : 0));
}

struct tp_qp *qp_get(unsigned int id)
{
	if (id < TP_MAX_QPS && tp.qp[id].used)
		return &tp.qp[id];
	tp_error("there is no QP %u: qp create raw <port> makes one (show qp lists them)", id);
	return NULL;
}

static int qp_slot(void)
{
	for (int i = 0; i < TP_MAX_QPS; i++)
		if (!tp.qp[i].used)
			return i;
	return tp_error("all %d QP ids are taken: qp destroy <id> first", TP_MAX_QPS);
}

static struct ibv_qp *raw_qp_new(struct tp_port *pt, struct ibv_cq *cq, const struct qp_opts *o)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_RAW_PACKET, .send_cq = cq, .recv_cq = cq, .pd = pt->pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.cap = { .max_send_wr = o->sq, .max_recv_wr = o->rq, .max_send_sge = TP_MAX_TXSEGS,
			 .max_recv_sge = 1, .max_inline_data = o->inline_size },
	};

	if (o->max_tso_header) {
		a.comp_mask |= IBV_QP_INIT_ATTR_MAX_TSO_HEADER;
		a.max_tso_header = o->max_tso_header;
	}
	return ibv_create_qp_ex(pt->ctx, &a);
}

/* A RAW_PACKET QP in RTS and its CQ; returns the id, or a negative errno (printed). */
int qp_create(unsigned int port, const struct qp_opts *o, bool fwd)
{
	struct tp_port *pt = port_get(port);
	int id = pt ? qp_slot() : -EINVAL, e = 0;
	struct ibv_cq *cq = NULL;
	struct ibv_qp *qp = NULL;
	const char *step = "ibv_create_cq";

	if (id < 0)
		return id;
	cq = ibv_create_cq(pt->ctx, (int)(o->sq + o->rq + 1), NULL, NULL, 0);
	if (cq != NULL) {
		step = "ibv_create_qp_ex";
		qp = raw_qp_new(pt, cq, o);
	}
	if (qp != NULL && o->progress >= 0) {
		step = "dpv_qp_set_progress";
		e = dpv_qp_set_progress(qp, (enum dpv_progress)o->progress);
	}
	if (qp != NULL && e == 0) {
		step = "ibv_modify_qp to INIT, RTR, RTS";
		e = qp_to_state(qp, IBV_QPS_INIT);
		e = e ? e : qp_to_state(qp, IBV_QPS_RTR);
		e = e ? e : qp_to_state(qp, IBV_QPS_RTS);
	} else {
		e = errno;
	}
	if (e != 0) {
		if (qp != NULL)
			ibv_destroy_qp(qp);
		if (cq != NULL)
			ibv_destroy_cq(cq);
		return tp_error("qp create on port %u: %s failed: %s (%s); sq, rq and inline must "
				"be within show device's limits", port, step, errno_name(e),
				strerror(e));
	}
	tp.qp[id] = (struct tp_qp){ .used = true, .fwd = fwd, .port = (int)port, .qp = qp,
				    .cq = cq, .sq = o->sq, .rq = o->rq,
				    .inline_size = o->inline_size, .next_wr_id = 1 };
	return id;
}

int qp_destroy(unsigned int id)
{
	struct tp_qp *q = &tp.qp[id];
	int rc;

	for (int i = 0; i < TP_MAX_FLOWS; i++)
		if (tp.flow[i].used && tp.flow[i].qp == (int)id) {
			ibv_destroy_flow(tp.flow[i].flow);
			tp.flow[i].used = false;
		}
	rc = ibv_destroy_qp(q->qp);
	if (rc != 0)
		return tp_error("ibv_destroy_qp(QP %u): %s", id, strerror(rc));
	if (q->rmr != NULL)
		ibv_dereg_mr(q->rmr);
	free(q->rbuf);
	q->rmr = NULL;
	q->rbuf = NULL;
	rc = ibv_destroy_cq(q->cq);
	q->used = false;
	if (rc != 0)
		return tp_error("ibv_destroy_cq(CQ %u): %s", id, strerror(rc));
	return 0;
}

void objects_destroy_port(unsigned int port)
{
	for (unsigned int i = 0; i < TP_MAX_QPS; i++)
		if (tp.qp[i].used && tp.qp[i].port == (int)port)
			qp_destroy(i);
}

int flow_add(unsigned int qp, struct ibv_flow_attr *attr, const char *text)
{
	struct tp_qp *q = qp_get(qp);
	struct ibv_flow *f;

	if (q == NULL)
		return -EINVAL;
	for (int i = 0; i < TP_MAX_FLOWS; i++) {
		if (tp.flow[i].used)
			continue;
		f = ibv_create_flow(q->qp, attr);
		if (f == NULL)
			return tp_error("ibv_create_flow on QP %u: %s (%s)", qp, errno_name(errno),
					strerror(errno));
		tp.flow[i] = (struct tp_flow){ .used = true, .qp = (int)qp, .flow = f };
		snprintf(tp.flow[i].text, sizeof(tp.flow[i].text), "%s", text);
		return i;
	}
	return tp_error("all %d flow ids are taken: flow destroy <id> first", TP_MAX_FLOWS);
}

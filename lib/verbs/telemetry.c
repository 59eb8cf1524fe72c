/* SPDX-License-Identifier: BSD-3-Clause */
/* rte_telemetry endpoints, so that dpdk-telemetry.py shows dpverbs live:
 *   /dpverbs/ports         every open device: its port's counters and service lcore
 *   /dpverbs/qp[,<qpn>]    the QP numbers; one QP: state, progress mode, queue depths, counters
 *   /dpverbs/cq[,<id>]     the CQ ids; one CQ: size, entries waiting, completions, overrun
 *   /dpverbs/lcores        the service lcores: socket, running, ports served, loop rounds
 * Counters are read while other threads write them: each value is one that was current. */
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_telemetry.h>

#include "dpv_engine.h"
#include "verbs_base.h"
#include "verbs_device.h"
#include "verbs_cq.h"
#include "verbs_qp.h"
#include "verbs_progress.h"
#include "verbs_telemetry.h"

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static TAILQ_HEAD(, dpv_qp) all_qps = TAILQ_HEAD_INITIALIZER(all_qps);
static TAILQ_HEAD(, dpv_cq) all_cqs = TAILQ_HEAD_INITIALIZER(all_cqs);
static uint32_t next_cq_id;

void dpv__telemetry_qp(struct dpv_qp *qp, bool add)
{
	pthread_mutex_lock(&registry_lock);
	if (add)
		TAILQ_INSERT_TAIL(&all_qps, qp, all_next);
	else
		TAILQ_REMOVE(&all_qps, qp, all_next);
	pthread_mutex_unlock(&registry_lock);
}

void dpv__telemetry_cq(struct dpv_cq *cq, bool add)
{
	pthread_mutex_lock(&registry_lock);
	if (add) {
		cq->id = next_cq_id++;
		TAILQ_INSERT_TAIL(&all_cqs, cq, all_next);
	} else {
		TAILQ_REMOVE(&all_cqs, cq, all_next);
	}
	pthread_mutex_unlock(&registry_lock);
}

/* The registry's QPs and CQs of one context, for ibv_close_device (context_objects.c): a
 * malloc'ed array of *n entries, NULL when there are none or no memory. */
struct dpv_qp **dpv__registry_qps(struct dpv_context *ctx, unsigned int *n)
{
	struct dpv_qp *qp, **v = NULL;
	unsigned int cap = 0;

	*n = 0;
	pthread_mutex_lock(&registry_lock);
	TAILQ_FOREACH(qp, &all_qps, all_next)
		cap += qp->ctx == ctx;
	v = cap != 0 ? malloc(cap * sizeof(*v)) : NULL;
	TAILQ_FOREACH(qp, &all_qps, all_next)
		if (v != NULL && qp->ctx == ctx)
			v[(*n)++] = qp;
	pthread_mutex_unlock(&registry_lock);
	return v;
}

struct dpv_cq **dpv__registry_cqs(struct dpv_context *ctx, unsigned int *n)
{
	struct dpv_cq *cq, **v = NULL;
	unsigned int cap = 0;

	*n = 0;
	pthread_mutex_lock(&registry_lock);
	TAILQ_FOREACH(cq, &all_cqs, all_next)
		cap += to_dctx(cq->ibcq.context) == ctx;
	v = cap != 0 ? malloc(cap * sizeof(*v)) : NULL;
	TAILQ_FOREACH(cq, &all_cqs, all_next)
		if (v != NULL && to_dctx(cq->ibcq.context) == ctx)
			v[(*n)++] = cq;
	pthread_mutex_unlock(&registry_lock);
	return v;
}

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

static const char *state_name(enum ibv_qp_state s)
{
	static const char *const names[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };

	return (unsigned int)s < RTE_DIM(names) ? names[s] : "unknown";
}

/* One QP, from the same snapshot dpv_query_qp_counters gives (taken under its locks). */
static void qp_dict(struct rte_tel_data *d, struct dpv_qp *qp)
{
	struct dpv_qp_counters c;

	dpv_query_qp_counters(&qp->ibqp, &c);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "qp_num", qp->ibqp.qp_num);
	rte_tel_data_add_dict_string(d, "device", qp->ctx->dev->ibdev.name);
	rte_tel_data_add_dict_string(d, "state", state_name(c.state));
	rte_tel_data_add_dict_string(d, "progress",
				     c.progress == DPV_PROGRESS_SERVICE ? "service" : "direct");
	rte_tel_data_add_dict_int(d, "service_lcore", c.service_lcore);
	rte_tel_data_add_dict_u64(d, "sq_size", c.sq_size);
	rte_tel_data_add_dict_u64(d, "sq_queued", c.sq_unsent);         /* not yet at the port */
	rte_tel_data_add_dict_u64(d, "sq_at_port", c.sq_in_flight);     /* the port holds them */
	rte_tel_data_add_dict_u64(d, "sq_outstanding", c.sq_used);
	rte_tel_data_add_dict_u64(d, "posted", c.tx_wrs);
	rte_tel_data_add_dict_u64(d, "posted_bytes", c.tx_bytes);
	rte_tel_data_add_dict_u64(d, "completed", c.tx_completed);
	rte_tel_data_add_dict_u64(d, "frames", c.tx_frames);
	rte_tel_data_add_dict_u64(d, "errors", c.tx_errors);
	rte_tel_data_add_dict_u64(d, "rq_size", c.rq_size);
	rte_tel_data_add_dict_u64(d, "rq_posted", c.rq_posted);
	rte_tel_data_add_dict_u64(d, "recv_posted", c.rx_wrs);
	rte_tel_data_add_dict_u64(d, "recv_completed", c.rx_completed);
	if (dpv__cycles()) {
		rte_tel_data_add_dict_u64(d, "cycles_validate", c.cycles_validate);
		rte_tel_data_add_dict_u64(d, "cycles_build", c.cycles_build);
		rte_tel_data_add_dict_u64(d, "cycles_burst", c.cycles_burst);
		rte_tel_data_add_dict_u64(d, "cycles_complete", c.cycles_complete);
	}
}

/* A registry list as telemetry shows it: the ids of every object (no parameter), or the
 * dictionary of the object whose id is the parameter. Objects are linked through a TAILQ
 * entry at @next_off (its first member is the next pointer); under registry_lock. */
struct registry_view {
	size_t next_off;
	uint32_t (*id_of)(const void *obj);
	void (*dict)(struct rte_tel_data *d, void *obj);
};

static int list_or_lookup(const struct registry_view *v, void *first, const char *params,
			  struct rte_tel_data *d)
{
	uint32_t want;

	dpv__mutex_assert_held(&registry_lock);
#define NEXT(o) (*(void **)((char *)(o) + v->next_off))
	if (params == NULL || *params == '\0') {
		rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
		for (void *o = first; o != NULL; o = NEXT(o))
			rte_tel_data_add_array_int(d, (int)v->id_of(o));
		return 0;
	}
	want = (uint32_t)strtoul(params, NULL, 0);
	for (void *o = first; o != NULL; o = NEXT(o))
		if (v->id_of(o) == want) {
			v->dict(d, o);
			return 0;
		}
	return -EINVAL;
#undef NEXT
}

static uint32_t qp_id(const void *o)
{
	return ((const struct dpv_qp *)o)->ibqp.qp_num;
}

static void qp_view(struct rte_tel_data *d, void *o)
{
	qp_dict(d, o);
}

/* One CQ, from dpv_query_cq_counters' snapshot and the completions it wrote. */
static void cq_dict(struct rte_tel_data *d, struct dpv_cq *cq)
{
	struct dpv_cq_counters c;

	dpv_query_cq_counters(&cq->ibcq, &c);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "id", cq->id);
	rte_tel_data_add_dict_u64(d, "cqe", c.size);
	rte_tel_data_add_dict_u64(d, "entries", c.pending);
	rte_tel_data_add_dict_u64(d, "completions", LOAD(cq->completions));
	rte_tel_data_add_dict_u64(d, "qps", c.nb_qp);
	rte_tel_data_add_dict_int(d, "overrun", c.overrun);
	rte_tel_data_add_dict_int(d, "channel", cq->ibcq.channel != NULL);
}

static uint32_t cq_id(const void *o)
{
	return ((const struct dpv_cq *)o)->id;
}

static void cq_view(struct rte_tel_data *d, void *o)
{
	cq_dict(d, o);
}

/* /dpverbs/qp and /dpverbs/cq: the registry the command names. */
static int tel_registry(const char *cmd, const char *params, struct rte_tel_data *d)
{
	static const struct registry_view qps = { offsetof(struct dpv_qp, all_next), qp_id,
						  qp_view };
	static const struct registry_view cqs = { offsetof(struct dpv_cq, all_next), cq_id,
						  cq_view };
	bool qp = strcmp(cmd, "/dpverbs/qp") == 0;
	int rc;

	pthread_mutex_lock(&registry_lock);
	rc = qp ? list_or_lookup(&qps, TAILQ_FIRST(&all_qps), params, d) :
		  list_or_lookup(&cqs, TAILQ_FIRST(&all_cqs), params, d);
	pthread_mutex_unlock(&registry_lock);
	return rc;
}

static void port_entry(struct dpv_device *dev, void *arg)
{
	struct rte_tel_data *d = arg, *p = rte_tel_data_alloc();
	struct dpv_port_stats s = { 0 };
	uint64_t rx_frames, rx_unsteered, rx_no_wqe, rx_cyc[DPV_RXC_STAGES];

	if (p == NULL)
		return;
	dpv__device_port_stats(dev, &s);
	rte_tel_data_start_dict(p);
	rte_tel_data_add_dict_string(p, "port", dev->caps.name);
	rte_tel_data_add_dict_int(p, "socket", dev->caps.socket_id);
	rte_tel_data_add_dict_int(p, "service_lcore", dev->svc_attached ? (int)dev->svc_lcore : -1);
	rte_tel_data_add_dict_u64(p, "service_qps", LOAD(dev->nb_svc_qp));
	rte_tel_data_add_dict_u64(p, "tx_frames", s.tx_frames);
	rte_tel_data_add_dict_u64(p, "tx_bytes", s.tx_bytes);
	rte_tel_data_add_dict_u64(p, "tx_copied", s.tx_copied);
	rte_tel_data_add_dict_u64(p, "tx_zero_copy", s.tx_zero_copy);
	rte_tel_data_add_dict_u64(p, "tso_hw", s.tso_hw);
	rte_tel_data_add_dict_u64(p, "tso_sw", s.tso_sw);
	rte_tel_data_add_dict_u64(p, "csum_hw", s.csum_hw);
	rte_tel_data_add_dict_u64(p, "csum_sw", s.csum_sw);
	dpv__device_rx_stats(dev, &rx_frames, &rx_unsteered, &rx_no_wqe, rx_cyc);
	rte_tel_data_add_dict_u64(p, "rx_queues", LOAD(dev->nb_rxq));
	rte_tel_data_add_dict_u64(p, "rx_frames", rx_frames);
	rte_tel_data_add_dict_u64(p, "rx_unsteered", rx_unsteered);
	rte_tel_data_add_dict_u64(p, "rx_no_wqe", rx_no_wqe);
	rte_tel_data_add_dict_u64(p, "rx_roce", s.rx_roce);
	rte_tel_data_add_dict_u64(p, "rx_roce_bad_icrc", s.rx_roce_bad_icrc);
	rte_tel_data_add_dict_u64(p, "rx_roce_malformed", s.rx_roce_malformed);
	rte_tel_data_add_dict_u64(p, "rx_roce_no_qp", s.rx_roce_no_qp);
	rte_tel_data_add_dict_u64(p, "rx_roce_bad_qkey", s.rx_roce_bad_qkey);
	rte_tel_data_add_dict_u64(p, "tx_roce_loopback", s.tx_roce_loopback);
	rte_tel_data_add_dict_u64(p, "tx_ud_oversize", s.tx_ud_oversize);
	if (rte_tel_data_add_dict_container(d, dev->ibdev.name, p, 0) != 0)
		rte_tel_data_free(p);
}

static int tel_ports(const char *cmd __rte_unused, const char *params __rte_unused,
		     struct rte_tel_data *d)
{
	rte_tel_data_start_dict(d);
	dpv__devices_foreach_open(port_entry, d);
	return 0;
}

static int tel_lcores(const char *cmd __rte_unused, const char *params __rte_unused,
		      struct rte_tel_data *d)
{
	struct dpv_service_info info[64];
	int n = dpv__service_info(info, (int)RTE_DIM(info));

	rte_tel_data_start_dict(d);
	for (int i = 0; i < n && i < (int)RTE_DIM(info); i++) {
		struct rte_tel_data *l = rte_tel_data_alloc();
		char name[16];

		if (l == NULL)
			continue;
		rte_tel_data_start_dict(l);
		rte_tel_data_add_dict_int(l, "socket", (int)info[i].socket);
		rte_tel_data_add_dict_int(l, "running", info[i].running);
		rte_tel_data_add_dict_u64(l, "ports", info[i].nb_work);
		rte_tel_data_add_dict_u64(l, "rounds", info[i].rounds);
		snprintf(name, sizeof(name), "%u", info[i].lcore);
		if (rte_tel_data_add_dict_container(d, name, l, 0) != 0)
			rte_tel_data_free(l);
	}
	return 0;
}

RTE_INIT(dpv_telemetry_register)
{
	rte_telemetry_register_cmd("/dpverbs/ports", tel_ports,
				   "dpverbs devices with an open context: port counters. No parameters");
	rte_telemetry_register_cmd("/dpverbs/qp", tel_registry,
				   "dpverbs QPs. Parameter: a QP number for one QP's state and counters");
	rte_telemetry_register_cmd("/dpverbs/cq", tel_registry,
				   "dpverbs CQs. Parameter: a CQ id for its size and counters");
	rte_telemetry_register_cmd("/dpverbs/lcores", tel_lcores,
				   "dpverbs service lcores. No parameters");
}

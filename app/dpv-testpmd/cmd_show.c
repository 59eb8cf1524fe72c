/* SPDX-License-Identifier: BSD-3-Clause */
/* show device | port info|stats|xstats|tx_offload capabilities <p> | qp [<id>] | cq <id> |
 * config: what the verbs queries and <dpverbs.h> say about devices, ports, QPs and CQs. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <cmdline_parse_num.h>
#include <cmdline_parse_string.h>

#include "testpmd.h"

static const char *policy_name(enum dpv_offload_policy p)
{
	return p == DPV_OFFLOAD_POLICY_SOFTWARE ? "software" :
	       p == DPV_OFFLOAD_POLICY_HARDWARE ? "hardware" : "auto";
}

static void offload_list(const char *what, uint32_t mask)
{
	printf("  %-22s", what);
	if (mask == 0)
		printf(" none");
	for (uint32_t b = 1; b <= DPV_OFFLOAD_TCP_TSO; b <<= 1)
		if (mask & b)
			printf(" %s", dpv_offload_name(b));
	printf("\n");
}

static void port_info(unsigned int p, struct tp_port *pt)
{
	const struct dpv_port_info *i = &pt->info;
	struct ibv_port_attr pa;
	char mac[18];

	printf("port %u: %s (DPDK port %u %s, driver %s, NUMA socket %d)\n", p,
	       ibv_get_device_name(pt->dev), i->port_id, i->name, i->driver, i->socket_id);
	if (ibv_query_port(pt->ctx, 1, &pa) == 0)
		printf("  link:                  %s\n", ibv_port_state_str(pa.state));
	printf("  MAC:                   %s\n", mac_str(pt->mac, mac));
	printf("  MTU:                   %u (largest frame %u)\n", i->mtu, i->max_frame);
	printf("  queues:                %u TX, %u RX\n", i->nb_tx_queues, i->nb_rx_queues);
	printf("  tx_max_segs:           %u\n", i->tx_max_segs);
	printf("  sends:                 %s, frames up to %u bytes copied\n",
	       i->zero_copy ? "zero-copy from MRs" : "copied into pool mbufs", i->tx_copy_max);
	printf("  tx_done_cleanup:       %s\n", i->tx_done_cleanup ? "yes" : "no");
	printf("  offload policy:        %s\n", policy_name(i->policy));
	printf("  tso segment size:      %u%s\n", pt->tso_mss, pt->tso_mss ? "" : " (off)");
}

static uint64_t xbase_of(const struct tp_port *pt, unsigned int i, const char *name)
{
	if (i < pt->nb_xbase && strcmp(pt->xbase[i].name, name) == 0)
		return pt->xbase[i].value;
	return 0;
}

static void port_xstats(unsigned int p, struct tp_port *pt)
{
	unsigned int n = 0;
	struct dpv_xstat *x;
	int rc = dpv_query_port_xstats(pt->ctx, NULL, &n);

	if (rc != 0) {
		tp_error("port %u has no extended statistics: %s", p, strerror(rc));
		return;
	}
	x = calloc(n ? n : 1, sizeof(*x));
	if (x == NULL || dpv_query_port_xstats(pt->ctx, x, &n) != 0) {
		free(x);
		tp_error("port %u: reading extended statistics failed; try again", p);
		return;
	}
	printf("port %u extended statistics (%s):\n", p, pt->info.driver);
	for (unsigned int i = 0; i < n; i++)
		printf("  %-32s %" PRIu64 "\n", x[i].name, x[i].value - xbase_of(pt, i, x[i].name));
	free(x);
}

#define D(f) (unsigned long long)(st.f - pt->base.f)
static void port_stats(unsigned int p, struct tp_port *pt)
{
	struct dpv_port_stats st;
	const struct fwd_counters *c = &pt->fwd;

	dpv_query_port_stats(pt->ctx, &st);
	printf("port %u statistics:\n", p);
	printf("  tx frames:             %llu\n  tx bytes:              %llu\n", D(tx_frames),
	       D(tx_bytes));
	printf("  tx copied WRs:         %llu\n  tx zero-copy WRs:      %llu\n", D(tx_copied),
	       D(tx_zero_copy));
	printf("  tso by the port:       %llu\n  tso in software:       %llu (%llu segments)\n",
	       D(tso_hw), D(tso_sw), D(tso_segments_sw));
	printf("  csum by the port:      %llu\n  csum in software:      %llu\n", D(csum_hw),
	       D(csum_sw));
	printf("  rx frames:             %llu\n  rx unsteered:          %llu\n", D(rx_frames),
	       D(rx_unsteered));
	printf("  rx no WQE:             %llu\n", D(rx_no_wqe));
	printf("  rx RoCE:               %llu (dropped: bad ICRC %llu, malformed %llu, no QP "
	       "%llu, bad Q_Key %llu)\n", D(rx_roce), D(rx_roce_bad_icrc), D(rx_roce_malformed),
	       D(rx_roce_no_qp), D(rx_roce_bad_qkey));
	printf("  tx RoCE loopback:      %llu\n  tx UD above the MTU:   %llu\n",
	       D(tx_roce_loopback), D(tx_ud_oversize));
	printf("  ARP/ND: tx %llu (dropped %llu), rx %llu (malformed %llu)\n", D(tx_nd),
	       D(tx_nd_dropped), D(rx_nd), D(rx_nd_malformed));
	printf("  forwarding: rx %llu, tx WRs %llu, completions %llu, errors %llu, SQ full %llu\n",
	       (unsigned long long)c->rx, (unsigned long long)c->tx_wrs,
	       (unsigned long long)c->completions, (unsigned long long)c->errors,
	       (unsigned long long)c->sq_full);
}
#undef D

static void tx_offload_caps(unsigned int p, struct tp_port *pt)
{
	const struct dpv_port_info *i = &pt->info;

	printf("port %u (%s) TX offloads, policy %s:\n", p, i->driver, policy_name(i->policy));
	for (uint32_t b = 1; b <= DPV_OFFLOAD_TCP_TSO; b <<= 1) {
		const char *where = i->hw_offloads & b ? "hardware" :
				    i->sw_offloads & b ? "software" : "refused (EINVAL)";

		printf("  %-12s port offers: %-3s  runs in: %s\n", dpv_offload_name(b),
		       i->port_offloads & b ? "yes" : "no", where);
	}
	offload_list("hardware offloads:", i->hw_offloads);
	offload_list("software offloads:", i->sw_offloads);
}

struct show_port_res {
	cmdline_fixed_string_t show, port, what, all;
	uint16_t pid;
};

static void show_port_one(unsigned int p, const char *what)
{
	struct tp_port *pt = port_get(p);

	if (pt == NULL)
		return;
	dpv_query_port_info(pt->ctx, &pt->info);
	if (strcmp(what, "info") == 0)
		port_info(p, pt);
	else if (strcmp(what, "stats") == 0)
		port_stats(p, pt);
	else
		port_xstats(p, pt);
}

static void show_port_parsed(void *res, struct cmdline *cl, void *data)
{
	struct show_port_res *r = res;

	if (data == NULL) {
		show_port_one(r->pid, r->what);
		return;
	}
	for (int p = 0; p < tp.nb_ports; p++)
		if (tp.port[p].ctx != NULL)
			show_port_one((unsigned int)p, r->what);
		else
			printf("port %d is stopped (port start %d)\n", p, p);
}

static cmdline_parse_token_string_t t_show = TOKEN_STRING_INITIALIZER(struct show_port_res, show, "show");
static cmdline_parse_token_string_t t_port = TOKEN_STRING_INITIALIZER(struct show_port_res, port, "port");
static cmdline_parse_token_string_t t_what = TOKEN_STRING_INITIALIZER(struct show_port_res, what, "info#stats#xstats");
static cmdline_parse_token_num_t t_pid = TOKEN_NUM_INITIALIZER(struct show_port_res, pid, RTE_UINT16);

static cmdline_parse_inst_t cmd_show_port = {
	.f = show_port_parsed,
	.help_str = "show port info|stats|xstats <port>: the port, its counters (since clear "
		    "port stats), its PMD's extended statistics",
	.tokens = { (void *)&t_show, (void *)&t_port, (void *)&t_what, (void *)&t_pid, NULL },
};

static cmdline_parse_token_string_t t_all = TOKEN_STRING_INITIALIZER(struct show_port_res, all, "all");

static cmdline_parse_inst_t cmd_show_port_all = {
	.f = show_port_parsed,
	.data = (void *)1,
	.help_str = "show port info|stats|xstats all: the same for every port",
	.tokens = { (void *)&t_show, (void *)&t_port, (void *)&t_what, (void *)&t_all, NULL },
};

struct show_txo_res {
	cmdline_fixed_string_t show, port, txo, caps;
	uint16_t pid;
};

static void show_txo_parsed(void *res, struct cmdline *cl, void *data)
{
	struct show_txo_res *r = res;
	struct tp_port *pt = port_get(r->pid);

	if (pt == NULL)
		return;
	dpv_query_port_info(pt->ctx, &pt->info);
	tx_offload_caps(r->pid, pt);
}

static cmdline_parse_token_string_t t_txo_show = TOKEN_STRING_INITIALIZER(struct show_txo_res, show, "show");
static cmdline_parse_token_string_t t_txo_port = TOKEN_STRING_INITIALIZER(struct show_txo_res, port, "port");
static cmdline_parse_token_string_t t_txo = TOKEN_STRING_INITIALIZER(struct show_txo_res, txo, "tx_offload");
static cmdline_parse_token_string_t t_txo_caps = TOKEN_STRING_INITIALIZER(struct show_txo_res, caps, "capabilities");
static cmdline_parse_token_num_t t_txo_pid = TOKEN_NUM_INITIALIZER(struct show_txo_res, pid, RTE_UINT16);

static cmdline_parse_inst_t cmd_show_txo = {
	.f = show_txo_parsed,
	.help_str = "show port tx_offload capabilities <port>: each offload, whether the port "
		    "offers it and where it runs (hardware, software)",
	.tokens = { (void *)&t_txo_show, (void *)&t_txo_port, (void *)&t_txo, (void *)&t_txo_caps,
		    (void *)&t_txo_pid, NULL },
};

/* testpmd's word order: show port <p> tx_offload capabilities */
static cmdline_parse_inst_t cmd_show_txo2 = {
	.f = show_txo_parsed,
	.help_str = "show port <port> tx_offload capabilities: the same, in testpmd's order",
	.tokens = { (void *)&t_txo_show, (void *)&t_txo_port, (void *)&t_txo_pid, (void *)&t_txo,
		    (void *)&t_txo_caps, NULL },
};

static void device_one(int p)
{
	struct tp_port *pt = &tp.port[p];
	struct ibv_device_attr_ex a;
	struct ibv_port_attr pa;

	printf("%d: %s", p, ibv_get_device_name(pt->dev));
	if (pt->ctx == NULL || ibv_query_device_ex(pt->ctx, NULL, &a) != 0 ||
	    ibv_query_port(pt->ctx, 1, &pa) != 0) {
		printf(" (stopped: port start %d)\n", p);
		return;
	}
	printf(" on DPDK port %u %s (%s), link %s, MTU %u\n", pt->info.port_id, pt->info.name,
	       pt->info.driver, ibv_port_state_str(pa.state), pt->info.mtu);
	printf("   fw_ver %s; max_qp_wr %d, max_sge %d, max_cqe %d, max_mr %d, max_qp %d\n",
	       a.orig_attr.fw_ver, a.orig_attr.max_qp_wr, a.orig_attr.max_sge,
	       a.orig_attr.max_cqe, a.orig_attr.max_mr, a.orig_attr.max_qp);
	printf("   max_tso %u (RAW_PACKET), raw_packet_caps%s, device caps%s\n",
	       a.tso_caps.max_tso,
	       a.raw_packet_caps & IBV_RAW_PACKET_CAP_IP_CSUM ? " IP_CSUM" : " none",
	       a.orig_attr.device_cap_flags & IBV_DEVICE_RAW_IP_CSUM ? " RAW_IP_CSUM" : " none");
}

struct show_word_res {
	cmdline_fixed_string_t show, what;
};

static void show_word_parsed(void *res, struct cmdline *cl, void *data)
{
	struct show_word_res *r = res;

	if (strcmp(r->what, "device") == 0) {
		printf("%d verbs device(s); EAL arguments: %s\n", tp.nb_ports, dpv_eal_args());
		for (int p = 0; p < tp.nb_ports; p++)
			device_one(p);
		return;
	}
	printf("forwarding mode %s%s, burst %u, txpkts", fwd_mode_name(),
	       fwd_running() ? " (running)" : "", tp.cfg.burst);
	for (int i = 0; i < tp.cfg.nb_txpkts; i++)
		printf("%c%u", i ? ',' : ' ', tp.cfg.txpkts[i]);
	printf(" (%u bytes), txflags%s%s", fwd_frame_len(), tp.cfg.inline_data ? " inline" : "",
	       tp.cfg.ip_csum ? " ip_csum" : "");
	if (tp.cfg.signaled_every)
		printf(" signaled-every %u", tp.cfg.signaled_every);
	else
		printf(" signaled: last of each burst");
	printf(", verbose %d\n", tp.cfg.verbose);
}

static cmdline_parse_token_string_t t_w_show = TOKEN_STRING_INITIALIZER(struct show_word_res, show, "show");
static cmdline_parse_token_string_t t_w_what = TOKEN_STRING_INITIALIZER(struct show_word_res, what, "device#config");

static cmdline_parse_inst_t cmd_show_word = {
	.f = show_word_parsed,
	.help_str = "show device|config: verbs devices (limits, caps, DPDK port); the "
		    "forwarding configuration",
	.tokens = { (void *)&t_w_show, (void *)&t_w_what, NULL },
};

static void qp_show(unsigned int id)
{
	struct tp_qp *q = &tp.qp[id];
	struct dpv_qp_counters c;
	struct dpv_cq_counters cc;
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (dpv_query_qp_counters(q->qp, &c) != 0 || ibv_query_qp(q->qp, &a, IBV_QP_STATE |
								  IBV_QP_CAP, &ia) != 0) {
		tp_error("QP %u cannot be queried", id);
		return;
	}
	dpv_query_cq_counters(q->cq, &cc);
	printf("QP %u: qp_num 0x%x, RAW_PACKET on port %d%s, state %s\n", id, q->qp->qp_num,
	       q->port, q->fwd ? " (forwarding engine)" : "", qp_state_name(c.state));
	printf("  SQ: %u WRs (%u used, %u not yet sent, %u in flight), max_send_sge %u, "
	       "max_inline_data %u\n", c.sq_size, c.sq_used, c.sq_unsent, c.sq_in_flight,
	       ia.cap.max_send_sge, ia.cap.max_inline_data);
	printf("  RQ: %u WQEs (%u posted), flows %u, CQ %u (%u pending)\n", c.rq_size,
	       c.rq_posted, c.nb_flows, id, cc.pending);
	printf("  tx WRs %llu, bytes %llu, frames %llu, errors %llu, completed %llu\n",
	       (unsigned long long)c.tx_wrs, (unsigned long long)c.tx_bytes,
	       (unsigned long long)c.tx_frames, (unsigned long long)c.tx_errors,
	       (unsigned long long)c.tx_completed);
	if (c.progress == DPV_PROGRESS_SERVICE)
		printf("  progress: service mode, service lcore %d\n", c.service_lcore);
	else
		printf("  progress: direct\n");
}

struct show_obj_res {
	cmdline_fixed_string_t show, what;
	uint16_t id;
};

static void show_obj_parsed(void *res, struct cmdline *cl, void *data)
{
	struct show_obj_res *r = res;
	struct dpv_cq_counters c;
	struct tp_qp *q = qp_get(r->id);

	if (q == NULL)
		return;
	if (strcmp(r->what, "qp") == 0) {
		qp_show(r->id);
		return;
	}
	dpv_query_cq_counters(q->cq, &c);
	printf("CQ %u: %u entries, %u pending, %u QP(s)%s%s\n", r->id, c.size, c.pending, c.nb_qp,
	       c.armed ? ", armed" : "", c.overrun ? ", OVERRUN (a completion was lost)" : "");
}

static cmdline_parse_token_string_t t_o_show = TOKEN_STRING_INITIALIZER(struct show_obj_res, show, "show");
static cmdline_parse_token_string_t t_o_what = TOKEN_STRING_INITIALIZER(struct show_obj_res, what, "qp#cq");
static cmdline_parse_token_num_t t_o_id = TOKEN_NUM_INITIALIZER(struct show_obj_res, id, RTE_UINT16);

static cmdline_parse_inst_t cmd_show_obj = {
	.f = show_obj_parsed,
	.help_str = "show qp|cq <id>: a QP's state, queue depths and counters; its CQ",
	.tokens = { (void *)&t_o_show, (void *)&t_o_what, (void *)&t_o_id, NULL },
};

static void show_qps_parsed(void *res, struct cmdline *cl, void *data)
{
	int n = 0;

	for (unsigned int i = 0; i < TP_MAX_QPS; i++)
		if (tp.qp[i].used) {
			qp_show(i);
			n++;
		}
	if (n == 0)
		printf("no QP: qp create raw <port>\n");
}

static cmdline_parse_token_string_t t_q_what = TOKEN_STRING_INITIALIZER(struct show_obj_res, what, "qp");

static cmdline_parse_inst_t cmd_show_qps = {
	.f = show_qps_parsed,
	.help_str = "show qp: every QP",
	.tokens = { (void *)&t_o_show, (void *)&t_q_what, NULL },
};

cmdline_parse_inst_t *cmds_show[] = {
	&cmd_show_port, &cmd_show_port_all, &cmd_show_txo, &cmd_show_txo2, &cmd_show_word, &cmd_show_obj,
	&cmd_show_qps, NULL,
};

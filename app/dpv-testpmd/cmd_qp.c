/* SPDX-License-Identifier: BSD-3-Clause */
/* qp create raw <port> [sq N] [rq N] [inline N] [tso_header N] [mode direct|service],
 * qp modify <id> <state>,
 * qp destroy <id>. A new QP is in RTS; `qp modify` makes exactly one ibv_modify_qp call, so
 * the state machine's answers (EINVAL for a transition it refuses) show as they are. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmdline_parse_num.h>
#include <cmdline_parse_string.h>

#include "testpmd.h"

static int opt_u32(const char *v, void *field)
{
	char *end;
	unsigned long n = strtoul(v, &end, 0);

	if (end == v || *end != '\0' || n > UINT32_MAX)
		return -EINVAL;
	*(uint32_t *)field = (uint32_t)n;
	return 0;
}

static int opt_u16(const char *v, void *field)
{
	uint32_t n;

	if (opt_u32(v, &n) != 0 || n > UINT16_MAX)
		return -EINVAL;
	*(uint16_t *)field = (uint16_t)n;
	return 0;
}

static int opt_progress(const char *v, void *field)
{
	if (strcmp(v, "direct") == 0)
		*(int *)field = DPV_PROGRESS_DIRECT;
	else if (strcmp(v, "service") == 0)
		*(int *)field = DPV_PROGRESS_SERVICE;
	else
		return -EINVAL;
	return 0;
}

/* The options of qp create: one row each. */
static const struct qp_option {
	const char *name;
	int (*parse)(const char *value, void *field);
	size_t offset;
	const char *what;
} qp_options[] = {
	{ "sq", opt_u32, offsetof(struct qp_opts, sq), "max_send_wr" },
	{ "rq", opt_u32, offsetof(struct qp_opts, rq), "max_recv_wr" },
	{ "inline", opt_u32, offsetof(struct qp_opts, inline_size), "max_inline_data" },
	{ "tso_header", opt_u16, offsetof(struct qp_opts, max_tso_header), "max_tso_header" },
	{ "mode", opt_progress, offsetof(struct qp_opts, progress), "direct or service" },
};

static int qp_options_parse(char *words, struct qp_opts *o)
{
	char *save = NULL, *name, *value;

	for (name = strtok_r(words, " \t", &save); name; name = strtok_r(NULL, " \t", &save)) {
		const struct qp_option *opt = NULL;

		for (size_t i = 0; i < sizeof(qp_options) / sizeof(qp_options[0]); i++)
			if (strcmp(name, qp_options[i].name) == 0)
				opt = &qp_options[i];
		if (opt == NULL)
			return tp_error("qp create: unknown option '%s' (sq, rq, inline, tso_header, "
					"mode)",
					name);
		value = strtok_r(NULL, " \t", &save);
		if (value == NULL || opt->parse(value, (char *)o + opt->offset) != 0)
			return tp_error("qp create: %s needs a value (%s), e.g. %s %s", name,
					opt->what, name, opt->parse == opt_progress ? "service" : "64");
	}
	return 0;
}

struct qp_create_res {
	cmdline_fixed_string_t qp, create, raw;
	uint16_t pid;
	cmdline_multi_string_t opts;
};

static void qp_create_parsed(void *res, struct cmdline *cl, void *data)
{
	struct qp_create_res *r = res;
	struct qp_opts o = { .sq = 64, .rq = 64, .progress = -1 };
	int id;

	if (data != NULL && qp_options_parse(r->opts, &o) != 0)
		return;
	id = qp_create(r->pid, &o, false);
	if (id >= 0)
		printf("QP %d: qp_num 0x%x on port %u, RTS, sq %u rq %u inline %u%s\n", id,
		       tp.qp[id].qp->qp_num, r->pid, o.sq, o.rq, o.inline_size,
		       o.progress == DPV_PROGRESS_SERVICE ? ", service mode" : "");
}

static cmdline_parse_token_string_t t_qp = TOKEN_STRING_INITIALIZER(struct qp_create_res, qp, "qp");
static cmdline_parse_token_string_t t_create = TOKEN_STRING_INITIALIZER(struct qp_create_res, create, "create");
static cmdline_parse_token_string_t t_raw = TOKEN_STRING_INITIALIZER(struct qp_create_res, raw, "raw");
static cmdline_parse_token_num_t t_pid = TOKEN_NUM_INITIALIZER(struct qp_create_res, pid, RTE_UINT16);
static cmdline_parse_token_string_t t_opts = TOKEN_STRING_INITIALIZER(struct qp_create_res, opts, TOKEN_STRING_MULTI);

static cmdline_parse_inst_t cmd_qp_create = {
	.f = qp_create_parsed,
	.help_str = "qp create raw <port>: a RAW_PACKET QP in RTS with its CQ (sq 64, rq 64)",
	.tokens = { (void *)&t_qp, (void *)&t_create, (void *)&t_raw, (void *)&t_pid, NULL },
};

static cmdline_parse_inst_t cmd_qp_create_opts = {
	.f = qp_create_parsed,
	.data = (void *)1,
	.help_str = "qp create raw <port> [sq N] [rq N] [inline N] [tso_header N] "
		    "[mode direct|service]: the same with max_send_wr, max_recv_wr, "
		    "max_inline_data, max_tso_header, the progress model",
	.tokens = { (void *)&t_qp, (void *)&t_create, (void *)&t_raw, (void *)&t_pid,
		    (void *)&t_opts, NULL },
};

struct qp_modify_res {
	cmdline_fixed_string_t qp, modify, state;
	uint16_t id;
};

static void qp_modify_parsed(void *res, struct cmdline *cl, void *data)
{
	struct qp_modify_res *r = res;
	struct tp_qp *q = qp_get(r->id);
	enum ibv_qp_state s;
	int rc;

	if (q == NULL)
		return;
	if (q->fwd) {
		tp_error("QP %u belongs to the forwarding engine: stop first", r->id);
		return;
	}
	qp_state_parse(r->state, &s);
	rc = qp_to_state(q->qp, s);
	if (rc != 0)
		printf("ibv_modify_qp(QP %u, %s): %s (%s); the QP stays in %s\n", r->id, r->state,
		       errno_name(rc), strerror(rc), qp_state_name(q->qp->state));
	else
		printf("QP %u: %s\n", r->id, qp_state_name(q->qp->state));
}

static cmdline_parse_token_string_t t_m_qp = TOKEN_STRING_INITIALIZER(struct qp_modify_res, qp, "qp");
static cmdline_parse_token_string_t t_modify = TOKEN_STRING_INITIALIZER(struct qp_modify_res, modify, "modify");
static cmdline_parse_token_num_t t_m_id = TOKEN_NUM_INITIALIZER(struct qp_modify_res, id, RTE_UINT16);
static cmdline_parse_token_string_t t_state = TOKEN_STRING_INITIALIZER(struct qp_modify_res, state, "reset#init#rtr#rts#sqd#err");

static cmdline_parse_inst_t cmd_qp_modify = {
	.f = qp_modify_parsed,
	.help_str = "qp modify <id> reset|init|rtr|rts|sqd|err: one ibv_modify_qp (init adds "
		    "IBV_QP_PORT)",
	.tokens = { (void *)&t_m_qp, (void *)&t_modify, (void *)&t_m_id, (void *)&t_state, NULL },
};

struct qp_destroy_res {
	cmdline_fixed_string_t qp, destroy;
	uint16_t id;
};

static void qp_destroy_parsed(void *res, struct cmdline *cl, void *data)
{
	struct qp_destroy_res *r = res;
	struct tp_qp *q = qp_get(r->id);

	if (q == NULL)
		return;
	if (q->fwd) {
		tp_error("QP %u belongs to the forwarding engine: stop destroys it", r->id);
		return;
	}
	if (qp_destroy(r->id) == 0)
		printf("QP %u destroyed (with its flows and CQ)\n", r->id);
}

static cmdline_parse_token_string_t t_d_qp = TOKEN_STRING_INITIALIZER(struct qp_destroy_res, qp, "qp");
static cmdline_parse_token_string_t t_destroy = TOKEN_STRING_INITIALIZER(struct qp_destroy_res, destroy, "destroy");
static cmdline_parse_token_num_t t_d_id = TOKEN_NUM_INITIALIZER(struct qp_destroy_res, id, RTE_UINT16);

static cmdline_parse_inst_t cmd_qp_destroy = {
	.f = qp_destroy_parsed,
	.help_str = "qp destroy <id>: its flows, the QP, its CQ",
	.tokens = { (void *)&t_d_qp, (void *)&t_destroy, (void *)&t_d_id, NULL },
};

cmdline_parse_inst_t *cmds_qp[] = {
	&cmd_qp_create, &cmd_qp_create_opts, &cmd_qp_modify, &cmd_qp_destroy, NULL,
};

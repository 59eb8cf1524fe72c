/* SPDX-License-Identifier: BSD-3-Clause */
/* port start|stop|reset <p>, clear port stats <p>|all, port faults <p> rx|tx|both <spec>,
 * show port faults <p>. Stopping a port destroys the QPs, flows
 * and capture made on it and closes its verbs device (dpverbs stops the DPDK port at the last
 * close); starting opens it again. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <cmdline_parse_num.h>
#include <cmdline_parse_string.h>

#include "testpmd.h"

struct port_res {
	cmdline_fixed_string_t port, what;
	uint16_t pid;
};

static void port_parsed(void *res, struct cmdline *cl, void *data)
{
	struct port_res *r = res;
	bool stop = strcmp(r->what, "start") != 0, start = strcmp(r->what, "stop") != 0;

	if (!port_valid(r->pid) || fwd_refuse("port start/stop/reset"))
		return;
	if (stop && tp.port[r->pid].ctx == NULL && !start) {
		printf("port %u is stopped already\n", r->pid);
		return;
	}
	if (stop)
		port_stop(r->pid);
	if (start && port_start(r->pid) != 0)
		return;
	printf("port %u %s\n", r->pid, start ? (stop ? "reset: started again, QPs and flows "
						  "gone, statistics cleared" : "started") :
	       "stopped");
}

static cmdline_parse_token_string_t t_port = TOKEN_STRING_INITIALIZER(struct port_res, port, "port");
static cmdline_parse_token_string_t t_what = TOKEN_STRING_INITIALIZER(struct port_res, what, "start#stop#reset");
static cmdline_parse_token_num_t t_pid = TOKEN_NUM_INITIALIZER(struct port_res, pid, RTE_UINT16);

static cmdline_parse_inst_t cmd_port = {
	.f = port_parsed,
	.help_str = "port start|stop|reset <port>: open the port's device; destroy what was made "
		    "on it and close it; both",
	.tokens = { (void *)&t_port, (void *)&t_what, (void *)&t_pid, NULL },
};

struct clear_res {
	cmdline_fixed_string_t clear, port, stats, which;
};

static void clear_parsed(void *res, struct cmdline *cl, void *data)
{
	struct clear_res *r = res;
	char *end;
	unsigned long p = strtoul(r->which, &end, 10);

	if (strcmp(r->which, "all") == 0) {
		for (int i = 0; i < tp.nb_ports; i++)
			port_stats_clear((unsigned int)i);
		printf("statistics of every port cleared\n");
		return;
	}
	if (*end != '\0' || end == r->which) {
		tp_error("clear port stats takes a port number or all, not '%s'", r->which);
		return;
	}
	if (port_get((unsigned int)p) == NULL)
		return;
	port_stats_clear((unsigned int)p);
	printf("statistics of port %lu cleared\n", p);
}

static cmdline_parse_token_string_t t_clear = TOKEN_STRING_INITIALIZER(struct clear_res, clear, "clear");
static cmdline_parse_token_string_t t_c_port = TOKEN_STRING_INITIALIZER(struct clear_res, port, "port");
static cmdline_parse_token_string_t t_stats = TOKEN_STRING_INITIALIZER(struct clear_res, stats, "stats");
static cmdline_parse_token_string_t t_which = TOKEN_STRING_INITIALIZER(struct clear_res, which, NULL);

static cmdline_parse_inst_t cmd_clear = {
	.f = clear_parsed,
	.help_str = "clear port stats <port>|all: counters shown by show port stats|xstats "
		    "start again from 0",
	.tokens = { (void *)&t_clear, (void *)&t_c_port, (void *)&t_stats, (void *)&t_which, NULL },
};

/* A fraction as parts per million: "1.5%", "0.015" or "15000ppm"; -1 when it is none. */
static long fraction_ppm(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || v < 0)
		return -1;
	if (strcmp(end, "%") == 0)
		v *= 10000;
	else if (strcmp(end, "ppm") == 0)
		;
	else if (*end == '\0' && v <= 1)
		v *= 1000000;
	else
		return -1;
	return v > 1000000 ? -1 : (long)(v + 0.5);
}

struct faults_res {
	cmdline_fixed_string_t port, faults, dir;
	uint16_t pid;
	char spec[256];
};

static void faults_parsed(void *res, struct cmdline *cl, void *data)
{
	struct faults_res *r = res;
	struct tp_port *pt = port_get(r->pid);
	struct dpv_faults f = { 0 };
	unsigned int dirs = strcmp(r->dir, "rx") == 0 ? DPV_FAULT_RX :
			    strcmp(r->dir, "tx") == 0 ? DPV_FAULT_TX : DPV_FAULT_RX | DPV_FAULT_TX;
	char *save = NULL, *tok;
	int rc;

	if (pt == NULL)
		return;
	for (tok = strtok_r(r->spec, " \t", &save); tok != NULL; tok = strtok_r(NULL, " \t", &save)) {
		char *val;
		uint32_t *to = strcmp(tok, "drop") == 0 ? &f.drop_ppm :
			       strcmp(tok, "dup") == 0 ? &f.dup_ppm :
			       strcmp(tok, "reorder") == 0 ? &f.reorder_ppm :
			       strcmp(tok, "corrupt") == 0 ? &f.corrupt_ppm : NULL;

		if (strcmp(tok, "off") == 0)
			continue;
		val = strtok_r(NULL, " \t", &save);
		if (val == NULL) {
			tp_error("port faults: '%s' wants a value", tok);
			return;
		}
		if (strcmp(tok, "seed") == 0) {
			char *end;

			f.seed = strtoull(val, &end, 0);
			if (*end != '\0') {
				tp_error("port faults: seed '%s' is not a number", val);
				return;
			}
		} else if (to != NULL) {
			long ppm = fraction_ppm(val);

			if (ppm < 0) {
				tp_error("port faults: %s '%s' is not a fraction (1.5%%, 0.015, "
					 "15000ppm)", tok, val);
				return;
			}
			*to = (uint32_t)ppm;
		} else {
			tp_error("port faults: unknown '%s' (drop, dup, reorder, corrupt, seed, off)",
				 tok);
			return;
		}
	}
	rc = dpv_set_port_faults(pt->ctx, dirs, &f);
	if (rc != 0) {
		tp_error("port faults: %s", strerror(rc));
		return;
	}
	printf("port %u %s faults: drop %u dup %u reorder %u corrupt %u ppm, seed %" PRIu64 "\n",
	       r->pid, r->dir, f.drop_ppm, f.dup_ppm, f.reorder_ppm, f.corrupt_ppm, f.seed);
}

static cmdline_parse_token_string_t t_f_port = TOKEN_STRING_INITIALIZER(struct faults_res, port, "port");
static cmdline_parse_token_string_t t_f_faults = TOKEN_STRING_INITIALIZER(struct faults_res, faults, "faults");
static cmdline_parse_token_num_t t_f_pid = TOKEN_NUM_INITIALIZER(struct faults_res, pid, RTE_UINT16);
static cmdline_parse_token_string_t t_f_dir = TOKEN_STRING_INITIALIZER(struct faults_res, dir, "rx#tx#both");
static cmdline_parse_token_string_t t_f_spec = TOKEN_STRING_INITIALIZER(struct faults_res, spec, TOKEN_STRING_MULTI);

static cmdline_parse_inst_t cmd_faults = {
	.f = faults_parsed,
	.help_str = "port faults <port> rx|tx|both [drop F] [dup F] [reorder F] [corrupt F] "
		    "[seed N] | off: inject faults into the port's received and/or sent frames "
		    "(F: 1.5%, 0.015 or 15000ppm; doc/faults.md)",
	.tokens = { (void *)&t_f_port, (void *)&t_f_faults, (void *)&t_f_pid, (void *)&t_f_dir,
		    (void *)&t_f_spec, NULL },
};

struct show_faults_res {
	cmdline_fixed_string_t show, port, faults;
	uint16_t pid;
};

static void show_faults_parsed(void *res, struct cmdline *cl, void *data)
{
	struct show_faults_res *r = res;
	struct tp_port *pt = port_get(r->pid);

	if (pt == NULL)
		return;
	for (int i = 0; i < 2; i++) {
		struct dpv_faults f;
		struct dpv_fault_stats st;

		dpv_query_port_faults(pt->ctx, i == 0 ? DPV_FAULT_RX : DPV_FAULT_TX, &f, &st);
		printf("port %u %s faults: drop %u dup %u reorder %u corrupt %u ppm, seed %" PRIu64
		       "; frames %" PRIu64 ": dropped %" PRIu64 " duplicated %" PRIu64
		       " reordered %" PRIu64 " corrupted %" PRIu64 "\n", r->pid, i == 0 ? "rx" : "tx",
		       f.drop_ppm, f.dup_ppm, f.reorder_ppm, f.corrupt_ppm, f.seed, st.seen,
		       st.dropped, st.duplicated, st.reordered, st.corrupted);
	}
}

static cmdline_parse_token_string_t t_sf_show = TOKEN_STRING_INITIALIZER(struct show_faults_res, show, "show");
static cmdline_parse_token_string_t t_sf_port = TOKEN_STRING_INITIALIZER(struct show_faults_res, port, "port");
static cmdline_parse_token_string_t t_sf_faults = TOKEN_STRING_INITIALIZER(struct show_faults_res, faults, "faults");
static cmdline_parse_token_num_t t_sf_pid = TOKEN_NUM_INITIALIZER(struct show_faults_res, pid, RTE_UINT16);

static cmdline_parse_inst_t cmd_show_faults = {
	.f = show_faults_parsed,
	.help_str = "show port faults <port>: the faults injected in each direction and what "
		    "they did",
	.tokens = { (void *)&t_sf_show, (void *)&t_sf_port, (void *)&t_sf_faults,
		    (void *)&t_sf_pid, NULL },
};

cmdline_parse_inst_t *cmds_port[] = { &cmd_port, &cmd_clear, &cmd_faults, &cmd_show_faults,
				      NULL };

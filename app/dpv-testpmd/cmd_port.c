/* port start|stop|reset <p>, clear port stats <p>|all. Stopping a port destroys the QPs, flows
 * and capture made on it and closes its verbs device (dpverbs stops the DPDK port at the last
 * close); starting opens it again. */
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

cmdline_parse_inst_t *cmds_port[] = { &cmd_port, &cmd_clear, NULL };

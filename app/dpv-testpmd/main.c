/* SPDX-License-Identifier: BSD-3-Clause */
/* dpv-testpmd [EAL arguments] -- [-i] [--cmdline-file F] [--auto-start [--duration S]]
 *             [--stats-period N] [--forward-mode M] [--txpkts L] [--burst N]
 * testpmd's way in: the EAL arguments before "--" start DPDK through dpv_init (without any,
 * DPV_EAL_ARGS is used), the application's after it. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmdline.h>
#include <cmdline_socket.h>

#include "testpmd.h"

struct testpmd tp = {
	.cfg = { .engine = &fwd_io_engine, .txpkts = { 64 }, .nb_txpkts = 1, .burst = 32 },
};

#define TP_MAX_CMDS 96
cmdline_parse_ctx_t tp_ctx[TP_MAX_CMDS];

static volatile sig_atomic_t signaled;

struct app_opts {
	bool interactive, auto_start;
	const char *cmdline_file;
	double duration;
};

static void on_signal(int sig)
{
	signaled = sig;
}

static void usage(const char *prog)
{
	printf("usage: %s [EAL arguments] -- [options]\n"
	       "  -i, --interactive        a prompt (tab completion, history, help)\n"
	       "  --cmdline-file=F         run the commands of F first (a failing one: exit 1\n"
	       "                           unless -i)\n"
	       "  --auto-start             start forwarding at once\n"
	       "  --duration=S             with --auto-start and without -i: forward S seconds\n"
	       "                           (default: until SIGINT/SIGTERM), then stop and exit\n"
	       "  --stats-period=N         while forwarding, a line per port every N seconds\n"
	       "  --forward-mode=M         io, mac, rxonly, txonly, csum, tso\n"
	       "  --txpkts=L[,L...]        frame segments (set txpkts)\n"
	       "  --burst=N                WRs per post (set burst)\n"
	       "EAL arguments name the ports: %s --vdev=net_tap0 -- -i\n", prog, prog);
}

static void ctx_build(void)
{
	cmdline_parse_inst_t **groups[] = { cmds_show, cmds_port, cmds_fwd, cmds_qp, cmds_flow,
					    cmds_post, cmds_capture, cmds_misc };
	int n = 0;

	for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++)
		for (int i = 0; groups[g][i] != NULL && n < TP_MAX_CMDS - 1; i++)
			tp_ctx[n++] = groups[g][i];
	tp_ctx[n] = NULL;
}

/* The options that map onto commands run as those commands (same checks, same messages). */
static int run_as_command(const char *fmt, const char *arg)
{
	char line[256];

	snprintf(line, sizeof(line), fmt, arg);
	return command_run(line);
}

static int parse_app_args(int argc, char **argv, struct app_opts *o)
{
	static const struct option lo[] = {
		{ "interactive", no_argument, NULL, 'i' },
		{ "cmdline-file", required_argument, NULL, 'f' },
		{ "auto-start", no_argument, NULL, 'a' },
		{ "duration", required_argument, NULL, 'd' },
		{ "stats-period", required_argument, NULL, 's' },
		{ "forward-mode", required_argument, NULL, 'm' },
		{ "txpkts", required_argument, NULL, 't' },
		{ "burst", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "ih", lo, NULL)) != -1) {
		int rc = 0;

		switch (c) {
		case 'i': o->interactive = tp.interactive = true; break;
		case 'f': o->cmdline_file = optarg; break;
		case 'a': o->auto_start = true; break;
		case 'd': o->duration = atof(optarg); break;
		case 's': tp.stats_period = (unsigned int)atoi(optarg); break;
		case 'm': rc = run_as_command("set fwd %s", optarg); break;
		case 't': rc = run_as_command("set txpkts %s", optarg); break;
		case 'b': rc = run_as_command("set burst %s", optarg); break;
		case 'h': usage(argv[0]); exit(0);
		default: usage(argv[0]); return -EINVAL;
		}
		if (rc != 0)
			return rc;
	}
	if (optind < argc) {
		fprintf(stderr, "unexpected argument '%s' (EAL arguments go before --)\n", argv[optind]);
		return -EINVAL;
	}
	if (!o->interactive && !o->cmdline_file && !o->auto_start) {
		fprintf(stderr, "say what to do: -i, --cmdline-file=F or --auto-start\n");
		usage(argv[0]);
		return -EINVAL;
	}
	return 0;
}

static void forward_for(double seconds)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (signaled || (seconds > 0 && (double)(t.tv_sec - t0.tv_sec) +
						(t.tv_nsec - t0.tv_nsec) * 1e-9 >= seconds))
			break;
		usleep(10000);
	}
	if (signaled)
		printf("signal %d: stopping\n", (int)signaled);
}

static int run(const struct app_opts *o)
{
	int rc = 0;

	if (o->cmdline_file != NULL) {
		rc = script_run(o->cmdline_file);
		if (rc != 0 && !o->interactive)
			return rc;
		rc = 0;
	}
	if (o->auto_start && !tp.quit && !fwd_running() && fwd_start(0) != 0 && !o->interactive)
		return -EINVAL;
	if (o->interactive && !tp.quit) {
		tp.cl = cmdline_stdin_new(tp_ctx, "dpv-testpmd> ");
		if (tp.cl == NULL)
			return tp_error("cannot read commands from the terminal");
		cmdline_interact(tp.cl);
		cmdline_stdin_exit(tp.cl);
		tp.cl = NULL;
		printf("\n");
	} else if (o->auto_start && fwd_running()) {
		forward_for(o->duration);
	}
	return rc;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct app_opts o = { 0 };
	int eal_argc = argc, rc;
	char **app_argv;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			eal_argc = i;
			break;
		}
	ctx_build();
	if (eal_argc > 1 && (rc = dpv_init(eal_argc, argv)) != 0) {
		fprintf(stderr, "dpv_init: %s; check the EAL arguments before --\n", strerror(rc));
		return 1;
	}
	app_argv = calloc((size_t)(argc - eal_argc + 2), sizeof(*app_argv));
	if (app_argv == NULL)
		return 1;
	app_argv[0] = argv[0];
	for (int i = eal_argc + 1; i < argc; i++)
		app_argv[i - eal_argc] = argv[i];
	rc = parse_app_args(eal_argc < argc ? argc - eal_argc : 1, app_argv, &o);
	free(app_argv);
	if (rc != 0)
		return 2;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	rc = ports_open_all();
	if (rc == 0)
		rc = run(&o);
	if (fwd_running())
		fwd_stop();
	ports_close_all();
	return rc != 0 ? 1 : 0;
}

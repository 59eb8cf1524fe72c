/* SPDX-License-Identifier: BSD-3-Clause */
/* Forwarding control: `start` makes a RAW_PACKET QP (and, to receive, an ALL_DEFAULT flow) on
 * every started port and runs the engine on a worker thread; `stop` waits for what is in
 * flight, prints each port's totals and destroys the QPs; `wait` blocks until a `start count`
 * is done. With --stats-period the worker prints a line per port: Mpps and Gbit/s on the wire
 * (the port's counters), WRs, completions and errors (the engine's). */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fwd_priv.h"

struct fwd_port fwd_ports[TP_MAX_PORTS];
static pthread_t worker;
static struct dpv_port_stats run_base[TP_MAX_PORTS];   /* the port's counters at start */
static bool running, all_done, counted;  /* counted: started with a count */
static volatile bool stop_flag;

const struct fwd_engine *const fwd_engine_list[] = {
	&fwd_io_engine, &fwd_mac_engine, &fwd_rxonly_engine, &fwd_txonly_engine,
	&fwd_csum_engine, &fwd_tso_engine, NULL,
};

const struct fwd_engine *fwd_engine_find(const char *name)
{
	for (int i = 0; fwd_engine_list[i] != NULL; i++)
		if (strcmp(fwd_engine_list[i]->name, name) == 0)
			return fwd_engine_list[i];
	return NULL;
}

const char *fwd_mode_name(void)
{
	return tp.cfg.engine->name;
}

bool fwd_running(void)
{
	return running;
}

bool fwd_refuse(const char *what)
{
	if (!running)
		return false;
	tp_error("%s while forwarding runs: stop first", what);
	return true;
}

uint32_t fwd_frame_len(void)
{
	uint32_t len = 0;

	for (int i = 0; i < tp.cfg.nb_txpkts; i++)
		len += tp.cfg.txpkts[i];
	return len;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct rate_base {
	struct dpv_port_stats st;
	double t;
};

static void stats_line(unsigned int p, struct rate_base *b)
{
	struct dpv_port_stats st;
	const struct fwd_counters *c = &tp.port[p].fwd;
	double t = now(), dt;

	if (dpv_query_port_stats(tp.port[p].ctx, &st) != 0)
		return;
	dt = t - b->t;
	printf("port %u: rx %.3f Mpps, tx %.3f Mpps %.3f Gbit/s | WRs %llu completions %llu "
	       "errors %llu\n", p, (double)(st.rx_frames - b->st.rx_frames) / dt / 1e6,
	       (double)(st.tx_frames - b->st.tx_frames) / dt / 1e6,
	       (double)(st.tx_bytes - b->st.tx_bytes) * 8 / dt / 1e9,
	       (unsigned long long)__atomic_load_n(&c->tx_wrs, __ATOMIC_RELAXED),
	       (unsigned long long)__atomic_load_n(&c->completions, __ATOMIC_RELAXED),
	       (unsigned long long)__atomic_load_n(&c->errors, __ATOMIC_RELAXED));
	b->st = st;
	b->t = t;
}

/* A line per port; on a terminal without a prompt, the lines refresh in place. */
static void stats_lines(struct rate_base *base, int *printed)
{
	bool refresh = !tp.interactive && isatty(STDOUT_FILENO);

	if (refresh && *printed)
		printf("\033[%dA", *printed);
	*printed = 0;
	for (int p = 0; p < tp.nb_ports; p++)
		if (fwd_ports[p].active) {
			if (refresh)
				printf("\033[K");
			stats_line((unsigned int)p, &base[p]);
			(*printed)++;
		}
	fflush(stdout);
}

static void *worker_main(void *arg)
{
	static struct rate_base base[TP_MAX_PORTS];
	double next = now() + tp.stats_period;
	unsigned long loops = 0;
	int lines = 0;

	dpv_thread_register();         /* a per-lcore mempool cache for the mbufs it moves */
	for (int p = 0; p < tp.nb_ports; p++)
		if (fwd_ports[p].active) {
			dpv_query_port_stats(tp.port[p].ctx, &base[p].st);
			base[p].t = now();
		}
	while (!stop_flag) {
		bool done = true;

		for (int p = 0; p < tp.nb_ports; p++) {
			if (!fwd_ports[p].active)
				continue;
			fwd_engine_step((unsigned int)p);
			done = done && fwd_engine_done((unsigned int)p);
		}
		__atomic_store_n(&all_done, done, __ATOMIC_RELEASE);
		if (tp.stats_period && (++loops & 1023) == 0 && now() >= next) {
			stats_lines(base, &lines);
			next += tp.stats_period;
		}
	}
	dpv_thread_unregister();
	return arg;
}

static int paired(int p)
{
	int q = p ^ 1;

	return q < tp.nb_ports && tp.port[q].ctx != NULL ? q : p;
}

/* The engine's SQs: room for a few bursts. */
static uint32_t fwd_sq_depth(void)
{
	return tp.cfg.burst * 4u < 512 ? 512 : tp.cfg.burst * 4u;
}

static int check_config(void)
{
	uint32_t len = fwd_frame_len();
	const struct fwd_engine *e = tp.cfg.engine;

	for (int p = 0; p < tp.nb_ports && e->check != NULL; p++)
		if (tp.port[p].ctx != NULL && e->check((unsigned int)p, len) != 0)
			return -EINVAL;
	if (tp.cfg.signaled_every > fwd_sq_depth())
		return tp_error("signaled-every %u is above the SQ depth (%u): the SQ would fill "
				"before a completion frees it; set txflags signaled-every %u or less",
				tp.cfg.signaled_every, fwd_sq_depth(), fwd_sq_depth());
	if (tp.cfg.inline_data && len > 2048)
		return tp_error("inline frames of %u bytes are above max_inline_data (2048): "
				"set txpkts lower or set txflags without inline", len);
	return 0;
}

static void fwd_teardown(void)
{
	for (int p = 0; p < tp.nb_ports; p++) {
		if (fwd_ports[p].active && tp.qp[fwd_ports[p].qp_id].used)
			qp_destroy((unsigned int)fwd_ports[p].qp_id);
		fwd_ports[p].active = false;
	}
}

static int fwd_port_setup(int p, uint64_t count)
{
	struct fwd_port *fp = &fwd_ports[p];
	bool tx = tp.cfg.engine->transmits;
	struct qp_opts o = { .sq = fwd_sq_depth(), .rq = tx ? 0 : TP_RX_SLOTS / 2,
			     .inline_size = tp.cfg.inline_data ? fwd_frame_len() : 0,
			     .max_tso_header = tp.cfg.engine->max_tso_header,
			     .progress = -1 };
	struct ibv_flow_attr all = { .type = IBV_FLOW_ATTR_ALL_DEFAULT, .size = sizeof(all),
				     .port = 1 };
	int id = qp_create((unsigned int)p, &o, true), rc;

	memset(fp, 0, offsetof(struct fwd_port, hdr));
	if (id < 0)
		return id;
	fp->active = true;
	fp->qp_id = id;
	fp->qp = tp.qp[id].qp;
	fp->cq = tp.qp[id].cq;
	fp->out = paired(p);
	fp->budget = count ? count : UINT64_MAX;
	/* receive WQEs before the flow: from the flow on, the port's frames come to this QP
	 * (the library's progress thread delivers them even before the engine polls) */
	rc = fwd_engine_prepare((unsigned int)p);
	if (rc != 0)
		return rc;
	if (!tx && flow_add((unsigned int)id, &all, "all_default (forwarding)") < 0)
		return -EIO;
	return 0;
}

int fwd_start(uint64_t count)
{
	int rc = 0, active = 0;

	if (running)
		return tp_error("forwarding runs already: stop first");
	if (check_config() != 0)
		return -EINVAL;
	for (int p = 0; p < tp.nb_ports && rc == 0; p++)
		if (tp.port[p].ctx != NULL) {
			rc = fwd_port_setup(p, count);
			active++;
		}
	if (rc == 0 && active == 0)
		rc = tp_error("no started port to forward on: port start <p>");
	fwd_engine_count(count);
	for (int p = 0; rc == 0 && p < tp.nb_ports; p++)
		if (fwd_ports[p].active) {
			memset(&tp.port[p].fwd, 0, sizeof(tp.port[p].fwd));
			dpv_query_port_stats(tp.port[p].ctx, &run_base[p]);
		}
	if (rc == 0) {
		stop_flag = false;
		all_done = false;
		rc = -pthread_create(&worker, NULL, worker_main, NULL);
	}
	if (rc != 0) {
		fwd_teardown();
		return rc;
	}
	running = true;
	counted = count != 0;
	printf("forwarding: %s on %d port(s), burst %u", fwd_mode_name(), active,
	       tp.cfg.burst);
	if (count)
		printf(", %llu %s", (unsigned long long)count,
		       tp.cfg.engine->transmits ? "WRs per port" :
		       "frames received in all");
	printf("\n");
	return 0;
}

int fwd_wait(double seconds)
{
	double end = now() + seconds;

	if (!running || !counted) {
		if (seconds <= 0)
			return tp_error("nothing to wait for: start count <n> first, or wait "
					"<seconds> to pause");
		/* a pause, e.g. while a capture runs or forwarding without a count goes on */
		usleep((useconds_t)(seconds * 1e6));
		return 0;
	}
	while (!__atomic_load_n(&all_done, __ATOMIC_ACQUIRE)) {
		if (seconds > 0 && now() >= end)
			return tp_error("forwarding did not finish its count in %.1f s (show port "
					"stats tells how far it got)", seconds);
		usleep(1000);
	}
	return 0;
}

static void totals(unsigned int p)
{
	const struct fwd_counters *c = &tp.port[p].fwd;
	struct dpv_port_stats st = { 0 };

	dpv_query_port_stats(tp.port[p].ctx, &st);
	printf("port %u: rx %llu, tx WRs %llu, completions %llu, errors %llu, SQ full %llu",
	       p, (unsigned long long)c->rx, (unsigned long long)c->tx_wrs,
	       (unsigned long long)c->completions, (unsigned long long)c->errors,
	       (unsigned long long)c->sq_full);
	if (tp.cfg.engine->totals != NULL)
		tp.cfg.engine->totals(p);
	printf("; wire: %llu frames, %llu bytes\n",
	       (unsigned long long)(st.tx_frames - run_base[p].tx_frames),
	       (unsigned long long)(st.tx_bytes - run_base[p].tx_bytes));
}

int fwd_stop(void)
{
	double end;

	if (!running)
		return tp_error("forwarding is not running: start");
	stop_flag = true;
	pthread_join(worker, NULL);
	running = false;
	/* what was posted completes (a budget of 0 posts nothing more); at most a second */
	end = now() + 1.0;
	for (int p = 0; p < tp.nb_ports; p++)
		fwd_ports[p].budget = 0;
	fwd_engine_stop_receiving();
	for (bool done = false; !done && now() < end;) {
		done = true;
		for (int p = 0; p < tp.nb_ports; p++)
			if (fwd_ports[p].active) {
				fwd_engine_step((unsigned int)p);
				done = done && fwd_engine_done((unsigned int)p);
			}
	}
	printf("forwarding stopped (%s)\n", fwd_mode_name());
	for (int p = 0; p < tp.nb_ports; p++)
		if (fwd_ports[p].active)
			totals((unsigned int)p);
	fwd_teardown();
	return 0;
}

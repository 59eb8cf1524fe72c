/* SPDX-License-Identifier: BSD-3-Clause */
/* fork() and dpverbs (doc/api.md, "fork"). A parent with an open net_ring device, a PD, a CQ,
 * a RAW_PACKET QP and an MR forks children:
 *   - one calls verbs: listing and opening devices fail with ENODEV and a message on stderr
 *     (once), posting and polling the inherited QP and CQ and creating objects are refused
 *     with ENODEV, destroying them and closing the context succeed and do nothing; it exits
 *     through exit() (exit handlers run);
 *   - one only exits (exit handlers run, nothing else);
 *   - one made by syscall(SYS_fork), which runs no atfork handler: refused all the same;
 *   - one writes into DPDK's memory with rte_* addresses: it faults (the parent's hugepages
 *     are not mapped in a child), never reaching the parent's pools;
 * after each, the parent's port still sends and receives frames byte for byte, and after all
 * of them, closing and opening the device again (new pools) works end to end too, and the
 * parent's runtime directory is still there. A child forked before the parent started DPDK
 * starts its own (its own runtime directory) and uses its device; with ibv_fork_init its MR
 * pages are not mapped into a grandchild until the MR is deregistered. ibv_fork_init and
 * ibv_is_fork_initialized: DISABLED, ENABLED after ibv_fork_init or with RDMAV_FORK_SAFE /
 * IBV_FORK_SAFE, EINVAL once an MR was registered without it.
 * Linked with the internal libraries (the faulting child calls rte_memseg_walk).
 * DPV_EAL_ARGS: --vdev=net_ring0 (hugepages as the machine has them). */
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <rte_memory.h>

#include "dpv_test.h"

static const uint8_t dmac[6] = { 0x02, 0, 0, 0, 0x0f, 0x01 };

struct objs {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_flow *flow;
	uint8_t *buf;                  /* [0, 4K): frames to send, [4K, 8K): receive buffers */
};

struct flow_eth {
	struct ibv_flow_attr attr;
	struct ibv_flow_spec_eth eth;
};

static void objs_open(struct objs *o, uint8_t *buf)
{
	struct ibv_qp_cap cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
				  .max_recv_sge = 1 };
	struct flow_eth f = {
		.attr = { .type = IBV_FLOW_ATTR_NORMAL, .size = sizeof(f), .num_of_specs = 1,
			  .port = 1 },
		.eth = { .type = IBV_FLOW_SPEC_ETH, .size = sizeof(struct ibv_flow_spec_eth) },
	};

	o->buf = buf;
	o->ctx = test_open(NULL);
	o->pd = ibv_alloc_pd(o->ctx);
	o->cq = ibv_create_cq(o->ctx, 64, NULL, NULL, 0);
	if (o->pd == NULL || o->cq == NULL) {
		fprintf(stderr, "PD/CQ: %s\n", strerror(errno));
		exit(1);
	}
	o->qp = test_raw_qp(o->pd, o->cq, cap);
	o->mr = ibv_reg_mr(o->pd, buf, 8192, IBV_ACCESS_LOCAL_WRITE);
	memcpy(f.eth.val.dst_mac, dmac, 6);
	memset(f.eth.mask.dst_mac, 0xff, 6);
	o->flow = ibv_create_flow(o->qp, &f.attr);
	if (o->mr == NULL || o->flow == NULL) {
		fprintf(stderr, "MR/flow: %s\n", strerror(errno));
		exit(1);
	}
}

static void objs_close(struct objs *o)
{
	CHECK_EQ(ibv_destroy_flow(o->flow), 0);
	CHECK_EQ(ibv_destroy_qp(o->qp), 0);
	CHECK_EQ(ibv_dereg_mr(o->mr), 0);
	CHECK_EQ(ibv_destroy_cq(o->cq), 0);
	CHECK_EQ(ibv_dealloc_pd(o->pd), 0);
	CHECK_EQ(ibv_close_device(o->ctx), 0);
}

/* Four frames through the port (net_ring: what it sends, it receives), each back byte for
 * byte in its receive buffer; returns whether all were. */
static bool loop_frames(struct objs *o, uint8_t tag)
{
	struct ibv_wc wc[8];
	int sends = 0, recvs = 0, ok = 0;

	for (int i = 0; i < 4; i++) {
		uint8_t *f = o->buf + i * 256, *r = o->buf + 4096 + i * 256;
		struct ibv_sge rs = { (uintptr_t)r, 256, o->mr->lkey };
		struct ibv_recv_wr rw = { .wr_id = 100 + i, .sg_list = &rs, .num_sge = 1 }, *rbad;
		struct ibv_sge ss = { (uintptr_t)f, 200, o->mr->lkey };
		struct ibv_send_wr sw = { .wr_id = i, .sg_list = &ss, .num_sge = 1,
					  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED },
				   *sbad;

		memcpy(f, dmac, 6);
		memcpy(f + 6, "\x02\x00\x00\x00\x0f\x02\x88\xb5", 8);
		for (int k = 14; k < 200; k++)
			f[k] = (uint8_t)(tag + i + k);
		memset(r, 0, 256);
		if (ibv_post_recv(o->qp, &rw, &rbad) != 0 || ibv_post_send(o->qp, &sw, &sbad) != 0)
			return false;
	}
	for (int got = 0, n; got < 8; got += n) {
		n = test_poll(o->cq, wc, 8 - got);
		if (n <= 0)
			break;
		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS)
				continue;
			if (wc[i].opcode == IBV_WC_SEND)
				sends++;
			if (wc[i].opcode == IBV_WC_RECV && wc[i].byte_len == 200 && wc[i].wr_id >= 100 &&
			    memcmp(o->buf + 4096 + (wc[i].wr_id - 100) * 256,
				   o->buf + (wc[i].wr_id - 100) * 256, 200) == 0)
				recvs++;
		}
	}
	ok = sends == 4 && recvs == 4;
	if (!ok)
		fprintf(stderr, "loop %u: %d sends, %d receives byte-exact\n", tag, sends, recvs);
	return ok;
}

/* ---- children ---- */

struct child {
	pid_t pid;
	int res, err;                  /* the parent's ends: results, the child's stderr */
	int status;
	char out[8192];
};

/* Fork (with @raw, by the system call, which runs no atfork handler); the child runs @fn with
 * its end of the result pipe, its stderr into the other pipe; @fn never returns. */
static void child_run(struct child *c, void (*fn)(int fd, void *arg), void *arg, bool raw)
{
	int res[2], err[2];

	memset(c, 0, sizeof(*c));
	if (pipe(res) != 0 || pipe(err) != 0)
		exit(1);
	fflush(NULL);
	c->pid = raw ? (pid_t)syscall(SYS_fork) : fork();
	if (c->pid == 0) {
		close(res[0]);
		close(err[0]);
		dup2(err[1], 2);
		alarm(60);                     /* a hang ends as SIGALRM: a failure */
		fn(res[1], arg);
		_exit(99);
	}
	close(res[1]);
	close(err[1]);
	c->res = res[0];
	c->err = err[0];
}

/* Read up to @len result bytes, the child's stderr, its exit status. */
static ssize_t child_wait(struct child *c, void *out, size_t len)
{
	ssize_t got = 0, k, olen = 0;

	while (len > 0 && (k = read(c->res, (char *)out + got, len - got)) > 0 &&
	       (got += k) < (ssize_t)len)
		;
	while ((k = read(c->err, c->out + olen, sizeof(c->out) - 1 - olen)) > 0)
		olen += k;
	close(c->res);
	close(c->err);
	waitpid(c->pid, &c->status, 0);
	return got;
}

static bool exited_0(const struct child *c)
{
	return WIFEXITED(c->status) && WEXITSTATUS(c->status) == 0;
}

static int count_of(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = strstr(hay, needle); p != NULL; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* What the verbs child saw: errnos, 0 for success, -1 for "not as it should be". */
enum { R_LIST, R_LIST_ERR, R_OPEN, R_OPEN_ERR, R_POST, R_POST_BAD, R_RECV, R_POLL, R_POLL_ERR,
       R_PD, R_PD_ERR, R_MR, R_MR_ERR, R_CQ, R_QUERY, R_MODIFY, R_PORT_INFO, R_DESTROY_FLOW,
       R_DESTROY_QP, R_DEREG, R_DESTROY_CQ, R_DEALLOC, R_CLOSE, R_N };

static void child_verbs(int fd, void *arg)
{
	struct objs *o = arg;
	struct ibv_device *dev = o->ctx->device;
	struct ibv_sge sge = { (uintptr_t)o->buf, 64, o->mr->lkey };
	struct ibv_send_wr sw = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND }, *sbad = NULL;
	struct ibv_recv_wr rw = { .sg_list = &sge, .num_sge = 1 }, *rbad = NULL;
	struct ibv_device_attr da;
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };
	struct ibv_wc wc;
	int r[R_N], n;

	errno = 0;
	r[R_LIST] = ibv_get_device_list(&n) == NULL;
	r[R_LIST_ERR] = errno;
	errno = 0;
	r[R_OPEN] = ibv_open_device(dev) == NULL;
	r[R_OPEN_ERR] = errno;
	r[R_POST] = ibv_post_send(o->qp, &sw, &sbad);
	r[R_POST_BAD] = sbad == &sw;
	r[R_RECV] = ibv_post_recv(o->qp, &rw, &rbad);
	errno = 0;
	r[R_POLL] = ibv_poll_cq(o->cq, 1, &wc);
	r[R_POLL_ERR] = errno;
	errno = 0;
	r[R_PD] = ibv_alloc_pd(o->ctx) == NULL;
	r[R_PD_ERR] = errno;
	errno = 0;
	r[R_MR] = ibv_reg_mr(o->pd, o->buf, 64, 0) == NULL;
	r[R_MR_ERR] = errno;
	errno = 0;
	r[R_CQ] = ibv_create_cq(o->ctx, 4, NULL, NULL, 0) == NULL ? errno : 0;
	r[R_QUERY] = ibv_query_device(o->ctx, &da);
	r[R_MODIFY] = ibv_modify_qp(o->qp, &qa, IBV_QP_STATE);
	r[R_PORT_INFO] = dpv_query_port_info(o->ctx, &(struct dpv_port_info){ 0 });
	r[R_DESTROY_FLOW] = ibv_destroy_flow(o->flow);
	r[R_DESTROY_QP] = ibv_destroy_qp(o->qp);
	r[R_DEREG] = ibv_dereg_mr(o->mr);
	r[R_DESTROY_CQ] = ibv_destroy_cq(o->cq);
	r[R_DEALLOC] = ibv_dealloc_pd(o->pd);
	r[R_CLOSE] = ibv_close_device(o->ctx);
	if (write(fd, r, sizeof(r)) != sizeof(r))
		_exit(3);
	exit(0);                           /* dpverbs' exit handlers run */
}

static void check_verbs_child(struct objs *o, bool raw)
{
	struct child c;
	int r[R_N] = { 0 };

	child_run(&c, child_verbs, o, raw);
	CHECK_EQ(child_wait(&c, r, sizeof(r)), sizeof(r));
	CHECK(exited_0(&c), "verbs child (%s): status %#x, stderr:\n%s", raw ? "raw" : "fork",
	      c.status, c.out);
	CHECK(r[R_LIST] && r[R_LIST_ERR] == ENODEV, "ibv_get_device_list: errno %d", r[R_LIST_ERR]);
	CHECK(r[R_OPEN] && r[R_OPEN_ERR] == ENODEV, "ibv_open_device: errno %d", r[R_OPEN_ERR]);
	CHECK_EQ(r[R_POST], ENODEV);
	CHECK(r[R_POST_BAD], "*bad_wr is the WR not posted");
	CHECK_EQ(r[R_RECV], ENODEV);
	CHECK(r[R_POLL] < 0 && r[R_POLL_ERR] == ENODEV, "poll %d errno %d", r[R_POLL],
	      r[R_POLL_ERR]);
	CHECK(r[R_PD] && r[R_PD_ERR] == ENODEV, "alloc_pd errno %d", r[R_PD_ERR]);
	CHECK(r[R_MR] && r[R_MR_ERR] == ENODEV, "reg_mr errno %d", r[R_MR_ERR]);
	CHECK_EQ(r[R_CQ], ENODEV);
	CHECK_EQ(r[R_QUERY], ENODEV);
	CHECK_EQ(r[R_MODIFY], ENODEV);
	CHECK_EQ(r[R_PORT_INFO], ENODEV);
	CHECK_EQ(r[R_DESTROY_FLOW], 0);
	CHECK_EQ(r[R_DESTROY_QP], 0);
	CHECK_EQ(r[R_DEREG], 0);
	CHECK_EQ(r[R_DESTROY_CQ], 0);
	CHECK_EQ(r[R_DEALLOC], 0);
	CHECK_EQ(r[R_CLOSE], 0);
	CHECK_EQ(count_of(c.out, "dpverbs: a child of a process that started DPDK cannot use "
			  "its devices; exec a new program or start DPDK in the child only"), 1);
}

static void child_exit(int fd, void *arg)
{
	(void)fd;
	(void)arg;
	exit(0);
}

/* The first and the last segment of DPDK's heap (hugepages, or --no-huge memory): the
 * first mapped when the EAL started, the last most likely when the device's pools were made
 * (a hugepage mapped later, marked by the memory event callback). */
struct segs {
	void *first, *last;
};

static int seg_of(const struct rte_memseg_list *msl, const struct rte_memseg *ms, void *arg)
{
	struct segs *s = arg;

	if (msl->external || ms->addr == NULL)
		return 0;
	if (s->first == NULL)
		s->first = ms->addr;
	s->last = ms->addr;
	return 0;
}

/* The kernel's SIGSEGV, not a sanitizer's report: AddressSanitizer catches SIGSEGV and exits 1
 * (handle_segv), which would hide the fault these children must die of. */
static void fault_kills(void)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	sigaction(SIGSEGV, &dfl, NULL);
	sigaction(SIGBUS, &dfl, NULL);
}

static void child_rte(int fd, void *arg)
{
	struct segs s = { NULL, NULL };
	void *seg;
	char c = 1;

	rte_memseg_walk(seg_of, &s);
	seg = arg != NULL ? s.last : s.first;
	if (write(fd, &c, 1) != 1 || seg == NULL)
		_exit(3);
	fault_kills();
	memset(seg, 0xa5, 4096);           /* would overwrite the parent's heap: must fault */
	_exit(0);
}

/* ---- before DPDK starts ---- */

static void child_env(int fd, void *arg)
{
	char r = 0;

	setenv((const char *)arg, "1", 1);
	r = ibv_is_fork_initialized() == IBV_FORK_ENABLED;
	if (write(fd, &r, 1) != 1)
		_exit(3);
	_exit(0);
}

static void grandchild_touch(int fd, void *arg)
{
	(void)fd;
	fault_kills();
	*(volatile uint8_t *)arg = 7;
	_exit(0);
}

/* With ibv_fork_init, an MR's pages are DONTFORK while registered: a grandchild that touches
 * them faults; after ibv_dereg_mr it does not. */
static void child_before(int fd, void *arg)
{
	char dir[64], r = 0;
	struct objs o;
	struct child g;
	uint8_t *mem = NULL;

	(void)arg;
	CHECK_EQ(ibv_is_fork_initialized(), IBV_FORK_DISABLED);
	CHECK_EQ(ibv_fork_init(), 0);
	CHECK_EQ(ibv_is_fork_initialized(), IBV_FORK_ENABLED);
	CHECK(posix_memalign((void **)&mem, 4096, 8192) == 0);
	objs_open(&o, mem);
	snprintf(dir, sizeof(dir), "/var/run/dpdk/dpv-%d", (int)getpid());
	CHECK(getuid() != 0 || access(dir, F_OK) == 0, "own runtime directory %s", dir);
	CHECK(loop_frames(&o, 1), "the child's own port works");
	child_run(&g, grandchild_touch, mem + 5000, false);
	child_wait(&g, NULL, 0);
	CHECK(WIFSIGNALED(g.status) && WTERMSIG(g.status) == SIGSEGV,
	      "MR pages not in a grandchild: status %#x", g.status);
	CHECK_EQ(ibv_dereg_mr(o.mr), 0);
	child_run(&g, grandchild_touch, mem + 5000, false);
	child_wait(&g, NULL, 0);
	CHECK(exited_0(&g), "pages back in a grandchild after dereg: status %#x", g.status);
	o.mr = ibv_reg_mr(o.pd, mem, 8192, IBV_ACCESS_LOCAL_WRITE);
	CHECK(o.mr != NULL);
	objs_close(&o);
	r = t_fail == 0;
	if (write(fd, &r, 1) != 1)
		_exit(3);
	exit(0);
}

static void before_dpdk(void)
{
	static const char *vars[] = { "RDMAV_FORK_SAFE", "IBV_FORK_SAFE" };
	struct child c;
	char r = 0, dir[64];

	for (int i = 0; i < 2; i++) {
		r = 0;
		child_run(&c, child_env, (void *)vars[i], false);
		CHECK_EQ(child_wait(&c, &r, 1), 1);
		CHECK(exited_0(&c) && r == 1, "%s=1: IBV_FORK_ENABLED", vars[i]);
	}
	r = 0;
	child_run(&c, child_before, NULL, false);
	CHECK_EQ(child_wait(&c, &r, 1), 1);
	CHECK(exited_0(&c) && r == 1, "child before DPDK: status %#x, stderr:\n%s", c.status,
	      c.out);
	snprintf(dir, sizeof(dir), "/var/run/dpdk/dpv-%d", (int)c.pid);
	CHECK(access(dir, F_OK) != 0, "its exit removed its runtime directory %s", dir);
}

/* ---- after ---- */

int main(void)
{
	static uint8_t buf[8192] __attribute__((aligned(4096)));
	struct objs o;
	struct child c;
	char dir[64], byte = 0;

	unsetenv("RDMAV_FORK_SAFE");
	unsetenv("IBV_FORK_SAFE");
	before_dpdk();

	CHECK_EQ(ibv_is_fork_initialized(), IBV_FORK_DISABLED);
	objs_open(&o, buf);
	CHECK_EQ(ibv_fork_init(), EINVAL);                 /* an MR came first */
	CHECK_EQ(ibv_is_fork_initialized(), IBV_FORK_DISABLED);
	CHECK(loop_frames(&o, 10), "the port works before any fork");
	snprintf(dir, sizeof(dir), "/var/run/dpdk/dpv-%d", (int)getpid());

	check_verbs_child(&o, false);
	CHECK(loop_frames(&o, 20), "the port works after a child used verbs");
	check_verbs_child(&o, true);
	CHECK(loop_frames(&o, 30), "the port works after a raw-forked child");

	child_run(&c, child_exit, NULL, false);
	child_wait(&c, NULL, 0);
	CHECK(exited_0(&c), "exiting child: status %#x, stderr:\n%s", c.status, c.out);
	CHECK(loop_frames(&o, 40), "the port works after a child's exit handlers");

	for (int last = 0; last < 2; last++) {
		child_run(&c, child_rte, last ? &c : NULL, false);
		CHECK_EQ(child_wait(&c, &byte, 1), 1);
		CHECK(WIFSIGNALED(c.status) && WTERMSIG(c.status) == SIGSEGV,
		      "a child writing to DPDK memory (%s segment) faults: status %#x",
		      last ? "last" : "first", c.status);
		CHECK(loop_frames(&o, 50 + last), "the port works after a child wrote at DPDK's heap");
	}

	/* new pools and queues: where a corrupted heap showed (rte_pktmbuf_pool_create) */
	objs_close(&o);
	objs_open(&o, buf);
	CHECK(loop_frames(&o, 60), "the device opened again works");
	CHECK(getuid() != 0 || access(dir, F_OK) == 0, "the runtime directory %s is kept", dir);
	objs_close(&o);
	return test_done("fork");
}

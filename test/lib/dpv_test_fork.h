/* SPDX-License-Identifier: BSD-3-Clause */
/* Two processes, one dpverbs port each on the two ends of a veth pair (net_af_packet): what
 * the two-process wire tests (test_mw_wire.c, test_srq_wire.c) share. test_fork_pair forks;
 * the parent is side A, the child side B; each opens its context on its end, and they talk
 * over a socketpair. test_fork_done ends either side: B's exit status is its verdict, A waits
 * for B and fails when B did. */
#ifndef DPV_TEST_FORK_H
#define DPV_TEST_FORK_H

#include <net/if.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "dpv_test.h"
#include "dpv_test_ud.h"

static pid_t test_fork_child;

/* net_af_packet joins PACKET_FANOUT group (pid ^ ifindex) & 0xffff: the two processes' groups
 * must differ, so the child forks again until its pid gives another group. */
static inline void test_fork_distinct_fanout(pid_t pid_a, const char *ia, const char *ib)
{
	unsigned int xa = if_nametoindex(ia), xb = if_nametoindex(ib);

	for (int tries = 0; tries < 16; tries++) {
		pid_t pid;
		int status;

		if ((((unsigned int)pid_a ^ xa) & 0xffff) != (((unsigned int)getpid() ^ xb) & 0xffff))
			return;
		pid = fork();
		if (pid == 0)
			continue;
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
			exit(1);
		exit(WEXITSTATUS(status));
	}
}

/* Fork into sides A (returns true) and B (false), each with the context of its end of the
 * veth pair whose interface names the environment variables @env_a and @env_b give; *@sock
 * is this side's end of the socketpair. Exits 1 when the variables are missing. */
static inline bool test_fork_pair(const char *env_a, const char *env_b, int *sock,
				  struct ibv_context **ctx)
{
	const char *ia = getenv(env_a), *ib = getenv(env_b);
	pid_t pid_a = getpid();
	char args[256];
	int sv[2];
	bool is_a;

	if (ia == NULL || ib == NULL || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
		fprintf(stderr, "%s and %s name the veth ends\n", env_a, env_b);
		exit(1);
	}
	test_fork_child = fork();
	is_a = test_fork_child != 0;
	*sock = sv[is_a ? 0 : 1];
	close(sv[is_a ? 1 : 0]);
	if (!is_a)
		test_fork_distinct_fanout(pid_a, ia, ib);
	snprintf(args, sizeof(args), "--vdev=net_af_packet0,iface=%s --log-level=lib.eal:error "
		 "--log-level=pmd.net.af_packet:error --log-level=lib.telemetry:error",
		 is_a ? ia : ib);
	setenv("DPV_EAL_ARGS", args, 1);
	*ctx = test_open(NULL);
	return is_a;
}

/* Send the @len bytes at @m to the other side over @sock; exits when the write fails. */
static inline void test_fork_send(int sock, const void *m, size_t len)
{
	if (write(sock, m, len) != (ssize_t)len) {
		perror("write");
		exit(1);
	}
}

/* The other side's next @len-byte message into @m; @progress (if not NULL) is called while
 * none has come (it polls a CQ: this side's port goes on). Exits, naming side @who, when the
 * other side is gone or 30 s passed. */
static inline void test_fork_recv(int sock, void *m, size_t len, const char *who,
				  void (*progress)(void))
{
	double t0 = test_now();

	for (;;) {
		ssize_t n = recv(sock, m, len, MSG_DONTWAIT);

		if (n == (ssize_t)len)
			return;
		if (n == 0 || (n < 0 && errno != EAGAIN) || test_now() - t0 > 30) {
			fprintf(stderr, "%s: the peer is gone\n", who);
			exit(1);
		}
		if (progress != NULL)
			progress();
	}
}

/* What each side of a two-process RoCE test sets up alike (test_fork_side). */
struct fork_side {
	int sock;                       /* this side's end of the socketpair */
	bool is_a;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;              /* over all of buf */
	uint8_t *buf;
	union ibv_gid gid, peer_gid;    /* this side's address and the peer's, IPv4-mapped */
};

/* Fork (test_fork_pair, the veth ends from DPV_MW_IFACE_A and _B) and set up @s: the address
 * @net.1 (A) or @net.2 (B) on this side's port, a PD, and a @len-byte buffer registered with
 * @access. False, saying why on stderr, when a step fails. */
static inline bool test_fork_side(struct fork_side *s, const char *net, size_t len, int access)
{
	char me[32], peer[32];

	s->is_a = test_fork_pair("DPV_MW_IFACE_A", "DPV_MW_IFACE_B", &s->sock, &s->ctx);
	snprintf(me, sizeof(me), "%s.%d", net, s->is_a ? 1 : 2);
	snprintf(peer, sizeof(peer), "%s.%d", net, s->is_a ? 2 : 1);
	gid_v4(&s->gid, me);
	gid_v4(&s->peer_gid, peer);
	s->buf = aligned_alloc(4096, len);
	s->pd = ibv_alloc_pd(s->ctx);
	s->mr = s->pd ? ibv_reg_mr(s->pd, s->buf, len, access) : NULL;
	if (dpv_port_add_addr(s->ctx, me) != 0 || s->mr == NULL) {
		fprintf(stderr, "setup: %s\n", strerror(errno));
		return false;
	}
	return true;
}

/* Release what test_fork_side made (the test's own objects gone first). */
static inline void test_fork_side_free(struct fork_side *s)
{
	CHECK_EQ(ibv_dereg_mr(s->mr), 0);
	CHECK_EQ(ibv_dealloc_pd(s->pd), 0);
	CHECK_EQ(ibv_close_device(s->ctx), 0);
	free(s->buf);
}

/* The end of side @is_a of test @name: its verdict, A's including B's exit status. */
static inline int test_fork_done(bool is_a, const char *name)
{
	char label[64];
	int status = 1;

	snprintf(label, sizeof(label), "%s %s", name, is_a ? "A" : "B");
	if (is_a && (waitpid(test_fork_child, &status, 0) != test_fork_child ||
		     !WIFEXITED(status) || WEXITSTATUS(status) != 0))
		CHECK(0, "B failed (status %#x)", status);
	return test_done(label);
}

#endif

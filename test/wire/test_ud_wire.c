/* SPDX-License-Identifier: BSD-3-Clause */
/* UD over a real wire: two ports (net_af_packet on both ends of a veth pair, run by
 * run_ud_wire.sh), each with an IPv4 and an IPv6 address. UD SEND and SEND_WITH_IMM of 0, 1,
 * 63, 1000 and path-MTU bytes both ways, over the link-local GIDs (the MAC inside), IPv4 and
 * IPv6 (the peer resolved with ARP / ND), with exact completions, GRH and payload; a
 * multicast group with two QPs on the far port and one on the sending port (the loopback
 * copy) gets exactly one datagram each; transmit faults drop UD's frames before the wire.
 * Then frames crafted outside (inject_roce.py, scapy)
 * arrive: the good ones are delivered, the bad ones (ICRC, short, pad, BTH version, unknown
 * opcode, wrong QPN, wrong Q_Key, a P_Key, an RC opcode) dropped and counted, and nothing
 * lands outside a posted receive buffer. The capture of the wire is checked by
 * check_ud_pcap.py afterwards.
 * Environment: DPV_TEST_DIR, a directory shared with the harness: this program writes "info"
 * (what inject_roce.py needs) and waits for "injected". */
#include <poll.h>
#include <pthread.h>

#include "dpv_test_ud.h"

#define SLOT 8192
#define NSLOT 64
#define QKEY 0x1234567u
#define GROUP_QKEY 0x5555u

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;                   /* [0, 64K) send data, then NSLOT receive slots */
	struct ibv_qp *qp;
	union ibv_gid gid[3];           /* link-local, IPv4, IPv6 */
};

static struct side s0, s1;
static uint32_t mtu;
static volatile bool stop;

/* While one port's ibv_create_ah waits for ARP/ND, the other port of this process must answer:
 * a thread polls an empty CQ of each context, which progresses its port (as the peer process
 * does when the ports belong to two programs). */
static void *progress_thread(void *arg)
{
	struct ibv_cq *cq[2] = { ibv_create_cq(s0.ctx, 1, NULL, NULL, 0),
				 ibv_create_cq(s1.ctx, 1, NULL, NULL, 0) };
	struct ibv_wc wc;

	while (!stop) {
		for (int i = 0; i < 2; i++)
			if (cq[i] != NULL)
				CHECK(ibv_poll_cq(cq[i], 1, &wc) == 0, "a completion on an empty CQ");
		usleep(200);
	}
	for (int i = 0; i < 2; i++)
		if (cq[i] != NULL)
			ibv_destroy_cq(cq[i]);
	return arg;
}

static uint8_t *slot_of(struct side *s, int i)
{
	return s->buf + 65536 + (size_t)i * SLOT;
}

static void side_open(struct side *s, const char *name, const char *v4, const char *v6)
{
	struct ibv_port_attr pa;

	s->ctx = test_open(name);
	if (dpv_port_add_addr(s->ctx, v4) != 0 || dpv_port_add_addr(s->ctx, v6) != 0) {
		fprintf(stderr, "%s: dpv_port_add_addr failed\n", name);
		exit(1);
	}
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = ibv_create_cq(s->ctx, 512, NULL, NULL, 0);
	s->buf = aligned_alloc(4096, 65536 + NSLOT * SLOT);
	s->mr = ibv_reg_mr(s->pd, s->buf, 65536 + NSLOT * SLOT, IBV_ACCESS_LOCAL_WRITE);
	if (s->pd == NULL || s->cq == NULL || s->mr == NULL) {
		fprintf(stderr, "%s: setup: %s\n", name, strerror(errno));
		exit(1);
	}
	s->qp = ud_qp_rts(s->pd, s->cq, s->cq, QKEY, 100, 0);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(ibv_query_gid(s->ctx, 1, i, &s->gid[i]), 0);
	CHECK_EQ(ibv_query_port(s->ctx, 1, &pa), 0);
	mtu = 128u << pa.active_mtu;
}

static int post_recv(struct side *s, struct ibv_qp *qp, int slot, uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)slot_of(s, slot), SLOT, s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;

	memset(slot_of(s, slot), GUARD, SLOT);
	return ibv_post_recv(qp, &wr, &bad);
}

static int send_ud(struct side *s, struct ibv_ah *ah, uint32_t rqpn, uint32_t qkey, bool imm,
		   uint32_t len, uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)s->buf, len, s->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
		.opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED, .imm_data = htonl(0xabc00000 + len),
		.wr.ud = { .ah = ah, .remote_qpn = rqpn, .remote_qkey = qkey },
	}, *bad;

	return ibv_post_send(s->qp, &wr, &bad);
}

/* Poll @s's CQ for one completion, progressing @other's port too (frames cross the kernel). */
static int poll_one(struct side *s, struct side *other, struct ibv_wc *wc, double secs)
{
	double end = test_now() + secs;
	struct ibv_wc junk;

	do {
		int r = ibv_poll_cq(s->cq, 1, wc);

		if (r != 0)
			return r;
		if (other != NULL && ibv_poll_cq(other->cq, 1, &junk) == 1)
			CHECK(0, "unexpected completion on the other side: wr_id %llu status %d",
			      (unsigned long long)junk.wr_id, junk.status);
	} while (test_now() < end);
	return 0;
}

static void exchange(struct side *a, struct side *b, int gi, uint32_t len, bool imm)
{
	struct ibv_ah *ah = ud_ah(a->pd, gi, &b->gid[gi], 0, gi == 2 ? 0x1234 : 0, 64);
	uint64_t id = (uint64_t)len << 8 | (uint64_t)gi << 1 | imm;
	const uint8_t *rb = slot_of(b, 0);
	uint8_t want[4096];
	struct ibv_wc wc;

	if (ah == NULL) {
		CHECK(0, "GID %d: create_ah: %s", gi, strerror(errno));
		return;
	}
	CHECK_EQ(post_recv(b, b->qp, 0, id), 0);
	pattern(a->buf, len, (uint8_t)id);
	memcpy(want, a->buf, len);
	CHECK_EQ(send_ud(a, ah, b->qp->qp_num, QKEY, imm, len, id), 0);
	CHECK(poll_one(a, NULL, &wc, 5) == 1 && wc.status == IBV_WC_SUCCESS && wc.wr_id == id,
	      "GID %d len %u: send completion", gi, len);
	if (poll_one(b, a, &wc, 5) != 1) {
		CHECK(0, "GID %d len %u imm %d: nothing received", gi, len, imm);
		ibv_destroy_ah(ah);
		return;
	}
	CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == id && wc.opcode == IBV_WC_RECV &&
	      wc.byte_len == len + 40 && wc.src_qp == a->qp->qp_num &&
	      wc.wc_flags == (IBV_WC_GRH | (imm ? IBV_WC_WITH_IMM : 0)) &&
	      (!imm || ntohl(wc.imm_data) == 0xabc00000 + len),
	      "GID %d len %u imm %d: status %d len %u src %u flags %#x", gi, len, imm, wc.status,
	      wc.byte_len, wc.src_qp, wc.wc_flags);
	check_grh(rb, &a->gid[gi], &b->gid[gi], len, imm, 0, gi == 2 ? 0x1234 : 0, 64);
	CHECK(memcmp(rb + 40, want, len) == 0, "GID %d len %u: payload", gi, len);
	check_guard(rb, 40 + len, SLOT, "exchange");
	ibv_destroy_ah(ah);
}

/* A group with two QPs on port 1 and one on port 0: one datagram from port 0 reaches each
 * exactly once (port 0's own QP by the loopback copy). */
static void check_multicast(void)
{
	union ibv_gid grp;
	struct ibv_qp *m1a = ud_qp_rts(s1.pd, s1.cq, s1.cq, GROUP_QKEY, 0, 0);
	struct ibv_qp *m1b = ud_qp_rts(s1.pd, s1.cq, s1.cq, GROUP_QKEY, 0, 0);
	struct ibv_qp *m0 = ud_qp_rts(s0.pd, s0.cq, s0.cq, GROUP_QKEY, 0, 0);
	struct ibv_ah *ah;
	struct ibv_wc wc[4];
	int got1 = 0, got0 = 0;

	gid_v4(&grp, "239.1.1.7");
	CHECK_EQ(ibv_attach_mcast(m1a, &grp, 0), 0);
	CHECK_EQ(ibv_attach_mcast(m1b, &grp, 0), 0);
	CHECK_EQ(ibv_attach_mcast(m0, &grp, 0), 0);
	CHECK_EQ(post_recv(&s1, m1a, 10, 0x1a), 0);
	CHECK_EQ(post_recv(&s1, m1b, 11, 0x1b), 0);
	CHECK_EQ(post_recv(&s0, m0, 12, 0x10), 0);
	ah = ud_ah(s0.pd, 1, &grp, 0, 0, 1);
	CHECK(ah != NULL, "group AH: %s", strerror(errno));
	if (ah == NULL)
		return;
	pattern(s0.buf, 77, 3);
	CHECK_EQ(send_ud(&s0, ah, 0xffffff, GROUP_QKEY, false, 77, 0x99), 0);
	for (double end = test_now() + 3; test_now() < end && (got1 < 2 || got0 < 2);) {
		int r = ibv_poll_cq(s1.cq, 4, wc);

		for (int i = 0; i < r; i++) {
			CHECK(wc[i].status == IBV_WC_SUCCESS && wc[i].byte_len == 117 &&
			      wc[i].src_qp == s0.qp->qp_num &&
			      (wc[i].wr_id == 0x1a || wc[i].wr_id == 0x1b), "group on port 1");
			got1++;
		}
		r = ibv_poll_cq(s0.cq, 4, wc);
		for (int i = 0; i < r; i++) {
			CHECK(wc[i].status == IBV_WC_SUCCESS &&
			      (wc[i].wr_id == 0x99 || (wc[i].wr_id == 0x10 && wc[i].byte_len == 117)),
			      "group on port 0: wr_id %#llx", (unsigned long long)wc[i].wr_id);
			got0++;
		}
	}
	CHECK_EQ(got1, 2);
	CHECK_EQ(got0, 2);                    /* the send completion and the loopback copy */
	CHECK(memcmp(slot_of(&s1, 10) + 40, s0.buf, 77) == 0 &&
	      memcmp(slot_of(&s1, 11) + 40, s0.buf, 77) == 0 &&
	      memcmp(slot_of(&s0, 12) + 40, s0.buf, 77) == 0, "group payloads");
	ibv_destroy_ah(ah);
	ibv_destroy_qp(m1a);
	ibv_destroy_qp(m1b);
	ibv_destroy_qp(m0);
}

/* Transmit faults act on UD's frames: all dropped, none on the wire or received. */
static void check_tx_faults(void)
{
	struct ibv_ah *ah = ud_ah(s0.pd, 1, &s1.gid[1], 0, 0, 64);
	struct dpv_faults drop = { .drop_ppm = 1000000, .seed = 9 }, off = { 0 };
	struct dpv_fault_stats st;
	struct ibv_wc wc;

	CHECK(ah != NULL, "AH: %s", strerror(errno));
	if (ah == NULL)
		return;
	CHECK_EQ(post_recv(&s1, s1.qp, 20, 1), 0);
	CHECK_EQ(dpv_set_port_faults(s0.ctx, DPV_FAULT_TX, &drop), 0);
	for (int i = 0; i < 5; i++) {
		CHECK_EQ(send_ud(&s0, ah, s1.qp->qp_num, QKEY, false, 10, 50), 0);
		CHECK(poll_one(&s0, NULL, &wc, 5) == 1 && wc.status == IBV_WC_SUCCESS,
		      "a dropped datagram still completes");
	}
	CHECK_EQ(poll_one(&s1, NULL, &wc, 0.5), 0);
	CHECK_EQ(dpv_query_port_faults(s0.ctx, DPV_FAULT_TX, NULL, &st), 0);
	CHECK_EQ(st.dropped, 5);
	CHECK_EQ(dpv_set_port_faults(s0.ctx, DPV_FAULT_TX, &off), 0);
	/* the receive WQE is still there: the next datagram takes it */
	CHECK_EQ(send_ud(&s0, ah, s1.qp->qp_num, QKEY, false, 10, 51), 0);
	CHECK(poll_one(&s0, NULL, &wc, 5) == 1, "send after the faults");
	CHECK(poll_one(&s1, NULL, &wc, 5) == 1 && wc.wr_id == 1 && wc.byte_len == 50,
	      "received after the faults");
	ibv_destroy_ah(ah);
}

static void wait_file(const char *dir, const char *name, double secs)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	for (double end = test_now() + secs; access(path, F_OK) != 0 && test_now() < end;) {
		struct ibv_wc wc;

		ibv_poll_cq(s1.cq, 0, &wc);           /* keep the ports answering ARP */
		ibv_poll_cq(s0.cq, 0, &wc);
		usleep(1000);
	}
}

static void put_mac(FILE *f, const char *key, struct ibv_context *ctx)
{
	struct dpv_port_info pi;
	union ibv_gid g;

	dpv_query_port_info(ctx, &pi);
	ibv_query_gid(ctx, 1, 0, &g);      /* the MAC inside the link-local GID */
	fprintf(f, "%s=%02x:%02x:%02x:%02x:%02x:%02x\n", key, g.raw[8] ^ 2, g.raw[9], g.raw[10],
		g.raw[13], g.raw[14], g.raw[15]);
}

/* Frames made outside: the harness says how many of each kind it sent (the info file's
 * answer), the good ones must arrive whole, the others be counted, nothing else written. */
static void check_injected(const char *dir)
{
	char path[512];
	FILE *f;
	struct dpv_port_stats st0, st1;
	int good = 0, bad_icrc = 0, malformed = 0, no_qp = 0, bad_qkey = 0, got = 0;
	struct ibv_wc wc[8];

	dpv_query_port_stats(s1.ctx, &st0);
	for (int i = 0; i < NSLOT; i++)
		CHECK_EQ(post_recv(&s1, s1.qp, i, 5000 + (uint64_t)i), 0);
	snprintf(path, sizeof(path), "%s/info", dir);
	f = fopen(path, "w");
	if (f == NULL) {
		CHECK(0, "cannot write %s", path);
		return;
	}
	fprintf(f, "qpn=%u\nqkey=%u\nsrc_qpn=%u\nip0=10.9.0.1\nip1=10.9.0.2\n"
		"ip6_0=fd09::1\nip6_1=fd09::2\n", s1.qp->qp_num, QKEY, s0.qp->qp_num);
	put_mac(f, "mac0", s0.ctx);
	put_mac(f, "mac1", s1.ctx);
	fclose(f);
	wait_file(dir, "injected", 60);
	snprintf(path, sizeof(path), "%s/injected", dir);
	f = fopen(path, "r");
	if (f == NULL || fscanf(f, "good=%d bad_icrc=%d malformed=%d no_qp=%d bad_qkey=%d", &good,
				&bad_icrc, &malformed, &no_qp, &bad_qkey) != 5) {
		CHECK(0, "no answer from the injector");
		if (f != NULL)
			fclose(f);
		return;
	}
	fclose(f);
	for (double end = test_now() + 3; test_now() < end;) {
		int r = ibv_poll_cq(s1.cq, 8, wc);

		for (int i = 0; i < r; i++) {
			int slot = (int)(wc[i].wr_id - 5000);

			CHECK(wc[i].status == IBV_WC_SUCCESS && slot == got, "injected %d: status %d",
			      got, wc[i].status);
			/* the good frames carry "good <n>" and come from the sending QP */
			CHECK(wc[i].src_qp == s0.qp->qp_num && wc[i].byte_len == 40 + 8 &&
			      memcmp(slot_of(&s1, slot) + 40, "good", 4) == 0,
			      "injected %d: src %u len %u", got, wc[i].src_qp, wc[i].byte_len);
			check_guard(slot_of(&s1, slot), wc[i].byte_len, SLOT, "injected");
			got++;
		}
	}
	dpv_query_port_stats(s1.ctx, &st1);
	CHECK_EQ(got, good);
	CHECK_EQ(st1.rx_roce_bad_icrc - st0.rx_roce_bad_icrc, bad_icrc);
	CHECK_EQ(st1.rx_roce_malformed - st0.rx_roce_malformed, malformed);
	CHECK_EQ(st1.rx_roce_no_qp - st0.rx_roce_no_qp, no_qp);
	CHECK_EQ(st1.rx_roce_bad_qkey - st0.rx_roce_bad_qkey, bad_qkey);
	for (int i = got; i < NSLOT; i++)
		check_guard(slot_of(&s1, i), 0, SLOT, "unused receive buffer");
	printf("injected: %d delivered, %d bad ICRC, %d malformed, %d no QP, %d bad Q_Key\n",
	       got, bad_icrc, malformed, no_qp, bad_qkey);
}

int main(void)
{
	const uint32_t sizes[] = { 0, 1, 63, 1000, 0 };
	const char *dir = getenv("DPV_TEST_DIR");

	pthread_t progress;

	side_open(&s0, "dpv_net_af_packet0", "10.9.0.1", "fd09::1");
	side_open(&s1, "dpv_net_af_packet1", "10.9.0.2", "fd09::2");
	pthread_create(&progress, NULL, progress_thread, NULL);
	for (int gi = 0; gi < 3; gi++)
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			for (int imm = 0; imm < 2; imm++) {
				uint32_t len = i == 4 ? mtu : sizes[i];

				exchange(&s0, &s1, gi, len, imm);
				exchange(&s1, &s0, gi, len, imm);
			}
	check_multicast();
	check_tx_faults();
	if (dir != NULL)
		check_injected(dir);
	stop = true;
	pthread_join(progress, NULL);
	ibv_destroy_qp(s0.qp);
	ibv_destroy_qp(s1.qp);
	ibv_close_device(s0.ctx);
	ibv_close_device(s1.ctx);
	return test_done("ud_wire");
}

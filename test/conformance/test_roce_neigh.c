/* SPDX-License-Identifier: BSD-3-Clause */
/* ARP and IPv6 neighbour discovery of a port with addresses, on net_ring (what the port sends
 * it receives again): a RAW_PACKET QP plays the peer, sending requests, replies and
 * solicitations; a SNIFFER flow shows every frame on the wire, an ALL_DEFAULT flow what RAW
 * QPs would get. Checked: requests for the port's addresses (and its link-local GID)
 * answered, byte for byte; requests for others and malformed frames not answered; ARP/ND
 * never reaching RAW default flows while the port has addresses and reaching them once it
 * has none; dpv__roce_resolve sending the configured number of requests and failing with
 * EHOSTUNREACH when nobody answers, returning a peer's MAC once it answers, taking learned
 * MACs from the cache without a frame, and asking again once the entry aged.
 * Linked with the internal libraries (dpv__roce_resolve). DPV_EAL_ARGS: --vdev=net_ring0
 * (and -l 0,1 with DPV_TEST_SERVICE). */
#include <arpa/inet.h>
#include <pthread.h>

#include "dpv_roce.h"
#include "dpv_test.h"
#include "roce_nd.h"
#include "verbs_priv.h"

static const char *conf_text =
	"port_addr = net_ring0 10.3.0.1 fd03::1\n"
	"resolve_timeout_ms = 1000\n"
	"resolve_probes = 4\n"
	"neigh_reachable_ms = 500\n";

#define SLOTS 64
#define SLOT_SIZE 2048
#define MAXF 64

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *scq, *sniff_cq, *dflt_cq;
static struct ibv_qp *txqp, *sniff_qp, *dflt_qp;
static struct ibv_mr *mr;
static uint8_t *buf;             /* [0, 64 KiB): frames to send; then 2 x SLOTS receive slots */
static uint8_t own_mac[6];
static const uint8_t peer_mac[6] = { 2, 0xaa, 0, 0, 0, 7 };

struct frame {
	uint8_t b[SLOT_SIZE];
	uint32_t len;
};
static struct frame seen[MAXF];  /* what the sniffer saw in the last capture */
static int nseen, ndefault;

/* DPV_TEST_SERVICE=1: every QP in service mode, so that a service lcore polls the port and
 * dpv__roce_resolve waits for it instead of polling itself. */
static void write_config(char *path)
{
	int fd = mkstemp(path);
	const char *svc = getenv("DPV_TEST_SERVICE") != NULL ? "progress = 1\n" : "";

	if (fd < 0 || write(fd, conf_text, strlen(conf_text)) != (ssize_t)strlen(conf_text) ||
	    write(fd, svc, strlen(svc)) != (ssize_t)strlen(svc)) {
		perror("config");
		exit(1);
	}
	close(fd);
	setenv("DPV_CONFIG", path, 1);
}

static uint8_t *slot(int q, int i)
{
	return buf + 65536 + ((size_t)q * SLOTS + (size_t)i) * SLOT_SIZE;
}

static void post_slot(struct ibv_qp *qp, int q, int i)
{
	struct ibv_sge sge = { (uintptr_t)slot(q, i), SLOT_SIZE, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (ibv_post_recv(qp, &wr, &bad) != 0)
		fprintf(stderr, "ibv_post_recv failed\n");
}

#define FENCE_TYPE "\x88\xb6"      /* the marker frames' EtherType */

/* Send a marker frame carrying @seq (not ARP/ND: nobody answers it). */
static void send_marker(uint32_t seq)
{
	uint8_t *f = buf + 16 * 128;
	struct ibv_sge sge = { (uintptr_t)f, 64, mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND }, *bad;

	memset(f, 0, 64);
	memset(f, 0xff, 6);
	memcpy(f + 6, peer_mac, 6);
	memcpy(f + 12, FENCE_TYPE, 2);
	memcpy(f + 14, &seq, 4);
	CHECK(ibv_post_send(txqp, &wr, &bad) == 0, "marker send");
}

/* A marker's sequence number, or 0 for any other frame. */
static uint32_t marker_of(const uint8_t *f, uint32_t len)
{
	uint32_t seq = 0;

	if (len >= 18 && memcmp(f + 12, FENCE_TYPE, 2) == 0)
		memcpy(&seq, f + 14, 4);
	return seq;
}

/* The ARP/ND frames the port sent so far (dpv_query_port_stats). */
static uint64_t nd_sent(void)
{
	struct dpv_port_stats st;

	return dpv_query_port_stats(ctx, &st) == 0 ? st.tx_nd : 0;
}

/* ARP/ND frames from the port's own MAC the sniffer has seen, over every capture. */
static uint64_t own_seen;

static void seen_own(const uint8_t *f, uint32_t len)
{
	struct dpv_nd_msg m;

	if (dpv__nd_parse(f, len, &m) == 0 && memcmp(m.eth_src, own_mac, 6) == 0)
		own_seen++;
}

/* Everything the sniffer and the default flow get for what was sent so far, polled for at
 * least @seconds: then two markers, one after the other has come back, fence the frames
 * sent to the port — they are all received, and answered or not, once the second marker
 * comes back — and then the ARP/ND frames the port sent (its tx_nd counter) are waited for
 * until they have come back too (for 0.2 s at most: one the sniffer had no WQE for never
 * does, and the count checks then say what is missing; the neighbour entries the test
 * learns live 0.5 s). The markers alone are not enough: the answer to a frame leaves
 * from the thread that received it, which can be preempted after the sniffer got that frame
 * and the first marker, and in service mode a polling thread that helps the service lcore
 * may send the second marker meanwhile. No verdict depends on how fast the port answers (a
 * loaded machine or a service lcore on a busy core). */
static void capture(double seconds)
{
	static uint32_t fence_seq;
	double end = test_now() + seconds, give_up = end + 30;
	double catch_up = 0;
	uint32_t waiting = 0;
	int fences = 0;
	struct ibv_wc wc[16];

	nseen = ndefault = 0;
	while (fences < 2 || own_seen < nd_sent()) {
		int n;

		if (test_now() >= give_up)
			break;
		if (fences == 2 && catch_up == 0)
			catch_up = test_now() + 0.2;
		else if (fences == 2 && test_now() >= catch_up) {
			own_seen = nd_sent();    /* lost (a full sniffer RQ): not waited for again */
			break;
		}

		if (waiting == 0 && fences < 2 && test_now() >= end) {
			waiting = ++fence_seq;
			send_marker(waiting);
		}
		n = ibv_poll_cq(sniff_cq, 16, wc);
		for (int i = 0; i < n; i++) {
			const uint8_t *f = slot(0, (int)wc[i].wr_id);
			uint32_t m = wc[i].status == IBV_WC_SUCCESS ? marker_of(f, wc[i].byte_len) : 0;

			if (wc[i].status == IBV_WC_SUCCESS)
				seen_own(f, wc[i].byte_len);
			if (m != 0 && m == waiting) {
				fences++;
				waiting = 0;
			} else if (m == 0 && nseen < MAXF && wc[i].status == IBV_WC_SUCCESS) {
				memcpy(seen[nseen].b, f, wc[i].byte_len);
				seen[nseen++].len = wc[i].byte_len;
			}
			post_slot(sniff_qp, 0, (int)wc[i].wr_id);
		}
		n = ibv_poll_cq(dflt_cq, 16, wc);
		for (int i = 0; i < n; i++) {
			if (marker_of(slot(1, (int)wc[i].wr_id), wc[i].byte_len) == 0)
				ndefault++;
			post_slot(dflt_qp, 1, (int)wc[i].wr_id);
		}
		n = ibv_poll_cq(scq, 16, wc);             /* the peer's sends */
		(void)n;
	}
	CHECK(fences == 2, "the marker frames came back");
}

static void send_frame(const struct dpv_nd_msg *m)
{
	static int next;
	uint8_t *f = buf + (size_t)(next++ % 16) * 128;
	int len = dpv__nd_build(f, 128, m);
	struct ibv_sge sge = { (uintptr_t)f, (uint32_t)len, mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	CHECK(ibv_post_send(txqp, &wr, &bad) == 0, "peer send");
}

/* The frames seen that parse as @type from @src (NULL: any). */
static int count(enum dpv_nd_type type, const uint8_t *src, struct dpv_nd_msg *last)
{
	int n = 0;

	for (int i = 0; i < nseen; i++) {
		struct dpv_nd_msg m;

		if (dpv__nd_parse(seen[i].b, seen[i].len, &m) == 0 && m.type == type &&
		    (src == NULL || memcmp(m.eth_src, src, 6) == 0)) {
			n++;
			if (last != NULL)
				*last = m;
		}
	}
	return n;
}

static void gid_v4(uint8_t g[16], const char *a)
{
	memset(g, 0, 16);
	g[10] = g[11] = 0xff;
	inet_pton(AF_INET, a, g + 12);
}

static int resolve(int sgid_index, const uint8_t dgid[16], uint8_t mac[6])
{
	memset(mac, 0, 6);
	return dpv__roce_resolve(to_dctx(ctx)->dev, sgid_index, dgid, mac);
}

static struct dpv_nd_msg arp(enum dpv_nd_type type, const char *sip, const char *tip)
{
	struct dpv_nd_msg m = { .type = type };

	memcpy(m.eth_src, peer_mac, 6);
	memcpy(m.sender_mac, peer_mac, 6);
	memset(m.eth_dst, 0xff, 6);
	inet_pton(AF_INET, sip, m.sender_ip);
	inet_pton(AF_INET, tip, m.target_ip);
	return m;
}

static struct dpv_nd_msg ns(const char *sip, const char *tip)
{
	struct dpv_nd_msg m = { .type = DPV_ND_NS, .lladdr = true };

	memcpy(m.eth_src, peer_mac, 6);
	memcpy(m.sender_mac, peer_mac, 6);
	inet_pton(AF_INET6, sip, m.sender_ip);
	inet_pton(AF_INET6, tip, m.target_ip);
	dpv__nd_solicited_node(m.target_ip, m.ip_dst, m.eth_dst);
	return m;
}

/* A resolve that nobody answers: the configured 4 requests, then EHOSTUNREACH. */
static void check_unanswered(void)
{
	uint8_t g[16], mac[6], want[16];
	struct dpv_nd_msg m;

	gid_v4(g, "10.3.0.99");
	CHECK_EQ(resolve(1, g, mac), -EHOSTUNREACH);
	capture(0);
	CHECK_EQ(count(DPV_ND_ARP_REQUEST, own_mac, &m), 4);
	CHECK(memcmp(m.eth_dst, "\xff\xff\xff\xff\xff\xff", 6) == 0 &&
	      memcmp(m.sender_mac, own_mac, 6) == 0 &&
	      memcmp(m.sender_ip, "\x0a\x03\x00\x01", 4) == 0 &&
	      memcmp(m.target_ip, "\x0a\x03\x00\x63", 4) == 0, "ARP request fields");
	CHECK_EQ(ndefault, 0);                   /* never given to RAW default flows */

	inet_pton(AF_INET6, "fd03::99", g);
	CHECK_EQ(resolve(2, g, mac), -EHOSTUNREACH);
	capture(0);
	CHECK_EQ(count(DPV_ND_NS, own_mac, &m), 4);   /* parsed: checksum and all */
	inet_pton(AF_INET6, "ff02::1:ff00:99", want);
	CHECK(memcmp(m.eth_dst, "\x33\x33\xff\x00\x00\x99", 6) == 0 &&
	      memcmp(m.ip_dst, want, 16) == 0 && memcmp(m.target_ip, g, 16) == 0 &&
	      m.lladdr && memcmp(m.sender_mac, own_mac, 6) == 0, "NS fields");
	inet_pton(AF_INET6, "fd03::1", want);
	CHECK(memcmp(m.sender_ip, want, 16) == 0, "NS from the port's address");
	CHECK_EQ(ndefault, 0);
}

/* The peer asks; dpverbs answers for its own addresses only, and learns the asker. */
static void check_answers(void)
{
	struct dpv_nd_msg q = arp(DPV_ND_ARP_REQUEST, "10.3.0.7", "10.3.0.1"), r;
	uint8_t g[16], mac[6], want[16];
	union ibv_gid ll;

	send_frame(&q);
	capture(0);
	CHECK_EQ(count(DPV_ND_ARP_REPLY, own_mac, &r), 1);
	CHECK(memcmp(r.eth_dst, peer_mac, 6) == 0 && memcmp(r.sender_mac, own_mac, 6) == 0 &&
	      memcmp(r.sender_ip, "\x0a\x03\x00\x01", 4) == 0 &&
	      memcmp(r.target_mac, peer_mac, 6) == 0 &&
	      memcmp(r.target_ip, "\x0a\x03\x00\x07", 4) == 0, "ARP reply fields");
	CHECK_EQ(ndefault, 0);
	gid_v4(g, "10.3.0.7");                   /* learned from the request: no frame */
	CHECK_EQ(resolve(1, g, mac), 0);
	CHECK(memcmp(mac, peer_mac, 6) == 0, "learned MAC");
	q = arp(DPV_ND_ARP_REQUEST, "10.3.0.8", "10.3.0.55");     /* not ours */
	send_frame(&q);
	capture(0);
	CHECK_EQ(count(DPV_ND_ARP_REPLY, own_mac, NULL), 0);
	CHECK_EQ(ndefault, 0);

	q = ns("fd03::7", "fd03::1");
	send_frame(&q);
	capture(0);
	CHECK_EQ(count(DPV_ND_NA, own_mac, &r), 1);
	inet_pton(AF_INET6, "fd03::1", want);
	CHECK(memcmp(r.eth_dst, peer_mac, 6) == 0 && memcmp(r.ip_dst, q.sender_ip, 16) == 0 &&
	      memcmp(r.sender_ip, want, 16) == 0 && memcmp(r.target_ip, want, 16) == 0 &&
	      r.solicited && r.override && !r.router && r.lladdr &&
	      memcmp(r.sender_mac, own_mac, 6) == 0, "NA fields");
	CHECK_EQ(resolve(2, q.sender_ip, mac), 0);
	CHECK(memcmp(mac, peer_mac, 6) == 0, "learned from the NS");

	ibv_query_gid(ctx, 1, 0, &ll);           /* the link-local GID is answered too */
	q = ns("fe80::7", "fd03::1");
	memcpy(q.target_ip, ll.raw, 16);
	dpv__nd_solicited_node(q.target_ip, q.ip_dst, q.eth_dst);
	send_frame(&q);
	memset(q.sender_ip, 0, 16);              /* duplicate address detection: from :: */
	q.lladdr = false;
	send_frame(&q);
	capture(0);
	CHECK_EQ(count(DPV_ND_NA, own_mac, &r), 2);
	inet_pton(AF_INET6, "ff02::1", want);
	CHECK(memcmp(r.ip_dst, want, 16) == 0 && !r.solicited &&
	      memcmp(r.eth_dst, "\x33\x33\x00\x00\x00\x01", 6) == 0 &&
	      memcmp(r.target_ip, ll.raw, 16) == 0, "DAD answered to all nodes");

	q = ns("fd03::7", "fd03::5");            /* not ours */
	send_frame(&q);
	q = ns("fd03::7", "::ffff:10.3.0.1");    /* an IPv4 address of the port, as IPv6: no */
	send_frame(&q);
	q = ns("fd03::7", "fd03::1");            /* bad checksum: built, then one bit flipped */
	{
		uint8_t *f = buf + 60000;
		int len = dpv__nd_build(f, 128, &q);
		struct ibv_sge sge = { (uintptr_t)f, (uint32_t)len, mr->lkey };
		struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND },
				   *bad;

		f[57] ^= 1;
		CHECK_EQ(ibv_post_send(txqp, &wr, &bad), 0);
	}
	capture(0);
	CHECK_EQ(count(DPV_ND_NA, own_mac, NULL), 0);
	CHECK_EQ(nseen, 3);
	CHECK_EQ(ndefault, 0);                   /* the malformed one consumed too */
}

struct resolver {
	uint8_t gid[16], mac[6];
	int sgid_index, rc;
	bool done;
};

static void *resolver_main(void *arg)
{
	struct resolver *r = arg;

	r->rc = resolve(r->sgid_index, r->gid, r->mac);
	__atomic_store_n(&r->done, true, __ATOMIC_RELEASE);
	return NULL;
}

/* A resolve in another thread while the peer answers the request it sees. */
static void check_answered(bool v6)
{
	struct resolver r = { .sgid_index = v6 ? 2 : 1 };
	const uint8_t who[6] = { 2, 0xbb, 0, 0, 0, v6 ? 6 : 4 };
	bool answered = false;
	pthread_t t;

	if (v6)
		inet_pton(AF_INET6, "fd03::8", r.gid);
	else
		gid_v4(r.gid, "10.3.0.8");
	pthread_create(&t, NULL, resolver_main, &r);
	while (!__atomic_load_n(&r.done, __ATOMIC_ACQUIRE)) {
		struct dpv_nd_msg q, a = { 0 };

		capture(0.005);
		if (answered || count(v6 ? DPV_ND_NS : DPV_ND_ARP_REQUEST, own_mac, &q) == 0)
			continue;
		a.type = v6 ? DPV_ND_NA : DPV_ND_ARP_REPLY;
		memcpy(a.eth_src, who, 6);
		memcpy(a.eth_dst, own_mac, 6);
		memcpy(a.sender_mac, who, 6);
		memcpy(a.sender_ip, q.target_ip, 16);
		memcpy(a.target_ip, v6 ? q.target_ip : q.sender_ip, 16);
		memcpy(a.target_mac, own_mac, 6);
		memcpy(a.ip_dst, q.sender_ip, 16);
		a.lladdr = a.solicited = a.override = v6;
		send_frame(&a);
		answered = true;
	}
	pthread_join(t, NULL);
	CHECK(answered, "saw the request");
	CHECK(r.rc == 0 && memcmp(r.mac, who, 6) == 0, "%s resolved: %d", v6 ? "IPv6" : "IPv4",
	      r.rc);
}

/* Replies nobody asked for teach nothing (Linux's arp_accept = 0); a learned MAC ages. */
static void check_unsolicited_and_aging(void)
{
	struct dpv_nd_msg a = arp(DPV_ND_ARP_REPLY, "10.3.0.9", "10.3.0.1");
	uint8_t g[16], mac[6];

	memcpy(a.eth_dst, own_mac, 6);
	send_frame(&a);
	capture(0.1);
	gid_v4(g, "10.3.0.9");
	CHECK_EQ(resolve(1, g, mac), -EHOSTUNREACH);

	gid_v4(g, "10.3.0.7");                   /* learned above; 500 ms later, asked again */
	usleep(600 * 1000);
	capture(0.05);
	CHECK_EQ(resolve(1, g, mac), -EHOSTUNREACH);
	capture(0);
	CHECK_EQ(count(DPV_ND_ARP_REQUEST, own_mac, NULL), 4);
}

/* Without addresses the port leaves ARP/ND to RAW_PACKET: the default flow gets them. */
static void check_no_address(void)
{
	struct dpv_nd_msg q = arp(DPV_ND_ARP_REQUEST, "10.3.0.7", "10.3.0.1");

	CHECK_EQ(dpv_port_del_addr(ctx, "10.3.0.1"), 0);
	CHECK_EQ(dpv_port_del_addr(ctx, "fd03::1"), 0);
	send_frame(&q);
	capture(0);
	CHECK_EQ(count(DPV_ND_ARP_REPLY, own_mac, NULL), 0);
	CHECK_EQ(ndefault, 1);
	CHECK_EQ(dpv_port_add_addr(ctx, "10.3.0.1"), 0);
	send_frame(&q);
	capture(0);
	CHECK_EQ(count(DPV_ND_ARP_REPLY, own_mac, NULL), 1);
	CHECK_EQ(ndefault, 0);
}

/* Nobody polls: the program sleeps (as ibv_ud_pingpong does in its TCP handshake while the
 * peer resolves it), yet the port answers — the library's progress thread polls a port
 * that nobody else polls. The CQ of the sniffer fills without a poll. */
static void check_keeper(void)
{
	struct dpv_nd_msg q = arp(DPV_ND_ARP_REQUEST, "10.3.0.7", "10.3.0.1");
	struct dpv_cq_counters c = { 0 };
	double end;

	capture(0);                              /* nothing waiting */
	send_frame(&q);
	for (end = test_now() + 30; test_now() < end; usleep(10000)) {
		CHECK_EQ(dpv_query_cq_counters(sniff_cq, &c), 0);   /* polls nothing */
		if (c.pending >= 2)
			break;
	}
	CHECK(c.pending >= 2, "the request and the answer reached the sniffer without a poll "
	      "(%u completions)", c.pending);
	capture(0);
	CHECK_EQ(count(DPV_ND_ARP_REPLY, own_mac, NULL), 1);
}

static struct ibv_qp *qp_with_flow(struct ibv_cq *cq, enum ibv_flow_attr_type type, int q)
{
	struct ibv_qp_cap cap = { .max_send_wr = 64, .max_send_sge = 1, .max_recv_wr = SLOTS,
				  .max_recv_sge = 1 };
	struct ibv_qp *qp = test_raw_qp(pd, cq, cap);
	struct ibv_flow_attr fa = { .type = type, .size = sizeof(fa), .port = 1 };

	if (type != IBV_FLOW_ATTR_NORMAL) {
		CHECK(ibv_create_flow(qp, &fa) != NULL, "flow");
		for (int i = 0; i < SLOTS; i++)
			post_slot(qp, q, i);
	}
	return qp;
}

int main(void)
{
	char path[] = "/tmp/dpv-roce-neigh-XXXXXX";
	union ibv_gid g0;

	write_config(path);
	ctx = test_open("dpv_net_ring0");
	unlink(path);
	pd = ibv_alloc_pd(ctx);
	buf = aligned_alloc(4096, 65536 + 2 * SLOTS * SLOT_SIZE);
	mr = ibv_reg_mr(pd, buf, 65536 + 2 * SLOTS * SLOT_SIZE, IBV_ACCESS_LOCAL_WRITE);
	scq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	sniff_cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	dflt_cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	if (mr == NULL || scq == NULL || sniff_cq == NULL || dflt_cq == NULL) {
		fprintf(stderr, "setup: %s\n", strerror(errno));
		return 1;
	}
	txqp = qp_with_flow(scq, IBV_FLOW_ATTR_NORMAL, 0);
	sniff_qp = qp_with_flow(sniff_cq, IBV_FLOW_ATTR_SNIFFER, 0);
	dflt_qp = qp_with_flow(dflt_cq, IBV_FLOW_ATTR_ALL_DEFAULT, 1);
	ibv_query_gid(ctx, 1, 0, &g0);
	CHECK_EQ(dpv__roce_gid_to_mac(g0.raw, own_mac), 0);
	if (getenv("DPV_TEST_SERVICE") != NULL) {
		struct dpv_qp_counters c;

		CHECK(dpv_query_qp_counters(sniff_qp, &c) == 0 && c.progress == DPV_PROGRESS_SERVICE,
		      "service mode");
	}

	check_unanswered();
	check_answers();
	check_answered(false);
	check_answered(true);
	check_unsolicited_and_aging();
	check_no_address();
	check_keeper();

	ibv_close_device(ctx);
	free(buf);
	return test_done("roce_neigh");
}

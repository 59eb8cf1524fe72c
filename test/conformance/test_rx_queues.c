/* SPDX-License-Identifier: BSD-3-Clause */
/* A port's receive side on several queues, two ways:
 * - net_tap with the configured 4 queues (the kernel puts each flow's frames on one tap queue
 *   by its flow hash): the kernel side sends frames of 64 UDP flows through the tap interface
 *   (an AF_PACKET socket);
 * - `spread`: net_pcap replaying the same frames from a file on its one queue, no RSS, with
 *   rx_spread = 1 and queues_per_port = 4: dpverbs spreads them over 4 software queues by its
 *   flow hash;
 * - in the VM suite (DPV_TEST_BDF set: test/vm/run_vm_test.sh mq): the guest's multi-queue
 *   virtio-net NIC bound to vfio-pci, 4 queue pairs, the host sending the frames (to the
 *   guest's MAC) into the tap, whose kernel puts each flow on one of its queues, which QEMU
 *   hands to the matching virtio queue.
 * Four QPs take them by UDP destination port, two threads poll two CQs each (so queues are
 * polled by different threads at once). What a user sees: every frame arrives exactly once, at
 * the QP of its port, byte for byte, each flow's frames in the order they were sent, and the
 * port took them on more than one queue (its per-queue counters: the PMD's rx_qN_packets, or
 * the software queues' rx_spread_qN_packets). */
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "dpv_test.h"

#define IFACE "dpvmq0"
#define NQP 4
#define FLOWS 64
#define PER_FLOW 40
#define TOTAL (FLOWS * PER_FLOW)
#define DEPTH 1024                   /* room for all of a QP's frames (640) */
#define FRAME 60

static struct ibv_pd *pd;
static struct ibv_mr *mr;
static uint8_t *buf;
static struct ibv_cq *cq[NQP];
static struct ibv_qp *qp[NQP];
static uint8_t seen[TOTAL];                 /* times each frame arrived */
static int next_seq[FLOWS];                 /* each flow's next sequence number */
static long wrong_qp, disorder, bad_bytes, errors;
static pthread_mutex_t acct_lock = PTHREAD_MUTEX_INITIALIZER;
static int got_all;
static bool spread;                          /* the software-spread variant */
static bool vm;                              /* the VM variant: the host sends */

/* Frame (flow, seq): UDP from port 1000 + flow to port 9000 + flow % NQP, tagged. */
static void frame_of(uint8_t *f, int flow, int seq)
{
	static const uint8_t hdr[42] = { 0x02, 0, 0, 0, 0, 0x42, 0x02, 0, 0, 0, 0, 0x01, 0x08, 0,
		0x45, 0, 0, 46, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 9, 0, 1, 10, 9, 0, 2,
		0, 0, 0, 0, 0, 26, 0, 0 };

	memcpy(f, hdr, sizeof(hdr));
	if (vm)
		f[5] = 0x02;              /* the guest NIC's MAC (run_vm_test.sh): QEMU filters */
	f[34] = (uint8_t)((1000 + flow) >> 8);
	f[35] = (uint8_t)(1000 + flow);
	f[36] = (uint8_t)((9000 + flow % NQP) >> 8);
	f[37] = (uint8_t)(9000 + flow % NQP);
	f[42] = (uint8_t)flow;
	f[43] = (uint8_t)(seq >> 8);
	f[44] = (uint8_t)seq;
	for (int i = 45; i < FRAME; i++)
		f[i] = (uint8_t)(flow * 7 + seq + i);
}

static int post(struct ibv_qp *q, int slot)
{
	struct ibv_sge sge = { (uintptr_t)buf + (size_t)slot * 128, 128, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = (uint64_t)slot, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(q, &wr, &bad);
}

/* Check one completion of QP @k, then give its WQE back. */
static void account(int k, const struct ibv_wc *wc)
{
	const uint8_t *f = buf + (size_t)wc->wr_id * 128;
	uint8_t want[FRAME];
	int flow = f[42], seq = f[43] << 8 | f[44];

	pthread_mutex_lock(&acct_lock);
	if (wc->status != IBV_WC_SUCCESS || wc->byte_len != FRAME || flow >= FLOWS ||
	    seq >= PER_FLOW) {
		errors++;
	} else {
		frame_of(want, flow, seq);
		bad_bytes += memcmp(want, f, FRAME) != 0;
		wrong_qp += flow % NQP != k;
		disorder += seq != next_seq[flow];
		next_seq[flow] = seq + 1;
		seen[flow * PER_FLOW + seq]++;
	}
	pthread_mutex_unlock(&acct_lock);
	if (post(qp[k], (int)wc->wr_id) != 0)
		__atomic_fetch_add(&errors, 1, __ATOMIC_RELAXED);
}

/* Thread @arg polls the CQs of QPs arg and arg + 2. */
static void *poller(void *arg)
{
	int first = (int)(intptr_t)arg;
	struct ibv_wc wc[32];

	for (double end = test_now() + 120; test_now() < end &&
	     !__atomic_load_n(&got_all, __ATOMIC_ACQUIRE); ) {
		for (int k = first; k < NQP; k += 2) {
			int n = ibv_poll_cq(cq[k], 32, wc);

			for (int i = 0; i < n; i++)
				account(k, &wc[i]);
		}
	}
	return NULL;
}

/* The kernel side: frames out of the tap interface, which the port receives. */
static int send_all(void)
{
	int s = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	struct ifreq ifr = { 0 };
	struct sockaddr_ll to = { .sll_family = AF_PACKET, .sll_halen = 6 };
	uint8_t f[FRAME];

	if (s < 0)
		return -1;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", IFACE);
	if (ioctl(s, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP;
		ioctl(s, SIOCSIFFLAGS, &ifr);
	}
	to.sll_ifindex = (int)if_nametoindex(IFACE);
	for (int seq = 0; seq < PER_FLOW; seq++)
		for (int flow = 0; flow < FLOWS; flow++) {
			frame_of(f, flow, seq);
			while (sendto(s, f, FRAME, 0, (struct sockaddr *)&to, sizeof(to)) != FRAME) {
				if (errno != ENOBUFS && errno != EAGAIN) {
					close(s);
					return -1;
				}
				usleep(100);
			}
			if (flow % 32 == 31)
				usleep(300);    /* a tap queue holds 1000 frames: let the port keep up */
		}
	close(s);
	return 0;
}

/* The port's per-queue receive counters (DPDK's rx_qN_packets): how many queues took frames. */
static int queues_used(struct ibv_context *ctx)
{
	struct dpv_xstat xs[256];
	unsigned int n = 256;
	int used = 0;

	if (dpv_query_port_xstats(ctx, xs, &n) != 0)
		return -1;
	for (unsigned int i = 0; i < n && i < 256; i++) {
		unsigned int q;
		char what[16];

		/* virtio says rx_qN_good_packets */
		if (sscanf(xs[i].name, spread ? "rx_spread_q%u_%15s" : "rx_q%u_%15s", &q, what) == 2 &&
		    (strcmp(what, "packets") == 0 || strcmp(what, "good_packets") == 0) &&
		    xs[i].value > 0)
			used++;
	}
	return used;
}

static void spread_config(const char *dir, int mode);
static char tmp_dir[] = "/tmp/dpv_rxspread_XXXXXX";   /* the variants' files, removed at the end */

/* The spread variant's port: the frames in a pcap file, in the order send_all sends them, a
 * net_pcap port reading it, and the configuration that spreads its one queue over four. */
static void pcap_port(void)
{
	char *dir = tmp_dir, path[128], eal[512];
	const char *base = getenv("DPV_EAL_ARGS");
	uint8_t f[FRAME];
	FILE *fp;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/flows.pcap", dir);
	fp = fopen(path, "wb");
	CHECK(fp != NULL);
	const uint32_t gh[6] = { 0xa1b2c3d4, 2 | 4u << 16, 0, 0, 65535, 1 };

	fwrite(gh, sizeof(gh), 1, fp);
	for (int seq = 0; seq < PER_FLOW; seq++)
		for (int flow = 0; flow < FLOWS; flow++) {
			const uint32_t rh[4] = { 0, (uint32_t)(seq * FLOWS + flow), FRAME, FRAME };

			frame_of(f, flow, seq);
			fwrite(rh, sizeof(rh), 1, fp);
			fwrite(f, FRAME, 1, fp);
		}
	CHECK_EQ(fclose(fp), 0);
	snprintf(eal, sizeof(eal), "%s --vdev=net_pcap_rs0,rx_pcap=%s,tx_pcap=/dev/null",
		 base ? base : "", path);
	setenv("DPV_EAL_ARGS", eal, 1);
	spread_config(dir, 1);
}

/* rx_spread = @mode over 4 queues, in a configuration file in @dir. */
static void spread_config(const char *dir, int mode)
{
	char path[128];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/dpverbs.conf", dir);
	fp = fopen(path, "w");
	CHECK(fp != NULL);
	/* rings that hold the whole file: no polling thread falls behind far enough to lose a
	 * frame, however the machine schedules it (a full software queue drops); no progress
	 * thread: net_pcap replays its file as fast as it is polled, and the thread would take
	 * frames before the last rule exists (a NIC drops those too) */
	fprintf(fp, "queues_per_port = 4\nrx_spread = %d\nrx_desc = 4096\nprogress_thread = 0\n",
		mode);
	CHECK_EQ(fclose(fp), 0);
	setenv("DPV_CONFIG", path, 1);
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	struct dpv_port_info info;
	pthread_t th[2];
	long missing = 0, twice = 0;

	char *ready = getenv("DPV_TEST_READY");

	spread = argc > 1 && strcmp(argv[1], "spread") == 0;
	vm = getenv("DPV_TEST_BDF") != NULL;
	if (vm) {
		char *dir = tmp_dir, eal[512];

		/* the port's queue set-up said (RSS or not), and in the spread step the virtio
		 * port's 4 queues spread again in software (rx_spread = 2) */
		snprintf(eal, sizeof(eal), "%s --log-level=pmd.dpverbs.ethdev:info",
			 getenv("DPV_EAL_ARGS") ? getenv("DPV_EAL_ARGS") : "");
		setenv("DPV_EAL_ARGS", eal, 1);
		CHECK(mkdtemp(dir) != NULL);
		spread_config(dir, spread ? 2 : 0);
	} else if (spread) {
		pcap_port();
	} else if (geteuid() != 0) {
		printf("SKIP: net_tap needs root\n");
		return 77;
	}
	/* the VM's host sends once the QPs and their rules are in place (below), not when the
	 * device opens */
	if (ready != NULL)
		ready = strdup(ready);
	unsetenv("DPV_TEST_READY");
	ctx = test_open(NULL);
	CHECK_EQ(dpv_query_port_info(ctx, &info), 0);
	CHECK(info.nb_rx_queues >= 2, "the port has %u receive queues", info.nb_rx_queues);
	pd = ibv_alloc_pd(ctx);
	buf = aligned_alloc(4096, (size_t)NQP * DEPTH * 128);
	mr = ibv_reg_mr(pd, buf, (size_t)NQP * DEPTH * 128, IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr != NULL);
	for (int k = 0; k < NQP; k++) {
		struct {
			struct ibv_flow_attr attr;
			struct ibv_flow_spec_ipv4 ip;
			struct ibv_flow_spec_tcp_udp udp;
		} rule = {
			.attr = { .type = IBV_FLOW_ATTR_NORMAL, .size = sizeof(rule),
				  .num_of_specs = 2, .port = 1 },
			.ip = { .type = IBV_FLOW_SPEC_IPV4, .size = sizeof(rule.ip),
				.val.dst_ip = htonl(0x0a090002), .mask.dst_ip = 0xffffffff },
			.udp = { .type = IBV_FLOW_SPEC_UDP, .size = sizeof(rule.udp),
				 .val.dst_port = htons((uint16_t)(9000 + k)), .mask.dst_port = 0xffff },
		};

		cq[k] = ibv_create_cq(ctx, DEPTH, NULL, NULL, 0);
		qp[k] = test_raw_qp(pd, cq[k], (struct ibv_qp_cap){ .max_recv_wr = DEPTH,
								     .max_recv_sge = 1 });
		for (int i = 0; i < DEPTH; i++)
			CHECK_EQ(post(qp[k], k * DEPTH + i), 0);
		CHECK(ibv_create_flow(qp[k], &rule.attr) != NULL, "flow: %s", strerror(errno));
	}
	for (int t = 0; t < 2; t++)
		pthread_create(&th[t], NULL, poller, (void *)(intptr_t)t);
	if (vm && ready != NULL) {
		setenv("DPV_TEST_READY", ready, 1);
		test_handshake();              /* the host sends after "go" */
	} else if (!spread) {
		CHECK_EQ(send_all(), 0);       /* else the port reads them from its file */
	}
	for (double end = test_now() + (vm ? 90 : 15); test_now() < end; usleep(1000)) {
		long sum = 0;

		pthread_mutex_lock(&acct_lock);
		for (int i = 0; i < TOTAL; i++)
			sum += seen[i] != 0;
		pthread_mutex_unlock(&acct_lock);
		if (sum == TOTAL)
			break;
	}
	usleep(100000);                     /* anything arriving twice would come now */
	__atomic_store_n(&got_all, 1, __ATOMIC_RELEASE);
	for (int t = 0; t < 2; t++)
		pthread_join(th[t], NULL);
	for (int i = 0; i < TOTAL; i++) {
		missing += seen[i] == 0;
		twice += seen[i] > 1;
	}
	CHECK(missing == 0 && twice == 0, "%ld of %d frames missing, %ld more than once", missing,
	      TOTAL, twice);
	CHECK(wrong_qp == 0 && bad_bytes == 0 && errors == 0,
	      "%ld at the wrong QP, %ld with other bytes, %ld bad completions", wrong_qp, bad_bytes,
	      errors);
	CHECK(disorder == 0, "%ld frames out of their flow's order", disorder);
	CHECK(queues_used(ctx) >= 2, "the frames came on %d queue(s)", queues_used(ctx));
	printf("frames on %d of %u receive queues\n", queues_used(ctx), info.nb_rx_queues);
	CHECK_EQ(ibv_close_device(ctx), 0);       /* flows, QPs, CQs, MR and PD with it */
	free(buf);
	free(ready);
	if (spread || vm) {
		char path[128];

		snprintf(path, sizeof(path), "%s/flows.pcap", tmp_dir);
		unlink(path);
		snprintf(path, sizeof(path), "%s/dpverbs.conf", tmp_dir);
		unlink(path);
		rmdir(tmp_dir);
	}
	return test_done(vm ? (spread ? "rx_spread_vm" : "rx_queues_vm") :
			 spread ? "rx_spread" : "rx_queues");
}

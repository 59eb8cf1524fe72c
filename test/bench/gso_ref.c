/* SPDX-License-Identifier: BSD-3-Clause */
/* gso-ref: the DPDK way to do what dpverbs' software TSO does, for the benchmark: a 60 KiB
 * (60 KiB) TCP/IPv4 packet cut by rte_gso_segment, each segment checksummed with DPDK's software
 * helpers, sent to net_null. Linked with DPDK's archives, not with dpverbs. Prints one
 * "Gbps <value>" line per second (segment bytes, headers included).
 *   gso-ref -t seconds [-m mss] [EAL arguments after --] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_gso.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#define PAYLOAD 61440
#define HDR 54

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void ext_free(void *addr, void *opaque) { }

int main(int argc, char **argv)
{
	int n = rte_eal_init(argc, argv), seconds = 4, mss = 1448, c;
	struct rte_mempool *mp, *ind;
	struct rte_eth_conf conf = { 0 };
	struct rte_gso_ctx gso;
	static uint8_t payload[PAYLOAD];
	struct rte_mbuf_ext_shared_info shinfo = { .free_cb = ext_free };
	uint64_t bytes = 0, last = 0;
	double start, mark;

	if (n < 0)
		return 1;
	argc -= n;
	argv += n;
	while ((c = getopt(argc, argv, "t:m:")) != -1)
		if (c == 't')
			seconds = atoi(optarg);
		else if (c == 'm')
			mss = atoi(optarg);
	mp = rte_pktmbuf_pool_create("ref", 8191, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
	ind = rte_pktmbuf_pool_create("ref_ind", 8191, 256, 0, 0, 0);
	if (mp == NULL || ind == NULL || rte_eth_dev_configure(0, 1, 1, &conf) ||
	    rte_eth_tx_queue_setup(0, 0, 1024, 0, NULL) ||
	    rte_eth_rx_queue_setup(0, 0, 1024, 0, NULL, mp) || rte_eth_dev_start(0))
		return fprintf(stderr, "port setup failed\n"), 1;
	gso = (struct rte_gso_ctx){ .direct_pool = mp, .indirect_pool = ind,
				    .gso_types = RTE_ETH_TX_OFFLOAD_TCP_TSO,
				    .gso_size = (uint16_t)(mss + HDR), .flag = 0 };
	rte_mbuf_ext_refcnt_set(&shinfo, 1);
	start = mark = now();
	for (;;) {
		struct rte_mbuf *pkt = rte_pktmbuf_alloc(mp), *pay = rte_pktmbuf_alloc(ind);
		struct rte_mbuf *segs[64];
		uint8_t *h = rte_pktmbuf_mtod(pkt, uint8_t *);
		int k;

		memset(h, 0, HDR);
		h[12] = 0x08;
		h[14] = 0x45;
		h[22] = 64;
		h[23] = 6;
		h[46] = 0x50;
		((struct rte_ipv4_hdr *)(h + 14))->total_length = rte_cpu_to_be_16(40 + PAYLOAD);
		pkt->data_len = pkt->pkt_len = HDR;
		rte_mbuf_ext_refcnt_update(&shinfo, 1);
		rte_pktmbuf_attach_extbuf(pay, payload, (rte_iova_t)(uintptr_t)payload, PAYLOAD, &shinfo);
		pay->data_len = pay->pkt_len = PAYLOAD;
		rte_pktmbuf_chain(pkt, pay);
		pkt->l2_len = 14;
		pkt->l3_len = 20;
		pkt->l4_len = 20;
		pkt->ol_flags = RTE_MBUF_F_TX_TCP_SEG | RTE_MBUF_F_TX_IPV4;
		k = rte_gso_segment(pkt, &gso, segs, 64);
		if (k <= 0)
			return fprintf(stderr, "rte_gso_segment failed: %d\n", k), 1;
		rte_pktmbuf_free(pkt);           /* the segments hold it as long as they need */
		for (int i = 0; i < k; i++) {
			struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(segs[i], struct rte_ipv4_hdr *, 14);
			struct rte_tcp_hdr *tcp = (struct rte_tcp_hdr *)(ip + 1);

			ip->hdr_checksum = 0;
			ip->hdr_checksum = rte_ipv4_cksum(ip);
			tcp->cksum = 0;
			tcp->cksum = rte_ipv4_udptcp_cksum_mbuf(segs[i], ip, 34);
			bytes += segs[i]->pkt_len;
		}
		for (int sent = 0; sent < k; )
			sent += rte_eth_tx_burst(0, 0, segs + sent, (uint16_t)(k - sent));
		if (now() - mark >= 1.0) {
			double t = now();

			printf("Gbps %.3f\n", (bytes - last) * 8 / (t - mark) / 1e9);
			fflush(stdout);
			last = bytes;
			mark = t;
			if (t - start >= seconds)
				break;
		}
	}
	return 0;
}

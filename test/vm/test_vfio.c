/* SPDX-License-Identifier: BSD-3-Clause */
/* dpverbs on a NIC bound to vfio-pci, run inside the VM of run_vm_test.sh (a virtio-net device
 * behind QEMU's virtual IOMMU, driven by DPDK's net_virtio). Checks: the device's port info
 * (the BDF, net_virtio, TSO and TCP/UDP checksums in the port, the IPv4 header checksum in
 * software); MRs from malloc'd memory are DMA-mapped through the IOMMU when registered (the
 * registry's range count, and the pages VFIO pins, which the kernel counts in VmLck) and unmapped
 * when deregistered; frames sent from such an MR go to the expectation file argv[1] (the host
 * compares them with what it captured); then, after test_settle(), the host sends UDP frames
 * that a flow steers to a RAW_PACKET QP whose receive buffers are in another malloc'd MR. */
#include <arpa/inet.h>
#include <stdint.h>

#include "dpv_test.h"

#define BUF_LEN (1 << 20)
#define NB_RX 8

static FILE *expect;

/* Pages the process has locked, in kB: VFIO's type1 IOMMU driver counts the pages it pins for
 * a DMA map in the process's locked memory. */
static long vm_locked_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmLck: %ld kB", &kb) == 1)
			break;
	if (f != NULL)
		fclose(f);
	return kb;
}

static void check_port_info(struct ibv_context *ctx)
{
	const uint32_t port_does = DPV_OFFLOAD_TCP_TSO | DPV_OFFLOAD_TCP_CKSUM | DPV_OFFLOAD_UDP_CKSUM;
	const char *bdf = getenv("DPV_TEST_BDF");
	struct dpv_port_info pi;

	CHECK_EQ(dpv_query_port_info(ctx, &pi), 0);
	printf("device %s: port %s, driver %s, port offloads %#x, in the port %#x, in software %#x, "
	       "zero copy %d, tx_done_cleanup %d, EAL: %s\n", ibv_get_device_name(ctx->device),
	       pi.name, pi.driver, pi.port_offloads, pi.hw_offloads, pi.sw_offloads, pi.zero_copy,
	       pi.tx_done_cleanup, dpv_eal_args());
	CHECK(bdf != NULL && strcmp(pi.name, bdf) == 0, "port name %s", pi.name);
	CHECK(strcmp(pi.driver, "net_virtio") == 0, "driver %s", pi.driver);
	CHECK((pi.port_offloads & port_does) == port_does, "port offloads %#x", pi.port_offloads);
	CHECK((pi.hw_offloads & port_does) == port_does, "hardware offloads %#x", pi.hw_offloads);
	CHECK(!(pi.hw_offloads & DPV_OFFLOAD_IPV4_CKSUM), "virtio has no IPv4 header checksum");
	CHECK(pi.sw_offloads & DPV_OFFLOAD_IPV4_CKSUM, "IPv4 header checksum not in software");
	CHECK(strstr(dpv_eal_args(), "--no-pci") == NULL, "EAL: %s", dpv_eal_args());
}

/* reg_mr maps malloc'd pages for the device, dereg unmaps them; a second MR over the same
 * pages shares the mapping. */
static void check_mapping(struct ibv_pd *pd)
{
	unsigned int ranges = dpv_dma_range_count();
	long locked = vm_locked_kb(), page_kb = sysconf(_SC_PAGESIZE) / 1024;
	uint8_t *mem = malloc(BUF_LEN);
	uintptr_t first = (uintptr_t)mem / 4096, last = ((uintptr_t)mem + BUF_LEN - 1) / 4096;
	long pages_kb = (long)(last - first + 1) * page_kb;
	struct ibv_mr *a = ibv_reg_mr(pd, mem, BUF_LEN, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mr *b = ibv_reg_mr(pd, mem + 4096, 8192, 0);

	CHECK(a != NULL && b != NULL, "%s", strerror(errno));
	printf("MR of %d bytes from malloc: %u DMA ranges, VmLck %ld kB -> %ld kB\n", BUF_LEN,
	       dpv_dma_range_count(), locked, vm_locked_kb());
	CHECK_EQ(dpv_dma_range_count(), ranges + 1);
	CHECK_EQ(vm_locked_kb() - locked, pages_kb);     /* pinned once, not twice */
	CHECK_EQ(ibv_dereg_mr(a), 0);
	CHECK_EQ(dpv_dma_range_count(), ranges + 1);     /* b still holds it */
	CHECK_EQ(vm_locked_kb() - locked, pages_kb);
	CHECK_EQ(ibv_dereg_mr(b), 0);
	CHECK_EQ(dpv_dma_range_count(), ranges);
	CHECK_EQ(vm_locked_kb(), locked);                /* unmapped: unpinned */
	free(mem);
}

static void expect_frame(const uint8_t *f, size_t len)
{
	fprintf(expect, "raw ");
	for (size_t i = 0; i < len; i++)
		fprintf(expect, "%02x", f[i]);
	fprintf(expect, "\n");
}

/* Frames from a malloc'd MR: a small one, a large one, one gathered from three pieces. */
static void send_from_malloc(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp *qp = test_raw_qp(pd, cq, (struct ibv_qp_cap){ .max_send_wr = 16,
								  .max_send_sge = 3 });
	uint8_t *mem = malloc(BUF_LEN);
	long locked = vm_locked_kb();
	struct ibv_mr *mr = ibv_reg_mr(pd, mem, BUF_LEN, 0);
	const size_t lens[3] = { 60, 1514, 1000 };
	struct dpv_port_stats st;
	struct ibv_wc wc;

	CHECK(mr != NULL, "%s", strerror(errno));
	CHECK(vm_locked_kb() > locked, "the MR's pages are not pinned for the device");
	for (size_t i = 0; i < BUF_LEN; i++)
		mem[i] = (uint8_t)(i * 13 + 5);
	for (int k = 0; k < 3; k++) {
		uint8_t *f = mem + 65536 * (k + 1) + 3 * k;
		struct ibv_sge s[3] = { { (uintptr_t)f, (uint32_t)lens[k], mr->lkey } };
		struct ibv_send_wr wr = { .wr_id = (uint64_t)k, .sg_list = s, .num_sge = 1,
					  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED },
				   *bad;

		memcpy(f, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x88\xb5", 14);
		if (k == 2) {                 /* 14 + 400 here, 300 far away, 286 further */
			memcpy(mem + 300000, f + 414, 300);
			memcpy(mem + 900001, f + 714, 286);
			s[0].length = 414;
			s[1] = (struct ibv_sge){ (uintptr_t)mem + 300000, 300, mr->lkey };
			s[2] = (struct ibv_sge){ (uintptr_t)mem + 900001, 286, mr->lkey };
			wr.num_sge = 3;
		}
		CHECK_EQ(ibv_post_send(qp, &wr, &bad), 0);
		CHECK_EQ(test_poll(cq, &wc, 1), 1);
		CHECK(wc.wr_id == (uint64_t)k && wc.status == IBV_WC_SUCCESS, "send %d: %s", k,
		      ibv_wc_status_str(wc.status));
		expect_frame(f, lens[k]);
	}
	CHECK_EQ(dpv_query_port_stats(ctx, &st), 0);
	printf("sent from malloc'd memory: %llu frames, %llu copied, %llu zero-copy\n",
	       (unsigned long long)st.tx_frames, (unsigned long long)st.tx_copied,
	       (unsigned long long)st.tx_zero_copy);
	CHECK_EQ(st.tx_copied + st.tx_zero_copy, 3);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK_EQ(vm_locked_kb(), locked);
	free(mem);
}

/* What the host sends after test_settle(): three UDP frames to port 7777 (one with a wrong
 * checksum) and one to port 7778; a flow on UDP port 7777 steers the three here. */
static void receive(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp *qp = test_raw_qp(pd, cq, (struct ibv_qp_cap){ .max_recv_wr = NB_RX,
								  .max_recv_sge = 1 });
	uint8_t *rx = malloc(NB_RX * 2048);
	struct ibv_mr *mr = ibv_reg_mr(pd, rx, NB_RX * 2048, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_flow *flow = test_udp_flow(qp, 7777);
	struct ibv_wc wc[NB_RX];
	int n = 0, ok = 0;

	CHECK(flow != NULL && mr != NULL, "%s", strerror(errno));
	for (int i = 0; i < NB_RX; i++) {
		struct ibv_sge s = { (uintptr_t)rx + 2048 * i, 2048, mr->lkey };
		struct ibv_recv_wr r = { .wr_id = (uint64_t)i, .sg_list = &s, .num_sge = 1 }, *bad;

		CHECK_EQ(ibv_post_recv(qp, &r, &bad), 0);
	}
	test_settle();               /* "ready to receive": the host sends now */
	for (int tries = 0; n < 3 && tries < 50000; tries++) {
		int k = ibv_poll_cq(cq, NB_RX - n, wc + n);

		n += k > 0 ? k : 0;
		if (k <= 0)
			usleep(1000);
	}
	CHECK_EQ(n, 3);
	for (int i = 0; i < n; i++) {
		const uint8_t *p = rx + 2048 * wc[i].wr_id;

		CHECK(wc[i].status == IBV_WC_SUCCESS && p[36] == 0x1e && p[37] == 0x61,
		      "frame %d not to port 7777", i);
		ok += !!(wc[i].wc_flags & IBV_WC_IP_CSUM_OK);
		printf("received %u bytes, payload '%.7s', %s\n", wc[i].byte_len, p + 42,
		       wc[i].wc_flags & IBV_WC_IP_CSUM_OK ? "IP_CSUM_OK" : "checksum wrong");
		if (memcmp(p + 42, "badsum", 6) == 0)
			CHECK(!(wc[i].wc_flags & IBV_WC_IP_CSUM_OK), "a wrong checksum flagged OK");
		else
			CHECK(memcmp(p + 42, "vfio rx", 7) == 0, "payload '%.7s'", p + 42);
	}
	CHECK_EQ(ok, 2);
	usleep(200000);
	CHECK_EQ(ibv_poll_cq(cq, NB_RX, wc), 0);          /* port 7778: not steered */
	CHECK_EQ(ibv_destroy_flow(flow), 0);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	free(rx);
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	int n = 0;

	if (argc != 2 || (expect = fopen(argv[1], "w")) == NULL) {
		fprintf(stderr, "usage: test_vfio <expectation file>\n");
		return 2;
	}
	list = ibv_get_device_list(&n);
	CHECK_EQ(n, 1);                                   /* the vfio-pci device, nothing else */
	if (list != NULL)
		ibv_free_device_list(list);
	ctx = test_open(NULL);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	CHECK(pd != NULL && cq != NULL);
	check_port_info(ctx);
	check_mapping(pd);
	send_from_malloc(ctx, pd, cq);
	fclose(expect);
	receive(pd, cq);
	CHECK_EQ(dpv_dma_range_count(), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	return test_finish(ctx, pd, "vfio");
}

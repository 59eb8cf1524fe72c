/* SPDX-License-Identifier: BSD-3-Clause */
/* The fuzz_*_recv harnesses' shared setup (fuzz_roce_fixture.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dpverbs.h>

#include "fuzz_roce_fixture.h"
#include "roce_wire.h"

#define SBUF_SIZE (4 * 4096)
#define MARKER_BUF 2048               /* the marker's receive buffer: sbuf + 2048 */

struct roce_fixture fx;

void fx_die(const char *what)
{
	fprintf(stderr, "%s: %s does not hold\n", fx.name, what);
	abort();
}

double fx_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void fx_poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	for (double end = fx_now() + 5; ibv_poll_cq(cq, 1, wc) == 0;)
		CHECK(fx_now() < end);
}

static void modify(struct ibv_qp *q, struct ibv_qp_attr a, int mask)
{
	if (ibv_modify_qp(q, &a, mask) != 0)
		fx_die("modify_qp");
}

static void make_qps(void)
{
	fx.marker = ibv_create_qp(fx.pd, &(struct ibv_qp_init_attr){
		.send_cq = fx.mcq, .recv_cq = fx.mcq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 1, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1 } });
	fx.raw = ibv_create_qp(fx.pd, &(struct ibv_qp_init_attr){
		.send_cq = fx.rcq, .recv_cq = fx.rcq, .qp_type = IBV_QPT_RAW_PACKET, .sq_sig_all = 1,
		.cap = { .max_send_wr = 64, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 } });
	CHECK(fx.marker != NULL && fx.raw != NULL);
	modify(fx.marker, (struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT, .port_num = 1,
						.qkey = FX_MARKER_QKEY },
	       IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
	modify(fx.marker, (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR }, IBV_QP_STATE);
	modify(fx.raw, (struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT, .port_num = 1 },
	       IBV_QP_STATE | IBV_QP_PORT);
	modify(fx.raw, (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR }, IBV_QP_STATE);
	modify(fx.raw, (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS }, IBV_QP_STATE);
}

/* At exit, after the harness's own objects: every object destroyed (LeakSanitizer, and the
 * pools' count of mbufs still out, then see what the receive path would leak). */
static void fx_close(void)
{
	struct ibv_qp *q[2] = { fx.marker, fx.raw };

	for (int i = 0; i < 2; i++)
		if (q[i] != NULL && ibv_destroy_qp(q[i]) != 0)
			fprintf(stderr, "%s: ibv_destroy_qp: %s\n", fx.name, strerror(errno));
	ibv_dereg_mr(fx.smr);
	ibv_destroy_cq(fx.mcq);
	ibv_destroy_cq(fx.rcq);
	ibv_dealloc_pd(fx.pd);
	ibv_close_device(fx.ctx);
	free(fx.sbuf);
}

void fx_open(const char *name, const char *const *addrs, int n)
{
	struct ibv_device **list;
	union ibv_gid g;
	int nd = 0;

	fx.name = name;
	CHECK(n >= 0 && n <= FX_MAX_ADDRS);
	setenv("DPV_EAL_ARGS", "--vdev=net_ring0 --log-level=lib.eal:error "
	       "--log-level=lib.telemetry:error", 1);
	list = ibv_get_device_list(&nd);
	if (list == NULL || nd < 1 || (fx.ctx = ibv_open_device(list[0])) == NULL)
		fx_die("a net_ring device");
	ibv_free_device_list(list);
	for (int i = 0; i < n; i++)
		if (dpv_port_add_addr(fx.ctx, addrs[i]) != 0)
			fx_die("dpv_port_add_addr");
	for (int i = 0; i <= n; i++) {
		CHECK(ibv_query_gid(fx.ctx, 1, i, &g) == 0);
		memcpy(fx.gid[i], g.raw, 16);
	}
	CHECK(dpv__roce_gid_to_mac(fx.gid[0], fx.mac) == 0);
	fx.pd = ibv_alloc_pd(fx.ctx);
	fx.mcq = ibv_create_cq(fx.ctx, 64, NULL, NULL, 0);
	fx.rcq = ibv_create_cq(fx.ctx, 256, NULL, NULL, 0);
	fx.sbuf = aligned_alloc(4096, SBUF_SIZE);
	CHECK(fx.pd != NULL && fx.mcq != NULL && fx.rcq != NULL && fx.sbuf != NULL);
	fx.smr = ibv_reg_mr(fx.pd, fx.sbuf, SBUF_SIZE, IBV_ACCESS_LOCAL_WRITE);
	CHECK(fx.smr != NULL);
	make_qps();
	atexit(fx_close);                 /* after dpverbs' own exit handler: runs before it */
}

bool fx_scatter_ok(const uint8_t *area, size_t len, uint8_t guard, const struct ibv_sge *sge,
		   int nsge, const uint8_t *want, uint32_t n)
{
	uint8_t *expect = malloc(len);
	uint32_t off = 0;
	bool ok;

	CHECK(expect != NULL);
	memset(expect, guard, len);
	for (int i = 0; i < nsge && off < n; i++) {
		uint32_t k = sge[i].length < n - off ? sge[i].length : n - off;

		memcpy(expect + (sge[i].addr - (uintptr_t)area), want + off, k);
		off += k;
	}
	ok = memcmp(expect, area, len) == 0;
	free(expect);
	return ok;
}

void fx_fix_icrc(uint8_t *f, size_t len)
{
	struct dpv_roce_frame fr;

	if (dpv__roce_frame_parse(f, len, &fr) == -EILSEQ) {
		size_t at = (size_t)fr.payload_off + fr.payload_len + fr.h.bth.pad;
		uint32_t icrc = dpv__roce_icrc(f + fr.l2_len, fr.ipv6, at - fr.l2_len);

		for (int i = 0; i < 4; i++, icrc >>= 8)
			f[at + i] = (uint8_t)icrc;
	}
}

void fx_raw_send(const uint8_t *f, size_t len)
{
	struct ibv_sge sge = { (uintptr_t)fx.sbuf, (uint32_t)len, fx.smr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND }, *bad;
	struct ibv_wc wc;

	CHECK(len <= MARKER_BUF);
	memcpy(fx.sbuf, f, len);
	CHECK(ibv_post_send(fx.raw, &wr, &bad) == 0);
	fx_poll_one(fx.rcq, &wc);
	CHECK(wc.status == IBV_WC_SUCCESS);
}

void fx_marker_recv(void)
{
	struct ibv_sge sge = { (uintptr_t)fx.sbuf + MARKER_BUF, 2048, fx.smr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad;

	CHECK(ibv_post_recv(fx.marker, &rwr, &bad) == 0);
}

void fx_send_marker(void)
{
	struct dpv_roce_path p = { .hop_limit = 64, .sport = 0xC123 };
	struct dpv_roce_hdrs h = { .bth = { .opcode = 0x64, .pkey = 0xFFFF,
					    .dqpn = fx.marker->qp_num },
				   .deth = { .qkey = FX_MARKER_QKEY, .sqpn = 1 } };
	uint8_t f[128];
	int n;

	memcpy(p.dmac, fx.mac, 6);
	memcpy(p.smac, fx.mac, 6);
	memcpy(p.sgid, fx.gid[1], 16);
	memcpy(p.dgid, fx.gid[1], 16);
	n = dpv__roce_frame_build(f, sizeof(f), &p, &h, "mark", 4);
	CHECK(n > 0);
	fx_marker_recv();
	fx_raw_send(f, (size_t)n);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Every symbol@version of the drop-in libibverbs.so.1's version map (compat/libibverbs.map,
 * read at run time) is walked: looked up with dlvsym and called with valid-looking arguments
 * on a net_null device, and what it answers is what rdma-core answers for a device lacking the
 * feature (EOPNOTSUPP, NULL with errno, -1 with errno) or what it does when it works. None may
 * crash or return garbage. A symbol of the map that has no entry in the table below fails the
 * test: a new export must be walked. The table also says which answers change when the UD,
 * RC, SRQ and MW transports land (printed with -v, kept in doc/compat.md).
 * Usage: test_symbol_walk <libibverbs.so.1> <libibverbs.map> [-v]
 * (DPV_EAL_ARGS names one net_null port). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/sa.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_sa.h>
#include <rdma/ib_user_verbs.h>

#include "dpv_check.h"


/* rdma-core's exports that no installed header declares (driver.h, marshall.h): only their
 * types are used here, through __typeof__, so nothing binds to them at link time. */
void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst, struct ib_uverbs_ah_attr *src);
void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst, struct ib_uverbs_qp_attr *src);
void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst, struct ib_user_path_rec *src);
void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst, struct ibv_sa_path_rec *src);
const char *ibv_get_sysfs_path(void);
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size);
int ibv_read_ibdev_sysfs_file(char *buf, size_t size, void *sysfs_dev, const char *fnfmt, ...);
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		       int *type);
enum ibv_rate mbps_to_ibv_rate(int mbps);
int ibv_dontfork_range(void *base, size_t size);
int ibv_dofork_range(void *base, size_t size);
void ibv_register_driver(const char *name, void *init_func);
void verbs_register_driver_34(const void *ops);
struct ibv_context *verbs_open_device(struct ibv_device *device, void *private_data);
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd, size_t alloc_size,
				    void *context_offset, uint32_t driver_id);
void verbs_uninit_context(struct verbs_context *context);
void verbs_set_ops(struct verbs_context *vctx, const void *ops);
void verbs_init_cq(struct ibv_cq *cq, struct ibv_context *context,
		   struct ibv_comp_channel *channel, void *cq_context);
unsigned int __ioctl_final_num_attrs(unsigned int num_attrs, void *link);
int execute_ioctl(struct ibv_context *context, void *cmd);
void __verbs_log(struct verbs_context *ctx, uint32_t level, const char *fmt, ...);
int ibv_cmd_poll_cq(struct ibv_cq *cq, int ne, struct ibv_wc *wc);
int ibv_cmd_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
int ibv_cmd_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
int ibv_cmd_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);

static void *lib;
static const char *V11 = "IBVERBS_1.1", *V10 = "IBVERBS_1.0", *VP = "IBVERBS_PRIVATE_34";

static void *sym(const char *name, const char *version)
{
	void *p = dlvsym(lib, name, version);

	CHECK(p != NULL, "%s@%s: %s", name, version, dlerror());
	return p;
}

/* A typed pointer to name@version of the drop-in library. */
#define FN(name, ver) ((__typeof__(&name))sym(#name, ver))

/* What the checks share: a device, and a PD, CQ and RAW_PACKET QP (in RTS) on it. */
static struct ibv_device **devs;
static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qp;
static uint8_t frame[64] = { 0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x88, 0xb5 };

static int qp_to(struct ibv_qp *q, enum ibv_qp_state s)
{
	struct ibv_qp_attr a = { .qp_state = s, .port_num = 1 };

	return FN(ibv_modify_qp, V11)(q, &a, IBV_QP_STATE | (s == IBV_QPS_INIT ? IBV_QP_PORT : 0));
}

static struct ibv_qp *raw_qp(struct ibv_cq *c)
{
	struct ibv_qp_init_attr init = { .send_cq = c, .recv_cq = c, .qp_type = IBV_QPT_RAW_PACKET,
					 .cap = { .max_send_wr = 8, .max_recv_wr = 8,
						  .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp *q = FN(ibv_create_qp, V11)(pd, &init);

	if (q == NULL || qp_to(q, IBV_QPS_INIT) || qp_to(q, IBV_QPS_RTR) || qp_to(q, IBV_QPS_RTS)) {
		fprintf(stderr, "RAW_PACKET QP: %s\n", strerror(errno));
		exit(1);
	}
	return q;
}

/* Post @n signaled sends of frame (registered in @mr) on @q. */
static void send_frames(struct ibv_qp *q, struct ibv_mr *mr, int n)
{
	struct ibv_sge sge = { (uintptr_t)frame, sizeof(frame), mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	for (int i = 0; i < n; i++)
		CHECK(ibv_post_send(q, &wr, &bad) == 0, "post %d", i);
}

/* ---- the checks: each walks the symbols its comment names ---- */

/* ibv_get_device_list, ibv_free_device_list, ibv_get_device_name, ibv_get_device_guid,
 * ibv_get_device_index, ibv_open_device, ibv_close_device, verbs_open_device: they work. */
static void check_devices(void)
{
	struct ibv_device **l;
	struct ibv_context *c;
	int n = -1;

	l = FN(ibv_get_device_list, V11)(&n);
	CHECK(l != NULL && n == 1 && l[1] == NULL, "one device, the list NULL-terminated: %d", n);
	if (l == NULL || n < 1)
		return;
	CHECK(strcmp(FN(ibv_get_device_name, V11)(l[0]), "dpv_net_null0") == 0, "name %s",
	      FN(ibv_get_device_name, V11)(l[0]));
	CHECK(FN(ibv_get_device_guid, V11)(l[0]) != 0, "a GUID");
	CHECK(FN(ibv_get_device_index, "IBVERBS_1.9")(l[0]) == 0, "index 0");
	c = FN(ibv_open_device, V11)(l[0]);
	CHECK(c != NULL && c->device == l[0], "ibv_open_device: %s", strerror(errno));
	if (c != NULL)
		CHECK(FN(ibv_close_device, V11)(c) == 0, "ibv_close_device");
	c = FN(verbs_open_device, VP)(l[0], NULL);
	CHECK(c != NULL, "verbs_open_device(dev, NULL) is ibv_open_device: %s", strerror(errno));
	if (c != NULL)
		CHECK(FN(ibv_close_device, V11)(c) == 0, "closing it");
	errno = 0;
	CHECK(FN(verbs_open_device, VP)(l[0], frame) == NULL && errno == EOPNOTSUPP,
	      "provider data: no provider understands it");
	FN(ibv_free_device_list, V11)(l);
}

/* ibv_query_device, ibv_query_port, ibv_query_gid, ibv_query_pkey, ibv_get_pkey_index,
 * _ibv_query_gid_ex, _ibv_query_gid_table, ibv_query_gid_type: port 1, GID 0, P_Key 0xffff. */
static void check_queries(void)
{
	struct ibv_device_attr da;
	struct ibv_port_attr pa;     /* the symbol fills what the older structure has */
	union ibv_gid gid;
	struct ibv_gid_entry ge[4];
	__be16 pkey = 0;
	int type = -1;

	CHECK(FN(ibv_query_device, V11)(ctx, &da) == 0 && da.phys_port_cnt == 1, "query_device");
	CHECK(FN(ibv_query_port, V11)(ctx, 1, (struct _compat_ibv_port_attr *)&pa) == 0 &&
	      pa.state == IBV_PORT_ACTIVE &&
	      pa.link_layer == IBV_LINK_LAYER_ETHERNET, "query_port");
	CHECK(FN(ibv_query_port, V11)(ctx, 2, (struct _compat_ibv_port_attr *)&pa) == EINVAL,
	      "port 2");
	CHECK(FN(ibv_query_gid, V11)(ctx, 1, 0, &gid) == 0 && gid.raw[0] == 0xfe &&
	      gid.raw[1] == 0x80, "GID 0 link-local");
	CHECK(FN(ibv_query_pkey, V11)(ctx, 1, 0, &pkey) == 0 && pkey == 0xffff, "P_Key");
	CHECK(FN(ibv_get_pkey_index, "IBVERBS_1.5")(ctx, 1, 0xffff) == 0, "P_Key index 0");
	errno = 0;
	CHECK(FN(ibv_get_pkey_index, "IBVERBS_1.5")(ctx, 1, 0x7fff) == -1 && errno == ENOENT,
	      "another P_Key");
	CHECK(FN(_ibv_query_gid_ex, "IBVERBS_1.11")(ctx, 1, 0, &ge[0], 0, sizeof(ge[0])) == 0 &&
	      memcmp(ge[0].gid.raw, gid.raw, 16) == 0, "_ibv_query_gid_ex");
	CHECK(FN(_ibv_query_gid_ex, "IBVERBS_1.11")(ctx, 1, 0, &ge[0], 1, sizeof(ge[0])) == EINVAL,
	      "flags");
	CHECK(FN(_ibv_query_gid_table, "IBVERBS_1.11")(ctx, ge, 4, 0, sizeof(ge[0])) == 1,
	      "_ibv_query_gid_table: one entry");
	/* every entry of the table is RoCE v2, as rxe's (IBV_GID_TYPE_SYSFS_ROCE_V2 = 1) */
	CHECK(FN(ibv_query_gid_type, VP)(ctx, 1, 0, &type) == 0 && type == 1, "GID type %d", type);
}

/* ibv_alloc_pd, ibv_dealloc_pd, ibv_reg_mr, ibv_reg_mr_iova, ibv_reg_mr_iova2, ibv_dereg_mr,
 * ibv_rereg_mr (EOPNOTSUPP as IBV_REREG_MR_ERR_INPUT, as rdma-core's dummy op),
 * ibv_reg_dmabuf_mr (NULL, EOPNOTSUPP). */
static void check_pd_mr(void)
{
	struct ibv_pd *p = FN(ibv_alloc_pd, V11)(ctx);
	struct ibv_mr *m1, *m2, *m3;

	CHECK(p != NULL, "ibv_alloc_pd: %s", strerror(errno));
	if (p == NULL)
		return;
	m1 = FN(ibv_reg_mr, V11)(p, frame, sizeof(frame), IBV_ACCESS_LOCAL_WRITE);
	m2 = FN(ibv_reg_mr_iova, "IBVERBS_1.7")(p, frame, sizeof(frame), 0x1000 +
						((uintptr_t)frame & 4095), 0);
	m3 = FN(ibv_reg_mr_iova2, "IBVERBS_1.8")(p, frame, sizeof(frame), (uintptr_t)frame, 0);
	CHECK(m1 != NULL && m2 != NULL && m3 != NULL, "three MRs: %s", strerror(errno));
	CHECK(FN(ibv_dealloc_pd, V11)(p) == EBUSY, "a PD with MRs");
	errno = 0;
	CHECK(m1 && FN(ibv_rereg_mr, V11)(m1, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, 0) ==
	      IBV_REREG_MR_ERR_INPUT && errno == EOPNOTSUPP, "ibv_rereg_mr");
	errno = 0;
	CHECK(FN(ibv_reg_dmabuf_mr, "IBVERBS_1.12")(p, 0, 4096, 0, 0, 0) == NULL &&
	      errno == EOPNOTSUPP, "ibv_reg_dmabuf_mr");
	for (struct ibv_mr *m, **mp = (struct ibv_mr *[]){ m1, m2, m3, NULL }; (m = *mp); mp++)
		CHECK(FN(ibv_dereg_mr, V11)(m) == 0, "ibv_dereg_mr");
	CHECK(FN(ibv_dealloc_pd, V11)(p) == 0, "ibv_dealloc_pd");
}

/* ibv_create_cq, ibv_resize_cq, ibv_destroy_cq; ibv_create_qp, ibv_modify_qp, ibv_query_qp,
 * ibv_qp_to_qp_ex, ibv_destroy_qp; ibv_query_qp_data_in_order (0: nothing promised),
 * ibv_query_ece and ibv_set_ece (EOPNOTSUPP: no ECE). */
static void check_cq_qp(void)
{
	struct ibv_cq *c = FN(ibv_create_cq, V11)(ctx, 16, NULL, NULL, 0);
	struct ibv_qp *q;
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	struct ibv_ece ece = { 0 };

	CHECK(c != NULL, "ibv_create_cq: %s", strerror(errno));
	if (c == NULL)
		return;
	CHECK(FN(ibv_resize_cq, V11)(c, 64) == 0 && c->cqe == 64, "ibv_resize_cq");
	q = raw_qp(c);
	CHECK(FN(ibv_query_qp, V11)(q, &a, IBV_QP_STATE, &ia) == 0 && a.qp_state == IBV_QPS_RTS &&
	      ia.qp_type == IBV_QPT_RAW_PACKET, "ibv_query_qp");
	errno = 0;
	CHECK(FN(ibv_qp_to_qp_ex, "IBVERBS_1.6")(q) == NULL && errno == EOPNOTSUPP,
	      "a QP created without send_ops_flags has no ibv_qp_ex");
	CHECK(FN(ibv_query_qp_data_in_order, "IBVERBS_1.14")(q, IBV_WR_SEND, 0) == 0, "in order");
	CHECK(FN(ibv_query_ece, "IBVERBS_1.10")(q, &ece) == EOPNOTSUPP, "ibv_query_ece");
	CHECK(FN(ibv_set_ece, "IBVERBS_1.10")(q, &ece) == EOPNOTSUPP, "ibv_set_ece");
	CHECK(FN(ibv_destroy_cq, V11)(c) == EBUSY, "a CQ a QP uses");
	CHECK(FN(ibv_destroy_qp, V11)(q) == 0, "ibv_destroy_qp");
	CHECK(FN(ibv_destroy_cq, V11)(c) == 0, "ibv_destroy_cq");
}

/* ibv_create_comp_channel, ibv_destroy_comp_channel, ibv_get_cq_event, ibv_ack_cq_events: an
 * armed CQ's completion wakes the channel; a non-blocking fd with no event says EAGAIN. */
static void check_channel(struct ibv_mr *mr)
{
	struct ibv_comp_channel *ch = FN(ibv_create_comp_channel, V10)(ctx);
	struct ibv_cq *c, *got = NULL;
	struct ibv_qp *q;
	struct ibv_wc wc;
	void *cctx = NULL;

	CHECK(ch != NULL, "ibv_create_comp_channel: %s", strerror(errno));
	if (ch == NULL)
		return;
	c = FN(ibv_create_cq, V11)(ctx, 8, frame, ch, 0);
	CHECK(c != NULL, "CQ on the channel: %s", strerror(errno));
	if (c == NULL)
		return;
	q = raw_qp(c);
	CHECK(ibv_req_notify_cq(c, 0) == 0, "arm");
	send_frames(q, mr, 1);
	CHECK(FN(ibv_get_cq_event, V11)(ch, &got, &cctx) == 0 && got == c && cctx == frame,
	      "ibv_get_cq_event: the CQ and its context");
	FN(ibv_ack_cq_events, V11)(c, 1);
	CHECK(c->comp_events_completed == 1, "acked: %u", c->comp_events_completed);
	CHECK(ibv_poll_cq(c, 1, &wc) == 1 && wc.status == IBV_WC_SUCCESS, "the completion");
	fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK);
	errno = 0;
	CHECK(FN(ibv_get_cq_event, V11)(ch, &got, &cctx) == -1 && errno == EAGAIN, "no event");
	CHECK(FN(ibv_destroy_comp_channel, V10)(ch) == EBUSY, "a channel a CQ uses");
	CHECK(FN(ibv_destroy_qp, V11)(q) == 0 && FN(ibv_destroy_cq, V11)(c) == 0, "tear-down");
	CHECK(FN(ibv_destroy_comp_channel, V10)(ch) == 0, "ibv_destroy_comp_channel");
}

/* ibv_get_async_event, ibv_ack_async_event: a CQ overrun is IBV_EVENT_CQ_ERR on the async fd;
 * acking it counts it on the CQ; a non-blocking fd with no event says EAGAIN. */
static void check_async(struct ibv_mr *mr)
{
	struct ibv_cq *c = FN(ibv_create_cq, V11)(ctx, 1, NULL, NULL, 0);
	struct ibv_async_event ev = { 0 };
	struct ibv_wc wc[4];
	struct ibv_qp *q;

	if (c == NULL) {
		CHECK(c != NULL, "CQ: %s", strerror(errno));
		return;
	}
	q = raw_qp(c);
	send_frames(q, mr, 3);                   /* a 1-entry CQ: overrun */
	while (ibv_poll_cq(c, 4, wc) > 0)
		;
	CHECK(FN(ibv_get_async_event, V11)(ctx, &ev) == 0 && ev.event_type == IBV_EVENT_CQ_ERR &&
	      ev.element.cq == c, "IBV_EVENT_CQ_ERR: %s", strerror(errno));
	FN(ibv_ack_async_event, V11)(&ev);
	CHECK(c->async_events_completed == 1, "acked: %u", c->async_events_completed);
	fcntl(ctx->async_fd, F_SETFL, fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK);
	errno = 0;
	CHECK(FN(ibv_get_async_event, V11)(ctx, &ev) == -1 && errno == EAGAIN, "no event");
	CHECK(FN(ibv_destroy_qp, V11)(q) == 0 && FN(ibv_destroy_cq, V11)(c) == 0, "tear-down");
}

/* ibv_attach_mcast, ibv_detach_mcast on a RAW_PACKET QP: an IPv6 group's MAC steers to it. */
static void check_mcast(void)
{
	union ibv_gid g = { .raw = { 0xff, 0x0e, [10] = 0x33, 0x33, 0, 0, 0, 1 } };

	CHECK(FN(ibv_attach_mcast, V11)(qp, &g, 0) == 0, "attach");
	CHECK(FN(ibv_detach_mcast, V11)(qp, &g, 0) == 0, "detach");
	CHECK(FN(ibv_detach_mcast, V11)(qp, &g, 0) == EINVAL, "detach what is not attached");
}

/* ibv_create_ah, ibv_destroy_ah, ibv_create_ah_from_wc, ibv_init_ah_from_wc: RoCEv2 address
 * handles — a GRH is required (EINVAL without), a link-local peer needs no resolution, a GRH
 * as a UD receive writes it gives back the sender; ibv_resolve_eth_l2_from_gid, a helper of
 * rdma-core's providers: EOPNOTSUPP. */
static void check_ah(void)
{
	/* the peer 02:00:00:00:00:07 by its link-local GID (EUI-64, universal bit flipped) */
	const uint8_t peer[16] = { 0xfe, 0x80, [8] = 0x00, 0x00, 0x00, 0xff, 0xfe, 0x00, 0x00, 0x07 };
	struct ibv_ah_attr aa = { .port_num = 1 }, back;
	struct ibv_wc wc = { .status = IBV_WC_SUCCESS, .wc_flags = IBV_WC_GRH, .src_qp = 5 };
	struct ibv_grh grh = { .version_tclass_flow = htobe32(6u << 28), .next_hdr = 17,
			       .hop_limit = 64 };
	union ibv_gid own;
	struct ibv_ah *ah;
	uint8_t mac[6];
	uint16_t vid;

	errno = 0;
	CHECK(FN(ibv_create_ah, V11)(pd, &aa) == NULL && errno == EINVAL, "ibv_create_ah: no GRH");
	aa.is_global = 1;
	aa.grh.hop_limit = 64;
	memcpy(aa.grh.dgid.raw, peer, 16);
	ah = FN(ibv_create_ah, V11)(pd, &aa);
	CHECK(ah != NULL, "ibv_create_ah to a link-local peer: %s", strerror(errno));
	if (ah != NULL)
		CHECK(FN(ibv_destroy_ah, V11)(ah) == 0, "ibv_destroy_ah");
	CHECK(FN(ibv_query_gid, V11)(ctx, 1, 0, &own) == 0, "GID 0");
	memcpy(grh.sgid.raw, peer, 16);
	grh.dgid = own;
	CHECK(FN(ibv_init_ah_from_wc, V11)(ctx, 1, &wc, &grh, &back) == 0 && back.is_global &&
	      memcmp(back.grh.dgid.raw, peer, 16) == 0 && back.grh.sgid_index == 0,
	      "ibv_init_ah_from_wc: the sender back from the GRH");
	ah = FN(ibv_create_ah_from_wc, V11)(pd, &wc, &grh, 1);
	CHECK(ah != NULL, "ibv_create_ah_from_wc: %s", strerror(errno));
	if (ah != NULL)
		CHECK(FN(ibv_destroy_ah, V11)(ah) == 0, "ibv_destroy_ah");
	CHECK(FN(ibv_resolve_eth_l2_from_gid, V11)(ctx, &aa, mac, &vid) == EOPNOTSUPP,
	      "ibv_resolve_eth_l2_from_gid");
}

/* ibv_create_srq, ibv_modify_srq, ibv_query_srq, ibv_destroy_srq: an SRQ made, armed,
 * queried (the limit armed), destroyed. */
static void check_srq(void)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_srq_attr a = { .srq_limit = 2 };
	struct ibv_srq *srq;

	srq = FN(ibv_create_srq, V11)(pd, &sa);
	CHECK(srq != NULL && sa.attr.max_wr >= 4, "ibv_create_srq: %s", strerror(errno));
	if (srq == NULL)
		return;
	CHECK(FN(ibv_modify_srq, V11)(srq, &a, IBV_SRQ_LIMIT) == 0, "ibv_modify_srq");
	a.srq_limit = 0;
	CHECK(FN(ibv_query_srq, V11)(srq, &a) == 0 && a.srq_limit == 2, "ibv_query_srq");
	CHECK(FN(ibv_destroy_srq, V11)(srq) == 0, "ibv_destroy_srq");
}

/* ibv_import_device of the context's cmd_fd (or a dup of it): the same context, which then
 * takes one more ibv_close_device; of another descriptor EOPNOTSUPP, of none EBADF;
 * ibv_import_pd/_mr by handle: the same PD and MR (an unknown handle EINVAL);
 * ibv_import_dm EOPNOTSUPP; ibv_unimport_pd/_mr/_dm leave the object alone. */
static void check_import(struct ibv_mr *mr)
{
	int dup_fd = dup(ctx->cmd_fd), null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	struct ibv_context *imp;

	CHECK(dup_fd >= 0 && (fcntl(ctx->cmd_fd, F_GETFD) & FD_CLOEXEC), "cmd_fd: %s",
	      strerror(errno));
	imp = FN(ibv_import_device, "IBVERBS_1.10")(dup_fd);
	CHECK(imp == ctx, "ibv_import_device: %s", strerror(errno));
	errno = 0;
	CHECK(FN(ibv_import_device, "IBVERBS_1.10")(null_fd) == NULL && errno == EOPNOTSUPP,
	      "ibv_import_device of /dev/null");
	errno = 0;
	CHECK(FN(ibv_import_device, "IBVERBS_1.10")(-1) == NULL && errno == EBADF, "of -1");
	close(null_fd);
	CHECK(FN(ibv_import_pd, "IBVERBS_1.10")(ctx, pd->handle) == pd, "pd");
	errno = 0;
	CHECK(FN(ibv_import_pd, "IBVERBS_1.10")(ctx, pd->handle + 1000) == NULL && errno == EINVAL,
	      "unknown pd handle");
	CHECK(FN(ibv_import_mr, "IBVERBS_1.10")(pd, mr->handle) == mr, "mr");
	errno = 0;
	CHECK(FN(ibv_import_mr, "IBVERBS_1.10")(pd, mr->handle ^ 0x100) == NULL && errno == EINVAL,
	      "unknown mr handle");
	errno = 0;
	CHECK(FN(ibv_import_dm, "IBVERBS_1.13")(ctx, 1) == NULL && errno == EOPNOTSUPP, "dm");
	FN(ibv_unimport_pd, "IBVERBS_1.10")(pd);
	FN(ibv_unimport_mr, "IBVERBS_1.10")(mr);
	FN(ibv_unimport_dm, "IBVERBS_1.13")(&(struct ibv_dm){ .context = ctx });
	CHECK(pd->context == ctx && mr->pd == pd, "unimport left them alone");
	/* the import's close: the context and its objects stay */
	if (imp == ctx)
		CHECK(FN(ibv_close_device, V11)(imp) == 0 && pd->context == ctx &&
		      FN(ibv_import_mr, "IBVERBS_1.10")(pd, mr->handle) == mr, "import closed");
	close(dup_fd);
}

/* ibv_fork_init: 0, or EINVAL once an MR was registered without it (rdma-core's rule); then
 * ibv_is_fork_initialized says ENABLED or DISABLED; ibv_dontfork_range and ibv_dofork_range
 * of a page-aligned buffer: 0 (api.md, "fork"). */
static void check_fork(void)
{
	static uint8_t page[4096] __attribute__((aligned(4096)));
	int rc = FN(ibv_fork_init, V11)();

	CHECK(rc == 0 || rc == EINVAL, "ibv_fork_init %d", rc);
	CHECK(FN(ibv_is_fork_initialized, "IBVERBS_1.13")() ==
	      (rc == 0 ? IBV_FORK_ENABLED : IBV_FORK_DISABLED), "is_fork_initialized");
	CHECK(FN(ibv_dontfork_range, V11)(page, sizeof(page)) == 0, "dontfork");
	CHECK(FN(ibv_dofork_range, V11)(page, sizeof(page)) == 0, "dofork");
}

/* The names and rates: ibv_event_type_str, ibv_node_type_str, ibv_port_state_str,
 * ibv_wc_status_str ("unknown" out of range), ibv_rate_to_mbps, ibv_rate_to_mult,
 * mbps_to_ibv_rate, mult_to_ibv_rate (-1 or IBV_RATE_MAX for what has no value). */
static void check_strings(void)
{
	CHECK(strcmp(FN(ibv_event_type_str, V11)(IBV_EVENT_CQ_ERR), "CQ error") == 0, "event");
	CHECK(strcmp(FN(ibv_event_type_str, V11)((enum ibv_event_type)999), "unknown") == 0, "?");
	CHECK(strcmp(FN(ibv_node_type_str, V11)(IBV_NODE_CA), "InfiniBand channel adapter") == 0,
	      "node");
	CHECK(strcmp(FN(ibv_node_type_str, V11)((enum ibv_node_type)99), "unknown") == 0, "?");
	CHECK(strcmp(FN(ibv_port_state_str, V11)(IBV_PORT_ACTIVE), "active") == 0, "port");
	CHECK(strcmp(FN(ibv_port_state_str, V11)((enum ibv_port_state)99), "unknown") == 0, "?");
	CHECK(strcmp(FN(ibv_wc_status_str, V11)(IBV_WC_SUCCESS), "success") == 0, "status");
	CHECK(strcmp(FN(ibv_wc_status_str, V11)((enum ibv_wc_status)999), "unknown") == 0, "?");
	CHECK(FN(ibv_rate_to_mbps, V11)(IBV_RATE_100_GBPS) == 103125, "100G in Mb/s");
	CHECK(FN(ibv_rate_to_mbps, V11)(IBV_RATE_MAX) == -1, "no rate");
	CHECK(FN(ibv_rate_to_mult, V10)(IBV_RATE_10_GBPS) == 4, "10G as 2.5G multiple");
	CHECK(FN(ibv_rate_to_mult, V10)(IBV_RATE_MAX) == -1, "no rate");
	CHECK(FN(mbps_to_ibv_rate, V11)(103125) == IBV_RATE_100_GBPS, "back");
	CHECK(FN(mbps_to_ibv_rate, V11)(1) == IBV_RATE_MAX, "no such rate");
	CHECK(FN(mult_to_ibv_rate, V10)(4) == IBV_RATE_10_GBPS, "back");
	CHECK(FN(mult_to_ibv_rate, V10)(3) == IBV_RATE_MAX, "no such rate");
}

/* The kernel-ABI copies: every field lands where verbs has it. */
static void check_copies(void)
{
	struct ib_uverbs_qp_attr kq = { .qp_state = 3, .cur_qp_state = 2, .path_mtu = 4, .qkey = 7,
					.rq_psn = 11, .sq_psn = 13, .dest_qp_num = 17,
					.max_send_wr = 19, .max_inline_data = 23, .port_num = 1,
					.timeout = 14, .retry_cnt = 6, .min_rnr_timer = 12,
					.ah_attr = { .dlid = 29, .sl = 3, .is_global = 1,
						     .grh = { .dgid = { 0xfe, 0x80 },
							      .hop_limit = 64 } } };
	struct ibv_qp_attr q;
	struct ib_user_path_rec kp = { .dgid = { 1, 2 }, .sgid = { 3, 4 }, .dlid = 5, .slid = 6,
				       .pkey = 0xffff, .mtu = 5, .rate = 16, .numb_path = 1 }, kp2;
	struct ibv_sa_path_rec p;

	memset(&q, 0xa5, sizeof(q));
	FN(ibv_copy_qp_attr_from_kern, V10)(&q, &kq);
	CHECK(q.cur_qp_state == 2 && q.path_mtu == 4 && q.qkey == 7 && q.rq_psn == 11 &&
	      q.sq_psn == 13 && q.dest_qp_num == 17 && q.cap.max_send_wr == 19 &&
	      q.cap.max_inline_data == 23 && q.port_num == 1 && q.timeout == 14 &&
	      q.retry_cnt == 6 && q.min_rnr_timer == 12, "ibv_copy_qp_attr_from_kern");
	CHECK(q.ah_attr.dlid == 29 && q.ah_attr.sl == 3 && q.ah_attr.is_global == 1 &&
	      q.ah_attr.grh.dgid.raw[0] == 0xfe && q.ah_attr.grh.hop_limit == 64,
	      "its AH attributes (ibv_copy_ah_attr_from_kern)");
	memset(&q.ah_attr, 0, sizeof(q.ah_attr));
	FN(ibv_copy_ah_attr_from_kern, V11)(&q.ah_attr, &kq.ah_attr);
	CHECK(q.ah_attr.dlid == 29 && q.ah_attr.grh.hop_limit == 64, "ibv_copy_ah_attr_from_kern");
	FN(ibv_copy_path_rec_from_kern, V10)(&p, &kp);
	CHECK(p.dgid.raw[0] == 1 && p.sgid.raw[1] == 4 && p.dlid == 5 && p.slid == 6 &&
	      p.pkey == 0xffff && p.mtu == 5 && p.rate == 16 && p.numb_path == 1,
	      "ibv_copy_path_rec_from_kern");
	memset(&kp2, 0, sizeof(kp2));
	FN(ibv_copy_path_rec_to_kern, V10)(&kp2, &p);
	CHECK(memcmp(&kp2.dgid, &kp.dgid, 32) == 0 && kp2.dlid == 5 && kp2.mtu == 5,
	      "ibv_copy_path_rec_to_kern: back as it was");
}

/* ibv_get_sysfs_path (/sys or $SYSFS_PATH), ibv_read_sysfs_file (a line without its newline),
 * ibv_read_ibdev_sysfs_file (-1: dpverbs' devices have no sysfs directory). */
static void check_sysfs(void)
{
	const char *path = FN(ibv_get_sysfs_path, V10)();
	char buf[64];

	CHECK(path != NULL && path[0] == '/', "sysfs path %s", path ? path : "(null)");
	CHECK(FN(ibv_read_sysfs_file, V10)("/proc/self", "comm", buf, sizeof(buf)) > 0 &&
	      strchr(buf, '\n') == NULL, "a line");
	errno = 0;
	CHECK(FN(ibv_read_sysfs_file, V10)("/nonexistent", "x", buf, sizeof(buf)) == -1 &&
	      errno == ENOENT, "no file");
	errno = 0;
	CHECK(FN(ibv_read_ibdev_sysfs_file, VP)(buf, sizeof(buf), NULL, "node_guid") == -1 &&
	      errno == EINVAL, "no sysfs device");
}

/* The provider interface (IBVERBS_PRIVATE_34) a provider library's constructor or code may
 * reach: registrations ignored, context set-up refused, ops and CQ set-up touch nothing,
 * ioctls EOPNOTSUPP, the log quiet; the legacy ibv_register_driver@IBVERBS_1.1 ignored. */
static void check_provider(void)
{
	struct verbs_context vc;
	struct ibv_cq c;
	uint8_t zero[sizeof(vc)] = { 0 };
	bool *disassociate = sym("verbs_allow_disassociate_destroy", VP);

	FN(verbs_register_driver_34, VP)(NULL);
	FN(ibv_register_driver, V11)("legacy", NULL);
	errno = 0;
	CHECK(FN(_verbs_init_and_alloc_context, VP)(devs[0], -1, 4096, NULL, 0) == NULL &&
	      errno == EOPNOTSUPP, "_verbs_init_and_alloc_context");
	memset(&vc, 0, sizeof(vc));
	FN(verbs_set_ops, VP)(&vc, NULL);
	FN(verbs_uninit_context, VP)(&vc);
	CHECK(memcmp(&vc, zero, sizeof(vc)) == 0, "verbs_set_ops, verbs_uninit_context: untouched");
	memset(&c, 0, sizeof(c));
	FN(verbs_init_cq, VP)(&c, ctx, NULL, NULL);
	CHECK(c.context == NULL, "verbs_init_cq: untouched");
	CHECK(FN(__ioctl_final_num_attrs, VP)(3, NULL) == 3, "__ioctl_final_num_attrs");
	CHECK(FN(execute_ioctl, VP)(ctx, frame) == EOPNOTSUPP, "execute_ioctl");
	FN(__verbs_log, VP)(&vc, 0, "a provider's %s\n", "log line");
	CHECK(disassociate != NULL && !*disassociate, "verbs_allow_disassociate_destroy false");
}

/* The uverbs commands (IBVERBS_PRIVATE_34 ibv_cmd_*): EOPNOTSUPP, touching nothing; poll
 * answers -1 with errno, the post commands name the first WR. */
static void check_cmd(const char *name)
{
	if (strcmp(name, "ibv_cmd_poll_cq") == 0) {
		struct ibv_wc wc;

		errno = 0;
		CHECK(FN(ibv_cmd_poll_cq, VP)(cq, 1, &wc) == -1 && errno == EOPNOTSUPP, "%s", name);
	} else if (strcmp(name, "ibv_cmd_post_send") == 0) {
		struct ibv_send_wr wr = { 0 }, *bad = NULL;

		CHECK(FN(ibv_cmd_post_send, VP)(qp, &wr, &bad) == EOPNOTSUPP && bad == &wr, "%s", name);
	} else if (strcmp(name, "ibv_cmd_post_recv") == 0) {
		struct ibv_recv_wr wr = { 0 }, *bad = NULL;

		CHECK(FN(ibv_cmd_post_recv, VP)(qp, &wr, &bad) == EOPNOTSUPP && bad == &wr, "%s", name);
	} else if (strcmp(name, "ibv_cmd_post_srq_recv") == 0) {
		struct ibv_recv_wr wr = { 0 }, *bad = NULL;
		struct ibv_srq fake = { .context = ctx };

		CHECK(FN(ibv_cmd_post_srq_recv, VP)(&fake, &wr, &bad) == EOPNOTSUPP && bad == &wr,
		      "%s", name);
	} else {
		int (*cmd)(void) = (int (*)(void))sym(name, VP);

		CHECK(cmd != NULL && cmd() == EOPNOTSUPP, "%s answers EOPNOTSUPP", name);
	}
}

/* The IBVERBS_1.0 versions of the functions 1.1 replaced: a program built for them found no
 * device (ibv_get_device_list@1.0: NULL, 0 devices), so each fails cleanly: EOPNOTSUPP, NULL
 * with errno, or nothing for the void ones. */
static void check_abi10(const char *name)
{
	static const char *const ptrs[] = { "ibv_get_device_name", "ibv_open_device",
		"ibv_alloc_pd", "ibv_reg_mr", "ibv_create_cq", "ibv_create_srq", "ibv_create_qp",
		"ibv_create_ah", NULL };
	static const char *const voids[] = { "ibv_free_device_list", "ibv_ack_async_event",
		"ibv_ack_cq_events", NULL };
	void *f = sym(name, V10);

	if (f == NULL)
		return;
	errno = 0;
	if (strcmp(name, "ibv_get_device_list") == 0) {
		int n = -1;

		CHECK(((void *(*)(int *))f)(&n) == NULL && n == 0 && errno == EOPNOTSUPP, "%s", name);
		return;
	}
	if (strcmp(name, "ibv_get_device_guid") == 0) {
		CHECK(((uint64_t (*)(void *))f)(NULL) == 0 && errno == EOPNOTSUPP, "%s", name);
		return;
	}
	for (int i = 0; voids[i] != NULL; i++)
		if (strcmp(name, voids[i]) == 0) {
			((void (*)(void *, void *, void *))f)(NULL, NULL, NULL);
			t_pass++;
			return;
		}
	for (int i = 0; ptrs[i] != NULL; i++)
		if (strcmp(name, ptrs[i]) == 0) {
			CHECK(((void *(*)(void *, void *, void *))f)(NULL, NULL, NULL) == NULL &&
			      errno == EOPNOTSUPP, "%s@IBVERBS_1.0", name);
			return;
		}
	CHECK(((int (*)(void *, void *, void *))f)(NULL, NULL, NULL) == EOPNOTSUPP,
	      "%s@IBVERBS_1.0", name);
}

/* ---- the table: every exported name@version, the check that walks it, and what changes
 * when a transport lands ---- */

enum walk { W_DEV, W_QUERY, W_PD_MR, W_CQ_QP, W_CHANNEL, W_ASYNC, W_MCAST, W_AH, W_SRQ, W_IMPORT,
	    W_FORK, W_STR, W_COPY, W_SYSFS, W_PROVIDER, W_CMD, W_ABI10 };

struct entry {
	const char *name, *version;   /* version NULL: IBVERBS_1.1 */
	enum walk walk;
	const char *later;            /* what changes when UD/RC/SRQ/MW land */
};

#define E(n, w) { #n, NULL, w, NULL }
#define EV(n, v, w) { #n, v, w, NULL }
#define EL(n, v, w, l) { #n, v, w, l }
static const struct entry table[] = {
	E(ibv_get_device_list, W_DEV), E(ibv_free_device_list, W_DEV),
	E(ibv_get_device_name, W_DEV), E(ibv_get_device_guid, W_DEV),
	EV(ibv_get_device_index, "IBVERBS_1.9", W_DEV), E(ibv_open_device, W_DEV),
	E(ibv_close_device, W_DEV), EV(verbs_open_device, "IBVERBS_PRIVATE_34", W_DEV),
	E(ibv_query_device, W_QUERY), E(ibv_query_port, W_QUERY),
	EL(ibv_query_gid, NULL, W_QUERY, "UD/RoCE: one RoCE v2 GID per port address after GID 0"),
	E(ibv_query_pkey, W_QUERY), EV(ibv_get_pkey_index, "IBVERBS_1.5", W_QUERY),
	EL(_ibv_query_gid_ex, "IBVERBS_1.11", W_QUERY, "UD/RoCE: RoCE v2 entries"),
	EL(_ibv_query_gid_table, "IBVERBS_1.11", W_QUERY, "UD/RoCE: more than one entry"),
	EL(ibv_query_gid_type, "IBVERBS_PRIVATE_34", W_QUERY, "UD/RoCE: type 1 (RoCE v2) entries"),
	E(ibv_alloc_pd, W_PD_MR), E(ibv_dealloc_pd, W_PD_MR), E(ibv_reg_mr, W_PD_MR),
	EV(ibv_reg_mr_iova, "IBVERBS_1.7", W_PD_MR), EV(ibv_reg_mr_iova2, "IBVERBS_1.8", W_PD_MR),
	E(ibv_dereg_mr, W_PD_MR), E(ibv_rereg_mr, W_PD_MR),
	EV(ibv_reg_dmabuf_mr, "IBVERBS_1.12", W_PD_MR),
	E(ibv_create_cq, W_CQ_QP), E(ibv_resize_cq, W_CQ_QP), E(ibv_destroy_cq, W_CQ_QP),
	E(ibv_create_qp, W_CQ_QP), E(ibv_modify_qp, W_CQ_QP), E(ibv_query_qp, W_CQ_QP),
	E(ibv_destroy_qp, W_CQ_QP), EV(ibv_qp_to_qp_ex, "IBVERBS_1.6", W_CQ_QP),
	EL(ibv_query_qp_data_in_order, "IBVERBS_1.14", W_CQ_QP,
	   "RC: may say IBV_QUERY_QP_DATA_IN_ORDER_WHOLE_MSG if RC places data in order"),
	EV(ibv_query_ece, "IBVERBS_1.10", W_CQ_QP), EV(ibv_set_ece, "IBVERBS_1.10", W_CQ_QP),
	EV(ibv_create_comp_channel, "IBVERBS_1.0", W_CHANNEL),
	EV(ibv_destroy_comp_channel, "IBVERBS_1.0", W_CHANNEL),
	E(ibv_get_cq_event, W_CHANNEL), E(ibv_ack_cq_events, W_CHANNEL),
	E(ibv_get_async_event, W_ASYNC),
	EL(ibv_ack_async_event, NULL, W_ASYNC, "WQs: counts WQ_FATAL on the WQ"),
	EL(ibv_attach_mcast, NULL, W_MCAST, "UD: joins the group for UD QPs too (RoCE multicast)"),
	EL(ibv_detach_mcast, NULL, W_MCAST, "UD: as attach"),
	EL(ibv_create_ah, NULL, W_AH, "UD: an address handle (RoCE v2 path, neighbour resolved)"),
	EL(ibv_destroy_ah, NULL, W_AH, "UD: 0"),
	EL(ibv_create_ah_from_wc, NULL, W_AH, "UD: the AH back to the sender of a UD receive"),
	EL(ibv_init_ah_from_wc, NULL, W_AH, "UD: fills the attributes from the WC and its GRH"),
	EL(ibv_resolve_eth_l2_from_gid, NULL, W_AH, "UD/RoCE: the peer's MAC and VLAN"),
	E(ibv_create_srq, W_SRQ), E(ibv_modify_srq, W_SRQ), E(ibv_query_srq, W_SRQ),
	E(ibv_destroy_srq, W_SRQ),
	EV(ibv_import_device, "IBVERBS_1.10", W_IMPORT), EV(ibv_import_pd, "IBVERBS_1.10", W_IMPORT),
	EV(ibv_import_mr, "IBVERBS_1.10", W_IMPORT), EV(ibv_import_dm, "IBVERBS_1.13", W_IMPORT),
	EV(ibv_unimport_pd, "IBVERBS_1.10", W_IMPORT), EV(ibv_unimport_mr, "IBVERBS_1.10", W_IMPORT),
	EV(ibv_unimport_dm, "IBVERBS_1.13", W_IMPORT),
	E(ibv_fork_init, W_FORK), EV(ibv_is_fork_initialized, "IBVERBS_1.13", W_FORK),
	E(ibv_dontfork_range, W_FORK), E(ibv_dofork_range, W_FORK),
	E(ibv_event_type_str, W_STR), E(ibv_node_type_str, W_STR), E(ibv_port_state_str, W_STR),
	E(ibv_wc_status_str, W_STR), E(ibv_rate_to_mbps, W_STR),
	EV(ibv_rate_to_mult, "IBVERBS_1.0", W_STR), E(mbps_to_ibv_rate, W_STR),
	EV(mult_to_ibv_rate, "IBVERBS_1.0", W_STR),
	E(ibv_copy_ah_attr_from_kern, W_COPY), EV(ibv_copy_qp_attr_from_kern, "IBVERBS_1.0", W_COPY),
	EV(ibv_copy_path_rec_from_kern, "IBVERBS_1.0", W_COPY),
	EV(ibv_copy_path_rec_to_kern, "IBVERBS_1.0", W_COPY),
	EV(ibv_get_sysfs_path, "IBVERBS_1.0", W_SYSFS), EV(ibv_read_sysfs_file, "IBVERBS_1.0", W_SYSFS),
	EV(ibv_read_ibdev_sysfs_file, "IBVERBS_PRIVATE_34", W_SYSFS),
	E(ibv_register_driver, W_PROVIDER),
	EV(verbs_register_driver_34, "IBVERBS_PRIVATE_34", W_PROVIDER),
	EV(_verbs_init_and_alloc_context, "IBVERBS_PRIVATE_34", W_PROVIDER),
	EV(verbs_set_ops, "IBVERBS_PRIVATE_34", W_PROVIDER),
	EV(verbs_uninit_context, "IBVERBS_PRIVATE_34", W_PROVIDER),
	EV(verbs_init_cq, "IBVERBS_PRIVATE_34", W_PROVIDER),
	EV(__ioctl_final_num_attrs, "IBVERBS_PRIVATE_34", W_PROVIDER),
	EV(execute_ioctl, "IBVERBS_PRIVATE_34", W_PROVIDER),
	EV(__verbs_log, "IBVERBS_PRIVATE_34", W_PROVIDER),
	EV(verbs_allow_disassociate_destroy, "IBVERBS_PRIVATE_34", W_PROVIDER),
};

static const struct entry *lookup(const char *name, const char *version)
{
	static struct entry cmd = { NULL, "IBVERBS_PRIVATE_34", W_CMD, NULL };
	static struct entry abi10 = { NULL, "IBVERBS_1.0", W_ABI10, NULL };

	if (strncmp(name, "ibv_cmd_", 8) == 0 && strcmp(version, cmd.version) == 0)
		return &cmd;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (strcmp(table[i].name, name) == 0 &&
		    strcmp(table[i].version ? table[i].version : V11, version) == 0)
			return &table[i];
	/* a name of both nodes: its 1.0 version is the old ABI's */
	if (strcmp(version, V10) == 0)
		for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
			if (strcmp(table[i].name, name) == 0 && table[i].version == NULL)
				return &abi10;
	return NULL;
}

/* ---- the version map, read as the linker reads it ---- */

struct symver { char name[64], version[64]; };

/* Every "name;" of every node's global list, with its node: symbol@version pairs. */
static int read_map(const char *path, struct symver *out, int max)
{
	FILE *f = fopen(path, "r");
	char line[256], node[64] = "";
	bool global = false, comment = false;
	int n = 0;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		char *p = line, word[64];

		for (char *c; (c = strstr(p, comment ? "*/" : "/*")) != NULL || comment;) {
			if (c == NULL) {                     /* inside a comment to the line's end */
				*p = '\0';
				break;
			}
			if (comment) {
				memmove(p, c + 2, strlen(c + 2) + 1);
				comment = false;
			} else {
				char *end = strstr(c + 2, "*/");

				if (end != NULL)
					memmove(c, end + 2, strlen(end + 2) + 1);
				else {
					*c = '\0';
					comment = true;
				}
			}
		}
		if (sscanf(p, " %31[A-Za-z0-9_.] {", word) == 1 && strchr(p, '{') != NULL) {
			snprintf(node, sizeof(node), "%s", word);
			global = false;
		} else if (strstr(p, "global:") != NULL) {
			global = true;
		} else if (strstr(p, "local:") != NULL || strchr(p, '}') != NULL) {
			global = false;
		} else if (global && sscanf(p, " %63[A-Za-z0-9_] ;", word) == 1 && n < max) {
			snprintf(out[n].name, sizeof(out[n].name), "%s", word);
			snprintf(out[n].version, sizeof(out[n].version), "%s", node);
			n++;
		}
	}
	fclose(f);
	return n;
}

int main(int argc, char **argv)
{
	static struct symver sv[512];
	bool verbose = argc > 3 && strcmp(argv[3], "-v") == 0;
	struct ibv_mr *mr;
	int n, nd = 0, walked = 0;
	bool done[W_ABI10 + 1] = { false };

	lib = argc > 2 ? dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) : NULL;
	if (lib == NULL) {
		fprintf(stderr, "usage: test_symbol_walk libibverbs.so.1 libibverbs.map [-v] (%s)\n",
			dlerror());
		return 1;
	}
	n = read_map(argv[2], sv, 512);
	CHECK(n > 140, "%s: %d symbols", argv[2], n);
	devs = FN(ibv_get_device_list, V11)(&nd);
	ctx = devs != NULL && nd > 0 ? FN(ibv_open_device, V11)(devs[0]) : NULL;
	pd = ctx ? FN(ibv_alloc_pd, V11)(ctx) : NULL;
	cq = pd ? FN(ibv_create_cq, V11)(ctx, 16, NULL, NULL, 0) : NULL;
	mr = pd ? FN(ibv_reg_mr, V11)(pd, frame, sizeof(frame), 0) : NULL;
	if (mr == NULL || cq == NULL) {
		fprintf(stderr, "set-up on the drop-in library: %s\n", strerror(errno));
		return 1;
	}
	qp = raw_qp(cq);

	for (int i = 0; i < n; i++) {
		const struct entry *e = lookup(sv[i].name, sv[i].version);

		CHECK(e != NULL, "%s@%s is exported but not walked: add it to the table",
		      sv[i].name, sv[i].version);
		if (e == NULL)
			continue;
		walked++;
		if (verbose && e->later != NULL)
			printf("later  %s@%s: %s\n", sv[i].name, sv[i].version, e->later);
		if (e->walk == W_CMD) {
			check_cmd(sv[i].name);
			continue;
		}
		if (e->walk == W_ABI10) {
			check_abi10(sv[i].name);
			continue;
		}
		if (done[e->walk])
			continue;
		done[e->walk] = true;
		switch (e->walk) {
		case W_DEV: check_devices(); break;
		case W_QUERY: check_queries(); break;
		case W_PD_MR: check_pd_mr(); break;
		case W_CQ_QP: check_cq_qp(); break;
		case W_CHANNEL: check_channel(mr); break;
		case W_ASYNC: check_async(mr); break;
		case W_MCAST: check_mcast(); break;
		case W_AH: check_ah(); break;
		case W_SRQ: check_srq(); break;
		case W_IMPORT: check_import(mr); break;
		case W_FORK: check_fork(); break;
		case W_STR: check_strings(); break;
		case W_COPY: check_copies(); break;
		case W_SYSFS: check_sysfs(); break;
		case W_PROVIDER: check_provider(); break;
		default: break;
		}
	}
	/* the table names nothing the library does not export */
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		bool found = false;

		for (int j = 0; j < n && !found; j++)
			found = strcmp(sv[j].name, table[i].name) == 0 &&
				strcmp(sv[j].version, table[i].version ? table[i].version : V11) == 0;
		CHECK(found, "%s@%s is in the table, not in the map", table[i].name,
		      table[i].version ? table[i].version : V11);
	}
	CHECK(FN(ibv_destroy_qp, V11)(qp) == 0, "tear-down");
	CHECK(FN(ibv_dereg_mr, V11)(mr) == 0 && FN(ibv_destroy_cq, V11)(cq) == 0, "tear-down");
	CHECK(FN(ibv_dealloc_pd, V11)(pd) == 0, "tear-down");
	CHECK(FN(ibv_close_device, V11)(ctx) == 0, "tear-down");
	FN(ibv_free_device_list, V11)(devs);
	printf("symbol walk: %d symbol@version walked of %d in the map; %d checks passed, "
	       "%d failed\n", walked, n, t_pass, t_fail);
	return t_fail != 0 || t_pass == 0;
}

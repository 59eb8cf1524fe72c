/* SPDX-License-Identifier: BSD-3-Clause */
/* PD, MR, CQ, completion channel and QP life cycles, and the documented errno of every
 * invalid argument (doc/semantics.md, "Object errors"); a parent domain's allocator; cmd_fd
 * and ibv_import_device. */
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include "dpv_test.h"

/* Leaves one PD with one MR (returned in @left) to check that close refuses. */
static struct ibv_pd *check_pd_mr(struct ibv_context *ctx, struct ibv_mr **left)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	static uint8_t buf[4 * 4096] __attribute__((aligned(4096)));
	long page = sysconf(_SC_PAGESIZE);
	struct ibv_mr *mr, *mr2, *zb;

	CHECK(pd != NULL);
	mr = ibv_reg_mr(pd, buf + 3, 100, IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr != NULL, "%s", strerror(errno));
	CHECK(mr->addr == buf + 3 && mr->length == 100 && mr->pd == pd && mr->context == ctx);
	mr2 = ibv_reg_mr(pd, buf + 3, 100, 0);            /* the same range twice is fine */
	CHECK(mr2 != NULL && mr2->lkey != mr->lkey && mr2->rkey != mr->rkey);

	/* access flags as ibv_reg_mr(3): remote write or atomic need local write */
	errno = 0;
	CHECK(ibv_reg_mr(pd, buf, 64, IBV_ACCESS_REMOTE_WRITE) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(ibv_reg_mr(pd, buf, 64, IBV_ACCESS_REMOTE_ATOMIC) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(ibv_reg_mr(pd, buf, 64, 1 << 14) == NULL && errno == EINVAL, "unknown flag");
	errno = 0;
	CHECK(ibv_reg_mr(pd, buf, 0, 0) == NULL && errno == EINVAL, "zero length");
	errno = 0;
	CHECK(ibv_reg_mr(NULL, buf, 64, 0) == NULL && errno == EINVAL, "NULL PD");

	/* iova keeps the address's page offset; iova 0 is a zero-based MR */
	errno = 0;
	CHECK(ibv_reg_mr_iova(pd, buf + 3, 64, 0x1000, 0) == NULL && errno == EINVAL);
	zb = ibv_reg_mr_iova(pd, buf, 2 * page, 0, IBV_ACCESS_LOCAL_WRITE);
	CHECK(zb != NULL, "zero-based MR: %s", strerror(errno));
	*left = ibv_reg_mr_iova2(pd, buf + 5, 64, 0x2005, 0);
	CHECK(*left != NULL);

	/* a PD with MRs cannot go */
	CHECK_EQ(ibv_dealloc_pd(pd), EBUSY);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK_EQ(ibv_dereg_mr(mr2), 0);
	CHECK_EQ(ibv_dereg_mr(zb), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), EBUSY);          /* the iova2 MR is still there */
	return pd;
}

static void check_cq_channel(struct ibv_context *ctx)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_cq *cq, *ev_cq;
	void *ev_ctx;
	int flags;

	CHECK(ch != NULL && ch->fd >= 0);
	errno = 0;
	CHECK(ibv_create_cq(ctx, 0, NULL, NULL, 0) == NULL && errno == EINVAL, "cqe 0");
	errno = 0;
	CHECK(ibv_create_cq(ctx, 1 << 30, NULL, NULL, 0) == NULL && errno == EINVAL, "too big");
	errno = 0;
	CHECK(ibv_create_cq(ctx, 16, NULL, NULL, 5) == NULL && errno == EINVAL, "comp_vector");
	cq = ibv_create_cq(ctx, 16, (void *)0x1234, ch, 0);
	CHECK(cq != NULL && cq->cqe >= 16 && cq->channel == ch && cq->cq_context == (void *)0x1234);
	CHECK_EQ(ibv_destroy_comp_channel(ch), EBUSY);
	CHECK_EQ(ibv_resize_cq(cq, 64), 0);
	CHECK(cq->cqe >= 64);
	CHECK_EQ(ibv_resize_cq(cq, 0), EINVAL);

	/* nothing fired yet: a non-blocking read says EAGAIN */
	flags = fcntl(ch->fd, F_GETFL);
	fcntl(ch->fd, F_SETFL, flags | O_NONBLOCK);
	errno = 0;
	CHECK(ibv_get_cq_event(ch, &ev_cq, &ev_ctx) == -1 && errno == EAGAIN);
	CHECK_EQ(ibv_req_notify_cq(cq, 0), 0);
	CHECK(ibv_get_cq_event(ch, &ev_cq, &ev_ctx) == -1, "an empty armed CQ fired");
	ibv_ack_cq_events(cq, 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_destroy_comp_channel(ch), 0);
}

static void check_qp_create(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr a = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RAW_PACKET,
				      .cap = { .max_send_wr = 100, .max_send_sge = 2,
					       .max_inline_data = 64 } };
	struct ibv_qp_init_attr_ex ex = { .qp_type = IBV_QPT_RAW_PACKET, .send_cq = cq,
					  .recv_cq = cq, .pd = pd,
					  .comp_mask = IBV_QP_INIT_ATTR_PD |
						       IBV_QP_INIT_ATTR_MAX_TSO_HEADER,
					  .max_tso_header = 96, .cap = { .max_send_wr = 8 } };
	struct ibv_qp *qp = ibv_create_qp(pd, &a), *qp2;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;

	CHECK(qp != NULL, "%s", strerror(errno));
	CHECK_EQ(a.cap.max_send_wr, 128);            /* rounded up and written back */
	CHECK(a.cap.max_send_sge >= 2 && a.cap.max_inline_data >= 64);
	CHECK(qp->qp_num != 0 && qp->state == IBV_QPS_RESET && qp->qp_type == IBV_QPT_RAW_PACKET);
	CHECK_EQ(ibv_query_qp(qp, &qa, IBV_QP_STATE | IBV_QP_CAP, &qi), 0);
	CHECK_EQ(qa.qp_state, IBV_QPS_RESET);
	CHECK_EQ(qi.cap.max_send_wr, 128);
	CHECK(qi.send_cq == cq && qi.qp_type == IBV_QPT_RAW_PACKET);

	qp2 = ibv_create_qp_ex(ctx, &ex);
	CHECK(qp2 != NULL, "create_qp_ex with MAX_TSO_HEADER: %s", strerror(errno));
	CHECK(qp2 == NULL || qp2->qp_num != qp->qp_num);

	/* a CQ with QPs and a PD with QPs cannot go */
	CHECK_EQ(ibv_destroy_cq(cq), EBUSY);
	CHECK_EQ(ibv_dealloc_pd(pd), EBUSY);
	/* (ibv_close_device would free them all: test/compat/test_close_leftovers.c) */

	/* QP types (UD, RC, UC and XRC have their own tests: test_ud, test_rc, test_srq): a
	 * type without a transport; XRC_RECV needs an XRC domain, which ibv_create_qp has not */
	{
		struct ibv_qp_init_attr o = a;

		o.qp_type = IBV_QPT_DRIVER;
		errno = 0;
		CHECK(ibv_create_qp(pd, &o) == NULL && errno == EOPNOTSUPP, "DRIVER");
		o.qp_type = IBV_QPT_XRC_RECV;
		errno = 0;
		CHECK(ibv_create_qp(pd, &o) == NULL && errno == EINVAL, "XRC_RECV without XRCD");
	}
	a.cap.max_send_wr = 1 << 30;
	errno = 0;
	CHECK(ibv_create_qp(pd, &a) == NULL && errno == EINVAL, "max_send_wr too big");
	a.cap.max_send_wr = 8;
	a.cap.max_send_sge = 31;
	errno = 0;
	CHECK(ibv_create_qp(pd, &a) == NULL && errno == EINVAL, "max_send_sge too big");
	a.cap.max_send_sge = 1;
	a.cap.max_inline_data = 1 << 20;
	errno = 0;
	CHECK(ibv_create_qp(pd, &a) == NULL && errno == EINVAL, "max_inline_data too big");
	a.cap.max_inline_data = 0;
	a.send_cq = NULL;
	errno = 0;
	CHECK(ibv_create_qp(pd, &a) == NULL && errno == EINVAL, "no send CQ");
	ex.max_tso_header = 4096;
	errno = 0;
	CHECK(ibv_create_qp_ex(ctx, &ex) == NULL && errno == EINVAL, "max_tso_header too big");
	ex.comp_mask |= IBV_QP_INIT_ATTR_RX_HASH;
	errno = 0;
	CHECK(ibv_create_qp_ex(ctx, &ex) == NULL && errno == EOPNOTSUPP, "RX hash");
	ex.comp_mask = 1u << 20;
	errno = 0;
	CHECK(ibv_create_qp_ex(ctx, &ex) == NULL && errno == EINVAL, "unknown comp_mask");

	CHECK_EQ(ibv_destroy_qp(qp), 0);
	if (qp2 != NULL)
		CHECK_EQ(ibv_destroy_qp(qp2), 0);
}

/* Ops not implemented answer EOPNOTSUPP, never crash on a NULL pointer. */
static void check_unsupported(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp *qp = test_raw_qp(pd, cq, (struct ibv_qp_cap){ .max_send_wr = 4,
								  .max_send_sge = 1 });
	struct {
		struct ibv_flow_attr attr;
		struct ibv_flow_spec_tunnel vxlan;
	} fa = {
		.attr = { .size = sizeof(fa), .port = 1, .num_of_specs = 1 },
		.vxlan = { .type = IBV_FLOW_SPEC_VXLAN_TUNNEL,
			   .size = sizeof(struct ibv_flow_spec_tunnel) } };
	struct ibv_srq_init_attr_ex sa = { .attr = { .max_wr = 4, .max_sge = 1 },
					   .comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD,
					   .srq_type = IBV_SRQT_TM, .pd = pd };
	struct ibv_cq_init_attr_ex cqa = { .cqe = 4 };

	errno = 0;
	CHECK(ibv_create_flow(qp, &fa.attr) == NULL && errno == EOPNOTSUPP, "a VXLAN spec");
	errno = 0;
	CHECK(ibv_alloc_mw(pd, (enum ibv_mw_type)3) == NULL && errno == EINVAL, "MW type 3");
	errno = 0;
	CHECK(ibv_create_srq_ex(ctx, &sa) == NULL && errno == EOPNOTSUPP);   /* tag matching */
	cqa.wc_flags = IBV_WC_EX_WITH_CVLAN;       /* no CVLAN (timestamps: test_cq_timestamps) */
	errno = 0;
	CHECK(ibv_create_cq_ex(ctx, &cqa) == NULL && errno == EOPNOTSUPP);
	CHECK_EQ(ibv_attach_mcast(qp, &(union ibv_gid){ 0 }, 0), EINVAL);   /* no group MAC */
	CHECK_EQ(ibv_destroy_qp(qp), 0);
}

static void check_parent_domain(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_td *td = ibv_alloc_td(ctx, &(struct ibv_td_init_attr){ 0 });
	struct ibv_parent_domain_init_attr pa = { .pd = pd, .td = td };
	struct ibv_pd *par;
	struct ibv_qp *qp;

	CHECK(td != NULL, "%s", strerror(errno));
	par = ibv_alloc_parent_domain(ctx, &pa);
	CHECK(par != NULL, "%s", strerror(errno));
	CHECK_EQ(ibv_dealloc_td(td), EBUSY);
	qp = test_raw_qp(par, cq, (struct ibv_qp_cap){ .max_send_wr = 4, .max_send_sge = 1 });
	CHECK_EQ(ibv_dealloc_pd(par), EBUSY);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_dealloc_pd(par), 0);
	CHECK_EQ(ibv_dealloc_td(td), 0);
}

/* ---- a parent domain's allocator (IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) ---- */

static struct {
	uint8_t arena[1 << 20] __attribute__((aligned(64)));
	size_t used;
	int mode;                  /* 0: the arena, 1: IBV_ALLOCATOR_USE_DEFAULT, 2: NULL */
	int allocs, frees, live;
	uint64_t types;            /* 1 << resource_type of every call */
	void *ctx_seen;
	void *last_free;
} al;

static void *test_alloc(struct ibv_pd *pd, void *pd_context, size_t size, size_t alignment,
			uint64_t resource_type)
{
	void *p;

	(void)pd;
	al.ctx_seen = pd_context;
	al.types |= 1ull << resource_type;
	if (al.mode == 1)
		return IBV_ALLOCATOR_USE_DEFAULT;
	if (al.mode == 2)
		return NULL;
	al.used = (al.used + alignment - 1) & ~(alignment - 1);
	if (al.used + size > sizeof(al.arena))
		return NULL;
	p = al.arena + al.used;
	memset(p, 0xee, size);                /* dpverbs must zero it */
	al.used += size;
	al.allocs++;
	al.live++;
	return p;
}

static void test_free(struct ibv_pd *pd, void *pd_context, void *ptr, uint64_t resource_type)
{
	(void)pd;
	(void)pd_context;
	(void)resource_type;
	CHECK((uint8_t *)ptr >= al.arena && (uint8_t *)ptr < al.arena + sizeof(al.arena),
	      "free of a pointer the allocator never gave");
	al.frees++;
	al.live--;
	al.last_free = ptr;
}

/* The rings were zeroed: no 64 bytes of the allocator's 0xee filling are left. */
static bool arena_zeroed(void)
{
	size_t run = 0;

	for (size_t i = 0; i < al.used; i++) {
		run = al.arena[i] == 0xee ? run + 1 : 0;
		if (run == 64)
			return false;
	}
	return true;
}

/* A parent domain with the program's allocator: the rings of a QP (send and receive), an SRQ
 * (resized: a new ring, the old one given back) and a CQ made with it (ibv_create_cq_ex with
 * IBV_CQ_INIT_ATTR_MASK_PD) come from it, zeroed, with dpverbs' resource types and the
 * pd_context; the QP sends through them (completions in the CQ of the arena); the parent
 * domain is busy while they live; each is given back once through the free function.
 * IBV_ALLOCATOR_USE_DEFAULT: dpverbs' own memory, the free function never called; NULL: ENOMEM.
 * A plain PD in MASK_PD: EINVAL. */
static void check_parent_allocators(struct ibv_context *ctx, struct ibv_pd *pd)
{
	struct ibv_parent_domain_init_attr pa = {
		.pd = pd, .comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
				       IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT,
		.alloc = test_alloc, .free = test_free, .pd_context = &al,
	};
	struct ibv_cq_init_attr_ex ca = { .cqe = 16, .comp_mask = IBV_CQ_INIT_ATTR_MASK_PD,
					  .wc_flags = IBV_WC_STANDARD_FLAGS };
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_pd *par = ibv_alloc_parent_domain(ctx, &pa);
	static uint8_t frame[64] __attribute__((aligned(64)));
	struct ibv_cq_ex *cqx;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	int allocs;

	CHECK(par != NULL, "parent domain with allocators: %s", strerror(errno));
	ca.parent_domain = pd;                            /* not a parent domain */
	errno = 0;
	CHECK(ibv_create_cq_ex(ctx, &ca) == NULL && errno == EINVAL, "a plain PD in MASK_PD");
	ca.parent_domain = par;
	cqx = ibv_create_cq_ex(ctx, &ca);
	CHECK(cqx != NULL, "CQ of the parent domain: %s", strerror(errno));
	CHECK(al.allocs == 1 && al.types == 1u << DPV_RES_CQ && al.ctx_seen == &al, "CQ ring");
	qp = test_raw_qp(par, ibv_cq_ex_to_cq(cqx), (struct ibv_qp_cap){ .max_send_wr = 8,
			 .max_send_sge = 1, .max_recv_wr = 8, .max_recv_sge = 1 });
	CHECK(al.allocs == 3 && (al.types & (1u << DPV_RES_SQ)) && (al.types & (1u << DPV_RES_RQ)),
	      "QP rings: %d allocations", al.allocs);
	srq = ibv_create_srq(par, &sa);
	CHECK(srq != NULL && al.allocs == 4 && (al.types & (1u << DPV_RES_SRQ)), "SRQ ring");
	CHECK_EQ(ibv_dealloc_pd(par), EBUSY);             /* its rings are out */
	/* the rings work: a send completes into the CQ; the SRQ resizes into a new ring */
	mr = ibv_reg_mr(par, frame, sizeof(frame), 0);
	CHECK(mr != NULL);
	memset(frame, 0xff, 12);
	{
		struct ibv_sge sge = { (uintptr_t)frame, 60, mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
		struct ibv_recv_wr rw = { .wr_id = 8, .sg_list = &sge, .num_sge = 1 }, *rbad;

		CHECK_EQ(ibv_post_send(qp, &wr, &bad), 0);
		CHECK_EQ(test_poll(ibv_cq_ex_to_cq(cqx), &wc, 1), 1);
		CHECK(wc.wr_id == 7 && wc.status == IBV_WC_SUCCESS, "send through the arena's rings");
		CHECK_EQ(ibv_post_srq_recv(srq, &rw, &rbad), 0);
	}
	CHECK(arena_zeroed(), "a ring was not zeroed");
	allocs = al.allocs;
	CHECK_EQ(ibv_modify_srq(srq, &(struct ibv_srq_attr){ .max_wr = 64 }, IBV_SRQ_MAX_WR), 0);
	CHECK(al.allocs == allocs + 1 && al.frees == 1, "SRQ resize: %d allocs, %d frees",
	      al.allocs - allocs, al.frees);
	CHECK_EQ(ibv_destroy_srq(srq), 0);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)), 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK(al.live == 0 && al.frees == al.allocs, "%d rings not given back", al.live);
	/* IBV_ALLOCATOR_USE_DEFAULT: dpverbs' memory, no free call */
	al.mode = 1;
	allocs = al.frees;
	qp = test_raw_qp(par, ibv_create_cq(ctx, 4, NULL, NULL, 0), (struct ibv_qp_cap){
			 .max_send_wr = 4, .max_send_sge = 1 });
	{
		struct ibv_cq *cq = qp->send_cq;

		CHECK_EQ(ibv_destroy_qp(qp), 0);
		CHECK_EQ(ibv_destroy_cq(cq), 0);
	}
	CHECK_EQ(al.frees, allocs);
	/* NULL: out of memory */
	al.mode = 2;
	errno = 0;
	CHECK(ibv_create_srq(par, &sa) == NULL && errno == ENOMEM, "allocator's NULL");
	al.mode = 0;
	CHECK_EQ(ibv_dealloc_pd(par), 0);
}

/* context.cmd_fd is a descriptor of the context's own (dup(2) takes it, close-on-exec, closed
 * by ibv_close_device); ibv_import_device of it or of a dup gives that context back (as the
 * shared-PD flow of rdma-core's test_shared_pd uses it), ibv_import_pd/_mr the same objects
 * by handle; objects made through the import are the context's; the import's close leaves the
 * context open, the last close frees what is left and closes cmd_fd. */
static void check_cmd_fd_import(struct ibv_context *ctx)
{
	struct ibv_context *c2 = ibv_open_device(ctx->device), *imp;
	static uint8_t buf[4096] __attribute__((aligned(4096)));
	struct ibv_pd *pd, *ipd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	int fd, d;

	CHECK(c2 != NULL, "%s", strerror(errno));
	fd = c2->cmd_fd;
	CHECK(fd >= 0 && fd != ctx->cmd_fd && (fcntl(fd, F_GETFD) & FD_CLOEXEC), "cmd_fd %d", fd);
	d = dup(fd);
	CHECK(d >= 0, "dup(cmd_fd): %s", strerror(errno));
	CHECK(ibv_import_device(ctx->cmd_fd) == ctx, "import of the first context");
	CHECK_EQ(ibv_close_device(ctx), 0);              /* that import's close: ctx stays */
	imp = ibv_import_device(d);
	CHECK(imp == c2, "ibv_import_device(dup): %s", strerror(errno));
	pd = ibv_alloc_pd(c2);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(pd != NULL && mr != NULL && pd->handle != 0);
	ipd = ibv_import_pd(imp, pd->handle);
	CHECK(ipd == pd, "ibv_import_pd: %s", strerror(errno));
	errno = 0;
	CHECK(ibv_import_pd(ctx, pd->handle) == NULL || ibv_import_pd(ctx, pd->handle) != pd,
	      "another context's PD");
	CHECK(ibv_import_mr(ipd, mr->handle) == mr, "ibv_import_mr: %s", strerror(errno));
	cq = ibv_create_cq(imp, 8, NULL, NULL, 0);
	CHECK(cq != NULL && cq->context == c2);
	ibv_unimport_mr(mr);
	ibv_unimport_pd(ipd);
	CHECK_EQ(ibv_close_device(imp), 0);              /* the import's: c2 and its objects stay */
	CHECK_EQ(ibv_dealloc_pd(pd), EBUSY);             /* the MR still holds it */
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(c2), 0);               /* the last: cmd_fd closed, dup still open */
	CHECK(fcntl(fd, F_GETFD) == -1 && errno == EBADF, "cmd_fd %d left open", fd);
	errno = 0;
	CHECK(ibv_import_device(d) == NULL && errno == EOPNOTSUPP, "import of a closed context");
	close(d);
}

int main(void)
{
	struct ibv_context *ctx = test_open(NULL);
	struct ibv_pd *pd, *pd_left;
	struct ibv_mr *mr_left;
	struct ibv_cq *cq;

	pd_left = check_pd_mr(ctx, &mr_left);
	check_cq_channel(ctx);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	check_qp_create(ctx, pd, cq);
	check_unsupported(ctx, pd, cq);
	check_parent_domain(ctx, pd, cq);
	check_parent_allocators(ctx, pd);
	check_cmd_fd_import(ctx);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	/* check_pd_mr left one PD with one MR: the MR holds the PD; close frees both (rdma-core) */
	CHECK(mr_left != NULL);
	CHECK_EQ(ibv_dealloc_pd(pd_left), EBUSY);
	CHECK_EQ(ibv_close_device(ctx), 0);
	return test_done("objects");
}

/* libFuzzer harness: the flow-spec parser behind ibv_create_flow (lib/verbs/flow.c) with
 * arbitrary attributes and specs, then a frame from the input through a net_ring port (what a
 * QP sends, the port receives) and the steering that the rule made. The attribute and its specs
 * lie in a buffer of exactly their bytes, num_of_specs counting the specs that the buffer holds
 * when walked by their own size fields (what a program owes ibv_create_flow: attr.size is
 * never read, and is fuzzed), so AddressSanitizer sees a read past them. What must hold:
 * - ibv_create_flow gives a flow, or NULL with errno EINVAL, EOPNOTSUPP or ENOMEM;
 * - a frame received is byte for byte the frame sent; a SNIFFER or ALL_DEFAULT rule, and a
 *   NORMAL rule with no specs, receive every frame;
 * - ibv_destroy_flow of a flow returns 0. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <infiniband/verbs.h>
#include <dpverbs.h>

#include "fuzz_input.h"

#define FRAME_MAX 1514
#define SPEC_MAX 1024

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *scq, *rcq;
static struct ibv_qp *tx, *rx;
static struct ibv_mr *mr;
static uint8_t *buf;                      /* [0, 2K): the frame sent; [2K, 4K): received */
static int rx_posted;

static void die(const char *what, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *what, ...)
{
	va_list ap;

	va_start(ap, what);
	fprintf(stderr, "fuzz_flow_spec: ");
	vfprintf(stderr, what, ap);
	fputc('\n', stderr);
	va_end(ap);
	abort();
}

static struct ibv_qp *raw_qp(struct ibv_cq *cq)
{
	struct ibv_qp_init_attr init = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RAW_PACKET,
					 .cap = { .max_send_wr = 4, .max_send_sge = 1,
						  .max_recv_wr = 4, .max_recv_sge = 1 } };
	struct ibv_qp *qp = ibv_create_qp(pd, &init);
	enum ibv_qp_state to[] = { IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS };

	for (int i = 0; qp != NULL && i < 3; i++) {
		struct ibv_qp_attr a = { .qp_state = to[i], .port_num = 1 };

		if (ibv_modify_qp(qp, &a, IBV_QP_STATE | (i == 0 ? IBV_QP_PORT : 0)) != 0)
			die("QP to RTS: %s", strerror(errno));
	}
	if (qp == NULL)
		die("ibv_create_qp: %s", strerror(errno));
	return qp;
}

/* At exit: every object destroyed, so that LeakSanitizer sees what dpverbs would leak. */
static void cleanup(void)
{
	if (tx != NULL)
		ibv_destroy_qp(tx);
	if (rx != NULL)
		ibv_destroy_qp(rx);
	if (mr != NULL)
		ibv_dereg_mr(mr);
	if (scq != NULL)
		ibv_destroy_cq(scq);
	if (rcq != NULL)
		ibv_destroy_cq(rcq);
	if (pd != NULL)
		ibv_dealloc_pd(pd);
	if (ctx != NULL)
		ibv_close_device(ctx);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct ibv_device **list;
	int n = 0;

	if (getenv("DPV_EAL_ARGS") == NULL)
		setenv("DPV_EAL_ARGS", "--vdev=net_ring0 --log-level=lib.eal:error "
		       "--log-level=lib.telemetry:error", 1);
	list = ibv_get_device_list(&n);
	if (list == NULL || n < 1 || (ctx = ibv_open_device(list[0])) == NULL)
		die("no net_ring device: %s", strerror(errno));
	ibv_free_device_list(list);
	pd = ibv_alloc_pd(ctx);
	scq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	rcq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pd == NULL || scq == NULL || rcq == NULL || buf == MAP_FAILED)
		die("setup: %s", strerror(errno));
	mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	if (mr == NULL)
		die("ibv_reg_mr: %s", strerror(errno));
	tx = raw_qp(scq);
	rx = raw_qp(rcq);
	atexit(cleanup);
	return 0;
}

/* Specs as they come, or well-formed headers of known types with fuzzed contents. */
static size_t make_specs(struct fuzz_input *in, uint8_t *specs, uint8_t *nspecs)
{
	struct spec_hdr { enum ibv_flow_spec_type type; uint16_t size; };
	static const struct spec_hdr known[] = {
		{ IBV_FLOW_SPEC_ETH, sizeof(struct ibv_flow_spec_eth) },
		{ IBV_FLOW_SPEC_IPV4, sizeof(struct ibv_flow_spec_ipv4) },
		{ IBV_FLOW_SPEC_IPV4_EXT, sizeof(struct ibv_flow_spec_ipv4_ext) },
		{ IBV_FLOW_SPEC_IPV6, sizeof(struct ibv_flow_spec_ipv6) },
		{ IBV_FLOW_SPEC_TCP, sizeof(struct ibv_flow_spec_tcp_udp) },
		{ IBV_FLOW_SPEC_UDP, sizeof(struct ibv_flow_spec_tcp_udp) },
	};
	uint8_t mode = fuzz_u8(in);
	size_t len = 0;

	*nspecs = fuzz_u8(in);
	if (mode & 1)                             /* raw bytes */
		return fuzz_bytes(in, specs, fuzz_u16(in) % SPEC_MAX);
	for (int i = 0; i < *nspecs % 8 && len + 128 <= SPEC_MAX; i++) {
		uint8_t k = fuzz_u8(in);
		struct spec_hdr hdr = known[k % 6];

		if (k & 0x80)
			hdr.size = fuzz_u8(in);
		memcpy(specs + len, &hdr, sizeof(hdr));
		fuzz_bytes(in, specs + len + sizeof(hdr), known[k % 6].size - sizeof(hdr));
		len += known[k % 6].size;
	}
	if (mode & 2)
		*nspecs %= 8;
	return len;
}

/* How many of the first @n specs of @specs lie in its @len bytes, walked by their size fields
 * as ibv_create_flow walks them (a spec whose size is shorter than its header ends the walk:
 * the parser stops there). */
static uint8_t specs_held(const uint8_t *specs, size_t len, uint8_t n)
{
	struct { enum ibv_flow_spec_type type; uint16_t size; } hdr;
	size_t off = 0;
	uint8_t i;

	for (i = 0; i < n && len - off >= sizeof(hdr); i++) {
		memcpy(&hdr, specs + off, sizeof(hdr));
		if (hdr.size < sizeof(hdr))
			return i + 1;
		if (hdr.size > len - off)
			break;
		off += hdr.size;
	}
	return i;
}

/* Send the frame; if it arrives at rx, it is the same bytes. Returns whether it arrived. */
static bool send_and_receive(const uint8_t *frame, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)buf, len, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	bool sent = false, arrived = false;

	memcpy(buf, frame, len);
	if (ibv_post_send(tx, &wr, &bad) != 0)
		die("ibv_post_send of a %u-byte frame: %s", len, strerror(errno));
	for (int tries = 0; tries < 1000000 && !(sent && (arrived || tries > 1000)); tries++) {
		int r = ibv_poll_cq(scq, 1, &wc);

		if (r == 1) {
			if (wc.status != IBV_WC_SUCCESS)
				die("send: %s", ibv_wc_status_str(wc.status));
			sent = true;
		}
		r = ibv_poll_cq(rcq, 1, &wc);
		if (r == 1) {
			if (wc.status != IBV_WC_SUCCESS || wc.byte_len != len ||
			    memcmp(buf + 2048, frame, len) != 0)
				die("received %u bytes (%s), sent %u", wc.byte_len,
				    ibv_wc_status_str(wc.status), len);
			arrived = true;
			rx_posted--;
		}
	}
	if (!sent)
		die("the send never completed");
	return arrived;
}

static void post_rx(void)
{
	struct ibv_sge sge = { (uintptr_t)buf + 2048, 2048, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1 }, *bad;

	/* one WQE at a time, so that the bytes compared are the last frame's */
	if (rx_posted == 0) {
		if (ibv_post_recv(rx, &wr, &bad) != 0)
			die("ibv_post_recv: %s", strerror(errno));
		rx_posted = 1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in = { data, size };
	uint8_t specs[SPEC_MAX], frame[FRAME_MAX], nspecs, shape = fuzz_u8(&in);
	struct ibv_flow_attr a = { 0 }, *attr;
	struct ibv_flow *flow;
	size_t len = make_specs(&in, specs, &nspecs), flen;

	a.type = (shape & 0x80) ? fuzz_u8(&in) : (shape & 3);
	a.priority = fuzz_u16(&in);
	a.flags = (shape & 0x40) ? fuzz_u32(&in) : (shape & 4) ? IBV_FLOW_ATTR_FLAGS_DONT_TRAP : 0;
	a.port = (shape & 0x20) ? fuzz_u8(&in) : 1;
	a.comp_mask = (shape & 0x10) ? fuzz_u32(&in) : 0;
	a.num_of_specs = specs_held(specs, len, nspecs);
	a.size = (uint16_t)(sizeof(a) + len);
	if (shape & 0x08)
		a.size = fuzz_u16(&in);               /* any: ibv_create_flow never reads it */
	attr = malloc(sizeof(a) + len);
	if (attr == NULL)
		die("malloc");
	memcpy(attr, &a, sizeof(a));
	memcpy(attr + 1, specs, len);
	flow = ibv_create_flow(rx, attr);
	if (flow == NULL && errno != EINVAL && errno != EOPNOTSUPP && errno != ENOMEM)
		die("ibv_create_flow: errno %d", errno);
	free(attr);
	flen = fuzz_bytes(&in, frame, FRAME_MAX);
	/* a port with no rule is not polled: a frame sent then would wait in the ring for a later
	 * input's rule */
	if (flow != NULL && flen >= 14) {
		bool must = flow != NULL && (a.type == IBV_FLOW_ATTR_SNIFFER ||
					     a.type == IBV_FLOW_ATTR_ALL_DEFAULT ||
					     (a.type == IBV_FLOW_ATTR_NORMAL && a.num_of_specs == 0));

		post_rx();
		if (!send_and_receive(frame, (uint32_t)flen) && must)
			die("a %zu-byte frame missed a rule of type %d that takes every frame",
			    flen, a.type);
	}
	if (flow != NULL && ibv_destroy_flow(flow) != 0)
		die("ibv_destroy_flow failed");
	return 0;
}

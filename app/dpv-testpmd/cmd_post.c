/* SPDX-License-Identifier: BSD-3-Clause */
/* post send <qp> hex <bytes>|file <pcap> [signaled] [inline] [ip_csum] [tso <mss>] [pad <n>]
 *           [lkey <v>] [length <n>]
 * posts one WR per frame (a list, for a pcap file) with one ibv_post_send call and prints
 * what verbs answers: the errno and bad_wr of the post, then the completions that arrive
 * (status, opcode, byte_len). lkey and length override the SGE, to try the execution errors. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmdline_parse_num.h>
#include <cmdline_parse_string.h>

#include "testpmd.h"

#define POST_MAX_WR 256

struct post_opts {
	unsigned int flags;
	uint16_t mss;
	uint32_t pad;
	bool lkey_set, length_set;
	uint32_t lkey, length;
};

struct post_list {
	struct tp_qp *q;
	struct tp_port *pt;
	uint8_t *area;
	uint32_t off;
	int n;
	struct ibv_send_wr wr[POST_MAX_WR];
	struct ibv_sge sge[POST_MAX_WR];
	const struct post_opts *o;
};

/* The post area of a port is reused once none of its QPs has a send in flight. */
static bool port_sends_idle(int port)
{
	for (int i = 0; i < TP_MAX_QPS; i++) {
		struct dpv_qp_counters c;

		if (tp.qp[i].used && tp.qp[i].port == port &&
		    (dpv_query_qp_counters(tp.qp[i].qp, &c) != 0 || c.sq_unsent || c.sq_in_flight))
			return false;
	}
	return true;
}

static int add_frame(const uint8_t *f, uint32_t len, void *arg)
{
	struct post_list *l = arg;
	const struct post_opts *o = l->o;
	uint32_t total = len > o->pad ? len : o->pad;
	uint8_t *at = l->area + l->off;
	struct ibv_send_wr *wr = &l->wr[l->n];
	uint32_t hdr = 0;

	if (l->n == POST_MAX_WR || l->off + total > TP_POST_AREA)
		return tp_error("post send takes at most %d frames, %u bytes in all; this list is "
				"longer", POST_MAX_WR, TP_POST_AREA);
	memcpy(at, f, len);
	memset(at + len, 0, total - len);
	l->off += (total + 63) & ~63u;
	*wr = (struct ibv_send_wr){ .wr_id = l->q->next_wr_id++, .sg_list = &l->sge[l->n],
				    .num_sge = 1, .opcode = IBV_WR_SEND, .send_flags = o->flags };
	if (o->mss) {
		hdr = tcp_headers_len(at, total);
		if (hdr == 0)           /* no TCP frame: verbs decides what that is */
			hdr = total < 512 ? total : 14;
		wr->opcode = IBV_WR_TSO;
		wr->tso.hdr = at;
		wr->tso.hdr_sz = (uint16_t)hdr;
		wr->tso.mss = o->mss;
	}
	l->sge[l->n] = (struct ibv_sge){ (uintptr_t)at + hdr, total - hdr, l->pt->mr->lkey };
	if (o->lkey_set)
		l->sge[l->n].lkey = o->lkey;
	if (o->length_set)
		l->sge[l->n].length = o->length;
	if (l->n > 0)
		l->wr[l->n - 1].next = wr;
	l->n++;
	return 0;
}

static int opts_parse(char *words, struct post_opts *o)
{
	char *save = NULL, *w;

	for (w = strtok_r(words, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		char *v = NULL, *end = NULL;
		unsigned long n = 0;

		if (strcmp(w, "signaled") == 0) {
			o->flags |= IBV_SEND_SIGNALED;
			continue;
		}
		if (strcmp(w, "inline") == 0 || strcmp(w, "ip_csum") == 0) {
			o->flags |= w[0] == 'i' && w[1] == 'n' ? IBV_SEND_INLINE : IBV_SEND_IP_CSUM;
			continue;
		}
		v = strtok_r(NULL, " \t", &save);
		if (v != NULL)
			n = strtoul(v, &end, 0);
		if (v == NULL || end == v || *end != '\0' || n > UINT32_MAX)
			return tp_error("post send: '%s' is no option, or lacks its number: signaled, "
					"inline, ip_csum, tso <mss>, pad <bytes>, lkey <key>, "
					"length <bytes>", w);
		if (strcmp(w, "tso") == 0 && n > 0 && n <= 65535)
			o->mss = (uint16_t)n;
		else if (strcmp(w, "pad") == 0 && n <= TP_POST_AREA)
			o->pad = (uint32_t)n;
		else if (strcmp(w, "lkey") == 0)
			o->lkey_set = true, o->lkey = (uint32_t)n;
		else if (strcmp(w, "length") == 0)
			o->length_set = true, o->length = (uint32_t)n;
		else
			return tp_error("post send: %s %s is out of range (tso 1..65535, pad up to "
					"%u)", w, v, TP_POST_AREA);
	}
	return 0;
}

#define RECV_WR_ID (1ull << 63)     /* wr_id of post recv's WQEs: RECV_WR_ID | sequence */

static void print_wc(const struct tp_qp *q, const struct ibv_wc *wc)
{
	bool recv = wc->wr_id & RECV_WR_ID;

	printf("completion: %swr_id %llu status %s (%s)", recv ? "recv " : "",
	       (unsigned long long)(wc->wr_id & ~RECV_WR_ID), wc_status_name(wc->status),
	       ibv_wc_status_str(wc->status));
	if (wc->status == IBV_WC_SUCCESS)
		printf(" opcode %s byte_len %u%s", wc_opcode_name(wc->opcode), wc->byte_len,
		       wc->wc_flags & IBV_WC_IP_CSUM_OK ? " IP_CSUM_OK" : "");
	printf(" qp_num 0x%x\n", wc->qp_num);
	if (recv && wc->status == IBV_WC_SUCCESS) {
		const uint8_t *f = q->rbuf + ((wc->wr_id & ~RECV_WR_ID) % q->rq_depth) * q->rslot_size;

		printf("  frame: ");
		for (uint32_t i = 0; i < wc->byte_len && i < 34; i++)
			printf("%s%02x", i == 6 || i == 12 || i == 14 ? " " : "", f[i]);
		printf("%s\n", wc->byte_len > 34 ? " ..." : "");
	}
}

/* Completions of what was posted: the signaled WRs, and error completions. */
static void collect(struct tp_qp *q, int expected)
{
	struct timespec t0, t;
	struct ibv_wc wc[16];
	int got = 0;
	double limit = expected ? 1.0 : 0.05, dt = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (dt < limit && (expected == 0 || got < expected)) {
		int n = ibv_poll_cq(q->cq, 16, wc);

		for (int i = 0; i < n; i++) {
			print_wc(q, &wc[i]);
			got += !(wc[i].wr_id & RECV_WR_ID);
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		dt = (double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) * 1e-9;
	}
	if (got < expected)
		printf("no completion for %d signaled WR(s) within 1 s (show qp %d)\n",
		       expected - got, (int)(q - tp.qp));
	else if (got == 0)
		printf("no completion (no WR was signaled, and none failed)\n");
}

static void post_list(struct post_list *l, unsigned int id)
{
	struct ibv_send_wr *bad = NULL;
	int rc = ibv_post_send(l->q->qp, l->wr, &bad), posted = l->n, signaled = 0;

	if (rc != 0) {
		posted = bad ? (int)(bad - l->wr) : 0;
		printf("ibv_post_send: %s (%s); bad_wr: WR %d (wr_id %llu); %d WR(s) before it "
		       "posted\n", errno_name(rc), strerror(rc), posted,
		       bad ? (unsigned long long)bad->wr_id : 0ULL, posted);
	} else {
		printf("posted %d WR(s) on QP %u\n", posted, id);
	}
	for (int i = 0; i < posted; i++)
		signaled += (l->wr[i].send_flags & IBV_SEND_SIGNALED) != 0;
	if (posted > 0)
		collect(l->q, signaled);
}

struct post_res {
	cmdline_fixed_string_t post, send;
	uint16_t qp;
	cmdline_fixed_string_t src;
	cmdline_multi_string_t rest;
};

static void post_parsed(void *res, struct cmdline *cl, void *data)
{
	static struct post_list l;
	struct post_res *r = res;
	struct post_opts o = { 0 };
	char *save = NULL, *what = strtok_r(r->rest, " \t", &save);
	uint8_t frame[4096];
	int len;

	memset(&l, 0, sizeof(l));
	l.q = qp_get(r->qp);
	if (l.q == NULL || (l.pt = port_get((unsigned int)l.q->port)) == NULL)
		return;
	if (what == NULL || opts_parse(save, &o) != 0) {
		if (what == NULL)
			tp_error("post send %u %s needs %s", r->qp, r->src,
				 r->src[0] == 'h' ? "hex bytes, e.g. ffffffffffff0200000000010800..."
						  : "a pcap file name");
		return;
	}
	l.o = &o;
	l.area = port_area((unsigned int)l.q->port) + TP_RX_SLOTS * TP_SLOT_SIZE + TP_TX_AREA;
	if (port_sends_idle(l.q->port))
		l.pt->post_off = 0;
	l.off = l.pt->post_off;
	if (strcmp(r->src, "hex") == 0) {
		len = hex_parse(what, frame, sizeof(frame));
		if (len < 0) {
			tp_error("post send: '%s' is no hex frame (pairs of hex digits, ':' allowed, "
				 "at most %zu bytes; pad <n> makes it longer)", what, sizeof(frame));
			return;
		}
		if (add_frame(frame, (uint32_t)len, &l) != 0)
			return;
	} else if (pcap_each(what, add_frame, &l) <= 0) {
		if (l.n == 0)
			tp_error("post send: no frame in %s", what);
		return;
	}
	l.pt->post_off = l.off;
	post_list(&l, r->qp);
}

static cmdline_parse_token_string_t t_post = TOKEN_STRING_INITIALIZER(struct post_res, post, "post");
static cmdline_parse_token_string_t t_send = TOKEN_STRING_INITIALIZER(struct post_res, send, "send");
static cmdline_parse_token_num_t t_qp = TOKEN_NUM_INITIALIZER(struct post_res, qp, RTE_UINT16);
static cmdline_parse_token_string_t t_src = TOKEN_STRING_INITIALIZER(struct post_res, src, "hex#file");
static cmdline_parse_token_string_t t_rest = TOKEN_STRING_INITIALIZER(struct post_res, rest, TOKEN_STRING_MULTI);

static cmdline_parse_inst_t cmd_post = {
	.f = post_parsed,
	.help_str = "post send <qp> hex <bytes>|file <pcap> [signaled] [inline] [ip_csum] "
		    "[tso <mss>] [pad <n>] [lkey <key>] [length <n>]: one WR per frame, then the "
		    "errno of ibv_post_send and the completions",
	.tokens = { (void *)&t_post, (void *)&t_send, (void *)&t_qp, (void *)&t_src,
		    (void *)&t_rest, NULL },
};

/* ---- post recv <qp> [<n>], poll <qp> ---- */

static int recv_buffers(struct tp_qp *q, struct tp_port *pt)
{
	struct dpv_qp_counters c;

	if (q->rbuf != NULL)
		return 0;
	if (dpv_query_qp_counters(q->qp, &c) != 0 || c.rq_size == 0)
		return tp_error("QP %d has no receive queue: qp create raw %d rq 64",
				(int)(q - tp.qp), q->port);
	q->rq_depth = c.rq_size;
	q->rslot_size = (pt->info.max_frame + 8 + 63) & ~63u;
	q->rbuf = aligned_alloc(4096, (size_t)q->rq_depth * q->rslot_size);
	q->rmr = q->rbuf ? ibv_reg_mr(pt->pd, q->rbuf, (size_t)q->rq_depth * q->rslot_size,
				      IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (q->rmr == NULL) {
		free(q->rbuf);
		q->rbuf = NULL;
		return tp_error("receive buffers for QP %d: %s", (int)(q - tp.qp), strerror(errno));
	}
	return 0;
}

struct recv_res {
	cmdline_fixed_string_t post, recv;
	uint16_t qp, n;
};

static void recv_parsed(void *res, struct cmdline *cl, void *data)
{
	struct recv_res *r = res;
	struct tp_qp *q = qp_get(r->qp);
	struct tp_port *pt = q ? port_get((unsigned int)q->port) : NULL;
	struct dpv_qp_counters c;
	uint32_t n;
	int rc = 0, posted = 0;

	if (pt == NULL || recv_buffers(q, pt) != 0 || dpv_query_qp_counters(q->qp, &c) != 0)
		return;
	n = data != NULL ? r->n : c.rq_size - c.rq_posted;
	for (; posted < (int)n && rc == 0; posted++) {
		uint64_t seq = q->next_recv;
		struct ibv_sge sge = { (uintptr_t)q->rbuf + (seq % q->rq_depth) * q->rslot_size,
				       q->rslot_size, q->rmr->lkey };
		struct ibv_recv_wr wr = { .wr_id = RECV_WR_ID | seq, .sg_list = &sge, .num_sge = 1 },
				   *bad;

		rc = ibv_post_recv(q->qp, &wr, &bad);
		if (rc == 0)
			q->next_recv++;
	}
	if (rc != 0)
		printf("ibv_post_recv: %s (%s) after %d WQE(s)\n", errno_name(rc), strerror(rc),
		       posted - 1);
	else
		printf("posted %d receive WQE(s) of %u bytes on QP %u\n", posted, q->rslot_size,
		       r->qp);
}

static cmdline_parse_token_string_t t_r_post = TOKEN_STRING_INITIALIZER(struct recv_res, post, "post");
static cmdline_parse_token_string_t t_r_recv = TOKEN_STRING_INITIALIZER(struct recv_res, recv, "recv");
static cmdline_parse_token_num_t t_r_qp = TOKEN_NUM_INITIALIZER(struct recv_res, qp, RTE_UINT16);
static cmdline_parse_token_num_t t_r_n = TOKEN_NUM_INITIALIZER(struct recv_res, n, RTE_UINT16);

static cmdline_parse_inst_t cmd_recv = {
	.f = recv_parsed,
	.help_str = "post recv <qp>: fill the QP's receive queue with WQEs (buffers of the "
		    "port's largest frame)",
	.tokens = { (void *)&t_r_post, (void *)&t_r_recv, (void *)&t_r_qp, NULL },
};

static cmdline_parse_inst_t cmd_recv_n = {
	.f = recv_parsed,
	.data = (void *)1,
	.help_str = "post recv <qp> <n>: post <n> receive WQEs",
	.tokens = { (void *)&t_r_post, (void *)&t_r_recv, (void *)&t_r_qp, (void *)&t_r_n, NULL },
};

struct poll_res {
	cmdline_fixed_string_t poll;
	uint16_t qp;
};

static void poll_parsed(void *res, struct cmdline *cl, void *data)
{
	struct poll_res *r = res;
	struct tp_qp *q = qp_get(r->qp);
	struct ibv_wc wc[16];
	int n, total = 0;

	if (q == NULL)
		return;
	/* polling drives the port's receive side: a few rounds let frames arrive */
	for (int round = 0; round < 100; round++) {
		n = ibv_poll_cq(q->cq, 16, wc);
		for (int i = 0; i < n; i++)
			print_wc(q, &wc[i]);
		total += n > 0 ? n : 0;
		if (n <= 0 && round > 10)
			break;
		if (n <= 0)
			usleep(1000);
	}
	if (total == 0)
		printf("no completion on CQ %u\n", r->qp);
}

static cmdline_parse_token_string_t t_poll = TOKEN_STRING_INITIALIZER(struct poll_res, poll, "poll");
static cmdline_parse_token_num_t t_poll_qp = TOKEN_NUM_INITIALIZER(struct poll_res, qp, RTE_UINT16);

static cmdline_parse_inst_t cmd_poll = {
	.f = poll_parsed,
	.help_str = "poll <qp>: the completions waiting on the QP's CQ (receive completions with "
		    "the frame's first bytes)",
	.tokens = { (void *)&t_poll, (void *)&t_poll_qp, NULL },
};

cmdline_parse_inst_t *cmds_post[] = { &cmd_post, &cmd_recv, &cmd_recv_n, &cmd_poll, NULL };

/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer harness: ibv_post_send with arbitrary WR lists (opcodes, flags, num_sge, lengths,
 * lkeys, addresses, TSO headers, inline data, cycles in next) on a net_pcap port.
 *
 * What must hold for every input:
 * - the post returns 0 or an errno of the contract, and *bad_wr is a WR of the list;
 * - every WR posted gets exactly one completion (the QP signals all), in post order, and no
 *   other; after an error completion every later one is a flush;
 * - each successful SEND is one frame on the wire and each successful TSO WR as many frames as
 *   its payload has segments;
 * - no byte of non-inline SGE data from outside a registered MR reaches the wire. All memory
 *   an SGE can name that is not inside a registered MR (the gaps around the MRs and an MR that
 *   was deregistered) holds the sentinel byte SENTINEL; MR contents, inline data and TSO
 *   headers never contain it. The captured frames are scanned for it everywhere except the
 *   header fields the contract lets dpverbs compute (IPv4 length, ID and checksum, IPv6
 *   payload length, TCP sequence, flags and checksum, UDP checksum).
 * A violation aborts, which libFuzzer reports with the input that caused it. */
#include <fcntl.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <dpverbs.h>

#include "dpv_offload.h"
#include "fuzz_input.h"

#define SENTINEL 0xe7
#define ARENA_LEN (256 * 1024)
#define MR_A_OFF (64 * 1024)
#define MR_A_LEN (32 * 1024 + 123)          /* ends inside a page: the rest is sentinel */
#define MR_B_OFF (128 * 1024)               /* zero-based (iova 0) */
#define MR_B_LEN (40 * 1024 + 45)
#define DEAD_OFF (192 * 1024)               /* registered, then deregistered */
#define DEAD_LEN (16 * 1024)
#define MAX_WR 8
#define MAX_SGE 6
#define SQ_DEPTH 32                         /* asked for; the QP may give more */
#define MAX_POSTED 1024
#define MAX_INLINE 256
#define MAX_TSO_HDR 128

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qp;
static uint8_t *arena;
static struct ibv_mr *mr_a, *mr_b;
static uint32_t dead_lkey;
static char pcap_path[128];
static int pcap_fd = -1;
static off_t pcap_off;                       /* what was scanned already */
static uint32_t sq_depth;                    /* max_send_wr as the QP reports it */

static void die(const char *what, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *what, ...)
{
	va_list ap;

	va_start(ap, what);
	fprintf(stderr, "fuzz_post_send: ");
	vfprintf(stderr, what, ap);
	fputc('\n', stderr);
	va_end(ap);
	abort();
}

static uint8_t no_sentinel(uint8_t b)
{
	return b == SENTINEL ? (uint8_t)(b + 1) : b;
}

/* At exit: every object destroyed (LeakSanitizer then sees what dpverbs would leak), the
 * capture removed. */
static void cleanup(void)
{
	if (qp != NULL && ibv_destroy_qp(qp) != 0)
		fprintf(stderr, "fuzz_post_send: ibv_destroy_qp: %s\n", strerror(errno));
	if (mr_a != NULL)
		ibv_dereg_mr(mr_a);
	if (mr_b != NULL)
		ibv_dereg_mr(mr_b);
	if (cq != NULL)
		ibv_destroy_cq(cq);
	if (pd != NULL)
		ibv_dealloc_pd(pd);
	if (ctx != NULL)
		ibv_close_device(ctx);
	unlink(pcap_path);
}

static struct ibv_qp *new_qp(void)
{
	struct ibv_qp_init_attr_ex ex = {
		.qp_type = IBV_QPT_RAW_PACKET, .sq_sig_all = 1, .pd = pd,
		.send_cq = cq, .recv_cq = cq,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_MAX_TSO_HEADER,
		.max_tso_header = MAX_TSO_HDR,
		.cap = { .max_send_wr = SQ_DEPTH, .max_send_sge = 4,
			 .max_inline_data = MAX_INLINE } };

	return ibv_create_qp_ex(ctx, &ex);
}

static int qp_to(enum ibv_qp_state state)
{
	struct ibv_qp_attr a = { .qp_state = state, .port_num = 1 };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | (state == IBV_QPS_INIT ? IBV_QP_PORT : 0));
}

static void qp_to_rts(void)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia) != 0)
		die("ibv_query_qp failed");
	if (a.qp_state == IBV_QPS_RTS)
		return;
	if (a.qp_state == IBV_QPS_SQE && qp_to(IBV_QPS_RTS) == 0)
		return;
	if (qp_to(IBV_QPS_RESET) || qp_to(IBV_QPS_INIT) || qp_to(IBV_QPS_RTR) ||
	    qp_to(IBV_QPS_RTS))
		die("QP does not come back to RTS from state %d", a.qp_state);
}

/* Headers a fuzzer finds slowly: Ethernet/IPv4/TCP and Ethernet/VLAN/IPv6/TCP. */
static size_t template_hdr(uint8_t *h, unsigned int which)
{
	static const uint8_t v4[54] = {
		2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00,
		0x45, 0, 0, 40, 0x12, 0x34, 0x40, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
		0x30, 0x39, 0, 80, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0 };
	static const uint8_t v6[78] = {
		2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x81, 0x00, 0, 5, 0x86, 0xdd,
		0x60, 0, 0, 0, 0, 20, 6, 64, 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
		0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2,
		0x30, 0x39, 0, 80, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x19, 0xff, 0xff, 0, 0, 0, 0 };

	if (which & 1) {
		memcpy(h, v6, sizeof(v6));
		return sizeof(v6);
	}
	memcpy(h, v4, sizeof(v4));
	return sizeof(v4);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char args[512];
	struct ibv_device **list;
	struct ibv_mr *dead;
	int n = 0;

	snprintf(pcap_path, sizeof(pcap_path), "%s/dpv-fuzz-%d.pcap",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
	snprintf(args, sizeof(args), "--vdev=net_pcap0,tx_pcap=%s --log-level=lib.eal:error "
		 "--log-level=lib.telemetry:error %s", pcap_path,
		 getenv("DPV_EAL_EXTRA") ? getenv("DPV_EAL_EXTRA") : "");
	setenv("DPV_EAL_ARGS", args, 1);
	list = ibv_get_device_list(&n);
	if (list == NULL || n < 1 || (ctx = ibv_open_device(list[0])) == NULL)
		die("no net_pcap device: %s", strerror(errno));
	ibv_free_device_list(list);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, MAX_POSTED, NULL, NULL, 0);
	arena = mmap(NULL, ARENA_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pd == NULL || cq == NULL || arena == MAP_FAILED)
		die("setup: %s", strerror(errno));
	memset(arena, SENTINEL, ARENA_LEN);
	for (size_t i = 0; i < MR_A_LEN; i++)
		arena[MR_A_OFF + i] = no_sentinel((uint8_t)(i * 31 + 7));
	for (size_t i = 0; i < MR_B_LEN; i++)
		arena[MR_B_OFF + i] = no_sentinel((uint8_t)(i * 17 + 3));
	/* frames a seed can point at whole: Ethernet/IPv4/UDP at 0, Ethernet/IPv6/TCP at 1024 */
	template_hdr(arena + MR_A_OFF + 1024, 1);
	memcpy(arena + MR_A_OFF, "\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x08\0"
	       "\x45\0\x01\0\0\x01\0\0\x40\x11\0\0\x0a\0\0\x01\x0a\0\0\x02"
	       "\x04\xd2\x10\xe1\0\xec\0\0", 42);
	dead = ibv_reg_mr(pd, arena + DEAD_OFF, DEAD_LEN, 0);
	mr_a = ibv_reg_mr(pd, arena + MR_A_OFF, MR_A_LEN, 0);
	mr_b = ibv_reg_mr_iova(pd, arena + MR_B_OFF, MR_B_LEN, 0, 0);
	if (dead == NULL || mr_a == NULL || mr_b == NULL)
		die("ibv_reg_mr: %s", strerror(errno));
	dead_lkey = dead->lkey;
	if (ibv_dereg_mr(dead) != 0)
		die("ibv_dereg_mr");
	qp = new_qp();
	if (qp == NULL)
		die("ibv_create_qp_ex: %s", strerror(errno));
	{
		struct ibv_qp_attr a;
		struct ibv_qp_init_attr ia;

		if (ibv_query_qp(qp, &a, IBV_QP_CAP, &ia) != 0 || a.cap.max_send_wr > MAX_POSTED)
			die("max_send_wr %u", a.cap.max_send_wr);
		sq_depth = a.cap.max_send_wr;
	}
	qp_to_rts();
	pcap_fd = open(pcap_path, O_RDONLY);
	if (pcap_fd < 0)
		die("%s: %s", pcap_path, strerror(errno));
	pcap_off = 24;                            /* the file header */
	atexit(cleanup);                          /* after dpverbs' own exit handler: runs first */
	return 0;
}

/* Where an SGE points: into an MR, exactly at or a few bytes across one of its ends, into the
 * dead MR, zero-based, or anywhere in the arena with any lkey. */
static void make_sge(struct fuzz_input *in, struct ibv_sge *s)
{
	uint8_t how = fuzz_u8(in);
	uint32_t off = fuzz_u32(in) % ARENA_LEN;
	uint32_t back = off % 2048;                       /* bytes before an MR's end */
	int32_t over = (int32_t)(how >> 4 & 7) - 4;       /* -4 .. 3 bytes past it */

	s->length = (how & 0x80) ? fuzz_u32(in) : fuzz_u16(in) % 4096;
	switch (how & 7) {
	case 0:                          /* inside MR A, maybe running past its end */
		s->addr = (uintptr_t)arena + MR_A_OFF + off % MR_A_LEN;
		s->lkey = mr_a->lkey;
		break;
	case 1:                          /* ending at MR A's end, or a few bytes off it */
		s->addr = (uintptr_t)arena + MR_A_OFF + MR_A_LEN - back;
		s->length = back + over;
		s->lkey = mr_a->lkey;
		break;
	case 2:                          /* MR B by its zero-based iova */
		s->addr = off % (MR_B_LEN + 64);
		s->lkey = mr_b->lkey;
		break;
	case 3:                          /* ending at MR B's iova end, or a few bytes off it */
		s->addr = MR_B_LEN - back;
		s->length = back + over;
		s->lkey = mr_b->lkey;
		break;
	case 4:                          /* the freed MR's lkey */
		s->addr = (uintptr_t)arena + DEAD_OFF + off % DEAD_LEN;
		s->lkey = dead_lkey;
		break;
	case 5:                          /* starting a few bytes before MR A */
		s->addr = (uintptr_t)arena + MR_A_OFF - (how >> 4 & 3);
		s->lkey = mr_a->lkey;
		break;
	case 6:                          /* anywhere in the arena, any lkey */
		s->addr = (uintptr_t)arena + off;
		s->lkey = fuzz_u32(in);
		break;
	default:                         /* anywhere in the arena (MR B by address), a real lkey */
		s->addr = (uintptr_t)arena + (fuzz_u32(in) % ARENA_LEN);
		s->lkey = (how & 8) ? mr_b->lkey : mr_a->lkey;
		break;
	}
}

struct wr_set {
	struct ibv_send_wr wr[MAX_WR];
	struct ibv_sge sge[MAX_WR][MAX_SGE];
	uint8_t inl[MAX_WR][2 * MAX_INLINE];  /* inline data, never the sentinel */
	uint8_t hdr[MAX_WR][2 * MAX_TSO_HDR];
};

static void make_wr(struct fuzz_input *in, struct wr_set *s, int i, int nwr)
{
	struct ibv_send_wr *wr = &s->wr[i];
	uint8_t kind = fuzz_u8(in), next = fuzz_u8(in);

	memset(wr, 0, sizeof(*wr));
	wr->wr_id = 1000 + i;
	wr->opcode = (kind & 0xc0) == 0xc0 ? (enum ibv_wr_opcode)fuzz_u8(in) :
		     (kind & 1) ? IBV_WR_TSO : IBV_WR_SEND;
	wr->send_flags = (kind & 0x20) ? fuzz_u32(in) : fuzz_u8(in) & 0x1f;
	wr->num_sge = (kind & 0x10) ? (int8_t)fuzz_u8(in) : fuzz_u8(in) % 5;
	for (int k = 0; k < MAX_SGE; k++)
		make_sge(in, &s->sge[i][k]);
	wr->sg_list = (kind & 0x08) && wr->num_sge == 0 ? NULL : s->sge[i];
	if (wr->send_flags & IBV_SEND_INLINE) {
		for (int k = 0; k < MAX_SGE; k++) {
			uint32_t len = s->sge[i][k].length % (MAX_INLINE + 32);

			s->sge[i][k].addr = (uintptr_t)s->inl[i] + k * 16 % MAX_INLINE;
			s->sge[i][k].length = len > MAX_INLINE ? MAX_INLINE : len;
		}
		for (size_t k = 0; k < sizeof(s->inl[i]); k++)
			s->inl[i][k] = no_sentinel(fuzz_u8(in));
	}
	if (wr->opcode == IBV_WR_TSO) {
		size_t len = template_hdr(s->hdr[i], kind >> 1);

		for (int m = fuzz_u8(in) % 4; m > 0; m--)    /* a few mutations of the template */
			s->hdr[i][fuzz_u8(in) % sizeof(s->hdr[i])] = fuzz_u8(in);
		for (size_t k = 0; k < sizeof(s->hdr[i]); k++)
			s->hdr[i][k] = no_sentinel(s->hdr[i][k]);
		wr->tso.hdr = (kind & 0x04) && (kind & 0x02) ? NULL : s->hdr[i];
		wr->tso.hdr_sz = (kind & 0x04) ? fuzz_u16(in) % (MAX_TSO_HDR + 64) : len;
		wr->tso.mss = (fuzz_u8(in) & 1) ? fuzz_u16(in) : 1 + fuzz_u16(in) % 1500;
	}
	wr->next = next < 0x30 ? NULL : &s->wr[next % nwr];
	if (next >= 0x80)
		wr->next = i + 1 < nwr ? &s->wr[i + 1] : NULL;    /* mostly a plain chain */
}

/* The WRs the post took, in order. The SQ is empty before the post and every WR takes a slot,
 * so ENOMEM (SQ full) means exactly max_send_wr WRs went in; otherwise the walk ends at the
 * first visit of *bad_wr (a WR that fails a check fails it on its first visit; a cyclic list
 * cannot end without a failure). */
static int walk_posted(struct ibv_send_wr *head, struct ibv_send_wr *bad, int rc,
		       struct ibv_send_wr **posted)
{
	int n = 0;
	struct ibv_send_wr *w = head;

	for (; w != NULL && (rc == ENOMEM ? n < (int)sq_depth : w != bad); w = w->next) {
		if (n == (int)sq_depth)
			die("more than max_send_wr WRs posted in one call");
		posted[n++] = w;
	}
	if (rc == ENOMEM && w != bad)
		die("ENOMEM with %d WRs in the SQ: bad_wr is not the first WR after them", n);
	return n;
}

static uint32_t tso_payload(const struct ibv_send_wr *wr)
{
	uint32_t len = 0;

	for (int k = 0; k < wr->num_sge; k++)
		len += wr->sg_list[k].length;
	return len;
}

/* Every posted WR completes exactly once, in order; frames that must be on the wire. */
static uint64_t reap(struct ibv_send_wr **posted, int n)
{
	static struct ibv_wc wc[MAX_POSTED + 1];
	uint64_t frames = 0;
	bool failed = false;
	int got = 0;

	for (long tries = 0; got < n; tries++) {
		int r = ibv_poll_cq(cq, n - got, wc + got);

		if (r < 0 || tries > 10000000)
			die("%d of %d completions after %ld polls", got, n, tries);
		got += r;
	}
	if (ibv_poll_cq(cq, 1, wc + n) != 0)
		die("a completion nobody posted: wr_id %" PRIu64 " %s after %d expected",
		    wc[n].wr_id, ibv_wc_status_str(wc[n].status), n);
	for (int i = 0; i < n; i++) {
		if (wc[i].wr_id != posted[i]->wr_id || wc[i].qp_num != qp->qp_num)
			die("completion %d: wr_id %" PRIu64 ", expected %" PRIu64, i,
			    wc[i].wr_id, posted[i]->wr_id);
		if (failed && wc[i].status != IBV_WC_WR_FLUSH_ERR)
			die("completion %d after an error: %s", i, ibv_wc_status_str(wc[i].status));
		if (wc[i].status != IBV_WC_SUCCESS) {
			failed = true;
			continue;
		}
		frames += posted[i]->opcode == IBV_WR_TSO ?
			  dpv__tso_segments(tso_payload(posted[i]), posted[i]->tso.mss) : 1;
	}
	return frames;
}

static void mark(bool *computed, size_t len, size_t off, size_t n)
{
	for (size_t i = off; i < off + n && i < len; i++)
		computed[i] = true;
}

/* No sentinel byte outside the fields dpverbs may compute. */
static void scan_frame(const uint8_t *f, size_t len)
{
	static bool computed[65536];
	struct dpv_hdr_info info = { 0 };
	size_t l3 = 0, l4;

	memset(computed, 0, len);
	dpv__hdr_parse(f, len, &info);
	l3 = info.l2_len;
	l4 = l3 + info.l3_len;
	if (info.l3 == DPV_L3_IPV4) {
		mark(computed, len, l3 + 2, 4);            /* total length, ID */
		mark(computed, len, l3 + 10, 2);           /* header checksum */
	} else if (info.l3 == DPV_L3_IPV6) {
		mark(computed, len, l3 + 4, 2);            /* payload length */
	}
	if (info.l3 != DPV_L3_NONE && info.l4_proto == 6) {
		mark(computed, len, l4 + 4, 4);            /* sequence */
		mark(computed, len, l4 + 13, 1);           /* flags */
		mark(computed, len, l4 + 16, 2);           /* checksum */
	} else if (info.l3 != DPV_L3_NONE && info.l4_proto == 17) {
		mark(computed, len, l4 + 6, 2);            /* checksum */
	}
	for (size_t i = 0; i < len; i++)
		if (f[i] == SENTINEL && !computed[i])
			die("byte %zu of a %zu-byte frame on the wire is from outside every MR",
			    i, len);
}

/* Read the frames written since the last call, scan them, and give their disk space back. */
static uint64_t scan_new_frames(void)
{
	static uint8_t frame[65536 + 16];
	uint64_t frames = 0;

	for (;;) {
		uint32_t rec[4];

		if (pread(pcap_fd, rec, sizeof(rec), pcap_off) != sizeof(rec))
			break;
		if (rec[2] > 65536 || pread(pcap_fd, frame, rec[2], pcap_off + 16) != rec[2])
			break;
		scan_frame(frame, rec[2]);
		pcap_off += 16 + rec[2];
		frames++;
	}
	if (pcap_off > (1 << 24))
		fallocate(pcap_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
			  pcap_off & ~(off_t)4095);
	return frames;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in = { data, size };
	static struct wr_set s;
	static struct ibv_send_wr *posted[MAX_POSTED];
	struct ibv_send_wr *bad = NULL;
	int nwr = 1 + fuzz_u8(&in) % MAX_WR, rc, n;
	uint64_t want, got;

	for (int i = 0; i < nwr; i++)
		make_wr(&in, &s, i, nwr);
	rc = ibv_post_send(qp, &s.wr[0], &bad);
	if (rc != 0 && rc != EINVAL && rc != ENOMEM)
		die("ibv_post_send returned %d", rc);
	if ((rc == 0) != (bad == NULL))
		die("ibv_post_send returned %d with bad_wr %p", rc, (void *)bad);
	if (bad != NULL && (bad < s.wr || bad >= s.wr + nwr))
		die("bad_wr is not a WR of the list");
	n = walk_posted(&s.wr[0], bad, rc, posted);
	want = reap(posted, n);
	got = scan_new_frames();
	if (got != want)
		die("%" PRIu64 " frames on the wire, %" PRIu64 " expected", got, want);
	qp_to_rts();
	return 0;
}

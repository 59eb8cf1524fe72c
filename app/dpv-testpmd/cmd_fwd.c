/* SPDX-License-Identifier: BSD-3-Clause */
/* Forwarding configuration and control: set fwd|txpkts|burst|txflags|verbose, tso set,
 * csum set, start [count <n>], wait [<seconds>], stop. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cmdline_parse_num.h>
#include <cmdline_parse_string.h>

#include "testpmd.h"

/* ---- set fwd <mode> ---- */

struct set_fwd_res {
	cmdline_fixed_string_t set, fwd, mode;
};

static void set_fwd_parsed(void *res, struct cmdline *cl, void *data)
{
	struct set_fwd_res *r = res;
	const struct fwd_engine *e = fwd_engine_find(r->mode);

	if (fwd_refuse("set fwd"))
		return;
	if (e == NULL) {   /* the token admits only the engines' names */
		tp_error("no forwarding engine %s", r->mode);
		return;
	}
	tp.cfg.engine = e;
	printf("forwarding mode: %s\n", fwd_mode_name());
}

static cmdline_parse_token_string_t t_set = TOKEN_STRING_INITIALIZER(struct set_fwd_res, set, "set");
static cmdline_parse_token_string_t t_fwd = TOKEN_STRING_INITIALIZER(struct set_fwd_res, fwd, "fwd");
static cmdline_parse_token_string_t t_mode = TOKEN_STRING_INITIALIZER(struct set_fwd_res, mode, "txonly#rxonly#io#mac#csum#tso");

static cmdline_parse_inst_t cmd_set_fwd = {
	.f = set_fwd_parsed,
	.help_str = "set fwd txonly|rxonly|io|mac|csum|tso: the forwarding engine (every one posts "
		    "through a RAW_PACKET QP per port)",
	.tokens = { (void *)&t_set, (void *)&t_fwd, (void *)&t_mode, NULL },
};

/* ---- set txpkts|burst|verbose <value> ---- */

struct set_val_res {
	cmdline_fixed_string_t set, what, value;
};

static int parse_u32(const char *s, unsigned long max, uint32_t *out)
{
	char *end;
	unsigned long v = strtoul(s, &end, 0);

	if (end == s || *end != '\0' || v > max)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

static void set_txpkts(const char *list)
{
	uint16_t len[TP_MAX_TXSEGS];
	char buf[128], *save = NULL, *tok;
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		uint32_t v;

		if (n == TP_MAX_TXSEGS || parse_u32(tok, 65535, &v) != 0 || v == 0) {
			tp_error("set txpkts takes 1 to %d lengths of 1..65535 bytes separated by "
				 "commas, e.g. set txpkts 64 or set txpkts 14,50", TP_MAX_TXSEGS);
			return;
		}
		len[n++] = (uint16_t)v;
	}
	memcpy(tp.cfg.txpkts, len, sizeof(len));
	tp.cfg.nb_txpkts = n;
	printf("txpkts: %d segment(s), %u bytes\n", n, fwd_frame_len());
}

static void set_val_parsed(void *res, struct cmdline *cl, void *data)
{
	struct set_val_res *r = res;
	uint32_t v;

	if (strcmp(r->what, "verbose") == 0) {
		if (parse_u32(r->value, 2, &v) != 0) {
			tp_error("set verbose takes 0 (quiet), 1 (each received frame, each error) "
				 "or 2 (each completion too)");
			return;
		}
		tp.cfg.verbose = (int)v;
		printf("verbose: %u\n", v);
		return;
	}
	if (fwd_refuse("set txpkts/burst"))
		return;
	if (strcmp(r->what, "txpkts") == 0) {
		set_txpkts(r->value);
		return;
	}
	if (parse_u32(r->value, 512, &v) != 0 || v == 0) {
		tp_error("set burst takes 1..512 (WRs per ibv_post_send)");
		return;
	}
	tp.cfg.burst = (uint16_t)v;
	printf("burst: %u\n", v);
}

static cmdline_parse_token_string_t t_v_set = TOKEN_STRING_INITIALIZER(struct set_val_res, set, "set");
static cmdline_parse_token_string_t t_v_what = TOKEN_STRING_INITIALIZER(struct set_val_res, what, "txpkts#burst#verbose");
static cmdline_parse_token_string_t t_v_value = TOKEN_STRING_INITIALIZER(struct set_val_res, value, NULL);

static cmdline_parse_inst_t cmd_set_val = {
	.f = set_val_parsed,
	.help_str = "set txpkts <len[,len...]> | set burst <n> | set verbose <0..2>: frame "
		    "segments (one SGE each; the TSO payload in tso mode), WRs per post, logging",
	.tokens = { (void *)&t_v_set, (void *)&t_v_what, (void *)&t_v_value, NULL },
};

/* ---- set txflags [inline] [ip_csum] [signaled-every <n>] | none ---- */

struct set_flags_res {
	cmdline_fixed_string_t set, txflags;
	cmdline_multi_string_t flags;
};

static void set_flags_parsed(void *res, struct cmdline *cl, void *data)
{
	struct set_flags_res *r = res;
	struct fwd_config c = tp.cfg;
	char *save = NULL, *w;

	if (fwd_refuse("set txflags"))
		return;
	c.inline_data = c.ip_csum = false;
	c.signaled_every = 0;
	for (w = strtok_r(r->flags, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		if (strcmp(w, "inline") == 0) {
			c.inline_data = true;
		} else if (strcmp(w, "ip_csum") == 0) {
			c.ip_csum = true;
		} else if (strcmp(w, "signaled-every") == 0) {
			w = strtok_r(NULL, " \t", &save);
			if (w == NULL || parse_u32(w, 65536, &c.signaled_every) != 0 ||
			    c.signaled_every == 0) {
				tp_error("signaled-every takes a number of WRs >= 1");
				return;
			}
		} else if (strcmp(w, "none") != 0) {
			tp_error("unknown txflag '%s': inline, ip_csum, signaled-every <n> or none", w);
			return;
		}
	}
	tp.cfg = c;
	printf("txflags:%s%s", c.inline_data ? " inline" : "", c.ip_csum ? " ip_csum" : "");
	if (c.signaled_every)
		printf(" signaled-every %u\n", c.signaled_every);
	else
		printf(" (signaled: the last WR of each burst)\n");
}

static cmdline_parse_token_string_t t_f_set = TOKEN_STRING_INITIALIZER(struct set_flags_res, set, "set");
static cmdline_parse_token_string_t t_f_txflags = TOKEN_STRING_INITIALIZER(struct set_flags_res, txflags, "txflags");
static cmdline_parse_token_string_t t_f_flags = TOKEN_STRING_INITIALIZER(struct set_flags_res, flags, TOKEN_STRING_MULTI);

static cmdline_parse_inst_t cmd_set_flags = {
	.f = set_flags_parsed,
	.help_str = "set txflags [inline] [ip_csum] [signaled-every <n>] | none: send flags of "
		    "the transmit engines (IBV_SEND_INLINE, IBV_SEND_IP_CSUM, IBV_SEND_SIGNALED)",
	.tokens = { (void *)&t_f_set, (void *)&t_f_txflags, (void *)&t_f_flags, NULL },
};

/* ---- tso set <mss> <port> ---- */

struct tso_res {
	cmdline_fixed_string_t tso, set;
	uint16_t mss, pid;
};

static void tso_parsed(void *res, struct cmdline *cl, void *data)
{
	struct tso_res *r = res;
	struct tp_port *pt = port_get(r->pid);

	if (pt == NULL || fwd_refuse("tso set"))
		return;
	pt->tso_mss = r->mss;
	if (r->mss == 0)
		printf("port %u: TSO off (tso mode refuses to start)\n", r->pid);
	else
		printf("port %u: TSO segment size %u (%s)\n", r->pid, r->mss,
		       pt->info.hw_offloads & DPV_OFFLOAD_TCP_TSO ?
		       "the port segments where it gives the contract's frames" :
		       "segmented by dpverbs in software");
}

static cmdline_parse_token_string_t t_tso = TOKEN_STRING_INITIALIZER(struct tso_res, tso, "tso");
static cmdline_parse_token_string_t t_tso_set = TOKEN_STRING_INITIALIZER(struct tso_res, set, "set");
static cmdline_parse_token_num_t t_tso_mss = TOKEN_NUM_INITIALIZER(struct tso_res, mss, RTE_UINT16);
static cmdline_parse_token_num_t t_tso_pid = TOKEN_NUM_INITIALIZER(struct tso_res, pid, RTE_UINT16);

static cmdline_parse_inst_t cmd_tso = {
	.f = tso_parsed,
	.help_str = "tso set <mss> <port>: the segment size of the tso engine's WRs (0: off)",
	.tokens = { (void *)&t_tso, (void *)&t_tso_set, (void *)&t_tso_mss, (void *)&t_tso_pid,
		    NULL },
};

/* ---- csum set ip|tcp|udp|tso|all hw|sw <port>, csum policy auto|sw|hw <port> ---- */

struct csum_res {
	cmdline_fixed_string_t csum, set, proto, where;
	uint16_t pid;
};

static uint32_t offload_bits(const char *proto)
{
	return strcmp(proto, "ip") == 0 ? DPV_OFFLOAD_IPV4_CKSUM :
	       strcmp(proto, "tcp") == 0 ? DPV_OFFLOAD_TCP_CKSUM :
	       strcmp(proto, "udp") == 0 ? DPV_OFFLOAD_UDP_CKSUM :
	       strcmp(proto, "tso") == 0 ? DPV_OFFLOAD_TCP_TSO :
	       DPV_OFFLOAD_IPV4_CKSUM | DPV_OFFLOAD_TCP_CKSUM | DPV_OFFLOAD_UDP_CKSUM |
	       DPV_OFFLOAD_TCP_TSO;
}

/* hw: the port may do them again (refused where it has not got them); sw: always dpverbs. */
static void csum_parsed(void *res, struct cmdline *cl, void *data)
{
	struct csum_res *r = res;
	struct tp_port *pt = port_get(r->pid);
	uint32_t bits = offload_bits(r->proto), missing, forced;
	bool hw = strcmp(r->where, "hw") == 0;
	int rc;

	if (pt == NULL || fwd_refuse("csum set"))
		return;
	missing = bits & ~pt->info.port_offloads;
	if (hw && missing) {
		tp_error("port %u (%s) has no %s offload: it cannot do it in hardware; use "
			 "csum set %s sw %u (nothing was changed)", r->pid, pt->info.driver,
			 dpv_offload_name(missing & -missing), r->proto, r->pid);
		return;
	}
	forced = hw ? pt->sw_forced & ~bits : pt->sw_forced | bits;
	rc = dpv_set_offload_software(pt->ctx, forced);
	if (rc == 0 && hw && pt->info.policy == DPV_OFFLOAD_POLICY_SOFTWARE)
		rc = dpv_set_offload_policy(pt->ctx, DPV_OFFLOAD_POLICY_AUTO);
	if (rc != 0) {
		tp_error("port %u: choosing where %s runs failed: %s", r->pid, r->proto, strerror(rc));
		return;
	}
	pt->sw_forced = forced;
	dpv_query_port_info(pt->ctx, &pt->info);
	printf("port %u: %s %s\n", r->pid, r->proto, hw ?
	       "in the port where it gives the contract's frames, else in software" :
	       "always in software");
}

static cmdline_parse_token_string_t t_csum = TOKEN_STRING_INITIALIZER(struct csum_res, csum, "csum");
static cmdline_parse_token_string_t t_csum_set = TOKEN_STRING_INITIALIZER(struct csum_res, set, "set");
static cmdline_parse_token_string_t t_csum_proto = TOKEN_STRING_INITIALIZER(struct csum_res, proto, "ip#tcp#udp#tso#all");
static cmdline_parse_token_string_t t_csum_where = TOKEN_STRING_INITIALIZER(struct csum_res, where, "hw#sw");
static cmdline_parse_token_num_t t_csum_pid = TOKEN_NUM_INITIALIZER(struct csum_res, pid, RTE_UINT16);

static cmdline_parse_inst_t cmd_csum = {
	.f = csum_parsed,
	.help_str = "csum set ip|tcp|udp|tso|all hw|sw <port>: where IP_CSUM's IPv4, TCP, UDP "
		    "checksums and TSO run on the port (dpv_set_offload_software)",
	.tokens = { (void *)&t_csum, (void *)&t_csum_set, (void *)&t_csum_proto,
		    (void *)&t_csum_where, (void *)&t_csum_pid, NULL },
};

static void policy_parsed(void *res, struct cmdline *cl, void *data)
{
	struct csum_res *r = res;
	struct tp_port *pt = port_get(r->pid);
	enum dpv_offload_policy pol = strcmp(r->where, "hw") == 0 ? DPV_OFFLOAD_POLICY_HARDWARE :
				      strcmp(r->where, "sw") == 0 ? DPV_OFFLOAD_POLICY_SOFTWARE :
				      DPV_OFFLOAD_POLICY_AUTO;
	int rc;

	if (pt == NULL || fwd_refuse("csum policy"))
		return;
	rc = dpv_set_offload_policy(pt->ctx, pol);
	if (rc != 0) {
		tp_error("dpv_set_offload_policy(port %u): %s", r->pid, strerror(rc));
		return;
	}
	dpv_query_port_info(pt->ctx, &pt->info);
	printf("port %u: offload policy %s\n", r->pid, pol == DPV_OFFLOAD_POLICY_HARDWARE ?
	       "hardware (what the port cannot do fails with EINVAL, as on mlx5)" :
	       pol == DPV_OFFLOAD_POLICY_SOFTWARE ? "software (everything by dpverbs)" :
	       "auto (the port where it gives the contract's frames, else software)");
}

static cmdline_parse_token_string_t t_policy = TOKEN_STRING_INITIALIZER(struct csum_res, set, "policy");
static cmdline_parse_token_string_t t_policy_where = TOKEN_STRING_INITIALIZER(struct csum_res, where, "auto#sw#hw");

static cmdline_parse_inst_t cmd_policy = {
	.f = policy_parsed,
	.help_str = "csum policy auto|sw|hw <port>: the port's offload policy "
		    "(dpv_set_offload_policy)",
	.tokens = { (void *)&t_csum, (void *)&t_policy, (void *)&t_policy_where,
		    (void *)&t_csum_pid, NULL },
};

/* ---- start [count <n>], stop, wait [<seconds>] ---- */

struct start_res {
	cmdline_fixed_string_t start, count;
	uint64_t n;
};

static void start_parsed(void *res, struct cmdline *cl, void *data)
{
	struct start_res *r = res;

	fwd_start(data != NULL ? r->n : 0);
}

static cmdline_parse_token_string_t t_start = TOKEN_STRING_INITIALIZER(struct start_res, start, "start");
static cmdline_parse_token_string_t t_count = TOKEN_STRING_INITIALIZER(struct start_res, count, "count");
static cmdline_parse_token_num_t t_n = TOKEN_NUM_INITIALIZER(struct start_res, n, RTE_UINT64);

static cmdline_parse_inst_t cmd_start = {
	.f = start_parsed,
	.help_str = "start: forward on every started port until stop",
	.tokens = { (void *)&t_start, NULL },
};

static cmdline_parse_inst_t cmd_start_count = {
	.f = start_parsed,
	.data = (void *)1,
	.help_str = "start count <n>: each port posts <n> WRs (txonly, tso) or takes <n> frames "
		    "(the others), then idles until stop (wait blocks until then)",
	.tokens = { (void *)&t_start, (void *)&t_count, (void *)&t_n, NULL },
};

struct word_res {
	cmdline_fixed_string_t word;
	uint16_t seconds;
};

static void stop_parsed(void *res, struct cmdline *cl, void *data)
{
	fwd_stop();
}

static cmdline_parse_token_string_t t_stop = TOKEN_STRING_INITIALIZER(struct word_res, word, "stop");

static cmdline_parse_inst_t cmd_stop = {
	.f = stop_parsed,
	.help_str = "stop: stop forwarding, wait for what is in flight, print each port's totals",
	.tokens = { (void *)&t_stop, NULL },
};

static void wait_parsed(void *res, struct cmdline *cl, void *data)
{
	struct word_res *r = res;

	fwd_wait(data != NULL ? r->seconds : 10);
}

static cmdline_parse_token_string_t t_wait = TOKEN_STRING_INITIALIZER(struct word_res, word, "wait");
static cmdline_parse_token_num_t t_secs = TOKEN_NUM_INITIALIZER(struct word_res, seconds, RTE_UINT16);

static cmdline_parse_inst_t cmd_wait = {
	.f = wait_parsed,
	.help_str = "wait: block until start count <n> is done on every port (at most 10 s)",
	.tokens = { (void *)&t_wait, NULL },
};

static cmdline_parse_inst_t cmd_wait_secs = {
	.f = wait_parsed,
	.data = (void *)1,
	.help_str = "wait <seconds>: the same, at most <seconds> (0: no limit); without "
		    "forwarding or a count, a pause of <seconds>",
	.tokens = { (void *)&t_wait, (void *)&t_secs, NULL },
};

cmdline_parse_inst_t *cmds_fwd[] = {
	&cmd_set_fwd, &cmd_set_flags, &cmd_set_val, &cmd_tso, &cmd_csum, &cmd_policy, &cmd_start,
	&cmd_start_count, &cmd_stop, &cmd_wait, &cmd_wait_secs, NULL,
};

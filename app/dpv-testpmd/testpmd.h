/* SPDX-License-Identifier: BSD-3-Clause */
/* dpv-testpmd: a testpmd-like command line for dpverbs, through verbs and <dpverbs.h> only;
 * the state the command files share. Functions return 0 or a negative errno and print their
 * own error message. */

#ifndef DPV_TESTPMD_H
#define DPV_TESTPMD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <infiniband/verbs.h>
#include <dpverbs.h>
#include <cmdline_parse.h>


#define TP_MAX_PORTS 16
#define TP_MAX_QPS 64
#define TP_MAX_FLOWS 256
#define TP_MAX_TXSEGS 8

/* Every port's share of the buffer arena (registered as one MR in every port's PD, so that a
 * frame received on one port can leave from another without a copy). */
#define TP_RX_SLOTS 512
#define TP_SLOT_SIZE 2048
#define TP_TX_AREA (320u << 10)     /* the forwarding engines' transmit frame: up to 256 KiB TSO */
#define TP_POST_AREA (1u << 20)     /* post send's frames */
#define TP_PORT_AREA (TP_RX_SLOTS * TP_SLOT_SIZE + TP_TX_AREA + TP_POST_AREA)

/* What the forwarding engine counted on one port since start (read by the stats line); only
 * uint64_t counters (clear port stats zeroes them one by one). */
struct fwd_counters {
	uint64_t rx;                /* receive completions (frames) */
	uint64_t tx_wrs;            /* send WRs posted */
	uint64_t completions;       /* send completions polled */
	uint64_t errors;            /* error completions and failed posts (other than a full SQ) */
	uint64_t sq_full;           /* posts that found the SQ full (ENOMEM) */
	uint64_t bad_csum;          /* csum engine: IP frames received without IP_CSUM_OK */
};

struct tp_port {
	struct ibv_device *dev;
	struct ibv_context *ctx;    /* NULL: the port is stopped */
	struct ibv_pd *pd;
	struct ibv_mr *mr;          /* the whole arena */
	struct dpv_port_info info;
	uint8_t mac[6];
	uint16_t tso_mss;           /* tso set; 0: off */
	uint32_t sw_forced;         /* csum set ... sw: enum dpv_offload always in software */
	struct dpv_port_stats base; /* clear port stats */
	struct dpv_xstat *xbase;
	unsigned int nb_xbase;
	struct fwd_counters fwd;
	uint32_t post_off;          /* next free byte of the post area */
	struct capture *cap;
};

struct tp_qp {
	bool used;
	bool fwd;                   /* owned by the forwarding engine */
	int port;
	struct ibv_qp *qp;
	struct ibv_cq *cq;          /* send and receive completions */
	uint32_t sq, rq, inline_size;
	uint64_t next_wr_id;
	/* post recv: the QP's receive buffers (made on first use), one slot per RQ entry */
	uint8_t *rbuf;
	struct ibv_mr *rmr;
	uint32_t rslot_size, rq_depth;
	uint64_t next_recv;
};

struct tp_flow {
	bool used;
	int qp;
	struct ibv_flow *flow;
	char text[160];
};

struct fwd_engine;

struct fwd_config {
	const struct fwd_engine *engine;
	uint16_t txpkts[TP_MAX_TXSEGS];   /* segment lengths of each frame (one SGE each) */
	int nb_txpkts;
	uint16_t burst;
	bool inline_data;
	bool ip_csum;
	uint32_t signaled_every;          /* 0: the last WR of every burst */
	int verbose;
};

struct testpmd {
	struct tp_port port[TP_MAX_PORTS];
	int nb_ports;
	struct ibv_device **devs;
	uint8_t *arena;
	size_t arena_size;
	struct tp_qp qp[TP_MAX_QPS];
	struct tp_flow flow[TP_MAX_FLOWS];
	struct fwd_config cfg;
	unsigned int stats_period;        /* seconds; 0: no live line */
	bool interactive;                 /* a prompt shares the terminal with the stats lines */
	int failed;                       /* commands that failed */
	bool quit;
	struct cmdline *cl;
};

extern struct testpmd tp;
extern cmdline_parse_ctx_t tp_ctx[];

/* Print an error (to stdout, in order with the rest) and count it; returns -EINVAL. */
int tp_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ports.c */
int ports_open_all(void);
void ports_close_all(void);
/* The port @p, started; prints why not (and the fix) and returns NULL. */
struct tp_port *port_get(unsigned int p);
bool port_valid(unsigned int p);
int port_start(unsigned int p);
int port_stop(unsigned int p);
uint8_t *port_area(unsigned int p);       /* the port's share of the arena */
void port_stats_clear(unsigned int p);

/* objects.c: QPs and flows the user made (ids are indexes) */
struct qp_opts {
	uint32_t sq, rq, inline_size;
	uint16_t max_tso_header;
	int progress;               /* enum dpv_progress; -1: the configuration's */
};
int qp_create(unsigned int port, const struct qp_opts *o, bool fwd);
int qp_destroy(unsigned int id);
int qp_to_state(struct ibv_qp *qp, enum ibv_qp_state s);
struct tp_qp *qp_get(unsigned int id);
const char *qp_state_name(enum ibv_qp_state s);
int qp_state_parse(const char *s, enum ibv_qp_state *out);
void objects_destroy_port(unsigned int port);
int flow_add(unsigned int qp, struct ibv_flow_attr *attr, const char *text);

/* frames.c */
void udp_frame(uint8_t *f, uint32_t len, const uint8_t *src, const uint8_t *dst, bool sw_csum);
void tcp_header(uint8_t *h, const uint8_t *src, const uint8_t *dst, uint32_t seq, uint16_t id);
#define TCP_HDR_LEN 54
void ipv4_header_csum(uint8_t *ip);
/* Length of the Ethernet[/VLAN]/IPv4-or-IPv6/TCP headers of a frame, 0 if it is no TCP frame. */
uint32_t tcp_headers_len(const uint8_t *f, uint32_t len);
bool frame_is_ip(const uint8_t *f, uint32_t len);
int hex_parse(const char *s, uint8_t *out, uint32_t max);
int mac_parse(const char *s, uint8_t mac[6]);
const char *mac_str(const uint8_t mac[6], char buf[18]);
void peer_mac(unsigned int port, uint8_t mac[6]);
/* Call @fn for each frame of a pcap file; returns the number of frames, or -1 (printed). */
int pcap_each(const char *path, int (*fn)(const uint8_t *f, uint32_t len, void *arg), void *arg);
const char *wc_opcode_name(enum ibv_wc_opcode op);
const char *errno_name(int e);
const char *wc_status_name(enum ibv_wc_status s);   /* "LOC_PROT_ERR" */

/* fwd.c and fwd_engines.c */
bool fwd_running(void);
int fwd_start(uint64_t count);
int fwd_stop(void);
/* Block until every port reached its count (or @seconds passed); 0 when they did. */
int fwd_wait(double seconds);
/* The engine called @name (NULL: none); every engine, NULL-terminated. */
const struct fwd_engine *fwd_engine_find(const char *name);
extern const struct fwd_engine *const fwd_engine_list[];
extern const struct fwd_engine fwd_io_engine;
/* The configured engine's name. */
const char *fwd_mode_name(void);
uint32_t fwd_frame_len(void);
/* Refuse a command while forwarding runs; prints the fix. */
bool fwd_refuse(const char *what);

/* capture.c */
int capture_start(unsigned int port, const char *path);
int capture_stop(unsigned int port);

/* script.c: run a command file; 0 when every line parsed and ran. */
int script_run(const char *path);
/* Run one command line as the prompt would; 0 if it parsed and did not fail. */
int command_run(const char *line);
void help_for(const char *line);
void help_all(void);

/* The command groups (cmd_*.c), NULL-terminated. */
extern cmdline_parse_inst_t *cmds_show[], *cmds_port[], *cmds_fwd[], *cmds_qp[], *cmds_flow[],
	*cmds_post[], *cmds_capture[], *cmds_misc[];

#endif

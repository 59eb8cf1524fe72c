/* SPDX-License-Identifier: BSD-3-Clause */
/* capture start <port> <file.pcap>, capture stop <port>: what a port receives, to a pcap file
 * (a SNIFFER flow on a QP of its own; see capture.c). */
#include <string.h>

#include <cmdline_parse_num.h>
#include <cmdline_parse_string.h>

#include "testpmd.h"

struct capture_res {
	cmdline_fixed_string_t capture, what;
	uint16_t pid;
	cmdline_fixed_string_t file;
};

static void capture_start_parsed(void *res, struct cmdline *cl, void *data)
{
	struct capture_res *r = res;

	capture_start(r->pid, r->file);
}

static void capture_stop_parsed(void *res, struct cmdline *cl, void *data)
{
	struct capture_res *r = res;

	capture_stop(r->pid);
}

static cmdline_parse_token_string_t t_capture = TOKEN_STRING_INITIALIZER(struct capture_res, capture, "capture");
static cmdline_parse_token_string_t t_start = TOKEN_STRING_INITIALIZER(struct capture_res, what, "start");
static cmdline_parse_token_string_t t_stop = TOKEN_STRING_INITIALIZER(struct capture_res, what, "stop");
static cmdline_parse_token_num_t t_pid = TOKEN_NUM_INITIALIZER(struct capture_res, pid, RTE_UINT16);
static cmdline_parse_token_string_t t_file = TOKEN_STRING_INITIALIZER(struct capture_res, file, NULL);

static cmdline_parse_inst_t cmd_capture_start = {
	.f = capture_start_parsed,
	.help_str = "capture start <port> <file.pcap>: write every frame the port receives to "
		    "the file (a SNIFFER flow)",
	.tokens = { (void *)&t_capture, (void *)&t_start, (void *)&t_pid, (void *)&t_file, NULL },
};

static cmdline_parse_inst_t cmd_capture_stop = {
	.f = capture_stop_parsed,
	.help_str = "capture stop <port> [<file.pcap>]: close the capture file",
	.tokens = { (void *)&t_capture, (void *)&t_stop, (void *)&t_pid, NULL },
};

static cmdline_parse_inst_t cmd_capture_stop_file = {
	.f = capture_stop_parsed,
	.help_str = "capture stop <port> <file.pcap>: the same",
	.tokens = { (void *)&t_capture, (void *)&t_stop, (void *)&t_pid, (void *)&t_file, NULL },
};

cmdline_parse_inst_t *cmds_capture[] = {
	&cmd_capture_start, &cmd_capture_stop, &cmd_capture_stop_file, NULL,
};

/* SPDX-License-Identifier: BSD-3-Clause */
/* flow create <qp> [priority N] [dont_trap] [normal|all_default|mc_default|sniffer]
 *             [eth [dst M] [src M] [type T] [vlan V]] [/ ipv4 [src A] [dst A] [proto N]]
 *             [/ ipv6 [src A] [dst A]] [/ udp|tcp [src P] [dst P]] [/ end],
 * flow list, flow destroy <id>: ibv_create_flow specs, one per pattern item, a field matched
 * exactly where it is given. testpmd's "is" may follow a field name. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cmdline_parse_num.h>
#include <cmdline_parse_string.h>

#include "testpmd.h"

struct flow_buf {
	struct ibv_flow_attr attr;
	uint8_t specs[512];
	uint32_t len;
};

static void *spec_add(struct flow_buf *b, enum ibv_flow_spec_type type, uint16_t size)
{
	uint8_t *s = b->specs + b->len;

	if (b->len + size > sizeof(b->specs))
		return NULL;
	memset(s, 0, size);
	memcpy(s, &type, sizeof(type));
	memcpy(s + sizeof(type), &size, sizeof(size));
	b->len += size;
	b->attr.num_of_specs++;
	return s;
}

/* The next field name and value of a pattern item ("dst is 1.2.3.4" or "dst 1.2.3.4");
 * NULL at the item's end. */
static char *field(char **save, char **value)
{
	char *name = strtok_r(NULL, " \t", save);

	if (name == NULL || strcmp(name, "/") == 0)
		return NULL;
	*value = strtok_r(NULL, " \t", save);
	if (*value != NULL && strcmp(*value, "is") == 0)
		*value = strtok_r(NULL, " \t", save);
	return name;
}

static unsigned long num(const char *v, unsigned long max, int *bad)
{
	char *end;
	unsigned long n = v ? strtoul(v, &end, 0) : 0;

	if (v == NULL || end == v || *end != '\0' || n > max)
		*bad = 1;
	return n;
}

static int item_eth(struct flow_buf *b, char **save)
{
	struct ibv_flow_spec_eth *s = spec_add(b, IBV_FLOW_SPEC_ETH, sizeof(*s));
	char *n, *v;
	int bad = 0;

	while (s != NULL && !bad && (n = field(save, &v)) != NULL) {
		if (strcmp(n, "dst") == 0 && v && mac_parse(v, s->val.dst_mac) == 0)
			memset(s->mask.dst_mac, 0xff, 6);
		else if (strcmp(n, "src") == 0 && v && mac_parse(v, s->val.src_mac) == 0)
			memset(s->mask.src_mac, 0xff, 6);
		else if (strcmp(n, "type") == 0)
			s->val.ether_type = htons((uint16_t)num(v, 0xffff, &bad)), s->mask.ether_type = 0xffff;
		else if (strcmp(n, "vlan") == 0)
			s->val.vlan_tag = htons((uint16_t)num(v, 4095, &bad)), s->mask.vlan_tag = htons(0x0fff);
		else
			bad = 1;
	}
	return s == NULL || bad ? tp_error("eth takes dst <mac>, src <mac>, type <ethertype>, "
					   "vlan <id>") : 0;
}

static int item_ipv4(struct flow_buf *b, char **save)
{
	struct ibv_flow_spec_ipv4_ext *s = spec_add(b, IBV_FLOW_SPEC_IPV4_EXT, sizeof(*s));
	char *n, *v;
	int bad = 0;

	while (s != NULL && !bad && (n = field(save, &v)) != NULL) {
		if (strcmp(n, "src") == 0 && v && inet_pton(AF_INET, v, &s->val.src_ip) == 1)
			s->mask.src_ip = 0xffffffff;
		else if (strcmp(n, "dst") == 0 && v && inet_pton(AF_INET, v, &s->val.dst_ip) == 1)
			s->mask.dst_ip = 0xffffffff;
		else if (strcmp(n, "proto") == 0)
			s->val.proto = (uint8_t)num(v, 255, &bad), s->mask.proto = 0xff;
		else
			bad = 1;
	}
	return s == NULL || bad ? tp_error("ipv4 takes src <a.b.c.d>, dst <a.b.c.d>, "
					   "proto <n>") : 0;
}

static int item_ipv6(struct flow_buf *b, char **save)
{
	struct ibv_flow_spec_ipv6 *s = spec_add(b, IBV_FLOW_SPEC_IPV6, sizeof(*s));
	char *n, *v;
	int bad = 0;

	while (s != NULL && !bad && (n = field(save, &v)) != NULL) {
		if (strcmp(n, "src") == 0 && v && inet_pton(AF_INET6, v, s->val.src_ip) == 1)
			memset(s->mask.src_ip, 0xff, 16);
		else if (strcmp(n, "dst") == 0 && v && inet_pton(AF_INET6, v, s->val.dst_ip) == 1)
			memset(s->mask.dst_ip, 0xff, 16);
		else
			bad = 1;
	}
	return s == NULL || bad ? tp_error("ipv6 takes src <addr>, dst <addr>") : 0;
}

static int item_l4(struct flow_buf *b, char **save, bool tcp)
{
	struct ibv_flow_spec_tcp_udp *s = spec_add(b, tcp ? IBV_FLOW_SPEC_TCP : IBV_FLOW_SPEC_UDP,
						   sizeof(*s));
	char *n, *v;
	int bad = 0;

	while (s != NULL && !bad && (n = field(save, &v)) != NULL) {
		if (strcmp(n, "src") == 0)
			s->val.src_port = htons((uint16_t)num(v, 65535, &bad)), s->mask.src_port = 0xffff;
		else if (strcmp(n, "dst") == 0)
			s->val.dst_port = htons((uint16_t)num(v, 65535, &bad)), s->mask.dst_port = 0xffff;
		else
			bad = 1;
	}
	return s == NULL || bad ? tp_error("udp and tcp take src <port>, dst <port>") : 0;
}

static int flow_parse(char *text, struct flow_buf *b)
{
	char *save = NULL, *w = strtok_r(text, " \t", &save);
	int bad = 0, rc = 0;

	b->attr = (struct ibv_flow_attr){ .type = IBV_FLOW_ATTR_NORMAL, .port = 1 };
	b->len = 0;
	for (; w != NULL && rc == 0; w = strtok_r(NULL, " \t", &save)) {
		if (strcmp(w, "priority") == 0)
			b->attr.priority = (uint16_t)num(strtok_r(NULL, " \t", &save), 0xffff, &bad);
		else if (strcmp(w, "dont_trap") == 0)
			b->attr.flags |= IBV_FLOW_ATTR_FLAGS_DONT_TRAP;
		else if (strcmp(w, "all_default") == 0)
			b->attr.type = IBV_FLOW_ATTR_ALL_DEFAULT;
		else if (strcmp(w, "mc_default") == 0)
			b->attr.type = IBV_FLOW_ATTR_MC_DEFAULT;
		else if (strcmp(w, "sniffer") == 0)
			b->attr.type = IBV_FLOW_ATTR_SNIFFER;
		else if (strcmp(w, "normal") == 0 || strcmp(w, "/") == 0 || strcmp(w, "end") == 0)
			continue;
		else if (strcmp(w, "eth") == 0)
			rc = item_eth(b, &save);
		else if (strcmp(w, "ipv4") == 0)
			rc = item_ipv4(b, &save);
		else if (strcmp(w, "ipv6") == 0)
			rc = item_ipv6(b, &save);
		else if (strcmp(w, "udp") == 0 || strcmp(w, "tcp") == 0)
			rc = item_l4(b, &save, w[0] == 't');
		else
			return tp_error("flow create: '%s' is no pattern item: eth, ipv4, ipv6, udp, "
					"tcp (or priority, dont_trap, all_default, mc_default, "
					"sniffer)", w);
		if (bad)
			return tp_error("flow create: priority takes 0..65535");
	}
	b->attr.size = (uint16_t)(sizeof(b->attr) + b->len);
	return rc;
}

struct flow_create_res {
	cmdline_fixed_string_t flow, create;
	uint16_t qp;
	cmdline_multi_string_t pattern;
};

static void flow_create_parsed(void *res, struct cmdline *cl, void *data)
{
	struct flow_create_res *r = res;
	struct flow_buf b;
	char text[sizeof(r->pattern)];
	int id;

	snprintf(text, sizeof(text), "%s", r->pattern);
	if (flow_parse(r->pattern, &b) != 0)
		return;
	id = flow_add(r->qp, &b.attr, text);
	if (id >= 0)
		printf("flow %d on QP %u: %s\n", id, r->qp, text);
}

static cmdline_parse_token_string_t t_flow = TOKEN_STRING_INITIALIZER(struct flow_create_res, flow, "flow");
static cmdline_parse_token_string_t t_create = TOKEN_STRING_INITIALIZER(struct flow_create_res, create, "create");
static cmdline_parse_token_num_t t_qp = TOKEN_NUM_INITIALIZER(struct flow_create_res, qp, RTE_UINT16);
static cmdline_parse_token_string_t t_pattern = TOKEN_STRING_INITIALIZER(struct flow_create_res, pattern, TOKEN_STRING_MULTI);

static cmdline_parse_inst_t cmd_flow_create = {
	.f = flow_create_parsed,
	.help_str = "flow create <qp> [priority N] [dont_trap] [all_default|mc_default|sniffer] "
		    "eth [dst M] [src M] [type T] [vlan V] / ipv4 [src A] [dst A] [proto N] | ipv6 "
		    "[src A] [dst A] / udp|tcp [src P] [dst P]: ibv_create_flow",
	.tokens = { (void *)&t_flow, (void *)&t_create, (void *)&t_qp, (void *)&t_pattern, NULL },
};

struct flow_word_res {
	cmdline_fixed_string_t flow, what;
	uint16_t id;
};

static void flow_list_parsed(void *res, struct cmdline *cl, void *data)
{
	int n = 0;

	for (int i = 0; i < TP_MAX_FLOWS; i++)
		if (tp.flow[i].used) {
			printf("flow %d: QP %d: %s\n", i, tp.flow[i].qp, tp.flow[i].text);
			n++;
		}
	if (n == 0)
		printf("no flow: flow create <qp> eth ...\n");
}

static void flow_destroy_parsed(void *res, struct cmdline *cl, void *data)
{
	struct flow_word_res *r = res;
	int rc;

	if (r->id >= TP_MAX_FLOWS || !tp.flow[r->id].used) {
		tp_error("there is no flow %u (flow list)", r->id);
		return;
	}
	if (tp.qp[tp.flow[r->id].qp].fwd) {
		tp_error("flow %u belongs to the forwarding engine: stop destroys it", r->id);
		return;
	}
	rc = ibv_destroy_flow(tp.flow[r->id].flow);
	if (rc != 0) {
		tp_error("ibv_destroy_flow(flow %u): %s", r->id, strerror(rc));
		return;
	}
	tp.flow[r->id].used = false;
	printf("flow %u destroyed\n", r->id);
}

static cmdline_parse_token_string_t t_w_flow = TOKEN_STRING_INITIALIZER(struct flow_word_res, flow, "flow");
static cmdline_parse_token_string_t t_list = TOKEN_STRING_INITIALIZER(struct flow_word_res, what, "list");
static cmdline_parse_token_string_t t_destroy = TOKEN_STRING_INITIALIZER(struct flow_word_res, what, "destroy");
static cmdline_parse_token_num_t t_id = TOKEN_NUM_INITIALIZER(struct flow_word_res, id, RTE_UINT16);

static cmdline_parse_inst_t cmd_flow_list = {
	.f = flow_list_parsed,
	.help_str = "flow list: every flow, its QP and pattern",
	.tokens = { (void *)&t_w_flow, (void *)&t_list, NULL },
};

static cmdline_parse_inst_t cmd_flow_destroy = {
	.f = flow_destroy_parsed,
	.help_str = "flow destroy <id>: ibv_destroy_flow",
	.tokens = { (void *)&t_w_flow, (void *)&t_destroy, (void *)&t_id, NULL },
};

cmdline_parse_inst_t *cmds_flow[] = { &cmd_flow_create, &cmd_flow_list, &cmd_flow_destroy, NULL };

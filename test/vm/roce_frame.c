/* SPDX-License-Identifier: BSD-3-Clause */
/* roce_frame KEY=VALUE...: one RoCEv2 frame built by dpverbs' codec (dpv__roce_frame_build),
 * printed as hex on one line. roce_peer.py (the host end of the soft-RoCE VM test) answers
 * rxe with these frames, so rxe itself judges what the codec writes.
 *   smac= dmac=            MACs (aa:bb:cc:dd:ee:ff)
 *   sgid= dgid=            IPv4 (made ::ffff:a.b.c.d) or IPv6 addresses
 *   tc= flow= hop= ipid=   the rest of the path (defaults 0, 0, 64, 0)
 *   sport=N | qpn:QPN | conn:LQPN:RQPN   the UDP source port, or as dpverbs computes it for a
 *                          UD QP (dpv__roce_udp_sport_qpn) or a connected one (_udp_sport)
 *   opcode= se= ackreq= pkey= dqpn= psn=    BTH (pkey 0xFFFF by default)
 *   qkey= sqpn=            DETH;  syndrome= msn=   AETH;  imm=   ImmDt (wire order)
 *   len= fill=             payload: len bytes of fill (0x7b, what the pingpongs send)
 * Exit 0, or 2 on a bad argument or a frame the codec refuses (its errno printed). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roce_wire.h"

static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int b[6];

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6)
		return -1;
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	return 0;
}

static int parse_gid(const char *s, uint8_t gid[16])
{
	struct in_addr a4;

	if (inet_pton(AF_INET, s, &a4) == 1) {
		dpv__roce_gid_from_ipv4(gid, a4.s_addr);
		return 0;
	}
	return inet_pton(AF_INET6, s, gid) == 1 ? 0 : -1;
}

/* One KEY=VALUE into the path, the headers or the payload; -1 when unknown or malformed. */
static int set(const char *key, const char *val, struct dpv_roce_path *p,
	       struct dpv_roce_hdrs *h, unsigned long *len, unsigned long *fill)
{
	char *end;
	unsigned long v = strtoul(val, &end, 0);
	bool num = *val != '\0' && *end == '\0';

	if (!strcmp(key, "smac"))
		return parse_mac(val, p->smac);
	if (!strcmp(key, "dmac"))
		return parse_mac(val, p->dmac);
	if (!strcmp(key, "sgid"))
		return parse_gid(val, p->sgid);
	if (!strcmp(key, "dgid"))
		return parse_gid(val, p->dgid);
	if (!strcmp(key, "sport") && !strncmp(val, "qpn:", 4)) {
		p->sport = dpv__roce_udp_sport_qpn((uint32_t)strtoul(val + 4, NULL, 0));
		return 0;
	}
	if (!strcmp(key, "sport") && !strncmp(val, "conn:", 5)) {
		uint32_t l = (uint32_t)strtoul(val + 5, &end, 0);

		if (*end != ':')
			return -1;
		p->sport = dpv__roce_udp_sport(0, l, (uint32_t)strtoul(end + 1, NULL, 0));
		return 0;
	}
	if (!num)
		return -1;
	if (!strcmp(key, "sport")) p->sport = (uint16_t)v;
	else if (!strcmp(key, "tc")) p->traffic_class = (uint8_t)v;
	else if (!strcmp(key, "flow")) p->flow_label = (uint32_t)v;
	else if (!strcmp(key, "hop")) p->hop_limit = (uint8_t)v;
	else if (!strcmp(key, "ipid")) p->ip_id = (uint16_t)v;
	else if (!strcmp(key, "opcode")) h->bth.opcode = (uint8_t)v;
	else if (!strcmp(key, "se")) h->bth.se = v != 0;
	else if (!strcmp(key, "ackreq")) h->bth.ackreq = v != 0;
	else if (!strcmp(key, "pkey")) h->bth.pkey = (uint16_t)v;
	else if (!strcmp(key, "dqpn")) h->bth.dqpn = (uint32_t)v;
	else if (!strcmp(key, "psn")) h->bth.psn = (uint32_t)v;
	else if (!strcmp(key, "qkey")) h->deth.qkey = (uint32_t)v;
	else if (!strcmp(key, "sqpn")) h->deth.sqpn = (uint32_t)v;
	else if (!strcmp(key, "syndrome")) h->aeth.syndrome = (uint8_t)v;
	else if (!strcmp(key, "msn")) h->aeth.msn = (uint32_t)v;
	else if (!strcmp(key, "imm")) h->imm = htonl((uint32_t)v);
	else if (!strcmp(key, "len")) *len = v;
	else if (!strcmp(key, "fill")) *fill = v;
	else
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct dpv_roce_path path = { .hop_limit = 64, .sport = DPV_ROCE_SPORT_MIN };
	struct dpv_roce_hdrs h = { .bth.pkey = DPV_ROCE_PKEY_DEFAULT };
	unsigned long len = 0, fill = 0x7b;
	static uint8_t payload[9000], frame[9200];
	int n;

	for (int i = 1; i < argc; i++) {
		char key[32], *eq = strchr(argv[i], '=');

		if (eq == NULL || (size_t)(eq - argv[i]) >= sizeof(key)) {
			fprintf(stderr, "roce_frame: '%s' is not KEY=VALUE\n", argv[i]);
			return 2;
		}
		memcpy(key, argv[i], (size_t)(eq - argv[i]));
		key[eq - argv[i]] = '\0';
		if (set(key, eq + 1, &path, &h, &len, &fill) < 0) {
			fprintf(stderr, "roce_frame: bad argument '%s'\n", argv[i]);
			return 2;
		}
	}
	if (len > sizeof(payload)) {
		fprintf(stderr, "roce_frame: len above %zu\n", sizeof(payload));
		return 2;
	}
	memset(payload, (int)fill, len);
	n = dpv__roce_frame_build(frame, sizeof(frame), &path, &h, payload, (uint32_t)len);
	if (n < 0) {
		fprintf(stderr, "roce_frame: the codec refuses the frame: %s\n", strerror(-n));
		return 2;
	}
	for (int i = 0; i < n; i++)
		printf("%02x", frame[i]);
	putchar('\n');
	return 0;
}

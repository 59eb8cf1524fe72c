/* SPDX-License-Identifier: BSD-3-Clause */
/* The flow hash of receive queues spread in software (drivers/net/ethdev/ethdev_spread.c):
 * what keeps a flow on one queue. The same for both directions of a connection, for a frame
 * with or without VLAN tags, for every fragment of a datagram; 0 (queue 0) for what is not IP
 * or is cut short; never a byte read past the frame (each frame is tried at every length, at
 * the end of its allocation, which the sanitizer build checks); and 64 flows cover 4 queues. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ethdev_priv.h"

static int failures, checks;

#define CHECK(c) do { checks++; if (!(c)) { failures++; printf("FAIL %s:%d: %s\n", \
	__FILE__, __LINE__, #c); } } while (0)

/* Ethernet [VLAN] IPv4 UDP, 60 bytes: 10.0.0.a:sp -> 10.0.0.b:dp */
static size_t udp4(uint8_t *f, int vlan, uint8_t a, uint8_t b, uint16_t sp, uint16_t dp,
		   uint16_t frag)
{
	size_t o = 12;

	memset(f, 0, 64);
	f[0] = 2;
	if (vlan) {
		f[o] = 0x81, f[o + 2] = 0, f[o + 3] = 5;
		o += 4;
	}
	f[o] = 0x08, f[o + 1] = 0;
	o += 2;
	f[o] = 0x45, f[o + 9] = 17, f[o + 6] = (uint8_t)(frag >> 8), f[o + 7] = (uint8_t)frag;
	f[o + 12] = 10, f[o + 15] = a, f[o + 16] = 10, f[o + 19] = b;
	f[o + 20] = (uint8_t)(sp >> 8), f[o + 21] = (uint8_t)sp;
	f[o + 22] = (uint8_t)(dp >> 8), f[o + 23] = (uint8_t)dp;
	return o + 28;
}

/* every length of @f, the frame ending where its allocation does */
static void all_lengths(const uint8_t *f, size_t len)
{
	for (size_t l = 0; l <= len; l++) {
		uint8_t *c = malloc(l ? l : 1);

		memcpy(c, f, l);
		(void)dpv__eth_flow_hash(c, (uint32_t)l);
		free(c);
	}
}

int main(void)
{
	uint8_t f[64], g[64], v6[80] = { 2, [12] = 0x86, [13] = 0xdd, [14] = 0x60, [20] = 6 };
	size_t n = udp4(f, 0, 1, 2, 1000, 9000, 0), m;
	uint32_t h = dpv__eth_flow_hash(f, (uint32_t)n);
	int used[4] = { 0 };

	CHECK(h != 0);
	udp4(g, 0, 2, 1, 9000, 1000, 0);                      /* the other direction */
	CHECK(dpv__eth_flow_hash(g, (uint32_t)n) == h);
	m = udp4(g, 1, 1, 2, 1000, 9000, 0);                  /* tagged */
	CHECK(dpv__eth_flow_hash(g, (uint32_t)m) == h);
	udp4(g, 0, 1, 2, 1001, 9000, 0);                      /* another flow */
	CHECK(dpv__eth_flow_hash(g, (uint32_t)n) != h);
	/* fragments of one datagram: the first (MF) and a later one (offset, other "ports") */
	udp4(f, 0, 1, 2, 1000, 9000, 0x2000);
	udp4(g, 0, 1, 2, 0x1234, 0x5678, 0x0010);
	CHECK(dpv__eth_flow_hash(f, (uint32_t)n) == dpv__eth_flow_hash(g, (uint32_t)n));
	/* not IP, or cut short: queue 0 */
	udp4(f, 0, 1, 2, 1000, 9000, 0);
	f[12] = 0x08, f[13] = 0x06;                           /* ARP */
	CHECK(dpv__eth_flow_hash(f, (uint32_t)n) == 0);
	udp4(f, 0, 1, 2, 1000, 9000, 0);
	CHECK(dpv__eth_flow_hash(f, 33) == 0);                /* IPv4 header cut */
	f[14] = 0x41;                                         /* IHL 4 */
	CHECK(dpv__eth_flow_hash(f, (uint32_t)n) == 0);
	/* IPv6 TCP, both ways */
	v6[22] = 0xfe, v6[37] = 1, v6[38] = 0xfe, v6[53] = 2;
	v6[54] = 0x12, v6[56] = 0x34;                         /* ports 0x1200 -> 0x3400 */
	memcpy(g, v6, 64);
	memcpy(g + 22, v6 + 38, 16), memcpy(g + 38, v6 + 22, 16);
	g[54] = 0x34, g[56] = 0x12;
	CHECK(dpv__eth_flow_hash(v6, 64) != 0);
	CHECK(dpv__eth_flow_hash(v6, 64) == dpv__eth_flow_hash(g, 64));
	all_lengths(v6, 64);
	n = udp4(f, 1, 1, 2, 1000, 9000, 0);
	all_lengths(f, n);
	/* 64 flows over 4 queues, as the receive path picks them */
	for (int i = 0; i < 64; i++) {
		udp4(f, 0, 1, 2, (uint16_t)(1000 + i), (uint16_t)(9000 + i % 4), 0);
		used[((uint64_t)dpv__eth_flow_hash(f, 60) * 4) >> 32]++;
	}
	CHECK(used[0] > 0 && used[1] > 0 && used[2] > 0 && used[3] > 0);
	printf("eth_spread: %d checks passed, %d failed\n", checks - failures, failures);
	return failures != 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* RoCEv2 addresses as rxe and the kernel's RDMA core make them: the GIDs of a port, the IP
 * address inside a GID, a multicast group's MAC, the IB MTU that fits a port's Ethernet MTU,
 * and the UDP source port of a QP. Pure functions. */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "roce_wire.h"

/* rxe's RXE_MAX_HDR_LENGTH: what eth_mtu_int_to_enum takes off the port MTU, whatever the IP
 * version (more than IPv6 + UDP + BTH + the largest extension headers + ICRC needs) */
#define ROCE_MTU_OVERHEAD 80

void dpv__roce_gid_from_mac(uint8_t gid[16], const uint8_t mac[6])
{
	memset(gid, 0, 16);
	gid[0] = 0xFE;
	gid[1] = 0x80;
	gid[8] = mac[0] ^ 0x02;		/* the universal/local bit, inverted in EUI-64 */
	gid[9] = mac[1];
	gid[10] = mac[2];
	gid[11] = 0xFF;
	gid[12] = 0xFE;
	gid[13] = mac[3];
	gid[14] = mac[4];
	gid[15] = mac[5];
}

void dpv__roce_gid_from_ipv4(uint8_t gid[16], uint32_t addr)
{
	memcpy(gid, dpv__roce_v4_prefix, 12);
	memcpy(gid + 12, &addr, 4);
}

int dpv__roce_gid_to_ip(const uint8_t gid[16], uint8_t addr[16])
{
	if (dpv__roce_gid_is_v4(gid)) {
		memcpy(addr, gid + 12, 4);
		return AF_INET;
	}
	memcpy(addr, gid, 16);
	return AF_INET6;
}

bool dpv__roce_gid_is_mcast(const uint8_t gid[16])
{
	if (dpv__roce_gid_is_v4(gid))
		return (gid[12] & 0xF0) == 0xE0;          /* 224.0.0.0/4 */
	return gid[0] == 0xFF;
}

bool dpv__roce_gid_mcast_mac(const uint8_t gid[16], uint8_t mac[6])
{
	if (!dpv__roce_gid_is_mcast(gid))
		return false;
	if (dpv__roce_gid_is_v4(gid)) {
		mac[0] = 0x01;
		mac[1] = 0x00;
		mac[2] = 0x5E;
		mac[3] = gid[13] & 0x7F;
		mac[4] = gid[14];
		mac[5] = gid[15];
	} else {
		mac[0] = mac[1] = 0x33;
		memcpy(mac + 2, gid + 12, 4);
	}
	return true;
}

int dpv__roce_gid_to_mac(const uint8_t gid[16], uint8_t mac[6])
{
	static const uint8_t ll_prefix[8] = { 0xFE, 0x80 };

	if (memcmp(gid, ll_prefix, sizeof(ll_prefix)) != 0 || gid[11] != 0xFF || gid[12] != 0xFE)
		return -EINVAL;
	mac[0] = gid[8] ^ 0x02;
	mac[1] = gid[9];
	mac[2] = gid[10];
	mac[3] = gid[13];
	mac[4] = gid[14];
	mac[5] = gid[15];
	return 0;
}

int dpv__roce_active_mtu(uint32_t mtu)
{
	int ib_mtu = 0;

	if (mtu < ROCE_MTU_OVERHEAD)
		return 0;
	for (uint32_t fit = 256; fit <= 4096 && fit <= mtu - ROCE_MTU_OVERHEAD; fit <<= 1)
		ib_mtu++;
	return ib_mtu;
}

uint32_t dpv__roce_mtu_bytes(int ib_mtu)
{
	return ib_mtu >= 1 && ib_mtu <= 5 ? 128u << ib_mtu : 0;
}

/* rdma_calc_flow_label: the product of the QPNs folded to 20 bits, the same seen from either
 * end; then rdma_flow_label_to_udp_sport folds the label into the 14 low bits of the port. */
uint16_t dpv__roce_udp_sport(uint32_t flow_label, uint32_t lqpn, uint32_t rqpn)
{
	uint32_t fl = flow_label & 0xFFFFF;

	if (fl == 0) {
		uint64_t v = (uint64_t)lqpn * rqpn;

		v ^= v >> 20;
		v ^= v >> 40;
		fl = (uint32_t)v & 0xFFFFF;
	}
	return (uint16_t)(DPV_ROCE_SPORT_MIN | ((fl & 0x3FFF) ^ (fl & 0xFC000) >> 14));
}

/* rxe_qp_init_req: RXE_ROCE_V2_SPORT + (hash_32(qpn, 14) & 0x3fff), hash_32 being the
 * kernel's multiplicative hash by GOLDEN_RATIO_32 keeping the top bits */
uint16_t dpv__roce_udp_sport_qpn(uint32_t qpn)
{
	return (uint16_t)(DPV_ROCE_SPORT_MIN | (uint32_t)(qpn * 0x61C88647u) >> (32 - 14));
}

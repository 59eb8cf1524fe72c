/* Neighbours of a RoCEv2 port: the MAC a frame to a GID goes to. Local, link-local and
 * multicast GIDs map to a MAC without asking (as the kernel's ib_resolve_eth_dmac does for
 * rxe); other peers are resolved by dpverbs itself with ARP (IPv4) or an IPv6 Neighbor
 * Solicitation, their answers kept in a per-port cache that ages. */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "roce_port.h"
#include "verbs_priv.h"

/* The MAC of a multicast GID (RFC 1112 6.4: 01:00:5e + the group's low 23 bits; RFC 2464 7:
 * 33:33 + its last 4 bytes); false for a unicast one. */
static bool mcast_mac(const uint8_t gid[16], uint8_t mac[6])
{
	uint8_t ip[16];

	if (dpv__roce_gid_to_ip(gid, ip) == AF_INET) {
		if ((ip[0] & 0xF0) != 0xE0)
			return false;
		mac[0] = 0x01;
		mac[1] = 0x00;
		mac[2] = 0x5E;
		mac[3] = ip[1] & 0x7F;
		mac[4] = ip[2];
		mac[5] = ip[3];
		return true;
	}
	if (ip[0] != 0xFF)
		return false;
	mac[0] = mac[1] = 0x33;
	memcpy(mac + 2, ip + 12, 4);
	return true;
}

/* What may be answered without the network: 0 (and @mac), or -EAGAIN for a unicast peer. */
static int resolve_local(struct dpv_device *dev, const uint8_t dgid[16], uint8_t mac[6])
{
	if (dpv__roce_gid_find(dev, dgid) >= 0) {
		memcpy(mac, dev->caps.mac, 6);
		return 0;
	}
	if (mcast_mac(dgid, mac) || dpv__roce_gid_to_mac(dgid, mac) == 0)
		return 0;
	return -EAGAIN;
}

int dpv__roce_resolve(struct dpv_device *dev, int sgid_index, const uint8_t dgid[16],
		      uint8_t mac[6])
{
	uint8_t sgid[16], sip[16], dip[16];
	int rc;

	if (dpv__roce_gid_get(dev, sgid_index, sgid) != 0 ||
	    dpv__roce_gid_to_ip(sgid, sip) != dpv__roce_gid_to_ip(dgid, dip))
		return -EINVAL;
	rc = resolve_local(dev, dgid, mac);
	if (rc != -EAGAIN)
		return rc;
	return -EHOSTUNREACH;     /* ARP/ND: next */
}

void dpv__roce_neigh_rx(struct dpv_device *dev, struct rte_mbuf **pkts, uint16_t n,
			uint64_t *taken)
{
}

/* Receive on ethdev queues: frames of every receive queue of the port, handed to the verbs
 * core, which steers them to QPs (lib/verbs/flow.c) and scatters them into receive WQEs. */
#include <netinet/in.h>
#include <string.h>

#include <rte_ip.h>
#include <rte_mbuf.h>

#include "ethdev_priv.h"

uint16_t dpv_eth_rx_burst(struct dpv_port *p, void **frames, uint16_t n)
{
	uint16_t got = 0;

	for (uint16_t q = 0; q < p->nb_rxq && got < n; q++)
		got += rte_eth_rx_burst(p->port_id, q, (struct rte_mbuf **)frames + got, n - got);
	return got;
}

uint32_t dpv_eth_rx_len(void *frame)
{
	return rte_pktmbuf_pkt_len((struct rte_mbuf *)frame);
}

const uint8_t *dpv_eth_rx_head(void *frame, uint32_t *len)
{
	struct rte_mbuf *m = frame;

	*len = rte_pktmbuf_data_len(m);
	return rte_pktmbuf_mtod(m, const uint8_t *);
}

void dpv_eth_rx_read(void *frame, uint32_t off, void *dst, uint32_t len)
{
	const void *p = rte_pktmbuf_read(frame, off, len, dst);

	if (p != dst)
		memcpy(dst, p, len);
}

/* The port's word when it gives one (RX checksum flags), else computed here. */
bool dpv_eth_rx_csum_ok(void *frame)
{
	struct rte_mbuf *m = frame;
	uint64_t ip = m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK;
	uint64_t l4 = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;
	struct dpv_hdr_info info;

	if (ip == RTE_MBUF_F_RX_IP_CKSUM_BAD || l4 == RTE_MBUF_F_RX_L4_CKSUM_BAD)
		return false;
	if (ip == RTE_MBUF_F_RX_IP_CKSUM_GOOD && l4 == RTE_MBUF_F_RX_L4_CKSUM_GOOD)
		return true;
	dpv_hdr_parse(rte_pktmbuf_mtod(m, const uint8_t *), rte_pktmbuf_data_len(m), &info);
	return dpv_sw_csum_check(m, &info);
}

void dpv_eth_rx_free(void **frames, uint16_t n)
{
	rte_pktmbuf_free_bulk((struct rte_mbuf **)frames, n);
}

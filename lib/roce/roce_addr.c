/* SPDX-License-Identifier: BSD-3-Clause */
/* A port's RoCEv2 addresses and its GID table, built as rxe builds it: index 0 is the
 * link-local fe80:: EUI-64 GID of the port's MAC, then one RoCE v2 GID per address in the
 * order they were added (IPv4 as ::ffff:a.b.c.d), a removed one leaving its index empty until
 * an address takes it again. Addresses come from the configuration (port_addr) when the device
 * is first seen, and from dpv_port_add_addr / dpv_port_del_addr at run time; each change
 * raises IBV_EVENT_GID_CHANGE on every open context of the device. The table is read without
 * a lock (a sequence lock), so a data path may look GIDs up while addresses change. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "roce_port.h"
#include "verbs_priv.h"

/* ---- the table: a sequence lock over atomically accessed words ---- */

static void gid_write(struct dpv_roce_port *rp, int index, const uint8_t gid[16])
{
	uint64_t w[2] = { 0, 0 };
	uint32_t s = __atomic_load_n(&rp->seq, __ATOMIC_RELAXED);

	if (gid != NULL)
		memcpy(w, gid, 16);
	__atomic_store_n(&rp->seq, s + 1, __ATOMIC_RELAXED);     /* odd: being written */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&rp->gid[index][0], w[0], __ATOMIC_RELAXED);
	__atomic_store_n(&rp->gid[index][1], w[1], __ATOMIC_RELAXED);
	__atomic_store_n(&rp->seq, s + 2, __ATOMIC_RELEASE);
}

static uint32_t read_begin(const struct dpv_roce_port *rp)
{
	uint32_t s;

	while ((s = __atomic_load_n(&rp->seq, __ATOMIC_ACQUIRE)) & 1)
		rte_pause();
	return s;
}

static bool read_retry(const struct dpv_roce_port *rp, uint32_t s)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&rp->seq, __ATOMIC_RELAXED) != s;
}

static void gid_load(const struct dpv_roce_port *rp, int index, uint64_t w[2])
{
	w[0] = __atomic_load_n(&rp->gid[index][0], __ATOMIC_RELAXED);
	w[1] = __atomic_load_n(&rp->gid[index][1], __ATOMIC_RELAXED);
}

bool dpv__roce_gid_read(struct dpv_roce_port *rp, int index, uint8_t gid[16])
{
	uint64_t w[2];
	uint32_t s;

	do {
		s = read_begin(rp);
		gid_load(rp, index, w);
	} while (read_retry(rp, s));
	memcpy(gid, w, 16);
	return (w[0] | w[1]) != 0;
}

int dpv__roce_gid_get(struct dpv_device *dev, int index, uint8_t gid[16])
{
	if (index < 0 || index >= DPV_ROCE_GID_TBL_LEN)
		return -EINVAL;
	return dpv__roce_gid_read(dev->roce, index, gid) ? 0 : -ENODATA;
}

int dpv__roce_gid_find(struct dpv_device *dev, const uint8_t gid[16])
{
	const struct dpv_roce_port *rp = dev->roce;
	uint64_t want[2], w[2];
	int found;
	uint32_t s;

	memcpy(want, gid, 16);
	if ((want[0] | want[1]) == 0)
		return -ENOENT;
	do {
		s = read_begin(rp);
		found = -ENOENT;
		for (int i = 0; i < DPV_ROCE_GID_TBL_LEN && found < 0; i++) {
			gid_load(rp, i, w);
			if (w[0] == want[0] && w[1] == want[1])
				found = i;
		}
	} while (read_retry(rp, s));
	return found;
}

/* ---- addresses ---- */

static void gid_of_addr(uint8_t gid[16], int family, const uint8_t addr[16])
{
	uint32_t v4;

	if (family == AF_INET) {
		memcpy(&v4, addr, 4);
		dpv__roce_gid_from_ipv4(gid, v4);
	} else {
		memcpy(gid, addr, 16);
	}
}

/* The port's addresses changed: its receive side, filter and queue follow; events. */
static void addrs_changed(struct dpv_roce_port *rp, int delta)
{
	struct dpv_device *dev = rp->dev;
	int before = __atomic_fetch_add(&rp->nb_addr, delta, __ATOMIC_RELEASE);

	/* a port with addresses is a receiver: it is polled to answer ARP and ND */
	if (before == 0 && delta > 0)
		dpv__device_rx_users(dev, 1);
	else if (before + delta == 0)
		dpv__device_rx_users(dev, -1);
	dpv__roce_port_update(rp);
	dpv__device_event(dev, IBV_EVENT_GID_CHANGE);
}

static int addr_add(struct dpv_roce_port *rp, int family, const uint8_t addr[16])
{
	uint8_t gid[16], cur[16];
	int free_index = -1;

	dpv__mutex_assert_held(&rp->lock);
	gid_of_addr(gid, family, addr);
	for (int i = 0; i < DPV_ROCE_GID_TBL_LEN; i++) {
		if (!dpv__roce_gid_read(rp, i, cur)) {
			if (free_index < 0)
				free_index = i;
		} else if (memcmp(cur, gid, 16) == 0) {
			return -EEXIST;
		}
	}
	if (free_index < 0)
		return -ENOSPC;
	gid_write(rp, free_index, gid);
	addrs_changed(rp, 1);
	return free_index;
}

/* Index 0 (the link-local GID of the MAC) is not an address: -ENOENT. */
static int addr_del(struct dpv_roce_port *rp, int family, const uint8_t addr[16])
{
	uint8_t gid[16], cur[16];

	dpv__mutex_assert_held(&rp->lock);
	gid_of_addr(gid, family, addr);
	for (int i = 1; i < DPV_ROCE_GID_TBL_LEN; i++) {
		if (dpv__roce_gid_read(rp, i, cur) && memcmp(cur, gid, 16) == 0) {
			gid_write(rp, i, NULL);
			addrs_changed(rp, -1);
			return 0;
		}
	}
	return -ENOENT;
}

static void apply_config(struct dpv_roce_port *rp)
{
	const struct dpv_config *cfg = dpv__config();
	struct dpv_device *dev = rp->dev;

	for (unsigned int i = 0; i < cfg->nb_port_addrs; i++) {
		const struct dpv_config_addr *a = &cfg->port_addrs[i];
		int rc;

		if (strcmp(a->port, dev->caps.name) != 0 && strcmp(a->port, dev->ibdev.name) != 0)
			continue;
		rc = addr_add(rp, a->family, a->addr);
		if (rc < 0) {
			char text[INET6_ADDRSTRLEN] = "?";

			inet_ntop(a->family, a->addr, text, sizeof(text));
			VERBS_LOG(ERR, "port %s: configured address %s not added: %s", dev->caps.name,
				  text, rc == -EEXIST ? "the port has it already" :
				  "the GID table is full (15 addresses per port)");
		}
	}
}

int dpv__roce_port_init(struct dpv_device *dev)
{
	struct dpv_roce_port *rp = calloc(1, sizeof(*rp));
	uint8_t gid[16];

	if (rp == NULL)
		return -ENOMEM;
	rp->dev = dev;
	TAILQ_INIT(&rp->mcasts);
	pthread_mutex_init(&rp->lock, NULL);
	dpv__spinlock_init(&rp->neigh_lock);
	dpv__spinlock_init(&rp->txq_lock);
	dev->roce = rp;
	dpv__roce_gid_from_mac(gid, dev->caps.mac);
	pthread_mutex_lock(&rp->lock);
	gid_write(rp, 0, gid);
	apply_config(rp);
	pthread_mutex_unlock(&rp->lock);
	return 0;
}

void dpv__roce_port_start(struct dpv_device *dev, bool started)
{
	struct dpv_roce_port *rp = dev->roce;
	uint8_t gid[16], cur[16];

	pthread_mutex_lock(&rp->lock);
	__atomic_store_n(&rp->started, started, __ATOMIC_RELAXED);
	dpv__roce_gid_from_mac(gid, dev->caps.mac);     /* known for sure once started */
	if (started && (!dpv__roce_gid_read(rp, 0, cur) || memcmp(cur, gid, 16) != 0))
		gid_write(rp, 0, gid);
	dpv__roce_port_update(rp);
	pthread_mutex_unlock(&rp->lock);
}

/* "a.b.c.d" or IPv6 text of a port address; the family, or -EINVAL. */
static int parse(struct ibv_context *context, const char *text, uint8_t addr[16])
{
	if (context == NULL || text == NULL)
		return -EINVAL;
	return dpv__ip_parse(text, addr);
}

/* Add (@add) or remove the address @text of @context's port: 0 or a positive errno. */
static int addr_change(struct ibv_context *context, const char *text, bool add)
{
	struct dpv_roce_port *rp;
	uint8_t addr[16];
	int family = parse(context, text, addr), rc;

	if (family < 0)
		return EINVAL;
	rp = to_dctx(context)->dev->roce;
	pthread_mutex_lock(&rp->lock);
	rc = add ? addr_add(rp, family, addr) : addr_del(rp, family, addr);
	pthread_mutex_unlock(&rp->lock);
	return rc < 0 ? -rc : 0;
}

DPV_EXPORT int dpv_port_add_addr(struct ibv_context *context, const char *text)
{
	DPV_FORK_REFUSE(ENODEV);
	return addr_change(context, text, true);
}

DPV_EXPORT int dpv_port_del_addr(struct ibv_context *context, const char *text)
{
	DPV_FORK_REFUSE(ENODEV);
	return addr_change(context, text, false);
}

/* ---- the port underneath ---- */

/* The solicited-node multicast MAC of each IPv6 GID (33:33:ff + its last three bytes), where
 * Neighbor Solicitations for it arrive (RFC 4291 2.7.1, RFC 2464 7). */
static unsigned int solicited_macs(struct dpv_roce_port *rp, uint8_t macs[][6])
{
	unsigned int n = 0;
	uint8_t gid[16], ip[16];

	for (int i = 0; i < DPV_ROCE_GID_TBL_LEN; i++) {
		if (!dpv__roce_gid_read(rp, i, gid) || dpv__roce_gid_to_ip(gid, ip) != AF_INET6)
			continue;
		uint8_t mac[6] = { 0x33, 0x33, 0xFF, gid[13], gid[14], gid[15] };
		bool dup = false;

		for (unsigned int j = 0; j < n; j++)
			dup |= memcmp(macs[j], mac, 6) == 0;
		if (!dup)
			memcpy(macs[n++], mac, 6);
	}
	return n;
}

void dpv__roce_port_update(struct dpv_roce_port *rp)
{
	struct dpv_device *dev = rp->dev;
	uint8_t macs[DPV_ROCE_GID_TBL_LEN + DPV_MAX_MCAST_GRP][6];
	unsigned int n;
	int rc;

	dpv__mutex_assert_held(&rp->lock);
	if (!__atomic_load_n(&rp->started, __ATOMIC_RELAXED)) {
		dpv__spinlock_lock(&rp->txq_lock);
		if (rp->txq != NULL)
			dev->ops->txq_detach(rp->txq);
		__atomic_store_n(&rp->txq, NULL, __ATOMIC_RELEASE);
		dpv__spinlock_unlock(&rp->txq_lock);
		return;
	}
	/* ND is answered once the port has an address: then its GIDs' solicitations must come */
	n = __atomic_load_n(&rp->nb_addr, __ATOMIC_RELAXED) > 0 ? solicited_macs(rp, macs) : 0;
	/* and the groups its UD QPs are attached to (ud_qp.c) */
	n += dpv__ud_mcast_macs(dev, macs + n, RTE_DIM(macs) - n);
	rc = dev->ops->rx_mcast_set == NULL ? 0 : dev->ops->rx_mcast_set(dev->port, macs, n);
	if (rc != 0)
		VERBS_LOG(WARNING, "port %s: cannot receive IPv6 solicited-node or UD group "
			  "multicast (%s): peers may not resolve its IPv6 addresses, groups may "
			  "not reach its QPs; enable promiscuous mode", dev->caps.name,
			  strerror(-rc));
}

void dpv__roce_port_refresh(struct dpv_device *dev)
{
	struct dpv_roce_port *rp = dev->roce;

	pthread_mutex_lock(&rp->lock);
	dpv__roce_port_update(rp);
	pthread_mutex_unlock(&rp->lock);
}

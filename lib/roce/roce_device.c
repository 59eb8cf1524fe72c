/* SPDX-License-Identifier: BSD-3-Clause */
/* RoCEv2 on a device, as the verbs core sees it: the device hooks (verbs_transport.h) that
 * make and start a port's RoCE state (roce_addr.c), fill the attributes and counters RoCE
 * owns (active MTU, GID table, the demux's and ARP/ND's counters), destroy the address handles
 * a closing context left; the GID query verbs; and the mbuf flag
 * of loopback frames built without their ICRC. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf_dyn.h>

#include "dpv_roce.h"
#include "roce_ud.h"

uint64_t dpv__loop_no_icrc;

/* Register the flag once a process, at the first device: the memory DPDK keeps for it is
 * there from the first open on, as the EAL's is. Without a bit left nothing is left out. */
static void loop_flag_init(void)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static const struct rte_mbuf_dynflag flag = { .name = "dpv_loop_no_icrc" };
	int bit;

	if (__atomic_load_n(&dpv__loop_no_icrc, __ATOMIC_RELAXED) != 0)
		return;
	pthread_mutex_lock(&lock);
	bit = rte_mbuf_dynflag_register(&flag);        /* the same bit again when registered */
	if (bit >= 0)
		__atomic_store_n(&dpv__loop_no_icrc, 1ull << bit, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&lock);
}

/* The RoCE MTU of the port, as rxe derives it (dpv__roce_active_mtu); a port too small for
 * even 256 bytes of RoCE payload still says 256 (enum ibv_mtu has nothing below). */
static enum ibv_mtu ib_mtu_of(uint32_t mtu)
{
	int ib = dpv__roce_active_mtu(mtu);

	return ib >= IBV_MTU_256 ? (enum ibv_mtu)ib : IBV_MTU_256;
}

/* An empty entry reads as zeros, as rdma-core reads it from sysfs; an index outside the
 * table is EINVAL. */
DPV_EXPORT int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index,
			     union ibv_gid *gid)
{
	int rc;

	DPV_FORK_REFUSE(ENODEV);
	if (context == NULL || gid == NULL || port_num != 1)
		return EINVAL;
	rc = dpv__roce_gid_get(to_dctx(context)->dev, index, gid->raw);
	if (rc == -ENODATA)
		memset(gid, 0, sizeof(*gid));
	return rc == -EINVAL ? EINVAL : 0;
}

/* Every entry is RoCE v2, as rxe's (the port has no netdev: ndev_ifindex 0). ENODATA for an
 * empty entry inside the table, EINVAL outside it (as the kernel's GID query). */
DPV_EXPORT int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num,
				 uint32_t gid_index, struct ibv_gid_entry *entry, uint32_t flags,
				 size_t entry_size)
{
	struct ibv_gid_entry e = { .gid_index = gid_index, .port_num = port_num,
				   .gid_type = IBV_GID_TYPE_ROCE_V2 };
	int rc;

	DPV_FORK_REFUSE(ENODEV);
	if (context == NULL || entry == NULL || flags != 0 || entry_size < sizeof(e) ||
	    port_num != 1 || gid_index >= DPV_ROCE_GID_TBL_LEN)
		return EINVAL;
	rc = dpv__roce_gid_get(to_dctx(context)->dev, (int)gid_index, e.gid.raw);
	if (rc != 0)
		return -rc;
	memcpy(entry, &e, sizeof(e));
	return 0;
}

/* The valid entries of every port (there is one), in index order: how many, -EINVAL when
 * they do not fit in @max_entries (as the kernel's GID table query). */
DPV_EXPORT ssize_t _ibv_query_gid_table(struct ibv_context *context, struct ibv_gid_entry *entries,
					size_t max_entries, uint32_t flags, size_t entry_size)
{
	struct ibv_gid_entry e[DPV_ROCE_GID_TBL_LEN];
	size_t n = 0;

	DPV_FORK_REFUSE(-ENODEV);
	if (context == NULL || entries == NULL || flags != 0 || entry_size < sizeof(*entries) ||
	    max_entries == 0)
		return -EINVAL;
	for (uint32_t i = 0; i < DPV_ROCE_GID_TBL_LEN; i++)
		if (_ibv_query_gid_ex(context, 1, i, &e[n], 0, sizeof(e[n])) == 0)
			n++;
	if (n > max_entries)
		return -EINVAL;
	/* entry_size may be larger than the struct (a newer caller): its stride */
	for (size_t i = 0; i < n; i++)
		memcpy((char *)entries + i * entry_size, &e[i], sizeof(e[i]));
	return (ssize_t)n;
}


static void roce_start(struct dpv_device *dev, bool started)
{
	if (started)
		loop_flag_init();
	dpv__roce_port_start(dev, started);
}

static void roce_query_port(struct dpv_device *dev, struct ibv_port_attr *a)
{
	a->active_mtu = ib_mtu_of(dev->caps.mtu);
	a->gid_tbl_len = DPV_ROCE_GID_TBL_LEN;
}

static void roce_stats(struct dpv_device *dev, struct dpv_port_stats *s)
{
	const struct dpv_roce_counters *c = &dev->roce->cnt;

	s->rx_roce = __atomic_load_n(&c->rx, __ATOMIC_RELAXED);
	s->rx_roce_bad_icrc = __atomic_load_n(&c->rx_bad_icrc, __ATOMIC_RELAXED);
	s->rx_roce_malformed = __atomic_load_n(&c->rx_malformed, __ATOMIC_RELAXED);
	s->rx_roce_no_qp = __atomic_load_n(&c->rx_no_qp, __ATOMIC_RELAXED);
	s->rx_roce_bad_qkey = __atomic_load_n(&c->rx_bad_qkey, __ATOMIC_RELAXED);
	s->tx_roce_loopback = __atomic_load_n(&c->tx_loopback, __ATOMIC_RELAXED);
	s->tx_ud_oversize = __atomic_load_n(&c->tx_oversize, __ATOMIC_RELAXED);
	dpv__roce_neigh_stats(dev, &s->tx_nd, &s->tx_nd_dropped, &s->rx_nd, &s->rx_nd_malformed);
}

/* After the QPs that may use them: the address handles a closing context left. */
static unsigned int roce_release(struct dpv_context *ctx)
{
	unsigned int n, done = 0;
	void **v = dpv__objset_take(ctx, &ctx->ahs, &n);

	for (unsigned int i = 0; i < n; i++)
		done += ibv_destroy_ah(v[i]) == 0;
	free(v);
	return done;
}

static const struct dpv_device_hooks roce_hooks = {
	.name = "roce",
	.init = dpv__roce_port_init,
	.start = roce_start,
	.query_port = roce_query_port,
	.stats = roce_stats,
	.release_after_qps = roce_release,
};
DPV_DEVICE_HOOKS_REGISTER(roce, roce_hooks)

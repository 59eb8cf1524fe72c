/* SPDX-License-Identifier: BSD-3-Clause */
/* Fault injection on a device's port (lib/engine/fault.c does the work on bursts): the
 * configuration's faults at port start, dpv_set_port_faults / dpv_query_port_faults, and the
 * transmit side the RoCE transports call. The receive side runs in dpv__port_rx_poll under
 * the port's rx_lock, which a change of its rates takes too. */
#include <errno.h>
#include <string.h>

#include <rte_mbuf.h>

#include "verbs_base.h"
#include "verbs_device.h"
#include "verbs_fork.h"

static int set_dir(struct dpv_device *dev, int i, const struct dpv_fault_rates *r, uint64_t seed)
{
	dpv_spinlock_t *lk = i == 0 ? &dev->rx_lock : &dev->fault[1].lock;
	int rc;

	dpv__spinlock_lock(lk);
	rc = dpv__fault_set(&dev->fault[i], r, seed);
	if (rc == 0) {
		dev->fault_seed[i] = seed;
		/* a direction turned off still lets out the frames it holds (dpv__port_rx_poll
		 * keeps calling it while some are held) */
		__atomic_store_n(&dev->fault_on[i], dpv__fault_rates_on(r) ||
				 dev->fault[i].nb_held > 0, __ATOMIC_RELEASE);
	}
	dpv__spinlock_unlock(lk);
	return rc;
}

void dpv__device_faults_start(struct dpv_device *dev)
{
	const struct dpv_config *c = dpv__config();
	struct dpv_fault_rates r = {
		.drop_ppm = c->fault_drop_ppm, .dup_ppm = c->fault_dup_ppm,
		.reorder_ppm = c->fault_reorder_ppm, .corrupt_ppm = c->fault_corrupt_ppm,
	}, none = { 0 };

	dpv__spinlock_init(&dev->fault[1].lock);
	for (int i = 0; i < 2; i++) {
		memset(&dev->fault[i].c, 0, sizeof(dev->fault[i].c));
		set_dir(dev, i, c->fault_dirs & (1u << i) ? &r : &none, c->fault_seed + (uint64_t)i);
	}
	if (dev->fault_on[0] || dev->fault_on[1])
		VERBS_LOG(WARNING, "device %s: fault injection on (drop %u, dup %u, reorder %u, "
			  "corrupt %u ppm, directions %u, seed %u)", dev->ibdev.name,
			  r.drop_ppm, r.dup_ppm, r.reorder_ppm, r.corrupt_ppm, c->fault_dirs,
			  c->fault_seed);
}

void dpv__device_faults_stop(struct dpv_device *dev)
{
	for (int i = 0; i < 2; i++) {
		dpv__fault_drain(&dev->fault[i]);
		__atomic_store_n(&dev->fault_on[i], false, __ATOMIC_RELEASE);
	}
}

uint16_t dpv__device_fault_tx(struct dpv_device *dev, struct rte_mbuf **pkts, uint16_t n,
			      uint16_t cap)
{
	if (likely(!__atomic_load_n(&dev->fault_on[1], __ATOMIC_ACQUIRE)))
		return n;
	dpv__spinlock_lock(&dev->fault[1].lock);
	n = dpv__fault_apply(&dev->fault[1], pkts, n, cap, NULL);
	if (!dpv__fault_rates_on(&dev->fault[1].r) && dev->fault[1].nb_held == 0)
		__atomic_store_n(&dev->fault_on[1], false, __ATOMIC_RELAXED);
	dpv__spinlock_unlock(&dev->fault[1].lock);
	return n;
}

DPV_EXPORT int dpv_set_port_faults(struct ibv_context *context, unsigned int dirs,
				   const struct dpv_faults *f)
{
	struct dpv_context *ctx = to_dctx(context);
	struct dpv_fault_rates r;

	DPV_FORK_REFUSE(ENODEV);
	if (ctx == NULL || f == NULL || dirs == 0 || (dirs & ~3u) != 0)
		return EINVAL;
	r = (struct dpv_fault_rates){ f->drop_ppm, f->dup_ppm, f->reorder_ppm, f->corrupt_ppm };
	if (r.drop_ppm > 1000000 || r.dup_ppm > 1000000 || r.reorder_ppm > 1000000 ||
	    r.corrupt_ppm > 1000000)
		return EINVAL;
	for (int i = 0; i < 2; i++)
		if (dirs & (1u << i))
			set_dir(ctx->dev, i, &r, f->seed);
	return 0;
}

DPV_EXPORT int dpv_query_port_faults(struct ibv_context *context, enum dpv_fault_dirs dir,
				     struct dpv_faults *f, struct dpv_fault_stats *st)
{
	struct dpv_context *ctx = to_dctx(context);
	struct dpv_device *dev;
	dpv_spinlock_t *lk;
	int i;

	DPV_FORK_REFUSE(ENODEV);
	if (ctx == NULL || (dir != DPV_FAULT_RX && dir != DPV_FAULT_TX))
		return EINVAL;
	dev = ctx->dev;
	i = dir == DPV_FAULT_RX ? 0 : 1;
	lk = i == 0 ? &dev->rx_lock : &dev->fault[1].lock;
	dpv__spinlock_lock(lk);
	if (f != NULL)
		*f = (struct dpv_faults){
			.drop_ppm = dev->fault[i].r.drop_ppm, .dup_ppm = dev->fault[i].r.dup_ppm,
			.reorder_ppm = dev->fault[i].r.reorder_ppm,
			.corrupt_ppm = dev->fault[i].r.corrupt_ppm, .seed = dev->fault_seed[i],
		};
	if (st != NULL)
		*st = (struct dpv_fault_stats){
			dev->fault[i].c.seen, dev->fault[i].c.dropped, dev->fault[i].c.duplicated,
			dev->fault[i].c.reordered, dev->fault[i].c.corrupted,
		};
	dpv__spinlock_unlock(lk);
	return 0;
}

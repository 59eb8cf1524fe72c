/* SPDX-License-Identifier: BSD-3-Clause */
/* Verbs devices: one per DPDK port of every registered driver. Listing starts DPDK (lazily);
 * opening starts the port; closing the last context detaches every port and frees the pools. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_version.h>

#include <rte_ethdev.h>

#include "verbs_priv.h"

RTE_LOG_REGISTER(dpv_logtype_verbs, lib.dpverbs.verbs, NOTICE);

/* Software TSO backs every port: as large as mlx5's hardware TSO. */
#define DPV_MAX_TSO 262144

static pthread_mutex_t dev_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dpv_device **devices;     /* every device ever seen; never freed while running */
static int nb_devices;
static int nb_open;                      /* contexts open on any device */

/* Each layer's state on a new device (device lock held); -ENOMEM. */
static int device_hooks_init(struct dpv_device *d)
{
	for (int i = 0; dpv__device_hooks[i] != NULL; i++)
		if (dpv__device_hooks[i]->init != NULL && dpv__device_hooks[i]->init(d) != 0)
			return -ENOMEM;
	return 0;
}

static struct dpv_device *device_find_or_add(const struct dpv_driver_ops *ops, int index,
					     struct dpv_port *port, const struct dpv_port_caps *caps)
{
	struct dpv_device *d, **grown;

	for (int i = 0; i < nb_devices; i++) {
		d = devices[i];
		if (d->ops == ops && strcmp(d->caps.name, caps->name) == 0)
			goto found;
	}
	d = calloc(1, sizeof(*d));
	grown = realloc(devices, (nb_devices + 1) * sizeof(*devices));
	if (d == NULL || grown == NULL) {
		free(d);
		if (grown != NULL)
			devices = grown;
		return NULL;
	}
	devices = grown;
	devices[nb_devices++] = d;
	d->ops = ops;
	d->ibdev.node_type = IBV_NODE_CA;
	d->ibdev.transport_type = IBV_TRANSPORT_IB;
	snprintf(d->ibdev.name, sizeof(d->ibdev.name), "dpv_%.59s", caps->name);
	snprintf(d->ibdev.dev_name, sizeof(d->ibdev.dev_name), "dpv_%.59s", caps->name);
	snprintf(d->ibdev.dev_path, sizeof(d->ibdev.dev_path), "dpdk:%s", caps->name);
	snprintf(d->ibdev.ibdev_path, sizeof(d->ibdev.ibdev_path), "dpdk:%s", caps->name);
	dpv__spinlock_init(&d->rx_lock);
	dpv__spinlock_init(&d->raw_loop_lock);
	dpv__device_service_init(d);
	dpv__spinlock_init(&d->txhs_lock);
	TAILQ_INIT(&d->txhs);
	dpv__spinlock_init(&d->qpns.lock);
	dpv__timer_list_init(&d->timers);
	d->caps = *caps;
	if (device_hooks_init(d) != 0) {
		nb_devices--;             /* never listed: nothing refers to it yet */
		free(d);
		return NULL;
	}
found:
	/* an open device's port runs and does not change: receive progress (another thread,
	 * the progress thread) reads port and caps while a scan goes on */
	if (d->open_count == 0) {
		d->index = index;
		d->port = port;
		d->caps = *caps;
	}
	return d;
}

/* Start DPDK if needed and refresh the devices of every driver's present ports. */
int dpv__devices_scan(struct dpv_device ***list, int *n)
{
	const struct dpv_driver *drv;
	struct dpv_device **out;
	int rc = dpv__eal_ensure(), count = 0;
	static bool told;

	if (rc != 0)
		return rc;
	pthread_mutex_lock(&dev_lock);
	TAILQ_FOREACH(drv, dpv__drivers(), next) {
		int np = drv->ops->port_count();

		for (int i = 0; i < np; i++) {
			struct dpv_port_caps caps;
			struct dpv_port *port = drv->ops->port_get(i, &caps);

			if (port != NULL && device_find_or_add(drv->ops, i, port, &caps) == NULL)
				rc = -ENOMEM;
		}
	}
	out = calloc(nb_devices + 1, sizeof(*out));
	if (out == NULL)
		rc = -ENOMEM;
	for (int i = 0; rc == 0 && i < nb_devices; i++)
		if (devices[i]->open_count > 0 ||
		    devices[i]->ops->port_get(devices[i]->index, &devices[i]->caps) != NULL)
			out[count++] = devices[i];
	pthread_mutex_unlock(&dev_lock);
	if (rc != 0) {
		free(out);
		return rc;
	}
	if (count == 0 && !told) {
		told = true;
		VERBS_LOG(NOTICE, "no DPDK port, so no verbs device: name one in DPV_EAL_ARGS, e.g. "
			  "--vdev=net_tap0 or -a 0000:01:00.0 (EAL arguments: %s)", dpv__eal_args_used());
	}
	*list = out;
	*n = count;
	return 0;
}

void dpv__devices_foreach_open(void (*fn)(struct dpv_device *dev, void *arg), void *arg)
{
	pthread_mutex_lock(&dev_lock);
	for (int i = 0; i < nb_devices; i++)
		if (devices[i]->open_count > 0)
			fn(devices[i], arg);
	pthread_mutex_unlock(&dev_lock);
}

DPV_EXPORT struct ibv_device **ibv_get_device_list(int *num_devices)
{
	struct dpv_device **list;
	int n, rc;

	dpv__fork_env_init();
	rc = dpv__devices_scan(&list, &n);
	if (rc != 0)
		return dpv__fail_ptr(rc);
	if (num_devices != NULL)
		*num_devices = n;
	/* struct ibv_device is the first member: the arrays are interchangeable. */
	return (struct ibv_device **)list;
}

DPV_EXPORT void ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

DPV_EXPORT const char *ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}

static __be64 mac_to_eui64(const uint8_t *mac)
{
	uint8_t e[8] = { mac[0] ^ 0x02, mac[1], mac[2], 0xff, 0xfe, mac[3], mac[4], mac[5] };
	__be64 guid;

	memcpy(&guid, e, sizeof(guid));
	return guid;
}

DPV_EXPORT __be64 ibv_get_device_guid(struct ibv_device *device)
{
	return mac_to_eui64(to_ddev(device)->caps.mac);
}

DPV_EXPORT int ibv_get_device_index(struct ibv_device *device)
{
	int idx = -1;

	DPV_FORK_REFUSE(-1);
	pthread_mutex_lock(&dev_lock);
	for (int i = 0; i < nb_devices; i++)
		if (devices[i] == to_ddev(device))
			idx = i;
	pthread_mutex_unlock(&dev_lock);
	return idx;
}

/* The port behind @d, probed again if dpverbs detached it after the last close. */
static int device_start(struct dpv_device *d)
{
	struct dpv_port_caps caps;
	int rc = 0;

	if (d->open_count > 0) {
		/* the port runs, other threads may be receiving from it: only its MTU is read
		 * again (a program may have changed it with rte_eth_dev_set_mtu) */
		if (d->ops->port_get(d->index, &caps) != NULL) {
			__atomic_store_n(&d->caps.mtu, caps.mtu, __ATOMIC_RELAXED);
			__atomic_store_n(&d->caps.max_frame, caps.max_frame, __ATOMIC_RELAXED);
		}
		return 0;
	}
	d->ops->port_count();
	d->port = d->ops->port_get(d->index, &caps);
	if (d->port == NULL || strcmp(caps.name, d->caps.name) != 0) {
		VERBS_LOG(ERR, "device %s: its DPDK port %s is gone", d->ibdev.name, d->caps.name);
		return -ENODEV;
	}
	{
		const struct dpv_port_events ev = { .link = dpv__device_link_event, .arg = d };

		rc = d->ops->port_start(d->port, &ev);
		/* every start begins with the configured policy and nothing forced */
		__atomic_store_n(&d->offload.policy, (int)dpv__config()->offload_policy,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&d->offload.sw_forced, 0, __ATOMIC_RELAXED);
		dpv__device_faults_start(d);
	}
	if (rc == 0) {
		d->ops->port_get(d->index, &d->caps);   /* caps known only once started */
		rc = dpv__device_rx_init(d);          /* its receive queues */
	}
	if (rc == 0) {
		DPV_HOOKS_CALL(start, d, true);
		dpv__progress_thread_add(d);
	}
	return rc;
}

DPV_EXPORT struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct dpv_device *d = to_ddev(device);
	struct dpv_context *ctx;
	struct stat st;
	int rc = dpv__eal_ensure();

	if (rc != 0)
		return dpv__fail_ptr(rc);
	if (d == NULL)
		return dpv__fail_ptr(-EINVAL);
	ctx = calloc(1, sizeof(*ctx));
	if (ctx == NULL)
		return dpv__fail_ptr(-ENOMEM);
	/* cmd_fd: a descriptor of the context's own (no uverbs file here), close-on-exec as
	 * rdma-core opens its uverbs file; its inode tells ibv_import_device the context */
	ctx->vctx.context.cmd_fd = memfd_create("dpverbs-context", MFD_CLOEXEC);
	if (ctx->vctx.context.cmd_fd < 0 || fstat(ctx->vctx.context.cmd_fd, &st) != 0) {
		rc = -errno;
		if (ctx->vctx.context.cmd_fd >= 0)
			close(ctx->vctx.context.cmd_fd);
		free(ctx);
		return dpv__fail_ptr(rc);
	}
	ctx->cmd_dev = st.st_dev;
	ctx->cmd_ino = st.st_ino;
	ctx->dev = d;                       /* before dpv__async_init makes it visible to events */
	dpv__spinlock_init(&ctx->qps_lock);
	TAILQ_INIT(&ctx->qps);
	pthread_mutex_lock(&dev_lock);
	rc = device_start(d);
	if (rc == 0)
		rc = dpv__async_init(ctx);
	if (rc == 0 && (rc = dpv__mr_table_init(ctx)) != 0)
		dpv__async_fini(ctx);
	if (rc == 0) {
		__atomic_fetch_add(&d->open_count, 1, __ATOMIC_RELEASE);
		dpv__device_raw_loop_update(d);
		nb_open++;
	}
	pthread_mutex_unlock(&dev_lock);
	if (rc != 0) {
		close(ctx->vctx.context.cmd_fd);
		free(ctx);
		return dpv__fail_ptr(rc);
	}
	pthread_mutex_init(&ctx->lock, NULL);
	dpv__context_ops_init(&ctx->vctx);
	DPV_HOOKS_CALL(context_init, ctx, &ctx->vctx);
	ctx->vctx.context.device = device;
	ctx->vctx.context.num_comp_vectors = 1;
	pthread_mutex_init(&ctx->vctx.context.mutex, NULL);
	ctx->vctx.context.abi_compat = __VERBS_ABI_IS_EXTENDED;
	ctx->vctx.sz = sizeof(struct verbs_context);
	return &ctx->vctx.context;
}

/* Called with dev_lock held when no context is open any more, and at exit. */
static void devices_release(void)
{
	const struct dpv_driver *drv;

	for (int i = 0; i < nb_devices; i++)
		dpv__device_loop_fini(devices[i]);   /* its mbufs, before their pools go */
	TAILQ_FOREACH(drv, dpv__drivers(), next)
		drv->ops->ports_close();
	dpv__ranges_release_all();
	dpv__tx_pools_release();
	dpv__pools_release();
}

DPV_EXPORT int ibv_close_device(struct ibv_context *context)
{
	struct dpv_context *ctx = to_dctx(context);
	struct dpv_device *d;

	DPV_FORK_NOOP(0);
	if (ctx == NULL)
		return EINVAL;
	pthread_mutex_lock(&dev_lock);
	if (ctx->imports > 0) {          /* an ibv_import_device of it: the context stays */
		ctx->imports--;
		pthread_mutex_unlock(&dev_lock);
		return 0;
	}
	pthread_mutex_unlock(&dev_lock);
	dpv__context_release(ctx);       /* what the application left, as rdma-core */
	d = ctx->dev;
	pthread_mutex_lock(&dev_lock);
	DPV_REF_PUT(&d->open_count);
	dpv__device_raw_loop_update(d);
	if (d->open_count == 0) {
		dpv__spinlock_lock(&d->rx_lock);
		dpv__device_faults_stop(d);
		dpv__spinlock_unlock(&d->rx_lock);
		dpv__progress_thread_del(d);  /* before the port stops under its poll */
		DPV_HOOKS_CALL(start, d, false);
		d->ops->port_stop(d->port);
	}
	if (--nb_open == 0)
		devices_release();
	pthread_mutex_unlock(&dev_lock);
	dpv__mr_table_fini(ctx);
	dpv__async_fini(ctx);
	pthread_mutex_destroy(&ctx->lock);
	close(ctx->vctx.context.cmd_fd);
	free(ctx);
	return 0;
}

/* ibv_import_device(3): the context whose cmd_fd (or a dup of it) @cmd_fd is, in this
 * process: the same context again, which then takes one more ibv_close_device before it
 * closes (a kernel import shares every object of the context; so does this). A descriptor
 * of anything else, a context of another process included: EOPNOTSUPP; no descriptor:
 * EBADF. */
DPV_EXPORT struct ibv_context *ibv_import_device(int cmd_fd)
{
	struct dpv_context *ctx;
	struct stat st;

	DPV_FORK_REFUSE(NULL);
	if (fstat(cmd_fd, &st) != 0)
		return NULL;                     /* errno EBADF */
	pthread_mutex_lock(&dev_lock);
	ctx = dpv__context_by_file(&st);
	if (ctx != NULL)
		ctx->imports++;
	pthread_mutex_unlock(&dev_lock);
	return ctx != NULL ? &ctx->vctx.context : dpv__fail_ptr(-EOPNOTSUPP);
}

static void verbs_stop(void)
{
	dpv__progress_thread_stop();         /* nothing polls the ports while they close */
	pthread_mutex_lock(&dev_lock);
	devices_release();
	pthread_mutex_unlock(&dev_lock);
	dpv__qp_zombies_free();
}

__attribute__((constructor)) static void verbs_register_stop(void)
{
	dpv__eal_at_stop(verbs_stop);
}

int dpv__devices_dma_map(void *va, uint64_t len, bool map)
{
	unsigned int mode = dpv__config()->mr_dma_map;
	int rc = 0;

	pthread_mutex_lock(&dev_lock);
	for (int i = 0; i < nb_devices && rc == 0; i++) {
		struct dpv_device *d = devices[i];

		if (d->port == NULL || !(mode == 2 || d->caps.needs_dma_map))
			continue;
		rc = map ? d->ops->dma_map(d->port, va, (uintptr_t)va, len) :
			   d->ops->dma_unmap(d->port, va, (uintptr_t)va, len);
	}
	pthread_mutex_unlock(&dev_lock);
	return rc;
}

/* ---- queries ---- */

/* Software backs every offload unless the policy forbids it; then only the port's count. */
bool dpv__device_ip_csum(const struct dpv_device *d)
{
	return dpv__tx_ip_csum_allowed(&d->caps, &d->offload);
}

uint32_t dpv__device_max_tso(const struct dpv_device *d)
{
	if (dpv__offload_policy_of(&d->offload) != DPV_OFFLOAD_POLICY_HARDWARE)
		return DPV_MAX_TSO;
	return d->caps.tx_offloads & RTE_ETH_TX_OFFLOAD_TCP_TSO ? d->caps.max_tso : 0;
}

int dpv__device_txh_open(struct dpv_device *d, struct dpv_txh *h, void (*released)(void *))
{
	int rc = dpv__txh_open(h, d->ops, d->port, &d->caps, &d->offload, released);

	if (rc != 0)
		return rc;
	dpv__spinlock_lock(&d->txhs_lock);
	TAILQ_INSERT_TAIL(&d->txhs, h, next);
	dpv__spinlock_unlock(&d->txhs_lock);
	return 0;
}

void dpv__device_txh_close(struct dpv_device *d, struct dpv_txh *h)
{
	dpv__spinlock_lock(&d->txhs_lock);
	TAILQ_REMOVE(&d->txhs, h, next);
	dpv__tx_counters_add(&d->txhs_gone, &h->cnt);
	dpv__spinlock_unlock(&d->txhs_lock);
	dpv__txh_close(h);
}

/* The RTE_ETH_TX_OFFLOAD_* bits of a port as enum dpv_offload. */
static uint32_t offloads_of(uint64_t capa)
{
	return (capa & RTE_ETH_TX_OFFLOAD_IPV4_CKSUM ? DPV_OFFLOAD_IPV4_CKSUM : 0) |
	       (capa & RTE_ETH_TX_OFFLOAD_TCP_CKSUM ? DPV_OFFLOAD_TCP_CKSUM : 0) |
	       (capa & RTE_ETH_TX_OFFLOAD_UDP_CKSUM ? DPV_OFFLOAD_UDP_CKSUM : 0) |
	       (capa & RTE_ETH_TX_OFFLOAD_TCP_TSO ? DPV_OFFLOAD_TCP_TSO : 0);
}

static void fill_device_attr(struct dpv_context *ctx, struct ibv_device_attr *a)
{
	const struct dpv_config *cfg = dpv__config();
	const struct dpv_port_caps *caps = &ctx->dev->caps;

	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "%s %s", rte_version(), caps->driver);
	a->node_guid = mac_to_eui64(caps->mac);
	a->sys_image_guid = a->node_guid;
	a->max_mr_size = UINT64_MAX;
	a->page_size_cap = ~0xfffULL;
	/* 0xffffff, rxe's: no IEEE OUI of a hardware vendor (doc/api.md, "Device attributes") */
	a->vendor_id = DPV_VENDOR_ID;
	a->vendor_part_id = caps->port_id;
	a->max_qp = DPV_MAX_QP - 2;              /* QPNs 0 and 1 are reserved */
	a->max_qp_wr = (int)cfg->max_qp_wr;
	a->device_cap_flags = (dpv__device_ip_csum(ctx->dev) ? IBV_DEVICE_RAW_IP_CSUM : 0) |
				IBV_DEVICE_XRC | IBV_DEVICE_MEM_WINDOW |
				IBV_DEVICE_MEM_WINDOW_TYPE_2B |
				IBV_DEVICE_RC_RNR_NAK_GEN |  /* lib/roce/rc_resp.c: no WQE, RNR NAK */
				IBV_DEVICE_SRQ_RESIZE;       /* srq.c: IBV_SRQ_MAX_WR resizes */
	a->max_sge = 30;
	a->max_sge_rd = 30;                      /* a READ scatters into a send WR's SGEs */
	a->max_srq = 65536;
	a->max_srq_wr = (int)cfg->max_qp_wr;
	a->max_srq_sge = 30;
	a->max_cq = 65536;
	a->max_cqe = (int)cfg->max_cqe;
	a->max_mr = (int)cfg->max_mr;
	a->max_mw = (int)cfg->max_mr;            /* not counted: bounded by memory only */
	a->max_pd = 65536;
	a->atomic_cap = IBV_ATOMIC_HCA;          /* RC atomics, atomic to each other (lib/roce) */
	a->max_qp_rd_atom = DPV_MAX_RD_ATOM;
	a->max_qp_init_rd_atom = DPV_MAX_RD_ATOM;
	a->max_res_rd_atom = DPV_MAX_RD_ATOM * a->max_qp;
	a->max_pkeys = 1;
	a->max_ah = DPV_MAX_AH;
	a->max_mcast_grp = DPV_MAX_MCAST_GRP;
	a->max_mcast_qp_attach = DPV_MAX_MCAST_QP_ATTACH;
	a->max_total_mcast_qp_attach = DPV_MAX_MCAST_GRP * DPV_MAX_MCAST_QP_ATTACH;
	a->phys_port_cnt = 1;
}

DPV_EXPORT int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *attr)
{
	DPV_FORK_REFUSE(ENODEV);
	if (context == NULL || attr == NULL)
		return EINVAL;
	fill_device_attr(to_dctx(context), attr);
	return 0;
}


int dpv_query_device_ex(struct ibv_context *context, const struct ibv_query_device_ex_input *in,
			struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ibv_device_attr_ex ex = { 0 };

	DPV_FORK_REFUSE(ENODEV);
	if (in != NULL && in->comp_mask != 0)
		return EINVAL;
	if (attr_size < sizeof(struct ibv_device_attr))
		return EINVAL;
	fill_device_attr(to_dctx(context), &ex.orig_attr);
	ex.device_cap_flags_ex = ex.orig_attr.device_cap_flags;
	ex.tso_caps.max_tso = dpv__device_max_tso(to_dctx(context)->dev);
	/* UD TSO: each segment one message (lib/roce/ud_send.c) */
	ex.tso_caps.supported_qpts = ex.tso_caps.max_tso ?
				     1u << IBV_QPT_RAW_PACKET | 1u << IBV_QPT_UD : 0;
	ex.raw_packet_caps = IBV_RAW_PACKET_CAP_IP_CSUM;
	ex.phys_port_cnt_ex = 1;
	/* RAW_PACKET QPs pace in software at any rate in this range (pace.c) */
	ex.packet_pacing_caps.qp_rate_limit_min = DPV_PACE_MIN_KBPS;
	ex.packet_pacing_caps.qp_rate_limit_max = DPV_PACE_MAX_KBPS;
	ex.packet_pacing_caps.supported_qpts = 1u << IBV_QPT_RAW_PACKET;
	/* completion timestamps count the TSC (64 bits), in kHz as verbs reports clocks */
	ex.completion_timestamp_mask = UINT64_MAX;
	ex.hca_core_clock = dpv__core_clock_khz();
	memcpy(attr, &ex, attr_size < sizeof(ex) ? attr_size : sizeof(ex));
	return 0;
}

/* ibv_query_rt_values_ex(3): the clock completion timestamps count, read now, in
 * raw_clock.tv_nsec (tv_sec 0), as mlx5 returns its free-running counter; comp_mask says
 * what was filled. Unknown request bits: EINVAL. */
int dpv_query_rt_values(struct ibv_context *context, struct ibv_values_ex *values)
{
	DPV_FORK_REFUSE(ENODEV);
	if (context == NULL || values == NULL ||
	    (values->comp_mask & ~(uint32_t)IBV_VALUES_MASK_RAW_CLOCK))
		return EINVAL;
	if (values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK) {
		values->raw_clock.tv_sec = 0;
		values->raw_clock.tv_nsec = (long)rte_rdtsc();
	}
	return 0;
}

/* IB width and speed that multiply to the Ethernet link speed, as mlx5 reports them. */
static void ib_speed_of(uint32_t mbps, uint8_t *width, uint8_t *speed)
{
	static const struct { uint32_t mbps; uint8_t width, speed; } map[] = {
		{ 400000, 8, 64 }, { 200000, 2, 128 }, { 100000, 2, 64 }, { 56000, 2, 16 },
		{ 50000, 2, 32 }, { 40000, 2, 8 }, { 25000, 1, 32 }, { 10000, 1, 8 },
		{ 0, 1, 1 },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (mbps >= map[i].mbps) {
			*width = map[i].width;
			*speed = map[i].speed;
			return;
		}
}

int dpv_query_port(struct ibv_context *context, uint8_t port_num, struct ibv_port_attr *out,
		   size_t attr_len)
{
	struct dpv_context *ctx = to_dctx(context);
	struct ibv_port_attr a = { 0 };
	struct dpv_link link = { 0 };

	DPV_FORK_REFUSE(ENODEV);
	if (port_num != 1 || out == NULL)
		return EINVAL;
	ctx->dev->ops->link_get(ctx->dev->port, &link);
	a.state = link.up ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
	a.max_mtu = IBV_MTU_4096;
	a.active_mtu = IBV_MTU_256;       /* the hooks say more (RoCE: from the port's MTU) */
	a.max_msg_sz = DPV_MAX_MSG_SZ;           /* RC/UC's; UD's is the MTU, RAW's a frame */
	a.pkey_tbl_len = 1;
	ib_speed_of(link.speed_mbps, &a.active_width, &a.active_speed);
	a.phys_state = link.up ? 5 /* LinkUp */ : 3 /* Disabled */;
	a.link_layer = IBV_LINK_LAYER_ETHERNET;
	DPV_HOOKS_CALL(query_port, ctx->dev, &a);
	memcpy(out, &a, attr_len < sizeof(a) ? attr_len : sizeof(a));
	return 0;
}

#undef ibv_query_port
DPV_EXPORT int ibv_query_port(struct ibv_context *context, uint8_t port_num,
			      struct _compat_ibv_port_attr *port_attr)
{
	/* Binaries built before the flags fields existed pass the shorter structure. */
	return dpv_query_port(context, port_num, (struct ibv_port_attr *)port_attr,
			      offsetof(struct ibv_port_attr, flags));
}

DPV_EXPORT int ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index,
			      __be16 *pkey)
{
	DPV_FORK_REFUSE(ENODEV);
	if (context == NULL || pkey == NULL || port_num != 1 || index != 0)
		return EINVAL;
	*pkey = 0xffff;
	return 0;
}

DPV_EXPORT int dpv_query_port_info(struct ibv_context *context, struct dpv_port_info *info)
{
	struct dpv_context *ctx = to_dctx(context);
	const struct dpv_port_caps *c;
	const uint32_t csum = DPV_OFFLOAD_IPV4_CKSUM | DPV_OFFLOAD_TCP_CKSUM |
			      DPV_OFFLOAD_UDP_CKSUM;

	DPV_FORK_REFUSE(ENODEV);
	if (ctx == NULL || info == NULL)
		return EINVAL;
	c = &ctx->dev->caps;
	memset(info, 0, sizeof(*info));
	info->port_id = c->port_id;
	snprintf(info->name, sizeof(info->name), "%s", c->name);
	snprintf(info->driver, sizeof(info->driver), "%s", c->driver);
	info->socket_id = c->socket_id;
	info->port_offloads = offloads_of(c->tx_offloads);
	info->policy = (enum dpv_offload_policy)dpv__offload_policy_of(&ctx->dev->offload);
	info->hw_offloads = info->policy == DPV_OFFLOAD_POLICY_SOFTWARE ? 0 :
			    info->port_offloads & ~dpv__offload_forced(&ctx->dev->offload);
	info->sw_offloads = info->policy == DPV_OFFLOAD_POLICY_HARDWARE ?
			    dpv__offload_forced(&ctx->dev->offload) :
			    csum | DPV_OFFLOAD_TCP_TSO;
	info->tx_done_cleanup = c->tx_done_cleanup;
	info->zero_copy = c->zero_copy;
	info->tx_copy_max = dpv__config()->tx_copy_max;
	info->tx_max_segs = c->max_tx_segs;
	ctx->dev->ops->port_queues(ctx->dev->port, &info->nb_tx_queues, &info->nb_rx_queues);
	info->mtu = c->mtu;
	info->max_frame = c->max_frame;
	return 0;
}

DPV_EXPORT int dpv_set_offload_policy(struct ibv_context *context,
				      enum dpv_offload_policy policy)
{
	struct dpv_context *ctx = to_dctx(context);

	DPV_FORK_REFUSE(ENODEV);
	if (ctx == NULL || (unsigned int)policy > DPV_OFFLOAD_POLICY_HARDWARE)
		return EINVAL;
	__atomic_store_n(&ctx->dev->offload.policy, (int)policy, __ATOMIC_RELAXED);
	return 0;
}

/* Counters of live transmitters are read without their QPs' locks: a snapshot; then what
 * the layers above count (their stats hooks). */
void dpv__device_port_stats(struct dpv_device *d, struct dpv_port_stats *st)
{
	struct dpv_tx_counters sum;
	struct dpv_txh *h;

	dpv__spinlock_lock(&d->txhs_lock);
	sum = d->txhs_gone;
	TAILQ_FOREACH(h, &d->txhs, next)
		dpv__tx_counters_add(&sum, &h->cnt);
	dpv__spinlock_unlock(&d->txhs_lock);
	*st = (struct dpv_port_stats){
		.tx_frames = sum.frames, .tx_bytes = sum.bytes, .tx_copied = sum.copied,
		.tx_zero_copy = sum.zero_copy, .tso_hw = sum.tso_hw, .tso_sw = sum.tso_sw,
		.tso_segments_sw = sum.tso_segments_sw, .csum_hw = sum.csum_hw,
		.csum_sw = sum.csum_sw,
	};
	DPV_HOOKS_CALL(stats, d, st);
}

DPV_EXPORT int dpv_query_port_stats(struct ibv_context *context, struct dpv_port_stats *stats)
{
	struct dpv_context *ctx = to_dctx(context);
	uint64_t cyc[DPV_RXC_STAGES];

	DPV_FORK_REFUSE(ENODEV);
	if (ctx == NULL || stats == NULL)
		return EINVAL;
	dpv__device_port_stats(ctx->dev, stats);
	dpv__device_rx_stats(ctx->dev, &stats->rx_frames, &stats->rx_unsteered, &stats->rx_no_wqe,
			     cyc);
	stats->rx_cycles_burst = cyc[DPV_RXC_BURST];
	stats->rx_cycles_classify = cyc[DPV_RXC_CLASSIFY];
	stats->rx_cycles_copy = cyc[DPV_RXC_COPY];
	stats->rx_cycles_cqe = cyc[DPV_RXC_CQE];
	stats->rx_cycles_free = cyc[DPV_RXC_FREE];
	stats->tsc_hz = rte_get_tsc_hz();
	return 0;
}

DPV_EXPORT const char *dpv_offload_name(enum dpv_offload offload)
{
	switch (offload) {
	case DPV_OFFLOAD_IPV4_CKSUM: return "IPV4_CKSUM";
	case DPV_OFFLOAD_TCP_CKSUM: return "TCP_CKSUM";
	case DPV_OFFLOAD_UDP_CKSUM: return "UDP_CKSUM";
	case DPV_OFFLOAD_TCP_TSO: return "TCP_TSO";
	}
	return "unknown";
}

DPV_EXPORT const char *dpv_eal_args(void)
{
	return dpv__eal_args_used();
}

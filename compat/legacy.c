/* SPDX-License-Identifier: BSD-3-Clause */
/* rdma-core's helpers outside the verbs API that programs and rdma-core's own libraries
 * (librdmacm) still bind to: kernel-ABI structure copies, sysfs file reading, rate
 * conversions. Pure functions; none needs a device. (The fork ranges are lib/verbs/fork.c.) */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/sa.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_sa.h>
#include <rdma/ib_user_verbs.h>

#include "dpv_engine.h"
#include "dpv_compat.h"

/* Kernel address handle attributes (as uverbs returns them) into verbs' form. */
DPV_EXPORT void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst,
					   struct ib_uverbs_ah_attr *src)
{
	memcpy(dst->grh.dgid.raw, src->grh.dgid, sizeof(dst->grh.dgid));
	dst->grh.flow_label = src->grh.flow_label;
	dst->grh.sgid_index = src->grh.sgid_index;
	dst->grh.hop_limit = src->grh.hop_limit;
	dst->grh.traffic_class = src->grh.traffic_class;
	dst->dlid = src->dlid;
	dst->sl = src->sl;
	dst->src_path_bits = src->src_path_bits;
	dst->static_rate = src->static_rate;
	dst->is_global = src->is_global;
	dst->port_num = src->port_num;
}

/* Kernel QP attributes into verbs' form (librdmacm uses it). */
DPV_EXPORT void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst,
					   struct ib_uverbs_qp_attr *src)
{
	dst->cur_qp_state = src->cur_qp_state;
	dst->path_mtu = src->path_mtu;
	dst->path_mig_state = src->path_mig_state;
	dst->qkey = src->qkey;
	dst->rq_psn = src->rq_psn;
	dst->sq_psn = src->sq_psn;
	dst->dest_qp_num = src->dest_qp_num;
	dst->qp_access_flags = src->qp_access_flags;
	dst->cap = (struct ibv_qp_cap){ src->max_send_wr, src->max_recv_wr, src->max_send_sge,
					src->max_recv_sge, src->max_inline_data };
	ibv_copy_ah_attr_from_kern(&dst->ah_attr, &src->ah_attr);
	ibv_copy_ah_attr_from_kern(&dst->alt_ah_attr, &src->alt_ah_attr);
	dst->pkey_index = src->pkey_index;
	dst->alt_pkey_index = src->alt_pkey_index;
	dst->en_sqd_async_notify = src->en_sqd_async_notify;
	dst->sq_draining = src->sq_draining;
	dst->max_rd_atomic = src->max_rd_atomic;
	dst->max_dest_rd_atomic = src->max_dest_rd_atomic;
	dst->min_rnr_timer = src->min_rnr_timer;
	dst->port_num = src->port_num;
	dst->timeout = src->timeout;
	dst->retry_cnt = src->retry_cnt;
	dst->rnr_retry = src->rnr_retry;
	dst->alt_port_num = src->alt_port_num;
	dst->alt_timeout = src->alt_timeout;
}

/* The fields a path record has in both forms, in either direction. */
#define PATH_REC_COPY(dst, src) do { \
	(dst)->dlid = (src)->dlid; (dst)->slid = (src)->slid; \
	(dst)->raw_traffic = (src)->raw_traffic; (dst)->flow_label = (src)->flow_label; \
	(dst)->hop_limit = (src)->hop_limit; (dst)->traffic_class = (src)->traffic_class; \
	(dst)->reversible = (src)->reversible; (dst)->numb_path = (src)->numb_path; \
	(dst)->pkey = (src)->pkey; (dst)->sl = (src)->sl; \
	(dst)->mtu_selector = (src)->mtu_selector; (dst)->mtu = (src)->mtu; \
	(dst)->rate_selector = (src)->rate_selector; (dst)->rate = (src)->rate; \
	(dst)->packet_life_time = (src)->packet_life_time; \
	(dst)->preference = (src)->preference; \
	(dst)->packet_life_time_selector = (src)->packet_life_time_selector; \
} while (0)

/* A kernel SA path record into verbs' form. */
DPV_EXPORT void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst,
					    struct ib_user_path_rec *src)
{
	memcpy(dst->dgid.raw, src->dgid, sizeof(dst->dgid));
	memcpy(dst->sgid.raw, src->sgid, sizeof(dst->sgid));
	PATH_REC_COPY(dst, src);
}

/* A verbs path record into the kernel's form. */
DPV_EXPORT void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst,
					  struct ibv_sa_path_rec *src)
{
	memcpy(dst->dgid, src->dgid.raw, sizeof(src->dgid));
	memcpy(dst->sgid, src->sgid.raw, sizeof(src->sgid));
	PATH_REC_COPY(dst, src);
}

/* The sysfs root: $SYSFS_PATH (unless set-uid), else /sys, as rdma-core. */
DPV_EXPORT const char *ibv_get_sysfs_path(void)
{
	static char path[256];
	const char *env = getuid() == geteuid() ? getenv("SYSFS_PATH") : NULL;
	size_t n;

	if (path[0] != '\0')
		return path;
	snprintf(path, sizeof(path), "%s", env != NULL && env[0] != '\0' ? env : "/sys");
	for (n = strlen(path); n > 1 && path[n - 1] == '/'; n--)
		path[n - 1] = '\0';
	return path;
}

/* Read @dir/@file into @buf without its trailing newline: its length, or -1 with errno. */
DPV_EXPORT int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size)
{
	char path[4096];
	ssize_t len;
	int fd;

	if (snprintf(path, sizeof(path), "%s/%s", dir, file) >= (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = read(fd, buf, size);
	close(fd);
	if (len > 0 && buf[len - 1] == '\n')
		buf[--len] = '\0';
	else if (len > 0 && (size_t)len < size)
		buf[len] = '\0';
	else if (len > 0) {
		errno = EOVERFLOW;   /* no room for the terminating NUL */
		return -1;
	}
	return (int)len;
}

/* A file of a device's sysfs directory: dpverbs' devices are DPDK ports and have none. */
DPV_EXPORT int ibv_read_ibdev_sysfs_file(char *buf, size_t size, void *sysfs_dev,
					 const char *fnfmt, ...)
{
	errno = sysfs_dev == NULL ? EINVAL : ENOENT;
	return -1;
}

/* The IB rate whose multiple of 2.5 Gb/s is @mult, else IBV_RATE_MAX. */
DPV_EXPORT enum ibv_rate mult_to_ibv_rate(int mult)
{
	for (int r = IBV_RATE_2_5_GBPS; r <= IBV_RATE_600_GBPS; r++)
		if (ibv_rate_to_mult((enum ibv_rate)r) == mult)
			return (enum ibv_rate)r;
	return IBV_RATE_MAX;
}

/* The IB rate of @mbps, else IBV_RATE_MAX. */
DPV_EXPORT enum ibv_rate mbps_to_ibv_rate(int mbps)
{
	for (int r = IBV_RATE_2_5_GBPS; r <= IBV_RATE_600_GBPS; r++)
		if (ibv_rate_to_mbps((enum ibv_rate)r) == mbps)
			return (enum ibv_rate)r;
	return IBV_RATE_MAX;
}

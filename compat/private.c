/* SPDX-License-Identifier: BSD-3-Clause */
/* rdma-core's IBVERBS_PRIVATE_34 symbols, which rdma-core's binaries and providers bind to
 * (Debian's perftest links libmlx5 and libefa). dpverbs loads no provider and issues no
 * uverbs command: registrations are ignored, commands fail with EOPNOTSUPP. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "dpv_engine.h"
#include "dpv_compat.h"

RTE_LOG_REGISTER(dpv_logtype_compat, lib.dpverbs.compat, NOTICE);

/* rdma-core's enum ibv_gid_type_sysfs (driver.h, not installed). */
enum { GID_TYPE_SYSFS_IB_ROCE_V1, GID_TYPE_SYSFS_ROCE_V2 };

/* The GID type at @index of the port, as sysfs names it (ibv_devinfo -v prints it): 0 or -1. */
DPV_EXPORT int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
				  unsigned int index, int *type)
{
	struct ibv_gid_entry e;
	int rc = _ibv_query_gid_ex(context, port_num, index, &e, 0, sizeof(e));

	if (rc == ENODATA) {     /* an empty entry: rdma-core answers RoCE v1 */
		*type = GID_TYPE_SYSFS_IB_ROCE_V1;
		return 0;
	}
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	*type = e.gid_type == IBV_GID_TYPE_ROCE_V2 ? GID_TYPE_SYSFS_ROCE_V2 :
						     GID_TYPE_SYSFS_IB_ROCE_V1;
	return 0;
}

/* Lets providers destroy objects of a disassociated device; dpverbs has no such state. */
DPV_EXPORT bool verbs_allow_disassociate_destroy;

/* A provider's log line: dpverbs' compat log at DEBUG. */
DPV_EXPORT void __verbs_log(struct verbs_context *ctx, uint32_t level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	rte_vlog(RTE_LOG_DEBUG, dpv_logtype_compat, fmt, ap);
	va_end(ap);
}

/* A provider plugin registering itself: ignored, dpverbs' devices are the DPDK ports. */
DPV_EXPORT void verbs_register_driver_34(const void *ops)
{
}

/* ibv_open_device with provider data: without data it is ibv_open_device; with data (a
 * provider's own open, e.g. mlx5dv_open_device) no dpverbs device understands it. */
DPV_EXPORT struct ibv_context *verbs_open_device(struct ibv_device *device, void *private_data)
{
	if (private_data == NULL)
		return ibv_open_device(device);
	errno = EOPNOTSUPP;
	return NULL;
}

/* A provider allocating its context: there is no provider. */
DPV_EXPORT void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
					       size_t alloc_size, void *context_offset,
					       uint32_t driver_id)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* Provider context set-up and tear-down: no provider context ever exists. */
DPV_EXPORT void verbs_uninit_context(struct verbs_context *context)
{
}

DPV_EXPORT void verbs_set_ops(struct verbs_context *vctx, const void *ops)
{
}

DPV_EXPORT void verbs_init_cq(struct ibv_cq *cq, struct ibv_context *context,
			      struct ibv_comp_channel *channel, void *cq_context)
{
}

/* Attributes of an ioctl command buffer chain: only providers build those; none is linked. */
DPV_EXPORT unsigned int __ioctl_final_num_attrs(unsigned int num_attrs, void *link)
{
	return num_attrs;
}

/* The uverbs ioctl: dpverbs has no kernel device to send it to. */
DPV_EXPORT int execute_ioctl(struct ibv_context *context, void *cmd)
{
	return EOPNOTSUPP;
}

/* ibv_cmd_poll_cq returns a count, -1 on error. */
DPV_EXPORT int ibv_cmd_poll_cq(struct ibv_cq *cq, int ne, struct ibv_wc *wc)
{
	errno = EOPNOTSUPP;
	return -1;
}

/* The post commands name the WR they stopped at. */
DPV_EXPORT int ibv_cmd_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
				 struct ibv_send_wr **bad_wr)
{
	*bad_wr = wr;
	return EOPNOTSUPP;
}

DPV_EXPORT int ibv_cmd_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
				 struct ibv_recv_wr **bad_wr)
{
	*bad_wr = wr;
	return EOPNOTSUPP;
}

DPV_EXPORT int ibv_cmd_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
				     struct ibv_recv_wr **bad_wr)
{
	*bad_wr = wr;
	return EOPNOTSUPP;
}

/* Every other uverbs command: EOPNOTSUPP, touching nothing (its arguments go unread). */

#define CMD_UNSUP(name) DPV_EXPORT int ibv_cmd_ ## name(void) { return EOPNOTSUPP; }

CMD_UNSUP(get_context)
CMD_UNSUP(query_context)
CMD_UNSUP(query_device_any)
CMD_UNSUP(query_port)
CMD_UNSUP(alloc_pd)
CMD_UNSUP(dealloc_pd)
CMD_UNSUP(open_xrcd)
CMD_UNSUP(close_xrcd)
CMD_UNSUP(reg_mr)
CMD_UNSUP(rereg_mr)
CMD_UNSUP(dereg_mr)
CMD_UNSUP(query_mr)
CMD_UNSUP(advise_mr)
CMD_UNSUP(reg_dmabuf_mr)
CMD_UNSUP(alloc_mw)
CMD_UNSUP(dealloc_mw)
CMD_UNSUP(alloc_dm)
CMD_UNSUP(free_dm)
CMD_UNSUP(reg_dm_mr)
CMD_UNSUP(create_cq)
CMD_UNSUP(create_cq_ex)
CMD_UNSUP(req_notify_cq)
CMD_UNSUP(resize_cq)
CMD_UNSUP(destroy_cq)
CMD_UNSUP(modify_cq)
CMD_UNSUP(create_srq)
CMD_UNSUP(create_srq_ex)
CMD_UNSUP(modify_srq)
CMD_UNSUP(query_srq)
CMD_UNSUP(destroy_srq)
CMD_UNSUP(create_qp)
CMD_UNSUP(create_qp_ex)
CMD_UNSUP(create_qp_ex2)
CMD_UNSUP(open_qp)
CMD_UNSUP(query_qp)
CMD_UNSUP(modify_qp)
CMD_UNSUP(modify_qp_ex)
CMD_UNSUP(destroy_qp)
CMD_UNSUP(create_ah)
CMD_UNSUP(destroy_ah)
CMD_UNSUP(attach_mcast)
CMD_UNSUP(detach_mcast)
CMD_UNSUP(create_flow)
CMD_UNSUP(destroy_flow)
CMD_UNSUP(create_flow_action_esp)
CMD_UNSUP(modify_flow_action_esp)
CMD_UNSUP(destroy_flow_action)
CMD_UNSUP(create_wq)
CMD_UNSUP(modify_wq)
CMD_UNSUP(destroy_wq)
CMD_UNSUP(create_rwq_ind_table)
CMD_UNSUP(destroy_rwq_ind_table)
CMD_UNSUP(create_counters)
CMD_UNSUP(destroy_counters)
CMD_UNSUP(read_counters)

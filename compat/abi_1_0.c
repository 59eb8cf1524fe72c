/* SPDX-License-Identifier: BSD-3-Clause */
/* The IBVERBS_1.0 versions of the functions rdma-core replaced in 1.1, bound with .symver.
 * dpverbs builds no 1.0 structures: ibv_get_device_list@IBVERBS_1.0 finds no device
 * (EOPNOTSUPP, saying why), and the other 1.0 functions fail cleanly. Also the legacy
 * ibv_register_driver of old provider plugins. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "dpv_engine.h"
#include "dpv_compat.h"

/* An int-returning 1.0 function: EOPNOTSUPP, as for a device without the feature. */
#define ABI10_INT(name) \
	DPV_EXPORT int dpv_abi10_ ## name(void) { return EOPNOTSUPP; } \
	__asm__(".symver dpv_abi10_" #name ", ibv_" #name "@IBVERBS_1.0");
/* A constructor of the 1.0 ABI: NULL with errno. */
#define ABI10_PTR(name) \
	DPV_EXPORT void *dpv_abi10_ ## name(void) { errno = EOPNOTSUPP; return NULL; } \
	__asm__(".symver dpv_abi10_" #name ", ibv_" #name "@IBVERBS_1.0");
/* A 1.0 function with nothing to return. */
#define ABI10_VOID(name) \
	DPV_EXPORT void dpv_abi10_ ## name(void) { } \
	__asm__(".symver dpv_abi10_" #name ", ibv_" #name "@IBVERBS_1.0");

/* ibv_get_device_list@IBVERBS_1.0: no device for a program built for the 1.0 ABI. */
DPV_EXPORT void *dpv_abi10_get_device_list(int *num)
{
	if (num != NULL)
		*num = 0;
	DPV_COMPAT_LOG(ERR, "this program was linked against libibverbs' IBVERBS_1.0 ABI (before "
		       "2006); dpverbs offers IBVERBS_1.1 and later: rebuild it");
	errno = EOPNOTSUPP;
	return NULL;
}
__asm__(".symver dpv_abi10_get_device_list, ibv_get_device_list@IBVERBS_1.0");

ABI10_VOID(free_device_list)
ABI10_PTR(get_device_name)

/* ibv_get_device_guid@IBVERBS_1.0: a 64-bit GUID, 0. */
DPV_EXPORT uint64_t dpv_abi10_get_device_guid(void *device)
{
	errno = EOPNOTSUPP;
	return 0;
}
__asm__(".symver dpv_abi10_get_device_guid, ibv_get_device_guid@IBVERBS_1.0");

ABI10_PTR(open_device)
ABI10_INT(close_device)
ABI10_INT(get_async_event)
ABI10_VOID(ack_async_event)
ABI10_INT(query_device)
ABI10_INT(query_port)
ABI10_INT(query_gid)
ABI10_INT(query_pkey)
ABI10_PTR(alloc_pd)
ABI10_INT(dealloc_pd)
ABI10_PTR(reg_mr)
ABI10_INT(dereg_mr)
ABI10_PTR(create_cq)
ABI10_INT(resize_cq)
ABI10_INT(destroy_cq)
ABI10_INT(get_cq_event)
ABI10_VOID(ack_cq_events)
ABI10_PTR(create_srq)
ABI10_INT(modify_srq)
ABI10_INT(query_srq)
ABI10_INT(destroy_srq)
ABI10_PTR(create_qp)
ABI10_INT(query_qp)
ABI10_INT(modify_qp)
ABI10_INT(destroy_qp)
ABI10_PTR(create_ah)
ABI10_INT(destroy_ah)
ABI10_INT(attach_mcast)
ABI10_INT(detach_mcast)

/* ibv_register_driver@IBVERBS_1.1: dpverbs loads no provider; ignored. */

DPV_EXPORT void dpv_abi11_register_driver(const char *name, void *init_func)
{
	DPV_COMPAT_LOG(DEBUG, "legacy provider %s ignored: dpverbs is the only device provider",
		       name != NULL ? name : "?");
}
__asm__(".symver dpv_abi11_register_driver, ibv_register_driver@IBVERBS_1.1");

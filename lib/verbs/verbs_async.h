/* SPDX-License-Identifier: BSD-3-Clause */
/* Asynchronous events (async.c): the queue behind a context's async_fd, the port events of a
 * device, and the context a cmd_fd names (ibv_import_device). */
#ifndef DPV_VERBS_ASYNC_H
#define DPV_VERBS_ASYNC_H

#include <sys/queue.h>
#include <sys/stat.h>

#include <infiniband/verbs.h>
#include "verbs_device.h"

struct dpv_async_event {
	STAILQ_ENTRY(dpv_async_event) next;
	struct ibv_async_event ev;
};

/* The open context whose cmd_fd is the open file @st (fstat of a descriptor), or NULL. */
struct dpv_context *dpv__context_by_file(const struct stat *st);

void dpv__async_event_post(struct dpv_context *ctx, const struct ibv_async_event *ev);
/* A port event (@type: GID_CHANGE ...) on port 1 of every open context of @dev. */
void dpv__device_event(struct dpv_device *dev, enum ibv_event_type type);
/* The link of a device's port (@arg) went down or came up (the driver's port events): a port
 * event to every context open on it. Any thread. */
void dpv__device_link_event(void *arg, bool up);
int dpv__async_init(struct dpv_context *ctx);
void dpv__async_fini(struct dpv_context *ctx);

#endif

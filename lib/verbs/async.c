/* SPDX-License-Identifier: BSD-3-Clause */
/* Asynchronous events (QP fatal, CQ overrun, port changes): queued on the context and
 * signalled through context->async_fd, an eventfd the application may poll. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "verbs_base.h"
#include "verbs_device.h"
#include "verbs_async.h"
#include "verbs_fork.h"

/* Contexts that port events go to. Its own lock, not the device lock: a driver's event thread
 * takes it while ibv_close_device, holding the device lock, waits for that thread. */
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static TAILQ_HEAD(, dpv_context) open_contexts = TAILQ_HEAD_INITIALIZER(open_contexts);

int dpv__async_init(struct dpv_context *ctx)
{
	int fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);

	if (fd < 0)
		return -errno;
	ctx->vctx.context.async_fd = fd;
	pthread_mutex_init(&ctx->async_lock, NULL);
	STAILQ_INIT(&ctx->async_events);
	pthread_mutex_lock(&open_lock);
	TAILQ_INSERT_TAIL(&open_contexts, ctx, open_next);
	pthread_mutex_unlock(&open_lock);
	return 0;
}

void dpv__async_fini(struct dpv_context *ctx)
{
	struct dpv_async_event *e;

	pthread_mutex_lock(&open_lock);
	TAILQ_REMOVE(&open_contexts, ctx, open_next);
	pthread_mutex_unlock(&open_lock);

	while ((e = STAILQ_FIRST(&ctx->async_events)) != NULL) {
		STAILQ_REMOVE_HEAD(&ctx->async_events, next);
		free(e);
	}
	close(ctx->vctx.context.async_fd);
	pthread_mutex_destroy(&ctx->async_lock);
}

void dpv__async_event_post(struct dpv_context *ctx, const struct ibv_async_event *ev)
{
	struct dpv_async_event *e = malloc(sizeof(*e));
	uint64_t one = 1;

	if (e == NULL) {
		VERBS_LOG(ERR, "async event %s lost: out of memory", ibv_event_type_str(ev->event_type));
		return;
	}
	e->ev = *ev;
	pthread_mutex_lock(&ctx->async_lock);
	STAILQ_INSERT_TAIL(&ctx->async_events, e, next);
	pthread_mutex_unlock(&ctx->async_lock);
	if (write(ctx->vctx.context.async_fd, &one, sizeof(one)) != sizeof(one))
		VERBS_LOG(ERR, "async event fd: %s", strerror(errno));
}

void dpv__device_event(struct dpv_device *dev, enum ibv_event_type type)
{
	struct ibv_async_event ev = { .event_type = type, .element.port_num = 1 };
	struct dpv_context *ctx;

	pthread_mutex_lock(&open_lock);
	TAILQ_FOREACH(ctx, &open_contexts, open_next)
		if (ctx->dev == dev)
			dpv__async_event_post(ctx, &ev);
	pthread_mutex_unlock(&open_lock);
}

void dpv__device_link_event(void *arg, bool up)
{
	dpv__device_event(arg, up ? IBV_EVENT_PORT_ACTIVE : IBV_EVENT_PORT_ERR);
}

struct dpv_context *dpv__context_by_file(const struct stat *st)
{
	struct dpv_context *ctx, *found = NULL;

	pthread_mutex_lock(&open_lock);
	TAILQ_FOREACH(ctx, &open_contexts, open_next)
		if (ctx->cmd_dev == st->st_dev && ctx->cmd_ino == st->st_ino)
			found = ctx;
	pthread_mutex_unlock(&open_lock);
	return found;
}

/* As rdma-core: 0, or -1 with errno (EAGAIN on a non-blocking async_fd with no event). */
DPV_EXPORT int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
	struct dpv_context *ctx = to_dctx(context);
	struct dpv_async_event *e;
	uint64_t n;

	DPV_FORK_REFUSE(-1);
	if (ctx == NULL || event == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (read(context->async_fd, &n, sizeof(n)) != sizeof(n))
		return -1;
	pthread_mutex_lock(&ctx->async_lock);
	e = STAILQ_FIRST(&ctx->async_events);
	if (e != NULL)
		STAILQ_REMOVE_HEAD(&ctx->async_events, next);
	pthread_mutex_unlock(&ctx->async_lock);
	if (e == NULL) {
		errno = EAGAIN;
		return -1;
	}
	*event = e->ev;
	free(e);
	return 0;
}

DPV_EXPORT void ibv_ack_async_event(struct ibv_async_event *event)
{
	DPV_FORK_NOOP();
	switch (event->event_type) {
	case IBV_EVENT_CQ_ERR:
		__atomic_fetch_add(&event->element.cq->async_events_completed, 1, __ATOMIC_RELEASE);
		break;
	case IBV_EVENT_QP_FATAL: case IBV_EVENT_QP_REQ_ERR: case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST: case IBV_EVENT_SQ_DRAINED: case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR: case IBV_EVENT_QP_LAST_WQE_REACHED:
		__atomic_fetch_add(&event->element.qp->events_completed, 1, __ATOMIC_RELEASE);
		break;
	case IBV_EVENT_SRQ_ERR: case IBV_EVENT_SRQ_LIMIT_REACHED:
		__atomic_fetch_add(&event->element.srq->events_completed, 1, __ATOMIC_RELEASE);
		break;
	default:
		break;
	}
}

static const char *const event_names[] = {
	[IBV_EVENT_CQ_ERR] = "CQ error",
	[IBV_EVENT_QP_FATAL] = "local work queue catastrophic error",
	[IBV_EVENT_QP_REQ_ERR] = "invalid request local work queue error",
	[IBV_EVENT_QP_ACCESS_ERR] = "local access violation work queue error",
	[IBV_EVENT_COMM_EST] = "communication established",
	[IBV_EVENT_SQ_DRAINED] = "send queue drained",
	[IBV_EVENT_PATH_MIG] = "path migrated",
	[IBV_EVENT_PATH_MIG_ERR] = "path migration request error",
	[IBV_EVENT_DEVICE_FATAL] = "local catastrophic error",
	[IBV_EVENT_PORT_ACTIVE] = "port active",
	[IBV_EVENT_PORT_ERR] = "port error",
	[IBV_EVENT_LID_CHANGE] = "LID change",
	[IBV_EVENT_PKEY_CHANGE] = "P_Key change",
	[IBV_EVENT_SM_CHANGE] = "SM change",
	[IBV_EVENT_SRQ_ERR] = "SRQ catastrophic error",
	[IBV_EVENT_SRQ_LIMIT_REACHED] = "SRQ limit reached",
	[IBV_EVENT_QP_LAST_WQE_REACHED] = "last WQE reached",
	[IBV_EVENT_CLIENT_REREGISTER] = "client reregistration",
	[IBV_EVENT_GID_CHANGE] = "GID table change",
	[IBV_EVENT_WQ_FATAL] = "WQ fatal",
};

DPV_EXPORT const char *ibv_event_type_str(enum ibv_event_type event)
{
	if ((unsigned int)event >= sizeof(event_names) / sizeof(event_names[0]) ||
	    event_names[event] == NULL)
		return "unknown";
	return event_names[event];
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Telemetry (telemetry.c): the registry of every QP and CQ of the process that the
 * /dpverbs/ telemetry endpoints and dpv_query_*_stats read. */
#ifndef DPV_VERBS_TELEMETRY_H
#define DPV_VERBS_TELEMETRY_H

#include <stdbool.h>

struct dpv_context;
struct dpv_cq;
struct dpv_qp;

/* Every QP and CQ of the process, for the telemetry endpoints (telemetry.c). */
void dpv__telemetry_qp(struct dpv_qp *qp, bool add);
void dpv__telemetry_cq(struct dpv_cq *cq, bool add);
/* The QPs and CQs of @ctx (telemetry.c's registry): a malloc'ed array of *n, or NULL. */
struct dpv_qp **dpv__registry_qps(struct dpv_context *ctx, unsigned int *n);
struct dpv_cq **dpv__registry_cqs(struct dpv_context *ctx, unsigned int *n);

#endif

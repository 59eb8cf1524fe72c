/* SPDX-License-Identifier: BSD-3-Clause */
/* The verbs core's objects, all of them: devices, contexts, PDs, MRs, CQs, QPs and their
 * rings. Private to libdpverbs. An umbrella over the headers of the core's modules (one per
 * object, each compiling on its own: lib/verbs/meson.build checks); the naming and error
 * convention is in verbs_base.h. New code includes the headers it uses. */
#ifndef DPV_VERBS_PRIV_H
#define DPV_VERBS_PRIV_H

#include "verbs_base.h"         /* log, counters, errno helper, cycle statistics */
#include "verbs_device.h"       /* devices, contexts, fault injection */
#include "verbs_async.h"        /* asynchronous events */
#include "verbs_pd.h"           /* protection, parent and thread domains */
#include "verbs_mr.h"           /* MRs, memory windows, range sets */
#include "verbs_fork.h"         /* fork protection */
#include "verbs_cq.h"           /* completion queues and channels */
#include "verbs_ring.h"         /* SQ and RQ rings */
#include "verbs_pace.h"         /* packet pacing */
#include "verbs_qp.h"           /* QPs, transport ops, QP numbers, service mode */
#include "verbs_srq.h"          /* SRQs and XRC domains */
#include "verbs_progress.h"     /* polling ports, progressing contexts, loopback */
#include "verbs_telemetry.h"    /* the QP and CQ registry */
#include "verbs_transport.h"      /* the tables lib/raw and lib/roce register */

#endif

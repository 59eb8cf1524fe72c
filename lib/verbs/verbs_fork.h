/* SPDX-License-Identifier: BSD-3-Clause */
/* Fork protection (fork.c): ibv_fork_init's MADV_DONTFORK of MR pages, and what the verbs do
 * in a forked child. */
#ifndef DPV_VERBS_FORK_H
#define DPV_VERBS_FORK_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include "dpv_engine.h"

struct dpv_mr;

/* Pages of MRs outside DPDK's heap are MADV_DONTFORK while held (with ibv_fork_init). */

int dpv__fork_mr_hold(struct dpv_mr *mr);
void dpv__fork_mr_drop(struct dpv_mr *mr);
/* ibv_dontfork_range / ibv_dofork_range: 0 or a negative errno. */
int dpv__fork_range(void *base, size_t size, bool dontfork);
/* RDMAV_FORK_SAFE / IBV_FORK_SAFE: ibv_fork_init at the first device list, as rdma-core. */
void dpv__fork_env_init(void);
/* In a forked child (dpv__fork_child): verbs refuse with ENODEV, releases succeed doing
 * nothing. */
#define DPV_FORK_REFUSE(ret) do { \
	if (dpv__fork_child()) { \
		errno = -dpv__fork_refuse(); \
		return ret; \
	} \
} while (0)
#define DPV_FORK_NOOP(ret) do { \
	if (dpv__fork_child()) \
		return ret; \
} while (0)

#endif

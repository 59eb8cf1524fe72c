/* SPDX-License-Identifier: BSD-3-Clause */
/* The tables the layers above the core register (verbs_transport.h): QP types with their
 * transports, port receivers in their order, device hooks. Written by constructors before
 * main, read-only afterwards. */
#include <stdio.h>

#include "verbs_base.h"
#include "verbs_transport.h"

#define MAX_TYPES 16            /* enum ibv_qp_type's values below IBV_QPT_DRIVER */
#define MAX_RECEIVERS 8
#define MAX_HOOKS 8

static const struct dpv_qp_type *types[MAX_TYPES];
const struct dpv_port_receiver *dpv__port_receivers[MAX_RECEIVERS + 1];
const struct dpv_device_hooks *dpv__device_hooks[MAX_HOOKS + 1];

/* Constructors run before the EAL has a log: stderr, and only for a build mistake. */
static void refuse(const char *what, const char *name)
{
	fprintf(stderr, "dpverbs: %s %s not registered\n", what, name);
}

void dpv__qp_types_register(const struct dpv_qp_type *t, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		if ((unsigned int)t[i].type >= MAX_TYPES || types[t[i].type] != NULL) {
			refuse("QP type of", t[i].ops->name);
			continue;
		}
		types[t[i].type] = &t[i];
	}
}

const struct dpv_qp_type *dpv__qp_type_find(enum ibv_qp_type type)
{
	return (unsigned int)type < MAX_TYPES ? types[type] : NULL;
}

void dpv__port_receiver_register(const struct dpv_port_receiver *r)
{
	int n = 0;

	while (dpv__port_receivers[n] != NULL)
		n++;
	if (n == MAX_RECEIVERS) {
		refuse("port receiver", r->name);
		return;
	}
	/* insertion by order: constructors run in link order, which says nothing */
	for (; n > 0 && dpv__port_receivers[n - 1]->order > r->order; n--)
		dpv__port_receivers[n] = dpv__port_receivers[n - 1];
	dpv__port_receivers[n] = r;
}

void dpv__device_hooks_register(const struct dpv_device_hooks *h)
{
	int n = 0;

	while (dpv__device_hooks[n] != NULL)
		n++;
	if (n == MAX_HOOKS)
		refuse("device hooks", h->name);
	else
		dpv__device_hooks[n] = h;
}

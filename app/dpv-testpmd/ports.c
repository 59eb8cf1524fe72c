/* SPDX-License-Identifier: BSD-3-Clause */
/* Ports: one verbs device per DPDK port. A started port is an open context with a PD and the
 * buffer arena registered in it; stopping a port destroys what the command line made on it and
 * closes the context (dpverbs stops the DPDK port at its last close). Either a port is fully
 * started or fully stopped: a failing step undoes the ones before it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "testpmd.h"

bool port_valid(unsigned int p)
{
	if (p < (unsigned int)tp.nb_ports)
		return true;
	if (tp.nb_ports == 0)
		tp_error("there is no port %u: dpverbs found no DPDK port; give one to the EAL, "
			 "e.g. dpv-testpmd --vdev=net_null0 -- -i", p);
	else
		tp_error("there is no port %u: ports are 0..%d (show device)", p, tp.nb_ports - 1);
	return false;
}

struct tp_port *port_get(unsigned int p)
{
	if (!port_valid(p))
		return NULL;
	if (tp.port[p].ctx == NULL) {
		tp_error("port %u is stopped: port start %u", p, p);
		return NULL;
	}
	return &tp.port[p];
}

uint8_t *port_area(unsigned int p)
{
	return tp.arena + (size_t)p * TP_PORT_AREA;
}

static void port_release(struct tp_port *pt)
{
	if (pt->mr != NULL)
		ibv_dereg_mr(pt->mr);
	if (pt->pd != NULL)
		ibv_dealloc_pd(pt->pd);
	if (pt->ctx != NULL)
		ibv_close_device(pt->ctx);
	pt->mr = NULL;
	pt->pd = NULL;
	pt->ctx = NULL;
}

int port_start(unsigned int p)
{
	struct tp_port *pt = &tp.port[p];
	union ibv_gid gid;
	const char *step = "ibv_open_device";

	if (pt->ctx != NULL)
		return 0;
	pt->ctx = ibv_open_device(pt->dev);
	if (pt->ctx != NULL) {
		step = "ibv_alloc_pd";
		pt->pd = ibv_alloc_pd(pt->ctx);
	}
	if (pt->pd != NULL) {
		step = "ibv_reg_mr (the buffer arena)";
		pt->mr = ibv_reg_mr(pt->pd, tp.arena, tp.arena_size, IBV_ACCESS_LOCAL_WRITE);
	}
	if (pt->mr != NULL) {
		step = "dpv_query_port_info";
		errno = dpv_query_port_info(pt->ctx, &pt->info);
	}
	if (pt->mr == NULL || errno != 0 || ibv_query_gid(pt->ctx, 1, 0, &gid) != 0) {
		int e = errno;

		port_release(pt);
		return tp_error("port %u (%s): %s failed: %s; the port stays stopped", p,
				ibv_get_device_name(pt->dev), step, strerror(e));
	}
	/* the GID is fe80::EUI-64 of the MAC */
	pt->mac[0] = gid.raw[8] ^ 0x02;
	memcpy(pt->mac + 1, gid.raw + 9, 2);
	memcpy(pt->mac + 3, gid.raw + 13, 3);
	pt->post_off = 0;
	pt->sw_forced = 0;             /* dpverbs starts the port with none forced */
	port_stats_clear(p);
	return 0;
}

int port_stop(unsigned int p)
{
	struct tp_port *pt = &tp.port[p];

	if (pt->ctx == NULL)
		return 0;
	if (pt->cap != NULL)
		capture_stop(p);
	objects_destroy_port(p);
	port_release(pt);
	return 0;
}

void port_stats_clear(unsigned int p)
{
	struct tp_port *pt = &tp.port[p];
	unsigned int n = 0;
	uint64_t *c = (uint64_t *)&pt->fwd;

	/* the forwarding thread may be counting: one atomic store per counter */
	for (size_t i = 0; i < sizeof(pt->fwd) / sizeof(uint64_t); i++)
		__atomic_store_n(&c[i], 0, __ATOMIC_RELAXED);
	memset(&pt->base, 0, sizeof(pt->base));
	free(pt->xbase);
	pt->xbase = NULL;
	pt->nb_xbase = 0;
	if (pt->ctx == NULL)
		return;
	dpv_query_port_stats(pt->ctx, &pt->base);
	if (dpv_query_port_xstats(pt->ctx, NULL, &n) != 0 || n == 0)
		return;
	pt->xbase = calloc(n, sizeof(*pt->xbase));
	if (pt->xbase != NULL && dpv_query_port_xstats(pt->ctx, pt->xbase, &n) == 0)
		pt->nb_xbase = n;
}

int ports_open_all(void)
{
	int n = 0, rc = 0;

	tp.devs = ibv_get_device_list(&n);
	if (tp.devs == NULL)
		return tp_error("cannot start DPDK or list devices: %s; check the EAL arguments "
				"(before --) or DPV_EAL_ARGS", strerror(errno));
	if (n > TP_MAX_PORTS) {
		printf("note: %d ports, dpv-testpmd uses the first %d\n", n, TP_MAX_PORTS);
		n = TP_MAX_PORTS;
	}
	tp.nb_ports = n;
	tp.arena_size = (size_t)(n ? n : 1) * TP_PORT_AREA;
	tp.arena = aligned_alloc(4096, tp.arena_size);
	if (tp.arena == NULL)
		return tp_error("cannot allocate %zu bytes of buffers", tp.arena_size);
	memset(tp.arena, 0, tp.arena_size);
	for (int i = 0; i < n; i++) {
		tp.port[i].dev = tp.devs[i];
		if (port_start((unsigned int)i) != 0)
			rc = -EIO;
	}
	if (n == 0)
		printf("no port: give DPDK ports before --, e.g. dpv-testpmd --vdev=net_tap0 -- -i\n");
	return rc;
}

void ports_close_all(void)
{
	for (int i = 0; i < tp.nb_ports; i++) {
		port_stop((unsigned int)i);
		free(tp.port[i].xbase);
		tp.port[i].xbase = NULL;
	}
	if (tp.devs != NULL)
		ibv_free_device_list(tp.devs);
	tp.devs = NULL;
	free(tp.arena);
	tp.arena = NULL;
}

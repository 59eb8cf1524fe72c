/* SPDX-License-Identifier: BSD-3-Clause */
/* The port's multicast filter as UD QPs join and leave groups, on a net_tap port, whose
 * interface the Linux kernel shows: up to 16 group MACs go into the port's list
 * (rte_eth_dev_set_mc_addr_list, which net_tap takes without showing it), more turn
 * all-multicast on (IFF_ALLMULTI in the interface's flags), and leaving groups until the list
 * fits again turns it off. DPV_EAL_ARGS names one net_tap port; the interface's name is read
 * from it. */
#include <net/if.h>

#include "dpv_test_ud.h"

#define GROUPS 20          /* more than the 16 the list holds */

/* The tap interface's flags from /sys, or -1. */
static long iface_flags(const char *iface)
{
	char path[128];
	long flags = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/flags", iface);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	if (fscanf(f, "%li", &flags) != 1)
		flags = -1;
	fclose(f);
	return flags;
}

static bool allmulti(const char *iface)
{
	return (iface_flags(iface) & IFF_ALLMULTI) != 0;
}

int main(void)
{
	const char *eal = getenv("DPV_EAL_ARGS"), *at = eal ? strstr(eal, "iface=") : NULL;
	char iface[IFNAMSIZ] = "";
	union ibv_gid g[GROUPS];
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;

	if (at != NULL)
		sscanf(at + 6, "%15[^, ]", iface);
	ctx = test_open(NULL);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (iface[0] == 0 || pd == NULL || cq == NULL || iface_flags(iface) < 0) {
		fprintf(stderr, "setup: a net_tap port with iface= in DPV_EAL_ARGS (%s)\n",
			iface);
		return 1;
	}
	qp = ud_qp_rts(pd, cq, cq, 0x11111111, 0, 0);
	CHECK(!allmulti(iface), "all-multicast before any group");
	for (int k = 0; k < GROUPS; k++) {
		char a[32];

		snprintf(a, sizeof(a), "239.1.1.%d", k);
		gid_v4(&g[k], a);
		CHECK_EQ(ibv_attach_mcast(qp, &g[k], 0), 0);
		if (k == 15)
			CHECK(!allmulti(iface), "16 groups: the list holds them");
	}
	CHECK(allmulti(iface), "%d groups: all-multicast", GROUPS);
	for (int k = GROUPS - 1; k >= 10; k--)
		CHECK_EQ(ibv_detach_mcast(qp, &g[k], 0), 0);
	CHECK(!allmulti(iface), "10 groups again: all-multicast off, the list filters");
	for (int k = 9; k >= 0; k--)
		CHECK_EQ(ibv_detach_mcast(qp, &g[k], 0), 0);
	CHECK(!allmulti(iface), "no group: no all-multicast");
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	return test_finish(ctx, pd, "mcast_filter");
}

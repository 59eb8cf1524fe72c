/* SPDX-License-Identifier: BSD-3-Clause */
/* dpv-devinfo: what ibv_devinfo shows for rdma-core devices, for dpverbs devices, plus the
 * DPDK port behind each one and which offloads run in hardware or in software.
 *   DPV_EAL_ARGS="--vdev=net_tap0" dpv-devinfo [-d device] [-v] */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <dpverbs.h>

static const char *mtu_str(enum ibv_mtu m)
{
	static const char *const s[] = { "?", "256", "512", "1024", "2048", "4096" };

	return (unsigned int)m < 6 ? s[m] : "?";
}

static void print_offloads(const char *what, uint32_t mask)
{
	printf("\t%-20s", what);
	if (mask == 0)
		printf(" none");
	for (uint32_t bit = 1; bit <= DPV_OFFLOAD_TCP_TSO; bit <<= 1)
		if (mask & bit)
			printf(" %s", dpv_offload_name(bit));
	printf("\n");
}

static int show(struct ibv_device *dev, bool verbose)
{
	struct ibv_context *ctx = ibv_open_device(dev);
	struct ibv_device_attr_ex a;
	struct ibv_port_attr p;
	struct dpv_port_info info;
	__be64 guid = ibv_get_device_guid(dev);
	const uint8_t *g = (const uint8_t *)&guid;

	if (ctx == NULL) {
		fprintf(stderr, "%s: cannot open: %s\n", ibv_get_device_name(dev), strerror(errno));
		return 1;
	}
	if (ibv_query_device_ex(ctx, NULL, &a) || ibv_query_port(ctx, 1, &p) ||
	    dpv_query_port_info(ctx, &info)) {
		fprintf(stderr, "%s: query failed\n", ibv_get_device_name(dev));
		ibv_close_device(ctx);
		return 1;
	}
	printf("hca_id:\t%s\n", ibv_get_device_name(dev));
	printf("\ttransport:\t\t%s\n", "Ethernet (RAW_PACKET)");
	printf("\tfw_ver:\t\t\t%s\n", a.orig_attr.fw_ver);
	printf("\tnode_guid:\t\t%02x%02x:%02x%02x:%02x%02x:%02x%02x\n",
	       g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7]);
	printf("\tdpdk_port:\t\t%u (%s, driver %s, NUMA socket %d)\n", info.port_id, info.name,
	       info.driver, info.socket_id);
	printf("\tphys_port_cnt:\t\t%u\n", a.orig_attr.phys_port_cnt);
	printf("\t\tport:\t1\n");
	printf("\t\t\tstate:\t\t%s\n", ibv_port_state_str(p.state));
	printf("\t\t\tmax_mtu:\t%s\n", mtu_str(p.max_mtu));
	printf("\t\t\tactive_mtu:\t%s (Ethernet MTU %u)\n", mtu_str(p.active_mtu), info.mtu);
	printf("\t\t\tlink_layer:\tEthernet\n");
	if (verbose) {
		printf("\tmax_qp_wr:\t\t%d\n\tmax_sge:\t\t%d\n\tmax_cqe:\t\t%d\n\tmax_mr:\t\t\t%d\n",
		       a.orig_attr.max_qp_wr, a.orig_attr.max_sge, a.orig_attr.max_cqe,
		       a.orig_attr.max_mr);
		printf("\tmax_tso:\t\t%u (RAW_PACKET)\n", a.tso_caps.max_tso);
		printf("\tqueues:\t\t\t%u TX, %u RX\n", info.nb_tx_queues, info.nb_rx_queues);
		print_offloads("port offers:", info.port_offloads);
		print_offloads("hardware offloads:", info.hw_offloads);
		print_offloads("software offloads:", info.sw_offloads);
		printf("\ttx_done_cleanup:\t%s\n", info.tx_done_cleanup ? "yes" : "no");
		printf("\ttx_max_segs:\t\t%u\n", info.tx_max_segs);
		printf("\tsends:\t\t\t%s\n", info.zero_copy ? "zero-copy from MRs" :
		       "copied into pool mbufs");
	}
	return ibv_close_device(ctx) != 0;
}

int main(int argc, char **argv)
{
	const char *only = NULL;
	bool verbose = false;
	struct ibv_device **list;
	int n = 0, c, rc = 0, shown = 0;

	while ((c = getopt(argc, argv, "d:v")) != -1) {
		if (c == 'd')
			only = optarg;
		else if (c == 'v')
			verbose = true;
		else
			return 2;
	}
	list = ibv_get_device_list(&n);
	if (list == NULL) {
		fprintf(stderr, "cannot list devices: %s\n", strerror(errno));
		return 1;
	}
	if (n == 0)
		printf("No dpverbs devices found: give DPDK ports in DPV_EAL_ARGS, e.g. "
		       "DPV_EAL_ARGS=--vdev=net_tap0\n");
	for (int i = 0; i < n; i++) {
		if (only != NULL && strcmp(only, ibv_get_device_name(list[i])) != 0)
			continue;
		rc |= show(list[i], verbose);
		shown++;
	}
	if (only != NULL && shown == 0) {
		fprintf(stderr, "no device %s\n", only);
		rc = 1;
	}
	ibv_free_device_list(list);
	return rc;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Devices: one per DPDK port (net_null, net_tap, net_pcap here), with the queries of
 * ibv_query_device(3), ibv_query_device_ex(3), ibv_query_port(3) and ibv_query_gid(3). */
#include <arpa/inet.h>
#include <net/if.h>

#include "dpv_test.h"

static void check_device_attr(struct ibv_context *ctx)
{
	struct ibv_device_attr a;
	struct ibv_device_attr_ex ex;

	CHECK_EQ(ibv_query_device(ctx, &a), 0);
	CHECK(a.device_cap_flags & IBV_DEVICE_RAW_IP_CSUM, "RAW_IP_CSUM not reported");
	CHECK_EQ(a.phys_port_cnt, 1);
	CHECK(a.max_qp_wr >= 1024, "max_qp_wr %d", a.max_qp_wr);
	CHECK(a.max_sge >= 1 && a.max_cqe >= 1 && a.max_mr >= 1 && a.max_pd >= 1);
	CHECK(a.node_guid == ibv_get_device_guid(ctx->device));
	/* rxe's "no OUI" vendor; RC's RNR NAKs, SRQ resizing, a READ's SGEs (checked at work in
	 * rc and srq) */
	CHECK_EQ(a.vendor_id, 0xffffff);
	CHECK(a.device_cap_flags & IBV_DEVICE_RC_RNR_NAK_GEN, "RC_RNR_NAK_GEN not reported");
	CHECK(a.device_cap_flags & IBV_DEVICE_SRQ_RESIZE, "SRQ_RESIZE not reported");
	CHECK_EQ(a.max_sge_rd, a.max_sge);
	CHECK(strstr(a.fw_ver, "22.11") != NULL, "fw_ver '%s'", a.fw_ver);

	CHECK_EQ(ibv_query_device_ex(ctx, NULL, &ex), 0);
	CHECK_EQ(ex.orig_attr.max_qp_wr, a.max_qp_wr);
	CHECK_EQ(ex.tso_caps.max_tso, 262144);
	CHECK(ex.tso_caps.supported_qpts & (1u << IBV_QPT_RAW_PACKET));
	CHECK(ex.raw_packet_caps & IBV_RAW_PACKET_CAP_IP_CSUM);
	CHECK(ex.device_cap_flags_ex & IBV_DEVICE_RAW_IP_CSUM);
	CHECK_EQ(ex.phys_port_cnt_ex, 1);
	/* An input comp_mask that is not known is refused. */
	CHECK_EQ(ibv_query_device_ex(ctx, &(struct ibv_query_device_ex_input){ .comp_mask = 1 },
				     &ex), EINVAL);
}

static void check_port(struct ibv_context *ctx, enum ibv_port_state want)
{
	struct ibv_port_attr p;
	union ibv_gid gid;
	__be64 guid = ibv_get_device_guid(ctx->device);

	CHECK_EQ(ibv_query_port(ctx, 1, &p), 0);
	CHECK_EQ(p.link_layer, IBV_LINK_LAYER_ETHERNET);
	CHECK_EQ(p.state, want);
	CHECK_EQ(p.lid, 0);
	CHECK_EQ(p.active_mtu, IBV_MTU_1024);         /* Ethernet MTU 1500 */
	CHECK_EQ(p.gid_tbl_len, 16);                  /* rxe's table: 0 link-local, then addresses */
	CHECK_EQ(p.max_msg_sz, 1u << 31);             /* RC's largest message (checked in rc) */
	CHECK_EQ(ibv_query_port(ctx, 2, &p), EINVAL);
	CHECK_EQ(ibv_query_port(ctx, 0, &p), EINVAL);

	CHECK_EQ(ibv_query_gid(ctx, 1, 0, &gid), 0);
	CHECK(gid.raw[0] == 0xfe && gid.raw[1] == 0x80, "not link-local");
	CHECK(memcmp(&gid.raw[8], &guid, 8) == 0, "GID interface id is not the GUID");
	/* no address: index 1 is empty (zeros, as rdma-core reads sysfs), 16 is outside */
	CHECK_EQ(ibv_query_gid(ctx, 1, 1, &gid), 0);
	CHECK(gid.global.subnet_prefix == 0 && gid.global.interface_id == 0, "index 1 not empty");
	CHECK_EQ(ibv_query_gid(ctx, 1, 16, &gid), EINVAL);
	CHECK_EQ(ibv_query_gid(ctx, 2, 0, &gid), EINVAL);

	/* ibv_get_pkey_index(3): the index, or -1 with errno */
	__be16 pkey = 0;

	CHECK_EQ(ibv_query_pkey(ctx, 1, 0, &pkey), 0);
	CHECK_EQ(ibv_get_pkey_index(ctx, 1, pkey), 0);
	errno = 0;
	CHECK_EQ(ibv_get_pkey_index(ctx, 1, htobe16(0x7fff)), -1);
	CHECK_EQ(errno, ENOENT);
	errno = 0;
	CHECK_EQ(ibv_get_pkey_index(ctx, 2, pkey), -1);
	CHECK_EQ(errno, EINVAL);
}

static void check_info(struct ibv_context *ctx, const char *driver, uint32_t offered)
{
	struct dpv_port_info info;
	uint32_t all = DPV_OFFLOAD_IPV4_CKSUM | DPV_OFFLOAD_TCP_CKSUM | DPV_OFFLOAD_UDP_CKSUM |
		       DPV_OFFLOAD_TCP_TSO;
	struct ibv_device_attr_ex ex;

	CHECK_EQ(dpv_query_port_info(ctx, &info), 0);
	CHECK(strcmp(info.driver, driver) == 0, "driver %s, expected %s", info.driver, driver);
	CHECK_EQ(info.port_offloads, offered);
	CHECK_EQ(info.policy, DPV_OFFLOAD_POLICY_AUTO);
	CHECK_EQ(info.hw_offloads, offered);
	CHECK_EQ(info.sw_offloads, all);           /* software backs every offload */

	/* software only: nothing in the port, everything still reported */
	CHECK_EQ(dpv_set_offload_policy(ctx, DPV_OFFLOAD_POLICY_SOFTWARE), 0);
	CHECK_EQ(dpv_query_port_info(ctx, &info), 0);
	CHECK(info.hw_offloads == 0 && info.sw_offloads == all && info.policy == 1);
	CHECK_EQ(ibv_query_device_ex(ctx, NULL, &ex), 0);
	CHECK(ex.orig_attr.device_cap_flags & IBV_DEVICE_RAW_IP_CSUM);
	CHECK_EQ(ex.tso_caps.max_tso, 262144);
	/* hardware only: the device reports what the port has, as mlx5 would */
	CHECK_EQ(dpv_set_offload_policy(ctx, DPV_OFFLOAD_POLICY_HARDWARE), 0);
	CHECK_EQ(dpv_query_port_info(ctx, &info), 0);
	CHECK(info.hw_offloads == offered && info.sw_offloads == 0);
	CHECK_EQ(ibv_query_device_ex(ctx, NULL, &ex), 0);
	CHECK_EQ(!!(ex.orig_attr.device_cap_flags & IBV_DEVICE_RAW_IP_CSUM),
		 !!(offered & DPV_OFFLOAD_IPV4_CKSUM));
	CHECK_EQ(ex.tso_caps.max_tso, offered & DPV_OFFLOAD_TCP_TSO ? 65535 : 0);
	CHECK_EQ(!!(ex.tso_caps.supported_qpts & (1u << IBV_QPT_RAW_PACKET)),
		 !!(offered & DPV_OFFLOAD_TCP_TSO));
	CHECK_EQ(dpv_set_offload_policy(ctx, (enum dpv_offload_policy)3), EINVAL);
	CHECK_EQ(dpv_set_offload_policy(NULL, DPV_OFFLOAD_POLICY_AUTO), EINVAL);
	CHECK_EQ(dpv_set_offload_policy(ctx, DPV_OFFLOAD_POLICY_AUTO), 0);
	CHECK_EQ(info.mtu, 1500);
	CHECK_EQ(info.max_frame, 1514);
	CHECK(info.nb_tx_queues >= 1);
	CHECK_EQ(dpv_query_port_info(NULL, &info), EINVAL);
	CHECK_EQ(dpv_query_port_info(ctx, NULL), EINVAL);
	CHECK(strcmp(dpv_offload_name(DPV_OFFLOAD_TCP_TSO), "TCP_TSO") == 0);
	CHECK(strcmp(dpv_offload_name(3), "unknown") == 0);
}

int main(void)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	int n = -1;
	char guid[32];
	__be64 g;

	list = ibv_get_device_list(&n);
	CHECK(list != NULL, "%s", strerror(errno));
	CHECK_EQ(n, 3);
	CHECK(list[n] == NULL, "list not NULL-terminated");
	CHECK(strcmp(ibv_get_device_name(list[0]), "dpv_net_null0") == 0, "%s",
	      ibv_get_device_name(list[0]));
	CHECK(strcmp(ibv_get_device_name(list[1]), "dpv_net_tap_t0") == 0, "%s",
	      ibv_get_device_name(list[1]));
	CHECK(strcmp(ibv_get_device_name(list[2]), "dpv_net_pcap0") == 0, "%s",
	      ibv_get_device_name(list[2]));
	CHECK_EQ(ibv_get_device_index(list[1]), 1);
	g = ibv_get_device_guid(list[0]);
	snprintf(guid, sizeof(guid), "%016llx", (unsigned long long)be64toh(g));
	CHECK(guid[6] == 'f' && guid[7] == 'f' && guid[8] == 'f' && guid[9] == 'e',
	      "GUID %s is not EUI-64", guid);
	ibv_free_device_list(list);

	ctx = test_open("dpv_net_null0");
	check_device_attr(ctx);
	check_port(ctx, IBV_PORT_ACTIVE);
	check_info(ctx, "net_null", 0);
	CHECK_EQ(ibv_close_device(ctx), 0);

	ctx = test_open("dpv_net_tap_t0");
	check_device_attr(ctx);
	/* net_tap offers checksums and TSO (rte_gso) in its own software. */
	check_info(ctx, "net_tap", DPV_OFFLOAD_IPV4_CKSUM | DPV_OFFLOAD_TCP_CKSUM |
		   DPV_OFFLOAD_UDP_CKSUM | DPV_OFFLOAD_TCP_TSO);
	CHECK(if_nametoindex("dpvtap_t0") != 0, "the tap interface does not exist");
	CHECK_EQ(ibv_close_device(ctx), 0);

	ctx = test_open("dpv_net_pcap0");
	check_device_attr(ctx);
	check_port(ctx, IBV_PORT_ACTIVE);
	check_info(ctx, "net_pcap", 0);
	CHECK_EQ(ibv_close_device(ctx), 0);

	/* After the last close the ports are detached; listing probes them again. */
	CHECK(if_nametoindex("dpvtap_t0") == 0, "the tap interface outlived the last close");
	list = ibv_get_device_list(&n);
	CHECK(list != NULL && n == 3, "second listing: %d devices", n);
	ibv_free_device_list(list);
	ctx = test_open("dpv_net_tap_t0");
	CHECK(if_nametoindex("dpvtap_t0") != 0, "the tap interface did not come back");
	CHECK_EQ(ibv_close_device(ctx), 0);
	return test_done("device");
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* dpverbs and the Linux kernel resolving each other's addresses across a veth pair (driven
 * by run_roce_neigh_netns.sh, which gives the port 10.97.0.2 and fd00:97::2 through the
 * configuration and the kernel end 10.97.0.1 and fd00:97::1 in a namespace). Once the harness
 * says go: resolve the kernel's IPv4 and IPv6 addresses with dpv__roce_resolve and write
 * "own <mac>", "v4 <mac|error>", "v6 <mac|error>" to the file given as argument; then keep
 * the port progressed (polling a CQ, as an application does) so that the kernel's ARP
 * requests and neighbour solicitations are answered, until the harness says close.
 * Linked with the internal libraries (dpv__roce_resolve). */
#include <arpa/inet.h>

#include "dpv_roce.h"
#include "dpv_test.h"
#include "verbs_priv.h"

static void put_mac(FILE *f, const char *what, int rc, const uint8_t m[6])
{
	if (rc != 0)
		fprintf(f, "%s error %d\n", what, rc);
	else
		fprintf(f, "%s %02x:%02x:%02x:%02x:%02x:%02x\n", what, m[0], m[1], m[2], m[3], m[4],
			m[5]);
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	struct ibv_cq *cq;
	struct dpv_device *dev;
	union ibv_gid g0, g1, g2;
	uint8_t own[6], mac[6], dgid[16] = { [10] = 0xff, [11] = 0xff };
	const char *close_ok = getenv("DPV_TEST_CLOSE");
	FILE *out;
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: %s <result file>\n", argv[0]);
		return 1;
	}
	ctx = test_open(NULL);                /* waits for the harness's go */
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	dev = to_dctx(ctx)->dev;
	CHECK(cq != NULL, "CQ");
	CHECK_EQ(ibv_query_gid(ctx, 1, 0, &g0), 0);
	CHECK_EQ(ibv_query_gid(ctx, 1, 1, &g1), 0);
	CHECK_EQ(ibv_query_gid(ctx, 1, 2, &g2), 0);
	CHECK(g1.raw[10] == 0xff && g1.raw[12] == 10, "GID 1 is the configured IPv4 address");
	CHECK(g2.raw[0] == 0xfd, "GID 2 is the configured IPv6 address");
	CHECK_EQ(dpv__roce_gid_to_mac(g0.raw, own), 0);
	out = fopen(argv[1], "w");
	if (out == NULL)
		return 1;
	put_mac(out, "own", 0, own);
	inet_pton(AF_INET, "10.97.0.1", dgid + 12);
	rc = dpv__roce_resolve(dev, 1, dgid, mac);
	CHECK_EQ(rc, 0);
	put_mac(out, "v4", rc, mac);
	inet_pton(AF_INET6, "fd00:97::1", dgid);
	rc = dpv__roce_resolve(dev, 2, dgid, mac);
	CHECK_EQ(rc, 0);
	put_mac(out, "v6", rc, mac);
	fclose(out);

	/* say so, then answer the kernel until the harness has what it needs (at most 30 s) */
	if (getenv("DPV_TEST_DONE") != NULL)
		fclose(fopen(getenv("DPV_TEST_DONE"), "w"));
	for (int i = 0; i < 30000 && close_ok != NULL && access(close_ok, F_OK) != 0; i++) {
		struct ibv_wc wc;

		ibv_poll_cq(cq, 1, &wc);
		usleep(1000);
	}
	ibv_destroy_cq(cq);
	ibv_close_device(ctx);
	return test_done("roce_neigh_wire");
}

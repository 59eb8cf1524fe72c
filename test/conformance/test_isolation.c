/* SPDX-License-Identifier: BSD-3-Clause */
/* rdma-core's libibverbs and shared DPDK libraries never enter a dpverbs process: a shared
 * librte_eal would turn DPDK's plugin autoload on, which loads mlx4/mlx5 and, with them, the
 * real libibverbs, whose ibv_* would then compete with ours. */
#include "dpv_test.h"

static int mappings_matching(const char *needle, char *first, size_t len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[1024];
	int n = 0;

	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, needle) != NULL && n++ == 0)
			snprintf(first, len, "%s", line);
	if (f != NULL)
		fclose(f);
	return n;
}

int main(void)
{
	struct ibv_context *ctx = test_open(NULL);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_qp *qp = test_raw_qp(pd, cq, (struct ibv_qp_cap){ .max_send_wr = 8,
								  .max_send_sge = 1 });
	char first[1024] = "";

	CHECK_EQ(mappings_matching("libibverbs", first, sizeof(first)), 0);
	if (first[0])
		fprintf(stderr, "mapped: %s", first);
	first[0] = '\0';
	CHECK_EQ(mappings_matching("librte_", first, sizeof(first)), 0);
	if (first[0])
		fprintf(stderr, "mapped: %s", first);
	CHECK_EQ(mappings_matching("libmlx", first, sizeof(first)), 0);
	CHECK(mappings_matching("libdpverbs", first, sizeof(first)) > 0, "libdpverbs not mapped?");
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	return test_finish(ctx, pd, "isolation");
}

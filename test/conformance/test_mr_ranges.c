/* SPDX-License-Identifier: BSD-3-Clause */
/* The DMA range registry behind ibv_reg_mr for memory outside DPDK's heap (mr_dma_map = 2
 * forces it on vdevs too): overlapping and neighbouring MRs share page ranges, ranges go when
 * their last MR does, and running out of DPDK memseg lists is ENOMEM with nothing half-done. */
#include <sys/mman.h>
#include <unistd.h>

#include "dpv_test.h"

#define MAX_TRY 300

int main(void)
{
	char cfg[] = "/tmp/dpv-mr-ranges-XXXXXX";
	int fd = mkstemp(cfg);
	long pg = sysconf(_SC_PAGESIZE);
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	uint8_t *mem;
	struct ibv_mr *a, *b, *c, *d, *many[MAX_TRY];
	int ok = 0;

	CHECK(fd >= 0 && write(fd, "mr_dma_map = 2\n", 15) == 15);
	close(fd);
	setenv("DPV_CONFIG", cfg, 1);
	ctx = test_open(NULL);
	unlink(cfg);
	pd = ibv_alloc_pd(ctx);
	mem = mmap(NULL, 16 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(mem != MAP_FAILED);

	CHECK_EQ(dpv_dma_range_count(), 0);
	a = ibv_reg_mr(pd, mem + 100, 3 * pg - 200, 0);        /* pages 0-2 */
	CHECK(a != NULL, "%s", strerror(errno));
	CHECK_EQ(dpv_dma_range_count(), 1);
	b = ibv_reg_mr(pd, mem + 2 * pg, 3 * pg, 0);           /* pages 2-4: only 3-4 are new */
	CHECK(b != NULL);
	CHECK_EQ(dpv_dma_range_count(), 2);
	c = ibv_reg_mr(pd, mem + pg + 7, 10, 0);               /* inside page 1 */
	CHECK(c != NULL);
	CHECK_EQ(dpv_dma_range_count(), 2);
	d = ibv_reg_mr(pd, mem + 5 * pg - 1, 2, 0);            /* straddles pages 4 and 5 */
	CHECK(d != NULL);
	CHECK_EQ(dpv_dma_range_count(), 3);
	CHECK_EQ(ibv_dereg_mr(a), 0);
	CHECK_EQ(dpv_dma_range_count(), 3);                    /* b and c still hold them */
	CHECK_EQ(ibv_dereg_mr(b), 0);
	CHECK_EQ(dpv_dma_range_count(), 3);                    /* c: pages 0-2, d: 3-4 and 5 */
	CHECK_EQ(ibv_dereg_mr(c), 0);
	CHECK_EQ(dpv_dma_range_count(), 2);
	CHECK_EQ(ibv_dereg_mr(d), 0);
	CHECK_EQ(dpv_dma_range_count(), 0);

	/* one range per disjoint MR until DPDK has no memseg list left: then ENOMEM */
	for (int i = 0; i < MAX_TRY; i++) {
		uint8_t *m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		errno = 0;
		many[i] = m == MAP_FAILED ? NULL : ibv_reg_mr(pd, m, pg, 0);
		if (many[i] == NULL) {
			CHECK_EQ(errno, ENOMEM);
			break;
		}
		ok++;
	}
	CHECK(ok > 8 && ok < MAX_TRY, "%d MRs before ENOMEM", ok);
	CHECK_EQ(dpv_dma_range_count(), ok);
	for (int i = 0; i < ok; i++)
		CHECK_EQ(ibv_dereg_mr(many[i]), 0);
	CHECK_EQ(dpv_dma_range_count(), 0);
	/* and registration works again */
	a = ibv_reg_mr(pd, mem, pg, 0);
	CHECK(a != NULL);
	CHECK_EQ(ibv_dereg_mr(a), 0);
	return test_finish(ctx, pd, "mr_ranges");
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* The drop-in libibverbs.so.1 as a program linked against rdma-core meets it, symbol by
 * version (dlvsym): the 1.1 functions work; their 1.0 versions find no device and say why;
 * rdma-core's helpers compute what rdma-core's do; the provider interface (IBVERBS_PRIVATE_34)
 * answers EOPNOTSUPP and never touches its arguments; ibv_query_gid_type names each GID's type.
 * Usage: test_dropin <path of libibverbs.so.1> (DPV_EAL_ARGS names one port). */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "dpv_check.h"


static void *lib;

static void *sym(const char *name, const char *version)
{
	void *p = dlvsym(lib, name, version);

	CHECK(p != NULL, "%s@%s: %s", name, version, dlerror());
	return p;
}

static const char *const cmds[] = {
	"get_context", "query_context", "query_device_any", "query_port", "alloc_pd", "dealloc_pd",
	"open_xrcd", "close_xrcd", "reg_mr", "rereg_mr", "dereg_mr", "query_mr", "advise_mr",
	"reg_dmabuf_mr", "alloc_mw", "dealloc_mw", "alloc_dm", "free_dm", "reg_dm_mr", "create_cq",
	"create_cq_ex", "req_notify_cq", "resize_cq", "destroy_cq", "modify_cq", "create_srq",
	"create_srq_ex", "modify_srq", "query_srq", "destroy_srq", "create_qp", "create_qp_ex",
	"create_qp_ex2", "open_qp", "query_qp", "modify_qp", "modify_qp_ex", "destroy_qp",
	"create_ah", "destroy_ah", "attach_mcast", "detach_mcast", "create_flow", "destroy_flow",
	"create_flow_action_esp", "modify_flow_action_esp", "destroy_flow_action", "create_wq",
	"modify_wq", "destroy_wq", "create_rwq_ind_table", "destroy_rwq_ind_table",
	"create_counters", "destroy_counters", "read_counters",
};

static void check_old_abi(void)
{
	void *(*list10)(int *) = sym("ibv_get_device_list", "IBVERBS_1.0");
	int n = -1;

	errno = 0;
	CHECK(list10 != NULL && list10(&n) == NULL && errno == EOPNOTSUPP && n == 0,
	      "ibv_get_device_list@IBVERBS_1.0: no device, EOPNOTSUPP (errno %d)", errno);
}

static void check_private(struct ibv_context *ctx)
{
	int (*gid_type)(struct ibv_context *, uint8_t, unsigned int, int *) =
		sym("ibv_query_gid_type", "IBVERBS_PRIVATE_34");
	int (*poll)(struct ibv_cq *, int, struct ibv_wc *) =
		sym("ibv_cmd_poll_cq", "IBVERBS_PRIVATE_34");
	int (*post)(struct ibv_qp *, struct ibv_send_wr *, struct ibv_send_wr **) =
		sym("ibv_cmd_post_send", "IBVERBS_PRIVATE_34");
	struct ibv_send_wr wr = { 0 }, *bad = NULL;
	int type = -1;

	CHECK(gid_type != NULL && gid_type(ctx, 1, 0, &type) == 0 && type == 1,
	      "GID 0 is RoCE v2 (sysfs type 1), got %d", type);
	type = -1;       /* an empty entry: rdma-core's answer, RoCE v1 */
	CHECK(gid_type != NULL && gid_type(ctx, 1, 1, &type) == 0 && type == 0,
	      "empty GID 1 is sysfs type 0, got %d", type);
	errno = 0;
	CHECK(gid_type != NULL && gid_type(ctx, 1, 16, &type) == -1 && errno == EINVAL,
	      "GID 16 is outside the table");
	CHECK(poll != NULL && poll(NULL, 1, NULL) == -1 && errno == EOPNOTSUPP, "ibv_cmd_poll_cq");
	CHECK(post != NULL && post(NULL, &wr, &bad) == EOPNOTSUPP && bad == &wr,
	      "ibv_cmd_post_send names the WR");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char name[64];
		int (*cmd)(void);

		snprintf(name, sizeof(name), "ibv_cmd_%s", cmds[i]);
		cmd = (int (*)(void))sym(name, "IBVERBS_PRIVATE_34");
		CHECK(cmd != NULL && cmd() == EOPNOTSUPP, "%s answers EOPNOTSUPP", name);
	}
}

static void check_helpers(void)
{
	enum ibv_rate (*mult)(int) = sym("mult_to_ibv_rate", "IBVERBS_1.0");
	enum ibv_rate (*mbps)(int) = sym("mbps_to_ibv_rate", "IBVERBS_1.1");
	int (*rd)(const char *, const char *, char *, size_t) =
		sym("ibv_read_sysfs_file", "IBVERBS_1.0");
	char buf[64];

	CHECK(mult != NULL && mult(4) == IBV_RATE_10_GBPS && mult(3) == IBV_RATE_MAX, "mult");
	CHECK(mbps != NULL && mbps(25781) == IBV_RATE_25_GBPS, "mbps_to_ibv_rate");
	CHECK(rd != NULL && rd("/proc/self", "comm", buf, sizeof(buf)) > 0 &&
	      strchr(buf, '\n') == NULL, "ibv_read_sysfs_file reads a line without its newline");
}

int main(int argc, char **argv)
{
	struct ibv_device **(*list)(int *);
	struct ibv_context *(*open)(struct ibv_device *);
	int (*close)(struct ibv_context *);
	void (*free_list)(struct ibv_device **);
	struct ibv_device **devs;
	struct ibv_context *ctx;
	int n = 0;

	lib = argc > 1 ? dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) : NULL;
	if (lib == NULL) {
		fprintf(stderr, "usage: test_dropin libibverbs.so.1 (%s)\n", dlerror());
		return 1;
	}
	check_old_abi();
	check_helpers();
	list = sym("ibv_get_device_list", "IBVERBS_1.1");
	open = sym("ibv_open_device", "IBVERBS_1.1");
	close = sym("ibv_close_device", "IBVERBS_1.1");
	free_list = sym("ibv_free_device_list", "IBVERBS_1.1");
	devs = list != NULL ? list(&n) : NULL;
	CHECK(devs != NULL && n >= 1, "ibv_get_device_list@@IBVERBS_1.1: %d devices", n);
	ctx = devs != NULL && open != NULL ? open(devs[0]) : NULL;
	CHECK(ctx != NULL, "ibv_open_device: %s", strerror(errno));
	if (ctx != NULL) {
		check_private(ctx);
		CHECK(close(ctx) == 0, "ibv_close_device");
	}
	if (devs != NULL && free_list != NULL)
		free_list(devs);
	return test_done("dropin");
}

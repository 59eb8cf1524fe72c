/* Starting DPDK inside a program: a bad DPV_EAL_ARGS is an error with errno, never an exit;
 * dpv_init() after a failure works; dpverbs' safety additions are applied. */
#include <dirent.h>
#include <unistd.h>

#include "dpv_test.h"

int main(void)
{
	char *bad[] = { "prog", "--definitely-not-an-eal-option", NULL };
	char *good[] = { "prog", "--vdev=net_null0", "--log-level=lib.eal:warning", NULL };
	struct ibv_device **list;
	char prefix[64];
	int n = -1;

	/* the lazy path with arguments the EAL rejects */
	setenv("DPV_EAL_ARGS", "--no-such-option", 1);
	errno = 0;
	list = ibv_get_device_list(&n);
	CHECK(list == NULL, "a bad DPV_EAL_ARGS gave a device list");
	CHECK_EQ(errno, EINVAL);
	errno = 0;
	CHECK(ibv_get_device_list(&n) == NULL && errno == EINVAL, "the failure is remembered");

	/* dpv_init may be called again after a failure */
	CHECK_EQ(dpv_init(2, bad), EINVAL);
	CHECK_EQ(dpv_init(3, good), 0);
	CHECK_EQ(dpv_init(3, good), EALREADY);
	CHECK(strstr(dpv_eal_args(), "--no-pci") != NULL, "args: %s", dpv_eal_args());
	snprintf(prefix, sizeof(prefix), "--file-prefix=dpv-%d", (int)getpid());
	CHECK(strstr(dpv_eal_args(), prefix) != NULL, "args: %s", dpv_eal_args());

	list = ibv_get_device_list(&n);
	CHECK(list != NULL && n == 1, "devices after dpv_init: %d", n);
	if (list != NULL) {
		CHECK(strcmp(ibv_get_device_name(list[0]), "dpv_net_null0") == 0);
		ibv_free_device_list(list);
	}
	return test_done("eal");
}

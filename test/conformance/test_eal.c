/* SPDX-License-Identifier: BSD-3-Clause */
/* Starting DPDK inside a program: a bad DPV_EAL_ARGS is an error with errno, never an exit;
 * dpv_init() after a failure works; dpverbs' safety additions are applied. The EAL cannot be
 * started again after a failure past its argument parsing, so the other failures (a vdev of no
 * driver, a hugepage directory that is not there, more memory than the machine has, a second
 * primary process on the same --file-prefix) each run in a child process: it must return an
 * errno and print a message naming the problem, never abort, exit or hang. */
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dpv_test.h"

struct start_result {
	bool exited;                 /* the child returned from ibv_get_device_list */
	bool got_list;
	int err;                     /* errno after ibv_get_device_list */
	char out[8192];              /* what it printed on stderr */
	bool dir_left;               /* its runtime directory (dpverbs' own prefix) is still there */
};

/* As root, DPDK's runtime directories are under /var/run/dpdk. */
static bool runtime_dir_left(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/var/run/dpdk/dpv-%d", (int)pid);
	return getuid() == 0 && access(path, F_OK) == 0;
}

/* In a child with DPV_EAL_ARGS=@args: ibv_get_device_list. With @hold_fd >= 0, on success
 * write a byte to it and wait until the parent closes @wait_fd (holding the EAL). */
static void start_child(const char *args, int res_fd, int err_fd, int hold_fd, int wait_fd)
{
	int n = 0, r[2];
	struct ibv_device **list;
	char c;

	dup2(err_fd, 2);
	alarm(60);                                  /* a hang ends as SIGALRM: a failure */
	setenv("DPV_EAL_ARGS", args, 1);
	errno = 0;
	list = ibv_get_device_list(&n);
	r[0] = list != NULL;
	r[1] = errno;
	if (write(res_fd, r, sizeof(r)) != sizeof(r))
		_exit(3);
	if (list != NULL && hold_fd >= 0) {
		if (write(hold_fd, "x", 1) != 1 || read(wait_fd, &c, 1) < 0)
			_exit(3);
	}
	if (list != NULL)
		ibv_free_device_list(list);
	exit(0);                                    /* dpverbs' exit handlers run */
}

static pid_t spawn(const char *args, int res[2], int err[2], int hold_fd, int wait_fd)
{
	pid_t pid;

	if (pipe(res) != 0 || pipe(err) != 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		close(res[0]);
		close(err[0]);
		start_child(args, res[1], err[1], hold_fd, wait_fd);
	}
	close(res[1]);
	close(err[1]);
	return pid;
}

static void collect(pid_t pid, int res[2], int err[2], struct start_result *out)
{
	int r[2] = { 0, 0 }, status = 0;
	ssize_t k, len = 0;

	memset(out, 0, sizeof(*out));
	while (len < (ssize_t)sizeof(out->out) - 1 &&
	       (k = read(err[0], out->out + len, sizeof(out->out) - 1 - len)) > 0)
		len += k;
	out->exited = read(res[0], r, sizeof(r)) == sizeof(r);
	close(res[0]);
	close(err[0]);
	waitpid(pid, &status, 0);
	out->exited = out->exited && WIFEXITED(status) && WEXITSTATUS(status) == 0;
	out->dir_left = runtime_dir_left(pid);
	out->got_list = r[0];
	out->err = r[1];
	if (!out->exited)
		fprintf(stderr, "child for failure: status %#x, stderr:\n%s\n", status, out->out);
}

static void start_in_child(const char *args, struct start_result *out)
{
	int res[2], err[2];
	pid_t pid = spawn(args, res, err, -1, -1);

	CHECK(pid > 0);
	if (pid > 0)
		collect(pid, res, err, out);
}

/* Each start fails with an errno and a message naming what is wrong. */
static void failures_in_children(void)
{
	static struct start_result r;
	char args[256], dir[128];
	int res[2], err[2], hold[2], wait_pipe[2];
	pid_t holder;
	char c;

	start_in_child("--vdev=net_nosuchdriver0", &r);
	CHECK(r.exited && !r.got_list && r.err != 0, "missing vdev: errno %d", r.err);
	CHECK(strstr(r.out, "net_nosuchdriver0") != NULL, "message: %s", r.out);
	CHECK(strstr(r.out, "DPV_EAL_ARGS") != NULL, "message: %s", r.out);
	CHECK(!r.dir_left, "the failed start left its runtime directory");

	start_in_child("--vdev=net_null0 --huge-dir=/nonexistent/hugepages", &r);
	CHECK(r.exited && (r.got_list || r.err != 0), "huge-dir: errno %d", r.err);
	if (!r.got_list)
		CHECK(strstr(r.out, "DPV_EAL_ARGS") != NULL, "message: %s", r.out);

	start_in_child("--vdev=net_null0 -m 1073741824", &r);     /* 1 PiB */
	CHECK(r.exited && !r.got_list && r.err != 0, "-m 1 PiB: errno %d", r.err);
	CHECK(strstr(r.out, "DPV_EAL_ARGS") != NULL, "message: %s", r.out);
	CHECK(!r.dir_left, "the failed start left its runtime directory");

	/* a second primary process on the prefix of a running one */
	snprintf(dir, sizeof(dir), "dpvt-eal-%d", (int)getpid());
	snprintf(args, sizeof(args), "--vdev=net_null0 --file-prefix=%s", dir);
	CHECK(pipe(hold) == 0 && pipe(wait_pipe) == 0);
	holder = fork();
	if (holder == 0) {
		close(hold[0]);
		close(wait_pipe[1]);
		close(1);
		start_child(args, open("/dev/null", O_WRONLY), open("/dev/null", O_WRONLY),
			    hold[1], wait_pipe[0]);
	}
	close(hold[1]);
	close(wait_pipe[0]);
	CHECK(read(hold[0], &c, 1) == 1, "the first process did not start");
	start_in_child(args, &r);
	CHECK(r.exited && !r.got_list && r.err != 0, "same prefix: errno %d", r.err);
	CHECK(strstr(r.out, "DPV_EAL_ARGS") != NULL, "message: %s", r.out);
	close(wait_pipe[1]);                                   /* the first one may go */
	waitpid(holder, NULL, 0);
	close(hold[0]);
	snprintf(args, sizeof(args), "rm -rf /var/run/dpdk/%s", dir);
	if (system(args) != 0)
		fprintf(stderr, "could not remove /var/run/dpdk/%s\n", dir);
	(void)res;
	(void)err;
}

int main(void)
{
	char *bad[] = { "prog", "--definitely-not-an-eal-option", NULL };
	char *good[] = { "prog", "--vdev=net_null0", "--log-level=lib.eal:warning", NULL };
	struct ibv_device **list;
	char prefix[64];
	int n = -1;

	failures_in_children();

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
	{
		cpu_set_t before, after;

		/* no lcore list: the EAL must not leave the caller pinned to one CPU */
		CHECK_EQ(pthread_getaffinity_np(pthread_self(), sizeof(before), &before), 0);
		CHECK_EQ(dpv_init(3, good), 0);
		CHECK_EQ(pthread_getaffinity_np(pthread_self(), sizeof(after), &after), 0);
		CHECK(CPU_EQUAL(&before, &after), "the thread's CPUs: %d before dpv_init, %d after",
		      CPU_COUNT(&before), CPU_COUNT(&after));
	}
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

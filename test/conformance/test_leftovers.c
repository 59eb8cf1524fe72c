/* SPDX-License-Identifier: BSD-3-Clause */
/* What dpverbs processes killed by a signal leave, and its removal at the next start
 * (doc/memory.md, "Leftovers"). Children start DPDK and are SIGKILLed: with hugepages
 * (--in-memory: the runtime directory and its telemetry socket), with --huge-unlink=never
 * (the directory with the shared configuration, and hugepage files dpv-<pid>map_*), and with
 * --no-huge (the directory with configuration files); each leftover is there after the kill.
 * Then this process starts DPDK (--no-huge: DPDK itself would remove unlocked hugepage files
 * when it starts with hugepages): every one of them is gone, while these stay: the directory
 * of a live dpverbs process, directories of a dead pid whose files a live process holds
 * locked by another process (fcntl, as the EAL locks its config; flock, as it locks memseg
 * metadata), and another program's prefix. Not parallel with other tests: their starts would clean too.
 * DPV_EAL_ARGS: --vdev=net_null0. */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "dpv_test.h"

static char base[512], hugedir[512];

/* As the EAL chooses its runtime directory. */
static void find_dirs(void)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	FILE *f = fopen("/proc/mounts", "r");
	char line[1024], mnt[512], type[64];

	snprintf(base, sizeof(base), "%s/dpdk", getuid() == 0 ? "/var/run" : xdg ? xdg : "/tmp");
	while (f != NULL && hugedir[0] == '\0' && fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "%*s %511s %63s", mnt, type) == 2 && strcmp(type, "hugetlbfs") == 0)
			snprintf(hugedir, sizeof(hugedir), "%s", mnt);
	if (f != NULL)
		fclose(f);
}

static bool free_hugepages(void)
{
	FILE *f = fopen("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "r");
	long n = 0;

	if (f != NULL && fscanf(f, "%ld", &n) != 1)
		n = 0;
	if (f != NULL)
		fclose(f);
	return n > 64 && hugedir[0] != '\0';
}

static bool dir_exists(pid_t pid, const char *prefix)
{
	char path[700];

	snprintf(path, sizeof(path), "%s/%s%d", base, prefix, (int)pid);
	return access(path, F_OK) == 0;
}

/* Hugepage files of @pid (dpv-<pid>map_*). */
static int huge_files(pid_t pid)
{
	char want[64];
	DIR *d = opendir(hugedir);
	struct dirent *e;
	int n = 0;

	snprintf(want, sizeof(want), "dpv-%dmap_", (int)pid);
	while (d != NULL && (e = readdir(d)) != NULL)
		n += strncmp(e->d_name, want, strlen(want)) == 0;
	if (d != NULL)
		closedir(d);
	return n;
}

struct proc {
	pid_t pid;
	int go;                          /* closing it lets a live child exit */
};

/* The go ends this process holds: a new child closes them, or a child would not see EOF
 * when this process closes its end. */
static int gos[8], nb_go;

static void close_gos(void)
{
	for (int i = 0; i < nb_go; i++)
		close(gos[i]);
}

/* Let @p go (EOF on its pipe), and wait for it. */
static void release(struct proc *p, int *status)
{
	for (int i = 0; i < nb_go; i++)
		if (gos[i] == p->go)
			gos[i] = gos[--nb_go];
	close(p->go);
	waitpid(p->pid, status, 0);
}

/* A child that starts DPDK with DPV_EAL_ARGS plus @extra, says so, and waits. */
static struct proc start_child(const char *extra)
{
	const char *env = getenv("DPV_EAL_ARGS");
	struct proc p = { -1, -1 };
	int ready[2], go[2];
	char args[512], c = 0;

	snprintf(args, sizeof(args), "%s %s", env != NULL ? env : "", extra);
	if (pipe(ready) != 0 || pipe(go) != 0)
		exit(1);
	fflush(NULL);
	p.pid = fork();
	if (p.pid == 0) {
		struct ibv_device **list;
		struct ibv_context *ctx;

		close_gos();
		close(ready[0]);
		close(go[1]);
		setenv("DPV_EAL_ARGS", args, 1);
		list = ibv_get_device_list(NULL);
		ctx = list != NULL ? ibv_open_device(list[0]) : NULL;   /* its pools: hugepages */
		c = ctx != NULL;
		if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) < 0)
			_exit(3);
		ibv_close_device(ctx);
		ibv_free_device_list(list);
		exit(0);                 /* a normal exit: dpverbs removes its directory */
	}
	close(ready[1]);
	close(go[0]);
	CHECK(read(ready[0], &c, 1) == 1 && c == 1, "child with '%s' started DPDK", extra);
	close(ready[0]);
	p.go = go[1];
	gos[nb_go++] = p.go;
	return p;
}

static void kill_child(struct proc *p)
{
	int status;

	kill(p->pid, SIGKILL);
	release(p, &status);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

static pid_t dead_pid(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	return pid;
}

/* @prefix<pid>/@file, made by this test; the open descriptor (a lock goes on it). */
static int fake_dir(const char *prefix, pid_t pid, const char *file)
{
	char path[700];
	int fd;

	snprintf(path, sizeof(path), "%s/%s%d", base, prefix, (int)pid);
	CHECK(mkdir(path, 0700) == 0, "mkdir %s: %s", path, strerror(errno));
	snprintf(path + strlen(path), sizeof(path) - strlen(path), "/%s", file);
	fd = open(path, O_RDWR | O_CREAT, 0600);
	CHECK(fd >= 0 && write(fd, "x", 1) == 1);
	return fd;
}

static void remove_fake(const char *prefix, pid_t pid, const char *file)
{
	char path[700];

	snprintf(path, sizeof(path), "%s/%s%d/%s", base, prefix, (int)pid, file);
	unlink(path);
	*strrchr(path, '/') = '\0';
	rmdir(path);
}

/* Another process holds an fcntl lock on the config of dpv-<@a> (as the EAL locks it; a lock
 * of the cleaning process itself would not show) and a flock on a file of dpv-<@b>. */
static struct proc hold_locks(pid_t a, pid_t b)
{
	struct proc p = { -1, -1 };
	int ready[2], go[2];
	char c = 0;

	if (pipe(ready) != 0 || pipe(go) != 0)
		exit(1);
	fflush(NULL);
	p.pid = fork();
	if (p.pid == 0) {
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
		int fa, fb;

		close_gos();
		close(ready[0]);
		close(go[1]);
		fa = fake_dir("dpv-", a, "config");
		fb = fake_dir("dpv-", b, "fbarray_memzone");

		c = fa >= 0 && fb >= 0 && fcntl(fa, F_SETLK, &fl) == 0 && flock(fb, LOCK_SH) == 0;
		if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) < 0)
			_exit(3);
		_exit(0);
	}
	close(ready[1]);
	close(go[0]);
	CHECK(read(ready[0], &c, 1) == 1 && c == 1, "the lock holder is ready");
	close(ready[0]);
	p.go = go[1];
	gos[nb_go++] = p.go;
	return p;
}

int main(void)
{
	struct proc killed[3], live, holder;
	const char *modes[3] = { "", "--no-huge -m 128", "--huge-unlink=never" };
	pid_t locked_fcntl = dead_pid(), locked_flock = dead_pid(), other = dead_pid();
	struct ibv_device **list;
	char args[512];
	bool huge;

	find_dirs();
	huge = free_hugepages();
	if (getuid() != 0)
		fprintf(stderr, "not root: runtime directories under %s\n", base);
	/* each child's start cleans its predecessor's leftovers: each is looked at at once, and
	 * the last one's (hugepage files) are there until this process starts */
	live = start_child("");
	for (int i = 0; i < 3; i++) {
		if (i == 2 && !huge) {
			killed[i].pid = -1;
			continue;
		}
		killed[i] = start_child(modes[i]);
		kill_child(&killed[i]);
		CHECK(dir_exists(killed[i].pid, "dpv-"), "'%s': runtime directory left", modes[i]);
	}
	if (huge)
		CHECK(huge_files(killed[2].pid) > 0, "hugepage files left");
	holder = hold_locks(locked_fcntl, locked_flock);
	close(fake_dir("fkother-", other, "config"));

	/* the next start, without hugepages: DPDK itself removes unlocked hugepage files of any
	 * prefix when it starts with hugepages (too late for dpverbs' look at free hugepages);
	 * without, only dpverbs does */
	snprintf(args, sizeof(args), "%s --no-huge -m 128", getenv("DPV_EAL_ARGS"));
	setenv("DPV_EAL_ARGS", args, 1);
	list = ibv_get_device_list(NULL);
	CHECK(list != NULL, "%s", strerror(errno));
	for (int i = 0; i < 3; i++)
		if (killed[i].pid > 0)
			CHECK(!dir_exists(killed[i].pid, "dpv-"), "'%s': directory removed", modes[i]);
	if (huge)
		CHECK_EQ(huge_files(killed[2].pid), 0);
	CHECK(dir_exists(live.pid, "dpv-"), "a live process's directory is kept");
	CHECK(dir_exists(locked_fcntl, "dpv-"), "a directory whose config is locked is kept");
	CHECK(dir_exists(locked_flock, "dpv-"), "a directory with a flock'ed file is kept");
	CHECK(dir_exists(other, "fkother-"), "another program's prefix is kept");
	CHECK(dir_exists(getpid(), "dpv-"), "this process's own directory is there");

	release(&live, NULL);                    /* a normal exit removes its own */
	CHECK(!dir_exists(live.pid, "dpv-"), "the live child's exit removed its directory");
	release(&holder, NULL);
	remove_fake("dpv-", locked_fcntl, "config");
	remove_fake("dpv-", locked_flock, "fbarray_memzone");
	remove_fake("fkother-", other, "config");
	ibv_free_device_list(list);
	return test_done("leftovers");
}

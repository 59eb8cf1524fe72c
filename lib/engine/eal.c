/* SPDX-License-Identifier: BSD-3-Clause */
/* Starting DPDK inside a host program: the EAL arguments (dpv_init or DPV_EAL_ARGS), the safety
 * defaults dpverbs adds to them, hugepage detection, and the clean-up at exit. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <glob.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>

#include "dpv_engine.h"
#include "dpverbs.h"

RTE_LOG_REGISTER(dpv_logtype_engine, lib.dpverbs.engine, NOTICE);

#define MAX_ARGS 128

struct eal_args {
	int argc;
	char *argv[MAX_ARGS + 1];
};

static pthread_mutex_t eal_lock = PTHREAD_MUTEX_INITIALIZER;
static int eal_state;           /* 0: not started, 1: running, < 0: the start failed */
static char args_used[2048];
static char runtime_dir[512];   /* removed at exit when dpverbs chose the file prefix */
static void (*stop_hook)(void);

static int args_push(struct eal_args *a, const char *s)
{
	if (a->argc >= MAX_ARGS) {
		ENGINE_LOG(ERR, "more than %d EAL arguments", MAX_ARGS);
		return -E2BIG;
	}
	a->argv[a->argc] = strdup(s);
	if (a->argv[a->argc] == NULL)
		return -ENOMEM;
	a->argv[++a->argc] = NULL;
	return 0;
}

static void args_free(struct eal_args *a)
{
	for (int i = 0; i < a->argc; i++)
		free(a->argv[i]);
	a->argc = 0;
}

/* An option given as "--opt", "--opt=value" or "-o"/"-ovalue" (short options only). */
static bool args_have(const struct eal_args *a, const char *opt)
{
	size_t n = strlen(opt);

	for (int i = 1; i < a->argc; i++) {
		if (strncmp(a->argv[i], opt, n) != 0)
			continue;
		if (a->argv[i][n] == '\0' || a->argv[i][n] == '=' || opt[1] != '-')
			return true;
	}
	return false;
}

/* Free 2 MiB (or other size) hugepages anywhere on the machine, and a hugetlbfs mount. */
static bool hugepages_usable(void)
{
	glob_t g;
	unsigned long free_pages = 0;
	char line[512];
	bool mounted = false;
	FILE *f;

	if (glob("/sys/kernel/mm/hugepages/hugepages-*/free_hugepages", 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++) {
			unsigned long n = 0;

			f = fopen(g.gl_pathv[i], "r");
			if (f != NULL && fscanf(f, "%lu", &n) == 1)
				free_pages += n;
			if (f != NULL)
				fclose(f);
		}
		globfree(&g);
	}
	f = fopen("/proc/mounts", "r");
	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, " hugetlbfs ") != NULL)
			mounted = true;
	if (f != NULL)
		fclose(f);
	return free_pages > 0 && mounted;
}

/* dpverbs' additions: never probe PCI devices nobody named, a process-own file prefix,
 * no hugepage files left behind, and --no-huge where there are no hugepages. */
static int args_complete(struct eal_args *a, bool *own_prefix)
{
	bool no_huge = args_have(a, "--no-huge");
	int rc = 0;
	char buf[64];

	if (!args_have(a, "--no-pci") && !args_have(a, "-a") && !args_have(a, "--allow"))
		rc = args_push(a, "--no-pci");
	if (rc == 0 && !no_huge && !hugepages_usable()) {
		ENGINE_LOG(WARNING, "no free hugepages: running with --no-huge (slower, and no VFIO "
			   "device can DMA). Fix: as root, dpdk-hugepages.py -p 2M --setup 1G");
		rc = args_push(a, "--no-huge");
		no_huge = true;
		if (rc == 0 && !args_have(a, "-m") && !args_have(a, "--socket-mem"))
			rc = args_push(a, "-m512");
	}
	*own_prefix = !args_have(a, "--file-prefix");
	if (rc == 0 && *own_prefix) {
		snprintf(buf, sizeof(buf), "--file-prefix=dpv-%d", (int)getpid());
		rc = args_push(a, buf);
	}
	/* --in-memory leaves no hugepage file; --no-huge creates none and excludes it. */
	if (rc == 0 && !no_huge && !args_have(a, "--in-memory") && !args_have(a, "--proc-type") &&
	    !args_have(a, "--huge-unlink"))
		rc = args_push(a, *own_prefix ? "--in-memory" : "--huge-unlink");
	return rc;
}

static void args_render(const struct eal_args *a)
{
	size_t len = 0;

	args_used[0] = '\0';
	for (int i = 1; i < a->argc && len < sizeof(args_used); i++)
		len += snprintf(args_used + len, sizeof(args_used) - len, "%s%s",
				i > 1 ? " " : "", a->argv[i]);
}

static void remove_runtime_dir(void)
{
	DIR *d;
	struct dirent *e;
	char path[1024];

	if (runtime_dir[0] == '\0')
		return;
	d = opendir(runtime_dir);
	while (d != NULL && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", runtime_dir, e->d_name);
		unlink(path);
	}
	if (d != NULL)
		closedir(d);
	rmdir(runtime_dir);
}

/* A failed start may leave the EAL's runtime directory behind: remove it when it is of
 * dpverbs' own prefix. */

static void remove_failed_runtime_dir(void)
{
	const char *dir = rte_eal_get_runtime_dir(), *base;
	char own[64];

	snprintf(own, sizeof(own), "dpv-%d", (int)getpid());
	base = dir != NULL ? strrchr(dir, '/') : NULL;
	if (base == NULL || strcmp(base + 1, own) != 0)
		return;
	snprintf(runtime_dir, sizeof(runtime_dir), "%s", dir);
	remove_runtime_dir();
	runtime_dir[0] = '\0';
}

/* In a forked child, everything here is the parent's (ports, memory, the runtime directory):
 * its exit leaves it alone. */
static void eal_stop_at_exit(void)
{
	if (dpv__fork_child_check())
		return;
	pthread_mutex_lock(&eal_lock);
	if (eal_state == 1) {
		dpv__service_stop_all();          /* nothing polls the ports while they close */
		if (stop_hook != NULL)
			stop_hook();
		rte_eal_cleanup();
		remove_runtime_dir();
		eal_state = 0;
	}
	pthread_mutex_unlock(&eal_lock);
}

static int eal_start_locked(struct eal_args *a)
{
	struct eal_args copy = { 0 };
	bool own_prefix, keep_affinity;
	cpu_set_t cpus;
	int saved_optind = optind, saved_opterr = opterr, saved_optopt = optopt, rc;
	char *saved_optarg = optarg;

	rc = dpv__config_load_checked();
	dpv__leftovers_clean();        /* before the hugepage count: a dead process's files hold pages */
	if (rc == 0)
		rc = args_complete(a, &own_prefix);
	if (rc != 0)
		return rc;
	args_render(a);
	/* Without an lcore list the EAL pins the calling thread to the first CPU, and two verbs
	 * programs on one host would share it (doc/compat.md, raw_ethernet_lat): the
	 * application asked for no pinning, so its thread gets its CPUs back (still lcore 0). */
	keep_affinity = !args_have(a, "-l") && !args_have(a, "-c") && !args_have(a, "--lcores") &&
			pthread_getaffinity_np(pthread_self(), sizeof(cpus), &cpus) == 0;
	/* The EAL permutes argv: give it a copy of the pointers, keep ours to free. */
	copy = *a;
	optind = 1;
	rc = rte_eal_init(copy.argc, copy.argv);
	if (rc >= 0 && keep_affinity &&
	    pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus) != 0)
		ENGINE_LOG(WARNING, "could not give the calling thread its CPUs back after the EAL "
			   "pinned it (pass -l to choose)");
	optind = saved_optind;
	opterr = saved_opterr;
	optopt = saved_optopt;
	optarg = saved_optarg;
	if (rc < 0) {
		rc = rte_errno > 0 ? -rte_errno : -EINVAL;
		ENGINE_LOG(ERR, "DPDK did not start with EAL arguments '%s': %s (the EAL's message "
			   "above names the argument; set DPV_EAL_ARGS or the dpv_init() arguments)",
			   args_used, strerror(-rc));
		if (own_prefix)
			remove_failed_runtime_dir();
		return rc;
	}
	if (own_prefix)
		snprintf(runtime_dir, sizeof(runtime_dir), "%s", rte_eal_get_runtime_dir());
	dpv__fork_eal_started();
	atexit(eal_stop_at_exit);
	return 0;
}

int dpv__eal_start(int argc, char **argv)
{
	struct eal_args a = { 0 };
	int rc = 0;

	if (dpv__fork_child_check())         /* before the lock: another thread may have held it */
		return dpv__fork_refuse();
	pthread_mutex_lock(&eal_lock);
	if (eal_state == 1) {
		pthread_mutex_unlock(&eal_lock);
		return -EALREADY;
	}
	rc = args_push(&a, argc > 0 && argv[0] != NULL ? argv[0] : "dpverbs");
	for (int i = 1; rc == 0 && i < argc; i++)
		rc = args_push(&a, argv[i]);
	if (rc == 0)
		rc = eal_start_locked(&a);
	eal_state = rc == 0 ? 1 : rc;
	pthread_mutex_unlock(&eal_lock);
	args_free(&a);
	return rc;
}

/* DPV_EAL_ARGS is split at white space; quotes are not interpreted. */
static int args_from_env(struct eal_args *a)
{
	const char *env = getenv("DPV_EAL_ARGS");
	char *copy, *tok, *save = NULL;
	int rc = args_push(a, "dpverbs");

	if (rc != 0 || env == NULL)
		return rc;
	copy = strdup(env);
	if (copy == NULL)
		return -ENOMEM;
	for (tok = strtok_r(copy, " \t\n", &save); tok != NULL && rc == 0;
	     tok = strtok_r(NULL, " \t\n", &save))
		rc = args_push(a, tok);
	free(copy);
	return rc;
}

int dpv__eal_ensure(void)
{
	struct eal_args a = { 0 };
	int rc;

	if (dpv__fork_child_check())
		return dpv__fork_refuse();
	pthread_mutex_lock(&eal_lock);
	if (eal_state != 0) {
		rc = eal_state == 1 ? 0 : eal_state;
		pthread_mutex_unlock(&eal_lock);
		return rc;
	}
	rc = args_from_env(&a);
	if (rc == 0)
		rc = eal_start_locked(&a);
	eal_state = rc == 0 ? 1 : rc;
	pthread_mutex_unlock(&eal_lock);
	args_free(&a);
	return rc;
}

bool dpv__eal_running(void)
{
	return __atomic_load_n(&eal_state, __ATOMIC_ACQUIRE) == 1 && !dpv__fork_child();
}

const char *dpv__eal_args_used(void)
{
	return args_used;
}

void dpv__eal_at_stop(void (*fn)(void))
{
	stop_hook = fn;
}

DPV_EXPORT int dpv_init(int argc, char **argv)
{
	return -dpv__eal_start(argc, argv);
}

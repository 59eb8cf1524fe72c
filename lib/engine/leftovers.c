/* SPDX-License-Identifier: BSD-3-Clause */
/* What a dpverbs process killed by a signal leaves: its runtime directory and, without
 * --in-memory, hugepage files that keep their pages from everyone. Every start removes those
 * of prefix dpv-<pid> whose pid is gone and whose files nobody locks (the EAL locks what it
 * uses). doc/memory.md, "Leftovers". */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dpv_engine.h"

#define PREFIX "dpv-"

/* The pid of a name dpv-<pid><rest> when <rest> is @rest ("" for a directory, "map_" then
 * digits for a hugepage file); 0 for any other name. */
static pid_t pid_of(const char *name, const char *rest)
{
	char *end;
	long pid;

	if (strncmp(name, PREFIX, strlen(PREFIX)) != 0)
		return 0;
	name += strlen(PREFIX);
	if (*name < '1' || *name > '9')
		return 0;
	pid = strtol(name, &end, 10);
	if (pid <= 0 || pid > 0x7fffffffL || strncmp(end, rest, strlen(rest)) != 0)
		return 0;
	end += strlen(rest);
	if (*rest != '\0') {
		if (*end == '\0')
			return 0;
		while (*end >= '0' && *end <= '9')
			end++;
	}
	return *end == '\0' ? (pid_t)pid : 0;
}

static bool pid_gone(pid_t pid)
{
	return kill(pid, 0) != 0 && errno == ESRCH;
}

/* A lock of another process on @path, of either kind the EAL takes (fcntl on the config,
 * flock on memseg metadata and hugepage files). Sockets and what cannot be opened: none. */
static bool file_held(const char *path)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	struct stat st;
	bool held = false;
	int fd;

	if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return false;
	fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return false;
	if (fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK)
		held = true;
	else if (flock(fd, LOCK_EX | LOCK_NB) != 0)
		held = errno == EWOULDBLOCK;
	close(fd);                     /* drops the flock taken to test */
	return held;
}

static bool dir_held(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[1536];
	bool held = false;

	while (d != NULL && !held && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		held = file_held(path);
	}
	if (d != NULL)
		closedir(d);
	return held;
}

static void dir_remove(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[1536];

	while (d != NULL && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	if (d != NULL)
		closedir(d);
	if (rmdir(dir) == 0)
		ENGINE_LOG(INFO, "removed %s, left by a dpverbs process that is gone", dir);
}

/* Where the EAL puts runtime directories: /var/run/dpdk for root, else $XDG_RUNTIME_DIR/dpdk
 * or /tmp/dpdk (as eal_create_runtime_dir chooses). */
static void runtime_base(char *out, size_t size)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	snprintf(out, size, "%s/dpdk", getuid() == 0 ? "/var/run" : xdg != NULL ? xdg : "/tmp");
}

static void clean_runtime_dirs(void)
{
	char base[512], dir[1024];
	DIR *d;
	struct dirent *e;
	pid_t pid;

	runtime_base(base, sizeof(base));
	d = opendir(base);
	while (d != NULL && (e = readdir(d)) != NULL) {
		pid = pid_of(e->d_name, "");
		if (pid == 0 || pid == getpid() || !pid_gone(pid))
			continue;
		snprintf(dir, sizeof(dir), "%s/%s", base, e->d_name);
		if (!dir_held(dir))
			dir_remove(dir);
	}
	if (d != NULL)
		closedir(d);
}

static void clean_hugepage_dir(const char *mnt)
{
	DIR *d = opendir(mnt);
	struct dirent *e;
	char path[1536];
	pid_t pid;

	while (d != NULL && (e = readdir(d)) != NULL) {
		pid = pid_of(e->d_name, "map_");
		if (pid == 0 || pid == getpid() || !pid_gone(pid))
			continue;
		snprintf(path, sizeof(path), "%s/%s", mnt, e->d_name);
		if (!file_held(path) && unlink(path) == 0)
			ENGINE_LOG(INFO, "removed hugepage file %s, left by a dpverbs process that is "
				   "gone", path);
	}
	if (d != NULL)
		closedir(d);
}

static void clean_hugepage_files(void)
{
	FILE *f = fopen("/proc/mounts", "re");
	char line[1024], mnt[512], type[64];

	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "%*s %511s %63s", mnt, type) == 2 && strcmp(type, "hugetlbfs") == 0)
			clean_hugepage_dir(mnt);
	if (f != NULL)
		fclose(f);
}

void dpv__leftovers_clean(void)
{
	clean_runtime_dirs();
	clean_hugepage_files();
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Assertions (lib/engine/dpv_assert.h, dpv_lock.h): DPV_WARN_ONCE evaluates to its condition
 * and logs once per call site; DPV_REF_PUT counts down. In a build with DPV_ASSERTS (all but a
 * release one): a false DPV_ASSERT aborts with file:line and the expression; a spinlock knows
 * its holder, so dpv__lock_assert_held passes for the holder and aborts for a thread that
 * does not hold it (nobody, or another thread), unlocking a lock another thread holds aborts,
 * and dpv__mutex_assert_held does the same for a pthread mutex. In a release build the
 * assertions are nothing: those calls return. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dpv_assert.h"
#include "dpv_lock.h"
#include "dpv_test.h"

static dpv_spinlock_t lk = DPV_SPINLOCK_INITIALIZER;
static pthread_mutex_t mx = PTHREAD_MUTEX_INITIALIZER;

/* Run @fn in a child with stderr into a pipe: its exit status, and what it wrote in @err. */
static int in_child(void (*fn)(void), char *err, size_t size)
{
	int p[2], status = -1;
	ssize_t n, got = 0;
	pid_t pid;

	if (pipe(p) != 0)
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 2);
		fn();
		_exit(0);
	}
	close(p[1]);
	while ((n = read(p[0], err + got, size - 1 - (size_t)got)) > 0)
		got += n;
	err[got] = '\0';
	close(p[0]);
	waitpid(pid, &status, 0);
	return status;
}

static int warn_site(int x)
{
	return DPV_WARN_ONCE(x > 2, "x is %d", x) ? -1 : 0;
}

/* in a child: stderr is where rte_log writes before (without) rte_eal_init */
static void warn_loop(void)
{
	int bad = 0;

	for (int x = 0; x < 6; x++)
		bad += warn_site(x) != 0;
	_exit(bad);
}

static void warn_once(void)
{
	char err[1024];
	int st = in_child(warn_loop, err, sizeof(err));

	/* x = 3, 4, 5: it evaluates to the condition */
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 3, "status %#x", st);
	CHECK(strstr(err, "x is 3") != NULL, "log: %s", err);
	CHECK(strstr(err, "x is 4") == NULL, "logged twice: %s", err);
	CHECK(strstr(err, "test_assert.c:") != NULL, "no file:line: %s", err);
}

static void ref_put(void)
{
	int refs = 2;

	DPV_REF_PUT(&refs);
	DPV_REF_PUT(&refs);
	CHECK_EQ(refs, 0);
}

static void assert_false(void)
{
	volatile int zero = 0;

	DPV_ASSERT(zero == 1);
}

static void held_by_nobody(void)
{
	dpv__lock_assert_held(&lk);
}

static void held_by_holder(void)
{
	dpv__spinlock_lock(&lk);
	dpv__lock_assert_held(&lk);
	dpv__spinlock_unlock(&lk);
	CHECK(dpv__spinlock_trylock(&lk));
	dpv__lock_assert_held(&lk);
	dpv__spinlock_unlock(&lk);
}

static void *take(void *arg)
{
	dpv__spinlock_lock(&lk);
	return NULL;
}

/* another thread took the lock (and left it taken) */
static void held_by_other(void)
{
	pthread_t t;

	pthread_create(&t, NULL, take, NULL);
	pthread_join(t, NULL);
	dpv__lock_assert_held(&lk);
}

static void unlock_others(void)
{
	pthread_t t;

	pthread_create(&t, NULL, take, NULL);
	pthread_join(t, NULL);
	dpv__spinlock_unlock(&lk);
}

static void mutex_not_held(void)
{
	dpv__mutex_assert_held(&mx);
}

static void mutex_held(void)
{
	pthread_mutex_lock(&mx);
	dpv__mutex_assert_held(&mx);
	pthread_mutex_unlock(&mx);
}

/* @fn must abort where its check is on (@on: DPV_ASSERTS, or DPV_LOCK_CHECKS for a spinlock's),
 * saying @what, and return where it is off */
static void aborts(void (*fn)(void), const char *what, bool on)
{
	char err[1024];
	int st = in_child(fn, err, sizeof(err));

	if (on) {
		CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "%s: status %#x", what, st);
		CHECK(strstr(err, "assertion failed") != NULL && strstr(err, what) != NULL,
		      "%s: stderr: %s", what, err);
		CHECK(strstr(err, "test_assert.c:") != NULL || strstr(err, "dpv_lock.h:") != NULL,
		      "no file:line: %s", err);
	} else {
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: status %#x", what, st);
	}
}

int main(void)
{
	warn_once();
	ref_put();
	held_by_holder();
	mutex_held();
	aborts(assert_false, "zero == 1", DPV_ASSERTS);
	aborts(held_by_nobody, "dpv__lock_owner", DPV_LOCK_CHECKS);
	aborts(held_by_other, "dpv__lock_owner", DPV_LOCK_CHECKS);
	aborts(unlock_others, "dpv__lock_owner", DPV_LOCK_CHECKS);
	aborts(mutex_not_held, "__owner", DPV_ASSERTS);
	printf("assertions %s, spinlock holder checks %s\n", DPV_ASSERTS ? "on" : "off (release build)",
	       DPV_LOCK_CHECKS ? "on" : "off (debug and sanitized builds only)");
	return test_done("assert");
}

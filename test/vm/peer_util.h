/* What the VM suite's two-sided verbs peers (mw_peer, data_peer) share: a TCP side channel to
 * the other side, checks that print and count, and fatal errors that name the side. Built
 * against the system's libibverbs, so they run on rxe as on dpverbs. */
#ifndef DPV_TEST_PEER_UTIL_H
#define DPV_TEST_PEER_UTIL_H

#include <stdbool.h>
#include <stddef.h>

extern const char *peer_name;     /* "mw_peer (owner)": the prefix of peer_die's message */
extern int peer_failures;         /* checks that failed */
extern int peer_sock;             /* the side channel */
/* Called while peer_read waits for the other side's bytes (a poll of the CQ: under dpverbs'
 * direct progress that drives this side's port). */
extern void (*peer_idle)(void);

/* CLOCK_MONOTONIC in seconds. */
double peer_now(void);
/* Print what failed with errno's text, and exit 1. */
void peer_die(const char *what) __attribute__((noreturn));
/* One check: "ok: ..." or "FAIL: ...", a failure counted in peer_failures. */
void peer_check(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* @n bytes to / from the other side; reading waits at most @wait_s seconds. */
void peer_write(const void *p, size_t n);
void peer_read(void *p, size_t n, double wait_s);
/* TCP over IPv4: listen and accept one connection (@host NULL) or connect to @host, trying for
 * at most @wait_s seconds. */
int peer_tcp(const char *host, const char *port, double wait_s);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* What the VM suite's two-sided verbs peers (mw_peer, data_peer) share: a TCP side channel to
 * the other side, checks that print and count, and fatal errors that name the side. Built
 * against the system's libibverbs, so they run on rxe as on dpverbs. */
#ifndef DPV_TEST_PEER_UTIL_H
#define DPV_TEST_PEER_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

extern const char *peer_name;     /* "mw_peer (owner)": the prefix of peer_die's message */
extern int peer_failures;         /* checks that failed */
extern int peer_sock;             /* the side channel */
/* Called while peer_read waits for the other side's bytes (a poll of the CQ: under dpverbs'
 * direct progress that drives this side's port). */
extern void (*peer_idle)(void);

/* The CQ of this side's QPs: peer_poll_stash polls it while a message is awaited (as
 * peer_idle), keeping what it finds (at most 64) for peer_next_wc. */
extern struct ibv_cq *peer_cq;
void peer_poll_stash(void);
/* Forget the kept completions (a QP they belonged to is gone). */
void peer_stash_clear(void);
/* The next completion (kept or polled), at most @wait_s seconds; status GENERAL_ERR and wr_id
 * UINT64_MAX if none ("no completion in N s" printed). */
struct ibv_wc peer_next_wc(double wait_s);

/* CLOCK_MONOTONIC in seconds. */
double peer_now(void);
/* Print what failed with errno's text, and exit 1. */
void peer_die(const char *what) __attribute__((noreturn));
/* One check: "ok: ..." or "FAIL: ...", a failure counted in peer_failures. */
void peer_check(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* @n bytes to / from the other side; reading waits at most @wait_s seconds. */
void peer_write(const void *p, size_t n);
void peer_read(void *p, size_t n, double wait_s);
/* The other side's next message (@n bytes into @m, at most @wait_s seconds), whose first
 * 32-bit word, its kind, must be @kind: exits (EPROTO) when it is another. */
void peer_read_kind(void *m, size_t n, uint32_t kind, double wait_s);
/* TCP over IPv4: listen and accept one connection (@host NULL) or connect to @host, trying for
 * at most @wait_s seconds. */
int peer_tcp(const char *host, const char *port, double wait_s);

/* ibv_modify_qp, or peer_die(@what) with its error. */
void peer_modify(struct ibv_qp *q, struct ibv_qp_attr *a, int mask, const char *what);
/* The device named @name (NULL: the first one) opened, or peer_die. */
struct ibv_context *peer_open_device(const char *name);
/* Byte @off of a run unique by position: byte off % 4 of a 64-bit multiply-xorshift hash of
 * @key ^ (off / 4), so bytes put at another offset show (a short period would not). */
uint8_t peer_pattern_byte(uint64_t key, size_t off);

#endif

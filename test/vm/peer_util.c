/* SPDX-License-Identifier: BSD-3-Clause */
/* The VM suite's verbs peers' shared plumbing (peer_util.h). */
#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "peer_util.h"

const char *peer_name = "peer";
int peer_failures;
int peer_sock = -1;
void (*peer_idle)(void);
struct ibv_cq *peer_cq;

#define PEER_STASH 64
static struct ibv_wc stash[PEER_STASH];
static int nstash;

void peer_poll_stash(void)
{
	if (nstash < PEER_STASH && ibv_poll_cq(peer_cq, 1, &stash[nstash]) == 1)
		nstash++;
}

void peer_stash_clear(void)
{
	nstash = 0;
}

struct ibv_wc peer_next_wc(double wait_s)
{
	struct ibv_wc wc = { .status = IBV_WC_GENERAL_ERR, .wr_id = UINT64_MAX };
	double t0 = peer_now();

	if (nstash > 0) {
		wc = stash[0];
		memmove(stash, stash + 1, --nstash * sizeof(stash[0]));
		return wc;
	}
	while (peer_now() - t0 < wait_s) {
		int n = ibv_poll_cq(peer_cq, 1, &wc);

		if (n == 1)
			return wc;
		if (n < 0)
			break;
	}
	printf("no completion in %.0f s\n", wait_s);
	return wc;
}

double peer_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void peer_die(const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", peer_name, what, strerror(errno));
	exit(1);
}

void peer_check(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s: ", ok ? "ok" : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	peer_failures += !ok;
}

void peer_write(const void *p, size_t n)
{
	if (write(peer_sock, p, n) != (ssize_t)n)
		peer_die("write to the peer");
}

void peer_read(void *p, size_t n, double wait_s)
{
	size_t got = 0;
	double t0 = peer_now();

	while (got < n) {
		ssize_t r = recv(peer_sock, (uint8_t *)p + got, n - got, MSG_DONTWAIT);

		if (r > 0) {
			got += (size_t)r;
			continue;
		}
		if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
			peer_die("the peer is gone");
		if (peer_now() - t0 > wait_s) {
			errno = ETIMEDOUT;
			peer_die("no message from the peer");
		}
		if (peer_idle != NULL)
			peer_idle();
	}
}

static int accept_one(int lfd, const struct addrinfo *res)
{
	int one = 1, fd;

	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, res->ai_addr, res->ai_addrlen) != 0 || listen(lfd, 1) != 0)
		peer_die("bind/listen");
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		peer_die("accept");
	close(lfd);
	return fd;
}

void peer_read_kind(void *m, size_t n, uint32_t kind, double wait_s)
{
	uint32_t got;

	peer_read(m, n, wait_s);
	memcpy(&got, m, sizeof(got));
	if (got != kind) {
		errno = EPROTO;
		peer_die("an unexpected message");
	}
}

int peer_tcp(const char *host, const char *port, double wait_s)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM,
				  .ai_flags = host ? 0 : AI_PASSIVE };
	struct addrinfo *res;
	double t0 = peer_now();
	int fd;

	if (getaddrinfo(host, port, &hints, &res) != 0) {
		errno = EINVAL;
		peer_die("getaddrinfo");
	}
	fd = socket(res->ai_family, res->ai_socktype, 0);
	if (fd < 0)
		peer_die("socket");
	if (host == NULL)
		fd = accept_one(fd, res);
	else
		while (connect(fd, res->ai_addr, res->ai_addrlen) != 0) {
			if (peer_now() - t0 > wait_s)
				peer_die("connect");
			usleep(100000);
		}
	freeaddrinfo(res);
	return fd;
}

void peer_modify(struct ibv_qp *q, struct ibv_qp_attr *a, int mask, const char *what)
{
	int rc = ibv_modify_qp(q, a, mask);

	if (rc != 0) {
		errno = rc;
		peer_die(what);
	}
}

struct ibv_context *peer_open_device(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *c;
	int i;

	for (i = 0; list != NULL && list[i] != NULL; i++)
		if (name == NULL || !strcmp(ibv_get_device_name(list[i]), name))
			break;
	if (list == NULL || list[i] == NULL) {
		errno = ENODEV;
		peer_die(name ? name : "no RDMA device");
	}
	c = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (c == NULL)
		peer_die("ibv_open_device");
	return c;
}

uint8_t peer_pattern_byte(uint64_t key, size_t off)
{
	uint64_t x = key ^ (off / 4);

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 29;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 32;
	return (uint8_t)(x >> (8 * (off % 4)));
}

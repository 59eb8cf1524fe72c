/* SPDX-License-Identifier: BSD-3-Clause */
/* RoCEv2 addressing as an application sees it: the GID table rxe would build (index 0 the
 * link-local EUI-64 GID of the MAC, then one RoCE v2 GID per address) from the configuration
 * file and from dpv_port_add_addr / dpv_port_del_addr, identical through ibv_query_gid,
 * ibv_query_gid_ex and ibv_query_gid_table; the errors of the address calls; the
 * IBV_EVENT_GID_CHANGE each change raises on every open context of the device (and on no
 * other); ibv_query_port's GID table length and RoCE MTUs for a few port MTUs; resolving
 * GIDs that need no answer (own, link-local, multicast) without a frame, and a peer nobody
 * answers to EHOSTUNREACH after the configured requests; lock-free GID reads in a thread
 * while another changes the table never see a torn entry.
 * Linked with the internal libraries (rte_eth_dev_set_mtu changes the port's MTU).
 * DPV_EAL_ARGS: --vdev=net_null0 --vdev=net_null1. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>

#include <rte_ethdev.h>

#include "dpv_roce.h"
#include "dpv_test.h"
#include "verbs_priv.h"

static const char *conf_text =
	"port_addr = net_null0 10.1.0.1, fd00::1\n"
	"port_addr = dpv_net_null1 192.168.5.5\n"
	"resolve_timeout_ms = 100\n";

static void write_config(char *path)
{
	int fd = mkstemp(path);

	if (fd < 0 || write(fd, conf_text, strlen(conf_text)) != (ssize_t)strlen(conf_text)) {
		perror("config");
		exit(1);
	}
	close(fd);
	setenv("DPV_CONFIG", path, 1);
}

static void gid_v4(union ibv_gid *g, const char *a)
{
	memset(g, 0, sizeof(*g));
	g->raw[10] = g->raw[11] = 0xff;
	inet_pton(AF_INET, a, &g->raw[12]);
}

static void gid_v6(union ibv_gid *g, const char *a)
{
	inet_pton(AF_INET6, a, g->raw);
}

/* The GID of index 0, computed apart: fe80:: + the MAC with its U/L bit flipped and ff:fe. */
static void gid_link_local(struct ibv_context *ctx, union ibv_gid *g)
{
	struct dpv_port_info info;
	uint8_t mac[6];
	struct rte_ether_addr ea;

	dpv_query_port_info(ctx, &info);
	rte_eth_macaddr_get(info.port_id, &ea);
	memcpy(mac, ea.addr_bytes, 6);
	memset(g, 0, sizeof(*g));
	g->raw[0] = 0xfe;
	g->raw[1] = 0x80;
	g->raw[8] = mac[0] ^ 2;
	g->raw[9] = mac[1];
	g->raw[10] = mac[2];
	g->raw[11] = 0xff;
	g->raw[12] = 0xfe;
	g->raw[13] = mac[3];
	g->raw[14] = mac[4];
	g->raw[15] = mac[5];
}

static bool gid_zero(const union ibv_gid *g)
{
	static const union ibv_gid z;

	return memcmp(g, &z, sizeof(z)) == 0;
}

/* The table through the three queries must be @want (NULL entries: empty). */
static void check_table(struct ibv_context *ctx, const union ibv_gid *want[16], int line)
{
	struct ibv_gid_entry table[16], e;
	ssize_t n = ibv_query_gid_table(ctx, table, 16, 0);
	int valid = 0;

	for (int i = 0; i < 16; i++) {
		union ibv_gid g;

		CHECK(ibv_query_gid(ctx, 1, i, &g) == 0, "line %d: ibv_query_gid %d", line, i);
		if (want[i] == NULL) {
			CHECK(gid_zero(&g), "line %d: index %d not empty", line, i);
			CHECK(ibv_query_gid_ex(ctx, 1, i, &e, 0) == ENODATA, "line %d: %d", line, i);
			continue;
		}
		CHECK(memcmp(&g, want[i], 16) == 0, "line %d: ibv_query_gid %d differs", line, i);
		memset(&e, 0xee, sizeof(e));
		CHECK(ibv_query_gid_ex(ctx, 1, i, &e, 0) == 0, "line %d: gid_ex %d", line, i);
		CHECK(memcmp(&e.gid, want[i], 16) == 0 && e.gid_index == (uint32_t)i &&
		      e.port_num == 1 && e.gid_type == IBV_GID_TYPE_ROCE_V2 && e.ndev_ifindex == 0,
		      "line %d: gid_ex %d: index %u port %u type %u", line, i, e.gid_index,
		      e.port_num, e.gid_type);
		CHECK(valid < n && memcmp(&table[valid], &e, sizeof(e)) == 0,
		      "line %d: table entry %d is not gid_ex %d", line, valid, i);
		valid++;
	}
	CHECK(n == valid, "line %d: ibv_query_gid_table: %zd entries, %d valid", line, n, valid);
	if (valid > 1)
		CHECK(ibv_query_gid_table(ctx, table, (size_t)valid - 1, 0) == -EINVAL,
		      "line %d: a table that does not fit", line);
}
#define CHECK_TABLE(ctx, ...) do { \
	const union ibv_gid *w_[16] = { __VA_ARGS__ }; \
	check_table(ctx, w_, __LINE__); \
} while (0)

/* How many events wait on @ctx's async fd (non-blocking); each must be GID_CHANGE on port 1. */
static int gid_events(struct ibv_context *ctx)
{
	struct ibv_async_event ev;
	int n = 0;

	fcntl(ctx->async_fd, F_SETFL, fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK);
	while (ibv_get_async_event(ctx, &ev) == 0) {
		CHECK(ev.event_type == IBV_EVENT_GID_CHANGE && ev.element.port_num == 1,
		      "event %s port %d", ibv_event_type_str(ev.event_type), ev.element.port_num);
		ibv_ack_async_event(&ev);
		n++;
	}
	return n;
}

static void check_queries(struct ibv_context *ctx)
{
	struct ibv_gid_entry e[16];
	union ibv_gid g;
	struct ibv_port_attr p;

	CHECK_EQ(ibv_query_port(ctx, 1, &p), 0);
	CHECK_EQ(p.gid_tbl_len, 16);
	CHECK_EQ(p.link_layer, IBV_LINK_LAYER_ETHERNET);
	CHECK_EQ(p.max_mtu, IBV_MTU_4096);
	CHECK_EQ(ibv_query_gid(ctx, 1, 16, &g), EINVAL);
	CHECK_EQ(ibv_query_gid(ctx, 1, -1, &g), EINVAL);
	CHECK_EQ(ibv_query_gid(ctx, 2, 0, &g), EINVAL);
	CHECK_EQ(ibv_query_gid_ex(ctx, 1, 16, &e[0], 0), EINVAL);
	CHECK_EQ(ibv_query_gid_ex(ctx, 2, 0, &e[0], 0), EINVAL);
	CHECK_EQ(ibv_query_gid_ex(ctx, 1, 0, &e[0], 1), EINVAL);
	CHECK_EQ(ibv_query_gid_table(ctx, e, 0, 0), -EINVAL);
	CHECK_EQ(ibv_query_gid_table(ctx, e, 16, 1), -EINVAL);
}

static void check_errors(struct ibv_context *ctx, const union ibv_gid *ll)
{
	static const char *const bad[] = {
		"10.1.0.300", "10.1.0.1/24", "", " 10.1.0.9", "224.0.0.1", "255.255.255.255",
		"0.0.0.0", "127.0.0.1", "::", "::1", "ff02::1:ff00:1", "::ffff:10.1.0.9",
		"fd00::1/64", "fd00::g", "hello",
	};
	char ll_text[INET6_ADDRSTRLEN];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(dpv_port_add_addr(ctx, bad[i]) == EINVAL, "add '%s'", bad[i]);
		CHECK(dpv_port_del_addr(ctx, bad[i]) == EINVAL, "del '%s'", bad[i]);
	}
	CHECK_EQ(dpv_port_add_addr(ctx, NULL), EINVAL);
	CHECK_EQ(dpv_port_add_addr(NULL, "10.1.0.9"), EINVAL);
	CHECK_EQ(dpv_port_del_addr(NULL, "10.1.0.9"), EINVAL);
	CHECK_EQ(dpv_port_add_addr(ctx, "10.1.0.3"), EEXIST);
	CHECK_EQ(dpv_port_add_addr(ctx, "FD00:0::1"), EEXIST);      /* the same address */
	inet_ntop(AF_INET6, ll->raw, ll_text, sizeof(ll_text));
	CHECK_EQ(dpv_port_add_addr(ctx, ll_text), EEXIST);          /* index 0's GID */
	CHECK_EQ(dpv_port_del_addr(ctx, ll_text), ENOENT);          /* ... is no address */
	CHECK_EQ(dpv_port_del_addr(ctx, "10.77.0.1"), ENOENT);
	CHECK_EQ(dpv_port_del_addr(ctx, "fd00::2"), ENOENT);
}

/* 12 more addresses fill the table (0: link-local, 1-3 taken); the 16th is ENOSPC. */
static void check_full(struct ibv_context *ctx)
{
	char a[32];

	for (int i = 0; i < 12; i++) {
		snprintf(a, sizeof(a), "10.2.0.%d", i + 1);
		CHECK(dpv_port_add_addr(ctx, a) == 0, "add %s", a);
	}
	CHECK_EQ(dpv_port_add_addr(ctx, "10.2.0.99"), ENOSPC);
	CHECK_EQ(dpv_port_add_addr(ctx, "fd00::99"), ENOSPC);
	for (int i = 0; i < 12; i++) {
		snprintf(a, sizeof(a), "10.2.0.%d", i + 1);
		CHECK(dpv_port_del_addr(ctx, a) == 0, "del %s", a);
	}
}

static uint64_t port_opackets(struct ibv_context *ctx)
{
	struct dpv_port_info info;
	struct rte_eth_stats st = { 0 };

	dpv_query_port_info(ctx, &info);
	rte_eth_stats_get(info.port_id, &st);
	return st.opackets;
}

static int resolve(struct ibv_context *ctx, int sgid_index, const union ibv_gid *dgid,
		   uint8_t mac[6])
{
	memset(mac, 0xee, 6);
	return dpv__roce_resolve(to_dctx(ctx)->dev, sgid_index, dgid->raw, mac);
}

#define CHECK_MAC(m, ...) do { \
	const uint8_t w_[6] = { __VA_ARGS__ }; \
	CHECK(memcmp(m, w_, 6) == 0, "MAC %02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], \
	      m[3], m[4], m[5]); \
} while (0)

/* What needs nobody's answer, and sends nothing: the port's own GIDs (its MAC), link-local
 * EUI-64 GIDs (the MAC inside), multicast GIDs (01:00:5e / 33:33); and the errors. Index 1
 * holds an IPv4 address, 2 an IPv6 one. */
static void check_resolve_local(struct ibv_context *ctx, const union ibv_gid *ll)
{
	struct dpv_port_info info;
	struct rte_ether_addr own;
	uint64_t sent = port_opackets(ctx);
	union ibv_gid g;
	uint8_t mac[6];

	dpv_query_port_info(ctx, &info);
	rte_eth_macaddr_get(info.port_id, &own);
	for (int i = 0; i < 4; i++) {           /* every GID of the port, from a same-family one */
		CHECK(ibv_query_gid(ctx, 1, i, &g) == 0);
		CHECK(resolve(ctx, i == 1 || i == 3 ? 1 : 2, &g, mac) == 0 &&
		      memcmp(mac, own.addr_bytes, 6) == 0, "own GID %d", i);
	}
	gid_v6(&g, "fe80::0211:22ff:fe33:4455");
	CHECK_EQ(resolve(ctx, 0, &g, mac), 0);
	CHECK_MAC(mac, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55);
	gid_v6(&g, "fe80::a8bb:ccff:fedd:eeff");
	CHECK_EQ(resolve(ctx, 2, &g, mac), 0);
	CHECK_MAC(mac, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff);
	gid_v4(&g, "239.1.2.3");
	CHECK_EQ(resolve(ctx, 1, &g, mac), 0);
	CHECK_MAC(mac, 0x01, 0x00, 0x5e, 0x01, 0x02, 0x03);
	gid_v4(&g, "224.129.0.1");              /* 23 bits: the group's bit 23 is dropped */
	CHECK_EQ(resolve(ctx, 3, &g, mac), 0);
	CHECK_MAC(mac, 0x01, 0x00, 0x5e, 0x01, 0x00, 0x01);
	gid_v6(&g, "ff0e::1:2:3:4");
	CHECK_EQ(resolve(ctx, 0, &g, mac), 0);
	CHECK_MAC(mac, 0x33, 0x33, 0x00, 0x03, 0x00, 0x04);
	gid_v6(&g, "ff02::1:ff33:4455");
	CHECK_EQ(resolve(ctx, 2, &g, mac), 0);
	CHECK_MAC(mac, 0x33, 0x33, 0xff, 0x33, 0x44, 0x55);
	CHECK_EQ(port_opackets(ctx) - sent, 0);

	/* errors: a source index that is empty or outside the table, families that differ */
	gid_v4(&g, "10.1.0.50");
	CHECK_EQ(resolve(ctx, 5, &g, mac), -EINVAL);
	CHECK_EQ(resolve(ctx, 16, &g, mac), -EINVAL);
	CHECK_EQ(resolve(ctx, -1, &g, mac), -EINVAL);
	CHECK_EQ(resolve(ctx, 0, &g, mac), -EINVAL);     /* IPv4 peer from the link-local GID */
	CHECK_EQ(resolve(ctx, 2, &g, mac), -EINVAL);
	CHECK_EQ(resolve(ctx, 1, ll, mac), -EINVAL);     /* link-local peer from an IPv4 GID */
	CHECK_EQ(port_opackets(ctx) - sent, 0);

	/* a peer nobody answers (net_null answers nothing): the default 3 requests within the
	 * configured 100 ms, then EHOSTUNREACH */
	CHECK_EQ(resolve(ctx, 1, &g, mac), -EHOSTUNREACH);
	CHECK_EQ(port_opackets(ctx) - sent, 3);
	gid_v6(&g, "fd00::50");
	CHECK_EQ(resolve(ctx, 2, &g, mac), -EHOSTUNREACH);
	CHECK_EQ(port_opackets(ctx) - sent, 6);

	/* transmit faults (doc/faults.md) act on the port's ARP/ND: every request dropped never
	 * reaches the port, and is counted */
	{
		struct dpv_faults drop = { .drop_ppm = 1000000 }, off = { 0 };
		struct dpv_fault_stats st0, st1;

		CHECK_EQ(dpv_query_port_faults(ctx, DPV_FAULT_TX, NULL, &st0), 0);
		CHECK_EQ(dpv_set_port_faults(ctx, DPV_FAULT_TX, &drop), 0);
		gid_v4(&g, "10.1.0.51");
		CHECK_EQ(resolve(ctx, 1, &g, mac), -EHOSTUNREACH);
		CHECK_EQ(dpv_set_port_faults(ctx, DPV_FAULT_TX, &off), 0);
		CHECK_EQ(dpv_query_port_faults(ctx, DPV_FAULT_TX, NULL, &st1), 0);
		CHECK_EQ(port_opackets(ctx) - sent, 6);
		CHECK_EQ(st1.dropped - st0.dropped, 3);
	}
}

struct reader {
	struct dpv_device *dev;
	union ibv_gid a, b;
	bool stop;
	long reads, torn, found;
};

/* Reads GID 4 and looks both GIDs up while the main thread changes index 4 between empty, @a
 * and @b: a read is one of the three, never a mix, and a lookup finds index 4 or nothing. */
static void *reader_main(void *arg)
{
	struct reader *r = arg;
	static const union ibv_gid zero;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		union ibv_gid g;
		int rc = dpv__roce_gid_get(r->dev, 4, g.raw), fa, fb;

		if (rc == 0 ? memcmp(&g, &r->a, 16) != 0 && memcmp(&g, &r->b, 16) != 0 :
			      rc != -ENODATA || memcmp(&g, &zero, 16) != 0)
			r->torn++;
		fa = dpv__roce_gid_find(r->dev, r->a.raw);
		fb = dpv__roce_gid_find(r->dev, r->b.raw);
		/* (two lookups are two reads: both may find index 4, the table changed between) */
		if ((fa != 4 && fa != -ENOENT) || (fb != 4 && fb != -ENOENT))
			r->torn++;
		r->found += fa == 4 || fb == 4;
		__atomic_fetch_add(&r->reads, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void wait_reads(struct reader *r, long n)
{
	long until = __atomic_load_n(&r->reads, __ATOMIC_ACQUIRE) + n;

	while (__atomic_load_n(&r->reads, __ATOMIC_ACQUIRE) < until)
		sched_yield();
}

/* The GID table read without a lock while addresses change (what a data path does). */
static void check_concurrent_readers(struct ibv_context *ctx, struct ibv_context *ctx2)
{
	struct reader r = { .dev = to_dctx(ctx)->dev };
	pthread_t t;
	int changes = 0;

	gid_events(ctx);                         /* what earlier checks left */
	gid_events(ctx2);
	gid_v4(&r.a, "10.4.0.1");
	gid_v6(&r.b, "fd04:4444:4444:4444:4444:4444:4444:4444");
	pthread_create(&t, NULL, reader_main, &r);
	for (int i = 0; i < 2000; i++) {
		const char *a = i & 1 ? "fd04:4444:4444:4444:4444:4444:4444:4444" : "10.4.0.1";

		changes += dpv_port_add_addr(ctx, a) == 0;
		if (i % 200 < 2)
			wait_reads(&r, 2);       /* the reader sees this state too, now and then */
		changes += dpv_port_del_addr(ctx, a) == 0;
	}
	__atomic_store_n(&r.stop, true, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	CHECK_EQ(changes, 4000);
	CHECK(r.torn == 0 && r.found > 0, "%ld reads, %ld torn, %ld found", r.reads, r.torn,
	      r.found);
	printf("concurrent GID reads: %ld, %ld of them found an address\n", r.reads, r.found);
	CHECK_EQ(gid_events(ctx), 4000);
	CHECK_EQ(gid_events(ctx2), 4000);
}

/* rxe's active MTU: the largest of 256 ... 4096 at most MTU - 80 bytes. */
static void check_mtu(struct ibv_context *ctx)
{
	static const struct { uint16_t mtu; enum ibv_mtu want; } cases[] = {
		{ 1500, IBV_MTU_1024 }, { 9000, IBV_MTU_4096 }, { 4176, IBV_MTU_4096 },
		{ 4175, IBV_MTU_2048 }, { 1100, IBV_MTU_512 }, { 600, IBV_MTU_512 },
		{ 591, IBV_MTU_256 },
	};
	struct dpv_port_info info;

	dpv_query_port_info(ctx, &info);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ibv_port_attr p;
		struct ibv_context *other;
		int rc = rte_eth_dev_set_mtu(info.port_id, cases[i].mtu);

		CHECK(rc == 0, "rte_eth_dev_set_mtu %u: %d", cases[i].mtu, rc);
		/* a device reads its port's MTU when a context opens */
		other = ibv_open_device(ctx->device);
		CHECK(other != NULL && ibv_query_port(ctx, 1, &p) == 0 &&
		      p.active_mtu == cases[i].want && p.max_mtu == IBV_MTU_4096,
		      "MTU %u: active_mtu %d, expected %d", cases[i].mtu, p.active_mtu,
		      cases[i].want);
		if (other != NULL)
			ibv_close_device(other);
	}
	rte_eth_dev_set_mtu(info.port_id, 1500);
}

int main(void)
{
	char path[] = "/tmp/dpv-roce-addr-XXXXXX";
	union ibv_gid ll, ll1, c1, c2, v4b, v4c, n1;
	struct ibv_context *ctx, *ctx2, *ctx1;

	write_config(path);
	ctx = test_open("dpv_net_null0");
	unlink(path);
	ctx2 = test_open("dpv_net_null0");
	ctx1 = test_open("dpv_net_null1");
	gid_link_local(ctx, &ll);
	gid_link_local(ctx1, &ll1);
	gid_v4(&c1, "10.1.0.1");
	gid_v6(&c2, "fd00::1");
	gid_v4(&n1, "192.168.5.5");

	/* from the configuration: by ethdev name and by verbs device name */
	CHECK_TABLE(ctx, &ll, &c1, &c2);
	CHECK_TABLE(ctx1, &ll1, &n1);
	check_queries(ctx);
	CHECK_EQ(gid_events(ctx) + gid_events(ctx2) + gid_events(ctx1), 0);

	/* at run time: the first empty index; each change an event on both contexts of the
	 * device and none on the other device */
	CHECK_EQ(dpv_port_add_addr(ctx, "10.1.0.2"), 0);
	gid_v4(&v4b, "10.1.0.2");
	CHECK_TABLE(ctx2, &ll, &c1, &c2, &v4b);
	CHECK_EQ(gid_events(ctx), 1);
	CHECK_EQ(gid_events(ctx2), 1);
	CHECK_EQ(gid_events(ctx1), 0);
	CHECK_EQ(dpv_port_del_addr(ctx2, "10.1.0.1"), 0);     /* its index stays empty */
	CHECK_TABLE(ctx, &ll, NULL, &c2, &v4b);
	CHECK_EQ(dpv_port_add_addr(ctx, "10.1.0.3"), 0);      /* ... until another takes it */
	gid_v4(&v4c, "10.1.0.3");
	CHECK_TABLE(ctx, &ll, &v4c, &c2, &v4b);
	CHECK_EQ(gid_events(ctx), 2);
	CHECK_EQ(gid_events(ctx2), 2);

	/* errors change nothing and raise no event */
	check_errors(ctx, &ll);
	CHECK_TABLE(ctx, &ll, &v4c, &c2, &v4b);
	CHECK_EQ(gid_events(ctx), 0);
	check_full(ctx);
	CHECK_TABLE(ctx, &ll, &v4c, &c2, &v4b);
	CHECK_EQ(gid_events(ctx2), 24);
	CHECK_TABLE(ctx1, &ll1, &n1);

	check_concurrent_readers(ctx, ctx2);
	check_resolve_local(ctx, &ll);
	check_mtu(ctx);
	ibv_close_device(ctx1);
	ibv_close_device(ctx2);
	ibv_close_device(ctx);
	return test_done("roce_addr");
}

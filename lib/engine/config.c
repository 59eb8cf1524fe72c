/* SPDX-License-Identifier: BSD-3-Clause */
/* Runtime configuration: built-in defaults, overridden by a key = value file. */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <unistd.h>

#include "dpv_engine.h"

struct config_key {
	const char *name;
	size_t offset;
	unsigned int min, max;
};

#define KEY(n, lo, hi) { #n, offsetof(struct dpv_config, n), lo, hi }
static const struct config_key keys[] = {
	KEY(mbufs_per_socket, 1023, 1u << 24),
	KEY(mbuf_cache, 0, 512),
	KEY(mbuf_data_room, 1024, 65535),
	KEY(tx_desc, 32, 32768),
	KEY(rx_desc, 32, 32768),
	KEY(queues_per_port, 1, 1024),
	KEY(rx_spread, 0, 2),
	KEY(max_qp_wr, 1, 1u << 20),
	KEY(max_inline_data, 0, 65536),
	KEY(max_tso_header, 14, 1024),
	KEY(max_cqe, 1, 1u << 24),
	KEY(max_mr, 16, 1u << 24),
	KEY(mr_dma_map, 0, 2),
	KEY(tx_copy_max, 0, 65535),
	KEY(offload_policy, 0, 2),
	KEY(progress, 0, 1),
	KEY(progress_thread, 0, 1),
	KEY(cycle_stats, 0, 1),
	KEY(fault_drop_ppm, 0, 1000000),
	KEY(fault_dup_ppm, 0, 1000000),
	KEY(fault_reorder_ppm, 0, 1000000),
	KEY(fault_corrupt_ppm, 0, 1000000),
	KEY(fault_dirs, 1, 3),
	KEY(fault_seed, 0, UINT_MAX),
	KEY(resolve_timeout_ms, 1, 600000),
	KEY(resolve_probes, 1, 100),
	KEY(neigh_reachable_ms, 1, 86400000),
};

void dpv__config_defaults(struct dpv_config *cfg)
{
	*cfg = (struct dpv_config){
		.mbufs_per_socket = 16383,
		.mbuf_cache = 256,
		.mbuf_data_room = 2176,
		.tx_desc = 1024,
		.rx_desc = 1024,
		.queues_per_port = 4,
		.max_qp_wr = 32768,
		.max_inline_data = 2048,
		.max_tso_header = 128,
		.max_cqe = 262144,
		.max_mr = 65536,
		.mr_dma_map = 1,
		.tx_copy_max = 256,
		.offload_policy = 0,
		.progress = 0,
		.progress_thread = 1,
		.cycle_stats = 0,
		.fault_dirs = 3,
		.resolve_timeout_ms = 3000,
		.resolve_probes = 3,
		.neigh_reachable_ms = 30000,
	};
}

static bool ipv4_ownable(const uint8_t *a)
{
	return a[0] != 0 && a[0] != 127 && a[0] < 224;   /* 224/4 multicast, 240/4 and broadcast */
}

static bool ipv6_ownable(const uint8_t *a)
{
	static const uint8_t zero[16], loopback[16] = { [15] = 1 };
	static const uint8_t mapped[12] = { [10] = 0xFF, [11] = 0xFF };

	return memcmp(a, zero, 16) != 0 && memcmp(a, loopback, 16) != 0 && a[0] != 0xFF &&
	       memcmp(a, mapped, sizeof(mapped)) != 0;
}

int dpv__ip_parse(const char *text, uint8_t addr[16])
{
	uint8_t a[16] = { 0 };

	if (text == NULL)
		return -EINVAL;
	if (inet_pton(AF_INET, text, a) == 1 && ipv4_ownable(a)) {
		memcpy(addr, a, 16);
		return AF_INET;
	}
	if (strchr(text, ':') != NULL && inet_pton(AF_INET6, text, a) == 1 && ipv6_ownable(a)) {
		memcpy(addr, a, 16);
		return AF_INET6;
	}
	return -EINVAL;
}

static char *trim(char *s)
{
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	end = s + strlen(s);
	while (end > s && strchr(" \t\r\n", end[-1]))
		*--end = '\0';
	return s;
}

/* port_addr = <port> <address> [<address>...]: addresses separated by blanks or commas. */
static int set_port_addr(struct dpv_config *cfg, const char *path, int line, char *value)
{
	char *save = NULL, *port = strtok_r(value, " \t,", &save), *tok;
	int n = 0;

	while (port != NULL && (tok = strtok_r(NULL, " \t,", &save)) != NULL) {
		struct dpv_config_addr *a = &cfg->port_addrs[cfg->nb_port_addrs];

		if (cfg->nb_port_addrs == DPV_CONFIG_MAX_ADDRS) {
			ENGINE_LOG(ERR, "%s:%d: more than %d port addresses", path, line,
				   DPV_CONFIG_MAX_ADDRS);
			return -EINVAL;
		}
		a->family = dpv__ip_parse(tok, a->addr);
		if (a->family < 0 || strlen(port) >= sizeof(a->port)) {
			ENGINE_LOG(ERR, "%s:%d: port_addr: '%s' is not an IPv4 or IPv6 address a "
				   "port can own (a.b.c.d or IPv6, no prefix; not multicast, loopback "
				   "or unspecified)", path, line, tok);
			memset(a, 0, sizeof(*a));
			return -EINVAL;
		}
		snprintf(a->port, sizeof(a->port), "%s", port);
		cfg->nb_port_addrs++;
		n++;
	}
	if (n == 0) {
		ENGINE_LOG(ERR, "%s:%d: expected 'port_addr = <port name> <address> ...'", path, line);
		return -EINVAL;
	}
	return 0;
}

static int set_key(struct dpv_config *cfg, const char *path, int line, char *name, char *value)
{
	char *endp;
	unsigned long v;

	if (strcmp(name, "port_addr") == 0)
		return set_port_addr(cfg, path, line, value);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (strcmp(keys[i].name, name) != 0)
			continue;
		errno = 0;
		v = strtoul(value, &endp, 0);
		if (errno || *value == '\0' || *endp != '\0' || v < keys[i].min || v > keys[i].max) {
			ENGINE_LOG(ERR, "%s:%d: %s = '%s' is not a number in [%u, %u]",
				   path, line, name, value, keys[i].min, keys[i].max);
			return -EINVAL;
		}
		*(unsigned int *)((char *)cfg + keys[i].offset) = (unsigned int)v;
		return 0;
	}
	ENGINE_LOG(ERR, "%s:%d: unknown key '%s' (see doc/configuration.md)", path, line, name);
	return -EINVAL;
}

int dpv__config_parse(const char *path, struct dpv_config *cfg)
{
	char buf[512];
	int line = 0, rc = 0;
	FILE *f = fopen(path, "r");

	if (f == NULL) {
		rc = -errno;
		ENGINE_LOG(ERR, "cannot read configuration %s: %s", path, strerror(errno));
		return rc;
	}
	cfg->nb_port_addrs = 0;       /* a file gives the whole list of port addresses */
	memset(cfg->port_addrs, 0, sizeof(cfg->port_addrs));
	while (rc == 0 && fgets(buf, sizeof(buf), f) != NULL) {
		char *s, *eq;

		line++;
		s = strchr(buf, '#');
		if (s != NULL)
			*s = '\0';
		s = trim(buf);
		if (*s == '\0')
			continue;
		eq = strchr(s, '=');
		if (eq == NULL) {
			ENGINE_LOG(ERR, "%s:%d: expected 'key = value'", path, line);
			rc = -EINVAL;
			break;
		}
		*eq = '\0';
		rc = set_key(cfg, path, line, trim(s), trim(eq + 1));
	}
	fclose(f);
	return rc;
}

static struct dpv_config current;
static int loaded;

/* Load once: $DPV_CONFIG, else the installed file, else the defaults. */
static int config_load(void)
{
	const char *path = getenv("DPV_CONFIG");
	int rc = 0;

	dpv__config_defaults(&current);
	if (path != NULL && *path != '\0')
		rc = dpv__config_parse(path, &current);
	else if (access(DPV_SYSCONF_PATH, R_OK) == 0)
		rc = dpv__config_parse(DPV_SYSCONF_PATH, &current);
	if (rc != 0)
		dpv__config_defaults(&current);
	loaded = 1;
	return rc;
}

const struct dpv_config *dpv__config(void)
{
	if (!loaded)
		config_load();
	return &current;
}

/* Used by the EAL start so that a bad file fails the start instead of being ignored. */
int dpv__config_load_checked(void)
{
	return config_load();
}

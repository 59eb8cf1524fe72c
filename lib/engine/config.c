/* Runtime configuration: built-in defaults, overridden by a key = value file. */
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
	KEY(max_qp_wr, 1, 1u << 20),
	KEY(max_inline_data, 0, 65536),
	KEY(max_tso_header, 14, 1024),
	KEY(max_cqe, 1, 1u << 24),
	KEY(max_mr, 16, 1u << 24),
	KEY(mr_dma_map, 0, 2),
	KEY(tx_copy_max, 0, 65535),
	KEY(offload_policy, 0, 2),
	KEY(progress, 0, 1),
	KEY(cycle_stats, 0, 1),
	KEY(fault_drop_ppm, 0, 1000000),
	KEY(fault_dup_ppm, 0, 1000000),
	KEY(fault_reorder_ppm, 0, 1000000),
	KEY(fault_corrupt_ppm, 0, 1000000),
	KEY(fault_dirs, 1, 3),
	KEY(fault_seed, 0, UINT_MAX),
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
		.cycle_stats = 0,
		.fault_dirs = 3,
	};
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

static int set_key(struct dpv_config *cfg, const char *path, int line, char *name, char *value)
{
	char *endp;
	unsigned long v;

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

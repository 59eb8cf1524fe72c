/* SPDX-License-Identifier: BSD-3-Clause */
/* The shipped config/dpverbs.conf equals the built-in defaults, and a bad file is an error
 * that names the line. */
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dpv_engine.h"
#include "dpv_test.h"

static int parse_text(const char *text, struct dpv_config *cfg)
{
	char path[] = "/tmp/dpv-config-XXXXXX";
	int fd = mkstemp(path), rc;

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		return -1;
	close(fd);
	rc = dpv__config_parse(path, cfg);
	unlink(path);
	return rc;
}

int main(int argc, char **argv)
{
	struct dpv_config shipped, builtin, c;

	dpv__config_defaults(&builtin);
	memset(&shipped, 0xff, sizeof(shipped));
	CHECK(argc == 2, "usage: test_config <config/dpverbs.conf>");
	CHECK_EQ(dpv__config_parse(argv[1], &shipped), 0);
	CHECK(memcmp(&shipped, &builtin, sizeof(shipped)) == 0,
	      "config/dpverbs.conf and the built-in defaults differ");

	dpv__config_defaults(&c);
	CHECK_EQ(parse_text("# comment\n\n  tx_desc = 512  # trailing\nmbuf_cache=0\n", &c), 0);
	CHECK_EQ(c.tx_desc, 512);
	CHECK_EQ(c.mbuf_cache, 0);
	CHECK_EQ(c.rx_desc, builtin.rx_desc);
	CHECK_EQ(parse_text("no_such_key = 1\n", &c), -EINVAL);
	CHECK_EQ(parse_text("tx_desc = lots\n", &c), -EINVAL);
	CHECK_EQ(parse_text("tx_desc = 4\n", &c), -EINVAL);         /* below the minimum */
	CHECK_EQ(parse_text("tx_desc 512\n", &c), -EINVAL);
	CHECK_EQ(dpv__config_parse("/nonexistent/dpverbs.conf", &c), -ENOENT);

	/* port addresses: a port name, then addresses separated by blanks or commas */
	dpv__config_defaults(&c);
	CHECK_EQ(parse_text("port_addr = net_af_packet0 10.0.0.1, fd00::1\n"
			    "port_addr = 0000:01:00.0\t192.168.1.2\n", &c), 0);
	CHECK_EQ(c.nb_port_addrs, 3);
	CHECK(strcmp(c.port_addrs[0].port, "net_af_packet0") == 0 &&
	      c.port_addrs[0].family == AF_INET && memcmp(c.port_addrs[0].addr, "\x0a\0\0\x01", 4) == 0,
	      "first address");
	CHECK(strcmp(c.port_addrs[1].port, "net_af_packet0") == 0 &&
	      c.port_addrs[1].family == AF_INET6 && c.port_addrs[1].addr[0] == 0xfd &&
	      c.port_addrs[1].addr[15] == 1, "second address");
	CHECK(strcmp(c.port_addrs[2].port, "0000:01:00.0") == 0 && c.port_addrs[2].family == AF_INET,
	      "third address");
	CHECK_EQ(parse_text("tx_desc = 512\n", &c), 0);      /* a file gives the whole list */
	CHECK_EQ(c.nb_port_addrs, 0);
	CHECK_EQ(parse_text("port_addr = net_null0\n", &c), -EINVAL);
	CHECK_EQ(parse_text("port_addr = net_null0 10.0.0.1/24\n", &c), -EINVAL);
	CHECK_EQ(parse_text("port_addr = net_null0 224.0.0.1\n", &c), -EINVAL);
	CHECK_EQ(parse_text("port_addr = net_null0 ::1\n", &c), -EINVAL);
	CHECK_EQ(parse_text("resolve_timeout_ms = 0\n", &c), -EINVAL);
	CHECK_EQ(parse_text("resolve_probes = 0\n", &c), -EINVAL);
	return test_done("config");
}

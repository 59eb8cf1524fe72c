/* The ICRC of RoCEv2 (IBA A17.3.3): CRC-32 over a pseudo-header in which the fields routers
 * may change are set to ones, then the transport headers, payload and pad. The CRC itself is
 * slice-by-8 over tables built at load time: the ICRC runs on every packet, both ways. */
#include <string.h>

#include "roce_wire.h"

static uint32_t crc_table[8][256];
static uint32_t lrh_seed;

static uint32_t crc_bytes(uint32_t crc, const uint8_t *p, size_t n);

__attribute__((constructor)) static void crc_table_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xEDB88320 ^ (c >> 1) : c >> 1;
		crc_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_table[t][i] = crc_table[t - 1][i] >> 8 ^
					  crc_table[0][crc_table[t - 1][i] & 0xFF];
	/* the seed: the CRC state (initially all ones) after 8 bytes of 0xFF that stand for the
	 * masked LRH; rxe writes the same value as the constant 0xdebb20e3 */
	lrh_seed = crc_bytes(0xFFFFFFFF, (const uint8_t *)"\xff\xff\xff\xff\xff\xff\xff\xff", 8);
}

static uint32_t crc_bytes(uint32_t crc, const uint8_t *p, size_t n)
{
	while (n--)
		crc = crc >> 8 ^ crc_table[0][(crc ^ *p++) & 0xFF];
	return crc;
}

/* Eight bytes per step, each looked up in its own table (little-endian load: the CRC is
 * reflected, so the byte that comes first on the wire is the least significant). */
uint32_t dpv__crc32_update(uint32_t crc, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (; n >= 8; n -= 8, b += 8) {
		uint32_t lo, hi;

		memcpy(&lo, b, 4);
		memcpy(&hi, b + 4, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		lo = __builtin_bswap32(lo);
		hi = __builtin_bswap32(hi);
#endif
		lo ^= crc;
		crc = crc_table[7][lo & 0xFF] ^ crc_table[6][lo >> 8 & 0xFF] ^
		      crc_table[5][lo >> 16 & 0xFF] ^ crc_table[4][lo >> 24] ^
		      crc_table[3][hi & 0xFF] ^ crc_table[2][hi >> 8 & 0xFF] ^
		      crc_table[1][hi >> 16 & 0xFF] ^ crc_table[0][hi >> 24];
	}
	return crc_bytes(crc, b, n);
}

/* A copy of IP + UDP + BTH with the variant fields set to ones. */
static size_t masked_copy(uint8_t *m, const uint8_t *l3, bool ipv6)
{
	size_t ip = ipv6 ? 40 : 20, n = ip + 8 + DPV_ROCE_BTH_LEN;

	memcpy(m, l3, n);
	if (ipv6) {
		m[0] |= 0x0F;			/* traffic class, high nibble */
		m[1] = 0xFF;			/* traffic class low nibble, flow label */
		m[2] = m[3] = 0xFF;
		m[7] = 0xFF;			/* hop limit */
	} else {
		m[1] = 0xFF;			/* TOS */
		m[8] = 0xFF;			/* TTL */
		m[10] = m[11] = 0xFF;		/* header checksum */
	}
	m[ip + 6] = m[ip + 7] = 0xFF;		/* UDP checksum */
	m[ip + 8 + 4] = 0xFF;			/* BTH: FECN, BECN, resv6 */
	return n;
}

uint32_t dpv__roce_icrc_hdrs(const uint8_t *l3, bool ipv6, size_t len)
{
	uint8_t m[40 + 8 + DPV_ROCE_BTH_LEN];
	size_t n = masked_copy(m, l3, ipv6);
	uint32_t crc = dpv__crc32_update(lrh_seed, m, n);

	return dpv__crc32_update(crc, l3 + n, len - n);
}

uint32_t dpv__roce_icrc(const uint8_t *l3, bool ipv6, size_t len)
{
	return ~dpv__roce_icrc_hdrs(l3, ipv6, len);
}

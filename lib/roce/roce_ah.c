/* SPDX-License-Identifier: BSD-3-Clause */
/* Address handles over RoCEv2: ibv_create_ah resolves the path once — the source GID from the
 * port's table, the destination MAC by dpv__roce_resolve (the port's own MAC for its own
 * GIDs, the mapping of a multicast group, else ARP/ND) — and keeps it for every send that
 * names the AH. As rxe: a GRH is required (is_global), since RoCE routes by GID. The
 * ibv_init_ah_from_wc family reads the GRH a UD receive wrote (an IPv4 header in bytes 20-39
 * for an IPv4 peer) back into an AH towards the sender. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "roce_ud.h"

/* The path of @attr from @dev's port; 0 or a negative errno (-EINVAL for attributes RoCE
 * cannot use, -EHOSTUNREACH when the destination never answered). */
static int ah_resolve(struct dpv_device *dev, const struct ibv_ah_attr *attr, struct dpv_ah *ah)
{
	struct dpv_roce_path *p = &ah->path;
	int rc;

	if (attr->port_num != 1 || !attr->is_global)
		return -EINVAL;
	rc = dpv__roce_gid_get(dev, attr->grh.sgid_index, p->sgid);
	if (rc < 0)
		return -EINVAL;                  /* outside the table, or an empty entry */
	memcpy(p->dgid, attr->grh.dgid.raw, 16);
	if (dpv__roce_gid_is_v4(p->sgid) != dpv__roce_gid_is_v4(p->dgid))
		return -EINVAL;                  /* an IPv4 source cannot reach an IPv6 peer */
	rc = dpv__roce_resolve(dev, attr->grh.sgid_index, p->dgid, p->dmac);
	if (rc < 0)
		return rc;
	memcpy(p->smac, dev->caps.mac, 6);
	p->traffic_class = attr->grh.traffic_class;
	p->flow_label = attr->grh.flow_label & 0xFFFFF;
	p->hop_limit = attr->grh.hop_limit;
	ah->sgid_index = attr->grh.sgid_index;
	ah->mcast = dpv__roce_gid_is_mcast(p->dgid);
	ah->loopback = !ah->mcast && dpv__roce_gid_find(dev, p->dgid) >= 0;
	return 0;
}

int dpv__roce_av_resolve(struct dpv_device *dev, const struct ibv_ah_attr *attr,
			 struct dpv_ah *ah)
{
	return ah_resolve(dev, attr, ah);
}

DPV_EXPORT struct ibv_ah *ibv_create_ah(struct ibv_pd *ibpd, struct ibv_ah_attr *attr)
{
	struct dpv_pd *pd = to_dpd(ibpd);
	struct dpv_context *ctx;
	struct dpv_ah *ah;
	int rc;

	DPV_FORK_REFUSE(NULL);
	if (pd == NULL || attr == NULL)
		return dpv__fail_ptr(-EINVAL);
	ctx = to_dctx(ibpd->context);
	ah = calloc(1, sizeof(*ah));
	if (ah == NULL)
		return dpv__fail_ptr(-ENOMEM);
	rc = ah_resolve(ctx->dev, attr, ah);
	if (rc == 0 && __atomic_load_n(&ctx->ahs.n, __ATOMIC_RELAXED) >= DPV_MAX_AH)
		rc = -ENOMEM;
	if (rc == 0)
		rc = dpv__objset_add(ctx, &ctx->ahs, ah);
	if (rc != 0) {
		free(ah);
		return dpv__fail_ptr(rc);
	}
	ah->pd = dpv__pd_base(pd);
	ah->ibah.context = ibpd->context;
	ah->ibah.pd = ibpd;
	ah->ibah.handle = 0;
	__atomic_fetch_add(&pd->refs, 1, __ATOMIC_RELEASE);     /* ibv_dealloc_pd: EBUSY */
	return &ah->ibah;
}

DPV_EXPORT int ibv_destroy_ah(struct ibv_ah *ibah)
{
	struct dpv_ah *ah = to_dah(ibah);
	struct dpv_context *ctx;

	DPV_FORK_NOOP(0);
	if (ah == NULL)
		return EINVAL;
	ctx = to_dctx(ibah->context);
	dpv__objset_del(ctx, &ctx->ahs, ah);
	__atomic_fetch_sub(&to_dpd(ibah->pd)->refs, 1, __ATOMIC_RELEASE);
	free(ah);
	return 0;
}

/* ---- from a receive completion ---- */

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* Is there an IPv4 header in bytes 20-39 of @grh rather than an IPv6 header in all 40? As
 * rdma-core decides: version 4 there and not 6 in byte 0, or an IHL of 5 and a right
 * header checksum when both could be. */
static bool grh_is_ipv4(const uint8_t *grh)
{
	const uint8_t *ip = grh + 20;
	uint32_t sum = 0;

	if (ip[0] >> 4 != 4)
		return false;
	if (grh[0] >> 4 != 6)
		return true;
	if ((ip[0] & 0xF) != 5)
		return false;
	for (int i = 0; i < 20; i += 2)
		sum += get16(ip + i);
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	return sum == 0xFFFF;
}

/* The sgid_index whose GID is @gid, or -1 with errno. */
static int local_index(struct dpv_device *dev, const uint8_t gid[16])
{
	int idx;

	if (dpv__roce_gid_is_mcast(gid)) {
		errno = EINVAL;              /* a group is nobody's source address */
		return -1;
	}
	idx = dpv__roce_gid_find(dev, gid);
	if (idx < 0)
		errno = ENOENT;
	return idx < 0 ? -1 : idx;
}

DPV_EXPORT int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num,
				   struct ibv_wc *wc, struct ibv_grh *grh,
				   struct ibv_ah_attr *attr)
{
	const uint8_t *g = (const uint8_t *)grh;
	struct dpv_context *ctx = to_dctx(context);
	uint32_t vtf;
	uint8_t local[16];
	int idx;

	DPV_FORK_REFUSE(-1);
	if (ctx == NULL || wc == NULL || attr == NULL || grh == NULL) {
		errno = EINVAL;
		return -1;
	}
	vtf = be32toh(grh->version_tclass_flow);
	memset(attr, 0, sizeof(*attr));
	attr->dlid = wc->slid;
	attr->sl = wc->sl;
	attr->src_path_bits = wc->dlid_path_bits;
	attr->port_num = port_num;
	attr->grh.flow_label = vtf & 0xFFFFF;
	if (!(wc->wc_flags & IBV_WC_GRH))
		return 0;
	attr->is_global = 1;
	if (grh_is_ipv4(g)) {
		memcpy(local, dpv__roce_v4_prefix, 12);
		memcpy(local + 12, g + 20 + 16, 4);           /* its destination: us */
		memcpy(attr->grh.dgid.raw, dpv__roce_v4_prefix, 12);
		memcpy(attr->grh.dgid.raw + 12, g + 20 + 12, 4);
		attr->grh.hop_limit = g[20 + 8];
		attr->grh.traffic_class = g[20 + 1];
	} else if (vtf >> 28 == 6) {
		if (grh->next_hdr != 17) {
			errno = EPROTONOSUPPORT;     /* RoCE v1 (0x1B): dpverbs has no v1 GIDs */
			return -1;
		}
		memcpy(local, grh->dgid.raw, 16);
		attr->grh.dgid = grh->sgid;
		attr->grh.hop_limit = grh->hop_limit;
		attr->grh.traffic_class = (uint8_t)(vtf >> 20);
	} else {
		errno = EPROTONOSUPPORT;
		return -1;
	}
	idx = local_index(ctx->dev, local);
	if (idx < 0)
		return -1;
	attr->grh.sgid_index = (uint8_t)idx;
	return 0;
}

DPV_EXPORT struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc,
						struct ibv_grh *grh, uint8_t port_num)
{
	struct ibv_ah_attr attr;

	DPV_FORK_REFUSE(NULL);
	if (pd == NULL)
		return dpv__fail_ptr(-EINVAL);
	if (ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &attr) != 0)
		return NULL;
	return ibv_create_ah(pd, &attr);
}

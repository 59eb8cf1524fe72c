/* placeholder, replaced below */
#include "verbs_priv.h"

int dpv_raw_post_send_fast(struct dpv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	return dpv_raw_post_send(qp, wr, bad_wr);
}

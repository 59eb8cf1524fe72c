/* SPDX-License-Identifier: BSD-3-Clause */
/* The list of drivers, filled by DPV_DRIVER_REGISTER constructors. */
#include <stddef.h>

#include "dpv_driver.h"

static struct dpv_driver_list drivers = TAILQ_HEAD_INITIALIZER(drivers);

void dpv__driver_register(struct dpv_driver *drv)
{
	TAILQ_INSERT_TAIL(&drivers, drv, next);
}

const struct dpv_driver_list *dpv__drivers(void)
{
	return &drivers;
}

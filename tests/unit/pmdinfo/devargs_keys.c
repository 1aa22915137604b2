/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/* Print the devargs keys net_vnapi accepts, one a line, from the driver's
 * own list (VNAPI_DEVARGS): what test_pmdinfo.py expects the plugin's PMD
 * info string to name.
 */

#include <stdio.h>

#include "vnapi_devargs.h"

#define DEVARGS_KEY_PRINT(key, parser, field, allowed) puts(key);

int
main(void)
{
	VNAPI_DEVARGS(DEVARGS_KEY_PRINT)
	return 0;
}

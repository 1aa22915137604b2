/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/* Print the devargs keys net_vnapi accepts, one a line, from the driver's
 * own list (VNAPI_DEVARGS): what test_pmdinfo.py expects the plugin's PMD
 * info string to name. With --pci: net_vnapi_pci's (its opt-in vnapi, and
 * the keys the list marks for PCI devices).
 */

#include <stdio.h>
#include <string.h>

#include "vnapi_devargs.h"

#define DEVARGS_KEY_PRINT(key, parser, field, allowed, dflt, pci) puts(key);
#define DEVARGS_PCI_KEY_PRINT(key, parser, field, allowed, dflt, pci) pci(puts(key);)

int
main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--pci") == 0) {
		puts("vnapi");
		VNAPI_DEVARGS(DEVARGS_PCI_KEY_PRINT)
	} else {
		VNAPI_DEVARGS(DEVARGS_KEY_PRINT)
	}
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * What the driver's devargs parsers do with each argument, alone:
 * "KEY=VALUE accepted" or "KEY=VALUE refused", one a line, through
 * net_vnapi's parser (no path required), or with --pci net_vnapi_pci's
 * (after its opt-in). test_pmdinfo.py asks it about every key the PMD info
 * strings and the user guide name: the driver's behaviour, not its list.
 */

#include <stdio.h>
#include <string.h>

#include <rte_log.h>

#include "vnapi_devargs.h"

int
main(int argc, char **argv)
{
	struct vnapi_params p;
	bool pci = argc > 1 && strcmp(argv[1], "--pci") == 0;
	int i, ret;

	rte_log_set_global_level(RTE_LOG_EMERG); /* refusals are expected here */
	for (i = pci ? 2 : 1; i < argc; i++) {
		ret = pci ? vnapi_devargs_parse_pci("net_vnapi_pci", argv[i], &p) :
			    vnapi_devargs_parse_opt("net_vnapi", argv[i], &p, false);
		printf("%s %s\n", argv[i], ret == 0 ? "accepted" : "refused");
	}
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#include <rte_log.h>

#include "vnapi_logs.h"

RTE_LOG_REGISTER_SUFFIX(vnapi_logtype_init, init, NOTICE);
RTE_LOG_REGISTER_SUFFIX(vnapi_logtype_driver, driver, NOTICE);

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * Devargs parsing. Everything here is generated from VNAPI_DEVARGS
 * (vnapi_devargs.h): the kvargs key list, one handler per key, the
 * allowed-keys text and the registered parameter string.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_ether.h>
#include <rte_kvargs.h>

#include "vnapi_devargs.h"
#include "vnapi_logs.h"

#define VNAPI_DEVARG_DEFAULT(key, parser, field, allowed, dflt, pci) .field = dflt,
const struct vnapi_params vnapi_params_default = {
	VNAPI_DEVARGS(VNAPI_DEVARG_DEFAULT)
};
#undef VNAPI_DEVARG_DEFAULT

static int
vnapi_arg_reject(const char *key, const char *value, const char *allowed)
{
	VNAPI_INIT_LOG(ERR, "devarg %s: invalid value '%s'; allowed: %s",
		       key, value != NULL ? value : "", allowed);
	return -EINVAL;
}

/* A decimal integer in [min, max], the whole string; false otherwise. */
static bool
vnapi_arg_uint(const char *value, unsigned long min, unsigned long max, unsigned long *out)
{
	char *end = NULL;
	unsigned long v;

	if (value == NULL || value[0] < '0' || value[0] > '9')
		return false;
	errno = 0;
	v = strtoul(value, &end, 10);
	if (errno != 0 || end == value || *end != '\0' || v < min || v > max)
		return false;
	*out = v;
	return true;
}

static int
vnapi_parse_path(const char *key, const char *value, const char *allowed,
		 char (*out)[VNAPI_PATH_MAX])
{
	if (value == NULL || value[0] == '\0')
		return vnapi_arg_reject(key, value, allowed);
	if (strlen(value) >= sizeof(*out)) {
		VNAPI_INIT_LOG(ERR, "devarg %s: '%s' is longer than %zu bytes (unix socket limit); allowed: %s",
			       key, value, sizeof(*out) - 1, allowed);
		return -EINVAL;
	}
	strcpy(*out, value);
	return 0;
}

/*
 * An integer devarg in [min, max] into @p out, a uint16_t or a uint32_t
 * (@p size); a clear error otherwise.
 */
static int
vnapi_parse_uint(const char *key, const char *value, const char *allowed, unsigned long min,
		 unsigned long max, void *out, size_t size)
{
	unsigned long v;

	if (!vnapi_arg_uint(value, min, max, &v))
		return vnapi_arg_reject(key, value, allowed);
	if (size == sizeof(uint16_t))
		*(uint16_t *)out = (uint16_t)v;
	else
		*(uint32_t *)out = (uint32_t)v;
	return 0;
}

/* A bounded integer devarg: its parser, vnapi_parse_<name>. */
#define VNAPI_PARSE_UINT(name, type, min, max) \
static int \
vnapi_parse_##name(const char *key, const char *value, const char *allowed, type *out) \
{ \
	return vnapi_parse_uint(key, value, allowed, min, max, out, sizeof(*out)); \
}

VNAPI_PARSE_UINT(queues, uint16_t, 1, VNAPI_MAX_QUEUE_PAIRS)
VNAPI_PARSE_UINT(reconnect_ms, uint32_t, 0, VNAPI_MAX_RECONNECT_MS)
VNAPI_PARSE_UINT(tx_drain_ms, uint32_t, 0, VNAPI_MAX_TX_DRAIN_MS)

static int
vnapi_parse_queue_size(const char *key, const char *value, const char *allowed, uint16_t *out)
{
	if (value != NULL && !rte_is_power_of_2((uint32_t)strtoul(value, NULL, 10)))
		return vnapi_arg_reject(key, value, allowed);
	return vnapi_parse_uint(key, value, allowed, VNAPI_MIN_QUEUE_SIZE, VNAPI_MAX_QUEUE_SIZE,
				out, sizeof(*out));
}

static int
vnapi_parse_bool(const char *key, const char *value, const char *allowed, bool *out)
{
	if (value != NULL && strcmp(value, "0") == 0)
		*out = false;
	else if (value != NULL && strcmp(value, "1") == 0)
		*out = true;
	else
		return vnapi_arg_reject(key, value, allowed);
	return 0;
}

/* A unicast, non-zero address; the zero address means "not given". */
static int
vnapi_parse_mac(const char *key, const char *value, const char *allowed,
		struct rte_ether_addr *out)
{
	struct rte_ether_addr mac;

	if (value == NULL || rte_ether_unformat_addr(value, &mac) != 0)
		return vnapi_arg_reject(key, value, allowed);
	if (!rte_is_valid_assigned_ether_addr(&mac)) {
		VNAPI_INIT_LOG(ERR, "devarg %s: '%s' is not a unicast address; allowed: %s",
			       key, value, allowed);
		return -EINVAL;
	}
	*out = mac;
	return 0;
}

static int
vnapi_parse_intr_rescue(const char *key, const char *value, const char *allowed,
			enum vnapi_intr_rescue *out)
{
	if (value != NULL && strcmp(value, "signal") == 0)
		*out = VNAPI_RESCUE_SIGNAL;
	else if (value != NULL && strcmp(value, "eagain") == 0)
		*out = VNAPI_RESCUE_EAGAIN;
	else
		return vnapi_arg_reject(key, value, allowed);
	return 0;
}

/* One kvargs handler per devarg: vnapi_arg_<field>(). */
#define VNAPI_DEVARG_HANDLER(key, parser, field, allowed, dflt, pci) \
static int \
vnapi_arg_ ## field(const char *k, const char *v, void *opaque) \
{ \
	return vnapi_parse_ ## parser(k, v, allowed, &((struct vnapi_params *)opaque)->field); \
}
VNAPI_DEVARGS(VNAPI_DEVARG_HANDLER)
#undef VNAPI_DEVARG_HANDLER

static const struct vnapi_devarg_info vnapi_devarg_infos[] = {
#define VNAPI_DEVARG_INFO(key, parser, field, allowed, dflt, pci) { key, allowed },
	VNAPI_DEVARGS(VNAPI_DEVARG_INFO)
#undef VNAPI_DEVARG_INFO
};

static const arg_handler_t vnapi_devarg_handlers[] = {
#define VNAPI_DEVARG_FN(key, parser, field, allowed, dflt, pci) vnapi_arg_ ## field,
	VNAPI_DEVARGS(VNAPI_DEVARG_FN)
#undef VNAPI_DEVARG_FN
};

/* The pci column as data: true where the key applies to a PCI device. */
static const bool vnapi_devarg_pci[] = {
#define VNAPI_DEVARG_PCI(key, parser, field, allowed, dflt, pci) pci(true) + 0,
	VNAPI_DEVARGS(VNAPI_DEVARG_PCI)
#undef VNAPI_DEVARG_PCI
};

static const char *const vnapi_valid_keys[] = {
#define VNAPI_DEVARG_KEY(key, parser, field, allowed, dflt, pci) key,
	VNAPI_DEVARGS(VNAPI_DEVARG_KEY)
#undef VNAPI_DEVARG_KEY
	NULL,
};

#define VNAPI_DEVARG_KEY_TEXT(key, parser, field, allowed, dflt, pci) " " key
static const char vnapi_keys_text[] = VNAPI_DEVARGS(VNAPI_DEVARG_KEY_TEXT);
#undef VNAPI_DEVARG_KEY_TEXT

const struct vnapi_devarg_info *
vnapi_devargs_list(unsigned int *n)
{
	*n = RTE_DIM(vnapi_devarg_infos);
	return vnapi_devarg_infos;
}

int
vnapi_devargs_parse(const char *name, const char *args, struct vnapi_params *p)
{
	return vnapi_devargs_parse_opt(name, args, p, true);
}

static int
vnapi_devargs_parse_common(const char *name, const char *args, struct vnapi_params *p,
			   bool need_path, bool pci)
{
	struct rte_kvargs *kvlist;
	unsigned int i;
	int ret = 0;

	*p = vnapi_params_default;
	kvlist = rte_kvargs_parse(args != NULL ? args : "", vnapi_valid_keys);
	if (kvlist == NULL) {
		VNAPI_INIT_LOG(ERR, "%s: cannot parse devargs '%s'; allowed keys:%s",
			       name, args != NULL ? args : "", vnapi_keys_text);
		return -EINVAL;
	}
	for (i = 0; i < RTE_DIM(vnapi_devarg_infos) && ret == 0; i++) {
		const char *key = vnapi_devarg_infos[i].key;

		if (rte_kvargs_count(kvlist, key) > 1) {
			VNAPI_INIT_LOG(ERR, "%s: devarg %s given more than once; allowed: once, %s",
				       name, key, vnapi_devarg_infos[i].allowed);
			ret = -EINVAL;
			break;
		}
		if (pci && !vnapi_devarg_pci[i] && rte_kvargs_count(kvlist, key) > 0) {
			VNAPI_INIT_LOG(ERR, "%s: devarg %s is for vhost-user (net_vnapi vdev), not a PCI device",
				       name, key);
			ret = -EINVAL;
			break;
		}
		if (rte_kvargs_process(kvlist, key, vnapi_devarg_handlers[i], p) < 0)
			ret = -EINVAL;
	}
	if (ret == 0 && need_path && p->path[0] == '\0') {
		VNAPI_INIT_LOG(ERR, "%s: devarg path is required: the back end's vhost-user socket, e.g. %s,path=/run/vnapi/vhost0.sock",
			       name, name);
		ret = -EINVAL;
	}
	rte_kvargs_free(kvlist);
	return ret;
}

int
vnapi_devargs_parse_opt(const char *name, const char *args, struct vnapi_params *p,
			bool need_path)
{
	return vnapi_devargs_parse_common(name, args, p, need_path, false);
}

int
vnapi_devargs_parse_pci(const char *name, const char *args, struct vnapi_params *p)
{
	return vnapi_devargs_parse_common(name, args, p, false, true);
}

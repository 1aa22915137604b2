/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * Unit tests of net_vnapi's devargs parser (drivers/net/vnapi/vnapi_devargs.c),
 * TAP output, no EAL: every accepted value lands in its field, every
 * rejected value fails with -EINVAL and one log line naming the key and its
 * allowed values, and the user guide's devargs table (doc/user-guide.md) says
 * what the list says.
 *
 * Usage: test_devargs doc/user-guide.md [-l] [PATTERN...]
 */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_ether.h>
#include <rte_log.h>

#include "unit_check.h"
#include "unit_tap.h"
#include "vnapi_devargs.h"

static const char *readme_path;

/* The parser's log output of the last call, NUL-terminated. */
static char log_buf[8192];

static int
parse_as(bool pci, const char *args, struct vnapi_params *p)
{
	FILE *f = fmemopen(log_buf, sizeof(log_buf) - 1, "w");
	int ret;

	memset(log_buf, 0, sizeof(log_buf));
	if (f == NULL)
		return -1000;
	rte_openlog_stream(f);
	ret = pci ? vnapi_devargs_parse_pci("0000:00:03.0", args, p) :
		    vnapi_devargs_parse("net_vnapi9", args, p);
	rte_openlog_stream(NULL);
	fclose(f);
	return ret;
}

static int
parse(const char *args, struct vnapi_params *p)
{
	return parse_as(false, args, p);
}

static const char *
allowed_of(const char *key)
{
	const struct vnapi_devarg_info *list;
	unsigned int n, i;

	list = vnapi_devargs_list(&n);
	for (i = 0; i < n; i++)
		if (strcmp(list[i].key, key) == 0)
			return list[i].allowed;
	return NULL;
}

/* The log holds exactly one line, and it names every one of @p words. */
static bool
one_line_naming(const char *w1, const char *w2)
{
	const char *nl = strchr(log_buf, '\n');

	if (nl == NULL || nl[1] != '\0') {
		printf("#   log is not one line: '%s'\n", log_buf);
		return false;
	}
	if ((w1 != NULL && strstr(log_buf, w1) == NULL) ||
	    (w2 != NULL && strstr(log_buf, w2) == NULL)) {
		printf("#   log line '%s' does not name '%s' and '%s'\n", log_buf,
		       w1 ? w1 : "", w2 ? w2 : "");
		return false;
	}
	return true;
}

/*
 * @p got holds @p want in every field; a diagnostic names the first that
 * differs. The fields are those of the driver's devargs list
 * (VNAPI_DEVARGS), each compared as its parser's type: a key added there is
 * checked here without an edit.
 */
#define CHECK_FIELD_path(f) EXPECT(strcmp(got->f, want->f) == 0)
#define CHECK_FIELD_mac(f) EXPECT(rte_is_same_ether_addr(&got->f, &want->f))
#define CHECK_FIELD_queues(f) EXPECT_EQ(got->f, want->f)
#define CHECK_FIELD_queue_size(f) EXPECT_EQ(got->f, want->f)
#define CHECK_FIELD_bool(f) EXPECT_EQ(got->f, want->f)
#define CHECK_FIELD_intr_rescue(f) EXPECT_EQ(got->f, want->f)
#define CHECK_FIELD_reconnect_ms(f) EXPECT_EQ(got->f, want->f)
#define CHECK_FIELD_tx_drain_ms(f) EXPECT_EQ(got->f, want->f)
#define CHECK_FIELD(key, parser, field, allowed, dflt, pci) CHECK_FIELD_##parser(field);

static int
check_params(const struct vnapi_params *got, const struct vnapi_params *want)
{
	VNAPI_DEVARGS(CHECK_FIELD)
	return 0;
}

/*
 * The feature and offload fields at their defaults (written out, not taken
 * from the parser): every feature on but packed_vq, intr_rescue signal.
 */
#define DEFAULT_FEATURES \
	.mrg_rxbuf = true, .event_idx = true, .packed_vq = false, .in_order = true, \
	.indirect = true, .tx_csum = true, .tso = true, .rx_csum = true, .lro = true, \
	.intr_rescue = VNAPI_RESCUE_SIGNAL

/* Devargs that parse, and every field they give (written out, not taken from the parser). */
static const struct {
	const char *args;
	struct vnapi_params want;
} accepted[] = {
	{ "path=/run/x.sock",      /* the defaults */
	  { .path = "/run/x.sock", .queues = 1, .queue_size = VNAPI_DEFAULT_QUEUE_SIZE,
	    DEFAULT_FEATURES,
	    .server = false, .reconnect_ms = VNAPI_DEFAULT_RECONNECT_MS,
	    .tx_drain_ms = VNAPI_DEFAULT_TX_DRAIN_MS } },
	{ "path=/s,queues=16,queue_size=32768,mac=02:00:00:ab:cd:ef,mrg_rxbuf=0,"
	  "event_idx=0,packed_vq=1,in_order=0,indirect=0,intr_rescue=eagain,"
	  "tx_csum=0,tso=0,rx_csum=0,lro=0",
	  { .path = "/s", .queues = 16, .queue_size = 32768,
	    .mac = { .addr_bytes = { 0x02, 0x00, 0x00, 0xab, 0xcd, 0xef } },
	    .mrg_rxbuf = false, .event_idx = false, .packed_vq = true, .in_order = false,
	    .indirect = false, .intr_rescue = VNAPI_RESCUE_EAGAIN,
	    .reconnect_ms = VNAPI_DEFAULT_RECONNECT_MS,
	    .tx_drain_ms = VNAPI_DEFAULT_TX_DRAIN_MS } },
	{ "path=/s,server=1,reconnect_ms=0,tx_drain_ms=0",
	  { .path = "/s", .queues = 1, .queue_size = VNAPI_DEFAULT_QUEUE_SIZE,
	    DEFAULT_FEATURES, .server = true, .reconnect_ms = 0,
	    .tx_drain_ms = 0 } },
	{ "path=/s,server=0,reconnect_ms=60000,tx_drain_ms=10000",
	  { .path = "/s", .queues = 1, .queue_size = VNAPI_DEFAULT_QUEUE_SIZE,
	    DEFAULT_FEATURES, .server = false, .reconnect_ms = 60000,
	    .tx_drain_ms = 10000 } },
	{ "path=/s,queues=1,queue_size=64,mrg_rxbuf=1,event_idx=1,packed_vq=0,"
	  "in_order=1,indirect=1,intr_rescue=signal,tx_csum=1,tso=1,rx_csum=1,lro=1",
	  { .path = "/s", .queues = 1, .queue_size = 64,
	    DEFAULT_FEATURES,
	    .reconnect_ms = VNAPI_DEFAULT_RECONNECT_MS,
	    .tx_drain_ms = VNAPI_DEFAULT_TX_DRAIN_MS } },
};

static int
t_defaults(const void *arg)
{
	struct vnapi_params p;

	EXPECT_EQ(parse(accepted[0].args, &p), 0);
	EXPECT_EQ(check_params(&p, &accepted[0].want), 0);
	EXPECT_EQ(log_buf[0], '\0');
	return 0;
}

static int
t_accepted(const void *arg)
{
	struct vnapi_params p;
	char path[VNAPI_PATH_MAX];
	unsigned int i;

	for (i = 1; i < RTE_DIM(accepted); i++) {
		printf("#  %s\n", accepted[i].args);
		EXPECT_EQ(parse(accepted[i].args, &p), 0);
		EXPECT_EQ(check_params(&p, &accepted[i].want), 0);
	}

	/* Every power of two in range, and the longest path. */
	for (unsigned int qs = VNAPI_MIN_QUEUE_SIZE; qs <= VNAPI_MAX_QUEUE_SIZE; qs *= 2) {
		char args[64];

		snprintf(args, sizeof(args), "path=/s,queue_size=%u", qs);
		EXPECT_EQ(parse(args, &p), 0);
		EXPECT_EQ(p.queue_size, qs);
	}
	memset(path, 'a', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	{
		char args[VNAPI_PATH_MAX + 8];

		snprintf(args, sizeof(args), "path=%s", path);
		EXPECT_EQ(parse(args, &p), 0);
		EXPECT(strcmp(p.path, path) == 0);
	}
	return 0;
}

/* Each rejected value: -EINVAL and one line naming the key and its allowed values. */
static const struct {
	const char *args;
	const char *key;
} rejected[] = {
	{ "path=/s,queues=0", "queues" },
	{ "path=/s,queues=17", "queues" },
	{ "path=/s,queues=abc", "queues" },
	{ "path=/s,queues=1x", "queues" },
	{ "path=/s,queues=-1", "queues" },
	{ "path=/s,queues=", "queues" },
	{ "path=/s,queues=99999999999999999999999", "queues" },
	{ "path=/s,queue_size=100", "queue_size" },
	{ "path=/s,queue_size=0", "queue_size" },
	{ "path=/s,queue_size=32", "queue_size" },
	{ "path=/s,queue_size=65536", "queue_size" },
	{ "path=/s,queue_size=0x100", "queue_size" },
	{ "path=/s,mac=zz:zz:zz:zz:zz:zz", "mac" },
	{ "path=/s,mac=02:00:00:00:00", "mac" },
	{ "path=/s,mac=01:00:5e:00:00:01", "mac" },     /* multicast */
	{ "path=/s,mac=00:00:00:00:00:00", "mac" },
	{ "path=/s,mac=ff:ff:ff:ff:ff:ff", "mac" },
	{ "path=/s,mrg_rxbuf=2", "mrg_rxbuf" },
	{ "path=/s,mrg_rxbuf=yes", "mrg_rxbuf" },
	{ "path=/s,event_idx=yes", "event_idx" },
	{ "path=/s,event_idx=", "event_idx" },
	{ "path=/s,packed_vq=2", "packed_vq" },
	{ "path=/s,in_order=on", "in_order" },
	{ "path=/s,indirect=2", "indirect" },
	{ "path=/s,tx_csum=2", "tx_csum" },
	{ "path=/s,tso=on", "tso" },
	{ "path=/s,rx_csum=", "rx_csum" },
	{ "path=/s,lro=-1", "lro" },
	{ "path=/s,intr_rescue=sometimes", "intr_rescue" },
	{ "path=/s,intr_rescue=SIGNAL", "intr_rescue" },
	{ "path=/s,server=yes", "server" },
	{ "path=/s,server=2", "server" },
	{ "path=/s,reconnect_ms=60001", "reconnect_ms" },
	{ "path=/s,reconnect_ms=-1", "reconnect_ms" },
	{ "path=/s,reconnect_ms=1s", "reconnect_ms" },
	{ "path=/s,tx_drain_ms=10001", "tx_drain_ms" },
	{ "path=/s,tx_drain_ms=-1", "tx_drain_ms" },
	{ "path=/s,tx_drain_ms=100ms", "tx_drain_ms" },
	{ "path=/s,tx_drain_ms=", "tx_drain_ms" },
	{ "path=", "path" },
	{ "path=/s,queues=1,queues=2", "queues" },        /* given twice */
	{ "path=/s,path=/t", "path" },
};

static int
t_rejected(const void *arg)
{
	struct vnapi_params p;
	unsigned int i;

	for (i = 0; i < RTE_DIM(rejected); i++) {
		const char *allowed = allowed_of(rejected[i].key);
		char key[64];

		printf("#  %s\n", rejected[i].args);
		EXPECT(allowed != NULL);
		snprintf(key, sizeof(key), "devarg %s", rejected[i].key);
		EXPECT_EQ(parse(rejected[i].args, &p), -EINVAL);
		EXPECT(one_line_naming(key, allowed));
	}
	return 0;
}

static int
t_path_too_long(const void *arg)
{
	char args[VNAPI_PATH_MAX + 16];
	struct vnapi_params p;

	memset(args, 'a', sizeof(args));
	memcpy(args, "path=/", 6);
	args[6 + VNAPI_PATH_MAX - 1] = '\0';  /* 108 characters of path: one too many */
	EXPECT_EQ(parse(args, &p), -EINVAL);
	EXPECT(one_line_naming("devarg path", "unix socket limit"));
	return 0;
}

static int
t_unknown_and_missing(const void *arg)
{
	const struct vnapi_devarg_info *list;
	struct vnapi_params p;
	unsigned int n, i;

	/* Unknown key: the line names it and lists every allowed key. */
	EXPECT_EQ(parse("path=/s,bogus_key=1", &p), -EINVAL);
	EXPECT(one_line_naming("bogus_key", "allowed keys"));
	list = vnapi_devargs_list(&n);
	for (i = 0; i < n; i++)
		EXPECT(strstr(log_buf, list[i].key) != NULL);
	/* No path. */
	EXPECT_EQ(parse("queues=1", &p), -EINVAL);
	EXPECT(one_line_naming("devarg path is required", "path="));
	EXPECT_EQ(parse(NULL, &p), -EINVAL);
	EXPECT(one_line_naming("devarg path is required", NULL));
	EXPECT_EQ(parse("", &p), -EINVAL);
	return 0;
}

/* The PCI driver's devargs: the vhost-user rows (pci column VNAPI_PCI_NO)
 * refused by name, the others as on the vdev, no path needed; its
 * parameter string holds exactly the keys it accepts. */
static int
t_pci(const void *arg)
{
	static const char pci_param[] = VNAPI_DEVARGS_PCI_PARAM_STRING;
	static const char *const refused[] = { "path=/s", "server=1", "server=0",
					       "reconnect_ms=0" };
	static const char *const vhost_only[] = { "path", "server", "reconnect_ms" };
	const struct vnapi_devarg_info *list;
	struct vnapi_params p, want = vnapi_params_default;
	unsigned int n, i, j;
	char key[64];

	for (i = 0; i < RTE_DIM(refused); i++) {
		printf("#  pci: %s\n", refused[i]);
		EXPECT_EQ(parse_as(true, refused[i], &p), -EINVAL);
		snprintf(key, sizeof(key), "devarg %.*s is for vhost-user",
			 (int)strcspn(refused[i], "="), refused[i]);
		EXPECT(one_line_naming(key, "not a PCI device"));
	}
	EXPECT_EQ(parse_as(true, "", &p), 0);
	EXPECT_EQ(check_params(&p, &want), 0);
	EXPECT_EQ(parse_as(true, "queues=2,packed_vq=1,tx_drain_ms=0", &p), 0);
	want.queues = 2;
	want.packed_vq = true;
	want.tx_drain_ms = 0;
	EXPECT_EQ(check_params(&p, &want), 0);
	EXPECT_EQ(parse_as(true, "queues=17", &p), -EINVAL);
	EXPECT(one_line_naming("devarg queues", "<1-16>"));
	/* The parameter string: the opt-in, then every key but the refused ones. */
	EXPECT(strncmp(pci_param, "vnapi=<1> ", 10) == 0);
	list = vnapi_devargs_list(&n);
	for (i = 0; i < n; i++) {
		bool only = false;

		for (j = 0; j < RTE_DIM(vhost_only); j++)
			only = only || strcmp(list[i].key, vhost_only[j]) == 0;
		snprintf(key, sizeof(key), " %s=", list[i].key);
		printf("#  pci parameter string %s %s\n", only ? "lacks" : "has", list[i].key);
		EXPECT((strstr(pci_param, key) == NULL) == only);
	}
	return 0;
}

/* The registered parameter string: "key=allowed " for every devarg, in order. */
static int
t_param_string(const void *arg)
{
	static const char param[] = VNAPI_DEVARGS_PARAM_STRING;
	const struct vnapi_devarg_info *list;
	char want[1024] = "";
	unsigned int n, i;

	list = vnapi_devargs_list(&n);
	EXPECT_EQ(n, 17);
	for (i = 0; i < n; i++) {
		strcat(want, list[i].key);
		strcat(want, "=");
		strcat(want, list[i].allowed);
		strcat(want, " ");
	}
	if (strcmp(param, want) != 0) {
		printf("#   param string '%s'\n#   expected     '%s'\n", param, want);
		EXPECT(0);
	}
	EXPECT(strstr(param, "in_order=<0|1>") != NULL);
	return 0;
}

/*
 * the user guide's devargs table (rows "| `key` | values | default | meaning |"
 * after the "## Devargs" heading): the same keys in the same order, and
 * the values column is the list's allowed text ("\|" for "|").
 */
static int
t_readme_table(const void *arg)
{
	const struct vnapi_devarg_info *list;
	char line[2048];
	unsigned int n, row = 0;
	bool in_section = false;
	FILE *f = NULL;

	list = vnapi_devargs_list(&n);
	CHECK(readme_path != NULL);
	f = fopen(readme_path, "r");
	CHECK(f != NULL);
	while (fgets(line, sizeof(line), f) != NULL) {
		char key[64], values[256], *out, *p;

		if (strcmp(line, "## Devargs\n") == 0) {
			in_section = true;
			continue;
		}
		if (!in_section)
			continue;
		if (line[0] == '#')
			break;
		if (strncmp(line, "| `", 3) != 0)
			continue;
		p = line + 3;
		out = key;
		while (*p != '\0' && *p != '`' && out < key + sizeof(key) - 1)
			*out++ = *p++;
		*out = '\0';
		p = strstr(p, "| ");
		CHECK(p != NULL);
		p += 2;
		out = values;
		while (*p != '\0' && out < values + sizeof(values) - 1) {
			if (p[0] == '\\' && p[1] == '|') {
				*out++ = '|';
				p += 2;
				continue;
			}
			if (p[0] == ' ' && p[1] == '|')
				break;
			*out++ = *p++;
		}
		*out = '\0';
		/* The values column is code-quoted: `<...>`. */
		if (values[0] == '`') {
			size_t len = strlen(values);

			memmove(values, values + 1, len);
			if (len >= 2 && values[len - 2] == '`')
				values[len - 2] = '\0';
		}
		if (row >= n) {
			printf("#   guide row %u '%s': the list has only %u devargs\n", row + 1, key, n);
			CHECK(0);
		}
		if (strcmp(key, list[row].key) != 0 || strcmp(values, list[row].allowed) != 0) {
			printf("#   guide row %u: '%s' '%s', the list: '%s' '%s'\n", row + 1, key,
			       values, list[row].key, list[row].allowed);
			CHECK(0);
		}
		row++;
	}
	CHECK_EQ(row, n);
	fclose(f);
	return 0;
teardown:
	if (f != NULL)
		fclose(f);
	return 1;
}

static const struct unit_case tests[] = {
	{ "defaults", t_defaults, NULL },
	{ "every key accepts its allowed values", t_accepted, NULL },
	{ "every bad value: -EINVAL, one line naming key and allowed values", t_rejected, NULL },
	{ "path longer than sun_path", t_path_too_long, NULL },
	{ "unknown key and missing path", t_unknown_and_missing, NULL },
	{ "registered parameter string made from the list", t_param_string, NULL },
	{ "PCI: vhost-user keys refused by name, parameter string from the list", t_pci, NULL },
	{ "user guide devargs table matches the list", t_readme_table, NULL },
};

int
main(int argc, char **argv)
{
	if (argc < 2) {
		printf("Bail out! usage: %s doc/user-guide.md [-l] [PATTERN...]\n", argv[0]);
		return 2;
	}
	readme_path = argv[1];
	/* The runner parses what follows the guide's path. */
	argv[1] = argv[0];
	return unit_tap_main(argc - 1, argv + 1, tests, RTE_DIM(tests), NULL);
}

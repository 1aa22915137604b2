/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * Runs every file of the corpus directories given as arguments through the
 * target's LLVMFuzzerTestOneInput(), one TAP line per file: the fuzz corpus
 * as an ordinary unit test, with any compiler. A crash or abort fails it.
 */

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "unit_tap.h"

#define REPLAY_MAX_INPUT (1024 * 1024)
#define REPLAY_MAX_FILES 4096

static int
replay_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static uint8_t *replay_buf;

/* One case: the corpus file @p arg through the target. */
static int
replay_file(const void *arg)
{
	const char *path = arg;
	FILE *f = fopen(path, "rb");
	size_t n;

	if (f == NULL)
		return -1;
	n = fread(replay_buf, 1, REPLAY_MAX_INPUT, f);
	if (ferror(f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(replay_buf, n);
	return 0;
}

int
main(int argc, char **argv)
{
	static char *files[REPLAY_MAX_FILES];
	static struct unit_case cases[REPLAY_MAX_FILES];
	unsigned int nfiles = 0, i;
	int ret, a;

	for (a = 1; a < argc; a++) {
		DIR *d = opendir(argv[a]);
		struct dirent *e;

		if (d == NULL) {
			printf("Bail out! cannot open corpus directory %s\n", argv[a]);
			return 1;
		}
		while ((e = readdir(d)) != NULL && nfiles < REPLAY_MAX_FILES) {
			size_t len;

			if (e->d_name[0] == '.')
				continue;
			len = strlen(argv[a]) + strlen(e->d_name) + 2;
			files[nfiles] = malloc(len);
			if (files[nfiles] == NULL)
				break;
			snprintf(files[nfiles], len, "%s/%s", argv[a], e->d_name);
			nfiles++;
		}
		closedir(d);
	}
	if (nfiles == 0) {
		printf("Bail out! empty corpus\n");
		return 1;
	}
	qsort(files, nfiles, sizeof(files[0]), replay_cmp);

	replay_buf = malloc(REPLAY_MAX_INPUT);
	if (replay_buf == NULL)
		return 1;
	for (i = 0; i < nfiles; i++)
		cases[i] = (struct unit_case){ files[i], replay_file, files[i] };
	/* The arguments are corpus directories, not name patterns. */
	ret = unit_tap_main(1, argv, cases, nfiles, NULL);
	for (i = 0; i < nfiles; i++)
		free(files[i]);
	free(replay_buf);
	return ret;
}

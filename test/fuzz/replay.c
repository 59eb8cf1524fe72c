/* SPDX-License-Identifier: BSD-3-Clause */
/* A main for the fuzz harnesses where libFuzzer is not there (gcc builds): run every file of
 * the directories (or files) given once through LLVMFuzzerTestOneInput. A harness aborts on
 * what it finds, so reaching the end means every input passed. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data;
	long len;

	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0) {
		perror(path);
		return -1;
	}
	rewind(f);
	data = malloc(len ? len : 1);
	if (data == NULL || fread(data, 1, len, f) != (size_t)len) {
		perror(path);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(data, len);
	free(data);
	return 0;
}

int main(int argc, char **argv)
{
	int runs = 0;

	LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		struct stat st;
		struct dirent **names;
		int n;

		if (stat(argv[i], &st) != 0 || !S_ISDIR(st.st_mode)) {
			if (run_file(argv[i]) != 0)
				return 1;
			runs++;
			continue;
		}
		n = scandir(argv[i], &names, NULL, alphasort);
		for (int k = 0; k < n; k++) {
			char path[4096];

			if (names[k]->d_name[0] != '.') {
				snprintf(path, sizeof(path), "%s/%s", argv[i], names[k]->d_name);
				if (run_file(path) != 0)
					return 1;
				runs++;
			}
			free(names[k]);
		}
		free(n >= 0 ? names : NULL);
	}
	printf("%d inputs replayed, none failed\n", runs);
	return runs == 0;
}

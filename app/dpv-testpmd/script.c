/* SPDX-License-Identifier: BSD-3-Clause */
/* Command files (--cmdline-file, load) and help. A file runs line by line through the same
 * parser as the prompt; a line that does not parse prints the help of its command, and the
 * first line that fails ends the file. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmdline.h>
#include <cmdline_parse_string.h>

#include "testpmd.h"

int tp_error(const char *fmt, ...)
{
	va_list ap;

	printf("error: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	tp.failed++;
	return -EINVAL;
}

/* Does @word name the first token of @inst ("show", "quit#exit" ...)? */
static bool first_word_is(const cmdline_parse_inst_t *inst, const char *word, size_t len)
{
	const cmdline_parse_token_string_t *t = (const void *)inst->tokens[0];
	const char *s;

	if (t == NULL || t->hdr.ops != &cmdline_token_string_ops || t->string_data.str == NULL)
		return false;
	for (s = t->string_data.str; s != NULL; s = strchr(s, '#')) {
		if (*s == '#')
			s++;
		if (strncmp(s, word, len) == 0 && (s[len] == '\0' || s[len] == '#'))
			return true;
	}
	return false;
}

void help_all(void)
{
	printf("commands (help <command> for one group; <tab> completes at the prompt):\n");
	for (int i = 0; tp_ctx[i] != NULL; i++)
		printf("  %s\n", tp_ctx[i]->help_str);
}

void help_for(const char *line)
{
	size_t off = strspn(line, " \t"), len = strcspn(line + off, " \t\r\n");
	int n = 0;

	for (int i = 0; tp_ctx[i] != NULL; i++)
		if (first_word_is(tp_ctx[i], line + off, len)) {
			printf("  %s\n", tp_ctx[i]->help_str);
			n++;
		}
	if (n == 0) {
		printf("unknown command '%.*s'; the commands are:\n", (int)len, line + off);
		help_all();
	}
}

/* Parse and run one line; 0 if it parsed and its command did not fail. */
static int run_line(struct cmdline *cl, const char *line)
{
	int failed = tp.failed, rc;
	char buf[4100];

	/* cmdline_parse takes a line only with its end of line */
	snprintf(buf, sizeof(buf), "%s\n", line);
	fflush(stdout);
	rc = cmdline_parse(cl, buf);
	fflush(stdout);
	if (rc < 0) {   /* on success cmdline_parse returns the length it took */
		printf("error: cannot run '%s' (%s); usage:\n", line,
		       rc == CMDLINE_PARSE_AMBIGUOUS ? "ambiguous" :
		       rc == CMDLINE_PARSE_NOMATCH ? "no such command" : "bad arguments");
		help_for(line);
		tp.failed++;
		return -EINVAL;
	}
	return tp.failed != failed ? -EINVAL : 0;
}

int command_run(const char *line)
{
	struct cmdline *cl = cmdline_new(tp_ctx, "", -1, STDOUT_FILENO);
	int rc;

	if (cl == NULL)
		return tp_error("cannot make a command parser (no memory)");
	rc = run_line(cl, line);
	cmdline_free(cl);
	return rc;
}

int script_run(const char *path)
{
	static int depth;
	FILE *f = fopen(path, "r");
	struct cmdline *cl;
	char line[4096];
	int rc = 0, no = 0;

	if (f == NULL)
		return tp_error("cannot open command file %s: %s", path, strerror(errno));
	if (depth >= 8) {
		fclose(f);
		return tp_error("%s: files load one another too deeply (8 levels)", path);
	}
	cl = cmdline_new(tp_ctx, "", -1, STDOUT_FILENO);
	if (cl == NULL) {
		fclose(f);
		return tp_error("cannot make a command parser (no memory)");
	}
	depth++;
	while (rc == 0 && !tp.quit && fgets(line, sizeof(line), f) != NULL) {
		size_t len = strcspn(line, "\r\n"), off = strspn(line, " \t");

		no++;
		line[len] = '\0';
		if (line[off] == '\0' || line[off] == '#')
			continue;
		printf("%s> %s\n", path, line + off);
		rc = run_line(cl, line + off);
		if (rc != 0)
			printf("%s:%d: stopped at this line\n", path, no);
	}
	depth--;
	cmdline_free(cl);
	fclose(f);
	return rc;
}

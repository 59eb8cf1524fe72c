/* SPDX-License-Identifier: BSD-3-Clause */
/* help [<command>], load <file>, quit. */
#include <string.h>

#include <cmdline.h>
#include <cmdline_parse_string.h>

#include "testpmd.h"

struct misc_res {
	cmdline_fixed_string_t word, arg;
};

static void help_parsed(void *res, struct cmdline *cl, void *data)
{
	struct misc_res *r = res;

	if (data != NULL)
		help_for(r->arg);
	else
		help_all();
}

static cmdline_parse_token_string_t t_help = TOKEN_STRING_INITIALIZER(struct misc_res, word, "help");
static cmdline_parse_token_string_t t_arg = TOKEN_STRING_INITIALIZER(struct misc_res, arg, NULL);

static cmdline_parse_inst_t cmd_help = {
	.f = help_parsed,
	.help_str = "help: every command",
	.tokens = { (void *)&t_help, NULL },
};

static cmdline_parse_inst_t cmd_help_word = {
	.f = help_parsed,
	.data = (void *)1,
	.help_str = "help <command>: the commands that start with that word",
	.tokens = { (void *)&t_help, (void *)&t_arg, NULL },
};

static void load_parsed(void *res, struct cmdline *cl, void *data)
{
	struct misc_res *r = res;

	script_run(r->arg);
	if (tp.quit && tp.cl != NULL)      /* the file said quit: so does the prompt */
		cmdline_quit(tp.cl);
}

static cmdline_parse_token_string_t t_load = TOKEN_STRING_INITIALIZER(struct misc_res, word, "load");

static cmdline_parse_inst_t cmd_load = {
	.f = load_parsed,
	.help_str = "load <file>: run the commands of a file (stops at the first that fails)",
	.tokens = { (void *)&t_load, (void *)&t_arg, NULL },
};

static void quit_parsed(void *res, struct cmdline *cl, void *data)
{
	tp.quit = true;
	if (cl != NULL && cl == tp.cl)
		cmdline_quit(cl);
}

static cmdline_parse_token_string_t t_quit = TOKEN_STRING_INITIALIZER(struct misc_res, word, "quit#exit");

static cmdline_parse_inst_t cmd_quit = {
	.f = quit_parsed,
	.help_str = "quit: stop forwarding, destroy everything, close the ports, exit",
	.tokens = { (void *)&t_quit, NULL },
};

cmdline_parse_inst_t *cmds_misc[] = { &cmd_help, &cmd_help_word, &cmd_load, &cmd_quit, NULL };

#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""check_packages.py SOURCE_ROOT [--list] [--packages "P1 P2 ..."]

Every command the project's scripts run must come from a package that ./dpv.sh installs
(`./dpv.sh packages`), from one those bring (their Depends and Pre-Depends, as apt installs
them), or from Debian's essential set (Essential: yes or Priority: required: what debootstrap's
minbase has). The scripts: every shell script of the tree (*.sh, a #!/bin/sh or bash file:
dpv.sh, .ci/run, compat/dpv-run.in, test/vm/init, the buildtools), the Python ones'
subprocess calls (and their interpreters), the command strings the C tests hand to system().
A command is a word in command position, one after a wrapper (exec, timeout, env, perf stat,
ip netns exec, sh -c '...', ...), a `command -v` probe, an item of a `for` list whose variable
is then run, the code the project's helpers evaluate (check WHAT CODE), or an argument that a
function of the scripts runs (one ib_write_bw ...: found from the function's body). Not
external: shell builtins and keywords, the scripts' functions, and what is not a plain name
(the project's own programs are run by path: "$run", ./x, $BUILD/...).

Each command is looked up where Debian's packages put them (/usr/sbin:/usr/bin:/sbin:/bin) and
mapped to the package owning it (dpkg -S; under merged /usr both /bin and /usr/bin tried, then
the symlink's target; for an alternative such as awk, any installed choice). Fails naming the
command, where the scripts run it, and the package to add. A command not installed fails when
every package of the list is installed (none has it), and skips the test (77) when some are not
(DPV_VM=0 leaves QEMU out): which one has it cannot be told. --list prints every command with its
package; --packages replaces dpv.sh's list (to see the check fail with one taken out).
"""
import ast
import os
import re
import shutil
import subprocess
import sys

# Builtins and reserved words of bash and dash (and the `[`/`test` forms): never external.
BUILTINS = set("""
. : [ [[ ]] alias bg bind break builtin caller cd command compgen complete continue declare
dirs disown echo enable eval exec exit export false fc fg getopts hash help history jobs kill
let local logout mapfile popd printf pushd pwd read readarray readonly return set shift shopt
source suspend test times trap true type typeset ulimit umask unalias unset wait
if then else elif fi case esac for select while until do done in function time ! { } coproc
""".split())
# Reserved words after which a command follows.
CMD_FOLLOWS = {'if', 'then', 'else', 'elif', 'do', 'while', 'until', '!', '{', 'time'}
# Wrappers: name -> (options that take an argument, positional arguments before the command).
WRAPPERS = {
    'exec': ({'-a'}, 0), 'command': (set(), 0), 'builtin': (set(), 0), 'nohup': (set(), 0),
    'setsid': (set(), 0), 'time': (set(), 0), 'nice': ({'-n', '--adjustment'}, 0),
    'stdbuf': ({'-i', '-o', '-e'}, 0), 'sudo': ({'-u', '-g'}, 0), 'env': ({'-u'}, 0),
    'timeout': ({'-s', '--signal', '-k', '--kill-after'}, 1), 'taskset': (set(), 1),
    'chrt': (set(), 1), 'ionice': ({'-c', '-n'}, 0), 'flock': ({'-w', '-E'}, 1),
    'xargs': ({'-n', '-I', '-P', '-s', '-L', '-a', '-d', '-E'}, 0), 'chroot': (set(), 1),
    'unshare': ({'--propagation', '--setgroups', '--map-user', '--map-group', '-S', '-G',
                 '-w', '--wd', '-R', '--root'}, 0), 'nsenter': ({'-t', '--target', '-S', '-G'}, 0),
    'valgrind': (set(), 0), 'strace': ({'-e', '-o', '-p', '-s'}, 0),
    'watch': ({'-n'}, 0), 'setpriv': (set(), 0), 'runuser': ({'-u', '-g'}, 0),
}
# The project's shell helpers that run or evaluate what they are given:
# name -> ('eval', N): argument N is shell code; ('cmd', N): argument N is a command (and,
# for run_pair, the word after "--"); ('cmds', N): arguments N... are commands.
HELPERS = {
    'check': ('eval', 2),        # test/lib/check.sh: check WHAT CODE
    'at_exit': ('eval', 1),      # test/compat/lib.sh: CODE run at exit
    'require': ('cmds', 2),      # test/compat/lib.sh: require PACKAGE TOOL...
    'side': ('cmd', 4),          # test/compat/lib.sh: side CONF EAL N CMD...
    'run_pair': ('cmd', 2),      # test/compat/lib.sh: run_pair NAME SERVER... -- CLIENT...
}
# Functions of the scripts that run an argument as a command (one ib_write_bw ...): name ->
# argument numbers, found by cmd_args() before the scripts are read for commands.
CMD_ARGS = {}
SHELLS = {'sh', 'bash', 'dash'}
# where Debian's packages put commands (not /usr/local, ~/.local, a pyenv shim...)
PACKAGED_PATH = '/usr/sbin:/usr/bin:/sbin:/bin'
NAME = re.compile(r'^[A-Za-z0-9_][A-Za-z0-9_.+-]*$')
ASSIGN = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=')


class Word:
    """A shell word: its text as written and, when it has no expansion, its value."""

    def __init__(self, raw, value, line):
        self.raw, self.value, self.line = raw, value, line

    def __repr__(self):
        return f'Word({self.raw!r})'


class Lexer:
    """Splits shell code into words and operators; command substitutions, backquotes and
    process substitutions are parsed as shell code of their own (their commands are
    reported to @found). Heredoc bodies are skipped."""

    def __init__(self, text, line, found, where):
        self.s, self.i, self.line, self.found, self.where = text, 0, line, found, where
        self.heredocs = []

    def error(self, msg):
        raise SyntaxError(f'{self.where}:{self.line}: {msg}')

    def sub(self, end_char):
        """Parse nested code up to its closing @end_char ')' (balanced) and report it."""
        start, line, depth = self.i, self.line, 0
        quote = None
        while self.i < len(self.s):
            c = self.s[self.i]
            if c == '\n':
                self.line += 1
            if quote:
                if c == '\\' and quote == '"':
                    self.i += 1
                elif c == quote:
                    quote = None
            elif c == '\\':
                self.i += 1
            elif c in '\'"':
                quote = c
            elif c == '#' and (self.i == start or self.s[self.i - 1] in ' \t\n;(|&'):
                while self.i < len(self.s) and self.s[self.i] != '\n':
                    self.i += 1
                continue
            elif c == '(':
                depth += 1
            elif c == ')':
                if depth == 0:
                    body = self.s[start:self.i]
                    self.i += 1
                    parse(body, self.found, self.where, line)
                    return body
                depth -= 1
            self.i += 1
        self.error('unterminated $(')

    def skip_balanced(self, open_c, close_c):
        depth = 1
        while self.i < len(self.s) and depth:
            c = self.s[self.i]
            if c == '\n':
                self.line += 1
            if c == '\\':
                self.i += 1
            elif c == open_c:
                depth += 1
            elif c == close_c:
                depth -= 1
            self.i += 1

    def dollar(self, parts):
        """At '$': an expansion. Appends its text to parts; returns False (not literal)."""
        s = self.s
        if s.startswith('$((', self.i):
            start = self.i + 3
            self.i += 3
            self.skip_balanced('(', ')')
            self.skip_balanced('(', ')')
            # a command substitution inside the arithmetic: $(( $(od ...) % 16 ))
            for m in re.finditer(r'\$\(([^()]+)\)', s[start:self.i]):
                parse(m.group(1), self.found, self.where, self.line)
        elif s.startswith('$(', self.i):
            self.i += 2
            self.sub(')')
        elif s.startswith('${', self.i):
            self.i += 2
            self.skip_balanced('{', '}')
        elif s.startswith("$'", self.i):
            self.i += 2
            while self.i < len(s) and s[self.i] != "'":
                self.i += 2 if s[self.i] == '\\' else 1
            self.i += 1
        else:
            self.i += 1
            while self.i < len(s) and (s[self.i].isalnum() or s[self.i] == '_'):
                self.i += 1
            if self.i < len(s) and s[self.i] in '@*#?$!-0123456789' and s[self.i - 1] == '$':
                self.i += 1
        parts.append(None)

    def word(self):
        s, start, line = self.s, self.i, self.line
        parts = []
        while self.i < len(s):
            c = s[self.i]
            if c in ' \t\n;&|<>()':
                if c == '(' and self.i > start and s[self.i - 1] == '=':   # arr=(...)
                    self.i += 1
                    self.skip_balanced('(', ')')
                    parts.append(None)
                    continue
                break
            if c == '\\':
                if s.startswith('\\\n', self.i):
                    self.line += 1
                    self.i += 2
                    continue
                parts.append(s[self.i + 1:self.i + 2])
                self.i += 2
            elif c == "'":
                j = s.find("'", self.i + 1)
                if j < 0:
                    self.error('unterminated quote')
                parts.append(s[self.i + 1:j])
                self.line += s.count('\n', self.i, j)
                self.i = j + 1
            elif c == '"':
                self.i += 1
                while self.i < len(s) and s[self.i] != '"':
                    if s[self.i] == '\\':
                        parts.append(s[self.i + 1:self.i + 2])
                        self.i += 2
                    elif s[self.i] == '$' and s[self.i + 1:self.i + 2] not in ("'", '"', ''):
                        self.dollar(parts)
                    elif s[self.i] == '`':
                        self.backquote()
                        parts.append(None)
                    else:
                        if s[self.i] == '\n':
                            self.line += 1
                        parts.append(s[self.i])
                        self.i += 1
                if self.i >= len(s):
                    self.error('unterminated "')
                self.i += 1
            elif c == '$' and (s[self.i + 1:self.i + 2].isalnum() or
                               s[self.i + 1:self.i + 2] in tuple('_{(\'@*#?$!-')):
                self.dollar(parts)
            elif c == '`':
                self.backquote()
                parts.append(None)
            else:
                parts.append(c)
                self.i += 1
        raw = s[start:self.i]
        value = None if None in parts else ''.join(parts)
        return Word(raw, value, line)

    def backquote(self):
        j = self.i + 1
        while j < len(self.s) and self.s[j] != '`':
            j += 2 if self.s[j] == '\\' else 1
        parse(self.s[self.i + 1:j].replace('\\`', '`'), self.found, self.where, self.line)
        self.line += self.s.count('\n', self.i, j)
        self.i = j + 1

    def tokens(self):
        s = self.s
        ops = ['<<<', '<<-', '&&', '||', ';;&', ';;', ';&', '|&', '<<', '>>', '&>>', '&>',
               '>&', '<&', '<>', '>|', ';', '&', '|', '(', ')', '<', '>', '\n']
        while self.i < len(s):
            c = s[self.i]
            if c in ' \t':
                self.i += 1
                continue
            if s.startswith('\\\n', self.i):
                self.i += 2
                self.line += 1
                continue
            if c == '#':
                while self.i < len(s) and s[self.i] != '\n':
                    self.i += 1
                continue
            if c in '<>' and s.startswith('(', self.i + 1):      # <(...) >(...)
                self.i += 2
                self.sub(')')
                yield ('word', Word('<(...)', None, self.line))
                continue
            op = next((o for o in ops if s.startswith(o, self.i)), None)
            if op:
                self.i += len(op)
                if op == '\n':
                    yield ('op', '\n')
                    self.line += 1
                    self.read_heredocs()
                    continue
                if op in ('<<', '<<-'):
                    while self.i < len(s) and s[self.i] in ' \t':
                        self.i += 1
                    d = self.word()
                    self.heredocs.append((d.raw.replace("'", '').replace('"', ''),
                                          op == '<<-'))
                    continue
                yield ('redir' if op[0] in '<>&' and op not in ('&&', '&') or op in
                       ('&>', '&>>') else 'op', op)
                continue
            w = self.word()
            # an IO number: 2>..., 1>&2
            if w.value is not None and w.value.isdigit() and self.i < len(s) and \
                    s[self.i] in '<>':
                continue
            yield ('word', w)

    def read_heredocs(self):
        for delim, strip in self.heredocs:
            while self.i < len(self.s):
                j = self.s.find('\n', self.i)
                j = len(self.s) if j < 0 else j
                text = self.s[self.i:j]
                self.i = j + 1
                self.line += 1
                if (text.lstrip('\t') if strip else text) == delim:
                    break
        self.heredocs = []


def simple_commands(tokens):
    """Group tokens into simple commands: lists of Words (redirections' targets dropped),
    each with the keyword context. Yields (words, after) where after is the operator or
    keyword before it."""
    cur, after, skip_next = [], '\n', False
    for kind, v in tokens:
        if kind == 'redir':
            skip_next = True
            continue
        if kind == 'word':
            if skip_next:
                skip_next = False
                continue
            cur.append(v)
            continue
        if cur:
            yield cur, after, v
        cur, after = [], v
    if cur:
        yield cur, after, None


class Found:
    def __init__(self):
        self.uses = []           # (name, where, line)
        self.functions = set()
        self.loop_vars = {}      # variable -> [(item, where, line)]
        self.var_cmds = []       # (variable, where, line): $var run as a command

    def add(self, name, where, line):
        self.uses.append((name, where, line))


def code(w):
    """The shell code a word carries: its value, or for a double-quoted word with expansions
    its text between the quotes (the expansions then read as the variables they are)."""
    if w.value is not None:
        return w.value
    raw = w.raw
    if len(raw) >= 2 and raw[0] == raw[-1] == '"':
        return re.sub(r'\\([$`"\\])', r'\1', raw[1:-1])
    return None


def command_word(words, found, where, k=0):
    """words[k:] start a command (after assignments); report it and what it runs."""
    while k < len(words) and words[k].value is not None and ASSIGN.match(words[k].value):
        k += 1
    if k >= len(words):
        return
    w = words[k]
    if w.value is None:
        m = re.match(r'^"?\$\{?([A-Za-z_][A-Za-z0-9_]*|[1-9])\}?"?$', w.raw)
        if m:
            found.var_cmds.append(((where, m.group(1)), where, w.line))
        # "$run" CMD ... (dpv-run, the compat tests' first argument) runs CMD
        if m and m.group(1) == 'run':
            command_word(words, found, where, k + 1)
        return
    name = w.value
    if name in BUILTINS and name not in ('command', 'exec', 'time', 'eval', 'trap'):
        return
    if name == 'eval':
        for x in words[k + 1:]:
            if code(x) is not None:
                parse(code(x), found, where, x.line)
        return
    if name == 'trap':
        if k + 1 < len(words) and words[k + 1].value is not None and \
                words[k + 1].value not in ('-', '-p', '-l'):
            parse(words[k + 1].value, found, where, words[k + 1].line)
        return
    if name == 'command' and k + 1 < len(words) and words[k + 1].value in ('-v', '-V'):
        for x in words[k + 2:]:          # a probe: the script looks for it
            if x.value is not None and NAME.match(x.value):
                found.add(x.value, where, x.line)
            else:
                command_word([x], found, where)   # command -v $t: a loop's items
        return
    if '/' not in name:
        if not NAME.match(name):
            return
        found.add(name, where, w.line)
    elif name.startswith(('/bin/', '/sbin/', '/usr/bin/', '/usr/sbin/')):
        found.add(name, where, w.line)
    else:
        return                            # the project's own programs, by path
    base = os.path.basename(name)
    args = words[k + 1:]
    if base in SHELLS:
        for i, x in enumerate(args):
            if x.value == '-c' and i + 1 < len(args) and code(args[i + 1]) is not None:
                parse(code(args[i + 1]), found, where, args[i + 1].line)
        return
    if base == 'ip':
        vals = [x.value for x in args]
        for i in range(len(vals) - 2):
            if vals[i] == 'netns' and vals[i + 1] == 'exec':
                command_word(args, found, where, i + 3)
                return
        return
    if base == 'perf':                    # perf stat|record [options] COMMAND
        sub = [x for x in args[1:]]
        i = 0
        while i < len(sub) and sub[i].value is not None and sub[i].value.startswith('-'):
            i += 2 if sub[i].value in ('-x', '-e', '-o', '-p', '-r', '-C', '-t', '-G', '-I',
                                       '-F', '-c', '--call-graph') else 1
        command_word(sub, found, where, i)
        return
    if base == 'find':
        for i, x in enumerate(args):
            if x.value in ('-exec', '-execdir', '-ok'):
                command_word(args, found, where, i + 1)
        return
    for n in sorted(CMD_ARGS.get(name, ())):
        command_word(args, found, where, n - 1)
    if name in HELPERS:
        how, n = HELPERS[name]
        if how == 'eval' and len(args) >= n and code(args[n - 1]) is not None:
            parse(code(args[n - 1]), found, where, args[n - 1].line)
        elif how == 'cmds':
            for x in args[n - 1:]:
                command_word([x], found, where)
        elif how == 'cmd':
            command_word(args, found, where, n - 1)
            for i, x in enumerate(args):
                if x.value == '--':
                    command_word(args, found, where, i + 1)
        return
    if base in WRAPPERS:
        with_arg, positional = WRAPPERS[base]
        i = 0
        while i < len(args):
            v = args[i].value
            if v is None:
                break
            if v == '--':
                i += 1
                break
            if v.startswith('-'):
                i += 2 if v in with_arg else 1
                continue
            if base == 'env' and ASSIGN.match(v):
                i += 1
                continue
            break
        i += positional
        if base == 'command' or base == 'exec' or i < len(args):
            command_word(args, found, where, i)


def parse(text, found, where, line=1):
    """Report every command of shell code @text."""
    lx = Lexer(text, line, found, where)
    toks = list(lx.tokens())
    # for VAR in ITEMS; case WORD in PATTERNS) ...: words that are not commands
    out, i, case_depth, in_pattern = [], 0, 0, False
    cmd_pos = True
    while i < len(toks):
        kind, v = toks[i]
        if kind == 'word' and cmd_pos and v.value in ('for', 'select'):
            var = toks[i + 1][1] if i + 1 < len(toks) else None
            j = i + 2
            items = []
            if j < len(toks) and toks[j][0] == 'word' and toks[j][1].value == 'in':
                j += 1
                while j < len(toks) and toks[j][0] == 'word':
                    items.append(toks[j][1])
                    j += 1
            if isinstance(var, Word) and var.value:
                found.loop_vars.setdefault((where, var.value), []).extend(
                    (x.value, where, x.line) for x in items if x.value is not None)
            i = j
            continue
        if kind == 'word' and cmd_pos and v.value == 'case':
            case_depth += 1
            i += 3                        # case WORD in
            in_pattern = True
            continue
        if in_pattern:
            if kind == 'word' and v.value == 'esac':
                case_depth -= 1
                in_pattern = False
                out.append(('op', ';'))
            elif kind == 'op' and v == ')':
                in_pattern = False
                out.append(('op', ';'))
                cmd_pos = True
            i += 1
            continue
        if kind == 'op' and v in (';;', ';&', ';;&') and case_depth:
            in_pattern = True
            out.append(('op', ';'))
            i += 1
            continue
        if kind == 'word' and cmd_pos and v.value == '[[':
            while i < len(toks) and not (toks[i][0] == 'word' and toks[i][1].value == ']]'):
                i += 1
            i += 1
            cmd_pos = False
            continue
        if kind == 'op' and v == '(' and i + 1 < len(toks) and toks[i + 1] == ('op', '('):
            depth = 0                     # (( arithmetic ))
            while i < len(toks):
                if toks[i] == ('op', '('):
                    depth += 1
                elif toks[i] == ('op', ')'):
                    depth -= 1
                    if depth == 0:
                        break
                i += 1
            i += 1
            continue
        # name() { ...: a function
        if kind == 'word' and cmd_pos and i + 2 < len(toks) and toks[i + 1] == ('op', '(') \
                and toks[i + 2] == ('op', ')'):
            found.functions.add(v.value)
            i += 3
            continue
        if kind == 'word' and cmd_pos and v.value == 'function':
            found.functions.add(toks[i + 1][1].value)
            i += 2
            if i + 1 < len(toks) and toks[i] == ('op', '(') and toks[i + 1] == ('op', ')'):
                i += 2
            continue
        if kind == 'word' and cmd_pos and v.value in CMD_FOLLOWS:
            out.append(('op', ';'))
            i += 1
            continue
        if kind == 'word' and v.value in ('fi', 'done', 'esac', '}') and cmd_pos:
            out.append(('op', ';'))
            i += 1
            continue
        out.append(toks[i])
        if kind == 'op':
            cmd_pos = True
        elif kind == 'word':
            cmd_pos = bool(v.value is not None and ASSIGN.match(v.value) and cmd_pos)
        i += 1
    for words, _after, _end in simple_commands(out):
        command_word(words, found, where)


def function_bodies(text):
    """name() { BODY }: (name, BODY) of each function (braces counted, quotes skipped)."""
    for m in re.finditer(r'^\s*(?:function\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*\(\)\s*\{', text,
                         re.M):
        i, depth, quote = m.end(), 1, None
        while i < len(text) and depth:
            c = text[i]
            if quote:
                if c == '\\' and quote == '"':
                    i += 1
                elif c == quote:
                    quote = None
            elif c == '\\':
                i += 1
            elif c in '\'"':
                quote = c
            elif c == '{':
                depth += 1
            elif c == '}':
                depth -= 1
            i += 1
        yield m.group(1), text[m.end():i - 1]


def cmd_args(text, where):
    """Which arguments the functions of @text run as commands: "$N" run, or a variable set
    from it (tool=$1) run, directly or through a wrapper or helper."""
    for name, body in function_bodies(text):
        scratch = Found()
        try:
            parse(body, scratch, where)
        except SyntaxError:
            continue
        source = {v: int(n) for v, n in
                  re.findall(r'\b([A-Za-z_][A-Za-z0-9_]*)="?\$\{?([1-9])\}?"?[\s;]', body)}
        for (_, var), _, _ in scratch.var_cmds:
            n = int(var) if var.isdigit() else source.get(var)
            if n:
                CMD_ARGS.setdefault(name, set()).add(n)


def python_commands(path, rel, found):
    tree = ast.parse(open(path).read(), path)
    assigned = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, (ast.List, ast.Tuple)):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    assigned.setdefault(t.id, []).append(node.value)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        f = node.func
        mod = f.value.id if isinstance(f.value, ast.Name) else None
        if not ((mod == 'subprocess' and f.attr in ('run', 'call', 'check_call',
                                                    'check_output', 'Popen')) or
                (mod == 'os' and f.attr in ('system', 'popen'))) or not node.args:
            continue
        a = node.args[0]
        lists = [a] if isinstance(a, (ast.List, ast.Tuple)) else \
            assigned.get(a.id, []) if isinstance(a, ast.Name) else []
        if isinstance(a, ast.Constant) and isinstance(a.value, str):
            parse(a.value, found, rel, node.lineno)
        for lst in lists:
            if lst.elts and isinstance(lst.elts[0], ast.Constant) and \
                    isinstance(lst.elts[0].value, str):
                found.add(lst.elts[0].value, rel, node.lineno)


def c_commands(path, rel, found):
    """A C test's system()/popen() strings: the format strings built for them."""
    text = open(path).read()
    if not re.search(r'\b(system|popen)\s*\(', text):
        return
    for m in re.finditer(r'\b(?:snprintf\s*\([^,]+,[^,]+,|system\s*\(|popen\s*\()\s*"([^"]*)"',
                         text):
        first = m.group(1).split(' ')[0]
        if ' ' in m.group(1) and NAME.match(first) and '%' not in first:
            found.add(first, rel, text.count('\n', 0, m.start()) + 1)


def scripts(root):
    files = []
    for d, dirs, names in os.walk(root):
        # not .git, nor a build directory (meson-private), nor a scratch copy
        dirs[:] = sorted(x for x in dirs if (not x.startswith('.') or x == '.ci') and
                         not os.path.exists(os.path.join(d, x, 'meson-private')))
        files += [os.path.relpath(os.path.join(d, n), root) for n in sorted(names)]
    sh, py, c = [], [], []
    for f in files:
        p = os.path.join(root, f)
        if not os.path.isfile(p):
            continue
        if f.endswith('.py'):
            py.append(f)
            continue
        if f.endswith('.c') and f.startswith(('test/', 'examples/', 'app/')):
            c.append(f)
            continue
        with open(p, 'rb') as fh:
            head = fh.readline()
        if f.endswith('.sh') or re.match(rb'#!\s*(/usr)?/bin/(env\s+)?(ba|da)?sh\b', head):
            sh.append(f)
    return sh, py, c


OWNERS = {}


def dpkg_owners(paths):
    """Fill OWNERS: path -> the packages that own it (dpkg -S, one call for all)."""
    paths = sorted({p for p in paths if p not in OWNERS})
    if not paths:
        return
    out = subprocess.run(['dpkg-query', '-S'] + paths, capture_output=True, text=True).stdout
    for p in paths:
        OWNERS[p] = set()
    for line in out.splitlines():
        if line.startswith('diversion by'):
            continue
        names, _, p = line.partition(': ')
        if p.strip() in OWNERS:
            OWNERS[p.strip()] |= {n.strip().split(':')[0] for n in names.split(',')}


def candidates(cmd):
    """The file @cmd runs and its other names: (path, [paths dpkg may know it by])."""
    path = cmd if cmd.startswith('/') else shutil.which(cmd, path=PACKAGED_PATH)
    if path is None or not os.path.exists(path):
        return None, []
    cands = [path]
    for a, b in (('/usr/bin/', '/bin/'), ('/usr/sbin/', '/sbin/')):   # merged /usr
        for x, y in ((a, b), (b, a)):
            if path.startswith(x):
                cands.append(y + path[len(x):])
    cands.append(os.path.realpath(path))
    return path, cands


def owners(cmd):
    """The packages that own the file @cmd runs (for an alternative such as awk, those of
    every installed choice)."""
    path, cands = candidates(cmd)
    if path is None:
        return None, set()
    dpkg_owners(cands)
    for p in cands:
        if OWNERS[p]:
            return path, OWNERS[p]
    link = os.readlink(path) if os.path.islink(path) else ''
    if link.startswith('/etc/alternatives/'):
        r = subprocess.run(['update-alternatives', '--list', os.path.basename(link)],
                           capture_output=True, text=True)
        got = set()
        for p in r.stdout.split():
            got |= owners(p)[1]
        return path, got
    return path, set()


def first_alternatives(field):
    for group in field.split(','):
        alt = group.split('|')[0].strip()
        if alt:
            yield re.split(r'[\s(:]', alt, 1)[0]


def closure(packages):
    """The installed packages that installing @packages brings (Depends and Pre-Depends, the
    first of alternatives, a virtual package's installed providers): name -> the listed
    package it comes with."""
    out = subprocess.run(['dpkg-query', '-W', '-f',
                          '${Package}\t${Depends}\t${Pre-Depends}\t${Provides}\n'],
                         capture_output=True, text=True, check=True).stdout
    deps, providers = {}, {}
    for line in out.splitlines():
        p, d, pre, prov = (line.split('\t') + ['', '', ''])[:4]
        deps[p] = list(first_alternatives(d)) + list(first_alternatives(pre))
        for v in first_alternatives(prov.replace('|', ',')):
            providers.setdefault(v, []).append(p)
    via = {}
    todo = [(p, p) for p in sorted(packages)]
    while todo:
        p, root = todo.pop()
        for q in [p] if p in deps else providers.get(p, []):
            if q in via:
                continue
            via[q] = root
            todo += [(d, root) for d in deps.get(q, [])]
    return via


def essential():
    out = subprocess.run(['dpkg-query', '-W', '-f', '${Package} ${Essential} ${Priority}\n'],
                         capture_output=True, text=True, check=True).stdout
    return {p for p, e, pr in (line.split(' ', 2) for line in out.splitlines())
            if e == 'yes' or pr == 'required'}


def own_programs(root):
    """The programs the project builds (executable('name', ...) in its meson.build files): a
    loop over their names is not a command from a package."""
    names = set()
    for top, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(('.', 'build'))]
        if 'meson.build' in files:
            text = open(os.path.join(top, 'meson.build')).read()
            names.update(re.findall(r"executable\(\s*'([^']+)'", text))
    return names


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__)
        return 2
    root = os.path.abspath(args[0])
    listing = '--list' in args
    if '--packages' in args:
        packages = set(args[args.index('--packages') + 1].split())
    else:
        packages = set(subprocess.run([os.path.join(root, 'dpv.sh'), 'packages'],
                                      capture_output=True, text=True, check=True).stdout.split())
    if not packages:
        print('FAIL: ./dpv.sh packages listed nothing')
        return 1
    found = Found()
    sh, py, c = scripts(root)
    for f in sh:
        cmd_args(open(os.path.join(root, f)).read(), f)
    for f in sh:
        text = open(os.path.join(root, f)).read()
        first = text.split('\n', 1)[0]
        m = re.match(r'#!\s*(\S+)(?:\s+(\S+))?', first)
        if m:
            found.add(m.group(2) if m.group(1).endswith('/env') else m.group(1), f, 1)
        parse(text, found, f)
    for f in py:
        text = open(os.path.join(root, f)).read()
        m = re.match(r'#!\s*(\S+)(?:\s+(\S+))?', text)
        if m:
            found.add(m.group(2) if m.group(1).endswith('/env') else m.group(1), f, 1)
        if 'subprocess' in text or 'os.system' in text:
            python_commands(os.path.join(root, f), f, found)
    for f in c:
        c_commands(os.path.join(root, f), f, found)
    # a for list's items, where its variable is run as a command
    for var, where, line in found.var_cmds:
        for item, w, ln in found.loop_vars.get(var, []):
            if NAME.match(item):
                found.add(item, w, ln)
    missing = [h for h in HELPERS if h not in found.functions]
    own = own_programs(root)
    ess = essential()
    brought = closure(packages)
    uses = {}
    for name, where, line in found.uses:
        if name in found.functions or name in BUILTINS or name in own:
            continue
        uses.setdefault(name, []).append(f'{where}:{line}')
    dpkg_owners(p for name in uses for p in candidates(name)[1])
    installed = subprocess.run(['dpkg-query', '-W', '-f', '${Package} ${db:Status-Abbrev}\n'],
                               capture_output=True, text=True).stdout.split('\n')
    installed = {line.split()[0] for line in installed if line.endswith('ii ')}
    absent = sorted(p for p in packages if p not in installed)
    unknown = []
    bad = 0
    for h in missing:
        print(f'FAIL: helper {h} (HELPERS in {os.path.basename(__file__)}) is defined nowhere')
        bad += 1
    for name in sorted(uses):
        path, pkgs = owners(name)
        ok = pkgs & (set(brought) | ess)
        where = ', '.join(uses[name][:3]) + (' ...' if len(uses[name]) > 3 else '')
        if listing:
            dep = sorted(pkgs & set(brought))
            how = 'listed' if pkgs & packages else 'essential' if pkgs & ess else \
                f'via {brought[dep[0]]}' if dep else 'MISSING'
            print(f'{name:24} {",".join(sorted(pkgs)) or "-":20} {how:18} {where}')
        if path is None and absent:
            unknown.append(name)          # perhaps in a listed package not installed here
        elif path is None:
            print(f'FAIL: {name} ({where}) is not installed, though every package of '
                  f'./dpv.sh is: which package has it? (add it to PACKAGES)')
            bad += 1
        elif not ok:
            print(f'FAIL: {name} ({where}) comes from {", ".join(sorted(pkgs)) or "no package"},'
                  f' which ./dpv.sh does not install (add it to PACKAGES)')
            bad += 1
    print(f'{len(uses)} commands in {len(sh)} shell, {len(py)} Python and {len(c)} C files; '
          f'{bad} not from dpv.sh\'s {len(packages)} packages or the essential set')
    if bad:
        return 1
    if unknown:                           # e.g. DPV_VM=0: no QEMU installed
        print(f'SKIP: {", ".join(unknown)} not installed, nor are {", ".join(absent)} of '
              f'./dpv.sh\'s packages: cannot tell which has them')
        return 77
    return 0


if __name__ == '__main__':
    sys.exit(main())

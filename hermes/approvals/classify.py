"""Classify a shell command as safe, dangerous (ask first) or forbidden (never run).

The command is parsed (``shellparse``), then every simple command in it is
looked at the way bash would run it: variables assigned earlier are
substituted, ``cd`` moves the directory relative paths start from, wrappers
(``sudo``, ``env``, ``command``, ``exec``, ``nice``, ``timeout`` ...) are peeled
off, and command strings (``bash -c``, ``eval``, ``su -c``, heredocs and
decoded base64 piped into a shell, ``xargs``, ``find -exec``) are classified
in turn. Each finding names the rule (``rules.py``) and its reason; the worst
level wins.
"""

from __future__ import annotations

import base64
import binascii
import os
import posixpath
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from hermes.approvals import rules as R
from hermes.approvals.paths import PathJudge, has_variable, reads_process_secrets
from hermes.approvals.rules import DANGEROUS, LEVELS, SAFE, Level, Use
from hermes.approvals.shellparse import Script, Simple, parse
from hermes.approvals.userrules import UserRules

MAX_DEPTH = 6
MAX_COMMAND = 100_000  # characters; longer lines are not worth parsing
MAX_SCRIPT = 64_000  # bytes of a script file read to check what it runs (bashlex: ~4 ms/KB)
MAX_BRACES = 64  # words one brace expansion may give before it counts as unknown
MAX_CODE_STRINGS = 200  # quoted strings of inline code checked as commands

_FORK_BOMBS = (
    re.compile(r"(\S+)\s*\(\s*\)\s*\{[^}]*?\1\s*\|\s*&?\s*\1\s*&"),
    re.compile(r"fork\s*\)?\s*while\s*\(?\s*fork", re.IGNORECASE),
    re.compile(r"while\s*\(?\s*(true|1)\s*\)?\s*:?\s*[^\n]{0,40}\bfork\s*\(", re.IGNORECASE),
)
_INLINE_DANGER = re.compile(
    r"rmtree|os\.remove|os\.unlink|\.unlink\(|os\.system|subprocess|popen|\bexec[lv]p?e?\(|"
    r"child_process|execSync|spawn|\bsystem\s*\(|`[^`]+`|rmSync|fs\.rm|File\.delete|FileUtils\.rm|"
    r"\bunlink\b|\brmdir\b|\beval\s*\(|\bexec\s*\(|__import__|\bgetattr\s*\(|importlib|"
    r"(?<!\.)\bcompile\s*\(|\bFunction\s*\(|ctypes|shutil\.move|"
    r"os\.(rename|replace|kill|killpg|chmod|chown|truncate|removedirs|fork|exec|spawn)",
    re.IGNORECASE,
)
# Inline code that writes or moves files: its quoted paths are checked against sensitive places.
_CODE_WRITES = re.compile(r"write|['\"][wax]b?\+?['\"]|rename|replace\(|symlink|chmod|copy|move")
# Program names made of these only; anything else (globs, braces, commas, spaces) is
# only known once the shell has expanded it.
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_./+@%:~^-]+")
_NAME_EXEMPT = frozenset(["[", "[[", "]]", "{", "}", "!", "(", ")"])
_GLOB_CHARS = re.compile(r"[*?[]")
# Where installed programs live: a program run by such a path is judged by its name.
_SYSTEM_PREFIXES = ("/usr/", "/bin/", "/sbin/", "/lib", "/opt/", "/snap/", "/nix/", "/etc/")
# sed: the s command (whose flags may hold e or w) and y; then commands e, w, W.
_SED_S = re.compile(
    r"(?<![A-Za-z])([sy])([^\w\s\\])((?:\\.|(?!\2).)*)\2((?:\\.|(?!\2).)*)\2([a-zA-Z0-9]*)(.*)"
)
_SED_CMD = re.compile(
    r"(?:^|[;\n{}!])\s*(?:(?:\d+|\$|/(?:\\.|[^/])*/)(?:\s*,\s*(?:\d+|\$|/(?:\\.|[^/])*/))?)?"
    r"\s*!?\s*([ewW])(?:\s+([^;\n}]*)|(?=[;\n}]|$))"
)
_PYTHON = re.compile(r"python(\d(\.\d+)?)?")
_QUOTED = re.compile(r"""(['"])((?:(?!\1).){2,}?)\1""")
_WRITE_REDIRECTS = {">", ">|", "&>", ">>", "&>>", "<>", ">&"}
_OVERWRITE_REDIRECTS = {">", ">|", "&>", "<>", ">&"}
_PASS_THROUGH = frozenset(["cat", "tee", "head", "tail", "tr", "sed", "dd", "pv", "buffer", "sort"])
# Programs that take paths without reading them: naming a secret file is no read
# (the ones that change or delete it are caught as changes to HERMES_HOME).
_NAMES_ONLY = frozenset(
    [
        "echo",
        "printf",
        "ls",
        "stat",
        "test",
        "[",
        "basename",
        "dirname",
        "realpath",
        "readlink",
        "rm",
        "rmdir",
        "unlink",
        "chmod",
        "chown",
        "chgrp",
        "chattr",
        "touch",
        "truncate",
        "shred",
        "ln",
        "mkdir",
    ]
)
# Hermes' own protections: a user's ``allow`` glob in approvals.rules (even ``allow *``)
# is about the user's commands and does not let the model read Hermes' keys or
# rewrite its settings and rules; only an answer to the approval does.
_NOT_ALLOWABLE = frozenset(
    [
        "write-hermes-home",
        "hermes-home",
        "read-hermes-secret",
        "read-hermes-home",
        "read-process-secrets",
        "write-dotenv",
    ]
)


@dataclass(frozen=True)
class Finding:
    rule: str
    level: Level
    reason: str
    command: str  # the simple command (as written, top level) it was found in


@dataclass(frozen=True)
class Verdict:
    """What the classifier concluded about one command."""

    level: Level
    findings: tuple[Finding, ...] = ()

    @property
    def reason(self) -> str:
        """The reasons of the worst findings, for the user."""
        worst = [f for f in self.findings if f.level == self.level]
        seen: list[str] = []
        for f in worst:
            if f.reason not in seen:
                seen.append(f.reason)
        return "; ".join(seen)

    @property
    def rules(self) -> frozenset[str]:
        return frozenset(f.rule for f in self.findings if f.level == self.level)

    def to_dict(self) -> dict:
        return {"level": self.level, "reason": self.reason, "rules": sorted(self.rules)}


def classify(
    command: str,
    *,
    workspace: Path,
    home: Path,
    user_rules: UserRules | None = None,
    hermes_home: Path | None = None,
) -> Verdict:
    """The verdict on ``command`` as run by run_bash in ``workspace`` (``home`` is the
    user's home folder, ``hermes_home`` Hermes' data folder)."""
    checker = _Checker(PathJudge(workspace, home, hermes_home), user_rules or UserRules())
    checker.line = command
    if len(command) > MAX_COMMAND:
        checker.add("unparsed", "")
    else:
        checker.script(command, depth=0, state=_State(cwd=checker.paths.workspace))
    return checker.verdict()


@dataclass
class _State:
    """What earlier commands of the same line changed: the directory and variables."""

    cwd: str | None
    variables: dict[str, str] = field(default_factory=dict)
    positional: list[str] | None = None  # after `set -- a b c`
    oldcwd: str | None = None  # where `cd -` goes
    aliases: dict[str, str] = field(default_factory=dict)


class _Checker:
    def __init__(self, paths: PathJudge, user_rules: UserRules):
        self.paths = paths
        self.user_rules = user_rules
        self.findings: list[Finding] = []
        self.source = ""  # the top-level simple command being looked at
        self.line = ""
        self.written: set[str] = set()  # paths this command line writes
        self.seen: list[tuple[str, tuple[str, ...]]] = []  # (program, words) already checked

    # -- results -----------------------------------------------------------------

    def add(
        self, rule_id: str, where: str, *, level: Level | None = None, reason: str = ""
    ) -> None:
        if level is None:
            level, reason = R.STRUCTURAL[rule_id]
        self.findings.append(Finding(rule_id, level, reason, self.source or where))

    def verdict(self) -> Verdict:
        findings: list[Finding] = []
        for f in self.findings:
            if (
                f.level == DANGEROUS
                and f.rule not in _NOT_ALLOWABLE
                and self.user_rules.allows(f.command)
            ):
                continue
            if f not in findings:
                findings.append(f)
        level = max((f.level for f in findings), key=LEVELS.__getitem__, default=SAFE)
        return Verdict(level, tuple(findings))

    # -- scripts and pipelines ------------------------------------------------------

    def script(self, text: str, *, depth: int, state: _State) -> None:
        if depth > MAX_DEPTH:
            self.add("too-deep", text)
            return
        for pattern in _FORK_BOMBS:
            if pattern.search(text):
                self.add("fork-bomb", text)
        if self.user_rules.denies(text):
            self.add("user-deny", text)
        parsed = parse(text)
        if not parsed.parsed:
            self.add("unparsed", text)
        self._fork_bombs(parsed)
        for pipeline in parsed.pipelines:
            self.pipeline(pipeline, depth=depth, state=state)

    def _fork_bombs(self, parsed: Script) -> None:
        """A function that starts itself twice, or in the background: ``:(){ :|:& };:``."""
        for function in parsed.functions:
            calls = sum(
                1
                for pipeline in function.body.pipelines
                for cmd in pipeline
                if cmd.words and cmd.words[0] == function.name
            )
            if calls >= 2 or (calls and function.body.background):
                self.add("fork-bomb", function.name)

    def pipeline(self, stages: tuple[Simple, ...], *, depth: int, state: _State) -> None:
        data: str | None = None  # what flows into the next stage, when known
        kind: str | None = None  # "download" or "encoded" when that is where it came from
        for index, cmd in enumerate(stages):
            words = self._expand(cmd, state)
            if depth == 0:
                self.source = " ".join(words) or " ".join(r.op + r.target for r in cmd.redirects)
                if self.user_rules.denies(self.source):
                    self.add("user-deny", self.source)
            for redirect in cmd.redirects:
                self._redirect(redirect.op, redirect.target, state)
            if not words:
                if len(stages) == 1:
                    self._assign(cmd.assignments, state)
                continue
            stdin = cmd.stdin if cmd.stdin is not None else (data if index else None)
            stdin_kind = None if cmd.stdin is not None else kind
            piped = index > 0 and cmd.stdin is None
            self._environment(cmd.assignments, depth, state)
            program, args = self.command(
                list(words),
                depth=depth,
                state=state,
                stdin=stdin,
                stdin_kind=stdin_kind,
                piped=piped,
            )
            if any("{" in w for w in words):
                # Brace expansion: {rm,-rf,~} runs `rm -rf ~`. Checked as expanded too
                # (quoting is gone by now, so the literal reading is kept as well).
                expanded = _brace_words(list(words))
                if expanded is None:
                    self.add("dynamic-command", " ".join(words))
                elif expanded != list(words):
                    self.command(
                        expanded,
                        depth=depth,
                        state=state,
                        stdin=stdin,
                        stdin_kind=stdin_kind,
                        piped=piped,
                    )
            self.seen.append((program, words))
            data, kind = _flow(program, args, data if index else None, kind, cmd.stdin)

    # -- one command --------------------------------------------------------------

    def command(
        self,
        words: list[str],
        *,
        depth: int,
        state: _State,
        stdin: str | None = None,
        stdin_kind: str | None = None,
        piped: bool = False,
    ) -> tuple[str, list[str]]:
        """Check one simple command; returns the program and arguments that really run."""
        words = self._unwrap(words, depth, state)
        if words and words[0] in state.aliases:
            words = state.aliases.pop(words[0]).split() + words[1:]  # once: no alias loops
        if not words:
            return "", []
        name = words[0]
        if has_variable(name) or "$(" in name or name.startswith("<("):
            self.add("dynamic-command", name)
            return "", []
        if not _PLAIN_NAME.fullmatch(name) and name not in _NAME_EXEMPT:
            # A glob (/bin/r?), braces, a comma left by IFS splitting: the shell decides.
            self.add("dynamic-command", name)
            if _GLOB_CHARS.search(name):
                self._glob_program(name, words[1:], depth, state, stdin)
            return "", []
        program = posixpath.basename(name) if "/" in name else name
        args = words[1:]
        if "/" in name:
            self._program_file(name, depth, state)
        if _PYTHON.fullmatch(program) and len(args) >= 2 and args[0] == "-m":
            # python -m pip install x is pip install x.
            return self.command(args[1:], depth=depth, state=state, stdin=stdin)
        use = Use(program, tuple(args), self.paths, state.cwd, stdin)
        self._secret_reads(use)

        special = _SPECIAL.get(program)
        if special is not None:
            special(self, use, depth, state, stdin_kind, piped)
        elif program in R.SHELL_PROGRAMS or program in ("source", "."):
            self._shell(use, depth, state, stdin_kind, piped)
        elif program in R.INTERPRETERS or _PYTHON.fullmatch(program):
            self._interpreter(use, depth, stdin_kind, piped, state)
        for r in R.rules_for(program):
            if r.when(use):
                self.add(r.id, name, level=r.level, reason=r.reason)
        self._writes(use, state)
        return program, args

    def _unwrap(self, words: list[str], depth: int, state: _State) -> list[str]:
        """Peel ``sudo``/``env``/``nice``/... off, checking the wrappers themselves."""
        for _ in range(16):
            if not words:
                return words
            program = posixpath.basename(words[0])
            if program not in R.WRAPPERS:
                return words
            if program == "command" and any(a in ("-v", "-V") for a in words[1:2]):
                return []  # `command -v rm` only asks where rm is
            for r in R.rules_for(program):
                if r.when(Use(program, tuple(words[1:]), self.paths, state.cwd, None)):
                    self.add(r.id, words[0], level=r.level, reason=r.reason)
            if program == "watch":
                self.script(
                    " ".join(_skip_options(words[1:], R.WRAPPERS["watch"])),
                    depth=depth + 1,
                    state=state,
                )
                return []
            if program == "env":
                words = self._env(words[1:], depth, state)
                continue
            rest = _skip_options(words[1:], R.WRAPPERS[program])
            words = rest[R.WRAPPER_VALUE_OPERANDS.get(program, 0) :]
        self.add("too-deep", " ".join(words))
        return []

    def _env(self, args: list[str], depth: int, state: _State) -> list[str]:
        rest = []
        i = 0
        while i < len(args):
            a = args[i]
            if a in ("-S", "--split-string") and i + 1 < len(args):
                self.script(" ".join(args[i + 1 :]), depth=depth + 1, state=state)
                return []
            if a in R.WRAPPERS["env"] and i + 1 < len(args):
                i += 2
                continue
            if a.startswith("-") or "=" in a and not rest:
                if "=" in a and not a.startswith("-"):
                    self._environment((a,), depth, state)
                i += 1
                continue
            rest = args[i:]
            break
        return rest

    # -- program-specific checks ---------------------------------------------------

    def _shell(self, use: Use, depth: int, state: _State, stdin_kind, piped: bool) -> None:
        args = list(use.args)
        if use.program == "busybox":
            return
        if use.program in ("source", "."):
            operands, command_string, from_stdin = (
                args[1:] if args[:1] == ["--"] else args,
                False,
                False,
            )
        else:
            operands, command_string, from_stdin = _shell_arguments(args)
        if command_string:
            # bash -c [options] [--] 'command' [name [args]]: the first operand is the script.
            self.add("eval", use.program)
            if operands:
                self.script(operands[0], depth=depth + 1, state=_State(cwd=state.cwd))
            return
        for a in operands:
            if a.startswith("<(") or a in ("/dev/stdin", "-", "/proc/self/fd/0"):
                downloaded = any(re.search(rf"\b{d}\b", a) for d in R.DOWNLOADERS)
                self.add("download-exec" if downloaded else "eval", use.program)
                if a.startswith("<(") or not piped:
                    return
        if operands and operands[0] not in ("-", "/dev/stdin") and not from_stdin:
            # bash FILE, source FILE: what runs is the file's text.
            same_shell = use.program in ("source", ".")
            self._script_file(use.program, operands[0], depth, state, shell=True, same=same_shell)
            return
        self._stdin_script(use, depth, state, stdin_kind, piped)

    def _stdin_script(self, use: Use, depth: int, state: _State, stdin_kind, piped: bool) -> None:
        """A shell reading its script from stdin: check what it will read."""
        if stdin_kind == "download":
            self.add("download-exec", use.program)
        elif stdin_kind == "encoded":
            self.add("encoded-script", use.program)
        if use.stdin is not None:
            self.script(use.stdin, depth=depth + 1, state=_State(cwd=state.cwd))
        elif piped and stdin_kind is None:
            self.add("pipe-to-shell", use.program)

    def _interpreter(
        self, use: Use, depth: int, stdin_kind, piped: bool, state: _State | None = None
    ) -> None:
        args = list(use.args)
        code = None
        python = bool(_PYTHON.fullmatch(use.program))
        for i, a in enumerate(args):
            if a in ("-c", "-e", "-E", "--eval", "-r", "-p") or re.fullmatch(r"-[a-zA-Z]*e", a):
                if python and a != "-c" and not re.fullmatch(r"-[a-zA-Z]*c", a):
                    continue
                code = args[i + 1] if i + 1 < len(args) else ""
                break
            if python and re.fullmatch(r"-[a-zA-Z]*c", a):
                code = args[i + 1] if i + 1 < len(args) else ""
                break
        operands = _interpreter_operands(args)
        if code is None and operands and operands[0] != "-":
            # python FILE, node FILE: what runs is the file's text.
            self._script_file(use.program, operands[0], depth, state, shell=False)
            return
        if code is None and not operands:
            if stdin_kind == "download":
                self.add("download-exec", use.program)
            elif stdin_kind == "encoded":
                self.add("encoded-script", use.program)
            code = use.stdin
            if code is None and piped:
                self.add("pipe-to-shell", use.program)
        if not code:
            return
        self._code(use.program, code, depth)

    def _code(self, program: str, code: str, depth: int, rule: str = "inline-code") -> None:
        """Program text (python -c, a .py file, an awk program): what it may start or write."""
        if self.paths.mentioned_in(code):
            self.add("hermes-home", program, level=DANGEROUS, reason=_HERMES_HOME_REASON)
        if _INLINE_DANGER.search(code) or rule != "inline-code":
            if rule == "inline-code":
                self.add("inline-code", program)
            # Quoted strings in the code are often shell commands: os.system('rm -rf /').
            for n, match in enumerate(_QUOTED.finditer(code)):
                if n >= MAX_CODE_STRINGS or depth >= MAX_DEPTH:
                    break
                if " " in match.group(2):
                    self.script(
                        match.group(2), depth=depth + 1, state=_State(cwd=self.paths.workspace)
                    )
        if _CODE_WRITES.search(code):
            for match in _QUOTED.finditer(code):
                text = match.group(2)
                if text[:1] in "/~" and " " not in text:
                    place = self.paths.place(text, self.paths.workspace)
                    if self.paths.is_sensitive(place) or self.paths.is_block_device(place):
                        self.add("write-sensitive", text)
        for pattern in _FORK_BOMBS:
            if pattern.search(code):
                self.add("fork-bomb", program)

    # -- files that are run -----------------------------------------------------------

    def _script_file(
        self, program: str, word: str, depth: int, state, *, shell: bool, same: bool = False
    ) -> None:
        """``bash FILE`` / ``python FILE``: check the file's text, or ask when it can't be."""
        cwd = state.cwd if state is not None else self.paths.workspace
        place = self.paths.place(word, cwd)
        if not place.known or place.path in self.written or self._mentioned(word):
            self.add("script-file", word)
            return
        text = _read_script(place.path)
        if text is None:
            self.add("script-file", word)
            return
        if depth >= MAX_DEPTH:
            self.add("too-deep", word)
        elif shell:
            inner = state if same and state is not None else _State(cwd=cwd)
            self.script(text, depth=depth + 1, state=inner)
        else:
            self._code(program, text, depth)

    def _program_file(self, name: str, depth: int, state: _State) -> None:
        """``./run.sh``, ``bin/tool``: a file in the workspace (or anywhere not installed)."""
        place = self.paths.place(name, state.cwd)
        if not place.known:
            self.add("program-file", name)
            return
        real = os.path.realpath(place.path)
        if real.startswith(_SYSTEM_PREFIXES):
            return  # an installed program: judged by its name like any other
        if place.path in self.written or self._mentioned(name):
            self.add("script-file", name)
            return
        text = _read_script(real)
        if text is None:
            if os.path.exists(real):
                self.add("program-file", name)
            elif len(self.seen) or not _is_known_program(posixpath.basename(name)):
                # Missing now: only something earlier in the line can create it.
                self.add("script-file", name)
            return
        interpreter = _shebang(text)
        if interpreter is None or interpreter in R.SHELL_PROGRAMS:
            if depth < MAX_DEPTH:
                self.script(text, depth=depth + 1, state=_State(cwd=state.cwd))
        elif interpreter in R.INTERPRETERS or _PYTHON.fullmatch(interpreter):
            self._code(interpreter, text, depth)
        else:
            self.add("program-file", name)

    def _mentioned(self, word: str) -> bool:
        """The file's name appears in an earlier command of the line that may write it."""
        base = posixpath.basename(word.rstrip("/"))
        if not base:
            return False
        for program, words in self.seen:
            if program in R.READ_ONLY or program in ("chmod", "cd", "pushd", "ls", "test"):
                continue
            if any(base in w for w in words[1:]):
                return True
        return False

    def _glob_program(self, name: str, args: list[str], depth: int, state: _State, stdin) -> None:
        """``/bin/r? -rf ~``: check it as each known program the glob matches."""
        regex = R._glob_regex(posixpath.basename(name))
        if regex is None or depth >= MAX_DEPTH:
            return
        matches = [p for p in _KNOWN_PROGRAMS if regex.fullmatch(p)]
        if len(matches) > 24:
            return
        for program in matches:
            self.command([program, *args], depth=depth + 1, state=state, stdin=stdin)

    def _environment(self, assignments, depth: int, state: _State) -> None:
        """``LD_PRELOAD=x cmd``, ``PAGER='...' git log``: variables that run code."""
        for assignment in assignments:
            name, _, value = assignment.partition("=")
            if name in R.ENV_CODE or (
                name == "NODE_OPTIONS"
                and re.search(
                    r"(^|\s)(-r|--require|--import|--loader|--experimental-loader)", value
                )
            ):
                self.add("env-command", assignment)
            elif name in R.ENV_COMMANDS and value:
                self.script(value, depth=depth + 1, state=_State(cwd=state.cwd))

    def _eval(self, use: Use, depth: int, state: _State, stdin_kind, piped: bool) -> None:
        self.add("eval", use.program)
        self.script(" ".join(use.args), depth=depth + 1, state=state)

    def _su(self, use: Use, depth: int, state: _State, stdin_kind, piped: bool) -> None:
        args = list(use.args)
        for i, a in enumerate(args):
            if a in ("-c", "--command") and i + 1 < len(args):
                self.script(args[i + 1], depth=depth + 1, state=_State(cwd=state.cwd))

    def _xargs(self, use: Use, depth: int, state: _State, stdin_kind, piped: bool) -> None:
        takes_value = {
            "-I",
            "-i",
            "-n",
            "-P",
            "-d",
            "-L",
            "-l",
            "-a",
            "-E",
            "-e",
            "-s",
            "--max-args",
            "--max-procs",
            "--delimiter",
            "--arg-file",
            "--replace",
        }
        inner = _skip_options(list(use.args), takes_value)
        self._run_each(inner or ["echo"], depth, state)

    def _find(self, use: Use, depth: int, state: _State, stdin_kind, piped: bool) -> None:
        args = list(use.args)
        for i, a in enumerate(args):
            if a in ("-exec", "-execdir", "-ok", "-okdir"):
                inner = []
                for b in args[i + 1 :]:
                    if b in (";", "+", "\\;"):
                        break
                    inner.append(b)
                self._run_each(inner, depth, state)

    def _run_each(self, inner: list[str], depth: int, state: _State) -> None:
        """xargs and find -exec: harmless for read-only programs, otherwise ask."""
        program = posixpath.basename(inner[0]) if inner else ""
        if program not in R.READ_ONLY:
            self.add("xargs-exec", program)
        if inner and depth < MAX_DEPTH:
            self.command(inner, depth=depth + 1, state=state)

    def _cd(self, use: Use, depth: int, state: _State, stdin_kind, piped: bool) -> None:
        operands = use.operands()
        previous = state.cwd
        if not operands:
            state.cwd = self.paths.home
        elif operands[0] == "-":
            state.cwd = state.oldcwd  # unknown unless an earlier cd set it
        else:
            place = self.paths.place(operands[0], state.cwd)
            state.cwd = place.path
            if not place.known and operands[0].startswith("/proc/"):
                # `cd /proc/$PPID && cat environ`: the pid is unknown, the folder's kind is not.
                state.cwd = posixpath.normpath(operands[0])
        state.oldcwd = previous

    def _set(self, use: Use, depth: int, state: _State, stdin_kind, piped: bool) -> None:
        """``set -- a b c`` (or ``set a b``) sets the positional parameters "$@"."""
        args = list(use.args)
        if "--" in args:
            state.positional = args[args.index("--") + 1 :]
        elif args and not args[0].startswith(("-", "+")):
            state.positional = args

    def _awk(self, use: Use, depth: int, state: _State, stdin_kind, piped: bool) -> None:
        """awk's system("...") and print | "..." strings are shell commands."""
        program = R.awk_program(use)
        if program and R.awk_runs(use):
            self._code(use.program, program, depth, rule="awk-exec")

    def _sed(self, use: Use, depth: int, state: _State, stdin_kind, piped: bool) -> None:
        """sed's e command and s///e flag run shell commands; w writes files."""
        if "--sandbox" in use.args:
            return
        scripts, files, i, args = [], [], 0, list(use.args)
        while i < len(args):
            a = args[i]
            if a in ("-e", "--expression") and i + 1 < len(args):
                scripts.append(args[i + 1])
                i += 1
            elif a.startswith("--expression="):
                scripts.append(a.split("=", 1)[1])
            elif a in ("-f", "--file") and i + 1 < len(args):
                files.append(args[i + 1])
                i += 1
            elif a.startswith("--file="):
                files.append(a.split("=", 1)[1])
            elif a in ("-l", "--line-length"):
                i += 1
            i += 1
        if not scripts and not files:
            operands = use.operands()
            scripts = operands[:1]
        for name in files:
            text = _read_script(self.paths.place(name, state.cwd).path or "")
            if text is None:
                self.add("sed-exec", name)
            else:
                scripts.append(text)
        for text in scripts:
            commands, writes = _sed_actions(text)
            for command in commands:
                self.add("sed-exec", use.program)
                if command.strip():
                    self.script(command, depth=depth + 1, state=_State(cwd=state.cwd))
            for target in writes:
                self._write_to(target, state)

    def _git(self, use: Use, depth: int, state: _State, stdin_kind, piped: bool) -> None:
        """Commands git is told to run: ``!`` aliases, pager/ssh settings, ``bisect run``."""
        for key, value in R.git_settings(use):
            if value.startswith("!"):
                self.script(value[1:], depth=depth + 1, state=_State(cwd=state.cwd))
            elif value and R._GIT_COMMAND_KEYS.match(key):
                self.script(value, depth=depth + 1, state=_State(cwd=state.cwd))
        args = list(use.args)
        for i, a in enumerate(args):
            if a in ("-x", "--exec", "--upload-pack", "--receive-pack", "--extcmd") and i + 1 < len(
                args
            ):
                self.script(args[i + 1], depth=depth + 1, state=_State(cwd=state.cwd))
            elif re.match(r"--(exec|upload-pack|receive-pack|extcmd)=", a):
                self.script(a.split("=", 1)[1], depth=depth + 1, state=_State(cwd=state.cwd))
        words = R._subcommand_words(use)
        if words[:2] in (["bisect", "run"], ["submodule", "foreach"]):
            rest = args[args.index(words[1]) + 1 :]
            if rest:
                self.script(" ".join(rest), depth=depth + 1, state=_State(cwd=state.cwd))

    def _tar(self, use: Use, depth: int, state: _State, stdin_kind, piped: bool) -> None:
        """Commands tar runs, and where an extraction writes."""
        args = list(use.args)
        extract, directory = False, None
        for i, a in enumerate(args):
            value = args[i + 1] if i + 1 < len(args) else ""
            if a.startswith(("--checkpoint-action=exec=", "--to-command=", "--rsh-command=")):
                self.script(
                    a.split("=", 2)[-1] if a.startswith("--checkpoint") else a.split("=", 1)[1],
                    depth=depth + 1,
                    state=_State(cwd=state.cwd),
                )
            elif a in ("--to-command", "--rsh-command", "-I", "--use-compress-program"):
                self.script(value, depth=depth + 1, state=_State(cwd=state.cwd))
            elif a.startswith("--use-compress-program="):
                self.script(a.split("=", 1)[1], depth=depth + 1, state=_State(cwd=state.cwd))
            elif a in ("-C", "--directory"):
                directory = value
            elif a.startswith("--directory="):
                directory = a.split("=", 1)[1]
            if (
                a in ("-x", "--extract", "--get")
                or (i == 0 and not a.startswith("-") and "x" in a)
                or re.fullmatch(r"-[a-zA-Z]*x[a-zA-Z]*", a)
            ):
                extract = True
        if extract:
            self._write_to(directory or state.cwd or ".", state)

    def _unzip(self, use: Use, depth: int, state: _State, stdin_kind, piped: bool) -> None:
        args = list(use.args)
        if "-l" in args or "-t" in args:
            return
        directory = args[args.index("-d") + 1] if "-d" in args[:-1] else None
        self._write_to(directory or state.cwd or ".", state)

    def _runner(self, use: Use, depth: int, state: _State, stdin_kind, piped: bool) -> None:
        """script -c, tmux new, screen -dm, vim -c '!...', gdb -ex 'shell ...': the commands."""
        args, program = list(use.args), use.program
        inner: list[str] = []
        if program == "script":
            for i, a in enumerate(args):
                if (a in ("-c", "--command") or re.fullmatch(r"-[a-zA-Z]*c", a)) and i + 1 < len(
                    args
                ):
                    inner.append(args[i + 1])
            operands = [
                a
                for a in _skip_options(
                    args, {"-c", "--command", "-t", "-T", "-I", "-O", "-B", "-E", "-m"}
                )
            ]
            if operands:
                self._write_to(operands[0], state)
        elif program == "tmux":
            for i, a in enumerate(args):
                if R._TOOL_RUNS["tmux"].match(a):
                    rest = _skip_options(
                        args[i + 1 :],
                        {
                            "-c",
                            "-e",
                            "-F",
                            "-n",
                            "-s",
                            "-t",
                            "-x",
                            "-y",
                            "-l",
                            "-p",
                            "-T",
                            "-f",
                            "-w",
                            "-b",
                        },
                    )
                    rest = [w for w in rest if w not in ("Enter", "C-m", "KPEnter", ";", "\\;")]
                    if rest:
                        inner.append(" ".join(rest))
                    break
        elif program == "screen":
            for i, a in enumerate(args):
                if a == "-X":
                    inner.append(" ".join(w for w in args[i + 1 :] if w != "stuff"))
                    break
            else:
                rest = _skip_options(
                    args, {"-S", "-c", "-e", "-h", "-p", "-T", "-t", "-L", "-Logfile"}
                )
                if rest:
                    self.command(rest, depth=depth + 1, state=state)
        else:  # editors and debuggers: ! and shell run shell commands
            for a in [*args, use.stdin or ""]:
                for line in a.split("\n"):
                    match = re.search(
                        r"(?:^|[:|]\s*|\+)\s*(?:silent!?\s+)?(?:!|shell\s+|call\s+system\()(.*)",
                        line,
                    )
                    if match:
                        inner.append(match.group(1).rstrip(")"))
        for text in inner:
            text = text.replace("\\n", "\n")
            if text.strip():
                self.script(text, depth=depth + 1, state=_State(cwd=state.cwd))

    def _ssh(self, use: Use, depth: int, state: _State, stdin_kind, piped: bool) -> None:
        """The remote command (checked as if here) and local ProxyCommand/LocalCommand."""
        takes_value = {
            "-b",
            "-c",
            "-D",
            "-E",
            "-e",
            "-F",
            "-I",
            "-i",
            "-J",
            "-L",
            "-l",
            "-m",
            "-O",
            "-o",
            "-p",
            "-Q",
            "-R",
            "-S",
            "-W",
            "-w",
            "-B",
        }
        args = list(use.args)
        for i, a in enumerate(args):
            option = (
                args[i + 1]
                if a == "-o" and i + 1 < len(args)
                else a[2:]
                if a.startswith("-o")
                else ""
            )
            key, _, value = option.replace(" ", "=", 1).partition("=")
            if R._SSH_LOCAL.search(key) and value:
                self.script(value, depth=depth + 1, state=_State(cwd=state.cwd))
        rest = _skip_options(args, takes_value)
        if len(rest) > 1:
            self.script(" ".join(rest[1:]), depth=depth + 1, state=_State(cwd=state.cwd))

    def _parallel(self, use: Use, depth: int, state: _State, stdin_kind, piped: bool) -> None:
        """GNU parallel: the command with each argument after :::, or each input as a command."""
        args = list(use.args)
        cut = next((i for i, a in enumerate(args) if a.startswith(":::")), len(args))
        takes_value = {
            "-j",
            "--jobs",
            "-N",
            "-n",
            "--max-args",
            "-S",
            "--sshlogin",
            "-a",
            "--arg-file",
            "-d",
            "--delimiter",
            "-I",
            "--colsep",
            "-C",
            "--tmpdir",
            "--joblog",
            "--results",
            "--timeout",
            "--delay",
            "-L",
            "--max-lines",
            "--retries",
            "--env",
            "--tag-string",
            "--workdir",
            "--wd",
        }
        inner = _skip_options(args[:cut], takes_value)
        values = [a for a in args[cut + 1 :] if not a.startswith(":::")]
        program = posixpath.basename(inner[0]) if inner else ""
        if program not in R.READ_ONLY or not inner:
            self.add("xargs-exec", use.program)
        if inner:
            for value in values[:16] or [""]:
                text = " ".join(inner)
                text = text.replace("{}", value) if "{}" in text else f"{text} {value}"
                self.script(text, depth=depth + 1, state=_State(cwd=state.cwd))
        else:
            for value in values[:16]:
                self.script(value, depth=depth + 1, state=_State(cwd=state.cwd))
            if not values and piped:
                self.add("pipe-to-shell", use.program)

    def _download(self, use: Use, depth: int, state: _State, stdin_kind, piped: bool) -> None:
        """curl -o FILE, wget -O FILE: the files a download writes."""
        args = list(use.args)
        if use.program == "curl":
            short, long = (
                "oDc",
                {
                    "--output",
                    "--dump-header",
                    "--cookie-jar",
                    "--trace",
                    "--trace-ascii",
                    "--stderr",
                    "--output-dir",
                    "--etag-save",
                    "--hsts",
                    "--alt-svc",
                },
            )
        else:
            short, long = (
                "OoaP",
                {
                    "--output-document",
                    "--output-file",
                    "--append-output",
                    "--directory-prefix",
                    "--save-cookies",
                },
            )
        for i, a in enumerate(args):
            value = args[i + 1] if i + 1 < len(args) else None
            if a.startswith("--"):
                name, eq, inline = a.partition("=")
                if name in long:
                    target = inline if eq else value
                    if target and target != "-":
                        self._write_to(target, state)
            elif a.startswith("-") and len(a) > 1:
                for j, letter in enumerate(a[1:], start=1):
                    if letter in short:
                        target = a[j + 1 :] or value
                        if target and target != "-":
                            self._write_to(target, state)
                        break

    def _make(self, use: Use, depth: int, state: _State, stdin_kind, piped: bool) -> None:
        """``make -f -`` reads its makefile from stdin: its recipe lines are shell commands."""
        args = list(use.args)
        for i, a in enumerate(args):
            if (
                a in ("-f", "--file", "--makefile")
                and i + 1 < len(args)
                and args[i + 1] in ("-", "/dev/stdin", "/proc/self/fd/0")
            ):
                if use.stdin is None:
                    self.add("pipe-to-shell", use.program)
                    return
                for line in use.stdin.split("\n"):
                    if line.startswith("\t") and line.strip():
                        self.script(
                            line.strip().lstrip("@-+"), depth=depth + 1, state=_State(cwd=state.cwd)
                        )

    def _declare(self, use: Use, depth: int, state: _State, stdin_kind, piped: bool) -> None:
        self._assign(tuple(a for a in use.args if "=" in a and not a.startswith("-")), state)

    def _alias(self, use: Use, depth: int, state: _State, stdin_kind, piped: bool) -> None:
        for a in use.args:
            if "=" in a:
                name, value = a.split("=", 1)
                state.aliases[name] = value
                self.script(value, depth=depth + 1, state=_State(cwd=state.cwd))

    # -- writes ---------------------------------------------------------------------

    def _redirect(self, op: str, target: str, state: _State) -> None:
        if op not in _WRITE_REDIRECTS:
            if op.startswith("<") and op != "<<<":
                self._secret_read(target, self.paths.place(target, state.cwd))
            return
        if (op == ">&" and target.isdigit()) or target == "-":
            return
        self._write_to(target, state, overwrite=op in _OVERWRITE_REDIRECTS)

    def _secret_reads(self, use: Use) -> None:
        """Reading another process's environment, or Hermes' keys and database."""
        if use.program in _NAMES_ONLY:
            return
        for a in use.args:
            if reads_process_secrets(a):
                self.add("read-process-secrets", a)
        for word, place in zip(use.operands(), use.places(), strict=True):
            self._secret_read(word, place)

    def _secret_read(self, word: str, place) -> None:
        if reads_process_secrets(word) or (place.known and reads_process_secrets(place.path)):
            self.add("read-process-secrets", word)
        elif self.paths.is_hermes_secret(place):
            self.add("read-hermes-secret", word)

    def _write_to(self, word: str, state: _State, *, overwrite: bool = True) -> None:
        place = self.paths.place(word, state.cwd)
        if place.known:
            self.written.add(place.path)
        if self.paths.is_block_device(place):
            self.add("block-device-write", word)
        elif self.paths.is_hermes_data(place):
            self.add("write-hermes-home", word)
        elif posixpath.basename(word.rstrip("/")) == ".env":
            self.add("write-dotenv", word)
        elif self.paths.is_sensitive(place):
            self.add("write-sensitive", word)
        elif overwrite and self.paths.is_outside_workspace(place):
            self.add("write-outside", word)

    def _writes(self, use: Use, state: _State) -> None:
        mode = R.WRITERS.get(use.program)
        operands = use.operands()
        if use.program in R.IN_PLACE_EDITORS and (
            any(re.fullmatch(r"-[a-zA-Z]*i.*|--in-place.*", a) for a in use.args)
        ):
            has_script_option = any(a in ("-e", "-f", "--expression") for a in use.args)
            targets = operands if has_script_option else operands[1:]
        elif mode == "all":
            targets = operands
        elif mode == "last":
            targets = operands[-1:] if len(operands) >= 2 else []
        else:
            return
        for word in targets:
            self._write_to(word, state)

    # -- variables ------------------------------------------------------------------

    def _assign(self, assignments, state: _State) -> None:
        for assignment in assignments:
            name, _, value = assignment.partition("=")
            name = name.rstrip("+")
            if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                state.variables[name] = self._substitute(value, state)

    def _expand(self, cmd: Simple, state: _State) -> tuple[str, ...]:
        """The words with known variables substituted (an unquoted value splits into words)."""
        if (
            not state.variables
            and state.positional is None
            and not any("${" in w for w in cmd.words)
        ):
            return cmd.words
        out: list[str] = []
        for index, word in enumerate(cmd.words):
            if "$" not in word:
                out.append(word)
                continue
            if word in ("$@", "${@}", "$*", "${*}") and state.positional is not None:
                out.extend(state.positional)
                continue
            value = self._substitute(word, state)
            if value != word and index in cmd.dynamic:
                out.extend(_split(value, state) or [""])
            else:
                out.append(value)
        return tuple(out)

    def _substitute(self, word: str, state: _State) -> str:
        """Known variables replaced; ``${X:?}``/``${X%/}`` and friends reduced to ``${X}``."""

        def value_of(name: str) -> str | None:
            if name.isdigit() and state.positional is not None:
                n = int(name)
                return state.positional[n - 1] if 0 < n <= len(state.positional) else ""
            if name in ("@", "*") and state.positional is not None:
                return " ".join(state.positional)
            return state.variables.get(name)

        def known(match: re.Match) -> str:
            name = match.group(1) or match.group(4)
            op, rest = match.group(2), match.group(3) or ""
            value = value_of(name)
            if op is None:
                return value if value is not None else match.group(0)
            if op in (":?", "?", ":-", "-", ":=", "=") and value is not None:
                return value or (rest if op in (":-", "-", ":=", "=") else value)
            if op in (":?", "?") or (op in (":-", "-", ":=", "=") and name == "HOME"):
                return "${" + name + "}"  # the same value whenever the command runs at all
            if op in ("%", "%%") and rest.strip("/*") == "" and "*" not in rest:
                return value.rstrip("/") if value is not None else "${" + name + "}"
            return match.group(0)

        return _PARAMETER.sub(known, word)


_PARAMETER = re.compile(
    r"\$\{([A-Za-z_][A-Za-z0-9_]*|[0-9@*])(?:(:?[?=+-]|%%?|##?)([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*|[0-9@*])"
)


def _split(value: str, state: _State) -> list[str]:
    """Word splitting of an unquoted expansion, on IFS when the line set it."""
    ifs = state.variables.get("IFS")
    if ifs is None:
        return value.split()
    if ifs == "":
        return [value]
    return [w for w in re.split("[" + re.escape(ifs) + "]+", value) if w]


def _brace_words(words: list[str]) -> list[str] | None:
    """Brace expansion of every word; None when it would give too many words."""
    out: list[str] = []
    for word in words:
        expanded = _braces(word)
        if expanded is None:
            return None
        out.extend(expanded)
        if len(out) > MAX_BRACES * 4:
            return None
    return out


def _braces(word: str, budget: int = MAX_BRACES) -> list[str] | None:
    """``a{b,c}d`` -> ``abd acd``; ``{1..3}``; nested. Words without a brace list stay as they are."""
    start = 0
    while True:
        open_at = word.find("{", start)
        if open_at < 0:
            return [word]
        if open_at > 0 and word[open_at - 1] == "$":
            start = open_at + 1
            continue
        depth, parts, piece_start, close_at = 0, [], open_at + 1, -1
        for i in range(open_at, len(word)):
            c = word[i]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    parts.append(word[piece_start:i])
                    close_at = i
                    break
            elif c == "," and depth == 1:
                parts.append(word[piece_start:i])
                piece_start = i + 1
        if close_at < 0:
            return [word]
        if len(parts) < 2:
            parts = _sequence(parts[0]) or []
        if len(parts) < 2:
            start = open_at + 1
            continue
        if len(parts) > budget:
            return None
        head, tail = word[:open_at], word[close_at + 1 :]
        result: list[str] = []
        for part in parts:
            more = _braces(head + part + tail, budget)
            if more is None or len(result) + len(more) > budget:
                return None
            result.extend(more)
        return [w for w in result if w != ""] or [""]


def _sequence(body: str) -> list[str] | None:
    match = re.fullmatch(r"(-?\d+)\.\.(-?\d+)|([A-Za-z])\.\.([A-Za-z])", body)
    if match is None:
        return None
    if match.group(1) is not None:
        a, b = int(match.group(1)), int(match.group(2))
        if abs(b - a) > MAX_BRACES:
            return [str(a)] * (MAX_BRACES + 1)  # too many: the caller gives up
        step = 1 if b >= a else -1
        return [str(n) for n in range(a, b + step, step)]
    a, b = ord(match.group(3)), ord(match.group(4))
    step = 1 if b >= a else -1
    return [chr(n) for n in range(a, b + step, step)]


def _shell_arguments(args: list[str]) -> tuple[list[str], bool, bool]:
    """bash's own options: (operands, whether -c was given, whether -s reads stdin)."""
    command_string = from_stdin = False
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            return args[i + 1 :], command_string, from_stdin
        if a in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            i += 2
            continue
        if a.startswith(("-", "+")) and a not in ("-", "+"):
            if not a.startswith("--"):
                command_string = command_string or "c" in a[1:]
                from_stdin = from_stdin or "s" in a[1:]
            i += 1
            continue
        return args[i:], command_string, from_stdin
    return [], command_string, from_stdin


def _interpreter_operands(args: list[str]) -> list[str]:
    """The script and its arguments: everything from the first non-option on."""
    i = 0
    while i < len(args):
        a = args[i]
        if a in R.INTERPRETER_VALUE_OPTIONS:
            i += 2
            continue
        if a == "--":
            return args[i + 1 :]
        if not a.startswith("-") or a == "-":
            return args[i:]
        i += 1
    return []


def _read_script(path: str) -> str | None:
    """The text of a regular file (bounded); None if missing, unreadable, too big or binary."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except (OSError, ValueError):
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_SCRIPT:
            return None
        chunks, size = [], 0
        while size <= MAX_SCRIPT:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if size > MAX_SCRIPT or b"\0" in data:
        return None
    return data.decode("utf-8", errors="replace")


def _shebang(text: str) -> str | None:
    """The interpreter a ``#!`` line names (``/usr/bin/env -S python3 -u`` -> python3)."""
    if not text.startswith("#!"):
        return None
    words = text[2:].split("\n", 1)[0].split()
    if not words:
        return None
    program = posixpath.basename(words[0])
    if program == "env":
        rest = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        program = posixpath.basename(rest[0]) if rest else "env"
    return program


def _sed_actions(text: str) -> tuple[list[str], list[str]]:
    """The shell commands (e) and files written (w) of a sed script."""
    commands: list[str] = []
    writes: list[str] = []
    rest = text
    # s///flags: an e flag runs the pattern space, w FILE writes it.
    for _ in range(64):
        match = _SED_S.search(rest)
        if match is None:
            break
        if match.group(1) == "s":
            flags = match.group(5)
            if "e" in flags:
                commands.append("")
            if "w" in flags:
                target = match.group(6).split("\n", 1)[0].strip()
                writes.append(target)
        rest = rest[: match.start()] + ";" + match.group(6)
    for match in _SED_CMD.finditer(rest):
        letter, argument = match.group(1), (match.group(2) or "").strip()
        if letter == "e":
            commands.append(argument)
        elif argument:
            writes.append(argument)
    return commands, writes


_HERMES_HOME_REASON = (
    "reads or changes Hermes' own settings, keys, database or approvals (HERMES_HOME)"
)


def _skip_options(args: list[str], takes_value) -> list[str]:
    """The arguments after a wrapper's own options (and their values)."""
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            return args[i + 1 :]
        if not a.startswith("-") or a == "-":
            return args[i:]
        i += 2 if a in takes_value else 1
    return []


def _flow(program: str, args: list[str], data: str | None, kind: str | None, heredoc):
    """What a pipeline stage passes on: known text, and whether it was downloaded or decoded."""
    if heredoc is not None:
        data, kind = heredoc, None
    if program in R.DOWNLOADERS:
        return None, "download"
    if program in ("echo", "printf") and all("$" not in a and "`" not in a for a in args):
        words = [a for a in args if a not in ("-n", "-e", "-E")]
        text = " ".join(words)
        if program == "printf" and words:
            text = words[0].replace("\\n", "\n").replace("%s", " ".join(words[1:]))
        return text, None
    if program == "base64" and any(a in ("-d", "--decode", "-D") for a in args):
        return _decode(data, base64.b64decode), "encoded"
    if program == "xxd" and any(a.startswith("-r") for a in args):
        return _decode(data, lambda raw: binascii.unhexlify(re.sub(rb"\s", b"", raw))), "encoded"
    if program == "rev" and not args:
        return (data[::-1] if data is not None else None), kind or "encoded"
    if program in ("gunzip", "zcat", "bunzip2", "xz", "openssl", "uudecode", "gpg"):
        return None, "encoded"
    if program == "cat" and not [a for a in args if not a.startswith("-")]:
        return data, kind
    if program in _PASS_THROUGH:
        return None, kind
    return None, None


def _decode(data: str | None, decoder) -> str | None:
    if data is None:
        return None
    try:
        return decoder(data.strip().encode()).decode("utf-8", errors="replace")
    except (binascii.Error, ValueError):
        return None


_SPECIAL = {
    "set": _Checker._set,
    "awk": _Checker._awk,
    "gawk": _Checker._awk,
    "mawk": _Checker._awk,
    "nawk": _Checker._awk,
    "sed": _Checker._sed,
    "gsed": _Checker._sed,
    "git": _Checker._git,
    "tar": _Checker._tar,
    "unzip": _Checker._unzip,
    "script": _Checker._runner,
    "tmux": _Checker._runner,
    "screen": _Checker._runner,
    "vim": _Checker._runner,
    "vi": _Checker._runner,
    "nvim": _Checker._runner,
    "ex": _Checker._runner,
    "view": _Checker._runner,
    "gdb": _Checker._runner,
    "emacs": _Checker._runner,
    "ssh": _Checker._ssh,
    "parallel": _Checker._parallel,
    "sem": _Checker._parallel,
    "curl": _Checker._download,
    "wget": _Checker._download,
    "make": _Checker._make,
    "gmake": _Checker._make,
    "eval": _Checker._eval,
    "su": _Checker._su,
    "xargs": _Checker._xargs,
    "find": _Checker._find,
    "cd": _Checker._cd,
    "pushd": _Checker._cd,
    "export": _Checker._declare,
    "declare": _Checker._declare,
    "typeset": _Checker._declare,
    "local": _Checker._declare,
    "readonly": _Checker._declare,
    "alias": _Checker._alias,
}


def _is_known_program(program: str) -> bool:
    """A program the rules know by name (``.venv/bin/python`` before the venv exists)."""
    return program in _KNOWN_SET or bool(_PYTHON.fullmatch(program))


# Programs a glob in a program name is checked as: every one the rules know.
_KNOWN_PROGRAMS = sorted(
    set(R._BY_PROGRAM)
    | R.SHELL_PROGRAMS
    | R.INTERPRETERS
    | set(R.WRAPPERS)
    | set(_SPECIAL)
    | {"source", "."}
)
_KNOWN_SET = frozenset(_KNOWN_PROGRAMS) | R.READ_ONLY | {"pytest", "pip", "pip3", "git", "make"}

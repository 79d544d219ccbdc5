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
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path

from hermes.approvals import rules as R
from hermes.approvals.paths import PathJudge, has_variable, reads_process_secrets
from hermes.approvals.rules import DANGEROUS, LEVELS, SAFE, Level, Use
from hermes.approvals.shellparse import Script, Simple, parse
from hermes.approvals.userrules import UserRules

MAX_DEPTH = 6
MAX_COMMAND = 100_000  # characters; longer lines are not worth parsing

_FORK_BOMBS = (
    re.compile(r"(\S+)\s*\(\s*\)\s*\{[^}]*?\1\s*\|\s*&?\s*\1\s*&"),
    re.compile(r"fork\s*\)?\s*while\s*\(?\s*fork", re.IGNORECASE),
    re.compile(r"while\s*\(?\s*(true|1)\s*\)?\s*:?\s*[^\n]{0,40}\bfork\s*\(", re.IGNORECASE),
)
_INLINE_DANGER = re.compile(
    r"rmtree|os\.remove|os\.unlink|\.unlink\(|os\.system|subprocess|popen|\bexec[lv]p?e?\(|"
    r"child_process|execSync|spawn|\bsystem\s*\(|`[^`]+`|rmSync|fs\.rm|File\.delete|FileUtils\.rm|"
    r"\bunlink\b|\brmdir\b",
    re.IGNORECASE,
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


class _Checker:
    def __init__(self, paths: PathJudge, user_rules: UserRules):
        self.paths = paths
        self.user_rules = user_rules
        self.findings: list[Finding] = []
        self.source = ""  # the top-level simple command being looked at

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
            program, args = self.command(
                list(words),
                depth=depth,
                state=state,
                stdin=stdin,
                stdin_kind=stdin_kind,
                piped=piped,
            )
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
        if not words:
            return "", []
        name = words[0]
        if has_variable(name) or "$(" in name or name.startswith("<("):
            self.add("dynamic-command", name)
            return "", []
        program = posixpath.basename(name) if "/" in name else name
        args = words[1:]
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
            self._interpreter(use, depth, stdin_kind, piped)
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
        for i, a in enumerate(args):
            if a == "-c" or (a.startswith("-") and not a.startswith("--") and "c" in a[1:]):
                self.add("eval", use.program)
                if i + 1 < len(args):
                    self.script(args[i + 1], depth=depth + 1, state=_State(cwd=state.cwd))
                return
        operands = [a for a in args if not a.startswith("-") or a == "-"]
        if use.program in ("source", "."):
            operands = args
        for a in operands:
            if a.startswith("<(") or a in ("/dev/stdin", "-", "/proc/self/fd/0"):
                downloaded = any(re.search(rf"\b{d}\b", a) for d in R.DOWNLOADERS)
                self.add("download-exec" if downloaded else "eval", use.program)
                if a.startswith("<(") or not piped:
                    return
        if operands and operands[0] not in ("-", "/dev/stdin"):
            return  # runs a script file
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

    def _interpreter(self, use: Use, depth: int, stdin_kind, piped: bool) -> None:
        args = list(use.args)
        code = None
        for i, a in enumerate(args):
            if a in ("-c", "-e", "-E", "--eval", "-r", "-p") or re.fullmatch(r"-[a-zA-Z]*e", a):
                code = args[i + 1] if i + 1 < len(args) else ""
                break
        operands = [a for a in args if not a.startswith("-")]
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
        if self.paths.mentioned_in(code):
            self.add("hermes-home", use.program, level=DANGEROUS, reason=_HERMES_HOME_REASON)
        if _INLINE_DANGER.search(code):
            self.add("inline-code", use.program)
            # Quoted strings in the code are often shell commands: os.system('rm -rf /').
            for match in _QUOTED.finditer(code):
                if " " in match.group(2):
                    self.script(
                        match.group(2), depth=depth + 1, state=_State(cwd=self.paths.workspace)
                    )
        for pattern in _FORK_BOMBS:
            if pattern.search(code):
                self.add("fork-bomb", use.program)

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
        if not operands:
            state.cwd = self.paths.home
            return
        place = self.paths.place(operands[0], state.cwd)
        state.cwd = place.path
        if not place.known and operands[0].startswith("/proc/"):
            # `cd /proc/$PPID && cat environ`: the pid is unknown, the folder's kind is not.
            state.cwd = posixpath.normpath(operands[0])

    def _declare(self, use: Use, depth: int, state: _State, stdin_kind, piped: bool) -> None:
        self._assign(tuple(a for a in use.args if "=" in a and not a.startswith("-")), state)

    def _alias(self, use: Use, depth: int, state: _State, stdin_kind, piped: bool) -> None:
        for a in use.args:
            if "=" in a:
                self.script(a.split("=", 1)[1], depth=depth + 1, state=_State(cwd=state.cwd))

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
        if not state.variables:
            return cmd.words
        out: list[str] = []
        for index, word in enumerate(cmd.words):
            if "$" not in word:
                out.append(word)
                continue
            value = self._substitute(word, state)
            if value != word and index in cmd.dynamic:
                out.extend(value.split() or [""])
            else:
                out.append(value)
        return tuple(out)

    def _substitute(self, word: str, state: _State) -> str:
        def known(match: re.Match) -> str:
            name = match.group(1) or match.group(2)
            return state.variables.get(name, match.group(0))

        return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)", known, word)


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

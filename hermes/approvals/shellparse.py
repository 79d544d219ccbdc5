"""A shell command line as a list of pipelines of simple commands.

The classifier never looks at raw text when it can help it: a command is
first parsed with ``bashlex`` (a port of bash's own grammar), so quoting,
``\\rm``, ``$(...)``, backticks, heredocs and process substitutions are seen the
way bash will see them. Parsing costs bashlex 0.3-3 ms, so plain command lines
(words, quotes without expansions, pipes, ``&&``, ``;`` and simple
redirections: most of what a model runs) go through a small exact lexer for
that subset instead, and results are cached.

When bashlex cannot parse a line (``[[ ]]``, ``case``, ``$(( ))``), the result
is marked ``parsed=False``: the classifier then asks, after scanning a rough
split of the text for the forbidden patterns, so nothing forbidden slips
through an unparseable disguise.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from functools import lru_cache

import bashlex
import bashlex.errors


@dataclass(frozen=True)
class Redirect:
    op: str  # '>', '>>', '<', '>|', '&>', '>&', '<<<' ...
    target: str  # a file name, or a file descriptor number for '>&'


@dataclass(frozen=True)
class Simple:
    """One simple command: ``NAME=v cmd word... >file``, words after quote removal.

    Expansions stay as written (``$HOME``, ``$(...)``), and ``dynamic`` lists the
    indexes of words that contain one, because their value is unknown until
    bash runs.
    """

    words: tuple[str, ...]
    assignments: tuple[str, ...] = ()
    redirects: tuple[Redirect, ...] = ()
    stdin: str | None = None  # a heredoc or here-string body
    dynamic: frozenset[int] = frozenset()
    process_substitution: frozenset[int] = frozenset()  # words that are <(...) / >(...)


@dataclass(frozen=True)
class Function:
    name: str
    body: Script


@dataclass(frozen=True)
class Script:
    """Everything a command line runs: each pipeline's stages in order.

    Command substitutions and process substitutions add their own pipelines
    (they run too). ``parsed`` is False when only a rough split was possible.
    """

    pipelines: tuple[tuple[Simple, ...], ...] = ()
    functions: tuple[Function, ...] = ()
    background: bool = False  # some command runs with '&'
    parsed: bool = True
    error: str = ""

    def commands(self):
        for pipeline in self.pipelines:
            yield from pipeline


class _Unsupported(Exception):
    """The fast lexer met something outside its subset; bashlex takes over."""


@lru_cache(maxsize=2048)
def parse(command: str) -> Script:
    """Parse ``command``; never raises (an unparseable line gives ``parsed=False``)."""
    try:
        return _fast(command)
    except _Unsupported:
        pass
    source = _decode_ansi_c(command)
    try:
        trees = bashlex.parse(source)
    except (bashlex.errors.ParsingError, NotImplementedError, IndexError, AttributeError) as exc:
        return _rough(command, f"{type(exc).__name__}: {exc}")
    except (RecursionError, ValueError, TypeError, AssertionError) as exc:
        return _rough(command, f"{type(exc).__name__}")
    builder = _Builder(source)
    for tree in trees:
        builder.visit(tree)
    return builder.script()


# -- the fast path -------------------------------------------------------------

# Characters with no special meaning to bash beyond making up words, plus the
# operators, quotes, backslashes and $NAME expansions this lexer understands.
# Anything else (` ( ) # ! newlines, globs with brackets) goes to bashlex.
_PLAIN = re.compile(r"[A-Za-z0-9_./=:,@%+\-^ \t*?~|&;<>'\"{}$\\]*")
_PARAMETER = re.compile(r"\$(?:[A-Za-z_][A-Za-z0-9_]*|\{[A-Za-z_][A-Za-z0-9_]*\})")


_RESERVED = frozenset(
    [
        "if",
        "then",
        "else",
        "elif",
        "fi",
        "for",
        "while",
        "until",
        "do",
        "done",
        "case",
        "esac",
        "in",
        "function",
        "select",
        "time",
        "coproc",
        "{",
        "}",
        "!",
        "[[",
        "]]",
    ]
)


def _fast(command: str) -> Script:
    if not _PLAIN.fullmatch(command):
        raise _Unsupported
    pipelines: list[tuple[Simple, ...]] = []
    stages: list[Simple] = []
    words: list[str] = []
    redirects: list[Redirect] = []
    background = False
    dynamic: set[int] = set()
    word: list[str] | None = None
    quoted_word = False
    expands = False  # the word holds $NAME or starts with ~
    pending_redirect: str | None = None
    i, n = 0, len(command)

    def end_word() -> None:
        nonlocal word, pending_redirect, quoted_word, expands
        if word is None:
            return
        text = "".join(word)
        if pending_redirect is not None:
            redirects.append(Redirect(pending_redirect, text))
            pending_redirect = None
        elif not words and "=" in text:
            raise _Unsupported  # a leading NAME=value: bashlex sorts assignments out
        else:
            if expands:
                dynamic.add(len(words))
            words.append(text)
        word, quoted_word, expands = None, False, False

    def parameter(at: int) -> int:
        """Take ``$NAME`` / ``${NAME}`` at ``at`` into the word; returns its end."""
        nonlocal word, expands
        match = _PARAMETER.match(command, at)
        if match is None:
            raise _Unsupported  # $(...), $?, $1, ${x:-y}: bashlex's job
        if word is None:
            word = []
        word.append(match.group(0))
        expands = True
        return match.end()

    def end_command() -> None:
        end_word()
        if pending_redirect is not None:
            raise _Unsupported
        if words and words[0] in _RESERVED:
            raise _Unsupported  # if/for/while...: compound commands are bashlex's job
        if words or redirects:
            stages.append(
                Simple(words=tuple(words), redirects=tuple(redirects), dynamic=frozenset(dynamic))
            )
        elif stages:
            raise _Unsupported  # `a | | b`: let the real parser report it
        words.clear()
        redirects.clear()
        dynamic.clear()

    def end_pipeline() -> None:
        end_command()
        if stages:
            pipelines.append(tuple(stages))
        stages.clear()

    while i < n:
        c = command[i]
        if c in " \t":
            end_word()
        elif c == "'":
            close = command.find(c, i + 1)
            if close < 0:
                raise _Unsupported
            if word is None:
                word = []
            word.append(command[i + 1 : close])
            quoted_word = True
            i = close
        elif c == '"':
            if word is None:
                word = []
            quoted_word = True
            i += 1
            while i < n and command[i] != '"':
                if command[i] == "\\":
                    raise _Unsupported
                if command[i] == "$":
                    i = parameter(i)
                    continue
                word.append(command[i])
                i += 1
            if i >= n:
                raise _Unsupported
        elif c == "\\":
            if i + 1 >= n:
                raise _Unsupported
            if word is None:
                word = []
            word.append(command[i + 1])
            quoted_word = True
            i += 1
        elif c == "$":
            i = parameter(i)
            continue
        elif c == "~" and word is None:
            word = ["~"]
            expands = True  # tilde expansion: the classifier resolves ~ itself
        elif c in "<>":
            # An all-digit word right before is the file descriptor: 2>file.
            if word is not None and not quoted_word and "".join(word).isdigit():
                word = None
            else:
                end_word()
            if pending_redirect is not None:
                raise _Unsupported
            op = c
            if command.startswith(c * 2, i):
                if c == "<":
                    raise _Unsupported  # heredocs
                op, i = ">>", i + 1
            elif command.startswith(">&", i) or command.startswith(">|", i):
                op, i = command[i : i + 2], i + 1
            pending_redirect = op
        elif c == "&" and command.startswith("&>", i):
            end_word()
            op = "&>>" if command.startswith("&>>", i) else "&>"
            i += len(op) - 1
            pending_redirect = op
        elif c == "|":
            if command.startswith("||", i):
                end_pipeline()
                i += 1
            elif command.startswith("|&", i):
                raise _Unsupported
            else:
                end_command()
                if not stages:
                    raise _Unsupported
        elif c in ";&":
            if c == "&" and command.startswith("&&", i):
                i += 1
            elif c == "&":
                background = True
            end_pipeline()
        else:
            if word is None:
                word = []
            word.append(c)  # globs and a later ~ stay literal text for the classifier
        i += 1
    end_pipeline()
    return Script(pipelines=tuple(pipelines), background=background)


# -- bashlex -------------------------------------------------------------------

_ANSI_C = re.compile(r"\$'((?:[^'\\]|\\.)*)'", re.DOTALL)


def _decode_ansi_c(command: str) -> str:
    """``$'\\x72m'`` as the plain quoted ``'rm'`` it means (bashlex drops these)."""
    if "$'" not in command:
        return command

    def plain(match: re.Match) -> str:
        try:
            text = codecs.decode(match.group(1), "unicode_escape")
        except UnicodeDecodeError:
            text = match.group(1)
        return "'" + text.replace("'", "'\\''") + "'"

    return _ANSI_C.sub(plain, command)


class _Builder:
    """Walks bashlex's tree and collects pipelines of :class:`Simple` commands."""

    def __init__(self, source: str):
        self.source = source
        self.pipelines: list[tuple[Simple, ...]] = []
        self.functions: list[Function] = []
        self.background = False

    def script(self) -> Script:
        return Script(
            pipelines=tuple(self.pipelines),
            functions=tuple(self.functions),
            background=self.background,
        )

    def visit(self, node) -> None:
        kind = node.kind
        if kind == "pipeline":
            stages = []
            for part in node.parts:
                if part.kind == "command":
                    stages.append(self.simple(part))
                elif part.kind not in ("pipe", "reservedword"):
                    # A compound stage ({ ...; } | sh): its commands run on their own.
                    self.visit(part)
                    stages.append(Simple(words=("{",)))
            self.pipelines.append(tuple(stages))
        elif kind == "command":
            self.pipelines.append((self.simple(node),))
        elif kind == "function":
            name = node.parts[0].word
            inner = _Builder(self.source)
            for part in node.parts[1:]:
                inner.visit(part)
            body = inner.script()
            self.functions.append(Function(name=name, body=body))
            self.functions.extend(body.functions)
            self.pipelines.extend(body.pipelines)
            self.background = self.background or body.background
        elif kind == "operator":
            if node.op == "&":
                self.background = True
        elif kind == "compound":
            for part in node.list:
                self.visit(part)
            for redirect in getattr(node, "redirects", []) or []:
                # `{ ...; } > file` writes the file: keep it as a command of its own.
                self.pipelines.append((Simple(words=(), redirects=(self.redirect(redirect),)),))
        else:
            for part in getattr(node, "parts", []) or []:
                if hasattr(part, "kind"):
                    self.visit(part)
            for part in getattr(node, "list", []) or []:
                if hasattr(part, "kind"):
                    self.visit(part)

    def simple(self, node) -> Simple:
        words: list[str] = []
        assignments: list[str] = []
        redirects: list[Redirect] = []
        dynamic: set[int] = set()
        procsub: set[int] = set()
        stdin = None
        for part in node.parts:
            if part.kind == "assignment":
                self.substitutions(part)
                assignments.append(part.word)
            elif part.kind == "word":
                if self.substitutions(part):
                    dynamic.add(len(words))
                if any(p.kind == "processsubstitution" for p in _word_parts(part)):
                    procsub.add(len(words))
                words.append(part.word)
            elif part.kind == "redirect":
                if getattr(part, "heredoc", None) is not None:
                    stdin = _heredoc_body(part.heredoc.value)
                elif part.type == "<<<":
                    stdin = part.output.word
                    self.substitutions(part.output)
                else:
                    redirects.append(self.redirect(part))
        return Simple(
            words=tuple(words),
            assignments=tuple(assignments),
            redirects=tuple(redirects),
            stdin=stdin,
            dynamic=frozenset(dynamic),
            process_substitution=frozenset(procsub),
        )

    def redirect(self, node) -> Redirect:
        target = node.output
        if isinstance(target, int):
            return Redirect(node.type, str(target))
        self.substitutions(target)
        return Redirect(node.type, target.word)

    def substitutions(self, word) -> bool:
        """Visit the commands inside ``$(...)``, backticks and ``<(...)``; True if it expands."""
        expands = False
        for part in _word_parts(word):
            if part.kind in ("commandsubstitution", "processsubstitution"):
                self.visit(part.command)
                expands = True
            elif part.kind in ("parameter", "tilde"):
                expands = True
        return expands


def _word_parts(word):
    return getattr(word, "parts", None) or []


def _heredoc_body(value: str) -> str:
    """bashlex's heredoc value ends with the delimiter line; drop it."""
    lines = value.split("\n")
    return "\n".join(lines[:-1]) if len(lines) > 1 else value


# -- the rough fallback ----------------------------------------------------------

_ROUGH_BREAKS = re.compile(r"\|\||&&|[;&|\n(){}`]|\$\(|<\(|>\(|\bthen\b|\bdo\b|\belse\b")


def _rough(command: str, error: str) -> Script:
    """A split on every operator and bracket, for scanning what bash might run."""
    pipelines = []
    for piece in _ROUGH_BREAKS.split(_decode_ansi_c(command)):
        words = tuple(_rough_words(piece))
        if words:
            pipelines.append((Simple(words=words),))
    return Script(pipelines=tuple(pipelines), parsed=False, error=error)


def _rough_words(piece: str) -> list[str]:
    words = []
    for token in piece.split():
        token = token.replace("\\", "").replace('"', "").replace("'", "")
        if token:
            words.append(token)
    return words

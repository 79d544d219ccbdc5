"""The interactive ``hermes`` REPL: prompt_toolkit for input, rich for output.

Keys: Enter sends; Alt-Enter (Esc then Enter) or Ctrl-J inserts a newline;
pasted text stays one message (bracketed paste); Up/Down walk the history
kept in ``$HERMES_HOME/repl_history``; Tab completes slash commands and skill
names. Ctrl-C cancels a running turn (the partial answer is kept) or clears
the line; Ctrl-D on an empty line, or /exit, closes the session, which writes
its summary.

A session is created on the first message, so opening and closing the REPL
leaves nothing behind. When stdin is not a terminal each input line is one
message, so ``printf 'hi\\n/skills\\n' | hermes`` works in scripts.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.text import Text

from hermes.cli import slash
from hermes.cli.console import make_console
from hermes.cli.render import TurnView, clean
from hermes.errors import HermesError
from hermes.text import brief

# How long a cancelled turn gets to reach a safe point before we give the
# prompt back anyway (a model stuck mid-request may take much longer).
CANCEL_GRACE_SECONDS = 2.5
PROMPT = "hermes> "


class Repl:
    """One interactive conversation; ``session_id`` is None until the first message."""

    def __init__(self, runtime, console: Console | None = None):
        self.runtime = runtime
        self.console = console or make_console()
        self.session_id: int | None = None
        # The model of this REPL's sessions (/model changes it, here and on the session).
        self.model: str = runtime.model
        self._agent = None
        # A cancelled turn whose worker had not stopped when we gave the prompt back.
        self._lingering = None
        # Curator events arrive after a turn's `done`, while the user may be typing:
        # printed at once over the prompt (patch_stdout) or at the next safe point.
        self._late_lock = threading.Lock()
        self._late: list = []
        self._prompting = False
        self._followers: list[threading.Thread] = []

    # -- the loop --------------------------------------------------------------

    def run(self, lines: Iterator[str]) -> None:
        """Read inputs from ``lines`` until it ends or a command asks to exit."""
        self.header()
        try:
            while True:
                try:
                    text = next(lines)
                except StopIteration:
                    break
                except KeyboardInterrupt:
                    continue  # Ctrl-C while reading a line: drop it
                try:
                    if not self.handle(text):
                        break
                except KeyboardInterrupt:
                    self.console.print(Text("interrupted", style="yellow"))
                self.flush_late()
        finally:
            self.close_session()

    def header(self) -> None:
        config = self.runtime.config
        where = f"{config.provider}:{self.model}" if config.provider else "no provider"
        self.console.print(
            Text.assemble(
                ("hermes", "bold"), f" — {where} — workspace {config.workspace}", style=""
            )
        )
        self.console.print(Text("Type /help for commands, /exit to quit.", style="dim"))
        if not config.provider:
            self.console.print(
                Text(
                    "No model provider is configured: set ANTHROPIC_API_KEY, OPENAI_API_KEY or "
                    "OPENROUTER_API_KEY (or HERMES_BASE_URL for a local server), then restart. "
                    "Slash commands still work.",
                    style="yellow",
                )
            )
        self.warn_flagged_memory()

    def warn_flagged_memory(self) -> None:
        """Show profile-memory entries the guard keeps from the model: the user decides."""
        from hermes.profile import FILES

        for target, entry, reason in self.runtime.profile.flagged():
            path = self.runtime.config.memory_dir / FILES[target]
            self.console.print(
                Text(
                    f"withheld from the model ({reason}): {brief(entry, 80)} — edit {path} "
                    "to keep or remove it",
                    style="yellow",
                ),
                overflow="fold",
            )

    def handle(self, text: str) -> bool:
        """Act on one input: a slash command or a message. False means exit."""
        stripped = text.strip()
        if not stripped:
            return True
        if stripped.startswith("//"):
            # An escape for messages that begin with a slash.
            self.send(text.lstrip()[1:])
            return True
        if stripped.startswith("/"):
            return slash.dispatch(self, stripped)
        self.send(text)
        return True

    # -- turns -----------------------------------------------------------------

    def agent(self):
        """The agent, built on first use (and again after /model)."""
        if self._agent is None:
            self._agent = self.runtime.agent()
        return self._agent

    def reset_agent(self) -> None:
        self._agent = None

    def ensure_session(self) -> int:
        if self.session_id is None:
            info = self.runtime.store.create_session(source="cli", model=self.model)
            self.session_id = info.id
        return self.session_id

    def send(self, text: str) -> None:
        """Run one turn and draw its events as they arrive."""
        from hermes.agent.runner import TurnThread

        try:
            agent = self.agent()
            self._wait_for_lingering()
            session_id = self.ensure_session()
        except HermesError as exc:
            self.error(exc.message)
            return
        try:
            turn = TurnThread(agent, session_id, text).start()
        except HermesError as exc:  # SessionBusy: say which turn is running
            self.error(exc.message)
            return
        view = TurnView(self.console)
        with terminal_echo_off():
            try:
                for event in turn.events():
                    view.show(event)
            except KeyboardInterrupt:
                turn.cancel.set()
                view.close()
                self._finish_cancelled(turn, view)
            finally:
                view.close()
        self._follow(turn)

    # -- events after `done` -------------------------------------------------------

    def _follow(self, turn) -> None:
        """Print the turn's late events (the curator's skill) whenever they arrive."""

        def follow() -> None:
            for event in turn.late_events():
                self.announce(event)

        thread = threading.Thread(target=follow, name="turn-late-events", daemon=True)
        self._followers = [t for t in self._followers if t.is_alive()] + [thread]
        thread.start()

    def announce(self, event) -> None:
        """Show a late event now if the prompt is up, else at the next safe point."""
        with self._late_lock:
            if self._prompting:
                self._print_late(event)  # stdout is patched: it lands above the prompt
            else:
                self._late.append(event)

    def set_prompting(self, prompting: bool) -> None:
        with self._late_lock:
            self._prompting = prompting
            pending, self._late = self._late, []
        for event in pending:
            self._print_late(event)

    def flush_late(self, wait: float = 0.0) -> None:
        """Print late events that came in meanwhile; optionally wait for curators to finish."""
        deadline = time.monotonic() + wait
        for thread in list(self._followers):
            thread.join(max(0.0, deadline - time.monotonic()))
        self.set_prompting(self._prompting)

    def _print_late(self, event) -> None:
        from hermes.cli.render import skill_line

        if event.type == "skill":
            line = skill_line(event.action, event.name, event.version)
            self.console.print(Text(f"✦ {line}", style="bold magenta"))

    def _finish_cancelled(self, turn, view: TurnView) -> None:
        """Give the worker a moment to stop and save the partial answer, then move on."""
        deadline = time.monotonic() + CANCEL_GRACE_SECONDS
        finished = False
        try:
            while not finished and time.monotonic() < deadline:
                finished = turn.join(0.1)
        except KeyboardInterrupt:
            pass
        if finished:
            for event in turn.events():
                view.show(event)
            view.close()
            if view.stop_reason != "cancelled" and view.stop_reason is not None:
                return
            if view.stop_reason is None:
                self.console.print(Text("cancelled", style="yellow"))
            return
        self._lingering = turn
        self.console.print(
            Text(
                "cancelled (the model is still winding down; its partial answer will be saved)",
                style="yellow",
            )
        )

    def _wait_for_lingering(self) -> None:
        """A new turn must not overlap the cancelled one still saving its partial answer."""
        turn, self._lingering = self._lingering, None
        if turn is None or turn.join(0):
            return
        self.console.print(
            Text("waiting for the cancelled turn to stop… (Ctrl-C to stop waiting)", style="dim")
        )
        try:
            while not turn.join(0.1):
                pass
        except KeyboardInterrupt:
            self.console.print(Text("stopped waiting", style="yellow"))

    # -- sessions --------------------------------------------------------------

    def close_session(self) -> None:
        """Close the current session: write its summary (skipped for one-message sessions)."""
        session_id, self.session_id = self.session_id, None
        if session_id is None:
            return
        self._wait_for_lingering()
        self.flush_late(wait=self.runtime.config.curator_timeout)
        self.console.print(Text("saving session summary…", style="dim"))
        try:
            summary = self.runtime.summarize_session(session_id)
        except HermesError as exc:
            self.warn(f"could not summarize session {session_id}: {exc.message}")
            return
        except KeyboardInterrupt:
            self.warn("skipped the session summary")
            return
        if summary:
            self.console.print(Text(f"summary: {clean(summary)}", style="dim"), overflow="fold")

    def switch_to(self, session_id: int) -> None:
        """Continue an existing session (the current one is closed first)."""
        if session_id != self.session_id:
            self.close_session()
        self.session_id = session_id
        self.model = self.runtime.store.get_session(session_id).model or self.runtime.model

    # -- output helpers ----------------------------------------------------------

    def error(self, message: str) -> None:
        self.console.print(Text(f"error: {clean(message)}", style="bold red"))

    def warn(self, message: str) -> None:
        self.console.print(Text(clean(message), style="yellow"))

    def note(self, message: str) -> None:
        self.console.print(Text(clean(message), style="dim"))


# -- input ---------------------------------------------------------------------


def prompt_lines(repl: Repl) -> Iterator[str]:
    """Inputs from an interactive prompt; ends on Ctrl-D. Ctrl-C raises KeyboardInterrupt."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory, InMemoryHistory
    from prompt_toolkit.patch_stdout import patch_stdout

    from hermes.privacy import create_private_file, private_folder

    history_file = repl.runtime.config.history_file
    try:
        private_folder(history_file.parent)
        create_private_file(history_file)  # what the user typed: private
        history = FileHistory(str(history_file))
    except OSError:
        history = InMemoryHistory()
    line_was_empty = [True]
    session = PromptSession(
        history=history,
        multiline=True,
        key_bindings=_key_bindings(line_was_empty),
        completer=slash.SlashCompleter(lambda: _skill_names(repl)),
        complete_while_typing=True,
        prompt_continuation=lambda width, line_number, wrap_count: "." * (width - 1) + " ",
        enable_open_in_editor=False,
    )
    while True:
        try:
            # While the prompt is up, output from other threads (a curator's
            # skill event) is drawn above it instead of through the typed line.
            with patch_stdout(raw=True):
                repl.set_prompting(True)
                try:
                    text = session.prompt([("bold", PROMPT)])
                finally:
                    repl.set_prompting(False)
        except KeyboardInterrupt:
            # Ctrl-C at the prompt clears the line (the generator must live on); on an
            # empty line the user may be trying to leave, so say how.
            if line_was_empty[0]:
                repl.note("Ctrl-D or /exit quits (Ctrl-C cancels a running answer).")
            continue
        except EOFError:
            return
        yield text


@contextmanager
def terminal_echo_off() -> Iterator[None]:
    """Don't echo keys typed during a turn: an echoed ``^C`` or type-ahead would land
    inside the live answer region and leave a duplicated line behind. Typed keys
    stay queued for the next prompt; Ctrl-C still interrupts."""
    try:
        import termios
    except ImportError:  # not POSIX
        yield
        return
    try:
        fd = sys.stdin.fileno()
        saved = termios.tcgetattr(fd)
    except (termios.error, OSError, ValueError, AttributeError):
        yield  # stdin is not a terminal: nothing to silence
        return
    quiet = list(saved)
    quiet[3] &= ~termios.ECHO
    try:
        termios.tcsetattr(fd, termios.TCSANOW, quiet)
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSANOW, saved)


def plain_lines(stream=None) -> Iterator[str]:
    """Inputs from a pipe: one message per line."""
    stream = stream or sys.stdin
    for line in stream:
        yield line.rstrip("\n")


def _key_bindings(line_was_empty: list[bool]):
    from prompt_toolkit.key_binding import KeyBindings

    bindings = KeyBindings()

    @bindings.add("c-c")
    def _interrupt(event) -> None:
        # prompt_toolkit's own Ctrl-C, noting first whether there was text to clear.
        line_was_empty[0] = not event.current_buffer.text
        event.app.exit(exception=KeyboardInterrupt, style="class:aborting")

    @bindings.add("enter")
    def _send(event) -> None:
        buffer = event.current_buffer
        state = buffer.complete_state
        if state is not None and state.current_completion is not None:
            # Enter on a highlighted completion takes it and sends, like a menu pick.
            buffer.apply_completion(state.current_completion)
        buffer.validate_and_handle()

    @bindings.add("escape", "enter")
    @bindings.add("c-j")
    def _newline(event) -> None:
        event.current_buffer.insert_text("\n")

    return bindings


_skill_cache: tuple[float, list[str]] = (0.0, [])


def _skill_names(repl: Repl) -> list[str]:
    """Skill names for completion, re-read at most every few seconds."""
    global _skill_cache
    stamp, names = _skill_cache
    if time.monotonic() - stamp > 3.0:
        try:
            names = sorted(skill.name for skill in repl.runtime.skills.list())
        except (HermesError, OSError):
            names = []
        _skill_cache = (time.monotonic(), names)
    return names


def _warm_up(config) -> None:
    """Import the heavy modules (model SDK, SQLAlchemy, Alembic) while the user types,
    so the first answer starts as fast as the later ones."""
    import threading

    def work() -> None:
        import importlib

        from hermes.providers.registry import provider_class

        try:
            for name in ("hermes.store", "alembic.command", "hermes.agent.loop", "hermes.tools"):
                importlib.import_module(name)
            if config.provider:
                provider_class(config.provider)
        except (ImportError, HermesError):
            pass  # the first real use reports it, with a message that says what to do

    threading.Thread(target=work, name="warm-up", daemon=True).start()


def run_repl(input_lines: Callable[[Repl], Iterator[str]] | None = None) -> None:
    """Entry point of ``hermes`` with no subcommand."""
    from hermes.config import Config
    from hermes.runtime import Runtime

    config = Config.from_env()
    runtime = Runtime(config)
    try:
        # Open (and if needed upgrade) the database now: a damaged or unwritable one
        # is reported before the user types, not after their first message.
        runtime.store  # noqa: B018
        repl = Repl(runtime)
        if input_lines is not None:
            lines = input_lines(repl)
        elif sys.stdin.isatty():
            _warm_up(config)
            lines = prompt_lines(repl)
        else:
            lines = plain_lines()
        repl.run(lines)
    finally:
        runtime.close()

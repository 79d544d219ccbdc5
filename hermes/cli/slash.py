"""The REPL's slash commands, each a small function doing real work on the store or skills.

A command is registered with :func:`command`; it takes the REPL and the text
after its name, and returns False to end the REPL. :func:`dispatch` runs one
input line; an unknown name gets a suggestion.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from prompt_toolkit.completion import Completer, Completion
from rich.markdown import Markdown
from rich.table import Table
from rich.text import Text

from hermes.cli.render import clean, compaction_line, skill_line
from hermes.cli.skills_cmds import skills_table
from hermes.errors import HermesError
from hermes.text import brief

if TYPE_CHECKING:
    from hermes.cli.repl import Repl

KEYS_HELP = (
    ("Enter", "send the message"),
    ("Alt-Enter, Esc Enter, Ctrl-J", "insert a newline (pasted text stays one message)"),
    ("Up / Down", "previous / next input (history is kept in $HERMES_HOME/repl_history)"),
    ("Tab", "complete a slash command or, after /skill, a skill name"),
    ("Ctrl-C", "cancel the running turn (its partial answer is kept), or clear the line"),
    ("Ctrl-D, /exit", "close the session (saving its summary) and quit"),
    ("//text", "send a message that starts with a slash"),
)


# What model ids look like across providers: gpt-4.1, claude-sonnet-4-6,
# anthropic/claude-sonnet-4.6, llama3.2:latest, models/gemini-2.5@001.
MODEL_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}")


@dataclass(frozen=True)
class Command:
    name: str
    usage: str
    help: str
    run: Callable[[Repl, str], bool | None]


COMMANDS: dict[str, Command] = {}


def command(name: str, usage: str, help: str):
    """Register a slash command: ``usage`` is its synopsis, ``help`` one line."""

    def register(func: Callable[[Repl, str], bool | None]):
        COMMANDS[name] = Command(name=name, usage=usage, help=help, run=func)
        return func

    return register


def dispatch(repl: Repl, line: str) -> bool:
    """Run one ``/command args`` line. False means the REPL should end."""
    name, _, argument = line[1:].partition(" ")
    name = name.strip().lower()
    found = COMMANDS.get(name)
    if found is None:
        close = difflib.get_close_matches(name, list(COMMANDS), n=1, cutoff=0.5)
        hint = f" Did you mean /{close[0]}?" if close else ""
        repl.warn(f"Unknown command /{name}.{hint} Type /help for the list.")
        return True
    try:
        return found.run(repl, argument.strip()) is not False
    except HermesError as exc:
        repl.error(exc.message)
        return True


# -- commands ------------------------------------------------------------------


@command("help", "/help", "show the commands and keys")
def help_(repl: Repl, argument: str) -> None:
    table = Table(show_header=False, box=None, padding=(0, 2, 0, 0))
    table.add_column(style="bold")
    table.add_column()
    for cmd in COMMANDS.values():
        table.add_row(cmd.usage, cmd.help)
    repl.console.print(Text("Commands", style="bold underline"))
    repl.console.print(table)
    keys = Table(show_header=False, box=None, padding=(0, 2, 0, 0))
    keys.add_column(style="bold")
    keys.add_column()
    for key, meaning in KEYS_HELP:
        keys.add_row(key, meaning)
    repl.console.print(Text("Keys", style="bold underline"))
    repl.console.print(keys)


@command("new", "/new", "close this session (saving its summary) and start a new one")
def new(repl: Repl, argument: str) -> None:
    had_session = repl.session_id is not None
    repl.close_session()
    repl.note(
        "New session: it starts with your next message."
        if had_session
        else "Already in a new session: it starts with your next message."
    )


@command("skills", "/skills", "list the skills with their version, uses and description")
def skills(repl: Repl, argument: str) -> None:
    found = repl.runtime.skills.search(argument) if argument else repl.runtime.skills.list()
    if not found:
        where = repl.runtime.config.skills_dir
        repl.note(
            "No skills match."
            if argument
            else f"No skills yet. Hermes writes one after a "
            f"multi-step task (or run /learn); you can also add {where}/<name>/SKILL.md."
        )
        return
    repl.console.print(skills_table(repl.console.width, found))


@command("skill", "/skill NAME", "show a skill's SKILL.md")
def skill(repl: Repl, argument: str) -> None:
    if not argument:
        repl.warn("Usage: /skill NAME (/skills lists the names).")
        return
    found = repl.runtime.skills.get(argument.split()[0])
    title = Text()
    title.append(found.name, style="bold cyan")
    title.append(f"  v{found.version} · used {found.uses}× · by {found.created_by}", style="dim")
    repl.console.print(title)
    repl.console.print(Text(clean(found.description)))
    if found.triggers:
        repl.console.print(Text("triggers: " + clean(", ".join(found.triggers)), style="dim"))
    if found.files:
        repl.console.print(Text("files: " + clean(", ".join(found.files)), style="dim"))
    repl.console.print()
    repl.console.print(Markdown(clean(found.body) or "_(empty body)_"))


@command("memory", "/memory QUERY", "search every past conversation")
def memory(repl: Repl, argument: str) -> None:
    if not argument:
        repl.warn("Usage: /memory QUERY, e.g. /memory railway deploy")
        return
    hits = repl.runtime.store.search(argument, limit=10)
    if not hits:
        repl.note(f"Nothing in memory matches {argument!r}.")
        return
    for hit in hits:
        head = Text()
        head.append(f"#{hit.session_id}", style="bold cyan")
        head.append(f" {brief(hit.session_title or 'untitled', 60)}", style="bold")
        head.append(f"  {hit.role} · {_date(hit.created_at)}", style="dim")
        repl.console.print(head)
        repl.console.print(_snippet(hit.snippet))
    repl.note("/resume ID continues one of these sessions.")


@command("learn", "/learn", "distill this session into a skill now")
def learn(repl: Repl, argument: str) -> None:
    if repl.session_id is None:
        repl.note("Nothing to learn from yet: this session has no messages.")
        return
    transcript = repl.runtime.store.history(repl.session_id)
    if not transcript:
        repl.note("Nothing to learn from yet: this session has no messages.")
        return
    repl.note("asking the curator…")
    model = repl.runtime.store.get_session(repl.session_id).model
    curator = repl.runtime.curator.with_provider(repl.runtime.provider_for(model))
    event = curator.propose_skill(transcript, session_id=repl.session_id)
    if event is None:
        repl.note("Nothing worth a skill in this session.")
        return
    repl.console.print(
        Text("✦ " + skill_line(event.action, event.name, event.version), style="bold magenta")
    )


@command("model", "/model [ID]", "show the model, or switch to another one")
def model(repl: Repl, argument: str) -> None:
    config = repl.runtime.config
    if not argument:
        where = f"{config.provider}:{repl.model}" if config.provider else "no provider"
        repl.console.print(Text(where, style="bold"))
        return
    if not config.provider:
        repl.warn("No provider is configured, so there is no model to switch (see hermes doctor).")
        return
    if not MODEL_ID.fullmatch(argument):
        repl.warn(
            f"{brief(argument, 60)!r} is not a model id: ids are letters, digits and . _ - : / @ + "
            "without spaces, e.g. /model gpt-4.1 or /model anthropic/claude-sonnet-4.6."
        )
        return
    new_model = argument
    # Stored with the session, not switched for the whole process: the web's
    # sessions (and other threads) keep their own model.
    repl.model = new_model
    if repl.session_id is not None:
        repl.runtime.store.update_session(repl.session_id, model=new_model)
    repl.note(f"Switched to {config.provider}:{new_model} for the next messages.")


@command("sessions", "/sessions", "list recent sessions")
def sessions(repl: Repl, argument: str) -> None:
    from hermes.cli.sessions_cmds import sessions_table

    found, _ = repl.runtime.store.list_sessions(limit=15)
    if not found:
        repl.note("No sessions yet.")
        return
    repl.console.print(sessions_table(repl.console.width, found, current=repl.session_id))


@command("resume", "/resume ID", "continue a past session")
def resume(repl: Repl, argument: str) -> None:
    raw = argument.lstrip("#").split()[0] if argument else ""
    if not raw.isdigit():
        repl.warn("Usage: /resume ID (the ids are in /sessions and /memory).")
        return
    info = repl.runtime.store.get_session(int(raw))
    repl.switch_to(info.id)
    repl.console.print(
        Text.assemble(
            ("Resumed ", "dim"), (f"#{info.id} ", "bold cyan"), brief(info.title or "untitled")
        )
    )
    shown = [m for m in repl.runtime.store.messages(info.id) if m.message.role != "tool"]
    from hermes.agent.context import transcript_marks

    marks = transcript_marks(repl.runtime.store.compactions(info.id))
    for stored in shown[-6:]:
        passed = [c for c in marks if c.through_message_id < stored.id]
        if passed:  # the transcript marker, once, where the summary's part ends
            repl.console.print(Text(compaction_line(passed[-1]), style="dim cyan"))
            marks = [c for c in marks if c not in passed]
        _show_message(repl, stored)


# /context and /compact live in their own module (imported for its registrations).
from hermes.cli import context_cmds  # noqa: E402, F401


@command("exit", "/exit", "close the session (saving its summary) and quit")
def exit_(repl: Repl, argument: str) -> bool:
    return False


# -- completion ----------------------------------------------------------------


class SlashCompleter(Completer):
    """Completes ``/command`` names and the skill name after ``/skill ``."""

    def __init__(self, skill_names: Callable[[], Iterable[str]]):
        self.skill_names = skill_names

    def get_completions(self, document, complete_event):
        text = document.text_before_cursor
        if not text.startswith("/") or "\n" in text:
            return
        if " " not in text:
            for cmd in COMMANDS.values():
                if cmd.name.startswith(text[1:].lower()):
                    yield Completion(
                        "/" + cmd.name, start_position=-len(text), display_meta=cmd.help
                    )
            return
        name, _, prefix = text.partition(" ")
        if name == "/skill" and " " not in prefix:
            for skill_name in self.skill_names():
                if skill_name.startswith(prefix):
                    yield Completion(skill_name, start_position=-len(prefix))


# -- helpers -------------------------------------------------------------------


def _date(moment: datetime | None) -> str:
    if moment is None:
        return ""
    return moment.astimezone().strftime("%Y-%m-%d %H:%M")


def _snippet(snippet: str) -> Text:
    """A search snippet with its «marked» terms highlighted."""
    out = Text("   ")
    for n, part in enumerate(clean(" ".join(snippet.split())).split("«")):
        if n == 0:
            out.append(part)
            continue
        marked, _, rest = part.partition("»")
        out.append(marked, style="bold yellow")
        out.append(rest)
    return out


def _show_message(repl: Repl, stored) -> None:
    message = stored.message
    if message.role == "user":
        repl.console.print(Text.assemble(("you: ", "bold"), brief(message.content, 300)))
    else:
        text = brief(message.content, 300) if message.content else ""
        calls = ", ".join(call.name for call in message.tool_calls)
        if calls:
            text = f"{text} [tools: {calls}]".strip()
        repl.console.print(Text.assemble(("hermes: ", "bold green"), text or "(no text)"))

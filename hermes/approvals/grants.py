"""Standing approvals: "always" in ``$HERMES_HOME/approvals.json``, "session" in memory.

A grant is for a rule (``git-force-push``, ``overwrite-file``), not for one
exact command: approving ``git push --force`` for the session lets the next
force push through too, but not a ``git reset --hard``. A call is covered when
every rule it triggered is granted. Forbidden rules are never granted.

``hermes approvals list`` shows the always-grants, ``hermes approvals revoke
RULE`` (or ``--all``) removes them. The file is private (0600) and written
atomically; a damaged file counts as empty and is reported by ``list``.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from hermes.atomic import replacing
from hermes.errors import HermesError

FILE_NAME = "approvals.json"


@dataclass(frozen=True)
class Grant:
    rule: str
    reason: str
    example: str  # the command or file that was approved first
    created_at: str

    def to_dict(self) -> dict:
        return {
            "rule": self.rule,
            "reason": self.reason,
            "example": self.example,
            "created_at": self.created_at,
        }


class AlwaysGrants:
    """The "always" decisions of one HERMES_HOME, shared by every process using it."""

    def __init__(self, home: Path):
        self.path = home / FILE_NAME
        self._lock = threading.Lock()

    def list(self) -> list[Grant]:
        return list(self._read().values())

    def covers(self, rules: frozenset[str]) -> bool:
        if not rules:
            return False
        granted = self._read()
        return all(rule in granted for rule in rules)

    def add(self, rules: frozenset[str], reason: str, example: str) -> None:
        with self._lock:
            granted = self._read()
            now = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
            for rule in sorted(rules):
                granted.setdefault(rule, Grant(rule, reason, example[:300], now))
            self._write(granted)

    def revoke(self, rule: str | None) -> list[str]:
        """Remove one rule's grant (or all with None); returns the rules removed."""
        with self._lock:
            granted = self._read()
            removed = sorted(granted) if rule is None else ([rule] if rule in granted else [])
            for name in removed:
                del granted[name]
            if removed:
                self._write(granted)
            return removed

    def problem(self) -> str | None:
        """Why the file cannot be used, if it can't."""
        try:
            self._parse(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            return f"{self.path} is not a valid approvals file ({exc}); revoke --all rewrites it"
        return None

    def _read(self) -> dict[str, Grant]:
        try:
            return self._parse(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError, KeyError, TypeError):
            return {}

    @staticmethod
    def _parse(text: str) -> dict[str, Grant]:
        data = json.loads(text)
        grants = {}
        for item in data["always"]:
            grant = Grant(
                rule=str(item["rule"]),
                reason=str(item.get("reason", "")),
                example=str(item.get("example", "")),
                created_at=str(item.get("created_at", "")),
            )
            grants[grant.rule] = grant
        return grants

    def _write(self, granted: dict[str, Grant]) -> None:
        data = {"version": 1, "always": [g.to_dict() for g in granted.values()]}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            with replacing(self.path, mode=0o600) as handle:
                json.dump(data, handle, indent=2, ensure_ascii=False)
                handle.write("\n")
        except OSError as exc:
            raise HermesError(
                f"could not save the approval in {self.path}: {exc.strerror}; "
                "check that HERMES_HOME is writable"
            ) from None
        os.chmod(self.path, 0o600)


class SessionGrants:
    """The "session" decisions of this process, by session id."""

    def __init__(self):
        self._lock = threading.Lock()
        self._granted: dict[int, set[str]] = {}

    def covers(self, session_id: int, rules: frozenset[str]) -> bool:
        with self._lock:
            return bool(rules) and rules <= self._granted.get(session_id, set())

    def add(self, session_id: int, rules: frozenset[str]) -> None:
        with self._lock:
            self._granted.setdefault(session_id, set()).update(rules)

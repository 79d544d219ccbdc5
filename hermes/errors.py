"""The exceptions Hermes raises on purpose.

Each one carries a message written for the person who has to fix the problem.
The edges turn them into one line: the CLI prints it to stderr and exits
non-zero, the web API answers ``{"error": {"code", "message"}}``.
"""

from __future__ import annotations


class HermesError(Exception):
    """Base class: a problem we understand and can explain in one line."""

    code = "error"
    exit_code = 1

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class ConfigError(HermesError):
    """The environment or .env file is missing or has a bad setting."""

    code = "config_error"
    exit_code = 2


class ProviderError(HermesError):
    """The model provider failed; ``retryable`` says whether trying again may help."""

    code = "provider_error"

    def __init__(self, message: str, *, retryable: bool = False, status: int | None = None):
        super().__init__(message)
        self.retryable = retryable
        self.status = status
        # Tokens the failed call(s) were billed for anyway (a stream cut after message_start).
        self.spent = None


class ContextTooLong(ProviderError):
    """The provider refused the request as longer than the model's context window.

    The loop answers it by compacting the conversation and trying once more.
    """

    code = "context_too_long"


class StoreError(HermesError):
    """The database could not do what was asked."""

    code = "store_error"


class NotFound(HermesError):
    """A session, message, skill or turn that does not exist."""

    code = "not_found"


class Conflict(HermesError):
    """The thing exists already, or is busy."""

    code = "conflict"


class SessionBusy(Conflict):
    """The session already has a running turn; ``turn_id`` names it.

    Raised before anything of the new turn is written. The web answers 409
    with code ``session_busy``; the CLI says which turn is running.
    """

    code = "session_busy"

    def __init__(self, session_id: int, turn_id: str):
        super().__init__(
            f"Session {session_id} is busy: turn {turn_id} is still running. Wait for it to "
            "finish or cancel it, then send your message again."
        )
        self.session_id = session_id
        self.turn_id = turn_id


class InvalidInput(HermesError):
    """Input from outside (a file, a form, a query, model output) failed a check."""

    code = "invalid"


class SkillError(InvalidInput):
    """A skill folder or SKILL.md that does not follow the Agent Skills format."""

    code = "invalid_skill"


class ImportFileError(InvalidInput):
    """An export file that cannot be imported; nothing was written."""

    code = "invalid_import"


class ToolError(HermesError):
    """A tool could not do its job; the message goes back to the model as the result."""

    code = "tool_error"


class Cancelled(HermesError):
    """The user cancelled the running turn."""

    code = "cancelled"

    def __init__(self, message: str = "cancelled"):
        super().__init__(message)

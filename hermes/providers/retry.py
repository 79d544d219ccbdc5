"""When to try a model call again, and what to tell the user when we stop.

The SDKs' own retries are switched off (``max_retries=0``) because they cannot
know the one rule that matters for a stream: once any output has been yielded,
trying again would show the user the same text twice. So :func:`retrying`
retries only failures that happen before the first chunk, and
:func:`translate` turns SDK and transport exceptions into one-line
:class:`~hermes.errors.ProviderError` messages that say what to fix and never
contain the API key.
"""

from __future__ import annotations

import email.utils
import json
import logging
import random
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from hermes.errors import ContextTooLong, ProviderError
from hermes.events import Usage, total_usage
from hermes.providers.base import Chunk, ProviderSettings

log = logging.getLogger("hermes.providers")

CONTEXT_TOO_LONG_HINTS = (
    "context_length_exceeded",
    "prompt is too long",
    "maximum context length",
    "context window",
    "too many tokens",
    "input is too long",
    "reduce the length",
    "exceed context limit",
)
REFUSED_RETRY_DELAY = 0.25  # seconds between attempts when the connection is refused
RETRYABLE_STREAM_ERRORS = {"overloaded_error", "api_error", "rate_limit_error", "server_error"}


class ProviderFailure(ProviderError):
    """A ProviderError that also carries how long the server asked us to wait."""

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = False,
        status: int | None = None,
        retry_after: float | None = None,
    ):
        super().__init__(message, retryable=retryable, status=status)
        self.retry_after = retry_after


class ContextOverflow(ProviderFailure, ContextTooLong):
    """A provider's "prompt is too long" refusal (never retried as it is: compact first)."""


@dataclass(frozen=True)
class Target:
    """What an error message may name: the server, the key variable, the model."""

    label: str  # "the Anthropic API"
    key_variable: str  # "ANTHROPIC_API_KEY"
    model: str
    base_url: str | None
    api_key: str | None
    connect_timeout: float
    stream_timeout: float
    # Where compatible servers usually serve this API ("/v1"), for a base URL given without it.
    api_prefix: str = ""
    # The password of a base URL like http://user:pass@host/v1 (shown URLs leave it out).
    url_password: str | None = None

    @property
    def server(self) -> str:
        return self.base_url or self.label

    def scrub(self, text: str, limit: int = 300) -> str:
        """``text`` without the API key or a base URL's password, cut to ``limit`` characters."""
        for secret in (self.api_key, self.url_password):
            if secret and len(secret) >= 4:
                text = text.replace(secret, "***")
        text = " ".join(text.split())
        return text if len(text) <= limit else text[: limit - 1] + "…"


def retrying(
    settings: ProviderSettings,
    attempt: Callable[[], Iterator[Chunk]],
    *,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[Chunk]:
    """Yield from ``attempt()``, calling it again after a retryable ProviderError.

    Only failures before the first chunk are retried, at most
    ``settings.max_retries`` times, waiting a jittered exponential backoff or the
    server's Retry-After. A failure after output is raised as it is.
    """
    failures = 0
    spent: list[Usage] = []  # what failed attempts were billed for (a cut stream's input)
    while True:
        produced = False
        try:
            # closing(): a consumer that stops early closes the HTTP stream now, not at GC.
            with closing(attempt()) as chunks:
                for chunk in chunks:
                    if not produced:
                        # Before this attempt's own usage, so the last Usage stays its own.
                        yield from spent
                        spent = []
                    produced = True
                    yield chunk
            return
        except ProviderError as err:
            if err.spent is not None:
                spent.append(err.spent)
            if produced or not err.retryable or failures >= settings.max_retries:
                total = total_usage(spent) if spent else None
                if failures and not produced:
                    gave_up = ProviderError(
                        f"{err.message} (gave up after {failures + 1} attempts)",
                        retryable=err.retryable,
                        status=err.status,
                    )
                    gave_up.spent = total
                    raise gave_up from err
                err.spent = total
                raise
            delay = backoff_delay(failures, settings, getattr(err, "retry_after", None))
            log.info("model call failed (%s); retrying in %.2f s", err.message, delay)
            sleep(delay)
            failures += 1


def backoff_delay(
    failures: int,
    settings: ProviderSettings,
    retry_after: float | None = None,
    rand: Callable[[], float] = random.random,
) -> float:
    """Seconds to wait before retry number ``failures + 1``.

    The server's Retry-After wins (capped at ``retry_max_delay`` so a hostile or
    confused server cannot park us for an hour); otherwise exponential backoff
    with jitter, so that many clients retrying together spread out.
    """
    if retry_after is not None:
        return max(0.0, min(retry_after, settings.retry_max_delay))
    ceiling = min(settings.retry_max_delay, settings.retry_base_delay * 2**failures)
    return ceiling * (0.5 + rand() / 2)


def parse_retry_after(headers: Any, now: float | None = None) -> float | None:
    """Seconds from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    now = time.time() if now is None else now
    return max(0.0, when.timestamp() - now)


def transport_errors() -> tuple[tuple[type[BaseException], ...], tuple[type[BaseException], ...]]:
    """(timeout classes, transport error classes) of whichever HTTP library the SDKs loaded.

    Newer SDKs use ``httpx2``, older ones ``httpx``; a stream read that fails
    mid-body surfaces the library's own exception rather than the SDK's.
    """
    timeouts: list[type[BaseException]] = []
    transports: list[type[BaseException]] = []
    for name in ("httpx2", "httpx"):
        module = sys.modules.get(name)
        if module is not None:
            timeouts.append(module.TimeoutException)
            transports.append(module.TransportError)
    return tuple(timeouts), tuple(transports)


def translate(
    exc: BaseException, sdk: Any, target: Target, *, streaming: bool
) -> ProviderFailure | None:
    """The ProviderFailure for an SDK or transport exception, or None if it isn't one.

    ``streaming`` says whether the response had started: a timeout then is a
    stalled stream, a dropped connection a stream that ended early.
    """
    timeouts, transports = transport_errors()
    if isinstance(exc, json.JSONDecodeError):
        return ProviderFailure(
            f"{target.label} sent a stream chunk that is not valid JSON: try again", retryable=True
        )
    if isinstance(exc, (sdk.APITimeoutError, timeouts)):
        return _timeout(exc, target, streaming=streaming)
    if isinstance(exc, (sdk.APIConnectionError, transports)):
        if streaming:
            return ProviderFailure(
                "the model stream ended early (the connection was lost): try again",
                retryable=True,
            )
        if target.base_url:
            text = f"cannot reach {target.base_url}: is the server running?"
        else:
            text = f"cannot reach {target.label}: check the network connection"
        # Nothing listening: a server starting up comes back within moments, a
        # stopped one never; retry quickly rather than back off for seconds.
        refused = REFUSED_RETRY_DELAY if _caused_by(exc, "ConnectionRefusedError") else None
        return ProviderFailure(text, retryable=True, retry_after=refused)
    if isinstance(exc, sdk.APIStatusError) and exc.status_code >= 400:
        return _status_failure(exc, target)
    if isinstance(exc, sdk.APIError):
        # An error event inside a 200 stream (an OpenAI-compatible server's {"error": ...} chunk).
        return stream_failure(exc.body, target, fallback=str(exc), kind=getattr(exc, "type", None))
    return None


def stream_failure(
    body: object, target: Target, *, fallback: str = "", kind: str | None = None
) -> ProviderFailure:
    """The ProviderFailure for an error event inside a 200 stream (e.g. ``overloaded_error``)."""
    found, message, _ = _error_fields(body)
    kind = found or kind or "error"
    text = target.scrub(message or fallback or "no details given")
    return ProviderFailure(
        f"{target.label} reported an error mid-stream ({kind}): {text}",
        retryable=kind in RETRYABLE_STREAM_ERRORS,
    )


def _timeout(exc: BaseException, target: Target, *, streaming: bool) -> ProviderFailure:
    if streaming:
        seconds = f"{target.stream_timeout:g}"
        return ProviderFailure(
            f"the model stream stalled for {seconds} s: try again (HERMES_STREAM_TIMEOUT sets the limit)",
            retryable=True,
        )
    if _caused_by(exc, "ConnectTimeout"):
        return ProviderFailure(
            f"cannot reach {target.server}: no connection within {target.connect_timeout:g} s",
            retryable=True,
        )
    return ProviderFailure(
        f"the model did not start answering within {target.stream_timeout:g} s: try again",
        retryable=True,
    )


def _caused_by(exc: BaseException, class_name: str) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        if type(seen).__name__ == class_name:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _error_fields(body: object) -> tuple[str | None, str | None, str | None]:
    """(type, message, code) from either API's error body."""
    if not isinstance(body, dict):
        text = str(body).strip() if body else ""
        # A proxy's HTML error page says nothing a user can act on.
        return None, (text if text and not text.startswith("<") else None), None
    error = body.get("error", body)
    if not isinstance(error, dict):
        return None, str(error), None
    kind, message, code = error.get("type"), error.get("message"), error.get("code")
    return (
        str(kind) if kind else None,
        str(message) if message else None,
        str(code) if code else None,
    )


def _status_failure(exc: Any, target: Target) -> ProviderFailure:
    status: int = exc.status_code
    kind, message, code = _error_fields(exc.body)
    detail = target.scrub(message or f"HTTP {status}")
    retry_after = parse_retry_after(getattr(exc.response, "headers", None))
    where = f" (server {target.base_url})" if target.base_url else ""

    def fail(text: str, retryable: bool = False) -> ProviderFailure:
        return ProviderFailure(text, retryable=retryable, status=status, retry_after=retry_after)

    if status in (401, 403):
        return fail(f"authentication failed ({status}): check {target.key_variable}{where}")
    if status == 404:
        hint = " (or check that the base URL is right)" if target.base_url else ""
        if target.base_url and target.api_prefix and _has_no_path(target.base_url):
            root = target.base_url.rstrip("/")
            hint = f" (or, if the server serves its API under {target.api_prefix}, try {root}{target.api_prefix})"
        return fail(
            f"model {target.model!r} not found: set HERMES_MODEL to a model that "
            f"{target.server} serves{hint}"
        )
    lowered = f"{message or ''} {code or ''}".lower()
    if status in (400, 413, 422) and any(h in lowered for h in CONTEXT_TOO_LONG_HINTS):
        return ContextOverflow(
            f"the conversation is too long for {target.model}'s context window even after "
            "compaction: set HERMES_CONTEXT_WINDOW to the model's real window, or start a new "
            "session (/new)",
            status=status,
        )
    if status == 413:
        return fail(f"the request is too large for {target.server}: {detail}")
    if status == 402 or code == "insufficient_quota" or kind == "billing_error":
        return fail(f"{target.label} refused for billing or quota reasons: {detail}")
    if status == 429:
        return fail(f"rate limited by {target.label} (429): {detail}", retryable=True)
    if status == 529 or kind == "overloaded_error":
        return fail(f"{target.label} is overloaded ({status}): {detail}", retryable=True)
    if status in (408, 409) or status >= 500:
        return fail(f"{target.label} had a server error ({status}): {detail}", retryable=True)
    return fail(f"{target.label} rejected the request ({status}): {detail}")


def target_for(
    settings: ProviderSettings,
    *,
    label: str,
    key_variable: str,
    default_base_url: str | None = None,
    api_prefix: str = "",
) -> Target:
    """The Target for a provider's settings; a custom base URL names that server instead."""
    custom = settings.base_url and settings.base_url.rstrip("/") != (default_base_url or "").rstrip(
        "/"
    )
    shown = shown_url(settings.base_url) if custom else None
    return Target(
        label=f"the model server at {shown}" if custom else label,
        key_variable=key_variable,
        model=settings.model,
        base_url=shown,
        api_key=settings.api_key,
        connect_timeout=settings.connect_timeout,
        stream_timeout=settings.stream_timeout,
        api_prefix=api_prefix,
        url_password=urlsplit(settings.base_url or "").password,
    )


def shown_url(url: str) -> str:
    """``url`` without the user and password a proxy's URL may carry (user:pass@host)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


def _has_no_path(url: str) -> bool:
    return urlsplit(url).path.strip("/") == ""

"""`hermes doctor`'s provider check: can the configured model server be reached?"""

from __future__ import annotations

from hermes.cli.doctor_checks import Check, first_line, mask
from hermes.config import Config, key_variable
from hermes.errors import HermesError

PROBE_TIMEOUT = 5.0
ANTHROPIC_VERSION = "2023-06-01"
OPENAI_DEFAULT_BASE = "https://api.openai.com/v1"
ANTHROPIC_DEFAULT_BASE = "https://api.anthropic.com"


def check_provider(config: Config) -> Check:
    """Reach the provider cheaply: list its models; if it has no such route, ask for 1 token."""
    import httpx

    if config.provider is None or not config.api_key:
        return Check("provider", "warn", "skipped: no provider configured", "See configuration.")
    if config.provider not in ("anthropic", "openai", "openrouter"):
        # A plugin provider: only it knows how to reach its server.
        return _probe_completion(config, f"provider plugin {config.provider!r}")
    if config.provider == "anthropic":
        from hermes.providers.anthropic import sdk_base_url

        # As the provider does: "http://host/v1" must not become /v1/v1/models.
        base = sdk_base_url(config.base_url) or ANTHROPIC_DEFAULT_BASE
        url = f"{base}/v1/models"
        headers = {"x-api-key": config.api_key, "anthropic-version": ANTHROPIC_VERSION}
    else:
        base = (config.base_url or OPENAI_DEFAULT_BASE).rstrip("/")
        url = f"{base}/models"
        headers = {"Authorization": f"Bearer {config.api_key}"}
    variable = key_variable(config.provider)
    base_hint = (
        "the base URL (HERMES_BASE_URL, or the SDK's own *_BASE_URL)"
        if config.base_url
        else "your network connection"
    )
    try:
        response = httpx.get(url, headers=headers, timeout=PROBE_TIMEOUT)
    except httpx.TimeoutException:
        return Check(
            "provider",
            "fail",
            f"{base} did not answer within {PROBE_TIMEOUT:.0f} s",
            f"Check {base_hint} (is the server running and reachable?).",
        )
    except httpx.HTTPError as exc:
        return Check(
            "provider",
            "fail",
            f"cannot reach {base}: {first_line(exc)}",
            f"Check {base_hint} (is the server running? is the URL right?).",
        )
    if response.status_code in (401, 403):
        return Check(
            "provider",
            "fail",
            f"{base} rejected the key {mask(config.api_key)} (HTTP {response.status_code})",
            f"Set {variable} to a valid key for {config.provider}.",
        )
    if response.status_code in (404, 405):
        # Some OpenAI-compatible servers have no model list; a 1-token answer proves it works.
        return _probe_completion(config, base)
    if response.status_code >= 400:
        return Check(
            "provider",
            "fail",
            f"{url} answered HTTP {response.status_code}",
            "Try again later; if it persists check the provider's status page or HERMES_BASE_URL.",
        )
    return _model_listed(config, base, response)


def _model_listed(config: Config, base: str, response) -> Check:
    try:
        listed = {str(item.get("id")) for item in response.json().get("data", [])}
    except (ValueError, AttributeError):
        listed = set()
    if listed and config.model not in listed:
        shown = ", ".join(sorted(listed)[:5])
        return Check(
            "provider",
            "warn",
            f"{base} is reachable, but does not list model {config.model!r} (it has: {shown}…)",
            "Set HERMES_MODEL to one of the listed models.",
        )
    return Check("provider", "ok", f"{base} is reachable and accepts the key")


def _probe_completion(config: Config, base: str) -> Check:
    from hermes.providers.registry import create_provider

    quick = config.with_overrides(max_retries=0, connect_timeout=PROBE_TIMEOUT, stream_timeout=10.0)
    try:
        create_provider(quick).complete("Reply with one word.", "ping", max_tokens=1)
    except HermesError as exc:
        status = getattr(exc, "status", None)
        if status in (401, 403):
            fix = f"Set {key_variable(config.provider)} to a valid key."
        else:
            fix = "Check HERMES_BASE_URL and HERMES_MODEL, and that the server is running."
        return Check("provider", "fail", f"{base}: {exc.message}", fix)
    return Check("provider", "ok", f"{base} answered a 1-token request")

"""Read a model's context window from the server instead of guessing: vLLM reports `max_model_len`."""

from __future__ import annotations

import json
from typing import Any

from agentcfg.errors import AgentcfgError
from agentcfg.key_rules import auth_headers
from agentcfg.profiles import Profile

TIMEOUT = 5.0
# The whole answer, not each read (httpx's timeout): a server that trickles bytes, or never stops sending,
# must not hang `profile add --detect` or fill memory. OpenRouter's full list is under 1 MiB.
DEADLINE = 15.0
MODELS_LIMIT = 16 << 20


class KeyNeeded(AgentcfgError):
    """The server answered 401/403 to GET /models: it wants a key (`sent`: the one sent was refused).
    The command that ran adds the hint: the same command, given the key (see cli.profile_add)."""

    def __init__(self, url: str, status: int, *, sent: bool) -> None:
        what = "refuses the key sent" if sent else "wants a key"
        super().__init__(
            f"{url} answered {status}: the server {what}",
            hint="Give --detect the key with --key-stdin (it asks for it, or reads one line of stdin), "
            "or give the window yourself with --context-window.",
        )
        self.sent = sent


def list_models(profile: Profile, key: str | None, timeout: float = TIMEOUT) -> list[dict[str, Any]]:
    """`GET {base_url}/models` of the profile; its key (if any) goes only to the profile's own host."""
    import httpx

    url = profile.base_url.rstrip("/") + "/models"
    headers = auth_headers(profile, url, key)
    try:
        status, body = _get(url, headers, timeout)
    except httpx.HTTPError as exc:
        raise AgentcfgError(
            f"could not reach {url}: {type(exc).__name__}: {exc}",
            hint="Is the server running? Or give the window yourself with --context-window N.",
        ) from None
    if status in (401, 403):
        raise KeyNeeded(url, status, sent=bool(headers))
    try:
        data = json.loads(body)["data"]
        assert isinstance(data, list)
    except (ValueError, KeyError, TypeError, AssertionError, RecursionError):
        raise AgentcfgError(
            f"{url} answered {status} without an OpenAI model list",
            hint="Check the base URL (it usually ends in /v1), or give --context-window N.",
        ) from None
    return [m for m in data if isinstance(m, dict)]


def _get(url: str, headers: dict[str, str], timeout: float) -> tuple[int, bytes]:
    """GET `url`: its status and body, given up on past MODELS_LIMIT bytes or DEADLINE seconds."""
    import time

    import httpx

    hint = "Is this the API's base URL? Or give the window yourself with --context-window N."
    started, chunks, size = time.monotonic(), [], 0
    with httpx.stream("GET", url, headers=headers, timeout=timeout) as response:
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > MODELS_LIMIT:
                raise AgentcfgError(f"{url} sends more than {MODELS_LIMIT >> 20} MiB: not a model list", hint=hint)
            if time.monotonic() - started > DEADLINE:
                raise AgentcfgError(f"{url} did not send its model list within {DEADLINE:.0f} s", hint=hint)
            chunks.append(chunk)
        return response.status_code, b"".join(chunks)


def context_window(models: list[dict[str, Any]], model: str | None, url: str) -> tuple[str, int]:
    """(model id, max_model_len) for `model`, or for the only model served when `model` is None."""
    ids = [str(m.get("id")) for m in models]
    chosen: dict[str, Any] | None
    if model is None:
        if len(models) != 1:
            raise AgentcfgError(f"{url} serves {len(models)} models ({', '.join(ids)}); say which with --model")
        chosen = models[0]
    else:
        chosen = next((m for m in models if m.get("id") == model), None)
        if chosen is None:
            raise AgentcfgError(
                f"{url} does not serve a model named {model!r}; it serves: {', '.join(ids) or 'none'}",
                hint="Use one of those ids with --model (vLLM: the --served-model-name).",
            )
    window = chosen.get("max_model_len")
    if not isinstance(window, int) or window <= 0:
        raise AgentcfgError(
            f"{url} does not report max_model_len for {chosen.get('id')!r} (only vLLM does)",
            hint="Give the window yourself with --context-window N.",
        )
    return str(chosen["id"]), window


def anthropic_base_url(models: list[dict[str, Any]], model: str, base_url: str) -> str | None:
    """Claude Code's base URL when the server is vLLM, which serves the Anthropic Messages API
    (`/v1/messages`) beside the OpenAI one: the OpenAI base without `/v1` (Claude Code appends it)."""
    chosen = next((m for m in models if m.get("id") == model), {})
    base = base_url.rstrip("/")
    if chosen.get("owned_by") == "vllm" and base.endswith("/v1"):
        return base[: -len("/v1")]
    return None

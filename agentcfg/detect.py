"""Read a model's context window from the server instead of guessing: vLLM reports `max_model_len`."""

from __future__ import annotations

from typing import Any

from agentcfg.errors import AgentcfgError
from agentcfg.profiles import Profile

TIMEOUT = 5.0


def list_models(profile: Profile, key: str | None, timeout: float = TIMEOUT) -> list[dict[str, Any]]:
    """`GET {base_url}/models` of the profile; its key (if any) goes only to the profile's own host."""
    import httpx

    from agentcfg.keystore import auth_headers

    url = profile.base_url.rstrip("/") + "/models"
    headers = auth_headers(profile, url, key)
    try:
        response = httpx.get(url, headers=headers, timeout=timeout)
    except httpx.HTTPError as exc:
        raise AgentcfgError(
            f"could not reach {url}: {type(exc).__name__}: {exc}",
            hint="Is the server running? Or give the window yourself with --context-window N.",
        ) from None
    if response.status_code in (401, 403):
        raise AgentcfgError(
            f"{url} answered {response.status_code}: the server wants a key",
            hint="Store the key first (`agentcfg key set NAME` after adding without --detect, or export "
            "the --key-env variable), or give --context-window N.",
        )
    try:
        data = response.json()["data"]
        assert isinstance(data, list)
    except (ValueError, KeyError, TypeError, AssertionError):
        raise AgentcfgError(
            f"{url} answered {response.status_code} without an OpenAI model list",
            hint="Check the base URL (it usually ends in /v1), or give --context-window N.",
        ) from None
    return [m for m in data if isinstance(m, dict)]


def context_window(models: list[dict[str, Any]], model: str | None, url: str) -> tuple[str, int]:
    """(model id, max_model_len) for `model`, or for the only model served when `model` is None."""
    ids = [str(m.get("id")) for m in models]
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

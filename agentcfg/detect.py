"""Read a model's context window from the server instead of guessing: vLLM reports `max_model_len`."""

from __future__ import annotations

from typing import Any

from agentcfg.errors import AgentcfgError

TIMEOUT = 5.0


def list_models(base_url: str, key: str | None, timeout: float = TIMEOUT) -> list[dict[str, Any]]:
    """`GET {base_url}/models`. The key (if any) goes only to this URL: the profile's own host."""
    import httpx

    url = base_url.rstrip("/") + "/models"
    headers = {"Authorization": f"Bearer {key}"} if key else {}
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
            hint="Pass --key-env VAR with VAR set to the key, or give --context-window N.",
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

"""Doctor's rules, pure: what each agent will send (Target), what came back (probe Results) and facts
about a local server in; Findings out. No I/O here: every rule is tested with plain data and the
responses captured from real servers in ../shared/fixtures.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from agentcfg import budget, fixes
from agentcfg.doctor.model import BLOCKING, EXPLAINS, FAIL, PASS, REFUSALS, WARN, Finding, Target
from agentcfg.doctor.probes import Result
from agentcfg.doctor.replies import (
    error_message,
    is_event_stream,
    looks_html,
    max_model_len,
    model_ids,
    parse_json,
    sse_events,
)


@dataclass(frozen=True)
class Verdict:
    """One probe's outcome: ok, or the finding id that names what went wrong."""

    ok: bool
    id: str | None = None
    message: str = ""
    upstream: bool = False  # a gateway passed on what its upstream said (LiteLLM's "model group ... failed")


def _snippet(result: Result, limit: int = 160) -> str:
    text = " ".join(result.body.split())
    return text[:limit] + ("…" if len(text) > limit else "")


def classify(result: Result) -> Verdict:
    """What a probe's answer means, from its transport error, status, content type and body."""
    if result.error == "timeout" and result.status is not None:
        return Verdict(False, "server-slow", f"HTTP {result.status}, then no complete answer: {result.detail}")
    if result.error == "timeout" and result.extra.get("connected") and not result.probe.proxy:
        return Verdict(False, "server-not-answering", f"connected, then no answer: {result.detail}")
    if result.error:
        kind = {
            "tls": "tls-untrusted",
            "proxy": "proxy-unreachable",
            "protocol": "key-malformed",
            "redirects": "base-url-redirect",
        }
        return Verdict(False, kind.get(result.error, "server-unreachable"), f"{result.error}: {result.detail}")
    status, text = result.status or 0, result.body
    if 300 <= status < 400:  # a redirect the probe could not follow (no Location), as the agents cannot
        location = result.extra.get("location")
        where = f"redirected to {location}" if location else "a redirect without a Location header"
        return Verdict(False, "base-url-redirect", f"HTTP {status}, {where}")
    if status < 400:
        if looks_html(result):
            return Verdict(False, "response-not-openai", f"HTTP {status} with an HTML page: {_snippet(result, 80)}")
        return _check_shape(result)
    message = error_message(text) or ""
    where = f"HTTP {status}" + (f": {message}" if message else f": {_snippet(result)}" if text.strip() else "")
    return _from_error(status, message, where)


# LiteLLM names the exception its upstream raised: `litellm.NotFoundError: NotFoundError: OpenAIException -
# The model `gpt-retired` does not exist` (litellm/litellm_core_utils/exception_mapping_utils.py maps an
# upstream 404 to NotFoundError), then "LiteLLM: model group 'NAME' failed with the error above".
_UPSTREAM_NOT_FOUND = re.compile(r"litellm\.notfounderror|\bmodel_not_found\b|not_found_error", re.IGNORECASE)
_GONE_MODEL = re.compile(r"[Tt]he model [`'\"]([^`'\"]+)[`'\"] does not exist")


def upstream_model(message: str) -> str | None:
    """The model a gateway's upstream said does not exist (`gpt-retired`), if its message names one."""
    match = _GONE_MODEL.search(message)
    return match.group(1) if match else None


def _from_error(status: int, message: str, where: str) -> Verdict:
    """What an error's status and message mean (an HTTP error, or an error event inside a stream)."""
    lowered = message.lower()
    gateway = "litellm." in lowered  # LiteLLM passes on what the provider behind it said
    if gateway and _UPSTREAM_NOT_FOUND.search(message) and "model" in lowered:
        return Verdict(False, "model-not-found", where, upstream=True)
    if status == 429:
        return Verdict(False, "rate-limited", where)
    if "model group" in lowered and gateway:  # the gateway's own upstream failed, not our request
        return Verdict(False, "server-error", where)
    if status in (401, 403) or "no connected db" in lowered or "malformed api key" in lowered:
        if "oauth token has expired" in lowered:
            return Verdict(False, "claude-oauth-expired", where)
        return Verdict(False, "key-rejected", where)
    if "tool choice requires" in lowered or "tool-call-parser" in lowered or "enable-auto-tool-choice" in lowered:
        return Verdict(False, "tool-parser-missing", where)
    if re.search(r"max_(completion_)?tokens=\d+ cannot be greater than max_model_len", message) or (
        "maximum context length" in lowered or "prompt is too long" in lowered or "longer than the maximum" in lowered
    ):
        return Verdict(False, "context-limit-exceeded", where)
    if "model" in lowered and any(s in lowered for s in ("does not exist", "invalid model", "model not found")):
        return Verdict(False, "model-not-found", where)
    if status == 404:
        return Verdict(False, "base-url-path", where)
    if status >= 500:
        return Verdict(False, "server-error", where)
    return Verdict(False, "request-rejected", where)


def _check_shape(result: Result) -> Verdict:
    """A 2xx answer: is it what this probe's client can parse? Of an answer doctor stopped reading (truncated),
    what was read: the cut tail is evidence of nothing, and whether the stream ended well is not known."""
    kind, text = result.probe.kind, result.body
    if result.truncated and not result.probe.stream and text.lstrip().startswith("{"):
        return Verdict(True)  # JSON longer than doctor reads (a big gateway's model list): cut, it parses as nothing
    if kind.startswith("models"):
        data = parse_json(text)
        if isinstance(data, dict) and isinstance(data.get("data"), list):
            return Verdict(True)
        return Verdict(False, "response-not-openai", f"no model list (`data`) in: {_snippet(result, 100)}")
    if not result.probe.stream:
        data = parse_json(text)
        if not isinstance(data, dict):
            return Verdict(False, "response-not-openai", f"not JSON: {_snippet(result, 100)}")
        if error_message(data):
            return Verdict(False, "response-not-openai", f"an error object with status 200: {error_message(data)}")
        wanted = {"chat": "choices", "responses": "output"}.get(kind, "content")
        if wanted not in data:
            return Verdict(False, "response-not-openai", f"JSON without `{wanted}`: {_snippet(result, 100)}")
        return Verdict(True)
    if not is_event_stream(result):
        data = parse_json(text)
        if kind == "messages-stream" and isinstance(data, dict) and isinstance(data.get("content"), list):
            # Claude Code 2.1 reads a whole message where it asked for a stream (seen against LiteLLM's
            # mock models, which answer /v1/messages so).
            return Verdict(True)
        what = "JSON" if data is not None else "a body"
        return Verdict(
            False,
            "stream-broken",
            f"asked for a stream, got {what} ({result.content_type or 'no type'}): {_snippet(result, 100)}",
        )
    ended = not result.truncated  # the stream's end was read: the checks of how it ends apply
    events = sse_events(text, whole=ended)
    payloads = [e for e in events if isinstance(e, dict)]
    if not events or not payloads:
        if not ended:
            return Verdict(
                False, "stream-broken", f"no complete `data:` event with JSON in its first {len(text):,} characters"
            )
        return Verdict(False, "stream-broken", f"no `data:` events with JSON: {_snippet(result, 100)}")
    if any(e is None for e in events):
        return Verdict(False, "stream-broken", "a `data:` line that is not JSON")
    if message := next((error_message(e) for e in payloads if error_message(e)), None):
        where = f"HTTP {result.status}, then an error inside the stream: {message}"
        named = _from_error(result.status or 200, message, where)
        if named.id == "model-not-found" and named.upstream:  # a gateway's upstream, mid-stream: same cause
            return named
        return Verdict(False, "stream-broken", f"an error inside the stream: {message}")
    # What each agent's parser insists on, seen by running them (codex 0.171, qwen-code 0.15, Claude Code 2.1).
    if kind == "chat-stream":
        if not any("choices" in e for e in payloads):
            return Verdict(False, "response-not-openai", "stream events without `choices`")
        if ended and events[-1] != "[DONE]":
            return Verdict(False, "stream-broken", "the stream ended without `data: [DONE]`")
        choices = [c for e in payloads for c in e.get("choices") or [] if isinstance(c, dict)]
        if ended and not any(c.get("finish_reason") for c in choices):
            return Verdict(
                False,
                "stream-broken",
                'no chunk has a `finish_reason` (qwen-code: "Model stream ended without a finish reason")',
            )
    elif kind == "responses-stream":
        types = [e.get("type") for e in payloads]
        if ended and "response.completed" not in types and "response.incomplete" not in types:
            return Verdict(False, "stream-broken", "the Responses stream ended without `response.completed`")
        if "response.output_text.delta" in types and "response.output_item.added" not in types:
            return Verdict(
                False,
                "stream-broken",
                'text deltas without `response.output_item.added` (Codex: "OutputTextDelta without active item")',
            )
    elif kind == "messages-stream":
        types = [e.get("type") for e in payloads]
        if ended and "message_stop" not in types:
            return Verdict(False, "stream-broken", "the Messages stream ended without `message_stop`")
        start = next((e.get("message") for e in payloads if e.get("type") == "message_start"), None)
        if (
            not isinstance(start, dict)
            or "usage" not in start
            or ("content_block_delta" in types and "content_block_start" not in types)
        ):
            return Verdict(
                False,
                "stream-broken",
                "`message_start` without a full message, or deltas without "
                '`content_block_start` (Claude Code: "empty or malformed response")',
            )
    return Verdict(True)


QWEN_FIRST_OUTPUT = 8000  # qwen-code's first output limit when its settings set none
# The variable each agent adds extra CA certificates from (Codex adds them to the system store).
EXTRA_CA = {"codex": "CODEX_CA_CERTIFICATE", "qwen": "NODE_EXTRA_CA_CERTS", "opencode": "NODE_EXTRA_CA_CERTS"}
EXTRA_CA["claude"] = "NODE_EXTRA_CA_CERTS"

# -- the rules ------------------------------------------------------------------------------------------

PRIMARY = {
    "codex": ("responses-stream",),
    "qwen": ("chat-stream", "chat"),
    "opencode": ("chat-stream", "chat"),
    "claude": ("messages-stream",),
}
ACCEPTED = {
    "server-unreachable": "reached the server",
    "key-rejected": "the key was accepted (or none is needed)",
    "tool-parser-missing": "a request with tools was accepted",
    "stream-broken": "streaming works",
    "response-not-openai": "answers in the shape the agent parses",
}


def _host(url: str) -> str:
    from urllib.parse import urlsplit

    return urlsplit(url).hostname or ""


def _profile_fix(target: Target, **fields: object) -> str:
    """`agentcfg profile set P field=value && agentcfg switch P --agent A`, or "" where no profile is
    known or it is a project's (`profile set` refuses those: the project's file is the project's)."""
    if not target.profile or target.profile_project:
        return ""
    return fixes.then(fixes.profile_set(target.profile, **fields), fixes.switch(target.profile, target.agent))


def _key_advice(target: Target) -> tuple[str, str]:
    """(fix, hint) that give the agent its key."""
    if target.profile and target.key_env:
        # `key set` asks for the key and keeps it in the keyring; `exec` starts the agent with it in its variable
        fix = fixes.then(fixes.key_set(target.profile), fixes.exec_agent(target.profile, target.agent))
        return fix, f"or export {target.key_env} with the key in the shell you start {target.agent} from"
    if target.key_env:
        return "", f"set {target.key_env} to the key for {target.base_url} in the shell you start {target.agent} from"
    return "", (
        f"give {target.agent} the key for {target.base_url}: a profile for this server with key_env names the "
        "variable it reads the key from (agentcfg profile add --help), then switch to it"
    )


def _problem(target: Target, verdict: Verdict, seen: dict[str, Result]) -> Finding:
    """A failed probe as the finding that names its cause and the fix."""
    from agentcfg.profiles import is_loopback

    agent, base, evidence = target.agent, target.base_url or "", verdict.message
    vid = verdict.id or "request-rejected"
    if vid == "key-rejected" and target.key_withheld:  # sent without the key on purpose: not a wrong key
        return Finding(
            "key-wrong-host",
            FAIL,
            agent,
            f"{base} wants a key; doctor withheld the one {agent} would send",
            evidence,
            hint="see the key-wrong-host finding above: that key belongs to another host",
        )
    if vid == "key-rejected" and not target.key:
        fix, hint = _key_advice(target)
        return Finding("key-missing", FAIL, agent, f"{base} wants a key and {agent} sends none", evidence, fix, hint)
    if vid == "key-rejected":
        why = ""
        if target.key_header == "x-api-key":  # vLLM's --api-key reads only Bearer; Claude sends this key as x-api-key
            if '"unauthorized"' in evidence.lower() or evidence.endswith(": Unauthorized"):
                why = " (vLLM started with --api-key checks only `Authorization: Bearer`)"
            why += "; Claude Code sends ANTHROPIC_API_KEY as x-api-key, ANTHROPIC_AUTH_TOKEN as Bearer"
        fix, hint = _key_advice(target)
        if target.key_source.startswith("env ") and target.profile:
            variable = target.key_source.removeprefix("env ").split()[0]
            hint = (
                f"the key comes from {variable} in this shell; if the keyring holds the right one, "
                f"`unset {variable}` (agentcfg exec gives the keyring's key instead), else store the right one"
            )
        return Finding(
            "key-rejected", FAIL, agent, f"{base} refuses the key from {target.key_source}{why}", evidence, fix, hint
        )
    if vid == "claude-oauth-expired":
        return Finding(
            vid,
            FAIL,
            agent,
            "the claude.ai login has expired",
            evidence,
            fixes.switch(target.profile, "claude") if target.profile else "",
            "run `claude` and /login again"
            + (", or point Claude Code at this profile's key with the fix" if target.profile else ""),
        )
    if vid == "server-unreachable":
        return _unreachable(target, verdict)
    if vid == "server-not-answering":
        return _not_answering(target, verdict, seen)
    if vid == "model-not-found" and verdict.upstream:
        return _upstream_model_gone(target, verdict, seen)
    if vid == "model-not-found":
        import difflib

        ids = model_ids(seen.get("models"))
        close = ids if len(ids) == 1 else difflib.get_close_matches(target.model or "", ids, n=1, cutoff=0.3)
        offer = f"; the server has: {', '.join(ids[:8])}" if ids else ""
        hint = f"use model {close[0]!r}" if close else "use one of the server's model ids"
        if is_loopback(_host(base)) and target.model:
            hint += f", or start vLLM with --served-model-name {target.model}"
        return Finding(
            vid,
            FAIL,
            agent,
            f"the server has no model {target.model!r}{offer}",
            evidence,
            _profile_fix(target, model=close[0]) if close and close[0] != target.model else "",
            hint,
        )
    if vid == "base-url-path":
        alt = seen.get("models-alt")
        models_ok = "models" in seen and classify(seen["models"]).ok
        if target.agent == "codex" and models_ok and "/responses" in seen_url(seen, target):
            return Finding(
                "responses-api-missing",
                FAIL,
                agent,
                f"{base}/responses does not exist: Codex speaks only the Responses API",
                evidence,
                hint="point Codex at a server with /v1/responses (vLLM serves it; some gateways do not)",
            )
        if alt is not None and classify(alt).ok and not models_ok:
            good = alt.probe.url.removesuffix("/models")
            field = "anthropic_base_url" if target.protocol == "anthropic" else "base_url"
            fix = _profile_fix(target, **{field: good})
            return Finding(
                vid,
                FAIL,
                agent,
                f"{base} is the wrong path: {good} works",
                evidence,
                fix,
                "" if fix else f"use {good} as the base URL",
            )
        if target.agent == "claude" and base.rstrip("/").endswith("/v1"):
            good = base.rstrip("/")[:-3]
            fix = _profile_fix(target, anthropic_base_url=good)
            return Finding(
                vid,
                FAIL,
                agent,
                "ANTHROPIC_BASE_URL ends in /v1; Claude Code appends /v1/messages",
                evidence,
                fix,
                "" if fix else f"set ANTHROPIC_BASE_URL to {good}",
            )
        return Finding(
            vid,
            FAIL,
            agent,
            f"{seen_url(seen, target)} answers 404",
            evidence,
            hint="check the base URL: vLLM serves /v1/...; a gateway may use /api or /api/v1",
        )
    if vid == "tool-parser-missing":
        summary = "the server rejects requests with tools: no tool parser"
        if agent == "codex":
            summary = "the server has no tool parser: Codex exits 0 but never runs a tool"
        return Finding(
            vid,
            FAIL,
            agent,
            summary,
            evidence,
            hint="restart vLLM with --enable-auto-tool-choice --tool-call-parser and the parser for your model "
            "(hermes, qwen3_coder, deepseek_v31, ...)",
        )
    if vid == "tls-untrusted":
        variable = EXTRA_CA.get(agent, "SSL_CERT_FILE")
        return Finding(
            vid,
            FAIL,
            agent,
            f"{_host(base)}'s certificate is not trusted (self-signed or a private CA)",
            evidence,
            hint=f"export {variable} with the path of the CA certificate (PEM) that signed it, "
            f"in the shell you start {agent} from",
        )
    if vid == "key-malformed":
        fix, hint = _key_advice(target)
        return Finding(
            vid,
            FAIL,
            agent,
            "the key cannot be sent as a header (whitespace or a line break in it)",
            evidence,
            fix,
            "store the key again without the whitespace; " + hint,
        )
    if vid == "context-limit-exceeded":
        window = max_model_len(seen.get("models"), target.model)
        fix = _profile_fix(target, context_window=window) if window else ""
        return Finding(
            vid,
            FAIL,
            agent,
            "the request does not fit the server's window",
            evidence,
            fix,
            "" if fix else "give the agent a context window no larger than the server's max_model_len",
        )
    if vid in ("stream-broken", "response-not-openai"):
        what = "a stream the agent cannot read" if vid == "stream-broken" else "a response the agent cannot parse"
        return Finding(
            vid,
            FAIL,
            agent,
            f"{base} returns {what}",
            evidence,
            hint="check that the base URL is the API itself, not a web page or a proxy that rewrites it",
        )
    if vid == "server-slow":
        return Finding(
            vid,
            WARN,
            agent,
            f"{base} answered but did not finish within the deadline (a slow or busy server, or a long generation)",
            evidence,
            hint="run doctor again with a longer --timeout",
        )
    if vid == "rate-limited":
        return Finding(
            vid, WARN, agent, "the server is rate-limiting this key", evidence, hint="wait, or ask for a higher limit"
        )
    if vid == "server-error":
        return Finding(
            vid,
            FAIL,
            agent,
            f"{base} failed with a server error",
            evidence,
            hint="see the evidence: the server (or a gateway's upstream) says why; try again later",
        )
    return Finding(
        vid, FAIL, agent, f"{base} refused the request", evidence, hint="see the evidence: the server says why"
    )


def _redirect(target: Target, result: Result, verdict: Verdict) -> Finding | None:
    """A request the server redirected (probes follow redirects as every agent does, see probes.REDIRECTS)."""
    hops = result.extra.get("redirects") or []
    if not hops and verdict.id != "base-url-redirect":
        return None
    asked, final = result.probe.url.split("?")[0], str(result.extra.get("final_url", "")).split("?")[0]
    base = (target.base_url or "").rstrip("/")
    field = "anthropic_base_url" if target.protocol == "anthropic" else "base_url"
    fix = ""
    if hops and asked.startswith(base) and final.endswith(tail := asked[len(base) :]) and tail:
        moved = final[: len(final) - len(tail)]
        if moved != base:  # the same API at another address: point the profile there
            fix = _profile_fix(target, **{field: moved})
    chain = " → ".join(f"HTTP {status} to {location}" for status, location in hops)
    if not hops:
        return Finding(
            "base-url-redirect",
            FAIL,
            target.agent,
            f"{asked} answers with a redirect the agents cannot follow",
            verdict.message,
            hint="use the address it should redirect to as the base URL",
        )
    evidence = f"{chain}, then " + ("it works" if verdict.ok else verdict.message)
    downgraded = result.probe.method == "POST" and any(status in (301, 302, 303) for status, _ in hops)
    if verdict.ok:
        return Finding(
            "base-url-redirect",
            WARN,
            target.agent,
            f"{asked} redirects to {final}: the agents follow it, but every request makes the detour",
            evidence,
            fix,
            "" if fix else f"use {final.removesuffix(tail) if tail else final} as the base URL",
        )
    if downgraded:
        return Finding(
            "base-url-redirect",
            FAIL,
            target.agent,
            f"{asked} redirects to {final} with HTTP {hops[0][0]}, so the agent resends its POST there as a GET, "
            "which fails",
            evidence,
            fix,
            "" if fix else "use the address it redirects to as the base URL (https:// for http://, say)",
        )
    return None  # followed as a POST and failed there: the failure's own finding says why


def _unreachable(target: Target, verdict: Verdict) -> Finding:
    return Finding(
        "server-unreachable",
        FAIL,
        target.agent,
        f"nothing listens at {target.base_url} (the connection is refused or the name does not resolve)",
        verdict.message,
        hint="start the server, or check the host and port in the base URL",
    )


def _not_answering(target: Target, verdict: Verdict, seen: dict[str, Result]) -> Finding:
    """The server took the connections but answered none of the agent's requests in time."""
    models = seen.get("models")
    models_answered = models is not None and models.status is not None
    root = re.sub(r"/v1/?$", "", (target.base_url or "").rstrip("/"))
    return Finding(
        "server-not-answering",
        WARN if models_answered else FAIL,
        target.agent,
        f"{target.base_url} accepts connections but sends no answer"
        + (" to the agent's requests (its model list answers)" if models_answered else "")
        + ": the server is up but not answering",
        verdict.message,
        hint=f"it may still be loading the model, or be overloaded: check its log or `curl {root}/health`, "
        "then run doctor again (with a longer --timeout if it is only slow)",
    )


def _upstream_model_gone(target: Target, verdict: Verdict, seen: dict[str, Result]) -> Finding:
    """A gateway (LiteLLM) lists the model, but the provider behind it says the model it maps to is gone."""
    import difflib

    model, ids = target.model or "", model_ids(seen.get("models"))
    gone = upstream_model(verdict.message)
    behind = f" (it maps to {gone!r})" if gone and gone != model else ""
    listed = "lists" if model in ids else "accepts"
    others = [i for i in ids if i != model]
    close = difflib.get_close_matches(model, others, n=1, cutoff=0.8)  # a near namesake only
    offer = f"; other models it lists: {', '.join(others[:8])}" if others else ""
    fix = ""
    if close:
        fix = _profile_fix(target, model=close[0])
    return Finding(
        "model-not-found",
        FAIL,
        target.agent,
        f"the gateway {listed} model {model!r}{behind}, but its upstream provider does not have it: "
        "every request fails",
        verdict.message,
        fix,
        f"ask the gateway's admin to point {model!r} at a model the upstream has, or use another model "
        f"the gateway lists{offer}",
    )


def seen_url(seen: dict[str, Result], target: Target) -> str:
    for kind in PRIMARY.get(target.agent, ()):
        if kind in seen:
            return seen[kind].probe.url.split("?")[0]
    return target.base_url or ""


PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy")


def _bypass(target: Target, host: str) -> tuple[str, str]:
    """(fix, hint) that send this agent's requests to `host` past the proxy."""
    from agentcfg.doctor.proxies import IGNORES_NO_PROXY

    if target.agent in IGNORES_NO_PROXY:
        # qwen-code takes --proxy, then its `proxy` setting, then HTTPS_PROXY/https_proxy/HTTP_PROXY/
        # http_proxy for every request (packages/cli/src/config/config.ts) and never reads NO_PROXY; an
        # empty --proxy falls through to the variables, so only running it without them goes direct.
        unset = [word for name in PROXY_VARIABLES for word in ("-u", name)]
        return fixes.command("env", *unset, "qwen"), (
            "qwen-code ignores NO_PROXY: it sends every request through HTTPS_PROXY/HTTP_PROXY (or its `proxy` "
            "setting in ~/.qwen/settings.json, which must not be set either), so run it without them"
        )
    if not re.fullmatch(r"[A-Za-z0-9.:_-]+", host):  # it goes inside double quotes: nothing the shell expands
        return "", f"add {host} to NO_PROXY"
    line = " ".join(f'{name}="${{{name}:+${name},}}{host}"' for name in ("NO_PROXY", "no_proxy"))
    return f"export {line}", f"this adds {host} to NO_PROXY in this shell; put it in your shell's profile to keep it"


def _proxy_findings(target: Target, seen: dict[str, Result], proxy_open: bool | None) -> list[Finding]:
    """At most one finding per agent for its proxy: one cause, one finding."""
    from agentcfg.profiles import is_loopback

    if not target.proxy or not target.base_url:
        return []
    host = _host(target.base_url)
    via, direct = seen.get("models"), seen.get("models-direct")
    via_ok = via is not None and classify(via).ok
    direct_ok = direct is not None and classify(direct).ok
    evidence = (
        f"through {target.proxy}: {'works' if via_ok else classify(via).message if via else 'not tried'}; "
        f"direct: {'works' if direct_ok else classify(direct).message if direct else 'not tried'}"
    )
    fix, hint = _bypass(target, host)
    fix = fix if direct_ok else ""  # going direct helps only where direct works
    if proxy_open is False:
        return [
            Finding(
                "proxy-unreachable",
                FAIL,
                target.agent,
                f"requests to {host} go through the proxy {target.proxy}, and nothing answers there"
                + (" (direct works)" if direct_ok else ""),
                evidence,
                fix,
                "start the proxy (a VPN or Clash, say), or unset the proxy variables; " + hint,
            )
        ]
    if is_loopback(host):
        return [
            Finding(
                "proxy-intercepts-local",
                WARN if via_ok else FAIL,
                target.agent,
                f"requests to {host} go through the proxy {target.proxy}"
                + ("" if via_ok else (", where they fail" + (" (direct works)" if direct_ok else ""))),
                evidence,
                fix,
                hint,
            )
        ]
    if not via_ok and direct_ok:
        return [
            Finding(
                "proxy-unreachable",
                FAIL,
                target.agent,
                f"{host} works directly but not through the proxy {target.proxy}",
                evidence,
                fix,
                "fix the proxy, or send this host past it; " + hint,
            )
        ]
    return []


def _context_findings(target: Target, window: int | None) -> list[Finding]:
    if window is None or target.protocol not in ("openai", "anthropic"):
        return []
    agent, fix_window = target.agent, _profile_fix(target, context_window=window)
    hint_window = "" if fix_window else f"give {agent} a context window of {window:,} or less"
    asks = target.output_tokens if target.output_tokens is not None else target.default_output
    default = target.output_tokens is None
    grow = f"restart vLLM with a larger --max-model-len ({budget.needed_window(target.prompt_tokens):,} or more)"
    if target.prompt_tokens > window:
        return [
            Finding(
                "context-limit-exceeded",
                FAIL,
                agent,
                f"its first prompt (~{target.prompt_tokens:,} tokens) does not fit the server's window ({window:,})",
                f"max_model_len={window}",
                hint=grow,
            )
        ]
    if agent == "codex":
        return [
            Finding(
                "context-limit-exceeded",
                PASS,
                agent,
                f"its ~{target.prompt_tokens:,}-token prompt fits the window ({window:,})",
            )
        ]
    if agent == "qwen" and default and QWEN_FIRST_OUTPUT <= window < asks:
        return [
            Finding(
                "context-limit-exceeded",
                WARN,
                agent,
                f"qwen first asks for {QWEN_FIRST_OUTPUT:,} output tokens, but after a reply reaches that it retries "
                f"with {asks:,}, more than the server's window ({window:,}): that retry fails",
                f"max_model_len={window}; no output limit in qwen's settings",
                fix_window,
                hint_window,
            )
        ]
    if agent == "qwen" and default:
        asks = QWEN_FIRST_OUTPUT
    if asks > window:
        said = f"{asks:,} output tokens" + (" (its default)" if default else "")
        return [
            Finding(
                "context-limit-exceeded",
                FAIL,
                agent,
                f"it asks for {said}, more than the server's window ({window:,}): vLLM rejects every request",
                f"max_model_len={window}; {agent} output limit={asks}",
                fix_window,
                hint_window,
            )
        ]
    if target.prompt_tokens + asks > window:
        if asks <= budget.MIN_OUTPUT:  # what the agent needs: switch bounds it no lower, the window must grow
            fix_window, hint_window = "", grow
        return [
            Finding(
                "context-limit-exceeded",
                WARN,
                agent,
                f"prompt (~{target.prompt_tokens:,}) + output ({asks:,}) exceed the window ({window:,}): "
                "answers get cut short" + (", and opencode compacts every turn" if agent == "opencode" else ""),
                f"max_model_len={window}",
                fix_window,
                hint_window,
            )
        ]
    return [
        Finding(
            "context-limit-exceeded",
            PASS,
            agent,
            f"prompt (~{target.prompt_tokens:,}) + output ({asks:,}) fit the window ({window:,})",
        )
    ]


# Where each agent is told its window when no profile can say it (what `agentcfg switch` writes).
WINDOW_SETTING = {
    "codex": "model_context_window in ~/.codex/config.toml",
    "qwen": "generationConfig.contextWindowSize of its model in ~/.qwen/settings.json",
    "opencode": "limit.context of its model in opencode.json",
}


def _window_told(target: Target, window: int | None) -> Finding | None:
    """The agent is told a larger window than the server holds: it compacts by the number it is told, so
    a long session grows past what the server accepts and every request from then on is refused."""
    told = target.context_window
    if window is None or told is None or told <= window or target.agent not in WINDOW_SETTING:
        return None
    agent = target.agent
    asks = target.output_tokens if target.output_tokens is not None else None
    also = f", and it asks for {asks:,} output tokens, more than the server holds" if asks and asks > window else ""
    fix, hint = _profile_fix(target, context_window=window), ""
    if not fix:
        hint = f"tell {agent} a window of {window:,} or less: {WINDOW_SETTING[agent]}"
    return Finding(
        "context-window-too-large",
        FAIL,
        agent,
        f"{agent} is told the window is {told:,} tokens but the server holds {window:,}: it will not compact "
        f"before the server refuses the conversation{also}",
        f"max_model_len={window}; {agent} context window={told}"
        + (f" (profile {target.profile})" if target.profile else ""),
        fix,
        hint,
    )


def diagnose(target: Target, seen: dict[str, Result], proxy_open: bool | None = None) -> list[Finding]:
    """Every finding for one agent, one per cause: its static ones, then what its probes showed."""
    return _one_per_cause(_diagnose(target, seen, proxy_open))


def _one_per_cause(findings: list[Finding]) -> list[Finding]:
    """Drop what another finding of the same agent explains (model.EXPLAINS, REFUSALS)."""
    present = {f.id for f in findings if f.status in (FAIL, WARN)}
    explained = set().union(*(EXPLAINS[cause] for cause in present & EXPLAINS.keys()))
    if present & REFUSALS:  # the agent refuses its file: what that file (or the shell) says otherwise is moot
        explained |= {f.id for f in findings if f.id not in REFUSALS and f.status == FAIL}
    return [f for f in findings if f.id not in explained or f.status not in (FAIL, WARN)]


def _diagnose(target: Target, seen: dict[str, Result], proxy_open: bool | None) -> list[Finding]:
    findings = list(target.static)
    if any(f.status == FAIL and f.id in BLOCKING for f in findings):
        # The agent stops before it sends a request: what is wrong with the key it would send is not a
        # second cause (qwen with qwen-oauth selected never reads its .env's key).
        return [f for f in findings if not f.id.startswith("key-")]
    if not target.base_url:
        return findings
    findings += _proxy_findings(target, seen, proxy_open)
    proxy_explains = any(f.status == FAIL and f.id.startswith("proxy-") for f in findings)
    primary = [seen[k] for k in PRIMARY.get(target.agent, ()) if k in seen]
    verdicts = [classify(r) for r in primary]
    if primary and all(v.id in ("server-unreachable", "server-not-answering") for v in verdicts):
        if not proxy_explains:
            silent = [v for v in verdicts if v.id == "server-not-answering"]
            findings.append(_not_answering(target, silent[0], seen) if silent else _unreachable(target, verdicts[0]))
        return findings
    problems: dict[str, Finding] = {}
    if target.agent == "codex" and "chat" in seen and classify(seen["chat"]).id == "tool-parser-missing":
        problems["tool-parser-missing"] = _problem(target, classify(seen["chat"]), seen)
    for result, verdict in zip(primary, verdicts, strict=True):
        if proxy_explains:  # what came back through a failing proxy is the proxy's
            break
        redirect = _redirect(target, result, verdict)
        if redirect:
            problems.setdefault(redirect.id, redirect)
            if redirect.status == FAIL:
                continue
        if not verdict.ok:
            if final := result.extra.get("final_url"):
                verdict = replace(verdict, message=f"after a redirect to {final}: {verdict.message}")
            finding = _problem(target, verdict, seen)
            problems.setdefault(finding.id, finding)
    if "server-slow" in problems:  # one slow server: headers then silence on one request, none on another
        problems.pop("server-not-answering", None)
    already = {f.id for f in findings if f.status == FAIL}  # a static finding already names this cause
    findings += [f for f in problems.values() if f.id not in already]
    failed = {f.id for f in findings if f.status == FAIL}
    if primary and not failed and all(v.ok for v in verdicts):  # a WARN (a redirect, say) keeps the passes
        findings += [Finding(fid, PASS, target.agent, text) for fid, text in ACCEPTED.items()]
    ids = model_ids(seen.get("models"))
    if ids and target.model and target.model not in ids and "model-not-found" not in failed:
        findings.append(
            Finding(
                "model-not-found",
                WARN,
                target.agent,
                f"{target.model!r} is not in the server's /models list (requests work)",
                f"/models lists: {', '.join(ids[:8])}",
            )
        )
    window = max_model_len(seen.get("models"), target.model)
    too_large = _window_told(target, window)
    if too_large:  # what the server said about the output limit that follows from that window is this cause
        findings = [f for f in findings if f.id != "context-limit-exceeded" or f in target.static]
        findings.append(too_large)
    if "context-limit-exceeded" not in failed:
        context = _context_findings(target, window)
        if too_large:  # the output limit follows from the window it is told: one cause, one finding
            context = [f for f in context if f.status == PASS or "does not fit" in f.summary]
        findings += context
    return findings

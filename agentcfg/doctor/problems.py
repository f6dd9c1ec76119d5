"""A failed probe as the finding that names its cause and its fix: one small rule per verdict id (RULES), each
a pure function of what the agent sends (Target), the probe's Verdict and every answer doctor saw."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from agentcfg import fixes
from agentcfg.doctor.advice import host, key_advice, profile_fix, traits
from agentcfg.doctor.model import FAIL, WARN, Finding, Target
from agentcfg.doctor.replies import max_model_len, model_ids
from agentcfg.doctor.verdicts import Verdict, classify, upstream_model
from agentcfg.profiles import is_loopback

if TYPE_CHECKING:
    from agentcfg.doctor.wire import Result

Seen = dict[str, "Result"]
Rule = Callable[[Target, Verdict, Seen], Finding]


def problem(target: Target, verdict: Verdict, seen: Seen) -> Finding:
    """The finding for a failed probe: its id's rule, else "the server refused the request"."""
    vid = verdict.id or "request-rejected"
    rule = RULES.get(vid)
    if rule is not None:
        return rule(target, verdict, seen)
    return _finding(
        target,
        vid,
        FAIL,
        f"{target.base_url or ''} refused the request",
        verdict.message,
        hint="see the evidence: the server says why",
    )


def _finding(
    target: Target, vid: str, status: str, summary: str, evidence: str, fix: str = "", hint: str = ""
) -> Finding:
    return Finding(vid, status, target.agent, summary, evidence, fix, hint)


def seen_url(seen: Seen, target: Target) -> str:
    """The URL of the agent's own request that was answered (its probe's, without the query), else its base."""
    for kind in traits(target).probes:
        if kind in seen:
            return seen[kind].probe.url.split("?")[0]
    return target.base_url or ""


# -- the key ------------------------------------------------------------------------------------------------


def _key_rejected(target: Target, verdict: Verdict, seen: Seen) -> Finding:
    agent, base, evidence = target.agent, target.base_url or "", verdict.message
    if target.key_withheld:  # sent without the key on purpose: not a wrong key
        return _finding(
            target,
            "key-wrong-host",
            FAIL,
            f"{base} wants a key; doctor withheld the one {agent} would send",
            evidence,
            hint="see the key-wrong-host finding above: that key belongs to another host",
        )
    fix, hint = key_advice(target)
    if not target.key:
        return _finding(target, "key-missing", FAIL, f"{base} wants a key and {agent} sends none", evidence, fix, hint)
    if target.key_source.startswith("env ") and target.profile:
        variable = target.key_source.removeprefix("env ").split()[0]
        hint = (
            f"the key comes from {variable} in this shell; if the keyring holds the right one, "
            f"`unset {variable}` (agentcfg exec gives the keyring's key instead), else store the right one"
        )
    summary = f"{base} refuses the key from {target.key_source}{_header_note(target, evidence)}"
    return _finding(target, "key-rejected", FAIL, summary, evidence, fix, hint)


def _header_note(target: Target, evidence: str) -> str:
    """Why a key sent as x-api-key may be refused: vLLM's --api-key reads only Bearer."""
    if target.key_header != "x-api-key":
        return ""
    why = ""
    if '"unauthorized"' in evidence.lower() or evidence.endswith(": Unauthorized"):
        why = " (vLLM started with --api-key checks only `Authorization: Bearer`)"
    return why + "; Claude Code sends ANTHROPIC_API_KEY as x-api-key, ANTHROPIC_AUTH_TOKEN as Bearer"


def _oauth_expired(target: Target, verdict: Verdict, seen: Seen) -> Finding:
    """An expired claude.ai login: Claude Code's, so its fix and hint are about Claude Code (its id says so)."""
    return _finding(
        target,
        "claude-oauth-expired",
        FAIL,
        "the claude.ai login has expired",
        verdict.message,
        fixes.switch(target.profile, "claude") if target.profile else "",
        "run `claude` and /login again"
        + (", or point Claude Code at this profile's key with the fix" if target.profile else ""),
    )


def _key_malformed(target: Target, verdict: Verdict, seen: Seen) -> Finding:
    fix, hint = key_advice(target)
    summary = "the key cannot be sent as a header (whitespace or a line break in it)"
    return _finding(
        target,
        "key-malformed",
        FAIL,
        summary,
        verdict.message,
        fix,
        "store the key again without the whitespace; " + hint,
    )


# -- reaching the server --------------------------------------------------------------------------------------


def unreachable(target: Target, verdict: Verdict, seen: Seen | None = None) -> Finding:
    return _finding(
        target,
        "server-unreachable",
        FAIL,
        f"nothing listens at {target.base_url} (the connection is refused or the name does not resolve)",
        verdict.message,
        hint="start the server, or check the host and port in the base URL",
    )


def not_answering(target: Target, verdict: Verdict, seen: Seen) -> Finding:
    """The server took the connections but answered none of the agent's requests in time."""
    models = seen.get("models")
    models_answered = models is not None and models.status is not None
    root = re.sub(r"/v1/?$", "", (target.base_url or "").rstrip("/"))
    return _finding(
        target,
        "server-not-answering",
        WARN if models_answered else FAIL,
        f"{target.base_url} accepts connections but sends no answer"
        + (" to the agent's requests (its model list answers)" if models_answered else "")
        + ": the server is up but not answering",
        verdict.message,
        hint=f"it may still be loading the model, or be overloaded: check its log or `curl {root}/health`, "
        "then run doctor again (with a longer --timeout if it is only slow)",
    )


def _tls_untrusted(target: Target, verdict: Verdict, seen: Seen) -> Finding:
    variable = next(iter(traits(target).ca_variables), "SSL_CERT_FILE")
    return _finding(
        target,
        "tls-untrusted",
        FAIL,
        f"{host(target.base_url or '')}'s certificate is not trusted (self-signed or a private CA)",
        verdict.message,
        hint=f"export {variable} with the path of the CA certificate (PEM) that signed it, "
        f"in the shell you start {target.agent} from",
    )


def _server_slow(target: Target, verdict: Verdict, seen: Seen) -> Finding:
    summary = (
        f"{target.base_url or ''} answered but did not finish within the deadline "
        "(a slow or busy server, or a long generation)"
    )
    return _finding(
        target, "server-slow", WARN, summary, verdict.message, hint="run doctor again with a longer --timeout"
    )


def _rate_limited(target: Target, verdict: Verdict, seen: Seen) -> Finding:
    return _finding(
        target,
        "rate-limited",
        WARN,
        "the server is rate-limiting this key",
        verdict.message,
        hint="wait, or ask for a higher limit",
    )


def _server_error(target: Target, verdict: Verdict, seen: Seen) -> Finding:
    return _finding(
        target,
        "server-error",
        FAIL,
        f"{target.base_url or ''} failed with a server error",
        verdict.message,
        hint="see the evidence: the server (or a gateway's upstream) says why; try again later",
    )


# -- the model ----------------------------------------------------------------------------------------------


def _model_not_found(target: Target, verdict: Verdict, seen: Seen) -> Finding:
    if verdict.upstream:
        return _upstream_model_gone(target, verdict, seen)
    import difflib  # lazy: only a missing model is matched against the server's

    ids = model_ids(seen.get("models"))
    close = ids if len(ids) == 1 else difflib.get_close_matches(target.model or "", ids, n=1, cutoff=0.3)
    offer = f"; the server has: {', '.join(ids[:8])}" if ids else ""
    hint = f"use model {close[0]!r}" if close else "use one of the server's model ids"
    if is_loopback(host(target.base_url or "")) and target.model:
        hint += f", or start vLLM with --served-model-name {target.model}"
    fix = profile_fix(target, model=close[0]) if close and close[0] != target.model else ""
    return _finding(
        target, "model-not-found", FAIL, f"the server has no model {target.model!r}{offer}", verdict.message, fix, hint
    )


def _upstream_model_gone(target: Target, verdict: Verdict, seen: Seen) -> Finding:
    """A gateway (LiteLLM) lists the model, but the provider behind it says the model it maps to is gone."""
    import difflib  # lazy: as in _model_not_found

    model, ids = target.model or "", model_ids(seen.get("models"))
    gone = upstream_model(verdict.message)
    behind = f" (it maps to {gone!r})" if gone and gone != model else ""
    listed = "lists" if model in ids else "accepts"
    others = [i for i in ids if i != model]
    close = difflib.get_close_matches(model, others, n=1, cutoff=0.8)  # a near namesake only
    offer = f"; other models it lists: {', '.join(others[:8])}" if others else ""
    return _finding(
        target,
        "model-not-found",
        FAIL,
        f"the gateway {listed} model {model!r}{behind}, but its upstream provider does not have it: "
        "every request fails",
        verdict.message,
        profile_fix(target, model=close[0]) if close else "",
        f"ask the gateway's admin to point {model!r} at a model the upstream has, or use another model "
        f"the gateway lists{offer}",
    )


# -- the path -----------------------------------------------------------------------------------------------


def _base_url_path(target: Target, verdict: Verdict, seen: Seen) -> Finding:
    """A 404: the first of the path rules that knows why, else "answers 404"."""
    for rule in (_responses_missing, _other_path_works, _anthropic_v1):
        if (finding := rule(target, verdict, seen)) is not None:
            return finding
    return _finding(
        target,
        "base-url-path",
        FAIL,
        f"{seen_url(seen, target)} answers 404",
        verdict.message,
        hint="check the base URL: vLLM serves /v1/...; a gateway may use /api or /api/v1",
    )


def _models_ok(seen: Seen) -> bool:
    return "models" in seen and classify(seen["models"]).ok


def _responses_missing(target: Target, verdict: Verdict, seen: Seen) -> Finding | None:
    """The agent speaks only the Responses API, and the server lists models but has no /responses."""
    if traits(target).protocol != "responses" or not _models_ok(seen) or "/responses" not in seen_url(seen, target):
        return None
    title = traits(target).title
    return _finding(
        target,
        "responses-api-missing",
        FAIL,
        f"{target.base_url or ''}/responses does not exist: {title} speaks only the Responses API",
        verdict.message,
        hint=f"point {title} at a server with /v1/responses (vLLM serves it; some gateways do not)",
    )


def _other_path_works(target: Target, verdict: Verdict, seen: Seen) -> Finding | None:
    """The same URL with /v1 added or taken away serves /models where this one does not."""
    alt = seen.get("models-alt")
    if alt is None or not classify(alt).ok or _models_ok(seen):
        return None
    good = alt.probe.url.removesuffix("/models")
    field = "anthropic_base_url" if target.protocol == "anthropic" else "base_url"
    fix = profile_fix(target, **{field: good})
    return _finding(
        target,
        "base-url-path",
        FAIL,
        f"{target.base_url or ''} is the wrong path: {good} works",
        verdict.message,
        fix,
        "" if fix else f"use {good} as the base URL",
    )


def _anthropic_v1(target: Target, verdict: Verdict, seen: Seen) -> Finding | None:
    """An Anthropic base URL ending in /v1: the Messages client appends /v1/messages itself."""
    base = target.base_url or ""
    if traits(target).protocol != "messages" or not base.rstrip("/").endswith("/v1"):
        return None
    good = base.rstrip("/")[:-3]
    fix = profile_fix(target, anthropic_base_url=good)
    return _finding(
        target,
        "base-url-path",
        FAIL,
        f"ANTHROPIC_BASE_URL ends in /v1; {traits(target).title} appends /v1/messages",
        verdict.message,
        fix,
        "" if fix else f"set ANTHROPIC_BASE_URL to {good}",
    )


# -- what the server does with the request ------------------------------------------------------------------


def _tool_parser_missing(target: Target, verdict: Verdict, seen: Seen) -> Finding:
    summary = "the server rejects requests with tools: no tool parser"
    if traits(target).protocol == "responses":  # its /responses works, and the tool call comes back as text
        summary = f"the server has no tool parser: {traits(target).title} exits 0 but never runs a tool"
    return _finding(
        target,
        "tool-parser-missing",
        FAIL,
        summary,
        verdict.message,
        hint="restart vLLM with --enable-auto-tool-choice --tool-call-parser and the parser for your model "
        "(hermes, qwen3_coder, deepseek_v31, ...)",
    )


def _context_limit(target: Target, verdict: Verdict, seen: Seen) -> Finding:
    window = max_model_len(seen.get("models"), target.model)
    fix = profile_fix(target, context_window=window) if window else ""
    return _finding(
        target,
        "context-limit-exceeded",
        FAIL,
        "the request does not fit the server's window",
        verdict.message,
        fix,
        "" if fix else "give the agent a context window no larger than the server's max_model_len",
    )


def _unreadable(target: Target, verdict: Verdict, seen: Seen) -> Finding:
    vid = verdict.id or "stream-broken"
    what = "a stream the agent cannot read" if vid == "stream-broken" else "a response the agent cannot parse"
    return _finding(
        target,
        vid,
        FAIL,
        f"{target.base_url or ''} returns {what}",
        verdict.message,
        hint="check that the base URL is the API itself, not a web page or a proxy that rewrites it",
    )


RULES: dict[str, Rule] = {
    "key-rejected": _key_rejected,
    "claude-oauth-expired": _oauth_expired,
    "server-unreachable": unreachable,
    "server-not-answering": not_answering,
    "model-not-found": _model_not_found,
    "base-url-path": _base_url_path,
    "tool-parser-missing": _tool_parser_missing,
    "tls-untrusted": _tls_untrusted,
    "key-malformed": _key_malformed,
    "context-limit-exceeded": _context_limit,
    "stream-broken": _unreadable,
    "response-not-openai": _unreadable,
    "server-slow": _server_slow,
    "rate-limited": _rate_limited,
    "server-error": _server_error,
}


def redirect(target: Target, result: Result, verdict: Verdict) -> Finding | None:
    """A request the server redirected (probes follow redirects as every agent does, see wire.REDIRECTS)."""
    hops = result.extra.get("redirects") or []
    if not hops and verdict.id != "base-url-redirect":
        return None
    asked, final = result.probe.url.split("?")[0], str(result.extra.get("final_url", "")).split("?")[0]
    if not hops:
        return _finding(
            target,
            "base-url-redirect",
            FAIL,
            f"{asked} answers with a redirect the agents cannot follow",
            verdict.message,
            hint="use the address it should redirect to as the base URL",
        )
    base = (target.base_url or "").rstrip("/")
    field = "anthropic_base_url" if target.protocol == "anthropic" else "base_url"
    fix = ""
    tail = asked[len(base) :] if asked.startswith(base) else ""  # the API path below the base URL, if it is below
    if tail and final.endswith(tail):
        moved = final[: len(final) - len(tail)]
        if moved != base:  # the same API at another address: point the profile there
            fix = profile_fix(target, **{field: moved})
    chain = " → ".join(f"HTTP {status} to {location}" for status, location in hops)
    evidence = f"{chain}, then " + ("it works" if verdict.ok else verdict.message)
    if verdict.ok:
        return _finding(
            target,
            "base-url-redirect",
            WARN,
            f"{asked} redirects to {final}: the agents follow it, but every request makes the detour",
            evidence,
            fix,
            "" if fix else f"use {final.removesuffix(tail) if tail else final} as the base URL",
        )
    if result.probe.method == "POST" and any(status in (301, 302, 303) for status, _ in hops):  # resent as a GET
        return _finding(
            target,
            "base-url-redirect",
            FAIL,
            f"{asked} redirects to {final} with HTTP {hops[0][0]}, so the agent resends its POST there as a GET, "
            "which fails",
            evidence,
            fix,
            "" if fix else "use the address it redirects to as the base URL (https:// for http://, say)",
        )
    return None  # followed as a POST and failed there: the failure's own finding says why

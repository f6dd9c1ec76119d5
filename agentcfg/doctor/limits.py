"""The server's window against what the agent sends and is told: its prompt, the output it asks for, the window
its files give it. Pure: the window is the server's own `max_model_len` from /models."""

from __future__ import annotations

from agentcfg import budget
from agentcfg.doctor.advice import profile_fix, traits
from agentcfg.doctor.model import FAIL, PASS, WARN, Finding, Target
from agentcfg.lazyclass import dataclass


@dataclass(frozen=True)
class _Fit:
    """One agent against one window: what it asks for, and the fix (or the hint) that makes it fit."""

    target: Target
    window: int
    asks: int  # the output tokens it asks for (its default when its files set none)
    default: bool  # asks is its default
    fix: str
    hint: str

    def finding(self, status: str, summary: str, evidence: str = "", fix: str = "", hint: str = "") -> Finding:
        return Finding("context-limit-exceeded", status, self.target.agent, summary, evidence, fix, hint)

    @property
    def first(self) -> int:
        """The output its first request asks for: an agent that retries with more asks its default first."""
        if traits(self.target).retries_output and self.default:
            return traits(self.target).default_output
        return self.asks

    @property
    def grow(self) -> str:
        needed = budget.needed_window(self.target.prompt_tokens)
        return f"restart vLLM with a larger --max-model-len ({needed:,} or more)"


def context_findings(target: Target, window: int | None) -> list[Finding]:
    """Whether the agent's prompt and output fit the server's window: the first rule that speaks decides."""
    if window is None or target.protocol not in ("openai", "anthropic", "generate-content"):
        return []
    fix = profile_fix(target, context_window=window)
    asks = target.output_tokens if target.output_tokens is not None else target.default_output
    fit = _Fit(
        target,
        window,
        asks,
        target.output_tokens is None,
        fix,
        "" if fix else f"give {target.agent} a context window of {window:,} or less",
    )
    for rule in (_prompt_too_large, _no_output_limit, _retry_too_large, _output_too_large, _cut_short):
        if (finding := rule(fit)) is not None:
            return [finding]
    return [
        fit.finding(PASS, f"prompt (~{target.prompt_tokens:,}) + output ({fit.first:,}) fit the window ({window:,})")
    ]


def _prompt_too_large(fit: _Fit) -> Finding | None:
    prompt = fit.target.prompt_tokens
    if prompt <= fit.window:
        return None
    summary = f"its first prompt (~{prompt:,} tokens) does not fit the server's window ({fit.window:,})"
    return fit.finding(FAIL, summary, f"max_model_len={fit.window}", hint=fit.grow)


def _no_output_limit(fit: _Fit) -> Finding | None:
    """An agent switch gives no output limit asks for none: only its prompt must fit."""
    if traits(fit.target).bounds_output:
        return None
    return fit.finding(PASS, f"its ~{fit.target.prompt_tokens:,}-token prompt fits the window ({fit.window:,})")


def _retry_too_large(fit: _Fit) -> Finding | None:
    """Its first limit fits, but the larger one it retries with after a reply reaches that does not."""
    agent, first = fit.target.agent, traits(fit.target).default_output
    if not (traits(fit.target).retries_output and fit.default and first <= fit.window < fit.asks):
        return None
    return fit.finding(
        WARN,
        f"{agent} first asks for {first:,} output tokens, but after a reply reaches that it retries "
        f"with {fit.asks:,}, more than the server's window ({fit.window:,}): that retry fails",
        f"max_model_len={fit.window}; no output limit in {agent}'s settings",
        fit.fix,
        fit.hint,
    )


def _output_too_large(fit: _Fit) -> Finding | None:
    if fit.first <= fit.window:
        return None
    said = f"{fit.first:,} output tokens" + (" (its default)" if fit.default else "")
    return fit.finding(
        FAIL,
        f"it asks for {said}, more than the server's window ({fit.window:,}): vLLM rejects every request",
        f"max_model_len={fit.window}; {fit.target.agent} output limit={fit.first}",
        fit.fix,
        fit.hint,
    )


def _cut_short(fit: _Fit) -> Finding | None:
    target, asks = fit.target, fit.first
    if target.prompt_tokens + asks <= fit.window:
        return None
    fix, hint = fit.fix, fit.hint
    if asks <= budget.MIN_OUTPUT:  # what the agent needs: switch bounds it no lower, the window must grow
        fix, hint = "", fit.grow
    compacts = f", and {target.agent} compacts every turn" if traits(target).compacts_every_turn else ""
    return fit.finding(
        WARN,
        f"prompt (~{target.prompt_tokens:,}) + output ({asks:,}) exceed the window ({fit.window:,}): "
        "answers get cut short" + compacts,
        f"max_model_len={fit.window}",
        fix,
        hint,
    )


def window_told(target: Target, window: int | None) -> Finding | None:
    """The agent is told a larger window than the server holds: it compacts by the number it is told, so
    a long session grows past what the server accepts and every request from then on is refused."""
    told, setting = target.context_window, traits(target).window_setting
    if window is None or told is None or told <= window or setting is None:
        return None
    agent = target.agent
    asks = target.output_tokens if target.output_tokens is not None else None
    also = f", and it asks for {asks:,} output tokens, more than the server holds" if asks and asks > window else ""
    fix, hint = profile_fix(target, context_window=window), ""
    if not fix:
        hint = f"tell {agent} a window of {window:,} or less: {setting}"
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

"""Claude Code's own rules for its settings.json, checked offline (agentcfg.doctor.agentfiles runs them). Pure."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from agentcfg import budget, env, fixes
from agentcfg.agents import shapes
from agentcfg.agents.base import Parsed
from agentcfg.doctor.model import FAIL, WARN, Finding
from agentcfg.profiles import PROJECT, Profile

# -- Claude Code ----------------------------------------------------------------------------------------
# Settings schema: Claude Code 2.1.197 validates settings.json and, when it fails, ignores the WHOLE file
# (its env block too) - `claude -p` silently ("Settings files that fail validation are silently ignored
# in this mode", `claude --help`), `claude doctor` shows "Invalid settings ✘ <file> └ model: Expected
# string, but received number" [run]. 2.1.332 still ignores it whole; its `claude doctor` prints
# "⚠ Invalid settings" / "- <file> › model: Expected string, but received number" [run]. Checked here:
# the types of the keys agentcfg reads or writes. Unknown keys are accepted [run].
CLAUDE_STRINGS = ("model", "apiKeyHelper")
CLAUDE_RULE_LISTS = ("allow", "deny", "ask")
# Model slots: the variables Claude Code 2.1.197 reads for a model besides ANTHROPIC_MODEL (in its
# binary: `if(process.env.ANTHROPIC_SMALL_FAST_MODEL)return …` comes before ANTHROPIC_DEFAULT_HAIKU_MODEL
# for its background requests; CLAUDE_CODE_SUBAGENT_MODEL, unless "inherit", for every subagent;
# ANTHROPIC_DEFAULT_FABLE_MODEL for the "fable" alias). agentcfg writes ANTHROPIC_MODEL and the
# OPUS/SONNET/HAIKU slots (agents/claude/ MODEL_SLOTS); ANTHROPIC_REASONING_MODEL is read by no
# current version (not in the 2.1.197 binary), so it is not a slot. 2.1.332 reads these slots, in the
# same order, through an environment object (`let e=s.ANTHROPIC_SMALL_FAST_MODEL;if(e!==void 0)return …`),
# and adds CLAUDE_CODE_WORKFLOW_SUBAGENT_MODEL (workflow subagents; "inherit" or unset: none), not checked yet.
CLAUDE_SLOTS = (
    "ANTHROPIC_SMALL_FAST_MODEL",
    "CLAUDE_CODE_SUBAGENT_MODEL",
    "ANTHROPIC_DEFAULT_OPUS_MODEL",
    "ANTHROPIC_DEFAULT_SONNET_MODEL",
    "ANTHROPIC_DEFAULT_HAIKU_MODEL",
    "ANTHROPIC_DEFAULT_FABLE_MODEL",
)
ANTHROPIC_ALIASES = ("opus", "sonnet", "haiku", "fable", "opusplan", "default", "best")


def _anthropic_model(value: str) -> bool:
    """A model only Anthropic's own API serves: a claude-* id or one of Claude Code's aliases."""
    name = value.strip().lower().split("[", 1)[0]
    return name.startswith(("claude-", "anthropic/claude")) or name in ANTHROPIC_ALIASES


def check(parsed: Parsed, environ: env.Environ, profiles: dict[str, Profile], prompt_tokens: int) -> list[Finding]:
    """`prompt_tokens`: Claude Code's first-turn prompt (its TRAITS), which its output bound must leave room for."""
    if not (found := shapes.one_table(parsed)):
        return []
    file, data = found
    where = env.display(file.path, environ)
    problems = []
    if "env" in data and not isinstance(data["env"], dict):
        problems.append(f"env is {shapes.kind(data['env'])}, it must be an object")
    for key in CLAUDE_STRINGS:
        if key in data and not isinstance(data[key], str):
            problems.append(f"{key} is {shapes.kind(data[key])}, it must be a string")
    permissions: Any = data.get("permissions")  # JSON: checked below
    if "permissions" in data and not isinstance(permissions, dict):
        problems.append(f"permissions is {shapes.kind(permissions)}, it must be an object")
    for key in CLAUDE_RULE_LISTS if isinstance(permissions, dict) else ():
        value = permissions.get(key)
        if key in permissions and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            problems.append(f"permissions.{key} must be a list of strings")
    if problems:
        return [
            Finding(
                "claude-settings-invalid",
                FAIL,
                "claude",
                f"Claude Code ignores all of {where}, its env block too: {problems[0]}",
                "; ".join(problems),
                "",
                f"fix it in {where}; `claude doctor` lists every setting it rejects",
            )
        ]
    return _claude_slots(data, where, environ) + _claude_output(data, where, environ, profiles, prompt_tokens)


def _claude_output(
    data: dict[str, Any], where: str, environ: env.Environ, profiles: dict[str, Profile], prompt_tokens: int
) -> list[Finding]:
    """CLAUDE_CODE_MAX_OUTPUT_TOKENS below what Claude Code plans with (budget.MIN_OUTPUT): it sends that as
    max_tokens, so replies are cut mid-answer ("Claude's response exceeded the 384 output token maximum").
    Claude Code reads the settings' env block over the shell's variable, and takes a value that is not a
    positive number as unset, its default 32,000 [the 2.1.332 binary; tests/e2e/test_output_bound.py sees
    the value sent as max_tokens]."""
    block = found if isinstance(found := data.get("env"), dict) else {}
    variable = "CLAUDE_CODE_MAX_OUTPUT_TOKENS"
    origin = where if variable in block else "this shell"
    value = str(block.get(variable, environ.get(variable, "")))
    if not (value.isascii() and value.isdigit()) or not 0 < int(value) < budget.MIN_OUTPUT:
        return []
    profile = shapes.matching(block.get("ANTHROPIC_BASE_URL"), block.get("ANTHROPIC_MODEL"), profiles)
    if origin == where:
        hint = f"remove {variable} from the env block of {where}, or set it to {budget.MIN_OUTPUT} or more"
    else:
        hint = f"unset {variable} in your shell, or set it to {budget.MIN_OUTPUT} or more"
    fix, hint = _claude_output_advice(profile, prompt_tokens) if profile is not None else ("", hint)
    return [
        Finding(
            "claude-output-too-small",
            WARN,
            "claude",
            f"Claude Code may answer with at most {int(value):,} tokens ({variable}), below the "
            f"{budget.MIN_OUTPUT:,} it plans with: replies that write a file or think are cut off",
            f"{variable}={value} ({origin})",
            fix,
            hint,
        )
    ]


def _claude_output_advice(profile: Profile, prompt_tokens: int) -> tuple[str, str]:
    """(fix, hint) for Claude Code's output bound under `profile`: a switch where it now writes enough (a
    file from an older agentcfg), else the profile's max_output_tokens raised, else a larger server window."""
    need = budget.MIN_OUTPUT
    if budget.output_tokens(profile, prompt_tokens) >= need:
        return fixes.switch(profile.name, "claude"), ""
    raised = replace(profile, max_output_tokens=max(profile.max_output_tokens or 0, need))
    if budget.output_tokens(raised, prompt_tokens) >= need:
        if profile.source.startswith(PROJECT):  # `profile set` refuses a project's profile: its file is the project's
            return "", f"the project's profile {profile.name} sets max_output_tokens below {need}: raise it there"
        fix = fixes.then(fixes.profile_set(profile.name, max_output_tokens=need), fixes.switch(profile.name, "claude"))
        return fix, ""
    return "", (
        f"profile {profile.name}'s window is too small for Claude Code: restart vLLM with --max-model-len "
        f"{budget.needed_window(prompt_tokens):,} or more, then `agentcfg profile set {profile.name} "
        "context_window=` that number and switch again"
    )


def _claude_slots(data: dict[str, Any], where: str, environ: env.Environ) -> list[Finding]:
    """Model slots that send part of Claude Code's requests to an Anthropic model agentcfg's server lacks."""
    block = found if isinstance(found := data.get("env"), dict) else {}
    # Claude Code puts the settings' env block over the shell's variables.
    merged = {k: v for k, v in environ.items() if k.startswith(("ANTHROPIC_", "CLAUDE_CODE_"))}
    merged.update({str(k): str(v) for k, v in block.items()})
    base, model = merged.get("ANTHROPIC_BASE_URL", ""), merged.get("ANTHROPIC_MODEL", "")
    if not base or "anthropic.com" in base or not model or _anthropic_model(model):
        return []
    stray = [
        slot
        for slot in CLAUDE_SLOTS
        if merged.get(slot) and merged[slot] != "inherit" and merged[slot] != model and _anthropic_model(merged[slot])
    ]
    if not stray:
        return []
    origin = {slot: where if slot in block else "this shell" for slot in stray}
    first = stray[0]
    return [
        Finding(
            "claude-model-slot",
            WARN,
            "claude",
            f"Claude Code sends some requests for model {merged[first]} ({first} in {origin[first]}), not "
            f"{model}: the server at {base} serves {model}",
            "; ".join(f"{slot}={merged[slot]} ({origin[slot]})" for slot in stray) + f"; ANTHROPIC_MODEL={model}",
            "",
            "; ".join(
                f"remove {slot} from the env block of {where}"
                if origin[slot] == where
                else f"unset {slot} in your shell"
                for slot in stray
            )
            + f" (or set it to {model})",
        )
    ]

"""A fifth agent that lives only in the tests ("synth"): one JSON file, `$SYNTH_HOME/config.json` (default
`~/.synth/config.json`), and a key it reads from the variable its file names. It implements the whole `Agent`
interface as agentcfg/agents/base.py declares it, and nothing else: the conformance suite
(tests/agents/test_conformance.py) runs every command over it to show that an agent is its module and one
registry line (the `synth` fixture below is that line).

Its file, as a switch writes it:

    {"endpoint": {"id": "agentcfg-NAME", "label": "agentcfg: LABEL", "url": ..., "model": ...,
                  "key_env": "VAR", "output": N, "context": N}}

It expands `$NAME` in its strings (fields.DOLLAR_TEMPLATE), as qwen-code does; exec hands it a profile
through SYNTH_CONFIG_CONTENT, a whole config it reads over its file.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcfg import attribution, budget, edit, env, fields
from agentcfg.agents import base
from agentcfg.agents.base import (
    AgentFile,
    Binding,
    FileEdit,
    KeySource,
    Launch,
    LaunchContext,
    Texts,
    Traits,
    no_foreign_format,
    no_key_references,
)
from agentcfg.edit import REMOVE
from agentcfg.profiles import Profile

TRAITS = Traits(
    name="synth",
    title="Synth",
    binary="synth",
    prompt_tokens=4_000,
    protocol="chat",
    probes=("chat-stream", "chat"),
    default_output=4096,
    bounds_output=True,
    window_setting="endpoint.context in ~/.synth/config.json",
    compacts_every_turn=False,
    replays_reasoning=False,
    expands=(fields.DOLLAR_TEMPLATE,),
    reads_all_proxy=False,
    ignores_no_proxy=False,
    ca_variables=("SSL_CERT_FILE",),
    key_helper_since=None,
    key_helper_setting=None,
    proven=("0.0.1",),
)
SEED = "{}\n"
CONTENT = "SYNTH_CONFIG_CONTENT"  # exec: a whole config synth reads over its file, for one process


def files(environ: env.Environ) -> list[AgentFile]:
    directory = environ.get("SYNTH_HOME")
    root = Path(directory).expanduser() if directory else env.home(environ) / ".synth"
    return [AgentFile(root / "config.json", "json", SEED)]


def unsupported(profile: Profile) -> str | None:
    return None


def _endpoint(profile: Profile, ident: str) -> dict:
    return {
        "id": ident,
        "label": f"agentcfg: {profile.label}",
        "url": profile.base_url,
        "model": profile.model,
        "key_env": profile.key_env or REMOVE,
        "output": budget.output_tokens(profile, TRAITS.prompt_tokens),
        "context": budget.window(profile),
    }


def edits(profile: Profile, current: Texts, keys: KeySource) -> list[FileEdit]:
    (config,) = current
    endpoint = _endpoint(profile, attribution.switch_id(profile.name))
    if keys.literal:
        endpoint["key"] = keys.literal
    return [FileEdit(config, base.flatten({"endpoint": endpoint}))]


def read(current: Texts) -> Binding:
    ((config, text),) = current.items()
    endpoint = base.table(base.table(edit.load("json", text or "", path=str(config.path))).get("endpoint"))
    variable, literal = base.text(endpoint.get("key_env")), base.text(endpoint.get("key"))
    return Binding(
        base_url=base.text(endpoint.get("url")),
        model=base.text(endpoint.get("model")),
        key="in file" if literal else f"env {variable}" if variable else None,
        key_env=variable,
        key_value=literal,
        output_tokens=base.number(endpoint.get("output")),
        context_window=base.number(endpoint.get("context")),
        profile=attribution.profile_from_id(endpoint.get("id")),
        label=attribution.label_from_name(endpoint.get("label")),
    )


def launch(profile: Profile, args: tuple[str, ...], context: LaunchContext) -> Launch:
    content = {"endpoint": _endpoint(profile, attribution.exec_id(profile.name))}
    if not profile.key_env:
        del content["endpoint"]["key_env"]
    return Launch(args, {CONTENT: json.dumps(content)})


foreign_format = no_foreign_format
key_references = no_key_references
kept_files = base.no_kept_files
profile_file_names = base.no_profile_file_names
profile_file_edit = base.no_profile_file_edit
mcp_files, mcp_read, mcp_edits = base.no_mcp_files, base.no_mcp_read, base.no_mcp_edits

# -- doctor: what synth itself rejects (nothing), and the generic ways of the base module ----------------------


def check(parsed: base.Parsed, environ: env.Environ, profiles: dict[str, Profile]) -> list:
    return []


unreadable = base.no_unreadable
configured = base.configured_by_files
key_helpers = base.binding_helpers
locate = base.located_by_files
authorize = base.authorize_by_files


def told_window(profile: Profile) -> int | None:
    return profile.context_window


def reasoning_advice(router: str, thinking_off: str) -> str:
    return f"{router}, or turn thinking off for tool turns: {thinking_off}"


@pytest.fixture
def synth(monkeypatch: pytest.MonkeyPatch) -> Iterator[base.Agent]:
    """The registry line: synth is an agent for this test (every module reads the one registry dict)."""
    import sys

    from agentcfg import agents

    module = sys.modules[__name__]
    monkeypatch.setitem(agents.AGENTS, TRAITS.name, module)  # type: ignore[arg-type]
    yield module  # type: ignore[misc]

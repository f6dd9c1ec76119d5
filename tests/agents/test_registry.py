"""The registry (agentcfg.agents.AGENTS) is the one list of agents (issue 29, item 1): each key is its module's
TRAITS.name, the CLI's `--agent` choices are its names, every agent enum in schemas/cli/ lists them, and the
template guard (fields.TEMPLATE_SYNTAXES) is the union of what the agents expand, each syntax refused in a profile.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator
from typing import Any

import click
import pytest

from agentcfg import fields
from agentcfg.agents import AGENTS
from agentcfg.agents.base import Agent, Traits
from agentcfg.cli.app import cli, every_command
from agentcfg.cli.base import AgentChoice
from agentcfg.errors import AgentcfgError
from tests.agents import synthetic
from tests.agents.schemas import SCHEMAS, agent_enums
from tests.agents.synthetic import synth  # noqa: F401 (fixture)

# One value per template syntax an agent expands: a new syntax needs its sample here (the test says so).
TEMPLATE_SAMPLES = ("{env:HOME}", "{ENV:HOME}", "{file:/etc/passwd}", "$HOME", "${HOME}", "$0")


def _members() -> list[str]:
    return [*Agent.__annotations__, *sorted(name for name in vars(Agent) if not name.startswith("_"))]


@pytest.mark.parametrize("name", [*AGENTS, synthetic.TRAITS.name])
def test_each_module_has_every_member_of_the_interface(name: str) -> None:
    """What mypy holds agentcfg/'s modules to (agents/__init__.py), said at run time for one that is not in
    agentcfg/ (tests/agents/synthetic.py): every member, each function taking the Protocol's parameters."""
    module = synthetic if name == synthetic.TRAITS.name else AGENTS[name]
    assert isinstance(module.TRAITS, Traits) and module.TRAITS.name == name
    for member in _members():
        assert hasattr(module, member), f"{name} lacks {member}"
        if member not in Agent.__annotations__:
            wanted = list(inspect.signature(getattr(Agent, member)).parameters)[1:]  # without self
            assert list(inspect.signature(getattr(module, member)).parameters) == wanted, (name, member)


def test_each_key_is_its_modules_name() -> None:
    assert {name: agent.TRAITS.name for name, agent in AGENTS.items()} == {name: name for name in AGENTS}


def test_each_agent_enum_in_the_schemas_is_the_registry() -> None:
    found = {path.name: enums for path in sorted(SCHEMAS.glob("*.schema.json")) if (enums := agent_enums(path))}
    assert sorted(found) == [
        f"{name}.schema.json"
        for name in (
            "agents",
            "doctor",
            "mcp-add",
            "mcp-import",
            "mcp-list",
            "mcp-rm",
            "mcp-sync",
            "profile-import",
            "rollback",
            "status",
            "switch",
        )
    ]
    for name, enums in found.items():
        assert all(enum == list(AGENTS) for enum in enums), (name, enums)


def _agent_options(group: click.Group = cli) -> Iterator[tuple[str, click.Parameter]]:
    commands = every_command() if group is cli else group.commands
    for name, command in sorted(commands.items()):
        if isinstance(command, click.Group):
            yield from ((f"{name} {sub}", p) for sub, p in _agent_options(command))
        for param in command.params:
            if isinstance(param.type, click.Choice) and set(param.type.choices) & set(AGENTS):
                yield name, param


def test_every_agent_option_takes_the_registrys_names() -> None:
    options = list(_agent_options())
    assert {name for name, _ in options} >= {"switch", "doctor"}
    for name, param in options:
        assert isinstance(param.type, AgentChoice), f"{name} --agent: use base.AgentChoice()"
        assert tuple(param.type.choices) == tuple(AGENTS), name


def test_an_agent_registered_later_is_a_choice(synth: Any) -> None:  # noqa: F811 (fixture)
    assert "synth" in AgentChoice().choices


def test_the_template_guard_is_the_union_of_what_the_agents_expand() -> None:
    expanded = {syntax for agent in AGENTS.values() for syntax in agent.TRAITS.expands}
    assert set(fields.TEMPLATE_SYNTAXES) == expanded
    assert "|".join(fields.TEMPLATE_SYNTAXES) == fields.TEMPLATE_PATTERN


@pytest.mark.parametrize("syntax", fields.TEMPLATE_SYNTAXES)
def test_each_template_syntax_is_refused_in_a_profile(syntax: str) -> None:
    samples = [s for s in TEMPLATE_SAMPLES if re.search(syntax, s)]
    assert samples, f"add a value that {syntax!r} matches to TEMPLATE_SAMPLES"
    for sample in samples:
        for field in ("model", "description", "base_url"):
            value = f"https://h.example/v1/{sample}" if field == "base_url" else f"m-{sample}"
            with pytest.raises(AgentcfgError, match="template syntax an agent expands"):
                fields.check({field: value}, "p.toml", name="p")

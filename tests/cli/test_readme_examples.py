"""README examples that run as written: every `agentcfg ...` command in README.md's shell blocks parses
against the click application (a real command, its real options, valid values), names only profiles that
exist (a built-in, or one an earlier line of the same block adds), and `exec PROFILE -- claude` names a
profile with an Anthropic URL (the README's `agentcfg exec taotoken -- claude` exited 2: the built-in
taotoken has none).

Parsing only: nothing runs, nothing is read from HOME (click's make_context checks options and values)."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import click
import pytest

from agentcfg import profiles
from agentcfg.cli.app import cli, every_command
from tests.conftest import REPO

every_command()  # commands are imported when first asked for: cli.commands now holds them all

README = (REPO / "README.md").read_text(encoding="utf-8")
SEPARATORS = {"&&", "||", "|", ";"}
REDIRECT = re.compile(r"^\d?>>?")  # `> team.toml`, `2>/dev/null`


def shell_blocks(text: str) -> list[tuple[int, str]]:
    """Each ```sh block of a Markdown text, with the line it starts on."""
    return [(text[: m.start()].count("\n") + 2, m.group(1)) for m in re.finditer(r"```sh\n(.*?)```", text, re.S)]


def invocations(line: str) -> list[list[str]]:
    """The argument lists of every `agentcfg` a shell line runs: after `&&`, `|`, `;`, inside `"$(...)"`,
    behind variable assignments and `.venv/bin/`; comments and redirections left out."""
    words = shlex.split(line, comments=True)
    found: list[list[str]] = []
    segment: list[str] = []
    for word in [*words, ";"]:
        if word.startswith("$(") and word.endswith(")"):
            found += invocations(word[2:-1])
            continue
        if word not in SEPARATORS:
            segment.append(word)
            continue
        command = list(segment)
        while command and re.match(r"^[A-Za-z_]\w*=", command[0]):  # VAR=value before the program
            command.pop(0)
        kept, skip = [], False
        for w in command:
            if skip or REDIRECT.match(w):
                skip = REDIRECT.fullmatch(w) is not None  # the target is the next word
                continue
            kept.append(w)
        if kept and Path(kept[0]).name == "agentcfg":
            found.append(kept[1:])
        segment = []
    return found


@dataclass
class Parsed:
    path: tuple[str, ...]
    params: dict[str, object]
    command: click.Command
    profiles: list[str] = field(default_factory=list)  # the profile names its arguments and options give


def _is_profile(param: click.Parameter) -> bool:
    """An argument or option that names a profile: its metavar says so, or it completes profile names
    (click keeps a parameter's shell_complete function as `_custom_shell_complete`)."""
    complete = getattr(param, "_custom_shell_complete", None)
    named = complete is not None and any(w in complete.__name__ for w in ("profile", "stored_key", "route"))
    return named or (param.metavar or "").strip("[]. ") == "PROFILE"


def parse(args: list[str]) -> Parsed:
    """The command `agentcfg ARGS` names and its parsed parameters (click's own parsing: unknown options,
    missing arguments and bad values raise its UsageError). The groups take no options of their own."""
    ctx = click.Context(cli, info_name="agentcfg")
    command: click.Command = cli
    path: list[str] = []
    rest = list(args)
    while isinstance(command, click.Group):
        assert rest and rest[0] in command.commands, f"`agentcfg {shlex.join(args)}`: no such command"
        name, rest = rest[0], rest[1:]
        command = command.commands[name]
        path.append(name)
        ctx = click.Context(command, info_name=name, parent=ctx)
    ctx = command.make_context(path[-1], rest, parent=ctx.parent)
    names: list[str] = []
    for param in command.params:
        value = ctx.params.get(param.name or "")
        if _is_profile(param) and value is not None:
            names += [str(v) for v in value] if isinstance(value, tuple) else [str(value)]
    return Parsed(tuple(path), ctx.params, command, names)


def examples() -> list[tuple[str, int, list[list[str]]]]:
    """(where, first line, the block's invocations in order) for every block that runs agentcfg."""
    found = []
    for start, block in shell_blocks(README):
        runs = [args for line in block.splitlines() for args in invocations(line)]
        if runs:
            found.append((f"README.md:{start}", start, runs))
    return found


def builtin_profiles() -> dict[str, profiles.Profile]:
    """The built-in profiles (profiles/*.toml), as agentcfg reads them."""
    found = sorted((REPO / "profiles").glob("*.toml"))
    return {f.stem: profiles.parse(f.stem, f.read_text(encoding="utf-8"), profiles.BUILT_IN) for f in found}


def test_the_readme_has_examples_to_check():
    blocks = examples()
    assert len(blocks) >= 4  # fresh machine, quick start, Use, completion, bench
    assert sum(len(runs) for _, _, runs in blocks) >= 30


def test_invocations_are_found_where_a_shell_runs_them():
    assert invocations('eval "$(agentcfg env taotoken)"  # comment') == [["env", "taotoken"]]
    assert invocations("python3 -m venv .venv && .venv/bin/agentcfg switch local") == [["switch", "local"]]
    assert invocations("agentcfg profile export gpu > team.toml") == [["profile", "export", "gpu"]]
    assert invocations("_AGENTCFG_COMPLETE=fish_source agentcfg | source") == [[]]
    assert invocations("agentcfg profile set local context_window=65536") == [
        ["profile", "set", "local", "context_window=65536"]
    ]
    assert invocations("pipx install .   # or: agentcfg switch x") == []


@pytest.mark.parametrize(("where", "start", "runs"), examples(), ids=[w for w, _, _ in examples()])
def test_every_readme_command_parses_and_names_profiles_that_exist(where: str, start: int, runs: list[list[str]]):
    builtins = builtin_profiles()
    known = set(builtins)
    anthropic = {name for name, p in builtins.items() if p.anthropic_base_url}
    for args in runs:
        shown = "agentcfg " + shlex.join(args)
        if not args:  # bare `agentcfg` (shell completion): the group itself
            continue
        try:
            parsed = parse(args)
        except click.ClickException as problem:
            pytest.fail(f"{where}: `{shown}` does not parse: {problem.format_message()}")
        missing = [name for name in parsed.profiles if name not in known and parsed.path[-1:] != ("add",)]
        assert not missing, f"{where}: `{shown}` names {missing}, no built-in and not added earlier in the block"
        if parsed.path in (("profile", "add"), ("route", "add")):
            name = str(parsed.params["name"])
            known.add(name)
            if parsed.params.get("anthropic_base_url") or parsed.params.get("detect"):
                anthropic.add(name)  # --detect sets Claude Code's URL to the same vLLM server
        if parsed.path == ("profile", "rm"):
            known.discard(str(parsed.params["name"]))
        program = [w for w in tuple(parsed.params.get("command") or ()) if w != "--"][:1]  # exec keeps its `--`
        if parsed.path == ("exec",) and program == ["claude"]:
            profile = str(parsed.params["name"])
            assert profile in anthropic, f"{where}: `{shown}`: profile {profile!r} has no Anthropic URL (exit 2)"


@pytest.mark.parametrize(
    "args",
    [
        ["swich", "local"],  # no such command
        ["profile"],  # a group, not a command
        ["switch", "local", "--agnt", "codex"],  # no such option
        ["switch", "local", "--agent", "vim"],  # not a choice
        ["bench", "local", "-n", "many"],  # not a number
        ["switch"],  # its argument missing
    ],
    ids=shlex.join,
)
def test_a_line_that_would_not_run_does_not_parse(args: list[str]):
    with pytest.raises((click.ClickException, AssertionError)):
        parse(args)


def test_the_profiles_a_line_names_are_found():
    assert parse(["route", "add", "home", "--primary", "local", "--fallback", "taotoken"]).profiles == [
        "local",
        "taotoken",
    ]
    assert parse(["bench", "local", "taotoken", "--both"]).profiles == ["local", "taotoken"]
    assert parse(["exec", "gpu", "--", "claude"]).profiles == ["gpu"]

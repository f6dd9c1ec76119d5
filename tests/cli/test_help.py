"""The documented contract matches the program (issue 15, items 3 and "Done when"): the exit statuses in the
README, docs/cli.md and `agentcfg --help` are errors.Exit's; every command's --help points at them; the README's
"Use" block names every command, and each one it names exists."""

from __future__ import annotations

import re

import click
import pytest

from agentcfg.cli.app import EXIT_MEANINGS, cli, every_command
from agentcfg.errors import Exit
from tests.cli.test_json_contract import LEAVES, SCHEMAS
from tests.conftest import REPO, Home

every_command()  # commands are imported when first asked for: cli.commands now holds them all

README = (REPO / "README.md").read_text(encoding="utf-8")
CLI_DOC = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
CODES = sorted(int(code) for code in Exit)


def _marked(text: str, marker: str) -> str:
    return text.split(f"<!-- {marker} -->", 1)[1].split(f"<!-- /{marker} -->", 1)[0]


def _table_codes(text: str) -> list[int]:
    return [int(m) for m in re.findall(r"^\| (\d+) \|", _marked(text, "exit-status"), re.M)]


def test_the_readme_and_docs_tables_are_errors_exit():
    assert _table_codes(README) == CODES
    assert _table_codes(CLI_DOC) == CODES
    names = re.findall(r"^\| (\d+) \| `(\w+)` \|", _marked(CLI_DOC, "exit-status"), re.M)
    assert [(int(code), name) for code, name in names] == [(int(e), e.name) for e in sorted(Exit)]
    assert sorted(int(code) for code in EXIT_MEANINGS) == CODES


def test_agentcfg_help_lists_every_exit_status(home: Home):
    text = home.run("--help").stdout
    table = text.split("Exit status, the same in every command:", 1)[1]
    assert [int(code) for code in re.findall(r"^ +(\d+) ", table, re.M)] == CODES
    assert "--json" in text and '{"error", "where", "hint", "exit"}' in " ".join(text.split())


def _help(path: tuple[str, ...]) -> str:
    """A command's --help text, rendered in-process (it reads no file)."""
    ctx = click.Context(cli, info_name="agentcfg")
    command: click.Command = cli
    for name in path:
        assert isinstance(command, click.Group)
        command = command.commands[name]
        ctx = click.Context(command, info_name=name, parent=ctx)
    return " ".join(command.get_help(ctx).split())


def _groups(group: click.Group = cli, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            found += [(*path, name), *_groups(command, (*path, name))]
    return found


@pytest.mark.parametrize("path", sorted(LEAVES) + _groups(), ids=" ".join)
def test_every_command_help_gives_the_exit_statuses(path):
    text = _help(path)
    assert "Exit status: 0 done, 1 failures found, 2 refused" in text
    assert "all of them: `agentcfg --help`" in text


def test_commands_keep_their_own_exit_status_lines():
    assert "1 some failed or did not finish" in _help(("bench",))
    assert "2 doctor could not run" in _help(("doctor",)) and "70 a bug" in _help(("doctor",))
    assert "127: COMMAND not found" in _help(("exec",))


def _use_block() -> list[list[str]]:
    """The command lines of the README's "Use" block, as words (comments and redirections dropped)."""
    block = README.split("## Use\n", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    lines = []
    for line in block.splitlines():
        words = line.split("#", 1)[0].split(">", 1)[0].split()
        if words:
            assert words[0] == "agentcfg", line
            lines.append(words[1:])
    return lines


def _command_path(words: list[str]) -> tuple[str, ...]:
    """The click command the words name: group words until a leaf."""
    command: click.Command = cli
    path: list[str] = []
    for word in words:
        if not isinstance(command, click.Group):
            break
        assert word in command.commands, f"README names `agentcfg {' '.join([*path, word])}`: no such command"
        command = command.commands[word]
        path.append(word)
    assert not isinstance(command, click.Group), f"`agentcfg {' '.join(path)}` is a group, not a command"
    return tuple(path)


def test_the_readme_use_block_names_every_command_and_only_real_ones(home: Home):
    named = {_command_path(words) for words in _use_block()}
    assert named == set(LEAVES), f"missing from the README: {set(LEAVES) - named}"
    for path in sorted(named):  # and each runs
        assert "Usage: agentcfg " + " ".join(path) in home.run(*path, "--help").stdout


def test_the_readme_promises_json_on_every_command():
    assert "Every command takes `--json`" in README and "[docs/cli.md](docs/cli.md)" in README


def test_docs_cli_lists_every_schema():
    listed = re.findall(r"\(\.\./schemas/cli/([\w-]+\.schema\.json)\)", _marked(CLI_DOC, "schemas"))
    assert sorted(listed) == sorted(p.name for p in SCHEMAS.glob("*.schema.json"))
    for path in LEAVES:
        assert f"| `agentcfg {' '.join(path)} --json` |" in CLI_DOC

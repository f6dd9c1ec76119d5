"""Fixtures for the `installed` tier: agentcfg as a user installs it, a wheel built from this checkout in a venv
of its own (.ci/install-wheel makes two: no extra, and only `[route]`; its env file names their Pythons in
AGENTCFG_INSTALLED_PYTHON and AGENTCFG_INSTALLED_ROUTE_PYTHON, which `.ci/run` exports).

Every run is that venv's own `agentcfg` in a temporary HOME (tests/conftest.py), with no PYTHONPATH: nothing of
this checkout, of .venv or of the test extra can stand in for what the wheel lacks. Each run fails on a bug's
signs (exit status 70, "internal error", a traceback) whatever status the test expects, and records which
command it was: each test names the commands it covers (`@covers`), and fails when it did not run one of them;
test_every_command_is_covered fails when a command of the installed agentcfg is covered by no test.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest

from agentcfg.errors import Exit
from tests.conftest import Home
from tests.e2e import agents

PLAIN, ROUTE = "AGENTCFG_INSTALLED_PYTHON", "AGENTCFG_INSTALLED_ROUTE_PYTHON"
HOW = "`bash .ci/install-wheel .ci/installed.env && set -a && . .ci/installed.env && set +a` (`.ci/run` does)"
BUG_SIGNS = ("internal error", "Traceback (most recent call last)")

# Every leaf command of the click application as "group sub" or "command", printed as JSON by the venv's Python.
TREE = """
import json, click
from agentcfg.cli.app import every_command
def leaves(path, command):
    if isinstance(command, click.Group):
        return [leaf for name, sub in command.commands.items() for leaf in leaves(f"{path} {name}", sub)]
    return [path]
print(json.dumps(sorted(leaf for name, c in every_command().items() for leaf in leaves(name, c))))
"""

F = TypeVar("F", bound=Callable[..., Any])
COVERED: dict[str, tuple[str, ...]] = {}  # test function -> the commands it runs


def covers(*commands: str) -> Callable[[F], F]:
    """The commands a test runs (and must run): `@covers("key set", "key get")`."""

    def mark(test: F) -> F:
        COVERED[test.__name__] = commands
        test.covers = commands  # type: ignore[attr-defined]
        return test

    return mark


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() not in ("", "0", "false", "no")


def _venv_python(variable: str) -> Path:
    """The venv's Python named by `variable`; unset: a skip on a developer's machine, a failure in CI."""
    value = os.environ.get(variable)
    if not value:
        message = f"the installed tier needs ${variable}: {HOW}"
        if in_ci():
            pytest.fail(f"CI={os.environ['CI']}: {message}")
        pytest.skip(message)
    python = Path(value)
    if not python.is_file():
        pytest.fail(f"${variable}={value}: no such Python; {HOW}")
    return python


@pytest.fixture(scope="session")
def plain_python() -> Path:
    return _venv_python(PLAIN)


@pytest.fixture(scope="session")
def route_python() -> Path:
    return _venv_python(ROUTE)


@pytest.fixture(scope="session")
def command_tree(plain_python: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, set[str]]:
    """The installed agentcfg's commands: {"key": {"set", "get", ...}, "doctor": set(), ...}."""
    home = tmp_path_factory.mktemp("tree")
    done = subprocess.run(
        [str(plain_python), "-I", "-c", TREE], capture_output=True, text=True, timeout=60,
        env={"HOME": str(home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    tree: dict[str, set[str]] = {}
    for leaf in json.loads(done.stdout):
        top, _, sub = leaf.partition(" ")
        tree.setdefault(top, set()).update([sub] if sub else [])
    return tree


def command_of(argv: list[str] | tuple[str, ...], tree: dict[str, set[str]]) -> str | None:
    """The command `agentcfg ARGV` runs ("key set", "doctor"), None for none (--help, --version)."""
    words = [word for word in (argv[: argv.index("--")] if "--" in argv else argv) if not word.startswith("-")]
    if not words or words[0] not in tree:
        return None
    if tree[words[0]] and len(words) > 1 and words[1] in tree[words[0]]:
        return f"{words[0]} {words[1]}"
    return words[0]


@dataclass
class Installed:
    """An installed agentcfg (the venv's console script) run in a temporary HOME."""

    home: Home
    python: Path
    tree: dict[str, set[str]]
    ran: list[str]  # the commands run, in order (shared by the test's installs)
    outputs: list[str] = field(default_factory=list)

    @property
    def agentcfg(self) -> str:
        return str(self.python.parent / "agentcfg")

    @property
    def env(self) -> dict[str, str]:
        """The HOME's variables, this venv first on PATH (as when it is activated), nothing of the checkout."""
        env = {**self.home.env, "PATH": f"{self.python.parent}{os.pathsep}{self.home.env['PATH']}"}
        env.pop("PYTHONPATH", None)
        return env

    def run(
        self,
        *args: str,
        check: int | None = 0,
        stdin_text: str | None = None,
        cwd: Path | None = None,
        timeout: float = 120,
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [self.agentcfg, *args], env=self.env, cwd=cwd or self.home.root, capture_output=True, text=True,
            input=stdin_text, stdin=None if stdin_text is not None else subprocess.DEVNULL, timeout=timeout,
        )  # fmt: skip
        self.record(args, done.returncode, done.stdout + done.stderr)
        if check is not None:
            assert done.returncode == check, (args, done.returncode, done.stdout, done.stderr)
        return done

    def json(self, *args: str, check: int | None = 0, **kwargs: Any) -> Any:
        return json.loads(self.run(*args, "--json", check=check, **kwargs).stdout)

    def exec_agent(self, profile: str, argv: list[str], agents_bin: Path, timeout: float) -> agents.Run:
        """`agentcfg exec PROFILE -- ARGV` headless, the agents on PATH (tests/e2e/agents.py's run)."""
        args = ("exec", profile, "--", *argv)
        result = agents.run(
            [self.agentcfg, *args], agents.environment(self.env, agents_bin), self.home.root, timeout, argv[0]
        )
        self.record(args, result.returncode, result.output)
        return result

    def record(self, args: tuple[str, ...], status: int | None, output: str) -> None:
        self.outputs.append(output)
        command = command_of(args, self.tree)
        if command is not None:
            self.ran.append(command)
        if status == Exit.INTERNAL or any(sign in output for sign in BUG_SIGNS):
            pytest.fail(f"agentcfg {' '.join(args)}: a bug (exit status {status}):\n{output}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    outcome = yield
    if call.when == "call":
        item.stash[_PASSED] = outcome.get_result().passed


_PASSED = pytest.StashKey[bool]()


@pytest.fixture
def ran(request: pytest.FixtureRequest) -> Iterator[list[str]]:
    """The commands this test ran (every install of it); after it passed, each command it covers must be there."""
    commands: list[str] = []
    yield commands
    declared = getattr(request.function, "covers", ())
    missing = [command for command in declared if command not in commands]
    if request.node.stash.get(_PASSED, False):
        assert not missing, f"{request.function.__name__} covers {missing} but never ran them (ran: {commands})"


@pytest.fixture
def installed(home: Home, plain_python: Path, command_tree: dict[str, set[str]], ran: list[str]) -> Installed:
    """The wheel installed with no extra, in this test's HOME."""
    return Installed(home, plain_python, command_tree, ran)


@pytest.fixture
def installed_route(installed: Installed, route_python: Path) -> Installed:
    """The wheel installed with `[route]`, in the same HOME as `installed`."""
    return Installed(installed.home, route_python, installed.tree, installed.ran)


@pytest.fixture
def agents_bin() -> Path:
    return agents.install("pinned")  # cached: `python -m tests.e2e.agents` installed them before the tests


def python_info(python: Path, code: str) -> Any:
    """What `code` prints as JSON in `python`, run isolated (-I: no PYTHONPATH, no user site, no cwd)."""
    done = subprocess.run([str(python), "-I", "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)

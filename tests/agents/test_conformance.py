"""What every registered agent gets from agentcfg (issue 29, item 3): each test runs once per agent of the
registry (agentcfg.agents.AGENTS, as collected) and once for the synthetic agent of tests/agents/synthetic.py,
which lives only in the tests: an agent is its module and one registry line.

agentcfg runs in this process (a subprocess would not see a test's registry entry) in a temporary HOME
(tests/conftest.py's `home`), against tests/fault_server.py where a request is sent; every --json output is
checked against its schema (tests/agents/schemas.py: the agent enums are the registry's).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentcfg import edit, fields
from agentcfg.agents import AGENTS
from agentcfg.agents.base import Agent
from agentcfg.profiles import Profile
from tests.agents import synthetic
from tests.agents.schemas import validate
from tests.agents.synthetic import synth  # noqa: F401 (fixture)
from tests.conftest import REPO, Home
from tests.fault_server import MODEL, FaultServer, dead_port
from tests.route.fake_litellm import program
from tests.test_crash import KILLER, run  # noqa: F401 (fixture)

Run = Callable[..., tuple[int, str, str]]
SYNTH = synthetic.TRAITS.name
NAMES = [*AGENTS, SYNTH]  # the registry as collected, and the agent only the tests register
LOCAL = "http://localhost:8000/v1"  # the built-in profile `local`
LOCAL_ROOT = "http://localhost:8000"
PROBE_PATHS = {  # each probe a Traits.probes names (doctor/probes.py) -> the path it posts to
    "chat": "/chat/completions",
    "chat-stream": "/chat/completions",
    "responses-stream": "/responses",
    "messages-stream": "/messages",
    "gemini-stream": ":streamGenerateContent",
}
OWN = ("CONFORMANCE_OWN",)  # a key the agent writes into its own file after a switch (valid in every format)


@pytest.fixture
def cli(run: Run) -> Run:  # noqa: F811 (tests/test_crash.py's fixture)
    """`agentcfg ARGV` in this process, in `home`: (exit status, stdout, stderr)."""
    return run


@pytest.fixture(params=NAMES)
def agent(request: pytest.FixtureRequest) -> Agent:
    if request.param == SYNTH:
        request.getfixturevalue("synth")
    return AGENTS[request.param]


def json_of(cli: Run, *argv: str, codes: tuple[int, ...] = (0,)) -> dict[str, Any]:
    code, out, err = cli(*argv, "--json")
    assert code in codes, (code, out, err)
    return json.loads(out)


def files_of(agent: Agent, environ: dict[str, str]) -> dict[Path, bytes | None]:
    return {f.path: f.path.read_bytes() if f.path.exists() else None for f in agent.files(environ)}


def binding(agent: Agent, environ: dict[str, str]) -> Any:
    current = {f: f.path.read_text() if f.path.exists() else None for f in agent.files(environ)}
    return agent.read(current)


def switch(cli: Run, agent: Agent, profile: str = "local") -> dict[str, Any]:
    report = json_of(cli, "switch", profile, "--agent", agent.TRAITS.name)
    validate("switch", report)
    return report


def _text(base_url: str, root: str, model: str, extra: str = "") -> str:
    return f'base_url = "{base_url}"\nanthropic_base_url = "{root}"\nmodel = "{model}"\n{extra}'


@contextlib.contextmanager
def served(agent: Agent, home: Home, cli: Run, server: FaultServer, tmp_path: Path) -> Iterator[str]:
    """Profile `fs` at the fault server, as `agent` can take it; for an agent that needs a route (serving()), the
    route's router (tests/route/fake_litellm.py, as `route serve` starts LiteLLM) served in front of it."""
    extra = "context_window = 65536\n"
    if agent.unsupported(Profile("fs", server.base_url, MODEL, anthropic_base_url=server.root)) is None:
        serving(agent, home, "fs", server.base_url, server.root, MODEL, extra)
        yield "fs"
        return
    home.env["AGENTCFG_LITELLM"] = str(program(tmp_path, "ok"))
    for leg in ("fs-leg", "fs-spare"):
        home.write(f".config/agentcfg/profiles/{leg}.toml", _text(server.base_url, server.root, MODEL, extra))
    port = str(dead_port())
    code, out, err = cli("route", "add", "fs", "--primary", "fs-leg", "--fallback", "fs-spare", "--port", port)
    assert code == 0, (code, out, err)
    code, out, err = cli("route", "serve", "fs")
    assert code == 0, (code, out, err)
    try:
        yield "fs"
    finally:
        cli("route", "stop", "fs")


def serving(agent: Agent, home: Home, name: str, base_url: str, root: str, model: str, extra: str = "") -> None:
    """Profile `name` of this endpoint as `agent` can take it: a profile of its own, or, for an agent that refuses
    one (Agent.unsupported: Gemini CLI speaks only what a router serves), a route (`route add`'s shape) at it,
    whose legs are profiles of that endpoint. Written only where needed (`local` is built in)."""
    text = _text(base_url, root, model, extra)
    if agent.unsupported(Profile(name, base_url, model, anthropic_base_url=root)) is None:
        if name != "local":
            home.write(f".config/agentcfg/profiles/{name}.toml", text)
        return
    for leg in (f"{name}-leg", f"{name}-spare"):
        home.write(f".config/agentcfg/profiles/{leg}.toml", text)
    home.write(
        f".config/agentcfg/profiles/{name}.toml",
        f'{text}[route]\nprimary = "{name}-leg"\nfallbacks = ["{name}-spare"]\n',
    )


# -- switch, a second switch, status ---------------------------------------------------------------------------


def test_switch_then_the_same_switch_changes_nothing(agent: Agent, home: Home, environ, cli: Run) -> None:
    serving(agent, home, "local", LOCAL, LOCAL_ROOT, "DeepSeek-V4-Flash")
    first = switch(cli, agent)
    assert first["changed"] and {c["agent"] for c in first["changes"]} == {agent.TRAITS.name}
    written, tree = files_of(agent, environ), home.snapshot()
    assert any(text is not None for text in written.values())
    assert binding(agent, environ).model == "DeepSeek-V4-Flash"

    again = switch(cli, agent)
    assert not again["changed"], again
    assert home.snapshot() == tree  # 0 bytes changed


def test_status_names_what_the_switch_set(agent: Agent, home: Home, environ, cli: Run) -> None:
    serving(agent, home, "local", LOCAL, LOCAL_ROOT, "DeepSeek-V4-Flash")
    switch(cli, agent)
    report = json_of(cli, "status")
    validate("status", report)
    (item,) = [a for a in report["agents"] if a["name"] == agent.TRAITS.name]
    assert item["configured"] and item["model"] == "DeepSeek-V4-Flash" and item["profile"] == "local"
    assert item["edited"] in ([], None, False) and item["last_switch"]["profile"] == "local"


# -- rollback after the agent's own edit; recovery -------------------------------------------------------------


def test_rollback_keeps_what_the_agent_wrote_into_its_own_file(agent: Agent, home: Home, environ, cli: Run) -> None:
    serving(agent, home, "local", LOCAL, LOCAL_ROOT, "DeepSeek-V4-Flash")
    switch(cli, agent)
    edited = []
    for file in agent.files(environ):
        if file.path.exists():
            file.path.write_text(edit.apply(file.format, file.path.read_text(), [(OWN, "kept")]))
            edited.append(file)

    code, out, err = cli("rollback", "--json")
    if code == 2:  # refused: it says which file, and changes nothing
        assert any(str(f.path.name) in err for f in edited), err
        assert all(edit.get(f.format, f.path.read_text(), OWN) == "kept" for f in edited)
        return
    assert code == 0, (code, out, err)
    validate("rollback", json.loads(out))
    for file in edited:
        assert edit.get(file.format, file.path.read_text(), OWN) == "kept", file.path  # the agent's edit stays
    assert binding(agent, environ).model != "DeepSeek-V4-Flash"  # agentcfg's went


# The child of tests/test_crash.py (killed at the chosen write), with the synthetic agent registered as here.
REGISTERED_KILLER = "import agentcfg.agents, tests.agents.synthetic as s\nagentcfg.agents.AGENTS['synth'] = s\n"
REGISTERED_KILLER += KILLER


def test_an_interrupted_switch_is_recovered(agent: Agent, home: Home, environ, cli: Run) -> None:
    serving(agent, home, "local", LOCAL, LOCAL_ROOT, "DeepSeek-V4-Flash")
    before = home.snapshot()
    argv = ["commit", "1", "before", "switch", "local", "--agent", agent.TRAITS.name]  # all written, not committed
    killed = subprocess.run(
        [sys.executable, "-c", REGISTERED_KILLER, *argv],
        env={**environ, "PYTHONPATH": str(REPO)},
        cwd=home.root,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert killed.returncode == -signal.SIGKILL, (killed.returncode, killed.stdout, killed.stderr)
    assert home.snapshot() != before
    report = json_of(cli, "status")
    validate("status", report)
    assert report["interrupted"] is True

    rolled = json_of(cli, "rollback")  # the next command to take the lock restores every file first
    validate("rollback", rolled)
    assert home.snapshot() == before
    assert json_of(cli, "status")["interrupted"] is False


# -- doctor ----------------------------------------------------------------------------------------------------


def test_doctor_offline(agent: Agent, home: Home, environ, cli: Run) -> None:
    serving(agent, home, "local", LOCAL, LOCAL_ROOT, "DeepSeek-V4-Flash")
    switch(cli, agent)
    report = json_of(cli, "doctor", "--agent", agent.TRAITS.name, "--offline", codes=(0, 1))
    validate("doctor", report)
    assert report["requests"] == 0
    assert {f["agent"] for f in report["findings"]} <= {agent.TRAITS.name, None}


def test_doctor_online_against_the_fault_server(agent: Agent, home: Home, environ, cli: Run, tmp_path: Path) -> None:
    with FaultServer() as server, served(agent, home, cli, server, tmp_path):
        report = json_of(cli, "doctor", "fs", "--agent", agent.TRAITS.name, "--timeout", "10")
        validate("doctor", report)
        sent = [(path, body) for method, path, _, body in server.requests if method == "POST"]
    for probe in agent.TRAITS.probes:  # the requests the agent itself makes, as it makes them
        suffix, stream = PROBE_PATHS[probe], probe.endswith("-stream")
        streamed = [(path, bool(body.get("stream") or "alt=sse" in path)) for path, body in sent]  # Gemini: in the URL
        posted = [path.partition("?")[0] for path, streaming in streamed if streaming == stream]
        assert any(path.endswith(suffix) for path in posted), (probe, sent)
    failed = [f for f in report["findings"] if f["status"] == "fail"]
    assert failed == []


# -- exec, import, the template guard --------------------------------------------------------------------------


def test_exec_gives_one_process_the_profile_and_no_file_changes(
    agent: Agent, home: Home, environ, cli: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    serving(agent, home, "other", "http://127.0.0.1:9/v1", "http://127.0.0.1:9", "other")
    serving(agent, home, "local", LOCAL, LOCAL_ROOT, "DeepSeek-V4-Flash")
    switch(cli, agent, "other")
    tree = home.snapshot()
    started: list[tuple[str, list[str], dict[str, str]]] = []

    def execvpe(program: str, argv: list[str], child: dict[str, str]) -> None:
        started.append((program, argv, child))
        raise SystemExit(0)

    monkeypatch.setattr(os, "execvpe", execvpe)
    code, out, err = cli("exec", "local", "--", agent.TRAITS.binary, "--flag")
    assert code == 0, (code, out, err)
    ((program, argv, child),) = started
    assert program == agent.TRAITS.binary and argv[0] == program and "--flag" in argv
    given = argv[1:] != ["--flag"] or set(child) - set(environ)  # flags of its own, or variables, or both
    assert given, "exec gave the agent nothing of the profile"
    assert home.snapshot() == tree  # the global files untouched


def test_profile_import_reads_the_agents_files(agent: Agent, home: Home, environ, cli: Run) -> None:
    serving(agent, home, "imp", "https://imported.example/v1", "https://imported.example", "imp-m")
    switch(cli, agent, "imp")
    for written in (home.root / ".config/agentcfg/profiles").glob("imp*.toml"):
        written.unlink()
    report = json_of(cli, "profile", "import", "--yes")
    validate("profile-import", report)
    (row,) = [r for r in report["profiles"] if agent.TRAITS.name in r["found_in"]]
    assert row["created"] and row["model"] == "imp-m" and row["base_url"].startswith("https://imported.example")


def _sample(syntax: str) -> str:
    from tests.agents.test_registry import TEMPLATE_SAMPLES

    return next(s for s in TEMPLATE_SAMPLES if re.search(syntax, s))


def test_a_project_profile_with_a_syntax_the_agent_expands_never_reaches_its_file(
    agent: Agent, home: Home, environ, cli: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert set(agent.TRAITS.expands) <= set(fields.TEMPLATE_SYNTAXES), "fields.TEMPLATE_SYNTAXES must guard them"
    if not agent.TRAITS.expands:
        pytest.skip(f"{agent.TRAITS.name} expands no template syntax")
    repo = tmp_path / "repo"
    (repo / ".agentcfg" / "profiles").mkdir(parents=True)
    for index, syntax in enumerate(agent.TRAITS.expands):
        (repo / ".agentcfg" / "profiles" / f"t{index}.toml").write_text(
            f'base_url = "http://127.0.0.1:9/v1"\nmodel = "m-{_sample(syntax)}"\n'
        )
    monkeypatch.chdir(repo)
    code, out, err = cli("trust")  # the project's profiles are checked before they can be trusted
    assert code == 2 and "template syntax an agent expands" in err, (code, out, err)
    for index, _ in enumerate(agent.TRAITS.expands):
        code, out, err = cli("switch", f"t{index}", "--agent", agent.TRAITS.name)
        assert code == 2, (code, out, err)
        assert all(text is None for text in files_of(agent, environ).values())


def test_doctor_online_names_a_broken_endpoint(agent: Agent, home: Home, environ, cli: Run, tmp_path: Path) -> None:
    with FaultServer("html") as server, served(agent, home, cli, server, tmp_path):
        report = json_of(cli, "doctor", "fs", "--agent", agent.TRAITS.name, "--timeout", "10", codes=(1,))
    validate("doctor", report)
    assert any(f["status"] == "fail" and f["agent"] == agent.TRAITS.name for f in report["findings"]), report


def test_agents_lists_it_installed_at_a_proven_version(agent: Agent, home: Home, environ, cli: Run) -> None:
    serving(agent, home, "local", LOCAL, LOCAL_ROOT, "DeepSeek-V4-Flash")
    switch(cli, agent)
    version = agent.TRAITS.proven[-1]
    program = home.root.parent / "bin" / agent.TRAITS.binary  # first on the test HOME's PATH
    program.write_text(f"#!/bin/sh\necho {version}\n")
    program.chmod(0o755)
    report = json_of(cli, "agents")
    validate("agents", report)
    (row,) = [r for r in report if r["agent"] == agent.TRAITS.name]
    assert row["path"] == str(program) and row["version"] == version and row["proven"] == "proven", row
    assert row["configured"] and row["profile"] == "local"

"""The --json contract (issue 15, item 2): every command takes --json; its output is one JSON document that
its schema in schemas/cli/ accepts; a failure is the error document (schemas/cli/error.schema.json) with the
exit status the contract gives it (docs/cli.md); no stored key's text is ever printed.

Every leaf command runs once where it succeeds and once where it fails, each in a temporary HOME with the
file keyring of tests/fake_keyring.py and, where a request is sent, a server on 127.0.0.1.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import click
import jsonschema
import pytest

from agentcfg.cli.app import cli, every_command
from agentcfg.errors import Exit
from tests.conftest import AGENTCFG, REPO, Home, keyring_env, make_home
from tests.fault_server import MODEL, FaultServer, dead_port
from tests.route import fake_litellm
from tests.scheduled_server import ScheduledServer

every_command()  # commands are imported when first asked for: cli.commands now holds them all

SCHEMAS = REPO / "schemas" / "cli"
KEY = "sk-contract-secret-7f3a9c2e5b1d"  # stored in the keyring of every case: never printed


def leaves(group: click.Group = cli, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            yield from leaves(command, (*path, name))
        else:
            yield (*path, name), command


LEAVES = dict(leaves())


def schema_for(path: tuple[str, ...]) -> dict:
    return json.loads((SCHEMAS / f"{'-'.join(path)}.schema.json").read_text())


# -- the tree ------------------------------------------------------------------------------------------------


def _each_command() -> list[tuple[str, ...]]:
    return sorted(LEAVES)


@pytest.mark.parametrize("path", _each_command())
def test_every_command_takes_json(path):
    assert any("--json" in param.opts for param in LEAVES[path].params), "use @base.json_option(...)"


def test_every_command_has_a_schema():
    no_schema = [" ".join(p) for p in LEAVES if not (SCHEMAS / f"{'-'.join(p)}.schema.json").is_file()]
    assert no_schema == [], f"commands without schemas/cli/<command>.schema.json: {no_schema}"


def test_every_schema_is_valid_and_names_a_command():
    names = {"-".join(p) for p in LEAVES} | {"error"}
    for path in sorted(SCHEMAS.glob("*.schema.json")):
        jsonschema.Draft202012Validator.check_schema(json.loads(path.read_text()))
        assert path.name.removesuffix(".schema.json") in names, f"{path.name}: no such command"


# -- the world each case runs in ------------------------------------------------------------------------------


@dataclass
class World:
    home: Home
    project: Path
    gateway: str  # a FaultServer's base URL that wants KEY
    bench: str  # a ScheduledServer's base URL, fast

    def run(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [AGENTCFG, *args],
            cwd=self.home.root,  # HOME is never a project: no .agentcfg above the test's own checkout
            env=self.home.env,
            capture_output=True,
            text=True,
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            timeout=60,
        )

    def store_key(self) -> None:
        assert self.run("key", "set", "gw", stdin=KEY + "\n").returncode == 0

    def profile(self, name: str, text: str) -> None:
        self.home.write(f".config/agentcfg/profiles/{name}.toml", text)


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[str, str]]:
    with FaultServer(key=KEY) as gateway, ScheduledServer(ttft=0.001, itl=0.0005) as bench:
        yield gateway.base_url, bench.base_url


@pytest.fixture
def world(tmp_path: Path, servers: tuple[str, str]) -> Iterator[World]:
    home = make_home(tmp_path)
    home.env.update(keyring_env(tmp_path / "keyring.json"))
    home.env["AGENTCFG_LITELLM"] = str(fake_litellm.program(tmp_path, "ok"))  # `route serve`: LiteLLM's stand-in
    gateway, bench = servers
    found = World(home, home.root / "repo", gateway, bench)
    found.profile("gw", f'base_url = "{gateway}"\nmodel = "{MODEL}"\nkey_env = "GW_API_KEY"\ncontext_window = 65536\n')
    found.profile("b", f'base_url = "{bench}"\nmodel = "{MODEL}"\n')
    home.write(".codex/config.toml", "# codex is configured: a switch has a file to write\n")
    home.write("repo/.agentcfg/profiles/proj.toml", 'base_url = "https://proj.example/v1"\nmodel = "m"\n')
    yield found
    found.run("route", "stop", "r")  # a case that served the route
    found.run("serve", "stop", "srv")  # a case that served the profile


# -- the cases -----------------------------------------------------------------------------------------------


def _key(w: World) -> None:
    w.store_key()


def _switched(w: World) -> None:
    assert w.run("switch", "b").returncode == 0


def _unusable_entry(w: World) -> None:
    w.home.write(".config/agentcfg/state/journal/000001/manifest.json", "{not json")


def _broken_profile(w: World) -> None:
    w.profile("broken", "base_url = [\n")


def _dead(w: World) -> None:
    w.profile("dead", f'base_url = "http://127.0.0.1:{dead_port()}/v1"\nmodel = "m"\n')


def _no_agent(w: World) -> None:
    w.home.path(".codex/config.toml").unlink()


def _route(w: World) -> None:
    assert w.run("route", "add", "r", "--primary", "b", "--fallback", "gw", "--port", str(_free_port())).returncode == 0


def _served(w: World) -> None:
    _key(w)
    _route(w)
    assert w.run("route", "serve", "r").returncode == 0


def _serve_options(w: World) -> None:
    """Profile srv on a free loopback port, and the options `serve` keeps for it: tests/serve/fake_vllm.py as vLLM."""
    import sys

    w.profile("srv", f'base_url = "http://127.0.0.1:{_free_port()}/v1"\nmodel = "{MODEL}"\ncontext_window = 4096\n')
    program = w.home.root.parent / "vllm"
    program.write_text(f"#!{sys.executable}\n" + (REPO / "tests" / "serve" / "fake_vllm.py").read_text())
    program.chmod(0o755)
    options = {"weights": str(w.home.root), "vllm": str(program), "family": "hermes"}
    w.home.write(".config/agentcfg/serve/srv.json", json.dumps(options))


def _serving(w: World) -> None:
    _serve_options(w)
    assert w.run("serve", "start", "srv", "--timeout", "30").returncode == 0


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _mcp_added(w: World) -> None:
    assert w.run("mcp", "add", "fs", "--", "true").returncode == 0


def _broken_mcp_set(w: World) -> None:
    w.home.write(".config/agentcfg/mcp.toml", "[servers.x\n")


def _doctor_fails(w: World) -> None:
    _dead(w)
    assert w.run("switch", "dead", "--agent", "codex").returncode == 0


@dataclass
class Case:
    command: tuple[str, ...]
    rest: tuple[str, ...] = ()  # after `--json`, which goes right after the command's words
    exit: int = Exit.OK
    setup: list = field(default_factory=list)
    stdin: str | None = None
    marks: tuple = ()
    id: str = ""

    def param(self) -> object:
        name = self.id or f"{' '.join(self.command)}:{Exit(self.exit).name.lower()}"
        return pytest.param(self, id=name, marks=self.marks)


def ok(words: str, *rest: str, **kw) -> object:
    return Case(tuple(words.split()), rest, Exit.OK, **kw).param()


def fails(words: str, *rest: str, exit: int = Exit.REFUSED, **kw) -> object:
    return Case(tuple(words.split()), rest, exit, **kw).param()


SH = ("--", "sh", "-c", 'printf "{\\"ran\\": true}"')

CASES = [
    ok("agents"),
    fails("agents", setup=[_broken_profile]),
    ok("status"),
    fails("status", setup=[_broken_profile]),
    ok("switch", "b"),
    fails("switch", "nope"),
    fails("switch", "b", exit=Exit.NOTHING, setup=[_no_agent]),
    fails("switch", "gw", exit=Exit.NO_KEY),
    ok("rollback", setup=[_switched]),
    fails("rollback", exit=Exit.NOTHING),
    ok("rollback", "--discard", "000001", setup=[_unusable_entry], id="rollback --discard:ok"),
    fails("rollback", "--discard", "000001", id="rollback --discard:refused"),  # no such entry
    ok("status", setup=[_unusable_entry], id="status (an entry it cannot use):ok"),
    ok("doctor", "--offline"),
    fails("doctor", "--timeout", "5", exit=Exit.FAILED, setup=[_doctor_fails]),
    fails("doctor", "--offline", "nope"),
    ok("bench", "b", "-n", "1", "--max-tokens", "4"),
    fails("bench", "dead", "-n", "1", "--max-tokens", "4", exit=Exit.FAILED, setup=[_dead]),
    fails("bench", "nope"),
    ok("init", "--profile", "b", "--yes"),
    fails("init", "--profile", "nope", "--yes"),
    fails("init", "--profile", "gw", "--yes", exit=Exit.NO_KEY),
    ok("profile import", "--yes"),
    fails("profile import", "--yes", setup=[_broken_profile]),
    ok("key set", "gw", stdin=KEY + "\n"),
    fails("key set", "b", stdin=KEY + "\n"),  # b has no key_env
    ok("key get", "gw", setup=[_key]),
    fails("key get", "gw", exit=Exit.NO_KEY),
    ok("key bind", "gw", setup=[_key]),
    fails("key bind", "nope"),
    ok("key rm", "gw", setup=[_key]),
    fails("key rm", "nope"),
    ok("key list", setup=[_key]),
    fails("key list", setup=[_key, _broken_profile]),
    ok("env", "gw", setup=[_key]),
    fails("env", "gw", exit=Exit.NO_KEY),
    ok("exec", "gw", *SH, setup=[_key]),
    fails("exec", "gw", "--", "no-such-program-here", exit=Exit.NOT_FOUND, setup=[_key]),
    fails("exec", "gw", *SH, exit=Exit.NO_KEY),
    ok("profile list"),
    fails("profile list", setup=[_broken_profile]),
    ok("profile show", "gw"),
    fails("profile show", "nope"),
    ok("profile set", "gw", "context_window=4096"),
    fails("profile set", "gw", "context_window=lots"),
    ok("profile unset", "gw", "context_window"),
    fails("profile unset", "gw", "base_url"),  # required
    ok("profile add", "new", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"),
    fails("profile add", "new", "--base-url", "not a url", "--model", "m"),
    ok("profile rm", "b"),
    fails("profile rm", "local"),  # a built-in
    ok("profile export", "gw"),
    fails("profile export", "nope"),
    ok("route add", "r", "--primary", "b", "--fallback", "gw"),
    fails("route add", "r", "--primary", "nope", "--fallback", "gw"),
    ok("route serve", "r", setup=[_key, _route]),
    fails("route serve", "b"),  # not a route
    ok("route status", "r", setup=[_served]),
    fails("route status", "r", exit=Exit.FAILED, setup=[_route]),  # not running
    ok("route stop", "r", setup=[_served]),
    fails("route stop", "r", exit=Exit.NOTHING, setup=[_route]),
    ok("serve start", "srv", setup=[_serve_options]),
    fails("serve start", "nope"),
    ok("serve restart", "srv", setup=[_serving]),
    fails("serve restart", "nope"),
    ok("serve stop", "srv", setup=[_serving]),
    fails("serve stop", "srv", exit=Exit.NOTHING, setup=[_serve_options]),
    ok("serve sweep", "srv", setup=[_serve_options]),
    fails("serve sweep", "../x"),
    ok("serve status", "srv", setup=[_serving]),
    fails("serve status", "srv", exit=Exit.FAILED, setup=[_serve_options]),  # not running
    ok("serve unit", "srv", "--print", setup=[_serve_options]),
    fails("serve unit", "nope"),
    ok("serve logs", "srv", setup=[_serving]),
    fails("serve logs", "srv", exit=Exit.NOTHING, setup=[_serve_options]),
    ok("mcp add", "fs", "--", "true"),
    fails("mcp add", "bad", "--", "echo", "${HOME}"),  # an agent would expand it
    ok("mcp list", setup=[_mcp_added]),
    fails("mcp list", setup=[_broken_mcp_set]),
    ok("mcp rm", "fs", setup=[_mcp_added]),
    fails("mcp rm", "nope", exit=Exit.NOTHING),
    ok("mcp sync", "--yes", setup=[_mcp_added]),
    fails("mcp sync", "--yes", exit=Exit.NOTHING),  # agentcfg's set is empty
    ok("mcp import", setup=[_mcp_added]),
    fails("mcp import", setup=[_broken_mcp_set]),
    ok("mcp secret", "FS_TOKEN", stdin="fs-secret-value-123456\n"),
    fails("mcp secret", "FS_TOKEN", "--rm", exit=Exit.NOTHING),
    ok("trust", "repo"),
    fails("trust"),  # run in HOME: no project here
]


# The statuses other than 0 where a command still prints its own document (not the error document): a doctor or
# bench run that found failures reports them; a switch (or init) that switched nothing, or switched to a profile
# whose key is missing, says so in its document (nothing_to_switch, key_missing).
OWN_DOCUMENT = {
    ("doctor",): {Exit.FAILED},
    ("bench",): {Exit.FAILED},
    ("switch",): {Exit.NOTHING, Exit.NO_KEY},
    ("init",): {Exit.NOTHING, Exit.NO_KEY},
    ("route", "status"): {Exit.FAILED},
    ("serve", "status"): {Exit.FAILED},
}


def _documents(text: str) -> list[object]:
    """The JSON documents in `text`, in order; whatever is not JSON fails the test."""
    decoder, found, at = json.JSONDecoder(), [], 0
    while at < len(text.rstrip()):
        while text[at].isspace():
            at += 1
        value, at = decoder.raw_decode(text, at)
        found.append(value)
    return found


def test_the_cases_cover_every_command():
    covered = {case.values[0].command for case in CASES}  # type: ignore[attr-defined]
    assert covered == set(LEAVES), set(LEAVES) ^ covered
    for path in LEAVES:  # each once where it succeeds and once where it fails
        exits = {c.values[0].exit for c in CASES if c.values[0].command == path}  # type: ignore[attr-defined]
        assert Exit.OK in exits and exits - {Exit.OK}, path


@pytest.mark.parametrize("case", CASES)
def test_json_output_matches_its_schema(world, case):
    for step in case.setup:
        step(world)
    result = world.run(*case.command, "--json", *case.rest, stdin=case.stdin)
    assert KEY not in result.stdout and KEY not in result.stderr  # not even under --json
    assert "Traceback" not in result.stderr
    assert result.returncode == case.exit, (result.returncode, result.stdout, result.stderr)
    documents = _documents(result.stdout)
    assert len(documents) == 1, result.stdout  # exactly one document: notes go to stderr
    (document,) = documents
    own = OWN_DOCUMENT.get(case.command, set())
    if case.exit == Exit.OK or case.exit in own:  # it did what it could: its own document says what
        jsonschema.validate(document, schema_for(case.command))
        if case.command in (("doctor",), ("bench",)):
            assert document["ok"] is (case.exit == Exit.OK)
        if case.exit in own and case.exit != Exit.FAILED:
            assert document["nothing_to_switch"] is (case.exit == Exit.NOTHING)
            assert bool(document["key_missing"]) is (case.exit == Exit.NO_KEY)
    else:
        jsonschema.validate(document, schema_for(("error",)))
        assert document["exit"] == result.returncode
        assert result.stderr.strip(), "the message goes to stderr too"


@pytest.mark.parametrize("path", sorted(LEAVES), ids=" ".join)
def test_an_unknown_option_under_json_is_the_error_document(world, path):
    result = world.run(*path, "--json", "--no-such-option")
    assert result.returncode == Exit.REFUSED, (result.stdout, result.stderr)
    (document,) = _documents(result.stdout)
    jsonschema.validate(document, schema_for(("error",)))
    assert document["exit"] == Exit.REFUSED and "Traceback" not in result.stderr
    if path != ("exec",):  # exec passes options after PROFILE on to COMMAND: here it is taken for the profile
        assert document["where"] == "agentcfg " + " ".join(path)


@pytest.mark.parametrize("path", [("switch",), ("doctor",), ("init",)], ids=" ".join)
def test_a_bad_agent_value_is_refused_as_json(world, path):
    option = "--agents" if path == ("init",) else "--agent"
    result = world.run(*path, "--json", option, "bogus", *(["b"] if path == ("switch",) else []))
    assert result.returncode == Exit.REFUSED, (result.stdout, result.stderr)
    (document,) = _documents(result.stdout)
    jsonschema.validate(document, schema_for(("error",)))
    assert "'bogus' is not one of" in document["error"] and document["exit"] == Exit.REFUSED

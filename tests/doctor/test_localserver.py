"""Facts about local vLLM processes (agentcfg.localserver), from captured `ps` listings and made-up ones."""

from __future__ import annotations

import shlex

import pytest

from agentcfg.doctor.localserver import Process, findings, flag, parse_ps, port_of, redacted
from agentcfg.doctor.model import FAIL, WARN
from tests.conftest import SHARED_FIXTURES

VLLM = SHARED_FIXTURES / "vllm-0.32-cpu"


def ps_block(name: str) -> list[Process]:
    """The first `ps -eo pid,ppid,comm,args` block of a capture (its `$ ps` header line skipped)."""
    lines = (VLLM / name).read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("$ ps")
    block = []
    for line in lines[1:]:
        if not line.strip():
            break
        block.append(line)
    return parse_ps("\n".join(block))


DEFAULT = ps_block("ps_default_server.txt")
EAGER = ps_block("ps_apikey_eager_tools_server.txt")


def test_parse_ps_default_server() -> None:
    assert [(p.pid, p.ppid) for p in DEFAULT] == [(20537, 1), (21485, 20537), (21486, 20537), (21756, 21486)]
    server, tracker, engine, worker = DEFAULT
    assert server.args[1:3] == ("$HARNESS_DIR/.venv/bin/vllm", "serve")
    assert server.args[-2:] == ("--dtype", "bfloat16")
    assert server.is_server and not server.is_engine
    assert not tracker.is_server and not tracker.is_engine
    assert tracker.args[-2:] == ("import", "main;main(32)")  # ps shows the joined argv: re-split on spaces
    assert engine.args == ("VLLM::EngineCore",) and engine.is_engine and not engine.is_server
    assert worker.args == ("VLLM::Worker",) and worker.is_engine
    assert port_of(server) == 8000


def test_parse_ps_whole_file_ignores_other_lines() -> None:
    """The captures also hold `pid=... comm=...` dumps and a pstree: none of that is a process line."""
    whole = parse_ps((VLLM / "ps_default_server.txt").read_text(encoding="utf-8"))
    assert [p.pid for p in whole] == [20537, 21485, 21486, 21756]
    assert parse_ps("") == []
    assert parse_ps("  PID  PPID COMMAND         COMMAND\n") == []


def test_parse_ps_apikey_eager_tools_server() -> None:
    assert [p.pid for p in EAGER] == [32400, 32566, 32567, 32690]
    server = EAGER[0]
    assert flag(server.args, "--api-key") == "secret123"
    assert flag(server.args, "--enforce-eager") == ""
    assert flag(server.args, "--enable-auto-tool-choice") == ""
    assert flag(server.args, "--tool-call-parser") == "hermes"
    assert flag(server.args, "--served-model-name") == "DeepSeek-V4-Flash"


def by_id(found: list) -> dict[str, list]:
    result: dict[str, list] = {}
    for f in found:
        result.setdefault(f.id, []).append(f)
    return result


def test_default_server_findings() -> None:
    found = findings(DEFAULT, 8000, "DeepSeek-V4-Flash")
    assert [f.id for f in found] == ["tool-parser-missing"]
    (finding,) = found
    assert finding.status == FAIL and finding.agent is None
    assert "--enable-auto-tool-choice" in finding.summary
    assert finding.evidence.startswith("pid 20537: ")
    assert "--served-model-name DeepSeek-V4-Flash" in finding.evidence
    assert finding.fix == ""  # a restart is advice: how vLLM was started is not all on its command line
    assert "--enable-auto-tool-choice and --tool-call-parser" in finding.hint


def test_apikey_eager_tools_server_findings() -> None:
    found = findings(EAGER, 8000, "DeepSeek-V4-Flash")
    assert [f.id for f in found] == ["vllm-enforce-eager"]
    (finding,) = found
    assert finding.status == WARN
    assert "--enforce-eager" in finding.evidence
    assert "secret123" not in finding.evidence + finding.summary + finding.fix + finding.hint
    assert "--api-key" in finding.evidence


def test_evidence_never_holds_the_key() -> None:
    for procs in (DEFAULT, EAGER):
        for model in ("DeepSeek-V4-Flash", "other-model", None):
            for f in findings(procs, 8000, model):
                assert "secret123" not in f"{f.summary} {f.evidence} {f.fix} {f.hint}"


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (("vllm", "serve", "m", "--api-key", "secret123"), "vllm serve m --api-key '****'"),
        (("vllm", "serve", "m", "--api-key=secret123", "--port", "8001"), "vllm serve m '--api-key=****' --port 8001"),
        (
            ("vllm", "serve", "m", "--api-key", "secret123", "--port", "8001"),
            "vllm serve m --api-key '****' --port 8001",
        ),
        (("vllm", "serve", "m"), "vllm serve m"),
        (("vllm", "serve", "my model"), "vllm serve 'my model'"),
    ],
)
def test_redacted(args: tuple[str, ...], shown: str) -> None:
    assert redacted(args) == shown
    assert "secret123" not in redacted(args)
    assert shlex.split(shown)[0] == "vllm"


def test_redacted_masks_every_api_key_value() -> None:
    shown = redacted(("vllm", "serve", "m", "--api-key", "first-secret", "second-secret", "--port", "8001"))
    assert "first-secret" not in shown
    assert "second-secret" not in shown


def server(pid: int, *flags: str, ppid: int = 1) -> Process:
    return Process(pid, ppid, ("/opt/venv/bin/python3", "/opt/venv/bin/vllm", "serve", "/models/m", *flags))


TOOLS = ("--enable-auto-tool-choice", "--tool-call-parser", "hermes")


def test_model_mismatch_with_served_model_name() -> None:
    procs = [server(100, "--served-model-name", "DeepSeek-V4-Flash", *TOOLS)]
    assert findings(procs, 8000, "DeepSeek-V4-Flash") == []
    found = by_id(findings(procs, 8000, "deepseek-chat"))
    assert list(found) == ["model-not-found"]
    (finding,) = found["model-not-found"]
    assert finding.status == FAIL
    assert finding.summary == "vLLM serves DeepSeek-V4-Flash, the agents ask for deepseek-chat"
    assert finding.fix == ""  # which profile the agents use is not known here: advice only
    assert "--served-model-name deepseek-chat" in finding.hint
    assert "point the agents at DeepSeek-V4-Flash" in finding.hint
    (named,) = findings(procs, 8000, "deepseek-chat", "gw")
    assert named.fix == "agentcfg profile set gw model=DeepSeek-V4-Flash && agentcfg switch gw"
    assert findings(procs, 8000, None) == []
    assert findings([server(100, *TOOLS)], 8000, "anything") == []  # no --served-model-name: no claim


def test_served_model_name_with_several_names() -> None:
    procs = [server(100, "--served-model-name", "DeepSeek-V4-Flash", "deepseek", *TOOLS)]
    assert findings(procs, 8000, "deepseek") == []


def test_stray_engines_without_a_server() -> None:
    procs = [p for p in DEFAULT if not p.is_server]  # `vllm serve` died, its engine and worker live on
    found = findings(procs, 8000, "DeepSeek-V4-Flash")
    assert [f.id for f in found] == ["vllm-stray-workers", "vllm-stray-workers"]
    engine, worker = found
    assert engine.status == FAIL and engine.agent is None
    assert engine.fix == "kill 21486" and worker.fix == "kill 21756"
    assert "VLLM::EngineCore (pid 21486)" in engine.summary
    assert engine.evidence == "pid 21486, parent pid 20537"
    assert worker.evidence == "pid 21756, parent pid 21486"


def test_engines_under_a_live_server_are_fine() -> None:
    assert "vllm-stray-workers" not in {f.id for f in findings(DEFAULT, 8000, None)}
    assert "vllm-stray-workers" not in {f.id for f in findings(EAGER, 8000, None)}
    # checked on any port: the engine's parent is alive even if it serves another port
    assert findings(EAGER, 9000, None) == []


def test_engine_reparented_to_init_is_stray() -> None:
    procs = [Process(500, 1, ("VLLM::EngineCore",)), server(600, *TOOLS, "--port", "8001")]
    found = findings(procs, 8000, None)
    assert [(f.id, f.fix) for f in found] == [("vllm-stray-workers", "kill 500")]


def test_parent_loop_does_not_hang() -> None:
    procs = [Process(10, 11, ("VLLM::Worker",)), Process(11, 10, ("VLLM::EngineCore",))]
    found = findings(procs, 8000, None)
    assert found == []  # a cycle ends the walk without reaching a missing parent


def test_engine_under_api_server_module_is_not_stray() -> None:
    api_server = Process(
        700, 1, ("python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "m", "--port", "8000", *TOOLS)
    )
    procs = [api_server, Process(701, 700, ("VLLM::EngineCore",))]
    assert "vllm-stray-workers" not in {f.id for f in findings(procs, 8000, None)}


def test_two_servers_on_one_port() -> None:
    procs = [server(100, *TOOLS), server(200, "--port", "8000", *TOOLS)]
    found = by_id(findings(procs, 8000, None))
    assert list(found) == ["vllm-duplicate-servers"]
    (finding,) = found["vllm-duplicate-servers"]
    assert finding.status == WARN
    assert finding.evidence == "100, 200"
    assert "2 `vllm serve` processes for port 8000" in finding.summary


def test_server_on_another_port_is_ignored() -> None:
    procs = [server(100, "--port", "8001", "--enforce-eager"), server(200, *TOOLS)]
    assert findings(procs, 8000, None) == []
    found = by_id(findings(procs, 8001, None))
    assert sorted(found) == ["tool-parser-missing", "vllm-enforce-eager"]
    assert findings(procs, 9999, None) == []


def test_tool_flags_both_needed() -> None:
    only_choice = [server(100, "--enable-auto-tool-choice")]
    only_parser = [server(100, "--tool-call-parser", "hermes")]
    bare_parser = [server(100, "--enable-auto-tool-choice", "--tool-call-parser")]
    for procs in (only_choice, only_parser, bare_parser):
        assert [f.id for f in findings(procs, 8000, None)] == ["tool-parser-missing"]
    assert findings([server(100, "--enable-auto-tool-choice", "--tool-call-parser=hermes")], 8000, None) == []


@pytest.mark.parametrize(
    ("args", "name", "value"),
    [
        (("--port", "8001"), "--port", "8001"),
        (("--port=8001",), "--port", "8001"),
        (("--enforce-eager", "--port", "8001"), "--enforce-eager", ""),
        (("--port", "8001", "--enforce-eager"), "--enforce-eager", ""),
        (("--port",), "--port", ""),
        (("--port", "8001"), "--host", None),
        (("--port-range", "1"), "--port", None),
        (("--served-model-name=",), "--served-model-name", ""),
        (("--x", "a=b"), "--x", "a=b"),
        (("--x=a=b",), "--x", "a=b"),
        (("--x", "-1"), "--x", "-1"),
        ((), "--x", None),
    ],
)
def test_flag(args: tuple[str, ...], name: str, value: str | None) -> None:
    assert flag(args, name) == value


@pytest.mark.parametrize(
    ("flags", "port"),
    [((), 8000), (("--port", "8001"), 8001), (("--port=9000",), 9000), (("--port", "x"), 8000), (("--port",), 8000)],
)
def test_port_of(flags: tuple[str, ...], port: int) -> None:
    assert port_of(server(1, *flags)) == port


@pytest.mark.parametrize(
    ("args", "is_server"),
    [
        (("vllm", "serve", "m"), True),
        (("/usr/local/bin/vllm", "serve", "m"), True),
        (("python3", "/venv/bin/vllm", "serve", "m"), True),
        (("uv", "run", "vllm", "serve", "m"), True),
        (("python3", "-c", "from multiprocessing.resource_tracker import main;main(32)"), False),
        (("grep", "-i", "vllm"), False),
        ((), False),
    ],
)
def test_is_server(args: tuple[str, ...], is_server: bool) -> None:
    assert Process(1, 0, args).is_server is is_server


def test_bench_client_is_not_a_server() -> None:
    bench = Process(300, 1, ("/opt/venv/bin/python3", "/opt/venv/bin/vllm", "bench", "serve", "--port", "8000"))
    assert not bench.is_server
    assert findings([server(100, *TOOLS), bench], 8000, None) == []


def _server(*flags: str, weights: str = "/models/tiny") -> list[Process]:
    return [Process(10, 1, ("/venv/bin/python", "/venv/bin/vllm", "serve", weights, *flags), 1000)]


def test_window_differs_from_the_agents_window() -> None:
    procs = _server("--max-model-len", "32768", "--enable-auto-tool-choice", "--tool-call-parser", "hermes")
    smaller = {f.id: f for f in findings(procs, 8000, None, "local", uid=1000, window=65536)}
    assert "vllm-window-differs" not in smaller  # the agents' window too large: context-window-too-large says so
    wasted = {f.id: f for f in findings(procs, 8000, None, "local", uid=1000, window=16384)}
    assert wasted["vllm-window-differs"].status == "warn"
    fix = "agentcfg profile set local context_window=32768 && agentcfg switch local"
    assert wasted["vllm-window-differs"].fix == fix
    same = findings(procs, 8000, None, "local", uid=1000, window=32768)
    assert "vllm-window-differs" not in {f.id for f in same}
    assert "vllm-window-differs" not in {f.id for f in findings(procs, 8000, None, "local", uid=1000)}


def test_parsers_compared_with_the_family_of_the_weights_not_the_served_name() -> None:
    flags = ("--enable-auto-tool-choice", "--tool-call-parser", "hermes")
    wrong = _server(*flags, weights="deepseek-ai/DeepSeek-V4-Flash")
    found = {f.id: f for f in findings(wrong, 8000, None, uid=1000)}
    assert "--tool-call-parser hermes (the family's is deepseek_v4)" in found["vllm-parser-differs"].summary
    assert "--reasoning-parser (none)" in found["vllm-parser-differs"].summary
    right = _server("--enable-auto-tool-choice", "--tokenizer-mode", "deepseek_v4", "--tool-call-parser", "deepseek_v4",
                    "--reasoning-parser", "deepseek_v4", weights="/m/DeepSeek-V4-Flash")  # fmt: skip
    assert "vllm-parser-differs" not in {f.id for f in findings(right, 8000, None, uid=1000)}
    labelled = _server(
        "--served-model-name", "DeepSeek-V4-Flash", "--enable-auto-tool-choice", "--tool-call-parser", "hermes"
    )  # fmt: skip  (a tiny model served under a DeepSeek name: its weights say nothing)
    assert "vllm-parser-differs" not in {f.id for f in findings(labelled, 8000, "DeepSeek-V4-Flash", uid=1000)}

"""The systemd unit for `agentcfg serve` (agentcfg.serve.unit): its text, the vLLM units it reads, and the
refusal to install a second unit for the same port or GPUs. The other units are written the way the field
reports and public setup guides write them (continuation lines, quoted Environment=, a shell wrapper, a port
from a variable)."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agentcfg.errors import AgentcfgError
from agentcfg.invocation import self_command
from agentcfg.serve import unit

# The field report's duplicate: a hand-written system unit, enabled, restarting on failure every 30 s.
FIELD = """\
[Unit]
Description=vLLM DeepSeek
After=network-online.target

[Service]
Type=simple
User=ml
Environment="CUDA_VISIBLE_DEVICES=0,1" "NCCL_P2P_DISABLE=1"
ExecStart=/opt/vllm/.venv/bin/vllm serve /models/DeepSeek-V4-Flash \\
    --served-model-name deepseek-v4-flash \\
    --tensor-parallel-size 2 \\
    --host 127.0.0.1 \\
    --max-model-len 131072
Restart=on-failure
RestartSec=30

[Install]
WantedBy=multi-user.target
"""

# The old entry point behind an interpreter, on its own port and four GPUs.
API_SERVER = """\
[Service]
Environment=CUDA_VISIBLE_DEVICES=0,1,2,3
ExecStart=/opt/venv/bin/python -m vllm.entrypoints.openai.api_server --model /m/qwen --port 8008 \\
  --tensor-parallel-size 4
Restart=always
"""

# A shell wrapper that activates a venv first.
WRAPPED = """\
[Service]
ExecStart=/bin/bash -lc 'source /opt/venv/bin/activate && exec vllm serve Qwen/Qwen3-8B --port=8001'
"""

# The port from a variable the unit sets, and one from an EnvironmentFile (not read: unknown).
VARIABLE = """\
[Service]
Environment=VLLM_PORT=9000
ExecStart=/opt/vllm/bin/vllm serve /models/m --port ${VLLM_PORT}
"""
FROM_FILE = """\
[Service]
EnvironmentFile=/opt/vllm/vllm.env
ExecStart=/opt/vllm/bin/vllm serve ${VLLM_MODEL} --host ${VLLM_HOST} --port ${VLLM_PORT} $VLLM_SERVE_ARGS
"""

NOT_VLLM = """\
[Service]
ExecStart=/usr/local/bin/ollama serve
Environment=OLLAMA_HOST=127.0.0.1:8000
"""


def parse(text: str, name: str = "vllm.service", scope: str = "system") -> unit.UnitInfo:
    info = unit.parse_unit(Path(f"/etc/systemd/{scope}/{name}"), text)
    assert info is not None
    return info


# -- parse_unit ---------------------------------------------------------------------------------------------------


def test_parse_the_field_reports_unit() -> None:
    info = parse(FIELD)
    assert (info.name, info.scope, info.port, info.gpus, info.ours, info.enabled) == (
        "vllm.service", "system", 8000, ("0", "1"), False, False
    )  # fmt: skip
    assert info.exec_start[:3] == ("/opt/vllm/.venv/bin/vllm", "serve", "/models/DeepSeek-V4-Flash")
    assert info.exec_start[-2:] == ("--max-model-len", "131072")  # the continuation lines joined


def test_parse_the_api_server_module_behind_python() -> None:
    info = parse(API_SERVER)
    assert (info.port, info.gpus) == (8008, ("0", "1", "2", "3"))


def test_parse_a_shell_wrapper() -> None:
    info = parse(WRAPPED, "qwen.service", "user")
    assert (info.port, info.gpus, info.scope) == (8001, None, "user")


def test_the_port_from_a_variable_the_unit_sets_and_unknown_from_a_file() -> None:
    assert parse(VARIABLE).port == 9000
    assert parse(FROM_FILE).port is None  # in a file agentcfg does not read: not guessed


def test_not_a_vllm_unit() -> None:
    assert unit.parse_unit(Path("/etc/systemd/system/ollama.service"), NOT_VLLM) is None
    assert unit.parse_unit(Path("/etc/systemd/system/x.service"), "[Unit]\nDescription=vllm serve\n") is None
    assert unit.parse_unit(Path("/etc/systemd/system/x.service"), "[Service]\nExecStart=/bin/true vllm\n") is None


def test_exec_start_prefixes_and_a_reset() -> None:
    text = "[Service]\nExecStart=/bin/false\nExecStart=\nExecStart=-@/opt/v/bin/vllm vllm-argv0 serve m --port 7000\n"
    info = parse(text)
    assert (info.exec_start[0], info.port) == ("/opt/v/bin/vllm", 7000)


# -- text -----------------------------------------------------------------------------------------------------------


def ours(*, system: bool = False, gpus: tuple[str, ...] | None = ("0", "1"), port: int = 8000, **kw: object) -> str:
    return unit.text(
        "local", ["/usr/bin/python3", "-I", "-m", "agentcfg"], system=system, user="alice" if system else None,
        port=port, gpus=gpus, **kw,  # type: ignore[arg-type]
    )  # fmt: skip


def lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def test_text_of_a_user_unit() -> None:
    got = lines(ours())
    assert "ExecStart=/usr/bin/python3 -I -m agentcfg serve start local --foreground" in got
    assert "ExecStopPost=/usr/bin/python3 -I -m agentcfg serve sweep local" in got
    for line in ("KillMode=mixed", "KillSignal=SIGINT", "Restart=on-failure", "Type=exec",
                 "Environment=CUDA_VISIBLE_DEVICES=0,1", "WantedBy=default.target"):  # fmt: skip
        assert line in got, line
    timeout = next(int(line.split("=")[1]) for line in got if line.startswith("TimeoutStopSec="))
    assert timeout >= 120  # longer than systemd's default 90 s, before it SIGKILLs the whole unit
    restart = next(int(line.split("=")[1]) for line in got if line.startswith("RestartSec="))
    burst = next(int(line.split("=")[1]) for line in got if line.startswith("StartLimitBurst="))
    interval = next(int(line.split("=")[1]) for line in got if line.startswith("StartLimitIntervalSec="))
    assert restart >= 10 and burst * restart < interval  # a unit that keeps failing stops, not every 30 s forever
    assert not any(line.startswith(("User=", "EnvironmentFile=")) for line in got)


def test_text_of_a_system_unit_names_the_user_and_the_key_file() -> None:
    got = lines(ours(system=True, key_env="LOCAL_API_KEY"))
    assert "User=alice" in got and "WantedBy=multi-user.target" in got
    assert "EnvironmentFile=/etc/agentcfg/serve-local.env" in got
    assert "LOCAL_API_KEY=" in ours(system=True, key_env="LOCAL_API_KEY")  # the comment says what goes in it
    assert "EnvironmentFile=/srv/k.env" in lines(ours(system=True, key_env="K", key_file="/srv/k.env"))


def test_text_without_gpus_sets_no_devices() -> None:
    assert not any("CUDA_VISIBLE_DEVICES" in line for line in lines(ours(gpus=None)))


def test_text_quotes_what_systemd_would_expand() -> None:
    text = unit.text("local", ["/opt/my py/$HOME/python", "-I", "-m", "agentcfg"], system=False, user=None,
                     port=8000, gpus=None)  # fmt: skip
    assert 'ExecStart="/opt/my py/$$HOME/python" -I -m agentcfg serve start local --foreground' in text


def test_text_refuses_what_would_break_the_unit() -> None:
    with pytest.raises(AgentcfgError):
        ours(gpus=("0", "1\nExecStartPre=/bin/evil"))
    with pytest.raises(AgentcfgError):
        unit.text("local", ["agentcfg"], system=True, user=None, port=8000, gpus=None)
    with pytest.raises(AgentcfgError):
        unit.text("local", ["agentcfg"], system=True, user="bob\nUser=root", port=8000, gpus=None)


def test_parse_reads_our_own_unit_back() -> None:
    info = parse(ours(port=8123), "agentcfg-serve-local.service", "user")
    assert (info.ours, info.port, info.gpus) == (True, 8123, ("0", "1"))
    assert info.exec_start[-4:] == ("serve", "start", "local", "--foreground")
    assert parse(ours(gpus=None), "agentcfg-serve-local.service").gpus is None


def test_parse_reads_back_the_unit_of_this_agentcfg() -> None:
    """self_command's `python -I -c CODE` form (a checkout, an editable install): quoted, and read back whole."""
    text = unit.text("local", list(self_command()), system=False, user=None, port=8000, gpus=None)
    info = parse(text, "agentcfg-serve-local.service", "user")
    assert info.exec_start == (*self_command(), "serve", "start", "local", "--foreground")
    assert (info.ours, info.port, info.devices) == (True, 8000, None)


# -- conflicts -------------------------------------------------------------------------------------------------------


def test_conflicts_same_port_or_overlapping_gpus() -> None:
    field = parse(FIELD)  # port 8000, GPUs 0,1
    api = parse(API_SERVER)  # port 8008, GPUs 0-3
    wrapped = parse(WRAPPED, "qwen.service")  # port 8001, no CUDA_VISIBLE_DEVICES: GPU 0 onwards
    mine = parse(ours(port=8000, gpus=("0",)), "agentcfg-serve-local.service", "user")
    units = [field, api, wrapped, mine]
    assert unit.conflicts(8000, ("7",), units, "agentcfg-serve-local.service") == [field]
    assert unit.conflicts(9000, ("3",), units, "agentcfg-serve-local.service") == [api]
    assert unit.conflicts(9000, ("5", "6"), units, "agentcfg-serve-local.service") == []
    assert unit.conflicts(9000, None, units, "agentcfg-serve-local.service") == [field, api, wrapped]
    assert unit.conflicts(9000, ("0",), units, "other.service") == [field, api, wrapped, mine]


# -- systemd-analyze verify -----------------------------------------------------------------------------------------

ANALYZE = shutil.which("systemd-analyze")


@pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed (.ci/run installs systemd)")
@pytest.mark.parametrize("system", [False, True])
def test_systemd_analyze_verify_accepts_the_unit(tmp_path: Path, system: bool) -> None:
    """What `text` writes, as systemd itself reads it: no unknown key, no bad value, ExecStart's program exists."""
    assert ANALYZE is not None
    user = pwd.getpwuid(os.getuid()).pw_name
    text = unit.text("local", list(self_command()), system=system, user=user, port=8000, gpus=("0", "1"),
                     key_env="LOCAL_API_KEY")  # fmt: skip
    path = tmp_path / "agentcfg-serve-local.service"
    path.write_text(text)
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    environ = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "XDG_RUNTIME_DIR": str(runtime),
               "SYSTEMD_LOG_LEVEL": "notice"}  # fmt: skip
    args = [ANALYZE, *([] if system else ["--user"]), "verify", str(path)]
    done = subprocess.run(args, env=environ, capture_output=True, text=True, timeout=60)
    lines = [line for line in done.stderr.splitlines() if str(path) in line or path.name in line]
    if not system and done.returncode != 0 and "Failed to initialize manager" in done.stderr:
        pytest.skip(f"systemd-analyze --user cannot start a manager here: {done.stderr.strip()}")
    assert done.returncode == 0 and lines == [], done.stderr
    assert sys.executable in text

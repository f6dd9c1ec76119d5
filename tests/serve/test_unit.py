"""The systemd unit for `agentcfg serve` (agentcfg.serve.unit): its text, the vLLM units it reads, and the
refusal to install a second unit for the same port or GPUs. The other units are written the way the field
reports and public setup guides write them (continuation lines, quoted Environment=, a shell wrapper, a port
from a variable)."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import time
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


# -- find_units, conflicts --------------------------------------------------------------------------------------------


def unit_dirs(tmp_path: Path) -> list[tuple[str, Path]]:
    return [("user", tmp_path / "user"), ("system", tmp_path / "etc"), ("system", tmp_path / "lib")]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def enable(directory: Path, name: str, target: Path, wants: str = "multi-user.target.wants") -> None:
    (directory / wants).mkdir(parents=True, exist_ok=True)
    (directory / wants / name).symlink_to(target)


def test_find_units_scans_each_scope_and_sees_which_are_enabled(tmp_path: Path) -> None:
    dirs = unit_dirs(tmp_path)
    field = write(tmp_path / "lib" / "vllm.service", FIELD)
    write(tmp_path / "etc" / "ollama.service", NOT_VLLM)
    write(tmp_path / "user" / "qwen.service", WRAPPED)
    enable(tmp_path / "etc", "vllm.service", field)  # enabled in /etc for a unit in /lib
    (tmp_path / "etc" / "masked-vllm.service").symlink_to("/dev/null")
    found = unit.find_units(dirs)
    assert [(u.name, u.scope, u.enabled) for u in found] == [("qwen.service", "user", False),
                                                            ("vllm.service", "system", True)]  # fmt: skip
    assert found[1].path == field


def test_find_units_an_override_in_etc_hides_the_one_in_lib(tmp_path: Path) -> None:
    write(tmp_path / "lib" / "vllm.service", FIELD)
    write(tmp_path / "etc" / "vllm.service", API_SERVER)
    [found] = unit.find_units(unit_dirs(tmp_path))
    assert (found.path, found.port) == (tmp_path / "etc" / "vllm.service", 8008)


def test_find_units_without_the_directories(tmp_path: Path) -> None:
    assert unit.find_units(unit_dirs(tmp_path)) == []


def _aged(path: Path, seconds: float = 60) -> None:
    """An mtime as if the file had been written `seconds` ago (its ctime is now, and cannot be set)."""
    past = time.time() - seconds
    os.utime(path, (past, past))


def _memo_env(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home"), "XDG_STATE_HOME": str(tmp_path / "state")}


def test_find_units_reads_a_plain_unit_once_then_again_after_any_write(tmp_path: Path, monkeypatch) -> None:
    """Unit files that run no server are remembered by their stat: not read again until one is written."""
    dirs, environ = unit_dirs(tmp_path), _memo_env(tmp_path)
    plain = write(tmp_path / "lib" / "ollama.service", NOT_VLLM)
    write(tmp_path / "lib" / "vllm.service", FIELD)
    monkeypatch.setattr(unit, "_SETTLED_NS", 200_000_000)  # 0.2 s, not 2: the test waits for it
    read: list[str] = []
    real = unit.fsutil.read_text

    def counted(path: Path, shown: str, limit: int) -> str | None:
        read.append(path.name)
        return real(path, shown, limit)

    monkeypatch.setattr(unit.fsutil, "read_text", counted)
    assert [u.name for u in unit.find_units(dirs, environ)] == ["vllm.service"]
    assert sorted(read) == ["ollama.service", "vllm.service"]  # both new; ollama's times are now: not remembered
    read.clear()
    unit.find_units(dirs, environ)
    assert "ollama.service" in read  # still within the settling time: a write in this tick could go unseen
    time.sleep(0.3)
    unit.find_units(dirs, environ)
    read.clear()
    assert [u.name for u in unit.find_units(dirs, environ)] == ["vllm.service"]
    assert read == ["vllm.service"]  # a server's unit is always read; the plain one is remembered

    # now a vLLM unit, its mtime put back as it was (as `cp -p` or an editor that keeps times would): the ctime
    # still moves, and it is read again
    before = plain.stat()
    plain.write_text(FIELD)
    os.utime(plain, ns=(before.st_atime_ns, before.st_mtime_ns))
    read.clear()
    found = unit.find_units(dirs, environ)
    assert "ollama.service" in read
    assert sorted(u.name for u in found) == ["ollama.service", "vllm.service"]


def test_find_units_memo_is_only_a_hint(tmp_path: Path) -> None:
    """A memo that says a vLLM unit is plain, from another machine or a bad write, is not believed unless the
    unit's stat is the one it gives; one that is not agentcfg's shape is ignored."""
    dirs, environ = unit_dirs(tmp_path), _memo_env(tmp_path)
    field = write(tmp_path / "lib" / "vllm.service", FIELD)
    _aged(field)
    memo = tmp_path / "state" / "agentcfg" / unit._PLAIN_UNITS
    memo.parent.mkdir(parents=True)
    forged = json.dumps({"version": 1, "plain": {str(field): [1, 2, 3, 4, 5]}})
    for text in ("not json", '{"version": 2}', forged, "[]"):
        memo.write_text(text)
        assert [u.name for u in unit.find_units(dirs, environ)] == ["vllm.service"], text
    assert unit.find_units(dirs) == unit.find_units(dirs, environ)  # without an environment: no memo at all


def test_find_units_without_a_writable_state_directory(tmp_path: Path) -> None:
    dirs, environ = unit_dirs(tmp_path), _memo_env(tmp_path)
    _aged(write(tmp_path / "lib" / "ollama.service", NOT_VLLM))
    (tmp_path / "state").write_text("a file where the directory would be")
    assert unit.find_units(dirs, environ) == []


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


# -- install ----------------------------------------------------------------------------------------------------------


def test_install_refuses_a_second_unit_for_the_port(tmp_path: Path) -> None:
    dirs = unit_dirs(tmp_path)
    field = write(tmp_path / "etc" / "vllm.service", FIELD)
    enable(tmp_path / "etc", "vllm.service", field)
    write(tmp_path / "user" / "qwen.service", WRAPPED)  # port 8001, no GPU named: GPU 0 onwards
    with pytest.raises(AgentcfgError) as refused:
        unit.install("local", ours(gpus=("4",)), system=False, environ={}, force=False, dirs=dirs, say=print)
    message = str(refused.value)
    assert str(field) in message and "enabled" in message
    assert "sudo systemctl disable --now vllm.service" in message
    assert "qwen.service" not in message  # another port and GPU 0 is not ours
    assert not (tmp_path / "user" / "agentcfg-serve-local.service").exists()


def test_install_writes_and_replaces_its_own_and_says_what_to_run(tmp_path: Path) -> None:
    dirs = unit_dirs(tmp_path)
    said: list[str] = []
    path = unit.install("local", ours(), system=False, environ={}, force=False, dirs=dirs, say=said.append)
    assert path == tmp_path / "user" / "agentcfg-serve-local.service" and path.read_text() == ours()
    assert oct(path.stat().st_mode & 0o777) == "0o644"
    again = unit.install("local", ours(port=8001), system=False, environ={}, force=False, dirs=dirs, say=said.append)
    assert again == path and "8001" in path.read_text()
    assert "systemctl --user daemon-reload && systemctl --user enable --now agentcfg-serve-local.service" in said[-1]


def test_install_with_force_writes_beside_a_conflict(tmp_path: Path) -> None:
    dirs = unit_dirs(tmp_path)
    write(tmp_path / "etc" / "vllm.service", FIELD)
    said: list[str] = []
    path = unit.install("local", ours(), system=False, environ={}, force=True, dirs=dirs, say=said.append)
    assert path.exists() and any("vllm.service" in line for line in said)


def test_install_a_system_unit_goes_to_the_first_system_directory(tmp_path: Path) -> None:
    said: list[str] = []
    path = unit.install("local", ours(system=True), system=True, environ={}, force=False,
                        dirs=unit_dirs(tmp_path), say=said.append)  # fmt: skip
    assert path == tmp_path / "etc" / "agentcfg-serve-local.service"
    assert "sudo systemctl daemon-reload && sudo systemctl enable --now agentcfg-serve-local.service" in said[-1]


def test_default_dirs_follow_home_and_xdg(tmp_path: Path) -> None:
    dirs = unit.default_dirs({"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "cfg")})
    assert dirs[0] == ("user", tmp_path / "cfg" / "systemd" / "user")
    assert ("system", Path("/etc/systemd/system")) in dirs
    assert unit.default_dirs({"HOME": str(tmp_path)})[0] == ("user", tmp_path / ".config" / "systemd" / "user")


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

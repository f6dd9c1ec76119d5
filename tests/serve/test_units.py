"""The vLLM units on this host (agentcfg.serve.units): found in systemd's unit directories, with the unit files that
run no server remembered by their stat, and agentcfg's own installed beside them, or not."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from agentcfg.errors import AgentcfgError
from agentcfg.serve import units
from tests.serve.test_unit import API_SERVER, FIELD, NOT_VLLM, WRAPPED, ours


def unit_dirs(tmp_path: Path) -> list[tuple[str, Path]]:
    return [("user", tmp_path / "user"), ("system", tmp_path / "etc"), ("system", tmp_path / "lib")]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def enable(directory: Path, name: str, target: Path, wants: str = "multi-user.target.wants") -> None:
    (directory / wants).mkdir(parents=True, exist_ok=True)
    (directory / wants / name).symlink_to(target)


# -- find_units --------------------------------------------------------------------------------------------------------


def test_find_units_scans_each_scope_and_sees_which_are_enabled(tmp_path: Path) -> None:
    dirs = unit_dirs(tmp_path)
    field = write(tmp_path / "lib" / "vllm.service", FIELD)
    write(tmp_path / "etc" / "ollama.service", NOT_VLLM)
    write(tmp_path / "user" / "qwen.service", WRAPPED)
    enable(tmp_path / "etc", "vllm.service", field)  # enabled in /etc for a unit in /lib
    (tmp_path / "etc" / "masked-vllm.service").symlink_to("/dev/null")
    found = units.find_units(dirs)
    assert [(u.name, u.scope, u.enabled) for u in found] == [("qwen.service", "user", False),
                                                            ("vllm.service", "system", True)]  # fmt: skip
    assert found[1].path == field


def test_find_units_an_override_in_etc_hides_the_one_in_lib(tmp_path: Path) -> None:
    write(tmp_path / "lib" / "vllm.service", FIELD)
    write(tmp_path / "etc" / "vllm.service", API_SERVER)
    [found] = units.find_units(unit_dirs(tmp_path))
    assert (found.path, found.port) == (tmp_path / "etc" / "vllm.service", 8008)


def test_find_units_without_the_directories(tmp_path: Path) -> None:
    assert units.find_units(unit_dirs(tmp_path)) == []


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
    monkeypatch.setattr(units, "_SETTLED_NS", 200_000_000)  # 0.2 s, not 2: the test waits for it
    read: list[str] = []
    real = units.fsutil.read_text

    def counted(path: Path, shown: str, limit: int) -> str | None:
        read.append(path.name)
        return real(path, shown, limit)

    monkeypatch.setattr(units.fsutil, "read_text", counted)
    assert [u.name for u in units.find_units(dirs, environ)] == ["vllm.service"]
    assert sorted(read) == ["ollama.service", "vllm.service"]  # both new; ollama's times are now: not remembered
    read.clear()
    units.find_units(dirs, environ)
    assert "ollama.service" in read  # still within the settling time: a write in this tick could go unseen
    time.sleep(0.3)
    units.find_units(dirs, environ)
    read.clear()
    assert [u.name for u in units.find_units(dirs, environ)] == ["vllm.service"]
    assert read == ["vllm.service"]  # a server's unit is always read; the plain one is remembered

    # now a vLLM unit, its mtime put back as it was (as `cp -p` or an editor that keeps times would): the ctime
    # still moves, and it is read again
    before = plain.stat()
    plain.write_text(FIELD)
    os.utime(plain, ns=(before.st_atime_ns, before.st_mtime_ns))
    read.clear()
    found = units.find_units(dirs, environ)
    assert "ollama.service" in read
    assert sorted(u.name for u in found) == ["ollama.service", "vllm.service"]


def test_find_units_memo_is_only_a_hint(tmp_path: Path) -> None:
    """A memo that says a vLLM unit is plain, from another machine or a bad write, is not believed unless the
    unit's stat is the one it gives; one that is not agentcfg's shape is ignored."""
    dirs, environ = unit_dirs(tmp_path), _memo_env(tmp_path)
    field = write(tmp_path / "lib" / "vllm.service", FIELD)
    _aged(field)
    memo = tmp_path / "state" / "agentcfg" / units._PLAIN_UNITS
    memo.parent.mkdir(parents=True)
    forged = json.dumps({"version": 1, "plain": {str(field): [1, 2, 3, 4, 5]}})
    for text in ("not json", '{"version": 2}', forged, "[]"):
        memo.write_text(text)
        assert [u.name for u in units.find_units(dirs, environ)] == ["vllm.service"], text
    assert units.find_units(dirs) == units.find_units(dirs, environ)  # without an environment: no memo at all


def test_find_units_without_a_writable_state_directory(tmp_path: Path) -> None:
    dirs, environ = unit_dirs(tmp_path), _memo_env(tmp_path)
    _aged(write(tmp_path / "lib" / "ollama.service", NOT_VLLM))
    (tmp_path / "state").write_text("a file where the directory would be")
    assert units.find_units(dirs, environ) == []


# -- install ----------------------------------------------------------------------------------------------------------


def test_install_refuses_a_second_unit_for_the_port(tmp_path: Path) -> None:
    dirs = unit_dirs(tmp_path)
    field = write(tmp_path / "etc" / "vllm.service", FIELD)
    enable(tmp_path / "etc", "vllm.service", field)
    write(tmp_path / "user" / "qwen.service", WRAPPED)  # port 8001, no GPU named: GPU 0 onwards
    with pytest.raises(AgentcfgError) as refused:
        units.install("local", ours(gpus=("4",)), system=False, environ={}, force=False, dirs=dirs, say=print)
    message = str(refused.value)
    assert str(field) in message and "enabled" in message
    assert "sudo systemctl disable --now vllm.service" in message
    assert "qwen.service" not in message  # another port and GPU 0 is not ours
    assert not (tmp_path / "user" / "agentcfg-serve-local.service").exists()


def test_install_writes_and_replaces_its_own_and_says_what_to_run(tmp_path: Path) -> None:
    dirs = unit_dirs(tmp_path)
    said: list[str] = []
    path = units.install("local", ours(), system=False, environ={}, force=False, dirs=dirs, say=said.append)
    assert path == tmp_path / "user" / "agentcfg-serve-local.service" and path.read_text() == ours()
    assert oct(path.stat().st_mode & 0o777) == "0o644"
    again = units.install("local", ours(port=8001), system=False, environ={}, force=False, dirs=dirs, say=said.append)
    assert again == path and "8001" in path.read_text()
    assert "systemctl --user daemon-reload && systemctl --user enable --now agentcfg-serve-local.service" in said[-1]


def test_install_with_force_writes_beside_a_conflict(tmp_path: Path) -> None:
    dirs = unit_dirs(tmp_path)
    write(tmp_path / "etc" / "vllm.service", FIELD)
    said: list[str] = []
    path = units.install("local", ours(), system=False, environ={}, force=True, dirs=dirs, say=said.append)
    assert path.exists() and any("vllm.service" in line for line in said)


def test_install_a_system_unit_goes_to_the_first_system_directory(tmp_path: Path) -> None:
    said: list[str] = []
    path = units.install("local", ours(system=True), system=True, environ={}, force=False,
                        dirs=unit_dirs(tmp_path), say=said.append)  # fmt: skip
    assert path == tmp_path / "etc" / "agentcfg-serve-local.service"
    assert "sudo systemctl daemon-reload && sudo systemctl enable --now agentcfg-serve-local.service" in said[-1]


def test_default_dirs_follow_home_and_xdg(tmp_path: Path) -> None:
    dirs = units.default_dirs({"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "cfg")})
    assert dirs[0] == ("user", tmp_path / "cfg" / "systemd" / "user")
    assert ("system", Path("/etc/systemd/system")) in dirs
    assert units.default_dirs({"HOME": str(tmp_path)})[0] == ("user", tmp_path / ".config" / "systemd" / "user")

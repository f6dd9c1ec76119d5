"""nvidia-smi's CSV answers, from outputs captured on a real H100 (tests/fixtures/nvidia-h100/) and the odd
lines other drivers and containers print; the waits with a scripted nvidia-smi."""

from __future__ import annotations

import stat
import subprocess
import sys
from pathlib import Path

import pytest

from agentcfg.serve import gpus
from agentcfg.serve.gpus import App, Gpu, NotReleased

H100 = Path(__file__).parent.parent / "fixtures" / "nvidia-h100"
UUID = "GPU-b563efb4-efc2-e50c-cb99-ff3a9bfdd47e"


def test_parse_gpus_idle_h100() -> None:
    text = (H100 / "query-gpu.csv").read_text()
    assert gpus.parse_gpus(text) == [Gpu(0, UUID, "NVIDIA H100 80GB HBM3", 81559, 0, 81079)]


def test_parse_gpus_several_and_odd_lines() -> None:
    text = (
        "0, GPU-a, NVIDIA H100 80GB HBM3, 81559, 15391, 65688\n"
        "\n"
        "1, GPU-b, NVIDIA H100 80GB HBM3, [N/A], [N/A], [N/A]\n"  # memory not readable (a MIG parent, a lost GPU)
        "2, GPU-c, NVIDIA H100 80GB HBM3, 81559 MiB, 10 MiB, 81000 MiB\n"  # units left on
    )
    assert gpus.parse_gpus(text) == [
        Gpu(0, "GPU-a", "NVIDIA H100 80GB HBM3", 81559, 15391, 65688),
        Gpu(2, "GPU-c", "NVIDIA H100 80GB HBM3", 81559, 10, 81000),
    ]


def test_parse_gpus_header_and_no_devices() -> None:
    header = "index, uuid, name, memory.total [MiB], memory.used [MiB], memory.free [MiB]\n"
    assert gpus.parse_gpus(header + (H100 / "query-gpu.csv").read_text())[0].free_mib == 81079
    assert gpus.parse_gpus("") == []
    assert gpus.parse_gpus("No devices were found\n") == []


def test_parse_apps_captured() -> None:
    text = (H100 / "query-apps.csv").read_text()
    assert gpus.parse_apps(text) == [
        App(830, "VLLM::EngineCore", 4706, UUID),
        App(828, "VLLM::Worker_TP0", 10850, UUID),
    ]
    assert gpus.parse_apps((H100 / "query-apps-header.csv").read_text()) == gpus.parse_apps(text)
    prctl_only = gpus.parse_apps((H100 / "query-apps-header-prctl-only.csv").read_text())
    assert [(a.pid, a.name, a.used_mib) for a in prctl_only] == [(658, "python3", 10850), (660, "python3", 4706)]


def test_parse_apps_empty() -> None:
    assert (H100 / "query-apps-empty.csv").read_text() == ""
    assert gpus.parse_apps("") == []
    assert gpus.parse_apps("\n") == []


def test_parse_apps_odd_lines() -> None:
    text = (
        "830, [Insufficient Permissions], [N/A], GPU-a\n"  # another user's process, seen from a non-root shell
        "831, python3, [N/A], GPU-a\n"  # memory not reported (containers, some drivers)
        "832, /usr/bin/python3, 10, GPU-a, extra\n"  # a name with a comma would split: the uuid is last
        "No running processes found\n"
        "garbage\n"
    )
    assert gpus.parse_apps(text) == [
        App(830, "[Insufficient Permissions]", None, "GPU-a"),
        App(831, "python3", None, "GPU-a"),
    ]


def test_parse_apps_name_with_comma() -> None:
    assert gpus.parse_apps("7, a, b, 12, GPU-a\n") == [App(7, "a, b", 12, "GPU-a")]


def _fake_smi(tmp_path: Path, script: str) -> str:
    path = tmp_path / "nvidia-smi"
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_query_runs_nvidia_smi_with_the_fields_parsed(tmp_path: Path) -> None:
    args = tmp_path / "args"
    smi = _fake_smi(tmp_path, f'echo "$@" >> {args}\ncat {H100 / "query-apps.csv"}\n')
    assert [a.pid for a in gpus.query_apps(smi) or []] == [830, 828]
    smi_gpu = _fake_smi(tmp_path, f'echo "$@" >> {args}\ncat {H100 / "query-gpu.csv"}\n')
    assert [g.uuid for g in gpus.query_gpus(smi_gpu) or []] == [UUID]
    assert args.read_text().splitlines() == [
        "--query-compute-apps=pid,process_name,used_memory,gpu_uuid --format=csv,noheader,nounits",
        "--query-gpu=index,uuid,name,memory.total,memory.used,memory.free --format=csv,noheader,nounits",
    ]


def test_query_none_without_nvidia_smi_or_when_it_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert gpus.query_gpus() is None
    assert gpus.query_apps() is None
    assert gpus.query_apps(str(tmp_path / "missing")) is None
    failing = _fake_smi(tmp_path, "echo 'NVIDIA-SMI has failed because it could not communicate' ; exit 9\n")
    assert gpus.query_gpus(failing) is None
    slow = _fake_smi(tmp_path, "exec sleep 5\n")
    assert gpus.query_apps(slow, timeout=0.2) is None


def _scripted(answers: list[list[App] | None]):
    """A query_apps that gives each answer once, then repeats the last."""
    calls = []

    def query() -> list[App] | None:
        calls.append(1)
        return answers[min(len(calls), len(answers)) - 1]

    return query, calls


def test_wait_released_polls_until_none_of_the_pids_is_listed() -> None:
    held = [App(830, "VLLM::EngineCore", 4706, UUID), App(900, "other", 10, UUID)]
    query, calls = _scripted([held, held, [App(900, "other", 10, UUID)]])
    ticks: list[float] = []
    waited = gpus.wait_released([830], timeout=5, tick=ticks.append, query=query, interval=0.01)
    assert waited is not None and 0 <= waited < 5
    assert len(calls) == 3 and len(ticks) == 2  # a tick while it still waits, none once released
    assert ticks == sorted(ticks)


def test_wait_released_none_without_nvidia_smi_and_at_once_when_not_listed() -> None:
    assert gpus.wait_released([1], timeout=1, query=lambda: None) is None
    assert (gpus.wait_released([1], timeout=1, query=lambda: []) or 0) < 0.5  # the time of one query
    assert (gpus.wait_released([], timeout=1, query=lambda: [App(1, "x", 1, "g")]) or 0) < 0.5


def test_wait_released_raises_naming_what_still_holds_memory() -> None:
    held = [App(830, "VLLM::EngineCore", 4706, UUID)]
    with pytest.raises(NotReleased) as caught:
        gpus.wait_released([830, 831], timeout=0.1, query=lambda: held, interval=0.02)
    assert isinstance(caught.value, TimeoutError)
    assert caught.value.apps == held
    assert "830" in str(caught.value) and "VLLM::EngineCore" in str(caught.value) and "4706 MiB" in str(caught.value)


def test_wait_released_keeps_polling_through_a_failed_query() -> None:
    query, calls = _scripted([[App(830, "x", 1, "g")], None, []])
    assert gpus.wait_released([830], timeout=5, query=query, interval=0.01) is not None
    assert len(calls) == 3


def test_imports_with_the_standard_library_only() -> None:
    """A GPU machine runs tests/serve/test_gpu_real.py with only pytest and torch: no site-packages here."""
    repo = str(Path(__file__).resolve().parents[2])
    code = f"import sys; sys.path.insert(0, {repo!r}); import agentcfg.serve.gpus, agentcfg.serve.procs"
    subprocess.run([sys.executable, "-I", "-S", "-c", code], check=True, timeout=30)

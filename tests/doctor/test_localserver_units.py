"""doctor's vllm-duplicate-units: two enabled systemd units for the agents' port restart each other's victim."""

from __future__ import annotations

from pathlib import Path

from agentcfg.doctor import _local_findings
from agentcfg.doctor.localserver import unit_findings
from agentcfg.doctor.model import FAIL, WARN, Target
from agentcfg.serve.unit import UnitInfo


def vllm_unit(name: str, *, port: int | None = 8000, enabled: bool = True, scope: str = "system") -> UnitInfo:
    where = "/etc/systemd/system" if scope == "system" else "/home/u/.config/systemd/user"
    return UnitInfo(Path(f"{where}/{name}"), name, scope, ("vllm", "serve", "m"), port, None, enabled,
                    ours=name.startswith("agentcfg-serve-"))  # fmt: skip


def test_two_enabled_units_for_the_port_fail_and_the_extra_is_disabled() -> None:
    units = [vllm_unit("vllm.service"), vllm_unit("agentcfg-serve-local.service", scope="user"),
             vllm_unit("other.service", port=8001)]  # fmt: skip
    [finding] = unit_findings(units, 8000)
    assert (finding.id, finding.status, finding.agent) == ("vllm-duplicate-units", FAIL, None)
    assert "port 8000" in finding.summary
    assert finding.fix == "sudo systemctl disable --now vllm.service"  # agentcfg's own is the one kept
    assert "/etc/systemd/system/vllm.service" in finding.evidence and "agentcfg-serve-local" in finding.evidence
    assert "other.service" not in finding.evidence


def test_three_enabled_without_ours_keep_the_first() -> None:
    units = [vllm_unit("a.service"), vllm_unit("b.service", scope="user"), vllm_unit("c.service")]
    [finding] = unit_findings(units, 8000)
    assert finding.fix == "systemctl --user disable --now b.service && sudo systemctl disable --now c.service"


def test_one_enabled_and_another_for_the_port_warns() -> None:
    units = [vllm_unit("vllm.service", enabled=False), vllm_unit("agentcfg-serve-local.service", scope="user")]
    [finding] = unit_findings(units, 8000)
    assert (finding.status, finding.fix) == (WARN, "sudo systemctl disable --now vllm.service")


def test_no_finding() -> None:
    assert unit_findings([], 8000) == []
    assert unit_findings([vllm_unit("a.service")], 8000) == []
    assert unit_findings([vllm_unit("a.service", enabled=False), vllm_unit("b.service", enabled=False)], 8000) == []
    assert unit_findings([vllm_unit("a.service"), vllm_unit("b.service", port=None)], 8000) == []
    assert unit_findings([vllm_unit("a.service"), vllm_unit("b.service")], 9000) == []


FIELD = """\
[Service]
ExecStart=/opt/vllm/bin/vllm serve /models/m --port 8000
Restart=on-failure
[Install]
WantedBy=default.target
"""


def test_doctor_reads_the_users_unit_directory(tmp_path: Path) -> None:
    """_local_findings scans the unit directories of the HOME it is given, for the agents' loopback port."""
    units = tmp_path / ".config" / "systemd" / "user"
    wants = units / "default.target.wants"
    wants.mkdir(parents=True)
    for name in ("vllm.service", "vllm-old.service"):
        (units / name).write_text(FIELD)
        (wants / name).symlink_to(units / name)
    target = Target("codex", "openai", "http://127.0.0.1:8000/v1", "m")
    found = [f for f in _local_findings([target], {"HOME": str(tmp_path)}) if f.id == "vllm-duplicate-units"]
    assert [(f.status, f.fix) for f in found] == [(FAIL, "systemctl --user disable --now vllm.service")]
    elsewhere = Target("codex", "openai", "http://127.0.0.1:8001/v1", "m")
    assert [f for f in _local_findings([elsewhere], {"HOME": str(tmp_path)}) if f.id == "vllm-duplicate-units"] == []


# -- the units doctor reads: a unit that cannot name a server is skipped unparsed, never one that can ----------------

SPELLINGS = [
    "ExecStart=/opt/venv/bin/vllm serve m --port 8011",
    'ExecStart=/opt/venv/bin/v"ll"m serve m --port 8011',
    "ExecStart=/opt/venv/bin/v'l'lm serve m --port 8011",
    "ExecStart=/opt/venv/bin/v\\llm serve m --port 8011",
    "Environment=A=vl B=lm\nExecStart=/opt/venv/bin/${A}${B} serve m --port 8011",
    "Environment=BIN=/opt/venv/bin/vllm\nExecStart=$BIN serve m --port 8011",
    "ExecStart=/usr/bin/python3 -m vllm.entrypoints.openai.api_server --port 8011",
    "ExecStart=/bin/sh -c '. /opt/venv/bin/activate && exec vllm serve m --port 8011'",
    "ExecStart=/home/u/.local/bin/agentcfg serve start local",
]


def test_every_spelling_of_a_server_is_still_parsed(tmp_path: Path) -> None:
    from agentcfg.serve.unit import parse_unit

    for spelling in SPELLINGS:
        text = f"[Unit]\nDescription=x\n\n[Service]\n{spelling}\n"
        info = parse_unit(tmp_path / "x.service", text)
        assert info is not None, spelling


def test_skipping_a_unit_unparsed_never_changes_what_is_found() -> None:
    """On every unit file of this machine: the same answer as parsing it (the skip is only a shortcut)."""
    from agentcfg.serve import unit, units

    paths = [p for _, d in units.default_dirs({"HOME": "/nonexistent"}) for p in units._listing(d, ".service")]
    texts = [(path, path.read_text(errors="replace")) for path in paths if path.is_file()]
    for path, text in texts + [(Path("/x/y.service"), f"[Service]\n{s}\n") for s in SPELLINGS]:
        if not unit._may_run_a_server(text):
            service = unit._sections(text).get("Service", [])
            words = [unit._split(v) for k, v in service if k == "ExecStart" and v]
            assert not any(w and unit._kind(unit._unwrapped(unit._command(w))) for w in words), path


def test_the_unit_directories_are_listed_as_glob_lists_them(tmp_path: Path) -> None:
    """find_units lists with os.scandir: the same units, in the same order, and the same enabled links as
    pathlib's glob (on this machine's unit directories, and on one with what a glob might treat apart)."""
    from agentcfg.serve import units

    odd = tmp_path / "system"
    (odd / "multi-user.target.wants").mkdir(parents=True)
    (odd / "default.target.requires").mkdir()
    (odd / "real.wants").mkdir()
    (odd / "linked.wants").symlink_to(odd / "real.wants")
    (odd / "file.wants").write_text("")
    for name in ("b.service", "a.service", ".hidden.service", "A.service", "x.service.bak", "t@.service"):
        (odd / name).write_text("[Service]\n")
    (odd / "dir.service").mkdir()
    (odd / "multi-user.target.wants" / "b.service").symlink_to(odd / "b.service")
    (odd / "default.target.requires" / "gone.service").symlink_to(odd / "nowhere.service")
    (odd / "real.wants" / ".h.service").write_text("")
    dirs = [d for _, d in units.default_dirs({"HOME": "/nonexistent"})] + [odd, tmp_path / "missing"]
    for directory in dirs:
        assert units._listing(directory, ".service") == sorted(directory.glob("*.service")), directory
        globbed = {p.name for pattern in ("*.wants/*", "*.requires/*") for p in directory.glob(pattern)}
        assert units._linked(directory) == globbed, directory

"""`doctor ROUTE`: the router, the agents' requests through it, and each leg on its own (agentcfg/doctor/route.py).

The router is tests/route/fake_litellm.py's "ok" program, started as `agentcfg route serve` starts LiteLLM; the
legs are tests/fault_server.py servers on 127.0.0.1 (or a dead port for a stopped vLLM). The verdict's pure rules
are tested with plain data first.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import jsonschema

from agentcfg.doctor.model import FAIL, PASS, WARN, Finding
from agentcfg.doctor.probes import Probe, Result
from agentcfg.doctor.route import Check, LegState, Outcome, explained, leg_state, roles, verdict, who
from tests.conftest import REPO, Home
from tests.fault_server import MODEL, FaultServer, dead_port
from tests.route.fake_litellm import program

KEY = "sk-fallback-0123456789abcdefSECRET"
SCHEMA = json.loads((REPO / "schemas" / "cli" / "doctor.schema.json").read_text())
CHECK = Check("home", "http://127.0.0.1:4000", True, roles(["local", "taotoken"]))


# -- the verdict, pure -------------------------------------------------------------------------------------------


def _ok(leg: str | None) -> Result:
    return Result(Probe("chat", "http://x/v1/chat/completions"), status=200, extra={"model_id": leg} if leg else {})


def test_roles_name_the_primary_and_numbered_fallbacks():
    assert roles(["a", "b", "c"]) == (("a", "primary"), ("b", "fallback 1"), ("c", "fallback 2"))


def test_who_answered_reads_the_model_id_of_answers_only_in_the_routes_order():
    refused = Result(Probe("chat", "u"), error="refused", extra={"model_id": "local"})
    assert who([_ok("taotoken"), _ok("local"), refused], ["local", "taotoken"]) == ("local", "taotoken")
    assert who([refused, _ok(None)], ["local", "taotoken"]) == ()
    assert who([_ok("other\x1b[2J")], ["local"]) == ("'other\\x1b[2J'",)  # no leg's id: quoted, escaped


def test_a_leg_that_answered_nothing_is_down_with_its_first_failure_as_cause():
    refused = Finding("server-unreachable", FAIL, "codex", "nothing listens at http://127.0.0.1:8000/v1", "refused: X")
    state = leg_state("local", "primary", [refused], [(Result(Probe("chat", "u"), error="refused"), False)])
    assert state == LegState("local", "primary", True, refused.summary, "refused: X")
    assert not leg_state("local", "primary", [refused], [(_ok(None), True), (_ok(None), False)]).down
    assert not leg_state("local", "primary", [], []).down  # nothing asked (offline, no agent): not down


def test_a_leg_down_while_the_router_serves_is_a_warning_naming_the_leg_and_who_answers():
    down = LegState("local", "primary", True, "nothing listens", "refused: X")
    found = verdict(CHECK, Outcome(True, True, ("taotoken",)), [down, LegState("taotoken", "fallback 1", False)])
    assert [(f.id, f.status) for f in found] == [("route-leg-down", WARN), ("route-serving", PASS)]
    down, serving = found
    assert "leg local (primary) is failing: nothing listens" in down.summary
    assert "answers come from taotoken" in down.summary and down.evidence == "refused: X"
    assert serving.summary == "route home is serving: answers come from taotoken"
    assert all(f.agent is None and f.leg is None for f in found)


def test_every_leg_down_is_the_route_down():
    legs = [LegState("local", "primary", True, "refused", "e1"), LegState("taotoken", "fallback 1", True, "401", "e2")]
    (found,) = verdict(CHECK, Outcome(True, False, ()), legs)
    assert (found.id, found.status) == ("route-down", FAIL)
    assert "local: refused" in found.summary and "taotoken: 401" in found.summary


def test_all_legs_up_and_serving_is_one_pass():
    legs = [LegState("local", "primary", False), LegState("taotoken", "fallback 1", False)]
    assert [(f.id, f.summary) for f in verdict(CHECK, Outcome(True, True, ("local",)), legs)] == [
        ("route-serving", "route home is serving: answers come from local")
    ]


def test_a_router_that_is_not_running_or_not_answering_is_a_failure_with_a_fix():
    (stopped,) = verdict(Check("home", "http://127.0.0.1:4000", False, CHECK.legs), Outcome(None), [])
    assert (stopped.id, stopped.status, stopped.fix) == ("route-not-running", FAIL, "agentcfg route serve home")
    (deaf,) = verdict(CHECK, Outcome(False, problems=["liveliness: timeout"]), [])
    assert (deaf.id, deaf.status) == ("route-not-answering", FAIL) and deaf.evidence == "liveliness: timeout"
    assert verdict(CHECK, Outcome(None), []) == []  # running, offline: nothing asked, nothing concluded


def test_a_router_started_without_a_router_key_is_open_whatever_else_is_said():
    """An older agentcfg's router answers anyone: said first, offline too (it is read from its config, no request)."""
    opened = Check("home", "http://127.0.0.1:4000", True, CHECK.legs, keyless=True)
    serving = verdict(opened, Outcome(True, True, ("local",)), [])
    assert [(f.id, f.status) for f in serving] == [("route-open", FAIL), ("route-serving", PASS)]
    found = serving[0]
    assert found.fix == "agentcfg route stop home && agentcfg route serve home" and found.agent is None
    assert "any program or web page on this machine" in found.summary
    assert [f.id for f in verdict(opened, Outcome(None), [])] == ["route-open"]  # offline
    stopped = Check("home", "http://127.0.0.1:4000", False, CHECK.legs, keyless=True)
    assert [f.id for f in verdict(stopped, Outcome(None), [])] == ["route-not-running"]


def test_a_router_that_serves_nothing_while_a_leg_works_is_not_serving():
    legs = [LegState("local", "primary", True, "refused"), LegState("taotoken", "fallback 1", False)]
    (found,) = verdict(CHECK, Outcome(True, False, (), ["codex: 429"]), legs)
    assert (found.id, found.status) == ("route-not-serving", FAIL) and "taotoken" in found.summary


def test_the_router_not_running_explains_the_agents_refused_connections_but_not_the_legs():
    through = Finding("server-unreachable", FAIL, "codex", "nothing listens")
    on_leg = Finding("server-unreachable", FAIL, "codex", "nothing listens", leg="local")
    stopped = Check("home", "u", False, CHECK.legs)
    assert explained(stopped, Outcome(None), [through, on_leg]) == [on_leg]
    assert explained(CHECK, Outcome(True), [through, on_leg]) == [through, on_leg]


# -- the whole run: a fake router in front of real test servers --------------------------------------------------


def _profile(home: Home, name: str, server_root: str, keyed: bool = False) -> None:
    key = f'key_env = "{name.upper()}_API_KEY"\n' if keyed else ""
    home.write(
        f".config/agentcfg/profiles/{name}.toml",
        f'base_url = "{server_root}/v1"\nanthropic_base_url = "{server_root}"\nmodel = "{MODEL}"\n{key}',
    )


@contextmanager
def routed(home: Home, tmp_path: Path, primary: str, fallback: str, *, serve: bool = True) -> Iterator[None]:
    """Route `home`: primary `pri` at `primary`, keyed fallback `fb` at `fallback`; its router served."""
    home.env["AGENTCFG_LITELLM"] = str(program(tmp_path, "ok"))
    _profile(home, "pri", primary)
    _profile(home, "fb", fallback, keyed=True)
    home.run("key", "set", "fb", stdin_text=KEY + "\n")
    home.run("route", "add", "home", "--primary", "pri", "--fallback", "fb", "--port", str(dead_port()))
    try:
        if serve:
            home.run("route", "serve", "home")
        yield
    finally:
        home.run("route", "stop", "home", check=None)


def _doctor(home: Home, check: int) -> tuple[dict, str]:
    data = home.run("doctor", "home", "--json", "--timeout", "15", check=check)
    text = home.run("doctor", "home", "--timeout", "15", check=check)
    for output in (data.stdout, data.stderr, text.stdout, text.stderr):
        assert KEY not in output
    report = json.loads(data.stdout)
    jsonschema.validate(report, SCHEMA)
    return report, text.stdout


def _route_findings(report: dict) -> dict[str, dict]:
    return {f["id"]: f for f in report["findings"] if f["id"].startswith("route-")}


def test_a_stopped_primary_is_routed_around_a_warning_and_exit_0(home: Home, keyring_file: Path, tmp_path: Path):
    with FaultServer(key=KEY) as fallback, routed(home, tmp_path, f"http://127.0.0.1:{dead_port()}", fallback.root):
        report, text = _doctor(home, 0)
    found = _route_findings(report)
    assert set(found) == {"route-leg-down", "route-serving"}, found
    down = found["route-leg-down"]
    assert down["status"] == "warn" and "leg pri (primary) is failing" in down["summary"]
    assert "answers come from fb" in down["summary"] and "refused" in down["evidence"]
    assert found["route-serving"]["summary"] == "route home is serving: answers come from fb"
    assert report["ok"] is True and report["route"]["answered_by"] == ["fb"]
    assert [(leg["profile"], leg["down"]) for leg in report["route"]["legs"]] == [("pri", True), ("fb", False)]
    # the primary's own findings are in its section, with its name; they do not fail the run
    assert {f["id"] for f in report["findings"] if f["leg"] == "pri"} >= {"server-unreachable"}
    assert not [f for f in report["findings"] if f["leg"] == "fb" and f["status"] == "fail"]
    assert not [f for f in report["findings"] if f["leg"] is None and f["status"] == "fail"]
    assert {t["leg"] for t in report["agents"]} == {None, "pri", "fb"}
    assert "--- leg pri (primary) ---" in text and "--- leg fb (fallback 1) ---" in text
    assert text.index("--- leg pri") < text.index("--- route home ---") < text.index("route-leg-down")


def test_every_leg_down_is_route_down_and_exit_1(home: Home, keyring_file: Path, tmp_path: Path):
    dead = [f"http://127.0.0.1:{dead_port()}" for _ in range(2)]
    with routed(home, tmp_path, *dead):
        report, text = _doctor(home, 1)
    found = _route_findings(report)
    assert set(found) == {"route-down"} and found["route-down"]["status"] == "fail"
    assert "pri:" in found["route-down"]["summary"] and "fb:" in found["route-down"]["summary"]
    assert report["ok"] is False and "route-down" in text


def test_a_router_not_running_is_named_with_its_fix(home: Home, keyring_file: Path, tmp_path: Path):
    with (
        FaultServer() as primary,
        FaultServer(key=KEY) as fallback,
        routed(home, tmp_path, primary.root, fallback.root, serve=False),
    ):
        report, text = _doctor(home, 1)
    found = _route_findings(report)
    assert set(found) == {"route-not-running"}
    stopped = found["route-not-running"]
    assert stopped["fix"] == "agentcfg route serve home" and stopped["agent"] is None
    # explained: no agent's "nothing listens" through the router; the legs were still probed, and work
    assert not [f for f in report["findings"] if f["leg"] is None and f["id"] == "server-unreachable"]
    assert not [f for f in report["findings"] if f["leg"] and f["status"] == "fail"]
    assert "fix: agentcfg route serve home" in text


def test_all_legs_healthy_is_served_by_the_primary_without_warnings(home: Home, keyring_file: Path, tmp_path: Path):
    with FaultServer() as primary, FaultServer(key=KEY) as fallback:
        with routed(home, tmp_path, primary.root, fallback.root):
            report, _ = _doctor(home, 0)
            through = [r for r in fallback.requests if r[0] == "POST"]
        direct = [h for _, _, h, _ in fallback.requests if h.get("Authorization") == f"Bearer {KEY}"]
    found = _route_findings(report)
    assert set(found) == {"route-serving"}
    assert found["route-serving"]["summary"] == "route home is serving: answers come from pri"
    assert [f for f in report["findings"] if f["status"] in ("warn", "fail")] == []
    assert through and direct  # the fallback was probed directly, with its key, though the router did not need it
    assert report["summary"]["fail"] == 0 and report["route"]["leg_summary"]["fail"] == 0


def _serve_as_an_older_agentcfg(home: Home, program_path: Path) -> subprocess.Popen:
    """What `route serve` did before every route had a router key: LiteLLM started on a config without a master
    key (`dangerously_permit_weak_or_unset_master_key`), recorded in process.json with that config's digest."""
    from agentcfg.route import server

    where = server.files("home", home.env)
    settings = json.loads(where.config.read_text())
    settings["general_settings"] = {"dangerously_permit_weak_or_unset_master_key": True}
    text = json.dumps(settings, indent=1) + "\n"
    where.config.write_text(text)
    port = int(json.loads(home.run("profile", "show", "home", "--json").stdout)["base_url"].split(":")[2].split("/")[0])
    process = subprocess.Popen(
        [str(program_path), *server.argv([], where, "127.0.0.1", port)], cwd=where.directory,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    record = {"pid": process.pid, "host": "127.0.0.1", "port": port, "config": server.digest(text), "started": 0}
    where.process.write_text(json.dumps(record) + "\n")
    return process


def test_a_router_an_older_agentcfg_started_without_a_router_key_is_open_until_restarted(
    home: Home, keyring_file: Path, tmp_path: Path
):
    with routed(home, tmp_path, f"http://127.0.0.1:{dead_port()}", f"http://127.0.0.1:{dead_port()}"):
        home.run("route", "stop", "home")
        older = _serve_as_an_older_agentcfg(home, Path(home.env["AGENTCFG_LITELLM"]))
        report = json.loads(home.run("doctor", "home", "--offline", "--json", check=1).stdout)
        jsonschema.validate(report, SCHEMA)
        found = _route_findings(report)
        assert set(found) == {"route-open"} and found["route-open"]["status"] == "fail", found
        fix = found["route-open"]["fix"]
        assert fix == "agentcfg route stop home && agentcfg route serve home"
        for command in fix.split(" && "):
            home.run(*command.split()[1:])
        assert older.wait(timeout=30) is not None  # the fix stopped the older router
        after = json.loads(home.run("doctor", "home", "--offline", "--json", check=0).stdout)
        assert _route_findings(after) == {}, after["findings"]

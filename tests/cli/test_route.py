"""`agentcfg route add/serve/status/stop` as a user runs them, with a stand-in for LiteLLM's program (the real
one runs in the realservers tier): what is written, what LiteLLM's process is given, and every refusal."""

from __future__ import annotations

import json
import signal
import socket
import stat
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import AGENTCFG, Home, keyring_env, make_home
from tests.fault_server import FaultServer, dead_port
from tests.route import fake_litellm

KEY = "sk-fallback-0123456789abcdef-route"
OTHER_KEY = "sk-other-profile-key-fedcba987654"


@pytest.fixture
def gateway() -> Iterator[FaultServer]:
    with FaultServer(key=KEY, model="gw-model") as server:
        yield server


@pytest.fixture
def home(tmp_path: Path, gateway: FaultServer) -> Iterator[Home]:
    found = make_home(tmp_path)
    found.env.update(keyring_env(tmp_path / "keyring.json"))
    found.env["AGENTCFG_LITELLM"] = str(fake_litellm.program(tmp_path, "ok"))
    prim = f'base_url = "http://127.0.0.1:{dead_port()}/v1"\nmodel = "DeepSeek-V4-Flash"\ncontext_window = 65536\n'
    found.write(".config/agentcfg/profiles/prim.toml", prim)
    found.write(".config/agentcfg/profiles/gw.toml",
                f'base_url = "{gateway.base_url}"\nmodel = "gw-model"\nkey_env = "GW_API_KEY"\n')  # fmt: skip
    found.run("key", "set", "gw", stdin_text=KEY + "\n")
    yield found
    found.run("route", "stop", "home", check=None)  # whatever a test left running


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def doc(home: Home, *args: str, status: int | None = 0) -> dict:
    return json.loads(home.run(*args, "--json", check=status).stdout or "{}")


def add(home: Home, *extra: str) -> dict:
    return doc(
        home, "route", "add", "home", "--primary", "prim", "--fallback", "gw", "--port", str(free_port()), *extra
    )


def route_dir(home: Home) -> Path:
    return Path(home.env["XDG_RUNTIME_DIR"]) / "agentcfg" / "routes" / "home"


def gone(pid: int) -> bool:
    """No such process, or a zombie no one has reaped yet (a container's pid 1 may never reap)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] == "Z"
    except FileNotFoundError:
        return True


def everything_printed(*results: subprocess.CompletedProcess[str]) -> str:
    return "".join(r.stdout + r.stderr for r in results)


# -- add ---------------------------------------------------------------------------------------------------------


def test_add_writes_a_profile_agents_can_be_switched_to(home: Home) -> None:
    added = add(home)
    text = home.read(".config/agentcfg/profiles/home.toml")
    assert "[route]" in text and 'primary = "prim"' in text and KEY not in text
    assert added["legs"] == ["prim", "gw"] and added["url"].startswith("http://127.0.0.1:")
    assert (added["context_window"], added["max_output_tokens"]) == (65536, 8192)  # prim's window, gw's default bound
    listed = {p["name"]: p for p in doc(home, "profile", "list")}
    assert listed["home"]["route"] == {"primary": "prim", "fallbacks": ["gw"]}
    assert "(route: prim, then gw)" in home.run("profile", "list").stdout
    home.write(".codex/config.toml", "")
    home.run("switch", "home", "--agent", "codex")
    assert added["url"] in home.read(".codex/config.toml")


@pytest.mark.parametrize(
    ("args", "says"),
    [(["--primary", "nope", "--fallback", "gw"], "unknown profile 'nope'"),
     (["--primary", "prim", "--fallback", "nope"], "'nope', which does not exist"),
     (["--primary", "prim", "--fallback", "prim"], "twice"),
     (["--primary", "prim", "--fallback", "gw", "--host", "not a host"], "host")],
)  # fmt: skip
def test_add_refuses_what_cannot_route_and_writes_nothing(home: Home, args: list[str], says: str) -> None:
    done = home.run("route", "add", "home", *args, check=2)
    assert says in done.stderr, done.stderr
    assert not home.path(".config/agentcfg/profiles/home.toml").exists()


def test_a_route_of_routes_is_refused(home: Home) -> None:
    add(home)
    done = home.run("route", "add", "outer", "--primary", "home", "--fallback", "gw", check=2)
    assert "is a route itself" in done.stderr


def test_beyond_loopback_the_router_gets_a_key_of_its_own(home: Home) -> None:
    added = add(home, "--host", "0.0.0.0")
    assert added["router_key_stored"] and added["fields"]["key_env"] == "HOME_ROUTER_KEY"
    router_key = home.run("key", "get", "home").stdout.strip()
    assert router_key.startswith("sk-agentcfg-") and len(router_key) > 40
    served = doc(home, "route", "serve", "home")
    given = fake_litellm.record(Path(home.env["AGENTCFG_LITELLM"]))
    assert given["env"]["AGENTCFG_ROUTER_KEY"] == router_key
    assert given["config"]["general_settings"] == {"master_key": "os.environ/AGENTCFG_ROUTER_KEY"}
    assert served["host"] == "0.0.0.0"
    assert router_key not in json.dumps(served)


def post(url: str, key: str | None = None, *, kind: str = "application/json", **headers: str) -> tuple[int, dict]:
    """One chat completion through the router: (status, the answer's headers, lower-cased)."""
    import http.client
    from urllib.parse import urlsplit

    where = urlsplit(url)
    body = json.dumps({"model": "DeepSeek-V4-Flash", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4})
    sent = {"Content-Type": kind, **headers, **({"Authorization": f"Bearer {key}"} if key else {})}
    conn = http.client.HTTPConnection(where.hostname, where.port, timeout=30)
    try:
        conn.request("POST", "/v1/chat/completions", body, sent)
        response = conn.getresponse()
        response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}
    finally:
        conn.close()


def test_a_loopback_route_has_a_router_key_and_its_router_refuses_requests_without_it(
    home: Home, gateway: FaultServer
) -> None:
    """Issue 27: a loopback router without a key let any local process, another user or a web page spend the
    gateway key its fallback holds. Every route now has a router key, and status sends it."""
    added = add(home)
    assert added["router_key_stored"] and added["fields"]["key_env"] == "HOME_ROUTER_KEY"
    router_key = home.run("key", "get", "home").stdout.strip()
    assert router_key.startswith("sk-agentcfg-")
    served = doc(home, "route", "serve", "home")
    given = fake_litellm.record(Path(home.env["AGENTCFG_LITELLM"]))
    assert given["config"]["general_settings"] == {"master_key": "os.environ/AGENTCFG_ROUTER_KEY"}
    assert given["env"]["AGENTCFG_ROUTER_KEY"] == router_key
    assert given["env"]["LITELLM_CORS_ORIGINS"] == served["url"].removesuffix("/v1")
    assert post(served["url"])[0] == 401
    assert post(served["url"], "sk-agentcfg-guessed-0123456789")[0] == 401
    assert [r for r in gateway.requests if r[0] == "POST"] == []  # nothing reached the paid leg
    assert post(served["url"], router_key)[0] == 200
    status = doc(home, "route", "status", "home")  # the router's /health wants the key too
    assert [leg["state"] for leg in status["legs"]] == ["healthy", "healthy"], status
    assert router_key not in everything_printed(home.run("route", "status", "home"))


def test_a_route_of_keyless_legs_has_a_router_key_too(home: Home) -> None:
    """A web page can drive a router of local legs as well, and a leg may get a key after the route is made."""
    home.write(".config/agentcfg/profiles/other.toml", 'base_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n')
    added = doc(home, "route", "add", "home", "--primary", "prim", "--fallback", "other", "--port", str(free_port()))
    assert added["router_key_stored"] and added["fields"]["key_env"] == "HOME_ROUTER_KEY"
    doc(home, "route", "serve", "home")
    given = fake_litellm.record(Path(home.env["AGENTCFG_LITELLM"]))
    assert given["config"]["general_settings"] == {"master_key": "os.environ/AGENTCFG_ROUTER_KEY"}


OLD_ROUTE = """# agentcfg profile home (made by route add before every route had a router key)
base_url = "http://127.0.0.1:{port}/v1"
anthropic_base_url = "http://127.0.0.1:{port}"
model = "DeepSeek-V4-Flash"
description = "route: prim, then gw"
context_window = 32768  # set by hand

[route]
primary = "prim"
fallbacks = ["gw"]
"""


def test_a_route_made_before_router_keys_gets_one_at_its_next_serve(home: Home) -> None:
    """Its file gains key_env (nothing else of it changes), its key is made and stored, the router is served with
    it, and serve says which agents point at the route without it (they need `switch` again)."""
    port = free_port()
    home.write(".config/agentcfg/profiles/home.toml", OLD_ROUTE.format(port=port))
    home.write(".codex/config.toml", "")
    home.run("switch", "home", "--agent", "codex")  # as the user did before: codex sends no key to the router
    served = home.run("route", "serve", "home")
    text = home.read(".config/agentcfg/profiles/home.toml")
    by_hand = "context_window = 32768  # set by hand\n"
    assert text == OLD_ROUTE.format(port=port).replace(by_hand, by_hand + 'key_env = "HOME_ROUTER_KEY"\n'), text
    router_key = home.run("key", "get", "home").stdout.strip()
    assert router_key.startswith("sk-agentcfg-")
    given = fake_litellm.record(Path(home.env["AGENTCFG_LITELLM"]))
    assert given["env"]["AGENTCFG_ROUTER_KEY"] == router_key
    assert "had no router key" in served.stderr and "codex points at it without the key" in served.stderr, served
    assert "run `agentcfg switch home`" in served.stderr and router_key not in everything_printed(served)
    assert post(f"http://127.0.0.1:{port}/v1")[0] == 401
    # served again: nothing new to say
    home.run("route", "stop", "home")
    again = doc(home, "route", "serve", "home")
    assert again["router_key_made"] is False and home.run("key", "get", "home").stdout.strip() == router_key


def test_a_router_key_gone_from_the_keyring_is_made_again_at_serve(home: Home) -> None:
    add(home)
    home.run("key", "rm", "home")
    served = doc(home, "route", "serve", "home")
    assert served["router_key_made"] is True
    router_key = home.run("key", "get", "home").stdout.strip()
    assert fake_litellm.record(Path(home.env["AGENTCFG_LITELLM"]))["env"]["AGENTCFG_ROUTER_KEY"] == router_key
    # removed while its router runs: the router, which has the old key, is not passed off as serving the new one
    home.run("key", "rm", "home")
    done = home.run("route", "serve", "home", check=2)
    assert "its router key is new" in done.stderr and "agentcfg route stop home && agentcfg route serve home" in (
        done.stderr
    )
    home.run("route", "stop", "home")
    doc(home, "route", "serve", "home")
    router_key = home.run("key", "get", "home").stdout.strip()
    assert post(served["url"], router_key)[0] == 200


def test_without_a_keyring_the_router_key_comes_from_its_variable(home: Home) -> None:
    """No keyring: `route add` says to export the route's variable, and then uses what is exported there."""
    no_keyring = {"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring", "GW_API_KEY": KEY}
    done = home.run("route", "add", "home", "--primary", "prim", "--fallback", "gw", check=2, **no_keyring)
    assert "HOME_ROUTER_KEY" in done.stderr and not home.path(".config/agentcfg/profiles/home.toml").exists()
    chosen = "sk-router-chosen-by-the-user-0123456789"
    home.env.update(no_keyring, HOME_ROUTER_KEY=chosen)
    added = add(home)
    assert added["fields"]["key_env"] == "HOME_ROUTER_KEY" and added["router_key_stored"] is False
    served = doc(home, "route", "serve", "home")
    assert fake_litellm.record(Path(home.env["AGENTCFG_LITELLM"]))["env"]["AGENTCFG_ROUTER_KEY"] == chosen
    assert served["router_key_made"] is False and post(served["url"])[0] == 401


# -- serve, status, stop -----------------------------------------------------------------------------------------


def test_serve_starts_litellm_with_the_keys_in_its_environment_only(home: Home) -> None:
    add(home)
    served = home.run("route", "serve", "home", OTHER_API_KEY=OTHER_KEY, OPENAI_API_KEY=OTHER_KEY)
    assert "serving at" in served.stdout, served
    given = fake_litellm.record(Path(home.env["AGENTCFG_LITELLM"]))
    assert given["env"]["AGENTCFG_LEG_1_KEY"] == KEY  # the fallback's key, from the keyring
    assert OTHER_KEY not in json.dumps(given["env"])  # no other variable of the user's goes along
    assert {"OPENAI_API_KEY", "GW_API_KEY", "OTHER_API_KEY"}.isdisjoint(given["env"])
    config = route_dir(home) / "litellm.yaml"
    assert given["config"] == json.loads(config.read_text())
    assert KEY not in config.read_text() and stat.S_IMODE(config.stat().st_mode) == 0o600
    assert stat.S_IMODE(route_dir(home).stat().st_mode) == 0o700
    deployments = given["config"]["model_list"]
    assert [d["model_info"]["id"] for d in deployments] == ["prim", "gw"]
    assert [d["litellm_params"]["order"] for d in deployments] == [1, 2]
    assert deployments[1]["litellm_params"]["api_key"] == "os.environ/AGENTCFG_LEG_1_KEY"
    status = doc(home, "route", "status", "home")
    assert status["running"] and status["answering"]
    stopped = doc(home, "route", "stop", "home")
    assert stopped["pid"] == status["pid"]
    assert gone(status["pid"])
    printed = everything_printed(served, home.run("route", "status", "home", check=1))
    assert KEY not in printed and KEY not in "".join(p.read_text(errors="replace") for p in route_dir(home).iterdir())


def test_serving_again_is_nothing_to_do_and_stopping_twice_is_exit_3(home: Home) -> None:
    add(home)
    first = doc(home, "route", "serve", "home")
    again = doc(home, "route", "serve", "home")
    assert again["already_running"] and again["pid"] == first["pid"]
    home.run("route", "stop", "home")
    done = home.run("route", "stop", "home", check=3)
    assert "is not running" in done.stderr


def test_a_changed_route_is_not_served_by_the_old_router(home: Home) -> None:
    added = add(home)
    home.run("route", "serve", "home")
    port = added["url"].split(":")[2].split("/")[0]
    home.run(
        "route", "add", "home", "--force", "--primary", "prim", "--fallback", "gw", "--port", port, "--cooldown", "5"
    )
    done = home.run("route", "serve", "home", check=2)
    assert "route stop home && agentcfg route serve home" in done.stderr


def test_status_of_a_route_not_running_is_exit_1(home: Home) -> None:
    add(home)
    status = home.run("route", "status", "home", "--json", check=1)
    assert json.loads(status.stdout)["running"] is False


def test_a_pid_left_behind_and_reused_is_never_signalled(home: Home) -> None:
    """process.json names a pid that is now another program's: not running, and stop leaves it alone."""
    add(home)
    other = subprocess.Popen(["sleep", "60"])
    try:
        route_dir(home).mkdir(parents=True)
        (route_dir(home) / "process.json").write_text(json.dumps({"pid": other.pid, "port": 1, "config": "x"}))
        home.run("route", "stop", "home", check=3)
        assert other.poll() is None
        assert doc(home, "route", "status", "home", status=1)["running"] is False
    finally:
        other.kill()
        other.wait()


def test_a_port_in_use_is_refused_before_anything_starts(home: Home) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        home.run("route", "add", "home", "--primary", "prim", "--fallback", "gw", "--port", str(port))
        done = home.run("route", "serve", "home", check=2)
    assert f"port {port} on 127.0.0.1 is in use" in done.stderr
    assert not (route_dir(home) / "process.json").exists()


def test_a_missing_fallback_key_is_exit_4_and_nothing_starts(home: Home) -> None:
    add(home)
    home.run("key", "rm", "gw")
    done = home.run("route", "serve", "home", check=4)
    assert "gw" in done.stderr and not (route_dir(home) / "process.json").exists()


def test_litellm_that_exits_is_reported_with_its_log(home: Home, tmp_path: Path) -> None:
    add(home)
    done = home.run("route", "serve", "home", check=2, AGENTCFG_LITELLM=str(fake_litellm.program(tmp_path, "exit")))
    assert "LiteLLM exited before it answered" in done.stderr
    assert "the config is not what LiteLLM expects" in done.stderr  # the log's end


def test_litellm_that_never_answers_is_stopped_at_the_timeout(home: Home, tmp_path: Path) -> None:
    add(home)
    silent = str(fake_litellm.program(tmp_path, "silent"))
    done = home.run("route", "serve", "home", "--timeout", "2", check=2, AGENTCFG_LITELLM=silent)
    assert "did not answer within 2 s (stopped it)" in done.stderr
    pid = fake_litellm.record(Path(silent))  # it ran; now it is gone
    assert pid and not (route_dir(home) / "process.json").exists()


def test_without_litellm_serve_says_what_to_install(home: Home) -> None:
    """The exact command for the Python that runs agentcfg, with the `route` extra's pins: on the package index
    the name `agentcfg` is another project's, so `pip install 'agentcfg[route]'` would install someone else's code."""
    add(home)
    env = {k: v for k, v in home.env.items() if k != "AGENTCFG_LITELLM"}
    done = subprocess.run([AGENTCFG, "route", "serve", "home"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done
    python = str(Path(AGENTCFG).parent / "python")
    assert f"{python} -m pip install 'litellm[proxy]==1.108.7' prisma==0.15.0" in done.stderr, done.stderr
    assert "agentcfg[" not in done.stderr


def test_serve_of_a_profile_that_is_not_a_route_is_refused(home: Home) -> None:
    done = home.run("route", "serve", "prim", check=2)
    assert "not a route" in done.stderr and "agentcfg route add" in done.stderr


def test_foreground_becomes_litellm_and_stop_ends_it(home: Home) -> None:
    add(home)
    process = subprocess.Popen([AGENTCFG, "route", "serve", "home", "--foreground"], env=home.env,
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not doc(home, "route", "status", "home", status=None).get("answering"):
            time.sleep(0.3)
        status = doc(home, "route", "status", "home")
        assert status["pid"] == process.pid  # agentcfg became LiteLLM: a service manager watches the router itself
        home.run("route", "stop", "home")
        assert process.wait(timeout=30) is not None
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
            process.wait()


def test_the_systemd_unit_runs_serve_in_the_foreground(home: Home) -> None:
    add(home)
    unit = home.run("route", "serve", "home", "--print-systemd-unit").stdout
    assert "[Service]" in unit and "route serve home --foreground" in unit and "ExecStop=" in unit
    assert not route_dir(home).exists()  # nothing started, nothing written


def test_bench_legs_puts_the_route_beside_its_legs(home: Home) -> None:
    add(home)
    assert "--legs" in home.run("bench", "--help").stdout
    done = home.run("bench", "prim", "--legs", "-n", "1", "--max-tokens", "4", "--json", check=None)
    assert "none of these profiles is a route" in done.stderr
    home.run("route", "serve", "home")
    done = home.run("bench", "home", "--legs", "-n", "1", "--max-tokens", "4", "--json", check=None)
    assert list(json.loads(done.stdout)["profiles"]) == ["home", "prim", "gw"]  # the route, then each leg directly


def test_switching_to_a_route_says_when_its_router_is_not_running(home: Home) -> None:
    add(home)
    home.write(".codex/config.toml", "")
    done = home.run("switch", "home", "--agent", "codex")
    assert "router is not running" in done.stderr and "agentcfg route serve home" in done.stderr
    home.run("route", "serve", "home")
    assert "router is not running" not in home.run("switch", "home", "--agent", "qwen", check=None).stderr


def test_a_route_whose_leg_is_gone_is_refused_and_nothing_is_written(home: Home) -> None:
    add(home)
    home.path(".config/agentcfg/profiles/gw.toml").unlink()
    home.write(".codex/config.toml", "# mine\n")
    done = home.run("switch", "home", "--agent", "codex", check=2)
    assert "routes to profile 'gw', which does not exist" in done.stderr
    assert home.read(".codex/config.toml") == "# mine\n"
    assert "home" in home.run("profile", "list").stdout  # the other commands still work


def test_a_team_file_cannot_be_a_route(home: Home, tmp_path: Path) -> None:
    add(home)
    team = tmp_path / "team.toml"
    team.write_text(home.read(".config/agentcfg/profiles/home.toml"))
    done = home.run("profile", "add", "teamroute", "--from", str(team), check=2)
    assert "cannot be a route" in done.stderr
    assert not home.path(".config/agentcfg/profiles/teamroute.toml").exists()


def test_a_projects_route_is_refused_when_you_trust_the_project(home: Home) -> None:
    add(home)
    home.write("repo/.agentcfg/profiles/proute.toml", home.read(".config/agentcfg/profiles/home.toml"))
    done = home.run("trust", str(home.root / "repo"), check=2)
    assert "proute.toml" in done.stderr and "cannot be a route" in done.stderr


def test_a_model_id_litellm_would_read_as_a_variable_is_refused(home: Home) -> None:
    add(home)
    home.write(".config/agentcfg/profiles/gw.toml",
               f'base_url = "{home.env.get("X", "http://127.0.0.1:9/v1")}"\nmodel = "os.environ/AGENTCFG_LEG_1_KEY"\n'
               'key_env = "GW_API_KEY"\n')  # fmt: skip
    done = home.run("route", "serve", "home", check=2)
    assert "LiteLLM would read as a variable" in done.stderr
    assert not (route_dir(home) / "process.json").exists()


def test_a_route_removed_while_serving_can_still_be_stopped(home: Home) -> None:
    add(home)
    pid = doc(home, "route", "serve", "home")["pid"]
    home.run("profile", "rm", "home")
    assert doc(home, "route", "stop", "home")["pid"] == pid and gone(pid)


def test_profile_set_on_a_route_bounds_it_further_and_keeps_its_legs(home: Home) -> None:
    add(home)
    home.run("profile", "set", "home", "context_window=4096")
    shown = doc(home, "profile", "show", "home")
    assert (shown["context_window"], shown["max_output_tokens"]) == (4096, 4096)
    assert shown["route"] == {"primary": "prim", "fallbacks": ["gw"]}
    home.run("profile", "unset", "home", "context_window")
    assert doc(home, "profile", "show", "home")["context_window"] == 65536  # the legs' again


def test_ctrl_c_while_litellm_starts_stops_it(home: Home, tmp_path: Path) -> None:
    add(home)
    silent = fake_litellm.program(tmp_path, "silent")
    process = subprocess.Popen([AGENTCFG, "route", "serve", "home"],
                               env={**home.env, "AGENTCFG_LITELLM": str(silent), "PYTHONFAULTHANDLER": "1"},
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not (route_dir(home) / "process.json").exists():
        time.sleep(0.1)
    pid = json.loads((route_dir(home) / "process.json").read_text())["pid"]
    process.send_signal(signal.SIGINT)  # right after the record appears: inside `start` at times (it was left running)
    try:
        assert process.wait(timeout=30) == 130
    except subprocess.TimeoutExpired:  # seen once in CI: where it waits (faulthandler's dump), not just that it did
        process.send_signal(signal.SIGABRT)
        raise AssertionError(process.communicate(timeout=10)[1].decode(errors="replace")[-4000:]) from None
    assert gone(pid) and not (route_dir(home) / "process.json").exists()


# -- what the review found ---------------------------------------------------------------------------------------


def test_a_route_beyond_loopback_never_loses_its_router_key(home: Home) -> None:
    add(home, "--host", "0.0.0.0")
    done = home.run("profile", "unset", "home", "key_env", check=2)
    assert "needs key_env" in done.stderr
    assert "key_env" in home.read(".config/agentcfg/profiles/home.toml")
    path = home.path(".config/agentcfg/profiles/home.toml")  # edited by hand: refused when read, never served open
    path.write_text("\n".join(line for line in path.read_text().splitlines() if not line.startswith("key_env")))
    done = home.run("route", "serve", "home", check=2)
    assert "needs key_env" in done.stderr and not (route_dir(home) / "process.json").exists()


def test_add_force_never_makes_another_profiles_key_the_router_key(home: Home) -> None:
    done = home.run("route", "add", "gw", "--force", "--primary", "prim", "--fallback", "gw", "--host", "0.0.0.0",
                    check=2)  # fmt: skip
    assert "names itself" in done.stderr  # gw cannot route to itself; now as another name with gw's key kept:
    home.write(
        ".config/agentcfg/profiles/old.toml", 'base_url = "https://old.example/v1"\nmodel = "m"\nkey_env = "OLD"\n'
    )
    home.run("key", "set", "old", stdin_text="sk-old-gateway-key-123456789\n")
    done = home.run("route", "add", "old", "--force", "--primary", "prim", "--fallback", "gw", "--host", "0.0.0.0",
                    "--port", str(free_port()), check=2)  # fmt: skip
    assert "not a router key" in done.stderr
    assert home.run("key", "get", "old").stdout.strip() == "sk-old-gateway-key-123456789"
    assert "route" not in home.read(".config/agentcfg/profiles/old.toml")


def test_a_route_added_again_keeps_its_router_key(home: Home) -> None:
    add(home, "--host", "0.0.0.0")
    first = home.run("key", "get", "home").stdout
    again = add(home, "--host", "0.0.0.0", "--force")
    assert not again["router_key_stored"] and home.run("key", "get", "home").stdout == first


def test_two_serves_at_once_start_one_router(home: Home) -> None:
    add(home)
    both = [subprocess.Popen([AGENTCFG, "route", "serve", "home", "--json"], env=home.env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]  # fmt: skip
    answers = [json.loads(p.communicate(timeout=120)[0]) for p in both]
    assert sorted(a["already_running"] for a in answers) == [False, True], answers
    assert answers[0]["pid"] == answers[1]["pid"]
    status = doc(home, "route", "status", "home")
    assert status["pid"] == answers[0]["pid"] and status["answering"]


def test_foreground_refuses_a_router_already_running_and_json(home: Home) -> None:
    add(home)
    assert "do not go together" in home.run("route", "serve", "home", "--foreground", "--json", check=2).stderr
    home.run("route", "serve", "home")
    done = home.run("route", "serve", "home", "--foreground", check=2)
    assert "running already" in done.stderr and "agentcfg route stop home" in done.stderr


def test_the_log_shown_on_failure_is_this_runs(home: Home, tmp_path: Path) -> None:
    add(home)
    home.run("route", "serve", "home")
    home.run("route", "status", "home")  # the fake logs each request it answers
    home.run("route", "stop", "home")
    assert "fake litellm:" in (route_dir(home) / "litellm.log").read_text()
    done = home.run("route", "serve", "home", check=2, AGENTCFG_LITELLM=str(fake_litellm.program(tmp_path, "exit")))
    assert "the config is not what LiteLLM expects" in done.stderr and "fake litellm:" not in done.stderr


def test_a_route_is_not_exported_for_a_team(home: Home) -> None:
    add(home)
    done = home.run("profile", "export", "home", check=2)
    assert "is a route" in done.stderr and "docs/route.md" in done.stderr

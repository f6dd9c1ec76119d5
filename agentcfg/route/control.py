"""`route add`, `serve`, `status`, `stop`: each takes the environment and returns what the CLI shows."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

from agentcfg import env, fields, fixes, fsutil, keystore, profile_edit, profiles
from agentcfg.errors import AgentcfgError, Exit
from agentcfg.invocation import self_command
from agentcfg.profiles import Profile
from agentcfg.route import health, litellm, server, spec
from agentcfg.shells import systemd_command

FIRST_PORT = 4000  # LiteLLM's own default port; the next free one is taken from here
ROUTER_KEY_PREFIX = "sk-agentcfg-"  # what `route add` makes, and the only stored key it reuses


def _own(environ: env.Environ) -> dict[str, Profile]:
    return profiles.load_own(environ)


def route_and_legs(name: str, environ: env.Environ) -> tuple[Profile, list[Profile]]:
    """The route NAME (one of yours) and its legs, primary first; else one error saying what to run."""
    known = _own(environ)
    found = known.get(name) or profiles.get(name, environ)  # not yours: the usual error, or a project's profile
    if found.route is None:
        raise AgentcfgError(
            f"profile {name!r} is not a route",
            hint=f"Make one: `agentcfg route add NAME --primary {fixes.command(name)} --fallback PROFILE`.",
        )
    if why := spec.problem(found, known):
        raise AgentcfgError(why, where=found.source, hint=f"Fix it with `agentcfg route add {name} --force ...`.")
    return found, [known[leg] for leg in found.route.legs]


def _free_port(host: str, taken: set[int]) -> int:
    for candidate in range(FIRST_PORT, FIRST_PORT + 100):
        if candidate not in taken and not server.port_in_use(spec.connect_host(host), candidate):
            return candidate
    raise AgentcfgError(f"no free port from {FIRST_PORT} to {FIRST_PORT + 99}", hint="Give one with --port N.")


def add(
    name: str,
    primary: str,
    fallbacks: tuple[str, ...],
    *,
    port: int | None,
    max_parallel: int | None,
    cooldown: int,
    timeout: int,
    host: str,
    force: bool,
    environ: dict[str, str],
) -> dict[str, Any]:
    """Write the route's profile and make its router key (stored in the keyring): every route has one."""
    profile_edit.check_new_name(name, force, environ)
    known = _own(environ)
    if primary not in known:
        profiles.get(primary, environ)  # the unknown-profile error, with suggestions
        raise AgentcfgError(f"the primary {primary!r} is a profile of this project: a route's legs are your own")
    route = spec.Route(primary, tuple(fallbacks), max_parallel, cooldown, host, timeout)
    # The options first (a host that is no address must not reach the port search, nor a URL)
    profiles.validate({"base_url": "http://127.0.0.1/v1", "model": "m", "route": route.table()},
                      profiles.schema_text(), f"route {name}")  # fmt: skip
    draft = spec.make(name, route, known[primary], port or FIRST_PORT)
    if why := spec.problem(draft, {**known, name: draft}):
        raise AgentcfgError(why, hint="A route's legs are existing profiles of servers (`agentcfg profile list`).")
    taken = {spec.port(p) for p in known.values() if p.route is not None and p.name != name}
    if port is None:
        port = _free_port(host, taken)
    elif port in taken:
        other = next(p.name for p in known.values() if p.route is not None and spec.port(p) == port)
        raise AgentcfgError(f"route {other!r} listens on port {port}", hint="Give another --port.")
    new = spec.make(name, route, known[primary], port)
    profiles.validate(new.fields(), profiles.schema_text(), f"route {name}")
    stored = _router_key(new, environ)
    path = profiles.profiles_dir(environ) / f"{name}.toml"
    fsutil.save(path, profiles.to_toml(new).encode("utf-8"), 0o644, env.display(path, environ))
    bounded = spec.bounded(new, {**known, name: new})
    return {
        "profile": name,
        "path": str(path),
        "fields": new.fields(),
        "legs": list(route.legs),
        "url": new.base_url,
        "context_window": bounded.context_window,
        "max_output_tokens": bounded.max_output_tokens,
        "router_key_stored": stored,
        "serve": f"agentcfg route serve {name}",
        "switch": f"agentcfg switch {name}",
    }


def _router_key(new: Profile, environ: dict[str, str]) -> bool:
    """Keep the route's router key: the one stored already, else a new one. True: stored now. No keyring to be
    had: the key exported in the route's variable, the way out the keyring's error gives."""
    store = keystore.KeyStore(environ, new)
    try:
        stored = store.get(new.name)
    except keystore.KeyringProblem as problem:
        exported = environ.get(new.key_env or "")
        if problem.kind not in ("no-backend", "locked") or not exported:
            raise
        if why := keystore.check_value(exported, typed=True):
            raise AgentcfgError(f"the router key in {new.key_env} (your environment) cannot be used: {why}") from None
        return False  # `route serve` and the agents' `key get` read it there (keystore.resolve)
    if stored:
        if not stored.startswith(ROUTER_KEY_PREFIX):  # another profile's key, kept under this name: never reused
            raise AgentcfgError(
                f"a key is stored for {new.name!r} that is not a router key (a profile of that name had it)",
                hint=f"Keep it under another route name, or remove it first: `agentcfg key rm {new.name}`.",
            )
        store.bind(new.name, keystore.profile_origins(new))  # the route's own key, at its new address
        return False
    store.store(new, new_router_key())
    return True


def new_router_key() -> str:
    import secrets

    return ROUTER_KEY_PREFIX + secrets.token_urlsafe(32)  # 256 random bits


def _serving_key(route: Profile, environ: dict[str, str]) -> tuple[str, bool]:
    """The router key `serve` starts LiteLLM with, and whether it was made now: the stored or exported one
    (keystore.resolve: only for the route's own address), else a new one, stored (none was kept: a route from
    before every route had one, or a key removed)."""
    try:
        return keystore.resolve_key(route, environ).value, False
    except keystore.KeyringProblem as problem:
        if problem.kind != "missing":
            raise
    key = new_router_key()
    keystore.KeyStore(environ, route).store(route, key)
    return key, True


def _give_key_env(route: Profile, environ: dict[str, str]) -> list[str]:
    """Name the router key's variable in the file of a route from before every route had one (that field alone
    changes, as `profile set` changes it); the agents that point at the route now, without the key."""
    assert route.key_env is not None
    done = profile_edit.change(route.name, (f"key_env={route.key_env}",), (), False, environ)
    return done.pointing


def key_note(name: str, variable: str, *, before: bool, pointing: list[str]) -> str:
    """What `serve` says when it gave the route a router key (the agents that had none must be switched again)."""
    switch = f"`agentcfg switch {name}`"
    if not before:
        return (
            f"no router key was stored for route {name}: made a new one (in the keyring); agents switched to it "
            f"fetch it themselves, one given the old key (in its files, a team's) needs {switch} or the new key"
        )
    if pointing:
        who = f"{', '.join(pointing)} {'points' if len(pointing) == 1 else 'point'} at it without the key"
    else:
        who = "an agent switched to it before sends no key"
    return (
        f"route {name} had no router key, so its router answered any program or web page on this machine: it has "
        f"one now (in the keyring; its variable {variable}) and refuses requests without it; {who}: run {switch}"
    )


def _keys(legs_: list[Profile], environ: dict[str, str]) -> dict[str, str]:
    """The legs' keys LiteLLM gets, by variable (keystore.resolve: each only towards its own hosts). None stored or
    exported: Exit.NO_KEY, naming the leg, before anything starts."""

    found: dict[str, str] = {}
    for index, leg in enumerate(legs_):
        if leg.key_env:
            found[litellm.key_variable(index)] = keystore.resolve_key(leg, environ).value
    return found


def serve(
    name: str,
    environ: dict[str, str],
    *,
    foreground: bool,
    timeout: float = server.READY_TIMEOUT,
    tick: Callable[[float], None] | None = None,
    tell: Callable[[str], None] = lambda note: None,
) -> dict[str, Any]:
    """Start the route's LiteLLM (or find it running with this config) and wait until it answers. `tell` gets
    what the user must know before it starts (a router key made now: in the foreground nothing returns)."""
    route, legs_ = route_and_legs(name, environ)
    before = route.key_env is None  # a route from before every route had a router key: it gets one now
    if before:
        route = dataclasses.replace(route, key_env=spec.key_variable(name))
    assert route.route is not None
    command = server.litellm_command(environ)  # what to install, before a keyring is asked anything
    for leg in (route, *legs_):  # LiteLLM reads any value that starts so as the name of a variable it holds
        if leg.model.lower().startswith("os.environ/"):
            raise AgentcfgError(
                f"profile {leg.name!r} has the model id {leg.model!r}, which LiteLLM would read as a variable",
                where=leg.source,
                hint=f"Give the model id the server lists: `agentcfg profile set {leg.name} model=ID`.",
            )
    keys = _keys(legs_, environ)
    keyed = {leg.name for index, leg in enumerate(legs_) if litellm.key_variable(index) in keys}
    text = litellm.text(litellm.config(route, legs_, keyed=keyed))
    where = server.files(name, environ)
    host, port = route.route.host, spec.port(route)
    result = _serving(route, legs_, where, environ)
    server.make_directory(where)
    # One serve at a time: two at once would each start a LiteLLM, and one would be left unrecorded
    with fsutil.exclusive_lock(where.directory / "lock", timeout=timeout + 30):
        keys[litellm.ROUTER_KEY_VARIABLE], made = _serving_key(route, environ)
        pointing = _give_key_env(route, environ) if before else []
        if made or before:
            tell(key_note(name, str(route.key_env), before=before, pointing=pointing))
        result["router_key_made"] = made
        running = server.read_process(where)
        if running is not None:
            if foreground:  # a service manager's unit must not "start" a router someone else runs
                raise AgentcfgError(
                    f"route {name!r} is running already (pid {running['pid']}), not under this command",
                    hint=f"Stop it first: `agentcfg route stop {name}`.",
                )
            if running.get("config") != server.digest(text) or running.get("port") != port or made:
                raise AgentcfgError(
                    f"route {name!r} is running (pid {running['pid']}) with a config that is not the route's now"
                    + (" (its router key is new)" if made else ""),
                    hint=f"Restart it: `agentcfg route stop {name} && agentcfg route serve {name}`.",
                )
            server.wait_ready(_url(route), int(running["pid"]), where, timeout, tick, stop_on_timeout=False)
            return {**result, "pid": running["pid"], "already_running": True, "ready_seconds": None}
        if server.port_in_use(host, port):
            raise AgentcfgError(
                f"port {port} on {host} is in use by another program, not route {name!r}'s router",
                hint=f"Stop that program, or move the route: `agentcfg route add {name} --force --port N ...`.",
            )
        server.write_config(where, text)
        child = server.process_env(environ, {**keys, **litellm.browser_variables(route)})
        if foreground:
            server.exec_foreground(command, where, host, port, child, text)
        with server.ctrl_c_as_flag() as interrupted:
            try:
                pid = server.start(command, where, host, port, child, text)
                seconds = server.wait_ready(_url(route), pid, where, timeout, tick, interrupted=interrupted)
                interrupted()
            except KeyboardInterrupt:  # Ctrl-C while it starts: nothing is left running that was not asked for
                server.stop(where)
                raise
    return {**result, "pid": pid, "already_running": False, "ready_seconds": round(seconds, 1)}


def _url(route: Profile) -> str:
    return route.base_url.removesuffix("/v1")


def _serving(route: Profile, legs_: list[Profile], where: server.Files, environ: env.Environ) -> dict[str, Any]:
    assert route.route is not None
    version = server.litellm_version(environ)
    return {
        "route": route.name,
        "url": route.base_url,
        "anthropic_url": route.anthropic_base_url,
        "host": route.route.host,
        "port": spec.port(route),
        "model": route.model,
        "legs": [{"profile": leg.name, "base_url": leg.base_url, "model": leg.model} for leg in legs_],
        "config": str(where.config),
        "log": str(where.log),
        "litellm_version": version,
        "litellm_tested": server.TESTED_LITELLM,
    }


def systemd_unit(name: str, environ: env.Environ) -> str:
    """A systemd user unit that runs the route's router (`route serve NAME --foreground`)."""
    route = route_and_legs(name, environ)[0]
    assert route.route is not None
    command = systemd_command((*self_command(), "route", "serve", name, "--foreground"))
    then = ", then ".join(route.route.fallbacks)
    return (
        "# ~/.config/systemd/user/agentcfg-route-" + name + ".service\n"
        "# systemctl --user daemon-reload && systemctl --user enable --now agentcfg-route-" + name + "\n"
        "[Unit]\n"
        f"Description=agentcfg route {name}: {route.route.primary}, then {then} (LiteLLM router)\n"
        "After=network-online.target\n"
        "\n[Service]\n"
        f"ExecStart={command}\n"
        f"ExecStop={systemd_command((*self_command(), 'route', 'stop', name))}\n"
        "Restart=on-failure\n"
        "RestartSec=5\n"
        "\n[Install]\n"
        "WantedBy=default.target\n"
    )


# -- status, stop ------------------------------------------------------------------------------------------------


def status(name: str, environ: dict[str, str], *, timeout: float = 5.0) -> dict[str, Any]:
    """Whether the router runs and answers, and each leg's health as the router sees it."""
    route, legs_ = route_and_legs(name, environ)
    where = server.files(name, environ)
    result = _serving(route, legs_, where, environ)
    running = server.read_process(where)
    if running is None:
        return {**result, "running": False, "pid": None, "answering": False, "uptime_seconds": None,
                "legs": [{**leg, "state": "unknown"} for leg in result["legs"]]}  # fmt: skip

    key = _router_key_value(route, environ)
    seen = health.read(_url(route), key, [leg.name for leg in legs_], timeout)
    return {
        **result,
        "running": True,
        "pid": running["pid"],
        "answering": seen.answering,
        "uptime_seconds": round(time.time() - float(running.get("started", time.time()))),
        "legs": [{**leg, **seen.legs.get(leg["profile"], {"state": "unknown"})} for leg in result["legs"]],
    }


def _router_key_value(route: Profile, environ: dict[str, str]) -> str | None:
    if not route.key_env:
        return None

    return keystore.resolve_key(route, environ).value


def stop(name: str, environ: dict[str, str]) -> dict[str, Any]:
    """Stop the route's router: from its runtime files alone, so a route removed (or broken) since can be stopped."""
    if problem := fields.name_problem(name):
        raise AgentcfgError(f"{name!r} is not a route's name: {problem}")
    where = server.files(name, environ)
    pid = server.stop(where)
    if pid is None:
        raise AgentcfgError(
            f"route {name!r} is not running",
            hint=f"Start it with `agentcfg route serve {name}`.",
            exit_code=Exit.NOTHING,
        )
    return {"route": name, "stopped": True, "pid": pid}

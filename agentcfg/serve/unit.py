"""The systemd unit that runs `agentcfg serve`, and the other vLLM units on this host.

A duplicate unit enabled with `Restart=on-failure` crashes on the busy port and comes back every 30 s,
stealing the GPUs (the field report's fix was `systemctl list-unit-files | grep -i vllm` and `disable
--now`). So the unit agentcfg writes gives up after a few failed starts, and agentcfg refuses to install it
beside another vLLM unit for the same port or GPUs. This module is pure: `text`, `parse_unit` and
`conflicts`; agentcfg.serve.units scans systemd's unit directories (no systemctl call) and installs.

Not read: drop-ins (NAME.service.d/*.conf), template instances (vllm@.service), EnvironmentFile= contents,
containers (`docker run vllm/vllm-openai`) and units whose ExecStart is a script: their port or GPUs are not
on the ExecStart line, so they are not guessed.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from pathlib import Path

from agentcfg.errors import AgentcfgError
from agentcfg.lazyclass import dataclass
from agentcfg.patterns import lazy
from agentcfg.shells import systemd_command

USER, SYSTEM = "user", "system"
PREFIX = "agentcfg-serve-"
DEFAULT_PORT = 8000  # vLLM's, when --port is not given
# SIGINT is vLLM's expected stop; a TP-8 model's workers then tear down NCCL and free hundreds of GB, which
# can take well over systemd's default 90 s (multi-GPU shutdown hangs: vllm #8085). After this systemd
# SIGKILLs what is left of the unit, and ExecStopPost's sweep still ends the engine processes by PID and
# waits for their GPU memory, so a longer wait only delays a hung stop, never leaves memory held.
STOP_TIMEOUT = 180
RESTART_SEC = 30  # a model takes minutes to load: retrying sooner only fights the GPU memory being released
START_LIMIT_BURST = 3  # three failed starts ...
START_LIMIT_INTERVAL = 600  # ... within 10 min: systemd stops trying (a busy port, a model that no longer fits)
_GPU = lazy(r"[A-Za-z0-9][A-Za-z0-9:/_.-]*")  # an index, or a GPU-/MIG- UUID
_USER_NAME = lazy(r"[A-Za-z0-9_][A-Za-z0-9_.-]*\$?")
_SHELLS = {"sh", "bash", "dash", "zsh"}
_PARALLEL = (("--tensor-parallel-size", "-tp"), ("--pipeline-parallel-size", "-pp"), ("--data-parallel-size", "-dp"))


@dataclass(frozen=True)
class UnitInfo:
    """A systemd unit that runs a vLLM server (`vllm serve`, the api_server module, or `agentcfg serve start`)."""

    path: Path
    name: str  # e.g. vllm.service
    scope: str  # user or system
    exec_start: tuple[str, ...]  # as systemd splits it, the unit's own variables substituted
    port: int | None  # vLLM's --port (default 8000); None: set from somewhere agentcfg does not read
    gpus: tuple[str, ...] | None  # from Environment=CUDA_VISIBLE_DEVICES; None: not set
    enabled: bool = False  # a link to it in a *.wants/ (or *.requires/) directory of its scope
    ours: bool = False  # agentcfg-serve-*.service
    # The devices it may take: its CUDA_VISIBLE_DEVICES, else vLLM's default (device 0 up to its parallel
    # size); None: any (agentcfg's own unit uses every GPU it sees, and a size that is a variable is unknown).
    devices: frozenset[str] | None = None


def unit_name(profile: str) -> str:
    return f"{PREFIX}{profile}.service"


def disable_command(unit: UnitInfo) -> str:
    run = "systemctl --user" if unit.scope == USER else "sudo systemctl"
    return f"{run} disable --now {unit.name}"


def next_command(name: str, system: bool) -> str:
    """What to run once the unit is written (agentcfg never changes systemd's state itself)."""
    run = "sudo systemctl" if system else "systemctl --user"
    return f"{run} daemon-reload && {run} enable --now {name}"


# -- text -----------------------------------------------------------------------------------------------------------


def text(
    profile: str,
    command: Sequence[str],
    *,
    system: bool,
    user: str | None,
    port: int,
    gpus: tuple[str, ...] | None,
    stop_timeout: int = STOP_TIMEOUT,
    key_env: str | None = None,
    key_file: str | None = None,
) -> str:
    """The unit that runs `agentcfg serve start PROFILE --foreground` (`command`: how to run agentcfg, e.g.
    invocation.self_command()). agentcfg execs into vLLM, so the unit's main process is vLLM's API server:
    SIGINT goes to it alone (KillMode=mixed), and the engine processes it started are left to it to stop.

    The key: a user unit's `serve start` reads the keyring of the user's session. A system unit (`system`,
    running as `user`) has no keyring to read, so it gets the profile's `key_env` from an EnvironmentFile=
    (`key_file`, default /etc/agentcfg/serve-PROFILE.env), which keystore.resolve reads as an exported key;
    systemd reads that file as root before it switches to the user, so it can stay root's, mode 0600."""
    if system and not user:
        raise AgentcfgError("a system unit needs the user it runs as", hint="Name the user (User=) it runs vLLM as.")
    if user is not None and not _USER_NAME.fullmatch(user):
        raise AgentcfgError(f"{user!r} is not a user name systemd's User= takes")
    for gpu in gpus or ():
        if not _GPU.fullmatch(gpu):
            raise AgentcfgError(f"{gpu!r} is not a GPU index or UUID", hint="Give GPUs as 0,1 or their UUIDs.")
    name = unit_name(profile)
    where = f"/etc/systemd/system/{name}" if system else f"~/.config/systemd/user/{name}"
    key_file = key_file or (f"/etc/agentcfg/serve-{profile}.env" if system and key_env else None)
    if key_file is not None and (not key_file.startswith("/") or any(c.isspace() for c in key_file)):
        raise AgentcfgError(f"{key_file!r} is not an absolute path without spaces", hint="EnvironmentFile= needs one.")
    service = ["Type=exec", f"X-Agentcfg-Profile={profile}", f"X-Agentcfg-Port={port}"]
    if system:
        service.append(f"User={user}")
    if gpus is not None:
        service.append(f"Environment=CUDA_VISIBLE_DEVICES={','.join(gpus)}")
    if key_file:
        service.append(f"EnvironmentFile={key_file}")
    service += [
        f"ExecStart={systemd_command([*command, 'serve', 'start', profile, '--foreground'])}",
        f"ExecStopPost={systemd_command([*command, 'serve', 'sweep', profile])}",
        "KillMode=mixed",
        "KillSignal=SIGINT",
        f"TimeoutStopSec={stop_timeout}",
        "Restart=on-failure",
        f"RestartSec={RESTART_SEC}",
    ]
    run = "sudo systemctl" if system else "systemctl --user"
    comments = [
        f"{where}: vLLM for the agents' profile {profile}, written by agentcfg (`agentcfg serve`).",
        f"Start it: {next_command(name, system)}",
        "Stop: SIGINT to vLLM's API server alone (KillMode=mixed); after TimeoutStopSec systemd SIGKILLs what is",
        "left of the unit. ExecStopPost (also after a crash, before any restart) ends the engine processes the",
        "server left, by PID, and waits until their GPU memory is released (vllm #55510).",
        f"Restart: on failure after {RESTART_SEC} s; {START_LIMIT_BURST} failed starts within {START_LIMIT_INTERVAL} s"
        " (a busy port, too little GPU",
        f"memory) stop the retries until `{run} reset-failed {name}`.",
    ]
    if system:
        comments.append(f"It runs as {user}, with {user}'s HOME: agentcfg reads {user}'s profiles.")
    if key_file and key_env:
        comments += [
            f"The key: {key_file} holds one line `{key_env}=...`; systemd reads it as root before it starts",
            f"the service, so keep it root's, mode 0600. agentcfg serve takes the key exported in {key_env} when",
            "there is no keyring to read (a system service has none).",
        ]
    elif key_env:
        comments += [
            f"The key: from your login keyring. While that is locked (no login yet), agentcfg serve takes {key_env}",
            "from an EnvironmentFile= instead (write the unit with a key file).",
            "To run it without a login session: loginctl enable-linger $USER",
        ]
    return (
        "".join(f"# {line}\n" for line in comments)
        + "[Unit]\n"
        + f"Description=agentcfg serve {profile} (vLLM on port {port})\n"
        + "After=network-online.target\n"
        + f"StartLimitIntervalSec={START_LIMIT_INTERVAL}\n"
        + f"StartLimitBurst={START_LIMIT_BURST}\n"
        + "\n[Service]\n"
        + "".join(line + "\n" for line in service)
        + "\n[Install]\n"
        + f"WantedBy={'multi-user.target' if system else 'default.target'}\n"
    )


# -- parse ----------------------------------------------------------------------------------------------------------


def _sections(unit_text: str) -> dict[str, list[tuple[str, str]]]:
    """Each section's (key, value) lines in order, continuation lines joined as systemd joins them."""
    sections: dict[str, list[tuple[str, str]]] = {}
    current: list[tuple[str, str]] | None = None
    pending = ""
    for raw in unit_text.splitlines():
        stripped = raw.strip()
        if stripped.startswith(("#", ";")):
            continue
        line = pending + stripped
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        pending = ""
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], [])
        elif "=" in line and current is not None:
            key, value = line.split("=", 1)
            current.append((key.strip(), value.strip()))
    return sections


def _split(value: str) -> list[str] | None:
    """A command line as systemd splits it (close enough: quotes and backslashes); None if it does not."""
    try:
        return shlex.split(value)
    except ValueError:
        return None


def _expand(words: list[str], variables: dict[str, str]) -> list[str]:
    """`$VAR` (a word of its own: split on spaces) and `${VAR}` from the unit's Environment=, `$$` and `%%`
    unescaped. A variable the unit does not set stays as written, so it is never read as a port."""
    out: list[str] = []
    for word in words:
        whole = re.fullmatch(r"\$([A-Za-z_]\w*)", word)
        if whole and whole[1] in variables:
            out += variables[whole[1]].split()
            continue
        out.append(
            re.sub(
                r"\$\$|%%|\$\{([A-Za-z_]\w*)\}",
                lambda m: {"$$": "$", "%%": "%"}.get(m[0]) or variables.get(m[1], m[0]),
                word,
            )
        )
    return out


def _environment(values: list[str]) -> dict[str, str]:
    variables: dict[str, str] = {}
    for value in values:
        if not value:
            variables.clear()  # an empty Environment= resets the list
        for word in _split(value) or []:
            if "=" in word:
                key, val = word.split("=", 1)
                variables[key] = val
    return variables


def _command(words: list[str]) -> list[str]:
    """ExecStart's words without its prefixes (`-@:+!`); with `@`, the argv[0] word after the program too."""
    if not words:
        return words
    head = words[0]
    prefixes = head[: len(head) - len(head.lstrip("-@:+!"))]
    words = [head[len(prefixes) :], *words[1:]]
    return [words[0], *words[2:]] if "@" in prefixes else words


def _unwrapped(words: list[str]) -> list[str]:
    """The words, with a shell's `-c SCRIPT` replaced by the script's own words (a venv activated first)."""
    for i, word in enumerate(words[:3]):
        if os.path.basename(word) in _SHELLS:
            for j in range(i + 1, len(words) - 1):
                if re.fullmatch(r"-[a-z]*c[a-z]*", words[j]):
                    return words[: j + 1] + (_split(words[j + 1]) or [])
    return words


def _kind(words: list[str]) -> tuple[str, list[str]] | None:
    """("vllm", the server's words from `vllm serve` or the module on) or ("agentcfg", all the words)."""
    for i, word in enumerate(words):
        if os.path.basename(word) == "vllm" and words[i + 1 : i + 2] == ["serve"]:
            return "vllm", _until_shell_syntax(words[i:])
        if word == "vllm.entrypoints.openai.api_server":
            return "vllm", _until_shell_syntax(words[i:])
        if words[i : i + 2] == ["serve", "start"] and any("agentcfg" in w for w in words[:i]):
            return "agentcfg", words
    return None


def _until_shell_syntax(words: list[str]) -> list[str]:
    for i, word in enumerate(words):
        if word in ("&&", "||", ";", "|", "&") or word.startswith((">", "2>", "<")):
            return words[:i]
    return words


def _flag(words: list[str], *names: str) -> str | None:
    for i, word in enumerate(words):
        for name in names:
            if word == name:
                return words[i + 1] if i + 1 < len(words) else ""
            if word.startswith(name + "="):
                return word.split("=", 1)[1]
    return None


def _unresolved(words: list[str]) -> bool:
    return any("$" in word for word in words)


def _port(value: str | None, words: list[str]) -> int | None:
    if value is None:
        return None if _unresolved(words) else DEFAULT_PORT  # a --port may hide in an unread variable
    return int(value) if value.isascii() and value.isdigit() else None


def _default_devices(server: list[str]) -> frozenset[str] | None:
    """vLLM without CUDA_VISIBLE_DEVICES: devices 0 .. TP*PP*DP-1 (None: a size agentcfg cannot read)."""
    size, given = 1, False
    for names in _PARALLEL:
        value = _flag(server, *names)
        if value is not None and not (value.isascii() and value.isdigit()):
            return None
        given = given or value is not None
        size *= int(value) if value else 1
    return None if _unresolved(server) and not given else frozenset(str(i) for i in range(size))


# What parse_unit reads a server's words from can only spell "vllm" or "agentcfg" where the text has it, once
# quotes and backslashes (which shlex removes) are left out, or through a $ variable: a unit with neither runs
# no server, and is left unparsed (doctor reads every unit of the machine: most of them are not vLLM's).
_QUOTING = str.maketrans("", "", "\"'\\")


def _may_run_a_server(unit_text: str) -> bool:
    bare = unit_text.translate(_QUOTING)
    return "$" in unit_text or "vllm" in bare or "agentcfg" in bare


def parse_unit(path: Path, unit_text: str) -> UnitInfo | None:
    """What a unit file says about the vLLM server it runs; None when it runs none."""
    if not _may_run_a_server(unit_text):
        return None
    service = _sections(unit_text).get("Service", [])
    variables = _environment([v for k, v in service if k == "Environment"])
    own_port = next((v for k, v in reversed(service) if k == "X-Agentcfg-Port"), None)
    found: tuple[list[str], str, list[str]] | None = None
    for key, value in service:
        if key != "ExecStart":
            continue
        if not value:  # an empty ExecStart= resets the list
            found = None
            continue
        words = _split(value)
        if found is None and words is not None:
            words = _command(_expand(words, variables))
            recognised = _kind(_unwrapped(words))
            found = (words, *recognised) if recognised else None
    if found is None:
        return None
    words, kind, server = found
    visible = variables.get("CUDA_VISIBLE_DEVICES")
    gpus = None if visible is None else tuple(g.strip() for g in visible.split(",") if g.strip())
    if kind == "agentcfg":
        port = _port(own_port, []) if own_port is not None else None
        default_devices = None
    else:
        port = _port(_flag(server, "--port"), server)
        default_devices = _default_devices(server)
    name = path.name
    scope = USER if path.parent.name == "user" else SYSTEM  # find_units gives the scope of its directory
    return UnitInfo(
        path, name, scope, tuple(words), port, gpus, ours=name.startswith(PREFIX) and name.endswith(".service"),
        devices=frozenset(gpus) if gpus is not None else default_devices,
    )  # fmt: skip


# -- conflicts --------------------------------------------------------------------------------------------------------


def conflicts(
    port: int | None,
    gpus: tuple[str, ...] | None,
    units: Sequence[UnitInfo],
    own_name: str,
    own_scope: str | None = None,
) -> list[UnitInfo]:
    """The other units for the same port, or for GPUs that overlap `gpus` (None: every GPU, as `serve`
    takes every GPU it sees). A unit whose devices agentcfg cannot read may take any."""
    mine = None if gpus is None else frozenset(gpus)
    found = []
    for unit in units:
        if unit.name == own_name and (own_scope is None or unit.scope == own_scope):
            continue
        same_port = port is not None and unit.port == port
        overlap = mine is None or unit.devices is None or bool(mine & unit.devices)
        if same_port or overlap:
            found.append(unit)
    return found


def describe(unit: UnitInfo) -> str:
    """One line: where it is, whether it starts at boot, what it serves, and how to turn it off."""
    state = "enabled" if unit.enabled else "not enabled"
    port = "port unknown" if unit.port is None else f"port {unit.port}"
    gpus = "" if unit.gpus is None else f", GPUs {','.join(unit.gpus) or 'none'}"
    return f"{unit.path} ({unit.scope}, {state}, {port}{gpus}): {disable_command(unit)}"

"""`agentcfg exec PROFILE -- AGENT ARGS`: one agent process on a profile, no global file touched.

Each agent module's `launch` says how (flags, variables, a settings file of its own); this module finds
the agent a command runs, gives it agentcfg's private runtime directory and writes the files there.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePath
from types import ModuleType

from agentcfg import env
from agentcfg.agents import AGENTS
from agentcfg.agents.base import Launch, LaunchContext
from agentcfg.errors import AgentcfgError
from agentcfg.profiles import PROJECT, Profile


def agent_for(program: str) -> ModuleType | None:
    """The agent a command's program is (`codex`, `/usr/local/bin/claude`, `qwen.cmd`), or None."""
    name = PurePath(program).name.lower()
    for suffix in (".exe", ".cmd", ".ps1", ".bat"):
        name = name.removesuffix(suffix)
    return next((agent for agent in AGENTS.values() if name == agent.BINARY), None)


def runtime_dir(environ: env.Environ) -> Path:
    """agentcfg's private runtime directory: `$XDG_RUNTIME_DIR/agentcfg`, else `agentcfg-UID` in the
    system's temporary directory (not in HOME: exec leaves HOME as it found it). Made mode 0700, and refused
    when it is a link or another user's (a shared /tmp is where someone could have made it first)."""
    if base := environ.get("XDG_RUNTIME_DIR"):
        path = Path(base) / "agentcfg"
    else:
        import tempfile

        path = Path(environ.get("TMPDIR") or tempfile.gettempdir()) / f"agentcfg-{os.getuid()}"
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.lstat(path)
    except OSError as error:
        raise AgentcfgError(
            f"cannot make agentcfg's runtime directory {path}: {error.strerror}", where=str(path)
        ) from None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise AgentcfgError(
            f"{path} is not a private directory of yours (a link, another user's, or open to others): "
            "agentcfg writes no settings there",
            where=str(path),
            hint=f"Remove it (`rm -r {path}`) or set XDG_RUNTIME_DIR to a directory of yours, then run again.",
        )
    return path


@dataclass(frozen=True)
class Prepared:
    agent: str
    launch: Launch
    argv: list[str]


def prepare(profile: Profile, agent: ModuleType, command: tuple[str, ...], environ: env.Environ) -> Prepared:
    """The agent's argv and what its process gets, with the files it reads written to the runtime dir."""
    from agentcfg import fsutil, versions
    from agentcfg.switch import read_current, self_command

    if reason := agent.unsupported(profile):
        raise AgentcfgError(f"{agent.NAME} cannot run on this profile: {reason}")
    program = env.which(command[0], environ) if os.sep not in command[0] else command[0]
    version = versions.of_program(program, environ) if program else None
    runtime = runtime_dir(environ)
    # `key get` reads user and built-in profiles only; a project's key stays in the variable exec sets.
    helper = () if profile.source.startswith(PROJECT) else (*self_command(), "key", "get", profile.name)
    context = LaunchContext(read_current(agent, environ), environ, version, runtime, helper)
    launch = agent.launch(profile, tuple(command[1:]), context)
    for name, text in launch.files.items():  # the same text for every run of a profile: written when it changes
        if fsutil.read_text(runtime / name, str(runtime / name)) != text:
            fsutil.write_private(runtime / name, text)
    return Prepared(agent.NAME, launch, [command[0], *launch.args])

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
from agentcfg.env import runtime_dir  # exec's files and the routes' live there
from agentcfg.errors import AgentcfgError
from agentcfg.profiles import PROJECT, Profile


def agent_for(program: str) -> ModuleType | None:
    """The agent a command's program is (`codex`, `/usr/local/bin/claude`, `qwen.cmd`), or None."""
    name = PurePath(program).name.lower()
    for suffix in (".exe", ".cmd", ".ps1", ".bat"):
        name = name.removesuffix(suffix)
    return next((agent for agent in AGENTS.values() if name == agent.BINARY), None)


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
    # Only an agent whose launch depends on its version is asked (`AGENT --version` starts Node the first time,
    # and its answer is cached in agentcfg's state dir).
    program = env.which(command[0], environ) if os.sep not in command[0] else command[0]
    asks = getattr(agent, "LAUNCH_BY_VERSION", False)
    version = versions.of_program(program, environ) if program and asks else None
    runtime = runtime_dir(environ)
    # `key get` reads user and built-in profiles only; a project's key stays in the variable exec sets.
    helper = () if profile.source.startswith(PROJECT) else (*self_command(), "key", "get", profile.name)
    context = LaunchContext(read_current(agent, environ), environ, version, runtime, helper)
    launch = agent.launch(profile, tuple(command[1:]), context)
    for name, text in launch.files.items():  # the same text for every run of a profile: written when it changes
        if _private_text(runtime / name) != text:
            try:
                fsutil.write_private(runtime / name, text)
            except OSError as error:  # a directory in its place
                raise AgentcfgError(
                    f"cannot write {runtime / name}: {error.strerror}",
                    where=str(runtime / name),
                    hint=f"Remove it (`rm -r {runtime / name}`) and run again.",
                ) from None
    return Prepared(agent.NAME, launch, [command[0], *launch.args])


def _private_text(path: Path) -> str | None:
    """The text of agentcfg's own file at `path`, or None when what is there must be replaced: missing, or
    not a regular file of one link that only its owner (us) can read (a symlink, a FIFO, a hard link to a
    file elsewhere, a mode open to others). The agent is given the path, so a link whose target someone
    else can change after this check is never kept, even when its text is the one wanted."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:  # missing, a symlink (ELOOP), unreadable
        return None
    try:
        info = os.fstat(fd)
        if (
            not stat.S_ISREG(info.st_mode)
            or info.st_nlink != 1
            or info.st_mode & 0o077
            or (hasattr(os, "getuid") and info.st_uid != os.getuid())
            or info.st_size > _FILE_LIMIT
        ):
            return None
        data = b""
        while chunk := os.read(fd, _FILE_LIMIT + 1 - len(data)):
            data += chunk
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


_FILE_LIMIT = 1 << 20  # far above any settings file exec writes (a few hundred bytes)

"""`agentcfg exec PROFILE -- AGENT ARGS`: one agent process on a profile, no global file touched.

Each agent module's `launch` says how (flags, variables, a settings file of its own); this module finds
the agent a command runs, gives it agentcfg's private runtime directory and writes the files there. A file
that holds the key (Launch.key_files) is this run's alone and goes when the agent's process has ended.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path, PurePath

from agentcfg import env, fsutil
from agentcfg.agents import AGENTS
from agentcfg.agents.base import Agent, Launch, LaunchContext
from agentcfg.env import runtime_dir  # exec's files and the routes' live there
from agentcfg.errors import AgentcfgError
from agentcfg.lazyclass import dataclass
from agentcfg.profiles import PROJECT, Profile


def agent_for(program: str) -> Agent | None:
    """The agent a command's program is (`codex`, `/usr/local/bin/claude`, `qwen.cmd`), or None."""
    name = PurePath(program).name.lower()
    for suffix in (".exe", ".cmd", ".ps1", ".bat"):
        name = name.removesuffix(suffix)
    return next((agent for agent in AGENTS.values() if name == agent.TRAITS.binary), None)


@dataclass(frozen=True)
class Prepared:
    """An agent's command line and environment, ready for `agentcfg exec` to run."""

    agent: str
    launch: Launch
    argv: list[str]
    key_files: tuple[Path, ...] = ()  # written for this run: remove_when_ended() once it has started


def prepare(
    profile: Profile, agent: Agent, command: tuple[str, ...], environ: env.Environ, key: str | None = None
) -> Prepared:
    """The agent's argv and what its process gets, with the files it reads written to the runtime dir.
    `key`: the profile's key, for an agent that takes it otherwise than in its variable (LaunchContext.key)."""
    import secrets

    from agentcfg import versions  # lazy: exec of a program that is no agent (`exec P -- make`) never needs these
    from agentcfg.current import read_current  # lazy: as above
    from agentcfg.invocation import self_command  # lazy: as above

    if reason := agent.unsupported(profile):
        raise AgentcfgError(f"{agent.TRAITS.name} cannot run on this profile: {reason}")
    # Only an agent whose launch depends on its version is asked (`AGENT --version` starts Node the first time,
    # and its answer is cached in agentcfg's state dir).
    program = env.which(command[0], environ) if os.sep not in command[0] else command[0]
    asks = agent.TRAITS.launch_by_version
    version = versions.of_program(program, environ) if program and asks else None
    runtime = runtime_dir(environ)
    # `key get` reads user and built-in profiles only; a project's key stays in the variable exec sets.
    helper = () if profile.source.startswith(PROJECT) else (*self_command(), "key", "get", profile.name)
    remove_ended_runs(runtime)
    run = f"{os.getpid()}-{secrets.token_hex(4)}"  # the pid: the agent's after exec (remove_ended_runs)
    context = LaunchContext(read_current(agent, environ), environ, version, runtime, helper, key, run)
    launch = agent.launch(profile, tuple(command[1:]), context)
    for name, text in launch.files.items():  # the same text for every run of a profile: written when it changes
        if _private_text(runtime / name) != text:
            _write(runtime / name, text)
    for name, text in launch.key_files.items():
        _write(runtime / name, text)
    key_files = tuple(runtime / name for name in launch.key_files)
    return Prepared(agent.TRAITS.name, launch, [command[0], *launch.args], key_files)


def _write(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # a name with folders: a home of its own
        fsutil.write_private(path, text)
    except OSError as error:  # a directory in its place
        raise AgentcfgError(
            f"cannot write {path}: {error.strerror}", where=str(path), hint=f"Remove it (`rm -r {path}`) and run again."
        ) from None


def remove_when_ended(paths: Sequence[Path]) -> None:
    """Remove `paths` once this process has ended: exec is about to make it the agent, which reads them as long as
    it runs (qwen-code reads its settings again and again). A child of ours waits for that, in a session of its
    own (the terminal's Ctrl-C and hang-up are the agent's, not its), holding none of our files open; on Linux
    it is woken by a pidfd, elsewhere it looks whether it has been given another parent. Not on Windows, where
    exec runs the agent as a child and removes them itself when it returns."""
    if not paths or os.name != "posix":
        return
    agent = os.getpid()
    if os.fork():
        return
    try:
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.closerange(3, 1 << 16)
        _wait_for_end(agent)
        remove(paths)
    finally:
        os._exit(0)


def _wait_for_end(pid: int) -> None:
    """Until process `pid`, this one's parent, has ended."""
    import select
    import time

    try:
        watch = os.pidfd_open(pid)  # Linux 5.3+
    except (AttributeError, OSError):  # no pidfd here, or `pid` has already ended
        watch = None
    if watch is None or os.getppid() != pid:  # (given another parent: `pid` may be someone else's by now)
        while os.getppid() == pid:
            time.sleep(0.2)
        return
    select.select([watch], [], [])


def remove(paths: Sequence[Path]) -> None:
    import contextlib

    for path in paths:
        with contextlib.suppress(OSError):  # already gone
            path.unlink()


_RUN_FILE = re.compile(r"-run(\d+)-[0-9a-f]{8}\.[a-z.]+\Z")  # base.run_name's, with LaunchContext.run


def remove_ended_runs(runtime: Path) -> None:
    """Key files of runs whose process has ended, left by a watcher that was killed (or by a reboot, where the
    runtime dir is not in memory): the pid in the name is the agent's (POSIX; Windows removes its own)."""
    if os.name != "posix":
        return
    try:
        names = [entry.name for entry in os.scandir(runtime)]
    except OSError:
        return
    for name in names:
        if (found := _RUN_FILE.search(name)) and not _running(int(found.group(1))):
            remove([runtime / name])


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: someone else's process has that pid now
        return True
    return True


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


@dataclass(frozen=True)
class Run:
    """What `exec` runs: the command line, the variables added to the environment, the files that hold the key
    for this run (removed once it ended) and the notes to print before."""

    argv: tuple[str, ...]
    variables: dict[str, str]
    key_files: tuple[Path, ...] = ()
    notes: tuple[str, ...] = ()


def exec_run(found: Profile, command: Sequence[str], variables: dict[str, str], environ: env.Environ) -> Run:
    """`exec PROFILE -- COMMAND` with the profile's `variables` (its key among them): an agent runs on the profile
    for this process alone (launch.prepare), any other command gets the variables only."""
    agent = agent_for(command[0])
    if agent is None:
        return Run(tuple(command), variables)
    key = variables.get(found.key_env) if found.key_env else None
    prepared = prepare(found, agent, tuple(command), environ, key)
    if key is not None and found.key_env and not prepared.launch.key_in_env:
        del variables[found.key_env]  # the agent gets it otherwise; its commands never see the keyring's
    elif key is not None and found.key_env and agent.TRAITS.key_variable:
        variables[agent.TRAITS.key_variable] = variables.pop(found.key_env)  # the one variable it reads
    variables.update(prepared.launch.env)
    return Run(tuple(prepared.argv), variables, prepared.key_files, tuple(prepared.launch.notes))

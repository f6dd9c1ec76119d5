"""agentcfg's own key helper command as the agents run it (Claude Code's apiKeyHelper, Codex's auth.command):
how it is written, how a later switch or doctor knows one it wrote, and what such a command may import from."""

from __future__ import annotations

import os


def helper_command(argv: tuple[str, ...]) -> str:
    """`argv` as one command line for the system shell (Claude Code runs apiKeyHelper through it)."""
    if os.name == "nt":
        import subprocess

        return subprocess.list2cmdline(argv)
    import shlex

    return shlex.join(argv)


def is_helper(command: object) -> bool:
    """Whether a helper command is one agentcfg wrote (so a later switch may replace or remove it): today's
    `python -I -m agentcfg key get P` or `python -I -c '...agentcfg.cli...' key get P`, and the
    `/path/to/agentcfg key get P` and `python -m agentcfg key get P` of earlier versions."""
    return isinstance(command, str) and "agentcfg" in command and " key get " in command


# What an agentcfg key helper that is not isolated imports from, besides the installed agentcfg (helper_exposure).
CWD = "cwd"  # `python -m agentcfg` or `-c` without -I: the current directory comes first on sys.path
PYTHONPATH = "pythonpath"  # the console script (or -P): PYTHONPATH, whose empty or relative entry is the cwd


def helper_exposure(command: object) -> str | None:
    """Where an agentcfg key helper (is_helper) may import another agentcfg from when an agent runs it in a
    repository: CWD for `python -m agentcfg key get P` (earlier versions' when run as `python -m`), PYTHONPATH
    for `/path/bin/agentcfg key get P` (earlier versions' console script); None for the isolated `python -I ...`
    that invocation.self_command() writes now, and for a command that is not agentcfg's."""
    if helper_profile_name(command) is None:
        return None
    import shlex

    flags, runs = "", "script"  # Python's options before -m/-c (a script's path ends them)
    words = iter(shlex.split(str(command))[1:-3])
    for word in words:
        if not word.startswith("-") or word.startswith("--") or word == "-":
            break
        for index, letter in enumerate(word[1:], 1):
            if letter in "mc":
                runs = letter
                break
            if letter in "WX":  # takes an argument: the rest of this word, else the next word
                if index == len(word) - 1:
                    next(words, None)
                break
            flags += letter
        if runs != "script":
            break
    if "I" in flags or ("E" in flags and (runs == "script" or "P" in flags)):
        return None
    return CWD if runs != "script" and "P" not in flags else PYTHONPATH


def helper_profile_name(command: object) -> str | None:
    """The profile an agentcfg key helper (`... agentcfg key get NAME`) fetches the key of."""
    if not is_helper(command):
        return None
    import shlex

    try:
        words = shlex.split(str(command))
    except ValueError:
        return None
    return words[-1] if len(words) >= 4 and words[-3:-1] == ["key", "get"] else None

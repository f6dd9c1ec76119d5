"""Key helpers an earlier agentcfg wrote that a repository can replace: checked offline, no request. Pure.

Claude Code runs its apiKeyHelper, Codex its provider's `auth` command, in the directory it was started in, often
a repository just cloned. An agentcfg before issue 27 wrote `/path/python -m agentcfg key get P` there when it
ran as `python -m agentcfg` (the current directory comes first on sys.path: a repository's own agentcfg/ runs in
its place and can read every key), else `/path/bin/agentcfg key get P` (PYTHONPATH is searched, and its empty or
relative entry is the current directory). Such a helper stays in the agent's files until a switch rewrites it
the way invocation.self_command() writes it now (`python -I ...`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from agentcfg import env, fixes
from agentcfg.agents import AGENTS
from agentcfg.agents.base import KeyHelper
from agentcfg.agents.keyhelper import CWD, helper_exposure
from agentcfg.doctor.model import FAIL, WARN, Finding


def cwd_on_pythonpath(environ: env.Environ) -> bool:
    """Whether PYTHONPATH has an empty or relative entry (`PYTHONPATH=$PYTHONPATH:/x` with it unset): Python then
    searches the current directory, and the agents started from this shell inherit it."""
    value = environ.get("PYTHONPATH", "")
    return bool(value) and any(not os.path.isabs(entry) for entry in value.split(os.pathsep))


def findings(agent: str, helpers: Sequence[KeyHelper], environ: env.Environ, owner: str | None) -> list[Finding]:
    """`key-helper-not-isolated` for the agent's helpers that are not isolated. `owner`: the profile whose switch
    rewrites the agent's files (None: none of the user's profiles).

    FAIL for `python -m` (or `-c`) without -I: in every repository that plants agentcfg/, nothing else needed.
    WARN for the console script: only with an empty or relative PYTHONPATH entry, FAIL when this shell has one."""
    exposed = [(h, exposure) for h in helpers if (exposure := helper_exposure(h.command))]
    if not exposed:
        return []
    by_cwd = any(exposure == CWD for _, exposure in exposed)
    on_path = cwd_on_pythonpath(environ)
    where = ", ".join(dict.fromkeys(h.where for h, _ in exposed))
    known = AGENTS.get(agent)
    name = known.TRAITS.title if known else agent
    setting = (known.TRAITS.key_helper_setting if known else None) or "its key command"
    start = f"{name} runs its key helper ({setting} in {where}) as"
    if by_cwd:
        summary = (
            f"{start} `python -m agentcfg` without -I, as an earlier agentcfg wrote it: in a repository with its own "
            "agentcfg/, that code runs instead (Python searches the current directory first) and can read every key"
        )
    else:
        summary = (
            f"{start} agentcfg's console script, as an earlier agentcfg wrote it: with an empty or relative PYTHONPATH "
            + ("entry (this shell has one)" if on_path else "entry")
            + ", a repository's own agentcfg/ runs instead and can read every key"
        )
    gone = [h.where for h, _ in exposed if not h.rewritten]
    switch = fixes.switch(owner, agent) if owner else ""
    fix, hint = (switch, "") if switch and not gone else ("", "")
    if gone:
        rest = f"; `{switch}` rewrites the rest" if switch and len(gone) < len(exposed) else ""
        hint = f"remove {', '.join(gone)}: written for a profile that no longer exists, no switch rewrites it{rest}"
    elif not switch:
        hint = f"run `agentcfg switch` with your profile and --agent {agent}: it writes the helper isolated (python -I)"
    return [
        Finding(
            "key-helper-not-isolated",
            FAIL if by_cwd or on_path else WARN,
            agent,
            summary,
            "; ".join(f"{h.where}: {h.command}" for h, _ in exposed),
            fix,
            hint,
        )
    ]

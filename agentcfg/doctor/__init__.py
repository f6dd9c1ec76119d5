"""`agentcfg doctor`: what each agent will send, sent for real, and the cause of what comes back.

The edge of doctor: collect.py reads the agents' files and this environment into Targets, probes.py
sends the requests under one deadline, localserver.py reads the local vLLM processes, and the pure
rules (rules.py) turn it all into Findings; render.py shows them. checkup.py runs it all.

This package's own module is empty on purpose: every agent module imports doctor.model (its findings'
type), and `switch` and `status`, which import every agent, must not load doctor with it. The names
below come from checkup.py when first asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentcfg.doctor.checkup import Report, check_now, run, summary
    from agentcfg.doctor.collect import targets_from_files, targets_from_profile
    from agentcfg.doctor.model import Finding, Target

__all__ = ["Finding", "Report", "Target", "check_now", "run", "summary", "targets_from_files", "targets_from_profile"]


# What `agentcfg.doctor.NAME` gives from checkup.py (the doctor command and init's closing check use these).
_CHECKUP = {*__all__, "probe_plan", "_headers", "_local_findings"}


def __getattr__(name: str) -> Any:
    if name not in _CHECKUP:  # a submodule's name too: the import system then loads the submodule
        raise AttributeError(f"module 'agentcfg.doctor' has no attribute {name!r}")
    from agentcfg.doctor import checkup  # lazy: the agents import doctor.model (see the docstring)

    return getattr(checkup, name)

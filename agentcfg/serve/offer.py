"""What `init` offers when the chosen profile is this machine's vLLM, vLLM is installed, and nothing serves it."""

from __future__ import annotations

import shutil
from urllib.parse import urlsplit

from agentcfg import env, fixes
from agentcfg.doctor.probes import tcp_open
from agentcfg.errors import AgentcfgError
from agentcfg.profiles import Profile
from agentcfg.serve import records
from agentcfg.serve.command import url_port


def offer(profile: Profile, environ: env.Environ) -> str | None:
    """The `agentcfg serve` command to run, or None: not a server of this machine, vLLM not installed (no `vllm`
    on PATH and no kept `--vllm`), or something already answers on the profile's port."""
    if profile.route is not None or not profile.is_local:
        return None
    try:
        kept = records.load_options(profile.name, environ)
    except AgentcfgError:  # a broken settings file: `serve` itself says what is wrong with it
        kept = None
    if shutil.which("vllm", path=environ.get("PATH")) is None and (kept is None or not kept.vllm):
        return None
    port = url_port(profile)
    if port is None or tcp_open(urlsplit(profile.base_url).hostname or "127.0.0.1", port, 0.5):
        return None
    if kept is not None and kept.weights:
        return fixes.command("agentcfg", "serve", profile.name)
    return fixes.command("agentcfg", "serve", profile.name, "--weights") + " PATH_OR_HF_ID"

"""The files agentcfg writes: the agents' own (agentcfg/agents/*/ `files()`) for the locations a switch recorded.

Rollback and recovery write a path a journal entry names only when it is one of them, so a manifest edited to
name ~/.bashrc, /etc/passwd or any other file is refused, while an entry made under another CODEX_HOME (another
shell, a relative CODEX_HOME resolved then) still rolls back from anywhere: the entry records its locations
(env.locations), and each file must be one of its agent's files for them. A switch checks its own entry the
same way before it writes anything, so it never records what rollback would refuse.

The locations are read from the entry itself, so this bounds what an edited entry can name to files of the
agents' shapes (a `config.toml`, `settings.json`, `.env`, an opencode `*.json`); it cannot tell a user's
CODEX_HOME from another directory.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from agentcfg import env
from agentcfg.agents import AGENTS
from agentcfg.errors import AgentcfgError

# The names a file of each format may have, whatever the agent: an OPENCODE_CONFIG of another name, or a
# symlinked config pointing at one, is not written (chezmoi's source names end `dot_env`).
FORMAT_NAMES = {"toml": (".toml",), "json": (".json", ".jsonc"), "dotenv": (".env", "_env")}


def named_for(fmt: str, path: str | Path) -> bool:
    """Whether a file's name fits its format (FORMAT_NAMES)."""
    return Path(path).name.endswith(FORMAT_NAMES.get(fmt, ()))


def agent_files(agent_name: str, locations: env.Environ) -> list[tuple[Path, str]]:
    """Every file `agent_name` has for `locations`, as (path or name pattern, format): its files() and what the
    switch keeps beside them (Codex's profile files; opencode's other config names, whichever exists then), and
    the files that hold its MCP servers (`agentcfg mcp`)."""
    agent = AGENTS[agent_name]
    own = [*agent.files(locations), *agent.mcp_files(locations)]
    return [(f.path, f.format) for f in own] + agent.kept_files(locations)


def problem(item: dict[str, Any], locations: env.Environ) -> str | None:
    """Why a journal entry's file is not one agentcfg writes (None: it is): `item` has "agent", "path" and "format"
    (a manifest's file entry, already checked for shape: agentcfg.manifest)."""
    name, path, fmt = item["agent"], Path(item["path"]), item["format"]
    if name not in AGENTS:
        return f"names an unknown agent {name!r} (agentcfg knows {', '.join(AGENTS)})"
    try:
        files = agent_files(name, locations)
    except AgentcfgError as exc:  # Codex's: the CODEX_HOME recorded is not a directory now
        return f"cannot find {name}'s files where the entry says: {exc.message}"
    found = [f for f, _ in files if f == path or (f.parent == path.parent and "*" in f.name and _matches(path, f))]
    if not found:
        shown = ", ".join(dict.fromkeys(str(f) for f, _ in files))
        return f"{path} is not one of {name}'s files ({shown})"
    formats = {f for pattern, f in files if pattern in found}
    if fmt not in formats:
        return f"{path} is in {fmt!r} format in the entry, but {name} reads it as {', '.join(sorted(formats))}"
    names = "*" + " or *".join(FORMAT_NAMES[fmt])
    if not named_for(fmt, path):
        return f"{path} is not named {names}: agentcfg writes only files named for their format"
    if item.get("target", item["path"]) != item["path"] and not named_for(fmt, item["target"]):
        return (
            f"{path} is a symlink to {item['target']}, which is not named {names}: agentcfg writes through a "
            "symlink only to a file named for its format"
        )
    return None


def _matches(path: Path, pattern: Path) -> bool:
    """A name pattern's only wildcard is a profile's name (Codex's `agentcfg-*.config.toml`)."""
    return fnmatchcase(path.name, pattern.name)


def entry_problem(manifest: dict[str, Any], here: env.Environ) -> str | None:
    """Why an entry names a file agentcfg does not write (None: every file is an agent's). An entry without
    recorded locations (written before they were) is checked against `here`: the command's environment."""
    locations = manifest.get("locations") or env.locations(here)
    for n, item in enumerate(manifest["files"]):
        if found := problem(item, locations):
            if "locations" not in manifest:
                found += (
                    " (this entry predates recorded locations: it is checked against this shell's HOME, "
                    f"XDG_CONFIG_HOME and {', '.join(env.AGENT_LOCATIONS)}; run again with the ones it was made with)"
                )
            return f"files[{n}]: {found}"
    return None

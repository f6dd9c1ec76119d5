"""Rendering results as text (aligned, coloured only on a TTY without NO_COLOR) or as JSON-ready dicts."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcfg import env, fixes
from agentcfg.plan import Plan, unified_diff
from agentcfg.profiles import BUILT_IN, PROJECT, Profile
from agentcfg.redact import dumps as dumps  # every command's --json document (shared with the hot path)

if TYPE_CHECKING:  # status's record, in annotations only: `switch` renders with this module and never loads status
    from agentcfg.status import AgentStatus

_COLOURS = {"create": "32", "modify": "33", "remove": "31", "unchanged": "2", "skipped": "2", "edited": "31"}


def use_colour(environ: env.Environ, stream: Any = None) -> bool:
    stream = stream or sys.stdout
    return "NO_COLOR" not in environ and hasattr(stream, "isatty") and stream.isatty()


def paint(text: str, kind: str, colour: bool) -> str:
    code = _COLOURS.get(kind)
    return f"\033[{code}m{text}\033[0m" if colour and code else text


def when(timestamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(timestamp))


# -- switch / rollback -------------------------------------------------------------------------------


def plan_dict(plan: Plan, environ: env.Environ, *, dry_run: bool, entry: str | None = None) -> dict[str, Any]:
    changes = []
    for change in plan.changes:
        item = {"agent": change.agent, "path": str(change.path), "action": change.action}
        if dry_run and change.action != "unchanged":
            item["diff"] = unified_diff(change, environ)
        changes.append(item)
    return {
        "profile": plan.profile.name if plan.profile else None,
        "dry_run": dry_run,
        "changed": bool(plan.pending) and not dry_run,
        "journal_entry": entry,
        "changes": changes,
        "skipped": plan.skipped,
        "notes": plan.notes,
    }


def plan_text(plan: Plan, environ: env.Environ, *, dry_run: bool, colour: bool, title: str) -> str:
    lines = [title]
    width = max([len(c.agent) for c in plan.changes] + [len(a) for a in plan.skipped] + [5])
    last_agent = None
    for change in plan.changes:
        agent = change.agent if change.agent != last_agent else ""
        last_agent = change.agent
        action = "would " + change.action if dry_run and change.action != "unchanged" else change.action
        lines.append(f"  {agent:<{width}}  {paint(action, change.action, colour)}  {env.display(change.path, environ)}")
    for agent, reason in plan.skipped.items():
        lines.append(f"  {agent:<{width}}  {paint('skipped', 'skipped', colour)}  {reason}")
    if dry_run:
        diffs = [unified_diff(c, environ) for c in plan.pending]
        if diffs:
            lines.append("")
            lines.append("".join(diffs).rstrip("\n"))
    return "\n".join(lines)


def nothing_to_switch(profile: str, any_selected: bool) -> str:
    """The title of a switch that pointed no agent at `profile` (exit status 3)."""
    if any_selected:
        return f"No agent switched to {profile}: none of the agents chosen can use it"
    return f"No agent to switch to {profile}: none is installed or configured"


def nothing_to_switch_help(profile: str, any_selected: bool) -> str:
    """What to run after a switch that switched nothing: complete commands, nothing to fill in."""
    if any_selected:
        return "Nothing was written; each agent's line above says what it needs."
    every = fixes.command("agentcfg", "switch", profile, "--all")
    again = fixes.switch(profile)
    return (
        "Nothing was written. To set up every agent's files anyway (they are used once an agent is installed):\n"
        f"  {every}\n"
        f"or install one of them (codex, qwen, opencode or claude on PATH) and run: {again}"
    )


# -- status ----------------------------------------------------------------------------------------


def status_dicts(statuses: list[AgentStatus]) -> list[dict[str, Any]]:
    return [vars(s).copy() for s in statuses]


# How the agent gets its key, in words (AgentStatus.key keeps the short form for --json).
_KEY_WORDS = {
    "placeholder": "not needed (agentcfg's stand-in key)",
    "helper command": "printed by a command (apiKeyHelper / auth.command)",
}


def status_text(statuses: list[AgentStatus], colour: bool) -> str:
    rows = [("AGENT", "PROFILE", "MODEL", "BASE URL", "FILE")]
    notes = []
    for s in statuses:
        if s.error:
            rows.append((s.name, "error", "", "", s.files[0] if s.files else ""))
            notes.append(f"{s.name}: {s.error}")
            continue
        profile = s.profile or ("-" if not s.configured else "other")
        if not s.configured:
            profile = "-" + ("" if s.installed else " (not installed)")
        rows.append((s.name, profile, s.model or "", s.base_url or "", ", ".join(s.files)))
        if s.edited:
            restore = s.profile if s.profile not in (None, "other") else (s.last_switch or {}).get("profile")
            notes.append(
                paint(f"{s.name}: edited since agentcfg wrote it: {', '.join(s.edited)}", "edited", colour)
                + (f" (`{fixes.switch(restore, s.name)}` restores them)" if restore else " (a switch restores them)")
            )
        if s.key_in_file:
            where = "its file" if s.key == "in file" else (s.key or "")[3:]
            # `profile import` moves a plaintext key into the keyring whichever profile it belongs to (one of
            # yours, or one it creates for an endpoint no profile has), and points the file at the keyring.
            # Without a model in its files (Claude Code with no ANTHROPIC_MODEL and no slot), a script's import
            # cannot make it a profile: only a terminal can ask for the model id, so that is what is suggested.
            move = (
                f"`{fixes.command('agentcfg', 'profile', 'import', '--yes')}`"
                if s.model
                else f"`{fixes.command('agentcfg', 'profile', 'import')}` on a terminal, which asks for the model id "
                "its files do not name"
            )
            notes.append(
                paint(f"{s.name}: a key is in plaintext in {where}", "edited", colour)
                + f" (to keep it in the keyring instead: {move}; `agentcfg rollback` undoes it)"
            )
        elif s.key:
            notes.append(f"{s.name}: key {_KEY_WORDS.get(s.key, s.key)}")
        if s.key_helper_unisolated:  # doctor's key-helper-not-isolated says more (and of Codex's profile files)
            rewrite = f"`{fixes.switch(s.profile, s.name)}`" if s.profile not in (None, "other") else "a switch"
            notes.append(
                paint(
                    f"{s.name}: its key helper runs agentcfg without -I, as an earlier agentcfg wrote it",
                    "edited",
                    colour,
                )
                + f": a repository's own agentcfg/ could run in its place ({rewrite} rewrites it)"
            )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False)) + "  " + row[-1] for row in rows]
    switches = [s.last_switch for s in statuses if s.last_switch]
    if switches:
        newest = max(switches, key=lambda s: s["time"])
        lines.append("")
        lines.append(f"last switch: {newest['profile']} at {when(newest['time'])} (undo: agentcfg rollback)")
    if notes:
        lines.append("")
        lines.extend(notes)
    return "\n".join(line.rstrip() for line in lines)


# -- agents ----------------------------------------------------------------------------------------


def agents_text(rows: list[dict[str, Any]], environ: env.Environ) -> str:
    table = [("AGENT", "INSTALLED", "VERSION", "POINTS AT", "CONFIG")]
    for row in rows:
        installed = env.display(Path(row["path"]), environ) if row["path"] else "no"
        points = "-"
        if row["error"]:
            points = "error: " + row["error"].splitlines()[0]
        elif row["configured"] and (row["base_url"] or row["model"]):
            points = f"{row['profile'] or 'other'}: {row['model'] or '?'} at {row['base_url'] or '?'}"
        config = ", ".join(row["files"]) if row["configured"] else "none yet"
        version = row["version"] or "-"
        if row.get("proven"):
            version += f" ({row['proven']})"
        table.append((row["agent"], installed, version, points, config))
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]) - 1)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)) + "  " + r[-1] for r in table)


# -- keys ------------------------------------------------------------------------------------------


def keys_text(backend: str, rows: list[dict[str, Any]]) -> str:
    table = [("PROFILE", "VARIABLE", "KEYRING", "IN ENVIRONMENT")]
    for row in rows:
        if not row["key_env"]:
            table.append((row["profile"], "-", "not needed", "-"))
            continue
        stored = "unavailable" if row["stored"] is None else f"stored {row['tail']}" if row["stored"] else "missing"
        table.append((row["profile"], row["key_env"], stored, "set" if row["in_environment"] else "-"))
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]) - 1)]
    lines = [f"keyring: {backend}", ""]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)) + "  " + r[-1] for r in table]
    return "\n".join(line.rstrip() for line in lines)


# -- profiles --------------------------------------------------------------------------------------


def profile_dict(profile: Profile, environ: env.Environ) -> dict[str, Any]:
    data = {"name": profile.name, **profile.fields(), "source": profile.source}
    if profile.key_env:
        from agentcfg import keystore  # lazy: `status` imports report and reads no key (start-up budget)

        data["key_in_environment"] = keystore.exported(profile, environ) is not None  # one it may read
    return data


def source_text(source: str, environ: env.Environ) -> str:
    """Where a profile comes from, as the user thinks of it: built-in, ~/... or `project ~/...`."""
    if source == BUILT_IN:
        return source
    if source.startswith(PROJECT):
        return "project " + env.display(Path(source.removeprefix(PROJECT)), environ)
    return env.display(Path(source), environ)


def profiles_text(profiles: list[Profile], environ: env.Environ) -> str:
    rows = [("NAME", "MODEL", "BASE URL", "KEY", "SOURCE")]
    for p in profiles:
        source = source_text(p.source, environ)
        where = p.base_url + (f" (route: {_legs(p.route.legs)})" if p.route else "")
        rows.append((p.name, p.model, where, p.key_env or "none", source))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)) + "  " + r[-1] for r in rows)


LEGS = ("primary", "fallbacks")


def _legs(legs: tuple[str, ...]) -> str:
    return f"{legs[0]}, then {', then '.join(legs[1:])}"


def profile_text(profile: Profile, environ: env.Environ) -> str:
    data = profile_dict(profile, environ)
    width = max(len(k) for k in data)
    lines = []
    for key, value in data.items():
        if key == "key_in_environment":
            value = "set" if value else "not set in this shell (`agentcfg exec` and `agentcfg env` set it)"
        elif key == "source":
            value = source_text(value, environ)
        elif key == "route" and profile.route is not None:
            value = _legs(profile.route.legs) + "".join(f"; {k} {v}" for k, v in value.items() if k not in LEGS)
        lines.append(f"{key:<{width}}  {value}")
    return "\n".join(lines)

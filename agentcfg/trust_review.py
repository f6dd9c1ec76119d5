"""`agentcfg trust`: a project's files reviewed before they are trusted (the rows shown, the warnings, the digests
to record) and the key variables its profiles may read, decided from `--allow-key-env` and the last trust.

Above trust (the store and what a record allows) and profiles (parsing the project's files with the user's own
known): neither imports this module.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field
from pathlib import Path

from agentcfg import env, profiles, trust
from agentcfg.agents.base import AgentFile
from agentcfg.errors import AgentcfgError
from agentcfg.lazyclass import dataclass
from agentcfg.mcp import project as mcp_project
from agentcfg.mcp.model import Found
from agentcfg.profile_model import Profile
from agentcfg.trust import (
    KeyApproval,
    Record,
    approval_for,
    approve_command,
    digest,
    general_secret,
    now,
    project_root,
    read_set,
    record_for,
    sent_to,
    update_store,
)


def _mcp_names() -> str:
    return ", ".join(name for name, _, _ in mcp_project.files())


def locate(directory: str | None, environ: env.Environ, cwd: Path | None = None) -> Path:
    """The real path of the project DIR names (its root, its .agentcfg, or its .agentcfg/profiles), or of the
    nearest one from the working directory up: a directory holding `.agentcfg/profiles/` or an MCP file."""
    if directory is None:
        found = mcp_project.find_root(environ, cwd)
        if found is None:
            raise AgentcfgError(
                f"no project here: no .agentcfg/profiles/ or MCP file ({_mcp_names()}) in {cwd or Path.cwd()} or a "
                "directory above it (up to HOME)",
                hint="Run it inside the project, or name it: `agentcfg trust DIR`.",
            )
        return found
    path = Path(directory).expanduser()
    if not path.exists():
        raise AgentcfgError(f"{directory} does not exist", hint="Give the project's directory: `agentcfg trust DIR`.")
    if path.resolve() == env.home(environ).resolve():
        raise AgentcfgError(
            "your HOME is not a project: profiles of your own go in agentcfg's profiles dir",
            hint="Add one with `agentcfg profile add NAME --base-url URL --model ID`.",
        )
    if path.name == "profiles" and path.parent.name == ".agentcfg" and path.is_dir():
        return project_root(path)
    if path.name == ".agentcfg" and ((path / "profiles").is_dir() or mcp_project.has_files(path.parent)):
        return path.parent.resolve()
    if (path / ".agentcfg" / "profiles").is_dir() or mcp_project.has_files(path):
        return path.resolve()
    raise AgentcfgError(
        f"no .agentcfg/profiles/ and no MCP file ({_mcp_names()}) in {directory}: it is not a project",
        hint="Give the directory that holds .agentcfg/ (or its .agentcfg/profiles).",
    )


def _host(url: str | None) -> str:
    from urllib.parse import urlsplit

    try:
        return (urlsplit(url).hostname or "") if url else ""
    except ValueError:
        return ""


@dataclass(frozen=True)
class Review:
    """A project's files, validated before they are trusted."""

    rows: list[dict[str, object]]  # each profile as shown (and in --json): name, file, base_url, host, model, ...
    warnings: list[str]
    files: dict[str, str]  # the digests to record
    keyed: dict[str, Profile]  # the profiles that will be used and read a key variable: whose variable to approve
    skipped: dict[str, str]  # the profiles that will not be used, and why
    # The project's MCP files: what each server runs, the warnings, the digests to record.
    mcp: mcp_project.Review = field(default_factory=lambda: mcp_project.Review([], [], {}))


def review(profiles_dir: Path, environ: env.Environ) -> Review:
    """Validate every file of a project before it is trusted: its profiles, the warnings to show, the digests to
    record and the profiles whose key variable can be approved. A file that cannot be read or does not validate
    raises, naming it: nothing is recorded then."""
    read, unreadable = read_set(profiles_dir)
    for name, reason in sorted(unreadable.items()):
        raise AgentcfgError(
            f"cannot trust this project: {reason}",
            where=str(profiles_dir / name),
            hint="Replace it with a regular profile file (or remove it), then run `agentcfg trust` again.",
        )
    if not read:
        return Review([], [], {}, {}, {})
    known = profiles.load_own(environ)
    variables = {p.key_env: p.name for p in known.values() if p.key_env}
    rows: list[dict[str, object]] = []
    warnings: list[str] = []
    keyed: dict[str, Profile] = {}
    skipped: dict[str, str] = {}
    for filename, data in sorted(read.items()):
        name, where = filename.removesuffix(".toml"), str(profiles_dir / filename)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise AgentcfgError(f"is not UTF-8 text ({exc.reason})", where=where) from None
        profile = profiles.parse(name, text, profiles.PROJECT + where)
        host = _host(profile.base_url)
        rows.append(
            {"name": name, "file": filename, "base_url": profile.base_url, "host": host, "model": profile.model,
             "key_env": profile.key_env, "anthropic_base_url": profile.anthropic_base_url}
        )  # fmt: skip
        if name in known:
            kind = "built-in" if known[name].source == profiles.BUILT_IN else "user"
            skipped[name] = f"it has the name of a {kind} profile"
            warnings.append(f"{filename}: has the name of a {kind} profile: it will be skipped (yours stays)")
        elif profile.key_env and profile.key_env in variables:
            skipped[name] = f"it reads the key variable {profile.key_env} of profile {variables[profile.key_env]!r}"
            warnings.append(
                f"{filename}: reads the key variable {profile.key_env} of profile {variables[profile.key_env]!r}: "
                "it will be skipped (a project profile must use a key variable of its own)"
            )
        elif profile.key_env:
            keyed[name] = profile
            if general_secret(profile.key_env):
                warnings.append(
                    f"{name} reads {profile.key_env}{_exported(profile, environ)}, which looks like a general secret "
                    f"rather than a key for this team's endpoint: approving it would send it to {sent_to(profile)}"
                )
        for url in (profile.base_url, profile.anthropic_base_url):
            if url and not profiles.is_loopback(_host(url)):
                sent = f" and the key in {profile.key_env}" if profile.key_env else ""
                warnings.append(f"{name} sends your prompts{sent} to {_host(url) or url}, off this machine")
    warnings += _shared_variables(keyed)
    return Review(rows, warnings, {n: digest(d) for n, d in read.items()}, keyed, skipped)


def _exported(profile: Profile, environ: env.Environ) -> str:
    return " (set in this shell)" if profile.key_env and environ.get(profile.key_env) else ""


def _shared_variables(keyed: Mapping[str, Profile]) -> list[str]:
    """One variable read by project profiles with different hosts: its key would reach each of them."""
    by_variable: dict[str, list[Profile]] = {}
    for profile in keyed.values():
        by_variable.setdefault(str(profile.key_env), []).append(profile)
    return [
        f"{', '.join(p.name for p in found)} {'both' if len(found) == 2 else 'all'} read {variable}, for "
        f"different hosts ({'; '.join(f'{p.name}: {sent_to(p)}' for p in found)}): you can approve it for one "
        "set of hosts only"
        for variable, found in sorted(by_variable.items())
        if len({approval_for(p).origins for p in found}) > 1
    ]


def parse_allowed(given: Sequence[str]) -> dict[str, str]:
    """`--allow-key-env PROFILE=VARIABLE` options -> {PROFILE: VARIABLE}."""
    found: dict[str, str] = {}
    for option in given:
        name, sep, variable = option.partition("=")
        if not sep or not name or not variable:
            raise AgentcfgError(
                f"--allow-key-env {option!r} is not PROFILE=VARIABLE",
                hint="Name the profile and the variable it reads, e.g. --allow-key-env team=TEAM_API_KEY "
                "(`agentcfg trust` lists them).",
            )
        if found.get(name, variable) != variable:
            raise AgentcfgError(f"--allow-key-env names profile {name!r} twice, with two variables")
        found[name] = variable
    return found


def approvals(reviewed: Review, allowed: Mapping[str, str], root: Path) -> dict[str, KeyApproval]:
    """The approvals `--allow-key-env` (or the prompt) gives, checked against the project's files: each names a
    profile of the project that will be used, and exactly the variable it reads; and one variable goes to one set
    of origins (two profiles reading it for different hosts cannot both have it)."""
    names = {str(row["name"]) for row in reviewed.rows}
    found: dict[str, KeyApproval] = {}
    for name, variable in sorted(allowed.items()):
        option = f"--allow-key-env {name}={variable}"
        profile = reviewed.keyed.get(name)
        if profile is None:
            if name not in names:
                why = f"{root} has no profile {name!r} (its profiles: {', '.join(sorted(names))})"
            elif name in reviewed.skipped:
                why = f"profile {name!r} will not be used ({reviewed.skipped[name]}), so it reads no key"
            else:
                why = f"profile {name!r} reads no key (it has no key_env)"
            raise AgentcfgError(f"{option}: {why}", hint="`agentcfg trust` lists the project's profiles.")
        if variable != profile.key_env:
            raise AgentcfgError(
                f"{option}: profile {name!r} reads its key from {profile.key_env}, not {variable}",
                hint=f"Approve the variable it names: `{approve_command(profile)}`.",
            )
        found[name] = approval_for(profile)
    for variable in {a.variable for a in found.values()}:
        sharing = {n: a for n, a in found.items() if a.variable == variable}
        if len({a.origins for a in sharing.values()}) > 1:
            raise AgentcfgError(
                f"{variable} would go to different hosts: "
                + "; ".join(f"{n}: {sent_to(reviewed.keyed[n])}" for n in sorted(sharing)),
                hint="Approve it for one of these profiles; store the others' keys: "
                + ", ".join(f"`agentcfg key set {n}`" for n in sorted(sharing))
                + ".",
            )
    return found


def decide(reviewed: Review, given: Mapping[str, str], previous: Record | None, root: Path) -> dict[str, KeyApproval]:
    """The approvals a trust records: those `--allow-key-env` gives (checked by `approvals`), and those of the last
    trust that still hold (the same profile reads the same variable for the same origins) unless one given now
    sends that variable elsewhere. A profile whose variable or hosts changed is not approved until you say so."""
    found = approvals(reviewed, given, root)
    kept = previous.key_env if previous else {}
    for name, approval in sorted(kept.items()):
        profile = reviewed.keyed.get(name)
        elsewhere = any(a.variable == approval.variable and a.origins != approval.origins for a in found.values())
        if profile is not None and name not in found and approval_for(profile) == approval and not elsewhere:
            found[name] = approval
    return found


def key_rows(reviewed: Review, approved_now: Mapping[str, KeyApproval]) -> list[dict[str, object]]:
    """The rows of `review` with what each profile's key variable may do: key_sent_to (the origins its key goes
    to), key_env_approved (None: it reads no key) and approve (the command that approves it, while it is not)."""
    rows = []
    for row in reviewed.rows:
        profile = reviewed.keyed.get(str(row["name"]))
        rows.append(
            {
                **row,
                "key_sent_to": list(approval_for(profile).origins) if profile else [],
                "key_env_approved": (row["name"] in approved_now) if profile else None,
                "approve": approve_command(profile) if profile and row["name"] not in approved_now else None,
            }
        )
    return rows


def question(profile: Profile, environ: env.Environ) -> str:
    """The prompt that approves a profile's variable on a terminal."""
    return (
        f"Let {profile.name} read its key from {profile.key_env}{_exported(profile, environ)} and send it to "
        f"{sent_to(profile)}?"
    )


# -- the `agentcfg trust` use case ------------------------------------------------------------------------


@dataclass
class Pending:
    """A project reviewed and its approvals decided, not yet recorded (a terminal may still add approvals)."""

    directory: Path  # its .agentcfg/profiles
    root: Path
    reviewed: Review
    approvals: dict[str, KeyApproval]


def prepare(
    directory: str | None, allowed: Sequence[str], environ: env.Environ, reader: mcp_project.Reader | None = None
) -> Pending:
    """Find the project DIR names (or the one here), review its profile files and its MCP files (`reader`: how
    each agent's file is read, its own reader by default) and decide the approvals that `--allow-key-env` and
    the last trust give. A project with MCP files and no profiles is trusted too: the MCP files are recorded."""
    root = locate(directory, environ)
    found = root / ".agentcfg" / "profiles"
    reviewed = review(found, environ)
    files = mcp_project.read_files(root, environ, reader or mcp_project.agent_reader)
    mcp = mcp_project.review(files, root)
    if not reviewed.files and not mcp.files:
        raise AgentcfgError(f"no profile files (*.toml) in {found} and no MCP file ({_mcp_names()}): nothing to trust")
    reviewed = Review(reviewed.rows, reviewed.warnings + mcp.warnings, reviewed.files, reviewed.keyed,
                      reviewed.skipped, mcp)  # fmt: skip
    return Pending(found, root, reviewed, decide(reviewed, parse_allowed(allowed), record_for(root, environ), root))


def offer(pending: Pending, name: str, profile: Profile) -> dict[str, KeyApproval] | None:
    """The approvals if `profile`'s variable were approved too, or None when it cannot be (a variable approved
    for other hosts already: `approvals` says why)."""
    given = {**{n: a.variable for n, a in pending.approvals.items()}, name: str(profile.key_env)}
    try:
        return approvals(pending.reviewed, given, pending.root)
    except AgentcfgError:
        return None


def commit(pending: Pending, environ: env.Environ) -> list[dict[str, object]]:
    """Record the trust (the files' digests, now, the approvals) and return the rows to show (key_rows)."""
    record = Record(pending.reviewed.files, now(), pending.approvals, pending.reviewed.mcp.files)
    update_store(environ, lambda records: records.update({str(pending.root): record}))
    return key_rows(pending.reviewed, pending.approvals)


def revoke(directory: str | None, environ: env.Environ) -> Path:
    """Forget the trust in the project DIR names (or the one here): a project since removed can still be
    revoked by its path. Returns its root."""
    try:
        root = locate(directory, environ)
    except AgentcfgError:
        if directory is None:
            raise
        root = Path(directory).expanduser().resolve()

    def forget(records: dict[str, Record]) -> None:
        if str(root) not in records:
            raise AgentcfgError(f"{root} is not trusted", hint="`agentcfg trust --list` shows trusted projects.")
        del records[str(root)]

    update_store(environ, forget)
    return root


def states(environ: env.Environ) -> list[trust.State]:
    """`trust --list`: each trusted project's state, its MCP files compared too."""

    def mcp_digests(root: Path) -> dict[str, str | None]:
        return mcp_project.digests(mcp_project.read_files(root, environ, _no_reader))

    return trust.states(environ, mcp_digests)


def _no_reader(agent: str, file: AgentFile, text: str, environ: env.Environ) -> list[Found]:
    """Listing compares digests only: no agent's reader is needed."""
    return []

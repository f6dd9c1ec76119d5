"""Trusted projects: a repository's `.agentcfg/profiles/` is used only once you have trusted exactly its set
of files, like `direnv allow` or `mise trust`.

A cloned repository is untrusted input: a profile in it decides where requests (and a key) go. So the
profiles of a project are used only while its files are byte for byte the set you trusted: a file added,
removed or changed makes the whole set untrusted again until you look and run `agentcfg trust` once more.

Trusting a project's files does not let its profiles read your environment: a profile's `key_env` is a name the
project chose (`STRIPE_SECRET_KEY`, `OPENAI_API_KEY`, another profile's variable), and its key would go to the
project's host. So a project profile reads its variable only once you approved it at `agentcfg trust` (a prompt on
a terminal, `--allow-key-env PROFILE=VAR` in scripts), for the hosts shown then; otherwise its key comes from the
keyring (`agentcfg key set PROFILE`, bound to its hosts) or not at all.

The project's MCP files (`.mcp.json`, `opencode.json`, `.agentcfg/mcp.toml`: agentcfg.mcp.project) are
trusted the same way and at the same time, in a set of their own (`mcp`): one changed makes them untrusted
again, not the profiles. A record without `mcp` (written before) trusts the profiles and no MCP file.

The store is one private JSON file in agentcfg's state dir:
    {"version": 1, "projects": {"/real/path/of/repo": {"files": {"team.toml": "<sha256>"}, "trusted_at": "...",
        "key_env": {"team": {"variable": "TEAM_KEY", "origins": ["https://llm.example.com:443"]}},
        "mcp": {".mcp.json": "<sha256>"}}}}
Everything here but `load_store`, `save_store`, `read_set` and `approved` is pure.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import field
from pathlib import Path
from typing import TypedDict

from agentcfg import env, fixes, fsutil, key_rules
from agentcfg.errors import AgentcfgError
from agentcfg.lazyclass import dataclass
from agentcfg.profile_model import PROJECT, Profile

STORE = "trusted-projects.json"
VERSION = 1
TRUSTED, CHANGED, UNTRUSTED, MISSING = "trusted", "changed", "untrusted", "missing"

# Variables that hold a credential for something other than one team's LLM endpoint: a project profile
# reading one of them would hand that secret to the project's host.
_GENERAL_SECRETS = {
    "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "GITHUB_TOKEN", "GH_TOKEN", "GITLAB_TOKEN",
    "NPM_TOKEN", "PYPI_TOKEN", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "GEMINI_API_KEY", "GOOGLE_API_KEY",
    "MISTRAL_API_KEY", "GROQ_API_KEY", "OPENROUTER_API_KEY", "DEEPSEEK_API_KEY", "DASHSCOPE_API_KEY",
    "TOGETHER_API_KEY", "XAI_API_KEY", "CLOUDFLARE_API_TOKEN", "DIGITALOCEAN_TOKEN", "SLACK_TOKEN",
    "DOCKER_PASSWORD", "VAULT_TOKEN", "CI_JOB_TOKEN", "SSH_AUTH_SOCK",
}  # fmt: skip
_GENERAL_PREFIXES = ("AWS_", "AZURE_", "GOOGLE_", "GCP_", "GCLOUD_", "ARM_", "GITHUB_", "GH_", "OPENAI_", "ANTHROPIC_")


@dataclass(frozen=True)
class KeyApproval:
    """A key variable you approved for one project profile, and the origins its key may go to (as
    keystore.profile_origins gives them): it stands only while the profile names that variable and those origins."""

    variable: str
    origins: tuple[str, ...]


@dataclass(frozen=True)
class Record:
    """One trusted project: its profile files by name, each with the sha256 of its bytes, and the key variables
    you approved (profile name -> approval), which trusting it again keeps while they still hold (`decide`)."""

    files: dict[str, str]
    trusted_at: str
    key_env: dict[str, KeyApproval] = field(default_factory=dict)
    # The project's MCP files (`.mcp.json`, ...: agentcfg.mcp.project) by path from its root, with their sha256.
    # None: recorded before agentcfg recorded them, so none of them is trusted (its profiles still are).
    mcp: dict[str, str] | None = None


@dataclass(frozen=True)
class Comparison:
    """A project's files now against its record."""

    state: str  # TRUSTED, CHANGED or UNTRUSTED (no record)
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)  # different bytes, or unreadable now


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def compare(record: Record | None, current: Mapping[str, str | None]) -> Comparison:
    """`current`: each file's digest, None for one that could not be read (never equal to a record)."""
    if record is None:
        return Comparison(UNTRUSTED)
    added = sorted(set(current) - set(record.files))
    removed = sorted(set(record.files) - set(current))
    changed = sorted(n for n in set(current) & set(record.files) if current[n] is None or current[n] != record.files[n])
    return Comparison(TRUSTED if not (added or removed or changed) else CHANGED, added, removed, changed)


def shown(name: str) -> str:
    """A file name as printed: one with a newline or another control character quoted, so a repository
    cannot write lines of its own into agentcfg's output."""
    return name if name.isprintable() else ascii(name)


def describe(comparison: Comparison) -> str:
    """`changed: a.toml; added: b.toml`: what differs from the record."""
    parts = [
        f"{label}: {', '.join(shown(n) for n in names)}"
        for label, names in (
            ("changed", comparison.changed),
            ("added", comparison.added),
            ("removed", comparison.removed),
        )
        if names
    ]
    return "; ".join(parts)


def general_secret(variable: str) -> bool:
    """Does `variable` look like a credential for something else than a team's own endpoint?"""
    upper = variable.upper()
    return upper in _GENERAL_SECRETS or upper.startswith(_GENERAL_PREFIXES) or bool(re.search(r"PASSW(OR)?D", upper))


def project_root(profiles_dir: Path) -> Path:
    """The project a `.agentcfg/profiles/` belongs to: the real path of the directory holding `.agentcfg/`."""
    return profiles_dir.parent.parent.resolve()


def trust_command(root: Path) -> str:
    return f"agentcfg trust {shlex.quote(str(root))}"


def file_names(profiles_dir: Path) -> list[str]:
    """The profile files of a project (names only: listing reads no file)."""
    try:
        return sorted(p.name for p in profiles_dir.glob("*.toml"))
    except OSError:
        return []


def read_set(profiles_dir: Path) -> tuple[dict[str, bytes], dict[str, str]]:
    """Each profile file's bytes, and for those that cannot be read (a FIFO, a device, too large, ...) why.

    Bounded and non-blocking (fsutil.read_limited): a hostile file costs one skipped entry, never a hang.
    """
    read: dict[str, bytes] = {}
    unreadable: dict[str, str] = {}
    for name in file_names(profiles_dir):
        try:
            data = fsutil.read_limited(profiles_dir / name, name, fsutil.PROFILE_LIMIT)
        except AgentcfgError as exc:
            unreadable[name] = exc.message
            continue
        if data is None:  # removed since the listing
            continue
        read[name] = data
    return read, unreadable


def digests(read: Mapping[str, bytes], unreadable: Mapping[str, str]) -> dict[str, str | None]:
    return {**{n: digest(d) for n, d in read.items()}, **dict.fromkeys(unreadable)}


# -- the store (the one edge) ----------------------------------------------------------------------------


def store_path(environ: env.Environ) -> Path:
    return env.state_dir(environ) / STORE


def _approvals(data: object) -> dict[str, KeyApproval]:
    """The approvals of a record; one of the wrong shape is dropped (so it approves nothing)."""
    found: dict[str, KeyApproval] = {}
    for name, entry in data.items() if isinstance(data, dict) else ():
        variable = entry.get("variable") if isinstance(entry, dict) else None
        origins = entry.get("origins") if isinstance(entry, dict) else None
        if isinstance(variable, str) and isinstance(origins, list) and all(isinstance(o, str) for o in origins):
            found[name] = KeyApproval(variable, tuple(origins))
    return found


def parse_store(text: str) -> dict[str, Record]:
    """The store's records; entries of the wrong shape are dropped (so they trust nothing)."""
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    projects = data.get("projects") if isinstance(data, dict) else None
    records: dict[str, Record] = {}
    for root, entry in (projects or {}).items() if isinstance(projects, dict) else ():
        files = entry.get("files") if isinstance(entry, dict) else None
        if isinstance(files, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
            approvals = _approvals(entry.get("key_env"))
            mcp = entry.get("mcp")
            valid = isinstance(mcp, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in mcp.items())
            records[root] = Record(dict(files), str(entry.get("trusted_at", "")), approvals, mcp if valid else None)
    return records


def dump_store(records: Mapping[str, Record]) -> str:
    projects = {
        root: {
            "files": dict(sorted(r.files.items())),
            "trusted_at": r.trusted_at,
            "key_env": {n: {"variable": a.variable, "origins": list(a.origins)} for n, a in sorted(r.key_env.items())},
            **({"mcp": dict(sorted(r.mcp.items()))} if r.mcp is not None else {}),
        }
        for root, r in records.items()
    }
    return json.dumps({"version": VERSION, "projects": dict(sorted(projects.items()))}, indent=2) + "\n"


def load_store(environ: env.Environ) -> dict[str, Record]:
    """The trusted projects; none when the store is missing or unreadable (then nothing is trusted)."""
    path = store_path(environ)
    try:
        data = fsutil.read_limited(path, str(path), fsutil.PROFILE_LIMIT)
    except AgentcfgError:
        return {}
    if data is None:
        return {}
    try:
        return parse_store(data.decode("utf-8"))
    except UnicodeDecodeError:
        return {}


def save_store(environ: env.Environ, records: Mapping[str, Record]) -> None:
    path = store_path(environ)
    try:
        fsutil.private_dir(path.parent)
        fsutil.write_private(path, dump_store(records))
    except OSError as exc:
        raise AgentcfgError(
            f"cannot write the trust store: {exc.strerror or exc}",
            where=str(path),
            hint=fsutil.space_hint(exc, str(path.parent)),
        ) from None


def update_store(environ: env.Environ, change: Callable[[dict[str, Record]], None]) -> None:
    """Read, change and write the store under a lock, so two `agentcfg trust` at once both count."""
    path = store_path(environ)
    fsutil.private_dir(path.parent)
    with fsutil.exclusive_lock(path.with_name(STORE + ".lock")):
        records = load_store(environ)
        change(records)
        save_store(environ, records)


def record_for(root: Path, environ: env.Environ) -> Record | None:
    return load_store(environ).get(str(root))


def sent_to(profile: Profile) -> str:
    """The origins a profile's key goes to, as its URLs name them (`https://llm.example.com`)."""
    from urllib.parse import urlsplit

    found = []
    for url in (profile.base_url, profile.anthropic_base_url):
        if url:
            parts = urlsplit(url)
            found.append(f"{parts.scheme}://{parts.netloc}")
    return " and ".join(dict.fromkeys(found))


# -- approving a project profile's key variable -----------------------------------------------------------


def approval_for(profile: Profile) -> KeyApproval:
    """What approving a profile's variable records: the variable, and the origins its key goes to now."""
    return KeyApproval(str(profile.key_env), tuple(key_rules.profile_origins(profile)))


def project_of(profile: Profile) -> Path:
    """The project a project profile comes from (its source is `project:` and the file's path)."""
    return project_root(Path(profile.source.removeprefix(PROJECT)).parent)


def approve_command(profile: Profile) -> str:
    """`agentcfg trust ROOT --allow-key-env NAME=VARIABLE` for a project profile."""
    root = str(project_of(profile))
    return fixes.command("agentcfg", "trust", root, "--allow-key-env", f"{profile.name}={profile.key_env}")


def approved(profile: Profile, environ: env.Environ) -> bool:
    """Whether you approved the variable a project profile names, for the hosts it has now, when you trusted its
    project (the record is read each time: it is what `trust` last decided)."""
    if not profile.key_env or not profile.source.startswith(PROJECT):
        return False
    record = record_for(project_of(profile), environ)
    return record is not None and record.key_env.get(profile.name) == approval_for(profile)


def now() -> str:
    from datetime import datetime, timezone

    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class _State(TypedDict):
    project: str
    state: str
    files: list[str]
    trusted_at: str
    key_env: dict[str, str]  # profile -> variable
    mcp_files: list[str]  # the MCP files recorded (agentcfg.mcp.project)


class State(_State, total=False):
    """One row of `trust --list` (and its --json)."""

    differences: str  # when CHANGED


def states(environ: env.Environ, mcp_digests: Callable[[Path], Mapping[str, str | None]] | None = None) -> list[State]:
    """Each trusted project: its path, files, when trusted, the key variables approved (profile -> variable), and
    trusted / changed / missing now. `mcp_digests`: the digests of a project's MCP files now (agentcfg.mcp.project,
    above this module), compared with the record's too."""
    rows: list[State] = []
    for root, record in sorted(load_store(environ).items()):
        directory = Path(root) / ".agentcfg" / "profiles"
        row: State = {
            "project": root,
            "state": MISSING,
            "files": sorted(record.files),
            "trusted_at": record.trusted_at,
            "key_env": {name: approval.variable for name, approval in sorted(record.key_env.items())},
            "mcp_files": sorted(record.mcp or {}),
        }
        if Path(root).is_dir():
            comparison = compare(record, digests(*read_set(directory)))
            if mcp_digests is not None:  # a record without `mcp` trusts no MCP file: each one now is added
                mcp = compare(Record(record.mcp or {}, record.trusted_at), mcp_digests(Path(root)))
                comparison = Comparison(
                    TRUSTED if comparison.state == mcp.state == TRUSTED else CHANGED,
                    sorted(comparison.added + mcp.added),
                    sorted(comparison.removed + mcp.removed),
                    sorted(comparison.changed + mcp.changed),
                )
            row["state"] = comparison.state
            if comparison.state == CHANGED:
                row["differences"] = describe(comparison)
        rows.append(row)
    return rows

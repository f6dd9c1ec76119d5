"""Which profile an agent's files belong to: the one `status` shows and doctor's fixes name.

Base URL and model alone are ambiguous: a team's profile added with `profile add --from` next to
an imported one often has both the same, and the first of them used to win for every agent. The
files say more than their endpoint. Among the profiles with the base URL (or Anthropic base URL)
and model the agent really uses, in the order of how sure each is:

1. the one agentcfg's own id in the files names (Binding.profile): Codex's `model_provider =
   "agentcfg-NAME"`, opencode's provider `agentcfg-NAME`, Claude's apiKeyHelper `agentcfg key get NAME`;
2. the one whose label agentcfg wrote (Binding.label: qwen's entry is only named `agentcfg: LABEL`,
   the profile's description or name), when exactly one has it: like the id, it is in the files now;
3. the one of the agent's last switch in the journal (history: files copied or written since
   without agentcfg make it wrong, hence after what the files say);
4. the first.

A profile that no longer has that URL and model is not the agent's, whatever names it: after a hand
edit (or a change to the profile) a fix naming it would undo the edit. An id that names a profile
which is gone is reported (Attribution.removed).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

from agentcfg.fields import NAME_PATTERN
from agentcfg.lazyclass import dataclass
from agentcfg.patterns import lazy
from agentcfg.profiles import Profile

# agentcfg's provider ids (Codex's model_provider and model_providers.ID, opencode's provider key), one family
# per use. Codex merges tables of one id across config.toml, a profile file and `-c` overrides (and refuses to
# start when the merged table has two key methods); opencode deep-merges providers of one id across its
# layers. So no id of one family may equal one of another, for any two profiles. A profile name is
# `[a-z0-9][a-z0-9_-]*`: a switch's `agentcfg-NAME` has `-` after `agentcfg`, the others `_` (a TOML bare key
# character no switch's id has there), then a tag that ends at the first `-`, which no tag contains. Each id
# is a TOML bare key, so `-c model_providers.ID=...` needs no quoting.
ID_PREFIX = "agentcfg-"  # a switch's, in config.toml or opencode's file: `agentcfg-NAME` (every version's)
PROFILE_FILE_PREFIX = "agentcfg_profile-"  # a Codex profile file's (earlier versions: `agentcfg-profile-NAME`)
EXEC_PREFIX = "agentcfg_exec"  # `agentcfg exec`'s: `agentcfg_exec-NAME`, else `agentcfg_execN-NAME` (N >= 2)
_TAGGED = lazy(rf"agentcfg_(?:profile|exec(?:[2-9]\d*|[1-9]\d+)?)-({NAME_PATTERN})")
LABEL_PREFIX = "agentcfg: "  # the name agentcfg gives its provider entry: `agentcfg: LABEL`


@dataclass(frozen=True)
class Attribution:
    """Which profile an agent's files point at, and what decided it."""

    profile: str | None  # the profile the agent is attributed to; None: no profile fits
    removed: str | None = None  # the profile agentcfg's id in the files names, which no longer exists
    by: str = ""  # "id", "journal", "label" or "url+model": what decided it


def switch_id(name: str) -> str:
    """The id a switch to profile `name` writes."""
    return f"{ID_PREFIX}{name}"


def profile_file_id(name: str) -> str:
    """The id in the Codex profile file of profile `name` (never a switch's: config.toml keeps those)."""
    return f"{PROFILE_FILE_PREFIX}{name}"


def exec_id(name: str, n: int = 1) -> str:
    """`agentcfg exec`'s id for profile `name`, its `n`th choice (see free_exec_id)."""
    return f"{EXEC_PREFIX}-{name}" if n == 1 else f"{EXEC_PREFIX}{n}-{name}"


def free_exec_id(name: str, taken: Collection[object]) -> str:
    """exec's first id for `name` that is not in `taken` (the agent's file's own ids: a table of the same id
    there, which only a hand could have written, would merge with exec's)."""
    return next(ident for n in range(1, len(taken) + 2) if (ident := exec_id(name, n)) not in taken)


def profile_from_switch_id(value: object) -> str | None:
    """The profile a switch's id (`agentcfg-NAME`) names, or None: the one id whose table a switch rewrites."""
    if isinstance(value, str) and value.startswith(ID_PREFIX):
        return value[len(ID_PREFIX) :] or None
    return None


def profile_from_id(value: object) -> str | None:
    """The profile an id of agentcfg's names (any family), or None. An earlier version's `agentcfg-profile-x`
    or `agentcfg-exec-x` in config.toml is a switch's id, of profile `profile-x` or `exec-x`."""
    if not isinstance(value, str):
        return None
    if value.startswith(ID_PREFIX):
        return profile_from_switch_id(value)
    tagged = _TAGGED.fullmatch(value)
    return tagged.group(1) if tagged else None


def label_from_name(value: object) -> str | None:
    """LABEL of an `agentcfg: LABEL` provider name, or None."""
    if isinstance(value, str) and value.startswith(LABEL_PREFIX):
        return value[len(LABEL_PREFIX) :]
    return None


def _norm(url: str | None) -> str:
    return (url or "").rstrip("/")


def matches(profile: Profile, base_url: str | None, model: str | None) -> bool:
    """The profile has this base URL (OpenAI or Anthropic protocol) and model."""
    if not base_url or model is None:
        return False
    return _norm(base_url) in {_norm(profile.base_url), _norm(profile.anthropic_base_url)} and model == profile.model


def attribute(
    base_url: str | None,
    model: str | None,
    profiles: dict[str, Profile],
    *,
    own: str | None = None,
    label: str | None = None,
    last_switch: str | None = None,
) -> Attribution:
    """The profile an agent with this endpoint and model belongs to (see the module's order)."""
    removed = own if own and own not in profiles else None
    candidates = [p for p in profiles.values() if matches(p, base_url, model)]
    if own and any(p.name == own for p in candidates):
        return Attribution(own, None, "id")
    if label is not None:
        labelled = [p.name for p in candidates if p.label == label]
        if len(labelled) == 1:
            return Attribution(labelled[0], removed, "label")
    if last_switch and any(p.name == last_switch for p in candidates):
        return Attribution(last_switch, removed, "journal")
    if candidates:
        return Attribution(candidates[0].name, removed, "url+model")
    return Attribution(None, removed)


def last_switches(entries: Iterable[Any]) -> dict[str, str]:
    """agent -> the profile of the latest journal entry that wrote one of its files (entries oldest first)."""
    last: dict[str, str] = {}
    for entry in entries:
        profile = entry.manifest.get("profile")
        for item in entry.files:
            if isinstance(profile, str):
                last[item["agent"]] = profile
    return last

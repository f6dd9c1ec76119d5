"""`agentcfg init`'s writing steps, once everything was shown, checked and asked (cli/onboarding.py): import
the endpoints found, store the key, switch through the one switch path (switch.run).

Each step says what it did as it goes, through `say` (a step's line) and `emit` (notes): the command's
output keeps the order of what happened, and --json collects the same into one document."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field

from agentcfg import env, fixes, fsutil, keystore, onboard, profiles, switch
from agentcfg.errors import AgentcfgError, Exit
from agentcfg.lazyclass import dataclass
from agentcfg.onboard import Imported, Survey
from agentcfg.plan import Plan
from agentcfg.profiles import Profile

Say = Callable[[str], None]
Emit = Callable[[list[str]], None]


@dataclass
class Answers:
    """What init's first steps decided (cli/onboarding.py `_prepare`): nothing written yet."""

    profile: str
    key: str | None  # the key read from stdin or the prompt, to store
    key_state: str  # onboard.KeyPlan.state
    found: Survey
    move: set[str]  # the profiles whose plaintext key moves into the keyring
    keyring: AgentcfgError | None  # the one keyring check's problem
    notes: list[str] = field(default_factory=list)


@dataclass
class Written:
    """What init wrote: the profiles imported, the key's state, and the switch."""

    chosen: Profile
    imported: Imported
    key_state: str
    plan: Plan
    entry: str | None
    switched: list[str]
    skipped: dict[str, str]  # every agent left alone, and why
    chose_none: bool  # init (not the machine) left every agent alone: none is installed or configured otherwise

    @property
    def status(self) -> int:
        return onboard.exit_status(switched=self.switched, key=self.key_state)


def write(answers: Answers, agents: tuple[str, ...], environ: env.Environ, say: Say, emit: Emit) -> Written:
    """Steps 1 to 4 of init's writing: import, the key, the switch."""
    fsutil.private_dir(env.config_dir(environ))
    imported = _import(answers, environ, say)
    emit(imported.notes + answers.notes)
    chosen = profiles.get(answers.profile, environ)
    key_state = _key(chosen, answers, environ, say)
    return _switch(chosen, imported, answers, key_state, agents, environ, say, emit)


def _import(answers: Answers, environ: env.Environ, say: Say) -> Imported:
    move, keyring = answers.move, answers.keyring
    imported = onboard.import_profiles(
        environ, move_keys=lambda c: c.name in move, found=answers.found, keyring=keyring
    )
    parts = (
        f"added {', '.join(imported.created)}" if imported.created else "",
        f"keys moved into the keyring: {', '.join(imported.moved)}" if imported.moved else "",
    )
    if imported.created or imported.moved:
        say("   " + " · ".join(part for part in parts if part))
    return imported


def _key(chosen: Profile, answers: Answers, environ: env.Environ, say: Say) -> str:
    """Step 3: store the key read, or say where the key stands; the key's state afterwards."""
    value, key_state = answers.key, answers.key_state
    missing = switch.missing_key(chosen, environ) if chosen.key_env and not value else None  # switch's rule: exit 4
    if key_state in ("already", "missing"):  # the import may just have moved this profile's key (or failed to)
        key_state = "missing" if missing else "already"
    if value:
        keystore.KeyStore(environ, chosen).store(chosen, value)
        say(f"3. stored the key for {chosen.name} in the keyring")
        return "stored"
    if key_state in ("read", "missing"):
        if answers.keyring is None and not (missing and missing.no_keyring):
            say(f"3. no key for {chosen.name} yet: store it with `{fixes.key_set(chosen.name)}`")
        else:  # `key set` cannot work here: what can
            say(
                f"3. no key for {chosen.name}, and no usable keyring to keep one: export {chosen.key_env} before "
                f"starting an agent, or `{fixes.switch(chosen.name)} --store-key-in-files` writes it into the files"
            )
        return "missing"
    exported = key_state == "already" and chosen.name not in keystore.remembered(environ)
    state = f"key exported in {chosen.key_env}" if exported else "key already stored"
    say(f"3. {chosen.name}: " + (state if key_state == "already" else "needs no key"))
    return key_state


def _switch(
    chosen: Profile,
    imported: Imported,
    answers: Answers,
    key_state: str,
    agents: tuple[str, ...],
    environ: env.Environ,
    say: Say,
    emit: Emit,
) -> Written:
    """Step 4: switch the agents, all but those whose file still holds a plaintext key (a switch would replace it)."""
    selected, skipped = switch.select(agents, False, environ, profile=chosen.name)
    skipped_before = set(skipped)  # not installed, no config: not init's choice
    holding = imported.holding_keys | {u.where for u in answers.found.unmodelled if u.key}
    for agent in [a for a in selected if a.TRAITS.name in holding]:
        selected.remove(agent)
        skipped[agent.TRAITS.name] = (
            f"its file holds a plaintext key that stayed out of the keyring; "
            f"`{fixes.switch(chosen.name, agent.TRAITS.name)}` replaces it (rollback restores)"
        )
    keys, key_notes = switch.key_source(chosen, selected, environ)
    done = switch.run(chosen, selected, environ, keys, label="init")
    emit(done.recovered)
    plan = done.plan
    switched = [a.TRAITS.name for a in selected if a.TRAITS.name not in plan.skipped]
    names = ", ".join(dict.fromkeys(c.agent for c in plan.pending)) or "nothing to change"
    undo = " (undo: agentcfg rollback" + (", again for each key moved" if imported.moved else "") + ")"
    if plan.changes:
        say(f"4. switched to {chosen.name}: {names}" + (undo if done.entry else ""))
    else:
        say(f"4. no agent to switch to {chosen.name}")
    all_skipped = {**skipped, **plan.skipped}
    for skipped_name, why in all_skipped.items():
        say(f"   {skipped_name}: skipped, {why}")
    later = [n for n in plan.notes + key_notes if key_state != "missing" or "stored no key" not in n]
    emit([n for n in later if n not in imported.notes])  # the move said how to start its agents
    chose_none = bool(all_skipped.keys() - skipped_before)
    return Written(chosen, imported, key_state, plan, done.entry, switched, all_skipped, chose_none)


def closing_notes(written: Written) -> list[str]:
    """What init's exit status means, when it is not 0."""
    status, name = written.status, written.chosen.name
    if status == Exit.NOTHING:
        why = (
            "every agent was left as it is (see why above)"
            if written.chose_none
            else ("no agent is installed or configured")
        )
        return [f"{why}, so nothing was switched (exit 3)"]
    if status == Exit.NO_KEY:
        return [f"switched, but {name} has no key yet (exit 4): run `{fixes.key_set(name)}`"]
    return []

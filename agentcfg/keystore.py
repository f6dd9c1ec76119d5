"""The OS keyring as agentcfg uses it: one entry per profile (service "agentcfg", user = profile name),
and beside it the origins the key was stored for (service "agentcfg-origins", same user, a JSON list),
so the binding travels with the key in the same backend and a key goes only to the hosts it was stored for.

keyring picks the backend: macOS Keychain, Windows Credential Locker, Secret Service or KWallet.
agentcfg never falls back to a plaintext store by itself: a backend keyring does not recommend
(priority below 1, such as keyrings.alt's PlaintextKeyring) is used only when the user named it in
PYTHON_KEYRING_BACKEND or keyringrc.cfg. keyring reads the process environment, not `environ`.
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from agentcfg import env, redact
from agentcfg.errors import AgentcfgError, Exit
from agentcfg.key_rules import MAX_LENGTH as MAX_LENGTH
from agentcfg.key_rules import MIN_LENGTH as MIN_LENGTH
from agentcfg.key_rules import auth_headers as auth_headers
from agentcfg.key_rules import check_value as check_value
from agentcfg.key_rules import header_problem, profile_origins
from agentcfg.key_rules import key_allowed as key_allowed
from agentcfg.key_rules import origin as origin
from agentcfg.key_rules import origin_text as origin_text
from agentcfg.key_rules import template_problem as template_problem
from agentcfg.keyring_memo import (
    _BUILT_WITH,
    _UNUSED_BY_KEYRING,
    NOT_A_KEYRING,
    _forget_backend,
    _remember_backend,
    _remembered_backend,
    loaded,
)
from agentcfg.keyring_memo import backend_name as backend_name
from agentcfg.keyring_memo import remember as remember
from agentcfg.keyring_memo import remembered as remembered
from agentcfg.profile_model import BUILT_IN, PROJECT, Profile
from agentcfg.profiles import profiles_dir

# The names above imported `as` themselves are this module's too (`keystore.check_value`): callers keep one door.

SERVICE = "agentcfg"
ORIGINS_SERVICE = "agentcfg-origins"
_LABELS = {
    "keyring.backends.SecretService.Keyring": "Secret Service",
    "keyring.backends.libsecret.Keyring": "Secret Service (libsecret)",
    "keyring.backends.macOS.Keyring": "macOS Keychain",
    "keyring.backends.Windows.WinVaultKeyring": "Windows Credential Locker",
    "keyring.backends.kwallet.DBusKeyring": "KWallet",
    "keyring.backends.fail.Keyring": "no backend (keyring's fail.Keyring)",
    "keyring.backends.null.Keyring": "keyring's null backend (stores nothing)",
}


class KeyringProblem(AgentcfgError):
    """A key command cannot go on. `kind`: no-backend, locked, denied, missing, failed, wrong-origin
    (the stored key was stored for other hosts) or bad-value (an exported key that cannot be a header)."""

    def __init__(self, kind: str, message: str, *, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.kind = kind


def backend_label(backend: Any) -> str:
    name = backend_name(backend)
    if name == "keyring.backends.chainer.ChainerBackend":
        return " + ".join(backend_label(b) for b in backend.backends) or _LABELS["keyring.backends.fail.Keyring"]
    return _LABELS.get(name, name)


def export_hint(profile: Profile | None) -> str:
    """How to give a profile's key for this shell only, as a complete command (bash and zsh: `read -s` asks
    for it without echoing it), or in words when no profile is known."""
    if profile and profile.key_env:
        return f"`read -rs {profile.key_env} && export {profile.key_env}` (it asks for the key without echoing it)"
    return "export the profile's variable (the VARIABLE column of `agentcfg key list`) in your shell"


def ways_out(profile: Profile | None, platform: str = sys.platform) -> str:
    lines = ["agentcfg keeps keys only in an OS keyring and never falls back to a plaintext file by itself. Ways out:"]
    if platform.startswith("linux"):
        lines.append(
            "- install and unlock a Secret Service: `sudo apt install gnome-keyring` and log in to a desktop "
            "session; on a headless box or WSL start one with `dbus-run-session -- sh -c "
            '\'printf %s "$KEYRING_PASSWORD" | gnome-keyring-daemon --unlock --components=secrets; exec "$SHELL"\'`'
        )
    lines.append(
        "- or choose a backend yourself: `pip install keyrings.cryptfile` into agentcfg's environment, then "
        "`export PYTHON_KEYRING_BACKEND=keyrings.cryptfile.cryptfile.CryptFileKeyring` (an encrypted file)"
    )
    if profile and profile.key_env:
        lines.append(
            f"- or skip the keyring: {export_hint(profile)}, for `agentcfg exec` and `env` to pass on; or "
            f"`agentcfg switch {profile.name} --store-key-in-files` to write it into the agents' files (mode 0600)"
        )
    else:
        lines.append(
            f"- or skip the keyring: {export_hint(None)}, for `agentcfg exec` and `env` to pass on; or switch "
            "with `--store-key-in-files` to write the key into the agents' files (mode 0600)"
        )
    return "\n  ".join(lines)


def _secret_service_reason() -> str | None:
    """Why keyring passed over the Secret Service, in keyring's own words (Linux only)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        from keyring.backends import SecretService

        SecretService.Keyring.priority  # noqa: B018 - raises the reason when unusable
    except Exception as exc:
        return str(exc) or type(exc).__name__
    return None


def _explicit_choice(environ: env.Environ) -> bool:
    if environ.get("PYTHON_KEYRING_BACKEND"):
        return True
    from keyring.util import platform_

    return (platform_.config_root() / "keyringrc.cfg").is_file()


def unlock_problem(label: str, detail: str, environ: env.Environ, platform: str = sys.platform) -> KeyringProblem:
    """Locked and denied get different messages: only one of them is fixed by trying again."""
    detail_l = detail.lower()
    if "-25308" in detail or "interaction" in detail_l:  # macOS errSecInteractionNotAllowed
        denied = False
    elif "-128" in detail or "cancel" in detail_l or "dismiss" in detail_l:  # errSecUserCanceled, prompt dismissed
        denied = True
    else:  # the Secret Service reports both as one error; a prompt could only be shown with a display
        denied = not platform.startswith("linux") or bool(environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY"))
    if denied:
        return KeyringProblem(
            "denied",
            f"the {label} is locked and unlocking it was denied (the prompt was dismissed or the password refused)",
            hint="Run the command again and unlock the keyring when asked.",
        )
    prompt = "no unlock prompt can be shown here"
    if platform.startswith("linux"):
        prompt += " (no DISPLAY or WAYLAND_DISPLAY)"
    return KeyringProblem(
        "locked",
        f"the {label} is locked, and {prompt}",
        hint="Unlock it in your desktop session; on a headless box: "
        '`printf %s "$KEYRING_PASSWORD" | gnome-keyring-daemon --replace --unlock --components=secrets`'
        if platform.startswith("linux")
        else "Unlock it in your desktop session, then run the command again.",
    )


class KeyStore:
    """Get, set and delete profile keys; every keyring failure becomes a KeyringProblem."""

    def __init__(self, environ: env.Environ, profile: Profile | None = None) -> None:
        self.environ = environ
        self.profile = profile  # named in the ways out of a missing backend
        self._backend: Any = None
        self._remembered = False  # the backend is the one remembered, not chosen by keyring in this process
        self._read_origins: dict[str, str | None] = {}  # origins read together with a key (_key_and_origins)

    @property
    def backend(self) -> Any:
        if self._backend is None:
            self._backend = self._open()
        return self._backend

    @property
    def label(self) -> str:
        return backend_label(self.backend)

    def _open(self, *, remembered: bool = True) -> Any:
        from agentcfg import deferred  # lazy: only where the keyring is opened (`switch` imports this, never opens)

        deferred.defer(*_UNUSED_BY_KEYRING, needs=_BUILT_WITH)
        try:
            import keyring

            # A backend chosen in this process already (keyring.set_keyring, or an earlier KeyStore) stands.
            chosen = getattr(keyring.core, "_keyring_backend", None) is not None
            if remembered and not chosen and (backend := _remembered_backend(self.environ)) is not None:
                self._remembered = True
                return backend
            backend = keyring.get_keyring()
        except Exception as exc:  # a PYTHON_KEYRING_BACKEND or keyringrc.cfg that names no usable class
            raise KeyringProblem(
                "no-backend",
                f"the keyring backend you chose cannot be used: {type(exc).__name__}: {exc}",
                hint="Check PYTHON_KEYRING_BACKEND (or keyringrc.cfg: `python -m keyring diagnose`).\n  "
                + ways_out(self.profile),
            ) from None
        chain = isinstance(backend, loaded("keyring.backends.chainer.ChainerBackend"))
        effective = backend.backends[0] if chain and backend.backends else backend  # type: ignore[attr-defined]
        if isinstance(effective, loaded(*NOT_A_KEYRING)):
            why = _secret_service_reason()
            found = f"keyring found {backend_label(effective)}" + (f"; Secret Service: {why}" if why else "")
            raise KeyringProblem("no-backend", f"no usable keyring: {found}", hint=ways_out(self.profile))
        if effective.priority < 1 and not _explicit_choice(self.environ):
            raise KeyringProblem(
                "no-backend",
                f"no usable keyring: the only backend keyring found is {backend_name(effective)}, which keyring "
                "itself does not recommend (it is not an OS keyring)",
                hint="If you want it anyway, choose it: "
                f"`export PYTHON_KEYRING_BACKEND={backend_name(effective)}`.\n  " + ways_out(self.profile),
            )
        if not chosen:
            _remember_backend(self.environ, backend)
        return backend

    def _call(self, operation: str, *args: str, service: str = SERVICE) -> Any:
        return self._ask(lambda backend: getattr(backend, operation)(service, *args))

    def _ask(self, do: Callable[[Any], Any]) -> Any:
        """`do(backend)`, every failure of it told apart (a KeyringProblem); a remembered backend that fails is
        replaced by keyring's choice now, and `do` runs again."""
        backend = self.backend  # first: it imports keyring, with what keyring does not need deferred
        from keyring.errors import KeyringLocked, NoKeyringError, PasswordDeleteError

        try:
            return do(backend)
        except PasswordDeleteError:
            raise
        except KeyringLocked as exc:
            raise unlock_problem(self.label, str(exc), self.environ) from None
        except NoKeyringError:
            raise KeyringProblem("no-backend", "no usable keyring", hint=ways_out(self.profile)) from None
        except Exception as exc:
            detail = redact.scrub(f"{type(exc).__name__}: {exc}")
            if re.search(r"-128\b|-25308\b|locked", detail, re.IGNORECASE):  # the same backend would ask again
                raise unlock_problem(self.label, detail, self.environ) from None
            if self._remembered:  # what was true when it was chosen is not now: choose again, as keyring would
                self._choose_again()
                return self._ask(do)
            raise KeyringProblem("failed", f"the {self.label} failed: {detail}") from None

    def _choose_again(self) -> None:
        _forget_backend(self.environ)
        self._remembered, self._backend = False, self._open(remembered=False)

    def get(self, name: str) -> str | None:
        value = self._ask(lambda backend: self._key_and_origins(backend, name))
        if value is None and self._remembered:  # keyring might choose another backend now, one that has it
            self._choose_again()
            value = self._ask(lambda backend: self._key_and_origins(backend, name))
        redact.register(value)
        remember(self.environ, name, value is not None)
        return value

    def set(self, name: str, value: str) -> None:
        redact.register(value)
        self._call("set_password", name, value)
        remember(self.environ, name, True)

    def store(self, profile: Profile, value: str) -> None:
        """Store `profile`'s key bound to its origins now. The key first: should the second write fail,
        the new key is left with the old binding (refused elsewhere) or none, never another key's."""
        self.set(profile.name, value)
        self.bind(profile.name, profile_origins(profile))

    def delete(self, name: str) -> bool:
        """Delete the key and its origins; False when there was no key to delete."""
        from keyring.errors import PasswordDeleteError

        self._delete_origins(name)
        if self.get(name) is None:  # backends disagree on how they report a missing entry
            return False
        try:
            self._call("delete_password", name)
        except PasswordDeleteError:
            return False
        remember(self.environ, name, False)
        return True

    def _key_and_origins(self, backend: Any, name: str) -> str | None:
        """The key of `name`. From the Secret Service its origins come in the same read, over the same D-Bus
        connection and session (keyring opens both, and exchanges a session key, for every get_password: a
        second lookup was a sixth of `key get`); from any other backend, they are asked for when needed."""
        self._read_origins.pop(name, None)
        if backend_name(backend) != "keyring.backends.SecretService.Keyring" or not hasattr(backend, "_query"):
            return backend.get_password(SERVICE, name)
        from contextlib import closing

        collection = backend.get_preferred_collection()  # as keyring's get_password: unlocked, or KeyringLocked
        with closing(collection.connection):
            found = next(iter(collection.search_items(backend._query(SERVICE, name))), None)
            if found is None:
                return None
            backend.unlock(found)
            key = found.get_secret().decode("utf-8")
            origins = next(iter(collection.search_items(backend._query(ORIGINS_SERVICE, name))), None)
            if origins is not None:
                backend.unlock(origins)
                origins.session = found.session  # one key exchange for both secrets
            self._read_origins[name] = None if origins is None else origins.get_secret().decode("utf-8")
        return key

    def origins(self, name: str) -> list[str] | None:
        """The origins the key of `name` was stored for; None for a key stored before they were recorded.
        An entry that is not a list of strings binds to nothing (so it matches no host)."""
        if name in self._read_origins:  # read with the key, a moment ago (the Secret Service)
            text = self._read_origins.pop(name)
        else:
            text = self._call("get_password", name, service=ORIGINS_SERVICE)
        if text is None:
            return None
        try:
            found = json.loads(text)
        except ValueError:
            return []
        return [o for o in found if isinstance(o, str)] if isinstance(found, list) else []

    def bind(self, name: str, origins: Sequence[str]) -> None:
        self._read_origins.pop(name, None)
        self._call("set_password", name, json.dumps(sorted(set(origins))), service=ORIGINS_SERVICE)

    def _delete_origins(self, name: str) -> None:
        from keyring.errors import PasswordDeleteError

        if self._call("get_password", name, service=ORIGINS_SERVICE) is None:
            return
        with contextlib.suppress(PasswordDeleteError):  # gone in between: what was wanted
            self._call("delete_password", name, service=ORIGINS_SERVICE)


def missing(profile: Profile, label: str) -> KeyringProblem:
    return KeyringProblem(
        "missing",
        f"no key stored for profile {profile.name!r} in the {label}",
        hint=f"Store it with `agentcfg key set {profile.name}`"
        + (f", or give it for this shell only: {export_hint(profile)}." if profile.key_env else "."),
    )


def not_keyed(profile: Profile) -> AgentcfgError:
    return AgentcfgError(
        f"profile {profile.name!r} needs no key (it has no key_env)",
        hint="If its server checks a key, give the profile a key variable and store its key with "
        f"`agentcfg profile set {profile.name} key_env={profile.name.upper().replace('-', '_')}_API_KEY && "
        f"agentcfg key set {profile.name}`.",
    )


# -- a profile's key, from the keyring or the shell ----------------------------------------------------


class ResolvedKey(NamedTuple):
    """A profile's key and where it came from (not a dataclass: creating one is a hundredth of `key get`)."""

    value: str
    source: str  # "keyring" or "environment"
    note: str | None = None  # why the environment was used, when that is worth saying


def resolve(profile: Profile, environ: env.Environ, store: KeyStore | None = None) -> ResolvedKey | None:
    """A keyed profile's key: the keyring's entry, else a value already exported in its key_env.

    The keyring comes first, so a stale exported value never wins over a rotated key. A keyring key is
    handed out only for the origins it was stored for (check_binding). An exported variable is read only
    for a profile that may read it (reads_environment): a project's must be trusted, use a variable of its
    own (both decided when profiles are loaded) and have that variable approved for its hosts.
    """
    if not profile.key_env:
        return None
    value_exported = exported(profile, environ)
    store = store or KeyStore(environ, profile)
    try:
        value = store.get(profile.name)
        if value:
            check_binding(profile, store, environ)
    except KeyringProblem as problem:
        if value_exported and problem.kind in ("no-backend", "locked"):
            note = f"using {profile.key_env} from your environment ({problem.message})"
            return _exported(profile, value_exported, note)
        raise _unapproved(profile, environ, problem) from None
    if value:
        return ResolvedKey(value, "keyring")
    if value_exported:
        return _exported(profile, value_exported)
    raise _unapproved(profile, environ, missing(profile, store.label))


def reads_environment(profile: Profile, environ: env.Environ) -> bool:
    """Whether a keyed profile's key may be read from its key_env in the environment (by agentcfg, or by an agent
    it configures): a built-in's or yours always; a project's only once you approved that variable for the
    profile's hosts at `agentcfg trust` (its name is the project's choice: STRIPE_SECRET_KEY, OPENAI_API_KEY)."""
    if not profile.key_env:
        return False
    if not profile.source.startswith(PROJECT):
        return True
    from agentcfg import trust  # lazy: only for a project's profile (`key get` of yours never reads the store)

    return trust.approved(profile, environ)


def exported(profile: Profile, environ: env.Environ) -> str | None:
    """The key exported in the profile's key_env, when the profile may read it (reads_environment)."""
    value = environ.get(profile.key_env) if profile.key_env else None
    redact.register(value)  # masked in agentcfg's output either way
    return value if value and reads_environment(profile, environ) else None


def _unapproved(profile: Profile, environ: env.Environ, problem: KeyringProblem) -> KeyringProblem:
    """`problem` (no key found), saying that the project profile's variable was not read and how to approve it."""
    if problem.kind == "wrong-origin" or reads_environment(profile, environ) or not profile.key_env:
        return problem
    from agentcfg import trust  # lazy: only for a project's profile (`key get` of yours never reads the store)

    where = "is set in your environment but " if environ.get(profile.key_env) else ""
    own = (
        f"store the profile's own key with `agentcfg key set {profile.name}`"
        if problem.kind != "no-backend"
        else f"get a keyring to store its own key in (`agentcfg key set {profile.name}` lists the ways)"
    )
    return KeyringProblem(
        problem.kind,
        f"{problem.message}; {profile.key_env} {where}was not read: it is this project's choice of variable, and "
        "you have not approved it for this profile",
        hint=f"If {profile.key_env} holds the key for {trust.sent_to(profile)}, approve it: "
        f"`{trust.approve_command(profile)}`; or {own}.",
    )


def _exported(profile: Profile, value: str, note: str | None = None) -> ResolvedKey:
    """An exported key, refused when it could never be sent (httpx would raise UnicodeEncodeError)."""
    if reason := header_problem(value):
        raise KeyringProblem(
            "bad-value",
            f"the key for profile {profile.name!r} in {profile.key_env} (your environment) cannot be used: {reason}",
            hint=f"Export the key alone: {export_hint(profile)}, or store it: `agentcfg key set {profile.name}`.",
        )
    return ResolvedKey(value, "environment", note)


def legacy_bindable(profile: Profile, environ: env.Environ) -> bool:
    """Whether a key stored before origins were recorded may be bound on first use: only for a
    built-in profile or one in the user's own profiles directory, never a project's (or a draft's)."""
    if profile.source == BUILT_IN:
        return True
    return Path(profile.source).parent == profiles_dir(environ)


def _hosts(origins: Sequence[str]) -> str:
    return ", ".join(origins) if origins else "no host"


def check_binding(profile: Profile, store: KeyStore, environ: env.Environ) -> None:
    """Raise wrong-origin unless every origin of the profile now is one its stored key was stored for.
    A key stored before origins were recorded is bound here on first use when legacy_bindable."""
    now = profile_origins(profile)
    recorded = store.origins(profile.name)
    rebind = f"`agentcfg key bind {profile.name}`"
    if recorded is None:
        if legacy_bindable(profile, environ):
            store.bind(profile.name, now)
            return
        raise KeyringProblem(
            "wrong-origin",
            f"refusing to hand out the key stored for {profile.name!r}: it was stored before agentcfg recorded "
            f"the hosts a key is for, and {profile.name!r} is a project's profile ({_hosts(now)})",
            hint=f"If {_hosts(now)} should get that key, run {rebind}; otherwise store this profile's own "
            f"with `agentcfg key set {profile.name}`.",
        )
    if new := [o for o in now if o not in recorded]:
        raise KeyringProblem(
            "wrong-origin",
            f"refusing to hand out the key stored for {profile.name!r}: it was stored for {_hosts(recorded)}, "
            f"and the profile now points at {_hosts(new)}",
            hint=f"If {_hosts(new)} should get that key, run {rebind}; otherwise store the new host's key "
            f"with `agentcfg key set {profile.name}`.",
        )


def resolve_key(found: Profile, environ: dict[str, str]) -> ResolvedKey:
    """The key of a keyed profile (resolve) as `key get`, `exec`, `env`, `serve` and `route` take it: none stored
    or exported fails the same way in each, with Exit.NO_KEY, before anything runs."""
    try:
        resolved = resolve(found, environ)
    except KeyringProblem as problem:
        if problem.kind in ("missing", "no-backend"):  # neither stored nor exported, as switch's exit 4 means
            problem.exit_code = Exit.NO_KEY
        raise
    assert resolved is not None  # found has a key_env
    return resolved

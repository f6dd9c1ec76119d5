"""agentcfg.keystore: what a key may be, how keyring failures are told apart, where a key may go.

keyring's backend is chosen in-process with keyring.set_keyring(); the fixtures put the previous one
back, so no test reaches the machine's own keyring.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import ClassVar

import keyring
import keyring.core
import pytest
from keyring.backend import KeyringBackend
from keyring.backends import chainer, fail, null
from keyring.errors import PasswordDeleteError

from agentcfg import keystore, redact
from agentcfg.errors import AgentcfgError
from agentcfg.keystore import KeyringProblem, KeyStore
from agentcfg.profiles import Profile
from tests import fake_keyring
from tests.fake_keyring import MemoryKeyring

GW = Profile(
    name="gw",
    base_url="https://gw.example/v1",
    model="glm-4.6",
    key_env="GW_API_KEY",
    anthropic_base_url="https://anthropic.gw.example:8443/anthropic",
)
LOCAL = Profile(name="local", base_url="http://127.0.0.1:8000/v1", model="qwen3-coder", key_env="VLLM_API_KEY")
KEYLESS = Profile(name="free", base_url="http://127.0.0.1:8000/v1", model="qwen3-coder")
KEY = "sk-gw-0123456789abcdef"
HEADLESS = {"HOME": "/nonexistent-home"}
LINUX = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Secret Service classification (Linux)")


class PlaintextLikeKeyring(MemoryKeyring):
    priority = 0.5  # type: ignore[assignment]


class BoomKeyring(MemoryKeyring):
    def get_password(self, service: str, username: str) -> str | None:
        raise RuntimeError("boom sk-secret-value-123")


class NoKeyringRaising(MemoryKeyring):
    def get_password(self, service: str, username: str) -> str | None:
        from keyring.errors import NoKeyringError

        raise NoKeyringError("No recommended backend was available.")


class OneChain(chainer.ChainerBackend):
    backends: ClassVar[list[KeyringBackend]] = [MemoryKeyring({(keystore.SERVICE, "gw"): KEY})]  # type: ignore[assignment,misc]
    viable = False  # type: ignore[assignment]


class EmptyChain(chainer.ChainerBackend):
    backends: ClassVar[list[KeyringBackend]] = []  # type: ignore[assignment,misc]
    viable = False  # type: ignore[assignment]


@pytest.fixture(autouse=True, scope="module")
def _forget_test_backend_classes():
    yield
    # keyring registers every KeyringBackend subclass for its own discovery; take ours out again.
    KeyringBackend._classes -= {  # type: ignore[attr-defined]
        c
        for c in KeyringBackend._classes  # type: ignore[attr-defined]
        if c.__module__ in (__name__, fake_keyring.__name__)
    }


@pytest.fixture(autouse=True)
def no_keyringrc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """keyring looks for keyringrc.cfg under XDG_CONFIG_HOME: make that an empty directory."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.delenv("PYTHON_KEYRING_BACKEND", raising=False)
    monkeypatch.setattr(keystore, "_secret_service_reason", lambda: "not on this bus (test)")
    return tmp_path / "xdg-config" / "python_keyring"


@pytest.fixture
def use_backend():
    previous = keyring.core._keyring_backend

    def use(backend: KeyringBackend) -> KeyringBackend:
        keyring.set_keyring(backend)
        return backend

    yield use
    keyring.core._keyring_backend = previous


# --- check_value -------------------------------------------------------------------------------------


def test_check_value_accepts_a_normal_key():
    assert keystore.check_value(KEY) is None
    assert keystore.check_value("sk-ant-api03-AbC_dEf-123") is None
    assert keystore.check_value("bearer-token-without-space") is None


def test_check_value_refuses_an_empty_key():
    assert keystore.check_value("") == "the key is empty"


@pytest.mark.parametrize(
    "value", ["sk-abc ", " sk-abc", "sk-abc\n", "sk-\tabc", "sk-ab\ncd", "sk ab", "sk-abc\r\n", "sk\u00a0abc"]
)
def test_check_value_refuses_whitespace(value):
    reason = keystore.check_value(value)
    assert reason is not None and "whitespace" in reason


@pytest.mark.parametrize("value", ["'sk-abc'", '"sk-abc"', "`sk-abc`", "sk-a'bc", 'sk-abc"', "sk`abc"])
def test_check_value_refuses_quotes(value):
    reason = keystore.check_value(value)
    assert reason is not None and "quotes" in reason


@pytest.mark.parametrize("value", ["Bearer sk-abc", "bearer sk-abc", "BEARER sk-abc", "bEaReR sk-abc"])
def test_check_value_refuses_a_bearer_prefix_in_any_case(value):
    reason = keystore.check_value(value)
    assert reason is not None and "Bearer" in reason and "prefix" in reason


# --- unlock_problem and ways_out ---------------------------------------------------------------------


def test_locked_on_linux_without_a_display():
    problem = keystore.unlock_problem("Secret Service", "Failed to unlock the collection!", {}, platform="linux")
    assert problem.kind == "locked"
    assert "no DISPLAY or WAYLAND_DISPLAY" in problem.message
    assert "gnome-keyring-daemon" in problem.hint and "--unlock" in problem.hint
    assert "Secret Service" in problem.message


@pytest.mark.parametrize("variable", ["DISPLAY", "WAYLAND_DISPLAY"])
def test_denied_on_linux_with_a_display(variable):
    environ = {variable: ":0" if variable == "DISPLAY" else "wayland-0"}
    problem = keystore.unlock_problem("Secret Service", "Failed to unlock the collection!", environ, platform="linux")
    assert problem.kind == "denied"
    assert "denied" in problem.message
    assert "again" in problem.hint


def test_an_empty_display_counts_as_none():
    problem = keystore.unlock_problem("Secret Service", "locked", {"DISPLAY": ""}, platform="linux")
    assert problem.kind == "locked"


@pytest.mark.parametrize(
    ("detail", "kind"),
    [
        ("Can't get password from keychain: (-25308, 'Unknown Error')", "locked"),
        ("User interaction is not allowed.", "locked"),
        ("Can't get password from keychain: (-128, 'Unknown Error')", "denied"),
        ("the user canceled", "denied"),
    ],
)
def test_macos_details(detail, kind):
    problem = keystore.unlock_problem("macOS Keychain", detail, {}, platform="darwin")
    assert problem.kind == kind
    if kind == "locked":
        assert "gnome-keyring" not in problem.hint and "DISPLAY" not in problem.message


def test_a_cancel_is_denied_even_on_a_headless_linux():
    assert keystore.unlock_problem("Secret Service", "Prompt dismissed", {}, platform="linux").kind == "denied"


def test_windows_is_denied():
    problem = keystore.unlock_problem("Windows Credential Locker", "whatever", {}, platform="win32")
    assert problem.kind == "denied"


def test_ways_out_on_linux_names_every_way():
    text = keystore.ways_out(GW, platform="linux")
    assert "gnome-keyring" in text and "gnome-keyring-daemon --unlock" in text
    assert "PYTHON_KEYRING_BACKEND" in text
    assert "`agentcfg switch gw --store-key-in-files`" in text
    assert "`read -rs GW_API_KEY && export GW_API_KEY`" in text  # complete: it asks for the key, unechoed


@pytest.mark.parametrize("platform", ["darwin", "win32"])
def test_ways_out_elsewhere_has_no_gnome_keyring(platform):
    text = keystore.ways_out(GW, platform=platform)
    assert "gnome-keyring" not in text
    assert "PYTHON_KEYRING_BACKEND" in text
    assert "--store-key-in-files" in text and "agentcfg switch gw" in text
    assert "GW_API_KEY" in text


def test_ways_out_without_a_profile_says_it_in_words_without_placeholders():
    text = keystore.ways_out(None, platform="darwin")
    assert "VARIABLE column of `agentcfg key list`" in text and "`--store-key-in-files`" in text
    assert "VAR=" not in text and "PROFILE" not in text and "<key>" not in text


# --- where a key may go ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "https://gw.example/v1/models",
        "https://gw.example:443/v1/chat/completions",
        "HTTPS://GW.EXAMPLE/v1",
        "https://anthropic.gw.example:8443/anthropic/v1/messages",
    ],
)
def test_key_allowed_on_the_profiles_own_hosts(url):
    assert keystore.key_allowed(GW, url)
    assert keystore.auth_headers(GW, url, KEY) == {"Authorization": f"Bearer {KEY}"}


def test_default_http_port_equals_the_explicit_one():
    plain = Profile(name="p", base_url="http://gw.example/v1", model="m", key_env="K")
    assert keystore.key_allowed(plain, "http://gw.example:80/v1/models")
    explicit = Profile(name="p", base_url="http://gw.example:80/v1", model="m", key_env="K")
    assert keystore.key_allowed(explicit, "http://gw.example/v1/models")


@pytest.mark.parametrize(
    "url",
    [
        "https://evil.example/v1/models",  # another host
        "https://gw.example.evil.example/v1",  # a host that merely starts like it
        "https://gw.example:8443/v1",  # another port (8443 is the Anthropic host's, not this host's)
        "http://gw.example/v1",  # another scheme
        "https://anthropic.gw.example/anthropic",  # the Anthropic host on its default port
        "https://sub.gw.example/v1",
    ],
)
def test_key_refused_elsewhere_without_showing_it(url):
    assert not keystore.key_allowed(GW, url)
    with pytest.raises(AgentcfgError) as caught:
        keystore.auth_headers(GW, url, KEY)
    assert KEY not in str(caught.value)
    assert "refusing to send the key of profile 'gw'" in str(caught.value)


@pytest.mark.parametrize(
    "url",
    ["http://localhost:8000/v1", "http://127.0.0.1:8000/v1/models", "http://[::1]:8000/v1", "http://127.0.0.2:8000"],
)
def test_loopback_names_are_one_host(url):
    assert keystore.key_allowed(LOCAL, url)
    v6 = Profile(name="v6", base_url="http://[::1]:8000/v1", model="m", key_env="K")
    assert keystore.key_allowed(v6, url)


def test_loopback_still_needs_the_same_port_and_scheme():
    assert not keystore.key_allowed(LOCAL, "http://localhost:8001/v1")
    assert not keystore.key_allowed(LOCAL, "https://127.0.0.1:8000/v1")


def test_a_dns_name_starting_with_127_is_not_loopback():
    assert not keystore.key_allowed(LOCAL, "http://127.0.0.1.evil.example:8000/v1")


def test_no_key_means_no_header_even_for_another_host():
    assert keystore.auth_headers(GW, "https://evil.example/", "") == {}
    assert keystore.auth_headers(GW, "https://evil.example/", None) == {}
    assert keystore.auth_headers(GW, "https://gw.example/v1", None) == {}


# --- KeyStore ----------------------------------------------------------------------------------------


def test_get_set_delete(use_backend, known_secrets):
    backend = use_backend(MemoryKeyring())
    store = KeyStore(HEADLESS, GW)
    assert store.get("gw") is None
    store.set("gw", KEY)
    assert backend.entries == {("agentcfg", "gw"): KEY}
    assert KEY in known_secrets  # registered before it is stored: no later output shows it
    assert store.get("gw") == KEY
    assert store.delete("gw") is True
    assert backend.entries == {}
    assert store.delete("gw") is False
    assert backend.calls[-1] == "get"  # nothing to delete: delete_password was not called


def test_get_registers_the_value(use_backend, known_secrets):
    use_backend(MemoryKeyring({("agentcfg", "gw"): "sk-from-the-keyring-42"}))
    assert KeyStore(HEADLESS).get("gw") == "sk-from-the-keyring-42"
    assert "sk-from-the-keyring-42" in known_secrets


def test_delete_that_the_backend_reports_missing_returns_false(use_backend):
    class Flaky(MemoryKeyring):
        def delete_password(self, service: str, username: str) -> None:
            raise PasswordDeleteError("gone already")

    use_backend(Flaky({("agentcfg", "gw"): KEY}))
    assert KeyStore(HEADLESS).delete("gw") is False


def test_the_backend_is_opened_once(use_backend):
    use_backend(MemoryKeyring())
    store = KeyStore(HEADLESS)
    first = store.backend
    keyring.set_keyring(MemoryKeyring())
    assert store.backend is first


@LINUX
def test_locked_keyring_headless_is_locked(use_backend):
    use_backend(fake_keyring.LockedKeyring())
    with pytest.raises(KeyringProblem) as caught:
        KeyStore(HEADLESS).get("gw")
    assert caught.value.kind == "locked"
    assert "gnome-keyring-daemon" in caught.value.hint


@LINUX
def test_locked_keyring_with_a_display_is_denied(use_backend):
    use_backend(fake_keyring.LockedKeyring())
    with pytest.raises(KeyringProblem) as caught:
        KeyStore({"DISPLAY": ":0"}).set("gw", KEY)
    assert caught.value.kind == "denied"


def test_keychain_deny_is_denied(use_backend):
    use_backend(fake_keyring.KeychainDeniedKeyring())
    with pytest.raises(KeyringProblem) as caught:
        KeyStore(HEADLESS).get("gw")
    assert caught.value.kind == "denied"


def test_an_unexpected_error_is_failed_and_scrubbed(use_backend):
    redact.register("sk-secret-value-123")
    use_backend(BoomKeyring())
    with pytest.raises(KeyringProblem) as caught:
        KeyStore(HEADLESS).get("gw")
    problem = caught.value
    assert problem.kind == "failed"
    assert "sk-secret-value-123" not in str(problem) and "sk-secret-value-123" not in problem.message
    assert "RuntimeError: boom ****" in problem.message
    assert "BoomKeyring" in problem.message  # the backend's name, as no label is known for it


def test_no_keyring_error_from_the_backend_is_no_backend(use_backend):
    use_backend(NoKeyringRaising())
    with pytest.raises(KeyringProblem) as caught:
        KeyStore(HEADLESS, GW).get("gw")
    assert caught.value.kind == "no-backend"
    assert "--store-key-in-files" in caught.value.hint


@pytest.mark.parametrize("backend", [fail.Keyring(), null.Keyring(), EmptyChain()], ids=["fail", "null", "chain"])
def test_keyrings_fallbacks_are_no_backend(use_backend, backend):
    use_backend(backend)
    store = KeyStore(HEADLESS, GW)
    with pytest.raises(KeyringProblem) as caught:
        store.get("gw")
    assert caught.value.kind == "no-backend"
    assert "Secret Service: not on this bus (test)" in caught.value.message
    assert "PYTHON_KEYRING_BACKEND" in caught.value.hint and "agentcfg switch gw" in caught.value.hint


def test_fail_keyring_is_named_in_the_message(use_backend):
    use_backend(fail.Keyring())
    with pytest.raises(KeyringProblem) as caught:
        KeyStore(HEADLESS).get("gw")
    assert "no backend (keyring's fail.Keyring)" in caught.value.message


def test_a_chain_uses_its_first_backend(use_backend):
    use_backend(OneChain())
    assert KeyStore(HEADLESS).get("gw") == KEY


def test_a_backend_keyring_does_not_recommend_is_refused(use_backend):
    use_backend(PlaintextLikeKeyring({("agentcfg", "gw"): KEY}))
    with pytest.raises(KeyringProblem) as caught:
        KeyStore(HEADLESS, GW).get("gw")
    assert caught.value.kind == "no-backend"
    name = f"{__name__}.PlaintextLikeKeyring"
    assert name in caught.value.message
    assert f"export PYTHON_KEYRING_BACKEND={name}" in caught.value.hint


def test_a_backend_keyring_does_not_recommend_is_used_when_chosen(use_backend):
    use_backend(PlaintextLikeKeyring({("agentcfg", "gw"): KEY}))
    environ = {**HEADLESS, "PYTHON_KEYRING_BACKEND": f"{__name__}.PlaintextLikeKeyring"}
    assert KeyStore(environ).get("gw") == KEY


def test_a_backend_keyring_does_not_recommend_is_used_when_named_in_keyringrc(use_backend, no_keyringrc):
    use_backend(PlaintextLikeKeyring({("agentcfg", "gw"): KEY}))
    no_keyringrc.mkdir(parents=True)
    (no_keyringrc / "keyringrc.cfg").write_text(f"[backend]\ndefault-keyring={__name__}.PlaintextLikeKeyring\n")
    assert KeyStore(HEADLESS).get("gw") == KEY


def test_an_unusable_chosen_backend_is_no_backend(use_backend, monkeypatch):
    def broken():
        raise ValueError("no module named keyrings.nothere")

    monkeypatch.setattr(keyring, "get_keyring", broken)
    with pytest.raises(KeyringProblem) as caught:
        KeyStore(HEADLESS, GW).get("gw")
    assert caught.value.kind == "no-backend"
    assert "ValueError: no module named keyrings.nothere" in caught.value.message


def _fake(module: str, qualname: str, **attributes):
    cls = type(qualname.rsplit(".", 1)[-1], (), attributes)
    cls.__module__, cls.__qualname__ = module, qualname
    return cls()


def test_backend_label():
    secret_service = _fake("keyring.backends.SecretService", "Keyring")
    kwallet = _fake("keyring.backends.kwallet", "DBusKeyring")
    other = _fake("keyrings.cryptfile.cryptfile", "CryptFileKeyring")
    assert keystore.backend_label(secret_service) == "Secret Service"
    assert keystore.backend_label(other) == "keyrings.cryptfile.cryptfile.CryptFileKeyring"
    chain = _fake("keyring.backends.chainer", "ChainerBackend", backends=[secret_service, kwallet, other])
    assert keystore.backend_label(chain) == "Secret Service + KWallet + keyrings.cryptfile.cryptfile.CryptFileKeyring"
    empty = _fake("keyring.backends.chainer", "ChainerBackend", backends=[])
    assert keystore.backend_label(empty) == "no backend (keyring's fail.Keyring)"
    assert keystore.backend_label(fail.Keyring()) == "no backend (keyring's fail.Keyring)"


# --- resolve -----------------------------------------------------------------------------------------


def test_resolve_keyless_is_none(use_backend):
    backend = use_backend(MemoryKeyring())
    assert keystore.resolve(KEYLESS, {"HOME": "/x"}) is None
    assert backend.calls == []


def test_resolve_prefers_the_keyring_to_the_environment(use_backend, known_secrets):
    use_backend(MemoryKeyring({("agentcfg", "gw"): KEY}))
    resolved = keystore.resolve(GW, {"GW_API_KEY": "sk-stale-exported-value"})
    assert resolved == keystore.ResolvedKey(KEY, "keyring")
    assert "sk-stale-exported-value" in known_secrets


def test_resolve_uses_the_environment_when_the_entry_is_missing(use_backend):
    use_backend(MemoryKeyring())
    resolved = keystore.resolve(GW, {"GW_API_KEY": "sk-exported-value"})
    assert resolved == keystore.ResolvedKey("sk-exported-value", "environment", None)


def test_resolve_uses_the_environment_with_a_note_without_a_backend(use_backend):
    use_backend(fail.Keyring())
    resolved = keystore.resolve(GW, {"GW_API_KEY": "sk-exported-value"})
    assert resolved is not None
    assert (resolved.value, resolved.source) == ("sk-exported-value", "environment")
    assert resolved.note is not None
    assert resolved.note.startswith("using GW_API_KEY from your environment (no usable keyring")


@LINUX
def test_resolve_uses_the_environment_when_locked(use_backend):
    use_backend(fake_keyring.LockedKeyring())
    resolved = keystore.resolve(GW, {"GW_API_KEY": "sk-exported-value"})
    assert resolved is not None and resolved.source == "environment"
    assert "locked" in resolved.note


def test_resolve_missing_everywhere(use_backend):
    use_backend(MemoryKeyring())
    with pytest.raises(KeyringProblem) as caught:
        keystore.resolve(GW, {"GW_API_KEY": ""})
    assert caught.value.kind == "missing"
    assert "`agentcfg key set gw`" in caught.value.hint
    assert "`read -rs GW_API_KEY && export GW_API_KEY`" in caught.value.hint
    assert "'gw'" in caught.value.message


@pytest.mark.parametrize(
    ("backend", "kind"), [(BoomKeyring(), "failed"), (fake_keyring.KeychainDeniedKeyring(), "denied")]
)
def test_resolve_raises_failed_and_denied_even_with_an_exported_key(use_backend, backend, kind):
    use_backend(backend)
    with pytest.raises(KeyringProblem) as caught:
        keystore.resolve(GW, {"GW_API_KEY": "sk-exported-value"})
    assert caught.value.kind == kind


def test_resolve_uses_the_store_it_is_given(use_backend):
    use_backend(fail.Keyring())  # would be no-backend if resolve opened its own

    class Given(KeyStore):
        def get(self, name: str) -> str | None:
            return f"sk-given-for-{name}"

        def origins(self, name: str) -> list[str] | None:
            return keystore.profile_origins(GW)

    resolved = keystore.resolve(GW, {}, Given({}))
    assert resolved == keystore.ResolvedKey("sk-given-for-gw", "keyring")


# --- origins: a stored key goes only to the hosts it was stored for ----------------------------------------

GW_ORIGINS = ["https://anthropic.gw.example:8443", "https://gw.example:443"]


def test_profile_origins_are_scheme_host_port_with_loopback_unified():
    assert keystore.profile_origins(GW) == GW_ORIGINS
    assert keystore.profile_origins(LOCAL) == ["http://loopback:8000"]
    assert keystore.origin_text("http://[::1]:8000/v1") == "http://loopback:8000"
    assert keystore.origin_text("https://[2001:db8::1]/v1") == "https://[2001:db8::1]:443"


def test_store_records_the_origins_beside_the_key(use_backend):
    backend = use_backend(MemoryKeyring())
    KeyStore(HEADLESS, GW).store(GW, KEY)
    assert backend.entries == {
        ("agentcfg", "gw"): KEY,
        ("agentcfg-origins", "gw"): '["' + '", "'.join(GW_ORIGINS) + '"]',
    }
    assert KeyStore(HEADLESS).origins("gw") == GW_ORIGINS
    assert KeyStore(HEADLESS).delete("gw") is True
    assert backend.entries == {}


def test_resolve_refuses_a_key_stored_for_other_hosts(use_backend, known_secrets):
    use_backend(MemoryKeyring({("agentcfg", "gw"): KEY, ("agentcfg-origins", "gw"): '["https://gw.example:443"]'}))
    with pytest.raises(KeyringProblem) as caught:
        keystore.resolve(GW, {"GW_API_KEY": "sk-exported-value"})  # an exported key does not win either
    assert caught.value.kind == "wrong-origin"
    assert "stored for https://gw.example:443" in caught.value.message
    assert "now points at https://anthropic.gw.example:8443" in caught.value.message
    assert "`agentcfg key bind gw`" in caught.value.hint and "`agentcfg key set gw`" in caught.value.hint
    assert KEY not in str(caught.value) + str(caught.value.hint)


@pytest.mark.parametrize("entry", ["not json", "{}", "[1, 2]", "[]"])
def test_a_malformed_origins_entry_binds_to_nothing(use_backend, entry):
    use_backend(MemoryKeyring({("agentcfg", "gw"): KEY, ("agentcfg-origins", "gw"): entry}))
    with pytest.raises(KeyringProblem) as caught:
        keystore.resolve(GW, {})
    assert caught.value.kind == "wrong-origin"


def test_resolve_accepts_a_profile_on_fewer_of_its_hosts(use_backend):
    use_backend(
        MemoryKeyring({("agentcfg", "gw"): KEY, ("agentcfg-origins", "gw"): '["' + '", "'.join(GW_ORIGINS) + '"]'})
    )
    fewer = Profile(name="gw", base_url="https://gw.example/v2", model="m", key_env="GW_API_KEY")
    assert keystore.resolve(fewer, {}) == keystore.ResolvedKey(KEY, "keyring")


def test_a_legacy_key_is_bound_on_first_use_for_a_built_in_or_user_profile(use_backend, tmp_path):
    environ = {"HOME": str(tmp_path), "AGENTCFG_HOME": str(tmp_path / "cfg")}
    user = Profile(name="mine", base_url="http://127.0.0.1:8000/v1", model="m", key_env="MINE_KEY")
    user = Profile(**{**user.__dict__, "source": str(tmp_path / "cfg" / "profiles" / "mine.toml")})
    backend = use_backend(MemoryKeyring({("agentcfg", "gw"): KEY, ("agentcfg", "mine"): KEY}))
    assert keystore.resolve(GW, environ) == keystore.ResolvedKey(KEY, "keyring")
    assert keystore.resolve(user, environ) == keystore.ResolvedKey(KEY, "keyring")
    assert backend.entries[("agentcfg-origins", "mine")] == '["http://loopback:8000"]'
    assert ("agentcfg-origins", "gw") in backend.entries


@pytest.mark.parametrize(
    "source", ["project:/repo/.agentcfg/profiles/gw.toml", "https://example.com/gw.toml", "/tmp/gw.toml"]
)
def test_a_legacy_key_is_refused_for_any_other_profile(use_backend, source):
    backend = use_backend(MemoryKeyring({("agentcfg", "gw"): KEY}))
    other = Profile(**{**GW.__dict__, "source": source})
    with pytest.raises(KeyringProblem) as caught:
        keystore.resolve(other, HEADLESS)
    assert caught.value.kind == "wrong-origin" and "`agentcfg key bind gw`" in caught.value.hint
    assert ("agentcfg-origins", "gw") not in backend.entries  # not bound behind the user's back


@pytest.mark.parametrize(
    ("value", "words"),
    [("sk-ключ", "non-ASCII character at position 4"), ("sk-\x00x", "U+0000"), ("sk-\x1bx", "U+001B")],
)
def test_check_value_refuses_non_ascii_and_control_characters(value, words):
    assert words in (keystore.check_value(value) or "")


def test_an_exported_key_that_cannot_be_a_header_is_refused_naming_the_variable(use_backend):
    use_backend(MemoryKeyring())
    with pytest.raises(KeyringProblem) as caught:
        keystore.resolve(GW, {"GW_API_KEY": "sk-ключ"})
    assert caught.value.kind == "bad-value" and "GW_API_KEY" in caught.value.message


def test_auth_headers_refuses_a_key_that_cannot_be_a_header():
    with pytest.raises(AgentcfgError, match="non-ASCII"):
        keystore.auth_headers(GW, "https://gw.example/v1/models", "sk-ключ")


def test_keyrings_own_scan_never_finds_the_tests_backends() -> None:
    """Imported into a test process, they must not become its keyring unasked (see tests/fake_keyring.py)."""
    found = {type(b).__module__ for b in keyring.backend.get_all_keyring()}
    assert fake_keyring.__name__ not in found and __name__ not in found, found

"""agentcfg.cli.hotpath: `key get PROFILE` and `doctor` answered without click, the same as click would answer.

Each case runs the real console script twice: in its plain form (the hot path) and in a form only click
parses (`--` before PROFILE, or at the end), and the two must print the same bytes and exit the same way.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from agentcfg.cli.hotpath import doctor_request, key_get_request
from tests.conftest import REPO, Home, keyring_env

KEY = "sk-hot-0123456789abcdef"


def _probe(home: Home, code: str, **extra_env: str) -> subprocess.CompletedProcess[str]:
    """`python -c code` in `home`'s environment, with this checkout on the path: a probe of what a run loads."""
    env = {**home.env, "PYTHONPATH": str(REPO), **extra_env}
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)


@pytest.mark.parametrize(
    ("words", "request_"),
    [
        (["key", "get", "taotoken"], ("taotoken", False)),
        (["key", "get", "taotoken", "--json"], ("taotoken", True)),
        (["key", "get", "--json", "taotoken"], ("taotoken", True)),
        (["key", "get", ""], ("", False)),  # click takes it too, and refuses it as a profile name
        (["key", "get"], None),  # click says what is missing
        (["key", "get", "--help"], None),
        (["key", "get", "-h", "taotoken"], None),
        (["key", "get", "a", "b"], None),
        (["key", "get", "--", "taotoken"], None),
        (["key", "get", "--json", "--json", "taotoken"], None),
        (["key", "get", "--jsn", "taotoken"], None),
        (["--json", "key", "get", "taotoken"], None),
        (["key", "set", "taotoken"], None),
        (["keys", "get", "taotoken"], None),
        ([], None),
    ],
)
def test_only_the_plain_form_takes_the_hot_path(words: list[str], request_: tuple[str, bool] | None) -> None:
    assert key_get_request(words) == request_


@pytest.fixture
def keyed(home: Home, tmp_path: Path) -> Home:
    home.env.update(keyring_env(tmp_path / "keyring.json"))
    home.run("key", "set", "taotoken", stdin_text=KEY + "\n")
    home.write(".config/agentcfg/profiles/mine.toml", 'base_url = "http://127.0.0.1:8001/v1"\nmodel = "m"\n')
    nokey = 'base_url = "https://gw.example/v1"\nmodel = "m"\nkey_env = "NOKEY_API_KEY"\n'
    home.write(".config/agentcfg/profiles/nokey.toml", nokey)
    return home


def _click_form(args: list[str]) -> list[str]:
    """The same request in a form the hot path leaves to click: PROFILE after `--`."""
    name = next(a for a in args[2:] if a != "--json")
    return [*[a for a in args if a != name], "--", name]


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["key", "get", "taotoken"], 0),
        (["key", "get", "taotoken", "--json"], 0),
        (["key", "get", "--json", "nope"], 2),  # an unknown profile
        (["key", "get", "nope"], 2),
        (["key", "get", "mine"], 2),  # a profile without a key
        (["key", "get", "nokey"], 4),  # no key stored or exported
        (["key", "get", "nokey", "--json"], 4),
        (["key", "get", "Bad/Name"], 2),
    ],
)
def test_the_hot_path_answers_as_click_does(keyed: Home, args: list[str], code: int) -> None:
    fast = keyed.run(*args, check=None)
    slow = keyed.run(*_click_form(args), check=None)
    assert (fast.returncode, fast.stdout, fast.stderr) == (slow.returncode, slow.stdout, slow.stderr)
    assert fast.returncode == code
    if code == 0 and "--json" not in args:
        assert fast.stdout == KEY + "\n"
    if "--json" in args:
        document = json.loads(fast.stdout)
        assert KEY not in fast.stdout
        assert ("exit" in document) == (code != 0)


def test_an_exported_key_and_a_stored_one_behave_as_before(keyed: Home) -> None:
    """The keyring's key wins over an exported one, and the note about the other key is not printed."""
    fast = keyed.run("key", "get", "taotoken", TAOTOKEN_API_KEY="sk-other-0123456789abcdef")
    assert fast.stdout == KEY + "\n"
    exported = keyed.run("key", "get", "nokey", NOKEY_API_KEY="sk-exported-0123456789")
    assert exported.stdout == "sk-exported-0123456789\n"


# What the hot path must not import: the CLI framework, the network stack, the schema validator, and what
# keyring imports but never uses here (agentcfg.deferred; a stand-in is not a load).
_PROBE = r"""
import json, sys
from agentcfg import cli, deferred
try:
    cli.main(["key", "get", "taotoken"])
except SystemExit as exc:
    assert not exc.code, exc.code
from agentcfg import keystore
from agentcfg.cli import hotpath
never = ("click", "httpx", "jsonschema", "ssl", "email", "http.client", "hashlib", "keyring.backends.chainer",
         "keyring.backends.null")  # the last two: keystore asks isinstance only of classes loaded (keyring_memo.loaded)
loaded = [m for m in never if m in sys.modules]
stand_in = deferred._Deferred
unused = (*keystore._UNUSED_BY_KEYRING, *hotpath.UNUSED)
real = [m for m in unused if m in sys.modules and not isinstance(sys.modules[m], stand_in)]
print(json.dumps({"loaded": loaded, "real": real}), file=sys.stderr)
"""


def test_key_get_imports_only_what_the_answer_needs(keyed: Home) -> None:
    done = _probe(keyed, _PROBE)
    assert done.returncode == 0, done.stderr
    assert done.stdout == KEY + "\n"
    assert json.loads(done.stderr.splitlines()[-1]) == {"loaded": [], "real": []}


def test_a_profile_read_before_is_answered_without_the_toml_reader(keyed: Home) -> None:
    """tomli (and the datetime it imports) only for a profile text not parsed before (profile_parse._ParsedCache)."""
    probe = _PROBE.replace('"hashlib",', '"hashlib", "tomli", "tomllib", "datetime",')
    runs = [_probe(keyed, probe) for _ in range(2)]
    assert [done.stdout for done in runs] == [KEY + "\n"] * 2
    assert json.loads(runs[1].stderr.splitlines()[-1]) == {"loaded": [], "real": []}


def test_a_users_profile_read_before_is_answered_without_hashlib_or_the_toml_reader(keyed: Home) -> None:
    """Yours: validated once (profile_parse._ValidatedCache, whose digest is not hashlib's: OpenSSL's load was
    a twentieth of `key get`), parsed once (_ParsedCache)."""
    probe = _PROBE.replace('"hashlib",', '"hashlib", "tomli", "tomllib", "datetime",')
    probe = probe.replace('"taotoken"]', '"nokey"]')
    runs = [_probe(keyed, probe, NOKEY_API_KEY="sk-exported-0123456789") for _ in range(2)]
    assert [done.stdout for done in runs] == ["sk-exported-0123456789\n"] * 2
    assert json.loads(runs[1].stderr.splitlines()[-1]) == {"loaded": [], "real": []}


# Each dataclass costs `key get` half a millisecond to create (dataclasses compiles its methods on every start):
# the small records on the path are NamedTuples; Profile is a dataclass (dataclasses.replace is used on it).
_DATACLASSES = r"""
import dataclasses, json, sys
from agentcfg import cli
try:
    cli.main(["key", "get", "taotoken"])
except SystemExit as exc:
    assert not exc.code, exc.code
made = sorted(f"{name}.{key}" for name, module in list(sys.modules.items()) if name.startswith("agentcfg")
              for key, value in vars(module).items() if isinstance(value, type) and dataclasses.is_dataclass(value)
              and value.__module__ == name)
print(json.dumps(made), file=sys.stderr)
"""


def test_key_get_creates_one_dataclass(keyed: Home) -> None:
    done = _probe(keyed, _DATACLASSES)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stderr.splitlines()[-1]) == ["agentcfg.profile_model.Profile"]


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_ctrl_c_is_shown_as_click_shows_it(keyed: Home, json_flag: list[str]) -> None:
    interrupted = {"PYTHON_KEYRING_BACKEND": "tests.fake_keyring.InterruptedKeyring"}
    fast = keyed.run("key", "get", "taotoken", *json_flag, check=None, **interrupted)
    slow = keyed.run("key", "get", *json_flag, "--", "taotoken", check=None, **interrupted)
    assert (fast.returncode, fast.stdout, fast.stderr) == (slow.returncode, slow.stdout, slow.stderr)
    assert fast.returncode == 130 and fast.stderr == "\nAborted.\n"


@pytest.mark.parametrize("args", [["key", "get", "taotoken"], ["key", "get", "--json", "taotoken"]])
def test_a_reader_that_goes_away_is_exit_1_and_silent_as_with_click(keyed: Home, args: list[str]) -> None:
    """`agentcfg key get P | head -c 0`: no traceback, no internal error, whichever path answers."""
    for words in (args, _click_form(args)):
        script = f'"{sys.executable}" -c "import sys; from agentcfg.cli import main; main()" "$@" | true'
        done = subprocess.run(
            ["bash", "-o", "pipefail", "-c", script, "agentcfg", *words],  # `true` is gone long before it writes
            env={**keyed.env, "PYTHONPATH": str(REPO)},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert (done.returncode, done.stderr) == (1, ""), words


# -- doctor ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("words", "request_"),
    [
        (["doctor"], (None, (), False, 6.0, False)),
        (["doctor", "--offline"], (None, (), False, 6.0, True)),
        (["doctor", "--json", "mine", "--offline"], ("mine", (), True, 6.0, True)),
        (["doctor", "--agent", "codex", "--agent=claude"], (None, ("codex", "claude"), False, 6.0, False)),
        (["doctor", "--timeout", "2.5", "--timeout=3"], (None, (), False, 3.0, False)),  # the last, as click
        (["doctor", "--offline", "--offline", "--json", "--json"], (None, (), True, 6.0, True)),
        (["doctor", "--timeout", "0.1"], (None, (), False, 0.1, False)),
        (["doctor", "--timeout", "600"], (None, (), False, 600.0, False)),
        (["doctor", "--timeout", "0.09"], None),  # out of range: click says what the range is
        (["doctor", "--timeout", "601"], None),
        (["doctor", "--timeout", "nan"], None),
        (["doctor", "--timeout", "inf"], None),
        (["doctor", "--timeout", "soon"], None),
        (["doctor", "--timeout"], None),  # no value
        (["doctor", "--timeout", "--offline"], None),
        (["doctor", "--agent", "nope"], None),  # not an agent: click lists them
        (["doctor", "--agent", "Codex"], None),
        (["doctor", "--agent="], None),
        (["doctor", "a", "b"], None),
        (["doctor", ""], None),
        (["doctor", "--"], None),
        (["doctor", "--help"], None),
        (["doctor", "-h"], None),
        (["doctor", "--offlin"], None),
        (["--json", "doctor"], None),
        (["doctors"], None),
    ],
)
def test_only_the_plain_forms_of_doctor_take_the_hot_path(
    words: list[str], request_: tuple[object, ...] | None
) -> None:
    assert doctor_request(words) == request_


@pytest.fixture
def switched(home: Home) -> Home:
    """Four agents on a profile whose server does not answer (127.0.0.1:9, the discard port)."""
    home.run("profile", "add", "bench", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--no-key")
    home.run("switch", "bench", *[w for a in ("codex", "qwen", "opencode", "claude") for w in ("--agent", a)])
    return home


def _elapsed_masked(text: str) -> str:
    return re.sub(r"\d+(\.\d+)? ?(s|ms)\b|\"elapsed_s\": [\d.]+", "N", text)


@pytest.mark.parametrize(
    "args",
    [
        ["doctor", "--offline"],
        ["doctor", "--offline", "--json"],
        ["doctor", "--offline", "--agent", "codex"],
        ["doctor", "bench", "--offline", "--json"],
        ["doctor", "nope", "--offline"],  # an unknown profile: 2
        ["doctor", "nope", "--json"],
        ["doctor", "--timeout", "1"],  # refused: each agent fails, 1
        ["doctor", "--timeout", "1", "--json", "--agent", "qwen"],
    ],
)
def test_doctor_on_the_hot_path_answers_as_click_does(switched: Home, args: list[str]) -> None:
    fast = switched.run(*args, check=None)
    slow = switched.run(*args, "--", check=None)  # `--`: a form only click parses
    assert (fast.returncode, _elapsed_masked(fast.stdout), fast.stderr) == (
        slow.returncode, _elapsed_masked(slow.stdout), slow.stderr,
    )  # fmt: skip
    assert fast.returncode == (2 if "nope" in args else 1 if "--timeout" in args else 0), fast.stderr


def test_doctor_on_the_hot_path_shows_progress_on_a_terminal_as_click_did(switched: Home) -> None:
    fast = switched.run_in_tty("doctor", "--timeout", "1", "--agent", "codex")
    slow = switched.run_in_tty("doctor", "--timeout", "1", "--agent", "codex", "--")
    assert fast[0] == slow[0] == 1
    assert "requests answered" in fast[1]
    assert _elapsed_masked(fast[1]) == _elapsed_masked(slow[1])


# What `doctor --offline` must not import: the CLI framework, the network stack, and what only another
# command or an online finding needs (inspect: dataclasses', for a class without a docstring).
_DOCTOR_PROBE = r"""
import json, sys
from agentcfg import cli, deferred
try:
    cli.main(["doctor", "--offline"])
except SystemExit as exc:
    assert not exc.code, exc.code
never = ("click", "httpx", "asyncio", "ssl", "jsonschema", "difflib", "signal", "hashlib", "inspect")
loaded = [m for m in never if m in sys.modules and not isinstance(sys.modules[m], deferred._Deferred)]
print(json.dumps(loaded), file=sys.stderr)
"""


def test_doctor_offline_imports_only_what_its_checks_need(switched: Home) -> None:
    done = _probe(switched, _DOCTOR_PROBE)
    assert done.returncode == 0, done.stderr
    assert "0 failed" in done.stdout
    assert json.loads(done.stderr.splitlines()[-1]) == []

"""agentcfg.shells: `agentcfg env` output survives each shell's eval unchanged, whatever the value."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from agentcfg import shells

TRICKY = [
    "plain-sk-0123456789",
    "with spaces  and   runs",
    "it's a 'single' quote",
    'a "double" quote',
    "$HOME and ${HOME} and $(id)",
    "back`tick` `id`",
    "back\\slash\\\\ and \\n and \\",
    "line one\nline two\n",
    "ünïcødé ✓ 日本語 🙂",
    "-leading-dash",
    "--",
    ";rm -rf /tmp/nothing-here; echo pwned",
    "&& | > < * ? [a] ~ # !",
    "'",
    '"',
    "\\",
    "\t tab \t",
    "mixed '\"`$\\ all",
    "",
]


# --- detect ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("environ", "shell"),
    [
        ({"SHELL": "/bin/zsh"}, "zsh"),
        ({"SHELL": "/usr/bin/fish"}, "fish"),
        ({"SHELL": "/bin/bash"}, "bash"),
        ({"SHELL": "/usr/local/bin/bash"}, "bash"),
        ({"SHELL": "/bin/tcsh"}, "bash"),
        ({"SHELL": "/bin/sh"}, "bash"),
        ({}, "bash"),
        ({"SHELL": ""}, "bash"),
        ({"SHELL": "", "PSModulePath": r"C:\Program Files\WindowsPowerShell\Modules"}, "powershell"),
        ({"PSModulePath": "/opt/microsoft/powershell/7/Modules"}, "powershell"),
        ({"SHELL": "/bin/zsh", "PSModulePath": "/opt/microsoft/powershell/7/Modules"}, "zsh"),
    ],
)
def test_detect(environ, shell):
    assert shells.detect(environ) == shell


@pytest.mark.parametrize("environ", [{"SHELL": "/usr/bin/pwsh"}, {"SHELL": "/usr/local/bin/pwsh", "PSModulePath": "x"}])
def test_detect_pwsh(environ):
    assert shells.detect(environ) == "powershell"


# --- assignments: exact text -------------------------------------------------------------------------

VARIABLES = {"OPENAI_BASE_URL": "https://gw.example/v1", "GW_API_KEY": "it's \\ a key"}


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_posix_assignments(shell):
    assert shells.assignments(VARIABLES, shell) == (
        "export OPENAI_BASE_URL=https://gw.example/v1\nexport GW_API_KEY='it'\"'\"'s \\ a key'\n"
    )


def test_fish_assignments():
    assert shells.assignments(VARIABLES, "fish") == (
        "set -gx OPENAI_BASE_URL 'https://gw.example/v1';\nset -gx GW_API_KEY 'it\\'s \\\\ a key';\n"
    )


def test_powershell_assignments():
    assert shells.assignments(VARIABLES, "powershell") == (
        "$env:OPENAI_BASE_URL = 'https://gw.example/v1'\n$env:GW_API_KEY = 'it''s \\ a key'\n"
    )


def test_no_variables_is_no_output():
    for shell in shells.SHELLS:
        assert shells.assignments({}, shell) == ""


def test_usage():
    assert shells.usage("bash", "agentcfg env gw") == 'eval "$(agentcfg env gw)"'
    assert shells.usage("zsh", "agentcfg env gw") == 'eval "$(agentcfg env gw)"'
    assert shells.usage("fish", "agentcfg env gw") == "agentcfg env gw | source"
    assert shells.usage("powershell", "agentcfg env gw") == "agentcfg env gw | Invoke-Expression"


# --- a real eval in bash and sh ----------------------------------------------------------------------


def _eval(shell: str, text: str, tmp_path: Path, variable: str = "VAR") -> str:
    script = tmp_path / "assignments.sh"
    script.write_bytes(text.encode("utf-8"))
    result = subprocess.run(
        [shell, "-c", f'eval "$(cat "$1")"; printf %s "${variable}"', "sh", str(script)],
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home"), "LC_ALL": "C.UTF-8"},
        capture_output=True,
        timeout=10,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == b""
    return result.stdout.decode("utf-8")


POSIX_SHELLS = [name for name in ("bash", "dash", "sh", "zsh") if shutil.which(name)]


@pytest.mark.skipif(not POSIX_SHELLS, reason="no POSIX shell")
@pytest.mark.parametrize("shell", POSIX_SHELLS)
def test_every_tricky_value_survives_eval(shell, tmp_path):
    for value in TRICKY:
        text = shells.assignments({"VAR": value}, "bash")
        assert _eval(shell, text, tmp_path) == value, (shell, value, text)
    assert not (tmp_path / "pwned").exists()


@pytest.mark.skipif(not POSIX_SHELLS, reason="no POSIX shell")
def test_several_variables_survive_one_eval(tmp_path):
    shell = POSIX_SHELLS[0]
    variables = {f"V{i}": value for i, value in enumerate(TRICKY)}
    text = shells.assignments(variables, "bash")
    assert text.count("export ") == len(TRICKY)
    for i, value in enumerate(TRICKY):
        assert _eval(shell, text, tmp_path, f"V{i}") == value


@pytest.mark.skipif(not POSIX_SHELLS, reason="no POSIX shell")
def test_eval_exports_to_child_processes(tmp_path):
    text = shells.assignments({"VAR": "sk-exported-$x"}, "bash")
    script = tmp_path / "a.sh"
    script.write_text(text)
    result = subprocess.run(
        [POSIX_SHELLS[0], "-c", 'eval "$(cat "$1")"; exec env', "sh", str(script)],
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=10,
    )
    assert "VAR=sk-exported-$x\n" in result.stdout


# --- fish and PowerShell, by their quoting rules ----------------------------------------------------


def _fish_unquote(word: str) -> str:
    """A fish single-quoted word: only \\\\ and \\' are escapes inside."""
    assert word[0] == "'" and word[-1] == "'"
    out, i, body = [], 0, word[1:-1]
    while i < len(body):
        char = body[i]
        if char == "\\" and i + 1 < len(body) and body[i + 1] in "\\'":
            out.append(body[i + 1])
            i += 2
            continue
        assert char != "'", f"unescaped quote in {word!r}"
        out.append(char)
        i += 1
    return "".join(out)


# PowerShell's tokenizer takes each of these as a single quote (and a doubled one as a literal one).
PS_SINGLE_QUOTES = "'\u2018\u2019\u201a\u201b"


def _powershell_unquote(word: str) -> str:
    assert word[0] == "'" and word[-1] == "'"
    out, i, body = [], 0, word[1:-1]
    while i < len(body):
        char = body[i]
        if char in PS_SINGLE_QUOTES:
            assert i + 1 < len(body) and body[i + 1] in PS_SINGLE_QUOTES, f"the string ends early in {word!r}"
            out.append(body[i + 1])
            i += 2
            continue
        out.append(char)
        i += 1
    return "".join(out)


@pytest.mark.parametrize("value", TRICKY)
def test_fish_quoting_round_trips(value):
    line = shells.assignments({"VAR": value}, "fish")
    prefix = "set -gx VAR "
    assert line.startswith(prefix) and line.endswith(";\n")
    assert _fish_unquote(line[len(prefix) : -2]) == value


@pytest.mark.parametrize("value", TRICKY)
def test_powershell_quoting_round_trips(value):
    line = shells.assignments({"VAR": value}, "powershell")
    prefix = "$env:VAR = "
    assert line.startswith(prefix) and line.endswith("\n")
    assert _powershell_unquote(line[len(prefix) : -1]) == value


@pytest.mark.parametrize(
    ("value", "fish", "powershell"),
    [
        ("it's", "'it\\'s'", "'it''s'"),
        ("a\\b", "'a\\\\b'", "'a\\b'"),
        ('$x `y` "z"', "'$x `y` \"z\"'", "'$x `y` \"z\"'"),
        ("", "''", "''"),
    ],
)
def test_fish_and_powershell_exact_quoting(value, fish, powershell):
    assert shells.assignments({"V": value}, "fish") == f"set -gx V {fish};\n"
    assert shells.assignments({"V": value}, "powershell") == f"$env:V = {powershell}\n"


@pytest.mark.parametrize("quote", ["\u2018", "\u2019", "\u201a", "\u201b"])
def test_powershell_quoting_survives_typographic_quotes(quote):
    value = f"it{quote}s; Remove-Item x"
    line = shells.assignments({"VAR": value}, "powershell")
    assert _powershell_unquote(line[len("$env:VAR = ") : -1]) == value

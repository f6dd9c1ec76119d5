"""agentcfg.cli.main, the console script's entry: what every command gets at its end."""

from __future__ import annotations

import gc
import json
import subprocess
import sys

import pytest

from tests.conftest import Home

_PROBE = r"""
import gc, json, sys
from agentcfg.cli import main
try:
    main()
except SystemExit:
    pass
finally:
    print(json.dumps(gc.get_freeze_count()), file=sys.stderr)
"""


@pytest.mark.parametrize("words", [["--version"], ["status"], ["status"]])  # the second status: replayed
def test_the_console_script_freezes_what_it_made_before_the_exit(home: Home, words: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *words], env=home.env, capture_output=True, text=True, timeout=60
    )
    assert json.loads(done.stderr.splitlines()[-1]) > 0, done.stderr


def test_a_call_in_process_freezes_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    from agentcfg.cli import main

    before = gc.get_freeze_count()
    main(["--version"])
    assert "agentcfg" in capsys.readouterr().out
    assert gc.get_freeze_count() == before


_GC = r"""
import gc, json, sys
import agentcfg.cli.hotpath as hotpath
seen = {}
real = hotpath.key_get
def key_get(*args):
    seen["key get"] = gc.isenabled()
    return real(*args)
hotpath.key_get = key_get
import click.core
invoke = click.core.Command.invoke
def command(self, ctx):
    seen.setdefault("click", gc.isenabled())
    return invoke(self, ctx)
click.core.Command.invoke = command
from agentcfg.cli import main
try:
    main()
except SystemExit:
    pass
print(json.dumps(seen), file=sys.stderr)
"""


def test_the_cycle_collector_is_off_for_key_get_and_on_for_a_click_command(keyring_file, home: Home) -> None:
    for words, expected in ((["key", "get", "local"], {"key get": False}), (["status"], {"click": True})):
        done = subprocess.run(
            [sys.executable, "-c", _GC, *words], env=home.env, capture_output=True, text=True, timeout=60
        )
        assert json.loads(done.stderr.splitlines()[-1]) == expected, done.stderr

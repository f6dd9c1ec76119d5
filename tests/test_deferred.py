"""agentcfg.deferred: a deferred module costs nothing until it is used, then works as if imported plainly.

Each case runs in a fresh interpreter, where the modules it defers have not been imported yet.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", "from agentcfg import deferred\n" + code],
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_import_binds_a_stand_in_and_the_first_attribute_loads_the_module() -> None:
    out = _run(
        "import sys\n"
        "deferred.defer('wave')\n"
        "import wave\n"
        "print(type(sys.modules['wave']).__name__, 'Wave_read' in vars(wave))\n"
        "print(wave.Error.__name__, type(sys.modules['wave']).__name__, sys.modules['wave'] is not wave)\n"
        "print(type(wave).__name__, wave.Wave_read is sys.modules['wave'].Wave_read)\n"
    )
    assert out.splitlines() == ["_Deferred False", "Error module True", "_Deferred True"]


@pytest.mark.parametrize("before", [True, False])
def test_what_is_set_through_a_stand_in_is_set_on_the_module(before: bool) -> None:
    """One module, not a copy: `tempfile.tempdir = X` (before the first use or after it) is what its own
    functions read, and what they set is what the stand-in shows."""
    out = _run(
        "import sys\n"
        "deferred.defer('tempfile')\n"
        "import tempfile\n"
        + ("" if before else "tempfile.gettempprefix()\n")
        + "tempfile.tempdir = '/agentcfg-test-dir'\n"
        "print(tempfile.gettempdir(), sys.modules['tempfile'].tempdir)\n"
        "tempfile.tempdir = None\n"
        "sys.modules['tempfile'].tempdir = '/other'\n"
        "print(tempfile.tempdir)\n"
        "import importlib.util\n"
        "print(importlib.util.find_spec('tempfile').name)\n"
    )
    assert out.splitlines() == ["/agentcfg-test-dir /agentcfg-test-dir", "/other", "tempfile"]


def test_a_spec_is_found_for_a_module_still_deferred() -> None:
    assert _run("import importlib.util\ndeferred.defer('wave')\nprint(importlib.util.find_spec('wave').origin)")


def test_from_a_package_import_a_module_binds_its_stand_in() -> None:
    """The package is not loaded for `from package import module`, and is loaded before the module is."""
    out = _run(
        "import sys\n"
        "deferred.defer('xml.dom.minidom')\n"
        "from xml.dom import minidom\n"
        "print(type(minidom).__name__, type(sys.modules['xml.dom']).__name__)\n"
        "print(minidom.parseString('<a/>').documentElement.tagName)\n"
        "dom = sys.modules['xml.dom']\n"
        "print(type(dom).__name__, dom.minidom is sys.modules['xml.dom.minidom'])\n"
    )
    assert out.splitlines() == ["_Deferred _Deferred", "a", "module True"]


def test_a_module_that_does_not_exist_is_not_deferred() -> None:
    """`try: import x / except ImportError` must still take its except branch."""
    out = _run(
        "deferred.defer('no_such_module_agentcfg', 'xml.no_such_module')\n"
        "for name in ('no_such_module_agentcfg', 'xml.no_such_module'):\n"
        "    try:\n"
        "        __import__(name)\n"
        "        print('imported')\n"
        "    except ImportError:\n"
        "        print('ImportError')\n"
    )
    assert out.splitlines() == ["ImportError", "ImportError"]


def test_a_module_whose_compiled_part_is_missing_is_not_deferred(tmp_path: Path) -> None:
    """bz2 and lzma exist wherever Python does, but import only where _bz2 and _lzma were built: shutil's
    `try: import bz2 / except ImportError` tells which archive formats work."""
    (tmp_path / "wrapper_agentcfg.py").write_text("from _wrapper_agentcfg_c import *\n")
    (tmp_path / "built_agentcfg.py").write_text("from _built_agentcfg_c import *\n")
    (tmp_path / "_built_agentcfg_c.py").write_text("X = 1\n")
    out = _run(
        f"import sys\nsys.path.insert(0, {str(tmp_path)!r})\n"
        "needs = {'wrapper_agentcfg': '_wrapper_agentcfg_c', 'built_agentcfg': '_built_agentcfg_c'}\n"
        "deferred.defer('wrapper_agentcfg', 'built_agentcfg', needs=needs)\n"
        "print(type(sys.modules.get('built_agentcfg')).__name__, 'wrapper_agentcfg' in sys.modules)\n"
        "try:\n"
        "    import wrapper_agentcfg\n"
        "    print('imported')\n"
        "except ImportError:\n"
        "    print('ImportError')\n"
        "import built_agentcfg\n"
        "print(built_agentcfg.X)\n"
    )
    assert out.splitlines() == ["_Deferred False", "ImportError", "1"]


def test_keyring_defers_bz2_and_lzma_only_with_their_compiled_part() -> None:
    from agentcfg import keyring_memo

    for name in ("bz2", "lzma"):
        assert name in keyring_memo._UNUSED_BY_KEYRING and keyring_memo._BUILT_WITH[name] == f"_{name}"


def test_a_module_imported_already_is_left_alone() -> None:
    assert _run("import json, sys\ndeferred.defer('json')\nprint(sys.modules['json'] is json)") == "True"


def test_threads_that_touch_a_stand_in_at_once_load_it_once() -> None:
    out = _run(
        "import sys, threading\n"
        "deferred.defer('colorsys')\n"
        "import colorsys\n"
        "seen = []\n"
        "start = threading.Barrier(8)\n"
        "def use():\n"
        "    start.wait()\n"
        "    seen.append(colorsys.rgb_to_hsv)\n"
        "threads = [threading.Thread(target=use) for _ in range(8)]\n"
        "[t.start() for t in threads]\n"
        "[t.join() for t in threads]\n"
        "print(len(seen), len({id(f) for f in seen}), type(sys.modules['colorsys']).__name__)\n"
    )
    assert out == "8 1 module"


@pytest.mark.parametrize("name", ["wave", "xml.dom.minidom"])
def test_a_failing_load_leaves_the_stand_in_to_try_again(name: str) -> None:
    """An import that fails on first use (here: its source unreadable for a moment) raises, and a later
    use loads the module: nothing is left half-loaded."""
    out = _run(
        "import importlib, sys\n"
        f"deferred.defer({name!r})\n"
        f"module = importlib.import_module({name!r})\n"
        "real = importlib.import_module\n"
        "def failing(n, *a):\n"
        f"    if n == {name!r}:\n"
        "        raise ImportError('not now')\n"
        "    return real(n, *a)\n"
        "importlib.import_module = failing\n"
        "try:\n"
        "    module.__dict__['__doc__'] or getattr(module, 'no_such_attribute_either')\n"
        "except ImportError as exc:\n"
        "    print('ImportError', exc)\n"
        "importlib.import_module = real\n"
        f"print(type(sys.modules[{name!r}]).__name__)\n"
        "print(bool(getattr(module, '__file__')))\n"
    )
    assert out.splitlines() == ["ImportError not now", "_Deferred", "True"]

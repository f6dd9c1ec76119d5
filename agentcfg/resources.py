"""Files shipped with agentcfg: JSON schemas and built-in profiles.

In a wheel they sit in `agentcfg/_data/`; in a source checkout (editable install, tests) they are
the top-level `schemas/` and `profiles/` directories.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    packaged = _PACKAGE / "_data" / name
    return packaged if packaged.is_dir() else _PACKAGE.parent / name

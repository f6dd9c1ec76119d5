"""docs/doctor.md lists every finding id doctor can report, with what triggers it and the fix."""

from __future__ import annotations

import ast
import re

from tests.conftest import REPO

DOCTOR = REPO / "agentcfg" / "doctor"


def finding_ids() -> set[str]:
    """Every id given as a literal to Finding(...) or Verdict(...) in agentcfg/doctor/ (also inside a
    conditional expression there)."""
    ids: set[str] = set()
    for path in DOCTOR.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("Finding", "Verdict") and node.args:
                first = node.args[0] if node.func.id == "Finding" else node.args[1] if len(node.args) > 1 else None
                for leaf in ast.walk(first) if first is not None else ():
                    if isinstance(leaf, ast.Constant) and isinstance(leaf.value, str):
                        ids.add(leaf.value)
    return {i for i in ids if re.fullmatch(r"[a-z]+(-[a-z0-9]+)+", i)}


def test_every_finding_id_has_a_row_in_docs_doctor_md():
    text = (REPO / "docs" / "doctor.md").read_text()
    rows = set(re.findall(r"^\| `([a-z0-9-]+)`", text, re.M))
    ids = finding_ids()
    assert len(ids) > 30, ids  # the scan works
    assert ids - rows == set(), "finding ids without a row in docs/doctor.md"

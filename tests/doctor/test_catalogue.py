"""The catalogue of finding ids (agentcfg/doctor/catalogue.py) is the one list: every id a producer gives is in
it, docs/doctor.md documents exactly its ids with the severities it states, and each fix builder is one of
agentcfg.fixes'. The doctor test-suite's own runs hold the producers to it (tests/doctor/conftest.py)."""

from __future__ import annotations

import ast
import re

import pytest

from agentcfg import fixes
from agentcfg.doctor import catalogue
from agentcfg.doctor.catalogue import CATALOGUE, FAIL, PASS, SKIP, WARN
from agentcfg.doctor.rules import Verdict
from tests.conftest import REPO

ID = re.compile(r"[a-z]+(-[a-z0-9]+)+")


def produced_ids() -> set[str]:
    """Every id-like string literal in agentcfg/ given to Finding(...) or Verdict(...), or as the value of a
    mapping an id is looked up in (classify's transport errors)."""
    ids: set[str] = set()
    for path in (REPO / "agentcfg").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", getattr(node.func, "attr", ""))
            position = {"Finding": 0, "Verdict": 1}.get(name)
            if position is None or len(node.args) <= position:
                continue
            for leaf in ast.walk(node.args[position]):
                if isinstance(leaf, ast.Constant) and isinstance(leaf.value, str) and ID.fullmatch(leaf.value):
                    ids.add(leaf.value)
    return ids


def documented() -> dict[str, set[str]]:
    """Each id with a row in docs/doctor.md, and the severities the row states: its `(warn)`-style note, else
    the severities it names in bold, else fail."""
    rows: dict[str, set[str]] = {}
    text = (REPO / "docs" / "doctor.md").read_text()
    for ident, note, what in re.findall(r"^\| `([a-z0-9-]+)`(?: \(([a-z, ]+)\))? \| (.*?) \|", text, re.M):
        stated = {s.strip() for s in note.split(",")} if note else set()
        stated = stated or {s for s in (FAIL, WARN, PASS, SKIP) if re.search(rf"\*\*{s}\b", what)} or {FAIL}
        rows[ident] = stated
    return rows


def test_every_produced_id_is_catalogued() -> None:
    ids = produced_ids()
    assert len(ids) > 50, ids  # the scan works
    assert ids - CATALOGUE.keys() == set()


def test_docs_doctor_md_documents_exactly_the_catalogue() -> None:
    rows = documented()
    assert rows.keys() - CATALOGUE.keys() == set(), "documented ids that are not catalogued"
    assert CATALOGUE.keys() - rows.keys() == set(), "catalogued ids without a row in docs/doctor.md"
    differ = {i: (sorted(rows[i]), sorted(e.severities)) for i, e in CATALOGUE.items() if rows[i] != e.severities}
    assert differ == {}, "severity in docs/doctor.md (first) differs from the catalogue's"


@pytest.mark.parametrize("entry", CATALOGUE.values(), ids=list(CATALOGUE))
def test_each_entry_is_whole(entry: catalogue.Entry) -> None:
    assert ID.fullmatch(entry.id)
    assert entry.severities and entry.severities <= {FAIL, WARN, PASS, SKIP}
    assert entry.trigger and "\n" not in entry.trigger
    assert all(getattr(fixes, builder.__name__, None) is builder for builder in entry.fix)


def test_a_verdict_refuses_an_id_that_is_not_catalogued() -> None:
    assert Verdict(False, "server-error").id == "server-error"
    with pytest.raises(KeyError, match=r"catalogue\.py"):
        Verdict(False, "server-on-fire")

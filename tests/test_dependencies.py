"""Every module agentcfg imports at run time comes with `pip install agentcfg`: it is the standard library's,
agentcfg's own, or a distribution in pyproject's [project].dependencies. A distribution of an optional extra
other than `test` only where the import is guarded (try/except ImportError): the command still runs without
it. tomlkit, a test-only dependency imported by agents/codex.py, crashed every plain install's
`exec -- codex` (issue 27) while CI, which installs `.[test]`, passed.

Each import is found with ast, those inside functions too (agentcfg imports heavy modules where they are
used); `if TYPE_CHECKING:` blocks are not run. The `installed` tier (tests/installed/) proves the same from
the other side: every command run from a wheel installed without extras.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
from dataclasses import dataclass

import tomli

from tests.conftest import REPO

PACKAGE = "agentcfg"
NOT_FOR_USERS = {"test"}  # extras a user never installs: a guard for them does not make an import optional


@dataclass(frozen=True)
class Import:
    module: str  # the top-level name: `yaml` for `from yaml.loader import X`
    line: int
    guarded: bool  # inside the body of a try whose handler catches ImportError


@dataclass(frozen=True)
class Declared:
    dependencies: frozenset[str]  # canonical distribution names
    extras: dict[str, frozenset[str]]


def canonical(name: str) -> str:
    """A distribution's name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_name(requirement: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    assert match, f"pyproject.toml: a requirement without a name: {requirement!r}"
    return canonical(match.group(1))


def declared(pyproject: str) -> Declared:
    project = tomli.loads(pyproject)["project"]
    return Declared(
        frozenset(_requirement_name(r) for r in project.get("dependencies", [])),
        {
            extra: frozenset(_requirement_name(r) for r in requirements)
            for extra, requirements in project.get("optional-dependencies", {}).items()
        },
    )


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(isinstance(kind, ast.Name) and kind.id in {"ImportError", "ModuleNotFoundError"} for kind in kinds)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _constant_import_call(node: ast.Call) -> str | None:
    """`importlib.import_module("x")` / `__import__("x")` with a literal name: an import too."""
    name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
    if name in {"import_module", "__import__"} and node.args and isinstance(node.args[0], ast.Constant):
        value = node.args[0].value
        return value if isinstance(value, str) and not value.startswith(".") else None
    return None


def imports(source: str, filename: str = "<source>") -> list[Import]:
    """Every absolute import in `source` that runs: at module level, in functions, in branches."""
    found: list[Import] = []

    def visit(node: ast.AST, guarded: bool) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            children = [(child, guarded) for child in node.orelse]  # the body is for type checkers only
        elif isinstance(node, ast.Try):
            body_guarded = guarded or any(_catches_import_error(h) for h in node.handlers)
            children = [(child, body_guarded) for child in node.body]
            children += [(child, guarded) for child in [*node.handlers, *node.orelse, *node.finalbody]]
        else:
            if isinstance(node, ast.Import):
                found.extend(Import(alias.name.split(".")[0], node.lineno, guarded) for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.append(Import(node.module.split(".")[0], node.lineno, guarded))
            elif isinstance(node, ast.Call) and (name := _constant_import_call(node)):
                found.append(Import(name.split(".")[0], node.lineno, guarded))
            children = [(child, guarded) for child in ast.iter_child_nodes(node)]
        for child, child_guarded in children:
            visit(child, child_guarded)

    visit(ast.parse(source, filename), guarded=False)
    return found


def distributions_of(module: str, installed: dict[str, list[str]]) -> set[str]:
    """The distributions that provide a top-level module (installed here), else the module's own name."""
    return {canonical(d) for d in installed.get(module, [])} or {canonical(module)}


def undeclared(source: str, filename: str, deps: Declared, installed: dict[str, list[str]]) -> list[str]:
    """One line per import in `source` that a plain `pip install agentcfg` does not provide."""
    optional = {d for extra, names in deps.extras.items() if extra not in NOT_FOR_USERS for d in names}
    problems = []
    for found in imports(source, filename):
        if found.module in sys.stdlib_module_names or found.module == PACKAGE:
            continue
        dists = distributions_of(found.module, installed)
        if dists & deps.dependencies or (found.guarded and dists & optional):
            continue
        extras = sorted(extra for extra, names in deps.extras.items() if dists & names)
        where = f"only in the extra(s) {', '.join(extras)}" if extras else "in no dependency of pyproject.toml"
        guard = "" if found.guarded else " (not guarded by try/except ImportError)"
        problems.append(
            f"{filename}:{found.line}: imports {found.module!r} (distribution {'/'.join(sorted(dists))}), "
            f"{where}{guard}"
        )
    return problems


def _project() -> Declared:
    return declared((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def _installed() -> dict[str, list[str]]:
    return importlib.metadata.packages_distributions()


def check(source: str) -> list[str]:
    return undeclared(source, "x.py", _project(), _installed())


# -- the checker ------------------------------------------------------------------------------------------

# agents/codex.py before a25e82c: the import that crashed every plain install's `exec -- codex`.
BEFORE_THE_FIX = '''
def _toml_value(value: object) -> str:
    """A TOML value as Codex's -c parser reads it."""
    import tomlkit

    if isinstance(value, dict):
        table = tomlkit.inline_table()
        table.update(value)
        return table.as_string()
    return tomlkit.item(value).as_string()
'''


def test_a_test_only_import_inside_a_function_is_named_with_its_file_and_line():
    problems = undeclared(BEFORE_THE_FIX, "agentcfg/agents/codex.py", _project(), _installed())
    assert problems == [
        "agentcfg/agents/codex.py:4: imports 'tomlkit' (distribution tomlkit), only in the extra(s) test "
        "(not guarded by try/except ImportError)"
    ]


def test_each_way_of_importing_counts():
    assert check("import tomlkit.items\n")
    assert check("from tomlkit import dumps\n")
    assert check("import importlib\nimportlib.import_module('tomlkit')\n")
    assert check("if True:\n    import hypothesis\n")
    assert check("class A:\n    def f(self):\n        from pytest import fixture\n")


def test_a_module_installed_nowhere_is_named():
    assert check("import no_such_module_anywhere\n") == [
        "x.py:1: imports 'no_such_module_anywhere' (distribution no-such-module-anywhere), "
        "in no dependency of pyproject.toml (not guarded by try/except ImportError)"
    ]


def test_a_test_extra_is_not_made_optional_by_a_guard():
    assert check("try:\n    import tomlkit\nexcept ImportError:\n    tomlkit = None\n")


def test_declared_standard_and_own_modules_pass():
    source = (
        "import os, json\nfrom click import echo\nimport dotenv\nimport keyring.backend\nimport httpx\n"
        "import jsonschema\nimport platformdirs\nimport tomli\nfrom agentcfg.edit import toml\nfrom . import x\n"
    )
    assert check(source) == []


def test_an_extra_for_users_passes_only_where_guarded():
    """litellm is the route extra's (agentcfg runs it as a program, never imports it): an import would have
    to be guarded; an unguarded one is named."""
    assert check("try:\n    import litellm\nexcept (ImportError, OSError):\n    litellm = None\n") == []
    assert check("import litellm\n") == [
        "x.py:1: imports 'litellm' (distribution litellm), only in the extra(s) route "
        "(not guarded by try/except ImportError)"
    ]
    assert check("try:\n    pass\nexcept ImportError:\n    import litellm\n")  # the handler itself is not guarded


def test_type_checking_imports_do_not_run():
    assert check("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import tomlkit\n") == []
    assert check("import typing\nif typing.TYPE_CHECKING:\n    pass\nelse:\n    import tomlkit\n")


# -- agentcfg itself ----------------------------------------------------------------------------------------


def test_every_module_agentcfg_imports_is_a_declared_dependency():
    deps, installed = _project(), _installed()
    files = sorted((REPO / PACKAGE).rglob("*.py"))
    assert len(files) > 50, files  # the walk found the package
    problems = [
        problem
        for path in files
        for problem in undeclared(path.read_text(encoding="utf-8"), str(path.relative_to(REPO)), deps, installed)
    ]
    assert problems == [], "\n".join(problems)


def test_litellm_is_never_imported():
    """The route extra's LiteLLM runs as its own process (route/server.py): agentcfg never imports it."""
    found = [
        f"{path.relative_to(REPO)}:{i.line}"
        for path in sorted((REPO / PACKAGE).rglob("*.py"))
        for i in imports(path.read_text(encoding="utf-8"))
        if i.module == "litellm"
    ]
    assert found == []

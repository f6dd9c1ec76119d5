"""The package's shape, held (issue 29): no import cycles, imports at the top, layers that only point down, small
modules and thin CLI handlers. Read from the source with `ast`: nothing is imported or run."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "agentcfg"
MAX_MODULE_LINES = 500  # agentcfg/edit/, the format editors, are exempt: a tokenizer is one unit
MAX_HANDLER_LINES = 40  # from `def` to the end: a handler parses, calls one function, renders
LAZY = "# lazy:"  # how an agentcfg import inside a function outside agentcfg/cli/ says why it is there

# What each layer must not import: lower layers first. agentcfg/cli/ imports a command's implementation inside
# its handler (that is how `key get` stays fast), and nothing below it imports the CLI.
FORBIDDEN = [
    ("agentcfg.edit", ("agentcfg.agents", "agentcfg.doctor", "agentcfg.serve", "agentcfg.route", "agentcfg.switch")),
    ("agentcfg.agents", ("agentcfg.switch", "agentcfg.serve", "agentcfg.route", "agentcfg.bench")),
    ("agentcfg.doctor", ("agentcfg.switch", "agentcfg.serve.lifecycle")),
]
OUTSIDE_CLI = ("agentcfg.cli", "agentcfg.__main__")


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    line: int
    top: bool  # at module level (`if TYPE_CHECKING:` too), not inside a function
    text: str


@dataclass(frozen=True)
class Package:
    modules: dict[str, Path]
    imports: list[Import]


def scan(root: Path) -> Package:
    """Every module under `root` (a package directory) and every import of one of them by another."""
    modules = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root.parent).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    imports = [i for name, path in modules.items() for i in _imports(name, path, modules, root.name)]
    return Package(modules, imports)


def _own(name: str, modules: dict[str, Path]) -> str | None:
    """The module `name` (a module, or a name inside one) lives in."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _imports(name: str, path: Path, modules: dict[str, Path], top_package: str) -> list[Import]:
    source = path.read_text()
    lines = source.splitlines()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []

    def visit(node: ast.AST, top: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                if isinstance(child, ast.Import):
                    targets = [alias.name for alias in child.names]
                else:
                    base = child.module or ""
                    if child.level:
                        up = package.split(".")[: len(package.split(".")) - child.level + 1]
                        base = ".".join([*up, base] if base else up)
                    targets = [f"{base}.{alias.name}" for alias in child.names]
                text = "\n".join(lines[child.lineno - 1 : (child.end_lineno or child.lineno)])
                for target in targets:
                    own = _own(target, modules) if target.split(".")[0] == top_package else None
                    if own and own != name:
                        out.append(Import(name, own, child.lineno, top, text))
            visit(child, top and not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(ast.parse(source), True)
    return out


def cycles(package: Package) -> list[list[str]]:
    """The strongly connected sets of more than one module (Tarjan), counting imports inside functions."""
    graph: dict[str, set[str]] = {name: set() for name in package.modules}
    for i in package.imports:
        graph[i.importer].add(i.imported)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return found


def unmarked_lazy(package: Package) -> list[str]:
    return [
        f"{i.importer}:{i.line} {i.imported}"
        for i in package.imports
        if not i.top and not i.importer.startswith(OUTSIDE_CLI) and LAZY not in i.text
    ]


def upward(package: Package, layer: str, above: tuple[str, ...]) -> list[str]:
    def within(name: str, prefix: str) -> bool:
        return name == prefix or name.startswith(prefix + ".")

    return [
        f"{i.importer}:{i.line} -> {i.imported}"
        for i in package.imports
        if within(i.importer, layer) and any(within(i.imported, a) for a in above)
    ]


def too_big(package: Package) -> dict[str, int]:
    sizes = {name: len(path.read_text().splitlines()) for name, path in package.modules.items()}
    return {name: n for name, n in sizes.items() if n > MAX_MODULE_LINES and ".edit" not in name}


def _makes_command(decorator: ast.expr) -> bool:
    """`@click.command(...)`, `@group.command(...)`, `@click.group(...)`: the decorators that make a handler."""
    called = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = called.attr if isinstance(called, ast.Attribute) else getattr(called, "id", "")
    return name in ("command", "group")


def long_handlers(package: Package) -> dict[str, int]:
    found = {}
    for name, path in package.modules.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and any(_makes_command(d) for d in node.decorator_list):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_HANDLER_LINES:
                    found[f"{name}.{node.name}"] = length
    return found


AGENTCFG = scan(PACKAGE)


def test_no_import_cycles_counting_imports_inside_functions():
    assert cycles(AGENTCFG) == []


def test_an_agentcfg_import_inside_a_function_says_why_outside_the_cli():
    assert unmarked_lazy(AGENTCFG) == []


@pytest.mark.parametrize(("layer", "above"), FORBIDDEN, ids=[layer for layer, _ in FORBIDDEN])
def test_a_layer_imports_nothing_above_it(layer, above):
    assert upward(AGENTCFG, layer, above) == []


def test_nothing_outside_the_cli_imports_the_cli():
    assert [
        i for i in AGENTCFG.imports if i.imported.startswith("agentcfg.cli") and not i.importer.startswith(OUTSIDE_CLI)
    ] == []


def test_no_module_is_over_the_size_limit():
    assert too_big(AGENTCFG) == {}


def test_no_cli_handler_is_over_the_size_limit():
    assert long_handlers(AGENTCFG) == {}


def test_each_check_finds_what_it_is_meant_to(tmp_path):
    """A package with a cycle through an unmarked lazy import, a marked one, a long handler and a big module."""
    root = tmp_path / "pkg"
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "a.py").write_text("from pkg import b\n")
    (root / "b.py").write_text("def f():\n    from pkg import a\n\n\ndef g():\n    import pkg.c  # lazy: start-up\n")
    (root / "c.py").write_text("import click\n\n\n@click.command()\ndef h():\n" + "    pass\n" * 40 + "\n" * 500)
    package = scan(root)
    assert cycles(package) == [["pkg.a", "pkg.b"]]
    assert unmarked_lazy(package) == ["pkg.b:2 pkg.a"]
    assert upward(package, "pkg.b", ("pkg.c",)) == ["pkg.b:6 -> pkg.c"]
    assert long_handlers(package) == {"pkg.c.h": 41}
    assert too_big(package) == {"pkg.c": 545}

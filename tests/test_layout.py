"""The package tree is the architecture, and this test holds it to docs/design.md's layer order.

Each kgkit package (``kgkit/text/``, ``kgkit/engine/`` …; ``errors`` and ``ids`` count as
packages of their own) sits in one layer, and a module may import only from its own package
or from a lower layer. Every ``import`` counts, the ones inside functions included: a lazy
import hides a dependency from a reader, not from the design. Imports under ``if
TYPE_CHECKING:`` are left out: they name a type for the checker and run nothing.

A package that registers handlers from its submodules keeps the table in a module of its
own (``kgkit.backends.offline.handlers``), so even that pattern is no circle.
"""
from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

import kgkit

PACKAGE = Path(kgkit.__file__).resolve().parent
CHECKOUT = Path(__file__).resolve().parent.parent  # docs/ is the checkout's, not the installed package's

#: bottom to top; the packages of one layer do not import each other.
#: ``kgkit`` is the package's own ``__init__``: the version, and the public names it resolves lazily.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("kgkit", "errors"),
    ("text", "guards"),
    ("ids",),
    ("formats",),
    ("config", "documents"),
    ("skills", "canon", "prompts"),
    ("backends",),
    ("modes", "scholarly"),
    ("catalog",),
    ("engine",),
    ("eval",),
    ("learning", "graph", "project", "wiki"),
    ("query", "view"),
    ("ask", "serve"),
    ("cli",),
)
ROOT_MODULES = {"__init__.py", "errors.py", "ids.py"}  # nothing else is loose at the package root


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_of(module: str) -> str:
    """``kgkit.engine.run`` -> ``engine``; ``kgkit.errors`` -> ``errors``; ``kgkit`` -> ``kgkit``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _type_checking_only(tree: ast.AST) -> set[int]:
    """ids of the import nodes under ``if TYPE_CHECKING:``."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return skip


def imports(name: str, path: Path, files: set[str]) -> list[tuple[int, str]]:
    """(line, imported kgkit module) for every import in a module, function-level ones too."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_checking_only(tree)
    found = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([module] if module else []))
            # "from package import submodule" uses the submodule; any other name, the module
            targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in files else module for a in node.names]
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            continue
        found.extend((node.lineno, t) for t in targets if t == "kgkit" or t.startswith("kgkit."))
    return found


def import_edges() -> list[tuple[str, int, str]]:
    """(importing module, line, imported module) over every kgkit module."""
    paths = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    return [(name, line, target) for name, path in sorted(paths.items())
            for line, target in imports(name, path, set(paths)) if target != name]


def layer_violations(edges, layers=LAYERS) -> list[str]:
    rank = {pkg: i for i, layer in enumerate(layers) for pkg in layer}
    bad = []
    for name, line, target in edges:
        a, b = package_of(name), package_of(target)
        if a != b and (a not in rank or b not in rank):
            bad.append(f"{name}:{line} imports {target}: place {a if a not in rank else b} in LAYERS")
        elif a != b and rank[b] >= rank[a]:
            bad.append(f"{name}:{line} imports {target}: {a} (layer {rank[a]}) may not use {b} (layer {rank[b]})")
    return bad


def test_every_package_has_a_layer():
    packages = {p.name for p in PACKAGE.iterdir() if p.is_dir() and any(p.glob("*.py"))}  # namespace ones too
    packages |= {p.stem for p in PACKAGE.glob("*.py") if p.name != "__init__.py"} | {"kgkit"}
    placed = {pkg for layer in LAYERS for pkg in layer}
    assert packages - placed == set(), "place the new package in LAYERS (and in docs/design.md)"
    assert placed - packages == set()


def test_no_module_is_loose_at_the_root():
    assert {p.name for p in PACKAGE.glob("*.py")} == ROOT_MODULES


def test_imports_follow_the_layer_order():
    assert layer_violations(import_edges()) == []


def test_a_wrong_import_is_caught():
    """The check itself: a text rule reaching up into the engine is reported with its line."""
    wrong = [("kgkit.text.literals", 12, "kgkit.engine.run")]
    assert layer_violations(wrong) == [
        "kgkit.text.literals:12 imports kgkit.engine.run: text (layer 1) may not use engine (layer 9)"]
    assert layer_violations([("kgkit.engine.run", 3, "kgkit.text.literals")]) == []


def test_no_import_cycles():
    """Within a package too: modules that import each other are one concept split badly."""
    graph = nx.DiGraph((name, target) for name, _, target in import_edges())
    assert list(nx.simple_cycles(graph)) == []


def test_design_page_states_the_same_order():
    design = (CHECKOUT / "docs" / "design.md").read_text(encoding="utf-8")
    for layer in LAYERS:
        row = ", ".join(f"`{pkg}`" for pkg in layer)
        assert f"| {row} |" in design, f"docs/design.md's layer table lacks the row {row}"

"""The package layout shows the architecture: no module imports its way back to itself.

A package that registers handlers from its submodules keeps the table in a module of its
own (``kgkit.backends.offline.handlers``), so even that pattern is no circle.

An import circle (even one hidden in a function-level import) means two modules are one
concept split badly; this walks every ``import`` of every kgkit module, lazy ones
included, and fails on any cycle.
"""
import ast
from pathlib import Path

import networkx as nx

import kgkit

PACKAGE = Path(kgkit.__file__).resolve().parent


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> nx.DiGraph:
    files = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = nx.DiGraph()
    for name, path in files.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                # "from package import submodule" uses the submodule; any other name, the module
                targets = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in files else node.module
                           for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            graph.add_edges_from((name, t) for t in targets if t in files and t != name)
    return graph


def test_no_import_cycles():
    assert list(nx.simple_cycles(import_graph())) == []


def test_schema_modules_live_in_one_package():
    for name in ("model", "yaml_source", "validation", "json_schemas", "catalog", "search_path", "files", "starter"):
        assert (PACKAGE / "schema" / f"{name}.py").is_file(), name

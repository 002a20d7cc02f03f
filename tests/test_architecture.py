"""The package's shape: no module imports, directly or through others, a module that imports it back.

Imports inside functions count too: a deferred import keeps start-up cheap, it does not make a cycle clean.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "miner"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, known: set[str]) -> set[str]:
    """The package's modules that `path` imports anywhere in its code."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package.split(".")[: len(package.split(".")) - node.level + 1]
            target = ".".join(base + ([node.module] if node.module else []))
            found |= {f"{target}.{alias.name}" for alias in node.names} & known
            if node.module and target in known:
                found.add(target)
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("miner"):
            found |= ({node.module} | {f"{node.module}.{alias.name}" for alias in node.names}) & known
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names} & known
    found.discard(name)
    return found


def graph() -> dict[str, set[str]]:
    files = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    known = set(files)
    # A submodule always imports its package's __init__ first; that edge is Python's, not ours.
    return {name: {m for m in imports(path, known) if not name.startswith(m + ".")} for name, path in files.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(edges[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_the_finder_sees_a_cycle_when_there_is_one():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_package_has_no_import_cycle():
    edges = graph()
    assert "miner.recall.block" in edges and "miner.runtime.exclusions" in edges["miner.recall.block"]  # the graph is read
    assert cycles(edges) == []

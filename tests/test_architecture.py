"""The package's shape: no import cycles, SQL only in the memory package, no module over 500 lines.

No module imports, directly or through others, a module that imports it back. Imports inside functions
count too: a deferred import keeps start-up cheap, it does not make a cycle clean.
"""

from __future__ import annotations

import ast
import os
import re
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


# --- where SQL lives, and how long a module may grow -------------------------------------------

MEMORY = PACKAGE / "memory"
SQL_CALLS = {"execute", "executemany", "executescript"}
SQL_TEXT = re.compile(r"^\s*(?:SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|PRAGMA|BEGIN|SAVEPOINT|RELEASE|ROLLBACK)"
                      r"\b(?:\s+\S|\s*$)")
MAX_LINES = 500


def sql_in(source: str) -> list[str]:
    """What in `source` speaks SQL: calls that run a statement, connections opened, and SQL text."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in SQL_CALLS or (
                    node.func.attr == "connect" and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "sqlite3"):
                found.append(f"line {node.lineno}: .{node.func.attr}()")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL_TEXT.match(node.value):
            found.append(f"line {node.lineno}: {node.value.strip()[:40]!r}")
    return found


def test_the_sql_finder_sees_sql_when_there_is_some():
    assert sql_in('db.execute("SELECT 1")') == ["line 1: .execute()", "line 1: 'SELECT 1'"]
    assert sql_in('c = sqlite3.connect(p)\nq = f"DELETE FROM {t} WHERE id = ?"') == [
        "line 1: .connect()", "line 2: 'DELETE FROM'"]
    assert sql_in('print("Select a memory to pin.")\nx = "UPDATE: the new version is out"') == []


def test_no_module_outside_the_memory_package_speaks_sql():
    offenders = {str(path.relative_to(PACKAGE.parent)): found
                 for path in sorted(PACKAGE.rglob("*.py")) if MEMORY not in path.parents
                 for found in [sql_in(path.read_text(encoding="utf-8"))] if found}
    assert offenders == {}
    assert sql_in((MEMORY / "store.py").read_text(encoding="utf-8"))  # the finder reads the package


def test_no_module_is_over_500_lines():
    lengths = {str(p.relative_to(PACKAGE.parent)): len(p.read_text(encoding="utf-8").splitlines())
               for p in PACKAGE.rglob("*.py")}
    assert len(lengths) > 40
    assert {name: n for name, n in lengths.items() if n > MAX_LINES} == {}


def test_the_block_cache_knows_every_module_of_every_subpackage(tmp_path, monkeypatch):
    from miner.recall import blockcache

    assert blockcache.code_state()[0] == len(list(PACKAGE.rglob("*.py")))
    stage = tmp_path / "stage"
    stage.mkdir()
    (tmp_path / "top.py").write_text("")
    (stage / "__init__.py").write_text("")
    (stage / "deep.py").write_text("")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "note.py").write_text("")  # not a package: no code the block depends on
    for path in tmp_path.rglob("*.py"):
        os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    monkeypatch.setattr(blockcache, "_PACKAGE_DIR", str(tmp_path))
    before = blockcache.code_state()
    assert before == [3, 1_000_000_000]
    os.utime(stage / "deep.py", ns=(2_000_000_000, 2_000_000_000))
    assert blockcache.code_state() == [3, 2_000_000_000]


def test_the_hook_path_loads_no_heavy_machinery():
    """What a hook imports, a SessionStart that renders its block included: no dataclasses, typing or inspect
    (about 15 ms of imports together), nothing of the miner's (YAML, click, spaCy), nothing of the viewer's."""
    import json
    import subprocess
    import sys

    probe = ("import json, sys; import miner.hooks, miner.memory.store, miner.memory.reader, miner.recall.prompt, "
             "miner.recall.blockcache, miner.runtime.exclusions, miner.config, miner.recall.block; "
             "print(json.dumps(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True,
                          cwd=PACKAGE.parent)
    modules = set(json.loads(done.stdout))
    assert "miner.memory.store" in modules and "sqlite3" in modules  # the probe imported what it names
    assert modules & {"dataclasses", "typing", "inspect", "yaml", "click", "spacy"} == set()
    # Nor the web viewer, an optional extra.
    assert {m for m in modules if m == "miner.ui" or m.startswith(("miner.ui.", "flask", "waitress", "jinja2"))} == set()

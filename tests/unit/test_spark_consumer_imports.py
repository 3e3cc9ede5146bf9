"""spark_consumer's imports: no circle between its modules, and its subpackages stay layers.

Read from the source with ast (nothing imported, so no Spark needed). Imports inside
functions count: a circle hidden by a deferred import is still a circle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import spark_consumer

ROOT = Path(spark_consumer.__file__).resolve().parent
# Bottom first: a subpackage imports only the ones before it (and itself).
LAYERS = ("decoding", "iceberg", "reading", "applying", "job")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Each spark_consumer module -> the spark_consumer modules it imports (anywhere in it)."""
    modules = {module_name(p): p for p in ROOT.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                deps.update(a.name for a in node.names if a.name in modules)
            elif isinstance(node, ast.ImportFrom) and node.module in modules:
                assert node.level == 0, f"{name}: relative import"
                for alias in node.names:  # `from pkg import module` imports the module
                    sub = f"{node.module}.{alias.name}"
                    deps.add(sub if sub in modules else node.module)
        graph[name] = deps - {name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One circle of the graph (its modules in order, the first repeated last), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                return path[path.index(dep):] + [dep]
            if dep not in state and (found := visit(dep)) is not None:
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)) is not None:
            return found
    return None


def test_find_cycle_finds_a_circle_through_a_deferred_import() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_no_import_circle_inside_spark_consumer() -> None:
    graph = import_graph()
    assert graph.get("spark_consumer.job.main"), "the graph found no import"
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


def layer(module: str) -> str | None:
    """The subpackage of `spark_consumer.SUB.module`; None for a top-level module."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 else None


def test_subpackages_import_only_the_layers_below() -> None:
    found = {p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file()}
    assert found == set(LAYERS), "a new subpackage needs its place in LAYERS"
    wrong = []
    for name, deps in import_graph().items():
        mine = layer(name)
        for dep in deps:
            other = layer(dep)
            if mine is not None and other is not None and \
                    LAYERS.index(other) > LAYERS.index(mine):
                wrong.append(f"{name} imports {dep}")
    assert not wrong, wrong

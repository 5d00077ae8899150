"""The import graph of analyzer/ and lab/ has no cycles, and the analyzer's stages keep their order.

Read from the sources (every `import`, including the ones under TYPE_CHECKING and inside
functions), so a cycle hidden in a lazy import counts too.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("analyzer", "lab")

# The analyzer's packages as layers: one may import the layers before it, never after. Not quite
# the pipeline's order: the analysis reads JSON with parsing/jsonscan, and the generator builds
# on parsing's options, message and stream, so the PEG engine and parsing/ sit under both.
STAGES = ("render", "peg", "parsing", "analysis", "generator", "handlers", "gbnf", "checks", "cli")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_names(path: Path, modules: set[str]) -> set[str]:
    """The project modules that path imports (`from a import b` counts a.b when it is a module)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in found if name in modules}


def import_graph() -> dict[str, set[str]]:
    paths = [path for package in PACKAGES for path in (ROOT / package).rglob("*.py")]
    modules = {module_name(path) for path in paths}
    graph = {module_name(path): imported_names(path, modules) for path in paths}
    for name, targets in graph.items():
        # `import a.b.c` runs a/__init__ and a/b/__init__ first, but a package's own modules
        # importing their package's names is how packages work, not a cycle we can break.
        targets.discard(name)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def is_package_init(name: str) -> bool:
    return (ROOT / Path(*name.split(".")) / "__init__.py").is_file()


def test_no_import_cycles() -> None:
    graph = import_graph()
    # A package's __init__ that re-exports its modules is not part of a cycle with them.
    without_reexports = {
        name: {t for t in targets if not (is_package_init(name) and t.startswith(name + "."))}
        for name, targets in graph.items()
    }
    assert cycles(without_reexports) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def stage_of(name: str) -> str | None:
    parts = name.split(".")
    return parts[1] if len(parts) > 2 and parts[0] == "analyzer" and parts[1] in STAGES else None


def test_analyzer_stages_import_only_earlier_stages() -> None:
    backwards = []
    for name, targets in import_graph().items():
        stage = stage_of(name)
        for target in targets:
            target_stage = stage_of(target)
            if stage and target_stage and STAGES.index(target_stage) > STAGES.index(stage):
                backwards.append(f"{name} -> {target}")
    assert backwards == []


def test_the_analyzer_root_holds_only_the_shared_vocabulary() -> None:
    modules = sorted(path.stem for path in (ROOT / "analyzer").glob("*.py"))
    assert modules == [
        "__init__", "__main__", "canonical", "errors", "model", "piece", "version"]


def test_the_analyzer_never_imports_django_or_celery() -> None:
    forbidden = ("django", "celery", "channels", "lab")
    offenders = []
    for path in (ROOT / "analyzer").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] in forbidden]
    assert offenders == []

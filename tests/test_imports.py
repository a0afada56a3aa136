"""No import circle among the project's modules (issue 48): the import graph of the games,
training, webapp, workers and bench packages, read from the source with `ast`, has no cycle.

What counts as an edge A → B (A imports B):
- `import x.y.z` and `from x.y import z`, absolute or relative (`from . import z`, `from ..kb
  import load_kb`), resolved to the deepest project module they name: `from games.kb import
  load_kb` is an edge to games.kb (its __init__), `from games import rules` one to games.rules;
- wherever the statement is: at the top, inside a function or method, under `try` or `if`. An
  import moved into a function only postpones the circle to the first call, and that is how the
  three circles the issue names were held together (games.rules ↔ games.kb, labelling ↔ the
  disagreements job, webapp.jobs ↔ workers.tasks ↔ webapp.leaderboards);
- except under `if TYPE_CHECKING:` (never runs).

A package's own __init__ is not an edge of its submodules (Python runs it, but a package that
re-exports its submodules would otherwise be a circle with each). Third-party and standard-library
imports are not nodes. Migrations are modules like the others.
"""

from __future__ import annotations

import ast
from collections import deque
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("games", "training", "webapp", "workers", "bench")


def project_modules(root: Path = ROOT, packages=PACKAGES) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file under the packages."""
    modules = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def _deepest(name: str, modules: dict[str, Path]) -> str | None:
    """The longest prefix of a dotted name that is a project module."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _type_checking(node: ast.If) -> bool:
    return ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> dict[str, int]:
    """The project modules this module imports, each with the line of its first import."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: dict[str, int] = {}

    def add(target: str | None, line: int) -> None:
        if target is not None and target != name:
            found.setdefault(target, line)

    def visit(nodes) -> None:
        for child in nodes:
            if isinstance(child, ast.If) and _type_checking(child):
                visit(child.orelse)
                continue
            if isinstance(child, ast.Import):
                for alias in child.names:
                    add(_deepest(alias.name, modules), child.lineno)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    parts = package.split(".") if package else []
                    base = parts[: len(parts) - (child.level - 1)]
                    source = ".".join([*base, *([child.module] if child.module else [])])
                else:
                    source = child.module or ""
                for alias in child.names:
                    submodule = f"{source}.{alias.name}" if source else alias.name
                    add(
                        submodule if submodule in modules else _deepest(source, modules),
                        child.lineno,
                    )
            else:
                visit(ast.iter_child_nodes(child))

    visit(tree.body)
    return found


def import_graph(root: Path = ROOT, packages=PACKAGES) -> dict[str, dict[str, int]]:
    modules = project_modules(root, packages)
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def circles(graph: dict[str, dict[str, int]]) -> list[set[str]]:
    """The groups of modules that import each other, directly or not: each strongly connected
    component of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    for start in sorted(graph):  # iterative: the graph is deep enough to trouble recursion
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            advanced = False
            for successor in successors:
                if successor not in graph:
                    continue
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    advanced = True
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(group)
    return sorted(groups, key=min)


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """One shortest cycle (a, b, ..., a) through each circle, from its first module by name."""
    return [_shortest_cycle(min(group), group, graph) for group in circles(graph)]


def _shortest_cycle(first: str, group: set[str], graph: dict[str, dict[str, int]]) -> list[str]:
    """The shortest path first -> ... -> first inside the group (breadth first)."""
    parent: dict[str, str | None] = {first: None}
    queue = deque([first])
    while queue:
        node = queue.popleft()
        for successor in sorted(graph[node]):
            if successor == first:
                path = [node]
                while parent[path[-1]] is not None:
                    path.append(parent[path[-1]])
                return [*reversed(path), first]
            if successor in group and successor not in parent:
                parent[successor] = node
                queue.append(successor)
    raise AssertionError(f"no cycle through {first}")  # a strongly connected group has one


def describe(cycle: list[str], graph: dict[str, dict[str, int]], root: Path = ROOT) -> str:
    modules = project_modules(root)
    steps = [
        f"  {a} -> {b}  ({modules[a].relative_to(root)}:{graph[a][b]})"
        for a, b in zip(cycle, cycle[1:])
    ]
    return "\n".join([" -> ".join(cycle), *steps])


def test_no_import_circle_among_the_projects_modules():
    graph = import_graph()
    found = circles(graph)
    report = [
        f"{', '.join(sorted(group))}:\n{describe(_shortest_cycle(min(group), group, graph), graph)}"
        for group in found
    ]
    assert found == [], "modules that import each other:\n" + "\n".join(report)


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_walk_finds_a_circle_closed_inside_a_function_or_by_a_relative_import(tmp_path):
    write(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/a.py": "from app import b\n",
            "app/b.py": "def later():\n    from app.c import thing\n",
            "app/c.py": "from .a import name\n",
            "app/sub/__init__.py": "from .. import d\n",
            "app/d.py": "import app.sub\n",
            "app/e.py": "import typing\nif typing.TYPE_CHECKING:\n    from app import f\n",
            "app/f.py": "import app.e\nimport os\n",
        },
    )
    graph = import_graph(tmp_path, ["app"])
    assert graph["app.b"] == {"app.c": 2} and graph["app.c"] == {"app.a": 1}
    assert graph["app.e"] == {}  # TYPE_CHECKING only
    assert cycles(graph) == [["app.a", "app.b", "app.c", "app.a"], ["app.d", "app.sub", "app.d"]]


def test_a_package_is_not_a_circle_with_the_submodules_it_re_exports(tmp_path):
    write(
        tmp_path,
        {
            "app/__init__.py": "from app.x import thing\n",
            "app/x.py": "from app.y import other\n",
            "app/y.py": "import json\n",
        },
    )
    assert cycles(import_graph(tmp_path, ["app"])) == []


def test_the_graph_holds_the_projects_own_imports():
    graph = import_graph()
    assert len(graph) > 300
    assert "games.text" in graph["games.kb.knowledge"]
    assert "webapp.labelling.votes" in graph["webapp.jobs.kinds.disagreements"]
    assert "webapp.jobs.services" in graph["workers.tasks"]  # inside the task's function
    web = [name for name in graph if name.startswith("webapp")]
    assert [name for name in web if "workers.tasks" in graph[name]] == []  # sent by name

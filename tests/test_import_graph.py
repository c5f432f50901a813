"""No import circle in `scoreboard`: not inside any package, and not across the whole of it (issue 35).

Every import counts: at the top of a module, inside a function (a circle put off until a call is still a circle:
neither module can be read, tested or moved without the other) and under `if TYPE_CHECKING:` (a circle of types is
a circle of knowledge). A circle is broken by moving what both sides need to a small module of its own.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

import scoreboard

ROOT = Path(scoreboard.__file__).parent
TOP = "scoreboard"


def _modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name, its `__init__.py`)."""
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imported(name: str, path: Path, modules: Mapping[str, Path]) -> set[str]:
    """The modules of the package that module `name` imports, anywhere in it."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            # `from . import x` imports the module x when there is one; else a name of the package itself.
            targets = [f"{origin}.{a.name}" if f"{origin}.{a.name}" in modules else origin for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in modules:  # `import a.b.c` of a name inside a module: that module
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
    return out


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imported(name, path, modules) for name, path in modules.items()}


def _circles(graph: Mapping[str, set[str]]) -> Iterator[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in graph:
                    continue
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        yield sorted(component)


def _cycle(component: list[str], graph: Mapping[str, set[str]]) -> list[str]:
    """One circle through the component's first module, to show (a path back to where it started)."""
    members, first = set(component), component[0]
    paths = {first: [first]}
    queue = [first]
    while queue:
        node = queue.pop(0)
        for nxt in sorted(graph[node] & members):
            if nxt == first:
                return paths[node] + [first]
            if nxt not in paths:
                paths[nxt] = paths[node] + [nxt]
                queue.append(nxt)
    return component


def _within(graph: Mapping[str, set[str]], package: str) -> dict[str, set[str]]:
    """The graph of one package's own modules and subpackages, each subpackage taken as one node."""

    def node(name: str) -> str | None:
        if name == package or not name.startswith(package + "."):
            return None
        return package + "." + name[len(package) + 1 :].split(".")[0]

    out: dict[str, set[str]] = {}
    for name, targets in graph.items():
        here = node(name)
        if here is None:
            continue
        edges = out.setdefault(here, set())
        edges.update(t for t in map(node, targets) if t is not None and t != here)
    return out


def _report(circles: list[list[str]], graph: Mapping[str, set[str]]) -> str:
    """Each circle as a path back to its start, and the other modules caught in it with them."""
    lines = []
    for component in circles:
        cycle = _cycle(component, graph)
        others = sorted(set(component) - set(cycle))
        lines.append("import circle: " + " -> ".join(cycle) + (f" (with {', '.join(others)})" if others else ""))
    return "\n".join(lines)


def test_the_import_graph_is_read_from_every_kind_of_import() -> None:
    graph = _graph()
    # At the top, relative (`from ..log import`), a module of a package named in `from . import`, and a name
    # imported from a package's __init__.
    assert "scoreboard.service.log" in graph["scoreboard.service.tables.hub"]
    assert "scoreboard.service.tables.permissions" in graph["scoreboard.service.tables.hub"]
    # Inside a function (create_app imports the web late), and under `if TYPE_CHECKING:`.
    assert "scoreboard.service.web" in graph["scoreboard.service"]
    assert "scoreboard.service.log" in graph["scoreboard.service.tables.alarm_watch"]


def test_circles_are_found() -> None:
    graph = {"p.a": {"p.b"}, "p.b": {"p.c"}, "p.c": {"p.a"}, "p.d": {"p.a"}, "p.e": set()}
    assert list(_circles(graph)) == [["p.a", "p.b", "p.c"]]
    assert _cycle(["p.a", "p.b", "p.c"], graph) == ["p.a", "p.b", "p.c", "p.a"]
    two = {"p.a": {"p.b", "p.c"}, "p.b": {"p.a"}, "p.c": {"p.a"}}
    assert _report(list(_circles(two)), two) == "import circle: p.a -> p.b -> p.a (with p.c)"
    assert _within({"p.x.a": {"p.y.b"}, "p.y.b": {"p.x.c"}, "p.x.c": set()}, "p") == {"p.x": {"p.y"}, "p.y": {"p.x"}}


def test_no_module_of_the_package_imports_itself_back() -> None:
    graph = _graph()
    circles = list(_circles(graph))
    assert not circles, "\n" + _report(circles, graph)


def test_no_package_has_a_circle_between_its_modules_and_subpackages() -> None:
    graph = _graph()
    packages = sorted(name for name, path in _modules().items() if path.name == "__init__.py")
    found = []
    for package in packages:
        inner = _within(graph, package)
        found += [_report([c], inner) + f"  (in {package})" for c in _circles(inner)]
    assert not found, "\n" + "\n".join(found)

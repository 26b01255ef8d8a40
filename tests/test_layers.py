"""The packages are layers: a module imports only from its own package or from packages below it, and no modules
import each other in a circle (docs/engine.md, "Layers").

Layer order, lowest first: ``engine`` < ``eval`` < ``search`` < ``usi`` < ``gui``, ``bench``, ``train``. The top
three are peers: none of them imports another. Every import counts: at module level, inside functions and methods,
and under ``if TYPE_CHECKING:`` (a type-only import still makes the lower layer name the upper one, and type
checkers follow it; a circle through one is still a circle for them). Relative imports are resolved against the
importing module. ``from pkg import name`` counts as an import of ``pkg.name`` when that is a module, else of
``pkg``. Tests, docs and ``__main__`` scripts outside the packages are not checked.

``engine/`` also names no file of a package above it (the numba cache purge receives the packages to stamp from
above: :func:`engine.kernels.cache.ensure_fresh_cache`).
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: package -> layer; a package may import only its own package and packages of a lower layer
LAYERS = {"engine": 0, "eval": 1, "search": 2, "usi": 3, "gui": 4, "bench": 4, "train": 4}


def module_files() -> dict[str, Path]:
    """Every module of the packages: dotted name -> file (a package by its ``__init__.py``)."""
    mods = {}
    for pkg in LAYERS:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            rel = path.relative_to(ROOT).with_suffix("")
            parts = list(rel.parts)
            if parts[-1] == "__init__":
                parts.pop()
            mods[".".join(parts)] = path
    return mods


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> list[tuple[str, int]]:
    """The project modules that ``module`` imports, with the line of each import, anywhere in its file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    is_package = path.name == "__init__.py"
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, is_package, node)
            names = [f"{target}.{a.name}" if f"{target}.{a.name}" in modules else target for a in node.names]
        else:
            continue
        for name in names:
            # the longest prefix that is a project module (``import engine.kernels.movegen`` -> that module)
            parts = name.split(".")
            while parts and ".".join(parts) not in modules:
                parts.pop()
            if parts and ".".join(parts) != module:
                found.append((".".join(parts), node.lineno))
    return found


def import_graph() -> dict[str, list[tuple[str, int]]]:
    modules = module_files()
    return {m: imports_of(m, p, modules) for m, p in modules.items()}


def upward_imports(graph: dict[str, list[tuple[str, int]]]) -> list[str]:
    bad = []
    for mod, deps in graph.items():
        pkg = mod.split(".")[0]
        for dep, line in deps:
            dpkg = dep.split(".")[0]
            if dpkg != pkg and LAYERS[dpkg] >= LAYERS[pkg]:
                bad.append(f"{mod} imports {dep} (line {line}): {dpkg} is not below {pkg}")
    return bad


def cycles(graph: dict[str, list[tuple[str, int]]]) -> list[list[str]]:
    """One cycle per strongly connected component of more than one module (Tarjan), as a closed path."""
    edges = {m: sorted({d for d, _ in deps}) for m, deps in graph.items()}
    index, low, on_stack, stack, comps = {}, {}, set(), [], []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    found = []
    for comp in comps:  # a shortest path from the component's first module back to itself, inside the component
        members, start = set(comp), comp[0]
        prev, queue = {start: None}, [start]
        for v in queue:
            for w in edges[v]:
                if w == start:
                    path = [v]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])
                    found.append([start] + path[::-1][1:] + [start] if len(path) > 1 else [start, v, start])
                    break
                if w in members and w not in prev:
                    prev[w] = v
                    queue.append(w)
            else:
                continue
            break
    return found


def test_the_checker_resolves_relative_and_function_level_imports(tmp_path):
    src = ("from . import b, name\nfrom .. import c\nfrom .b import f\n"
           "def g():\n    import top.c\n    from top.pkg.b import x\n")
    path = tmp_path / "a.py"
    path.write_text(src)
    mods = {m: Path() for m in ("top", "top.c", "top.pkg", "top.pkg.a", "top.pkg.b")}
    assert sorted(imports_of("top.pkg.a", path, mods)) == [("top.c", 2), ("top.c", 5), ("top.pkg", 1),
                                                          ("top.pkg.b", 1), ("top.pkg.b", 3), ("top.pkg.b", 6)]


def test_the_checker_finds_a_cycle():
    graph = {"a": [("b", 1)], "b": [("c", 1)], "c": [("a", 1)], "d": [("a", 1)]}
    assert cycles(graph) == [["a", "b", "c", "a"]]
    assert cycles({"a": [("b", 1)], "b": []}) == []




def test_no_module_imports_a_layer_above_it():
    bad = list(dict.fromkeys(upward_imports(import_graph())))
    assert not bad, "upward imports:\n" + "\n".join(bad)


def test_no_modules_import_each_other_in_a_circle():
    found = [" -> ".join(c) for c in cycles(import_graph())]
    assert not found, "import cycles:\n" + "\n".join(found)


def test_engine_names_no_file_of_a_package_above_it():
    """No string in engine/'s code (docstrings and comments aside: they may point a reader to a file) is a path into a
    package above it, as the cache purge's list of files was."""
    above = [p for p, layer in LAYERS.items() if layer > LAYERS["engine"]]
    pattern = re.compile(r"(?:^|[^\w.])(%s)/" % "|".join(above))
    bad = []
    for path in sorted((ROOT / "engine").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                      and node.body and isinstance(node.body[0], ast.Expr)
                      and isinstance(node.body[0].value, ast.Constant)}
        bad += [f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}" for node in ast.walk(tree)
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
                and pattern.search(node.value)]
    assert not bad, "engine/ names files above it:\n" + "\n".join(bad)


def test_the_cache_purge_is_an_explicit_call_with_the_packages_given_from_above(tmp_path, monkeypatch):
    """engine.kernels.cache purges only when called (importing engine.kernels does not), the cache files of engine/
    and of the packages it is given, when a shared source (its own or one given) or ``NUMBA_OPT`` changed since the
    last call."""
    import engine.kernels
    from engine.kernels import cache as C

    assert "ensure_fresh_cache" not in (ROOT / "engine/kernels/__init__.py").read_text()
    fake_engine, above = tmp_path / "engine", tmp_path / "above"
    for d in (fake_engine, above):
        (d / "__pycache__").mkdir(parents=True)
    monkeypatch.setattr(C, "_ENGINE", fake_engine)  # engine's real cache is not touched
    monkeypatch.setattr(C, "_STAMP", fake_engine / "kernels/__pycache__/shared-kernels.sha1")
    shared = above / "kernels.py"
    shared.write_text("x = 1\n")
    nb = [fake_engine / "__pycache__/k-1.py311.nbi", above / "__pycache__/k-1.py311.nbi"]

    def purge():
        for f in nb:
            f.write_bytes(b"")
        return C.ensure_fresh_cache([above], [shared])

    assert purge() and not any(f.exists() for f in nb)   # no stamp yet: purged, stamped
    assert not purge() and all(f.exists() for f in nb)   # nothing changed: kept
    shared.write_text("x = 2\n")
    assert purge() and not any(f.exists() for f in nb)   # a shared source above changed: purged
    monkeypatch.setenv("NUMBA_OPT", "1")
    assert purge() and not any(f.exists() for f in nb)   # another optimisation level (numba's cache keeps it)
    assert not purge() and all(f.exists() for f in nb)
    assert engine.kernels.safecache._installed

"""The compile step (``fantasista --compile``, usi/compile.py) and the crash- and race-safe disk caches
(engine/kernels/safecache.py): numba's index and data files and the project's own tables."""
from __future__ import annotations

import ast
import io
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import engine.kernels  # noqa: F401  (installs the safe cache writer, as every process of the project does)
from engine.kernels import safecache
from usi import compile as ucompile
from usi.cli import main as engine_main

REPO = Path(__file__).resolve().parents[1]


def _env(cache_dir: Path, *extra_paths: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *map(str, extra_paths)])
    env["NUMBA_CACHE_DIR"] = str(cache_dir)
    return env


# ------------------------------------------------------------------------------------------ the compile step
def test_compile_prints_a_line_per_step_and_succeeds(tmp_path, monkeypatch):
    # a temporary file a killed compile left (in NUMBA_CACHE_DIR, which the sweep reads as numba does) goes first
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    leftover = tmp_path / "x.nbi.tmp.0123456789abcdef"
    leftover.write_bytes(b"half")
    out = io.StringIO()
    results = ucompile.compile_all(["enokian"], ["rules", "engine"], out=out)
    lines = out.getvalue().splitlines()
    assert [(r.variant, r.step, r.error) for r in results] == [("enokian", "rules", None), ("enokian", "engine", None)]
    assert lines[0].startswith("compiling the numba kernels of 1 variant(s)")
    assert lines[1] == "removed 1 temporary cache file(s) left by an interrupted compile" and not leftover.exists()
    steps = [ln for ln in lines if ln.startswith("[")]
    assert len(steps) == 2
    assert steps[0].startswith("[ 1/2] enokian      rules ") and steps[1].startswith("[ 2/2] enokian      engine")
    for ln, r in zip(steps, results):
        assert f"{r.seconds:6.1f} s, cpu {r.cpu:6.1f} s" in ln and f"({r.compiled} compiled, {r.cached} cached)" in ln
    assert lines[-1].startswith("done: 2 steps in ")
    # the second step ran the enokian search warm-up: some of its kernels were compiled or loaded
    assert results[1].compiled + results[1].cached > 0


def test_a_failing_step_is_reported_and_the_exit_status_is_1(monkeypatch, capsys):
    def broken(variant):
        raise RuntimeError(f"no kernels for {variant}")

    monkeypatch.setitem(ucompile.STEP_FUNCTIONS, "rules", broken)
    assert ucompile.main(["--variant", "enokian", "--step", "rules"]) == 1
    out = capsys.readouterr().out
    assert "FAILED: RuntimeError: no kernels for enokian" in out
    assert "1 step(s) failed" in out


def test_fantasista_dash_dash_compile_dispatches_and_rejects_bad_arguments(monkeypatch, capsys):
    seen = []
    monkeypatch.setattr(ucompile, "compile_all", lambda variants, steps: seen.append((variants, steps)) or [])
    assert engine_main(["--compile", "--variant", "turncoat", "--step", "play"]) == 0
    assert seen == [(["turncoat"], ["play"])]
    with pytest.raises(SystemExit) as exc:
        engine_main(["--compile", "--variant", "chess"])
    assert exc.value.code == 2
    assert "invalid choice: 'chess'" in capsys.readouterr().err


def test_fantasista_dash_dash_compile_runs_in_a_real_process():
    p = subprocess.run([sys.executable, "-m", "usi", "--compile", "--variant", "enokian", "--step", "rules"],
                       env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=REPO, capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    step = [ln for ln in p.stdout.splitlines() if ln.startswith("[")]
    assert len(step) == 1 and step[0].startswith("[ 1/1] enokian      rules ") and " cached)" in step[0]
    assert p.stdout.splitlines()[-1].startswith("done: 1 steps in ")
    assert p.stderr == ""


def test_worker_groups_keep_turncoat_behind_shogi_and_start_the_long_ones_first():
    assert ucompile.worker_groups(["enokian", "turncoat", "shogi", "fantasista"]) == [
        ["shogi", "turncoat"], ["fantasista"], ["enokian"]]
    assert ucompile.worker_groups(["daishogi2017", "mawarikudoi", "fantasista", "shogi"]) == [
        ["shogi"], ["fantasista"], ["daishogi2017"], ["mawarikudoi"]]
    assert ucompile.worker_groups(["turncoat"]) == [["turncoat"]]
    every = [v for g in ucompile.worker_groups(ucompile.VARIANT_IDS) for v in g]
    assert sorted(every) == sorted(ucompile.VARIANT_IDS)


FAKE_WORKER = textwrap.dedent("""
    import json, sys
    args = sys.argv[1:]
    variants = [args[i + 1] for i, a in enumerate(args) if a == "--variant"]
    steps = [args[i + 1] for i, a in enumerate(args) if a == "--step"]
    if "mawarikudoi" in variants:  # a worker that dies after its first step
        print("compile-result " + json.dumps(dict(variant="mawarikudoi", step=steps[0], seconds=1.0, compiled=3,
                                                  cached=0, error=None, cpu=0.5)), flush=True)
        sys.stderr.write("Segmentation fault")
        sys.exit(139)
    for v in variants:
        for s in steps:
            print("noise from numba", flush=True)
            print("compile-result " + json.dumps(dict(variant=v, step=s, seconds=2.0, compiled=1, cached=4,
                                                      error=None, cpu=1.5)), flush=True)
""")


def test_parallel_compile_reports_every_step_and_a_dead_worker(tmp_path, monkeypatch):
    script = tmp_path / "worker.py"
    script.write_text(FAKE_WORKER)
    monkeypatch.setattr(ucompile, "_worker_command",
                        lambda group, steps: [sys.executable, str(script)]
                        + [x for v in group for x in ("--variant", v)] + [x for s in steps for x in ("--step", s)])
    out = io.StringIO()
    results = ucompile.compile_parallel(["shogi", "turncoat", "mawarikudoi"], ["engine", "rules"], jobs=2, out=out)
    assert sorted((r.variant, r.step) for r in results) == sorted(
        (v, s) for v in ("shogi", "turncoat", "mawarikudoi") for s in ("engine", "rules"))
    failed = [r for r in results if r.error]
    assert [(r.variant, r.step) for r in failed] == [("mawarikudoi", "rules")]
    assert "status 139" in failed[0].error and "Segmentation fault" in failed[0].error
    text = out.getvalue()
    assert "in 2 processes" in text and "1 step(s) failed: 6 steps in " in text
    lines = [ln for ln in text.splitlines() if ln.startswith("[")]
    assert [ln[:6] for ln in lines] == [f"[{i:2d}/6]" for i in range(1, 7)]
    assert "noise" not in text


def test_a_parallel_worker_compiles_for_real_and_reports_as_json(tmp_path, capsys):
    assert ucompile.main(["--worker", "--variant", "enokian", "--step", "rules"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and lines[0].startswith(ucompile.RESULT_TAG)
    assert '"variant": "enokian"' in lines[0] and '"error": null' in lines[0]


def test_bad_jobs_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        ucompile.main(["--jobs", "0"])
    assert exc.value.code == 2 and "--jobs must be at least 1" in capsys.readouterr().err


WIDENED = textwrap.dedent("""
    import numpy as np
    from engine.kernels import kernel

    @kernel
    def add(a, b):
        return a + b

    @kernel
    def gen(mode, x):
        return x + 1 if mode == 1 else x - 1

    @kernel
    def caller(x):
        return add(x, 0) + add(x, np.int8(3)) + add(x, np.int32(x)) + add(x, x) + gen(1, x) + gen(2, x)
""")


def test_a_kernel_is_compiled_once_whatever_constants_and_widths_its_callers_pass(tmp_path, monkeypatch):
    # f(x, 0), f(x, int8) and f(x, i) from other kernels used to be three compiles of f and of all it calls; a
    # ``mode`` passed as a constant is no exception (one move generator for every mode)
    (tmp_path / "widened_kernels.py").write_text(WIDENED)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    import widened_kernels as k

    assert k.caller(np.int64(5)) == 5 + 8 + 10 + 10 + 6 + 4  # (not py_func: its calls would come from Python)
    assert [str(t) for t in k.add.overloads] == ["(int64, int64)"]
    assert [str(t) for t in k.gen.overloads] == ["(int64, int64)"]


INNER = textwrap.dedent("""
    from engine.kernels import inner_kernel, kernel

    @inner_kernel
    def twice(x):
        return 2 * x

    @kernel
    def caller(x):
        return twice(x) + 1
""")


def test_an_inner_kernel_serves_kernels_and_refuses_python_with_a_clear_error(tmp_path, monkeypatch):
    # compiled without numba's CPython wrapper: a call from Python would jump to a missing entry point (a segfault)
    (tmp_path / "inner_kernels.py").write_text(INNER)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    import inner_kernels as k

    assert k.caller(np.int64(20)) == 41
    assert k.twice.targetoptions["no_cpython_wrapper"] and not k.caller.targetoptions.get("no_cpython_wrapper")
    with pytest.raises(TypeError, match="inner_kernels.twice is an inner kernel"):
        k.twice(np.int64(20))


def _kernel_package_modules() -> dict[str, object]:
    """Every module of the packages that hold kernels (engine, eval, search), imported, by name."""
    import importlib

    names = [".".join(p.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
             for pkg in ("engine", "eval", "search") for p in (REPO / pkg).glob("**/*.py")]
    return {name: importlib.import_module(name) for name in sorted(names)}


def _imported_module(own: str, is_package: bool, module: str | None, level: int) -> str:
    """The absolute name of ``from <level dots><module> import ...`` written in module ``own``."""
    if not level:
        return module or ""
    parts = own.split(".") if is_package else own.split(".")[:-1]
    parts = parts[:len(parts) - (level - 1)]
    return ".".join(parts + ([module] if module else []))


def _dotted(node) -> str | None:
    """``a.b.c`` for the expression ``a.b.c``, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return None if head is None else f"{head}.{node.attr}"
    return None


def _decorator_name(node) -> str | None:
    """``kernel`` for ``@kernel``, ``@engine.kernels.kernel`` and ``@overload(...)`` alike."""
    if isinstance(node, ast.Call):
        node = node.func
    return getattr(node, "id", getattr(node, "attr", None))


def test_no_python_code_calls_an_inner_kernel():
    # an inner kernel has no entry point for Python: outside kernels' bodies, code calls a @kernel or the inner
    # kernel's twin (engine.kernels.callable_from_python); imports are followed to the dispatcher objects themselves
    # (re-exports, relative imports and module aliases included)
    from engine.kernels import InnerDispatcher

    modules = _kernel_package_modules()

    def is_inner(module: str, attr: str) -> bool:
        return module in modules and isinstance(getattr(modules[module], attr, None), InnerDispatcher)

    assert sum(is_inner(m, a) for m in modules for a in vars(modules[m])) > 100  # something to look for
    kernel_decorators = {"kernel", "inner_kernel", "inline_kernel", "overload"}
    offences = []
    for path in sorted(REPO.glob("**/*.py")):
        rel = path.relative_to(REPO)
        if rel.parts[0].startswith(".") or rel.parts[0] in ("build", "node_modules"):
            continue
        tree = ast.parse(path.read_text())
        own = ".".join(rel.with_suffix("").parts).removesuffix(".__init__")
        names = {a: f"{own}.{a}" for a in vars(modules[own]) if is_inner(own, a)} if own in modules else {}
        aliases = {}  # a local name bound to a module
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = _imported_module(own, path.name == "__init__.py", node.module, node.level)
                for a in node.names:
                    local = a.asname or a.name
                    if f"{base}.{a.name}" in modules:
                        aliases[local] = f"{base}.{a.name}"
                    elif is_inner(base, a.name):
                        names[local] = f"{base}.{a.name}"
            elif isinstance(node, ast.Import):
                for a in node.names:
                    aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        # kernels' bodies (a rule hook's numba overload holds kernel code too), and the arguments of
        # callable_from_python (a twin for Python) and of CompileJob (compiled, not called)
        skip = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and any(
                    _decorator_name(d) in kernel_decorators for d in node.decorator_list):
                skip.update(id(sub) for sub in ast.walk(node))
            elif isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("callable_from_python",
                                                                                   "CompileJob"):
                skip.update(id(sub) for arg in node.args for sub in ast.walk(arg))
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in names:
                offences.append(f"{rel}:{node.lineno} {names[node.id]}")
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                head = _dotted(node.value)
                if head is not None:
                    first, _, rest = head.partition(".")
                    module = ".".join(x for x in (aliases.get(first, first), rest) if x)
                    if is_inner(module, node.attr):
                        offences.append(f"{rel}:{node.lineno} {module}.{node.attr}")
    assert offences == []


RECURSIVE = textwrap.dedent("""
    from engine.kernels import kernel

    @kernel
    def fib(n, a, b, c, d):
        # five recursive call sites: numba re-typed the whole function for each one, in every round of inference
        if n < 2:
            return n
        zero = n * 0  # a literal argument would ask for another signature of fib while fib is being compiled
        return fib(n - 1, a, b, c, d) + fib(n - 2, a, b, c, d) + zero * (fib(zero, a, b, c, d) + fib(zero, b, a, c, d)
                                                                          + fib(zero, c, b, a, d))

    @kernel
    def drifts(n):
        # the first return type found for its recursive calls is an integer, yet it returns floats
        if n <= 0:
            return 1
        return drifts(n - 1) * 0.5
""")


def test_a_recursive_kernel_is_typed_once_and_one_whose_return_type_widens_as_numba_does(tmp_path, monkeypatch):
    from numba.core import typeinfer

    (tmp_path / "recursive_kernels.py").write_text(RECURSIVE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    import recursive_kernels as k

    clones = []
    copy = typeinfer.TypeInferer.copy
    monkeypatch.setattr(typeinfer.TypeInferer, "copy", lambda self, **kw: clones.append(kw) or copy(self, **kw))
    assert k.fib(np.int64(15), 0, 0, 0, 0) == 610
    assert len(clones) == 1  # one partial re-typing, not one per call site and round (10 without the memo)
    assert k.drifts(np.int64(3)) == 0.125  # typed again without the memo, as numba alone types it


def test_measure_times_usi_and_isready_in_a_fresh_engine_process():
    out = io.StringIO()
    times = ucompile.measure_ready(["turncoat"], out=out)
    assert list(times) == ["turncoat"] and all(t > 0 for t in times["turncoat"])
    line = out.getvalue().splitlines()[0]
    assert line.startswith("turncoat     usi -> usiok ") and "isready -> readyok" in line and "cpu" in line


# ------------------------------------------------------------------------------------------ atomic files
def test_open_for_write_leaves_nothing_on_an_interrupt(tmp_path):
    target = tmp_path / "table.bin"
    target.write_bytes(b"old")
    with pytest.raises(KeyboardInterrupt):
        with safecache.open_for_write(target) as f:
            f.write(b"new, half")
            raise KeyboardInterrupt
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["table.bin"]
    safecache.atomic_write_bytes(target, b"new")
    assert target.read_bytes() == b"new"


def test_sweep_removes_temporaries_but_not_cache_files(tmp_path):
    (tmp_path / "f-1.py311.nbi").write_bytes(b"index")
    (tmp_path / "f-1.py311.1.nbc.tmp.00112233445566aa").write_bytes(b"half")
    removed = safecache.sweep_temporary_files(tmp_path)
    assert [p.name for p in removed] == ["f-1.py311.1.nbc.tmp.00112233445566aa"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f-1.py311.nbi", safecache.LOCK_NAME]


def test_numba_writes_go_through_the_safe_writer():
    from numba.core.caching import IndexDataCacheFile

    assert safecache.install()
    assert IndexDataCacheFile.save is safecache._save
    assert IndexDataCacheFile._open_for_write is safecache._open_for_write_method


def _cache_file(directory: Path):
    from numba.core.caching import IndexDataCacheFile

    return IndexDataCacheFile(cache_path=str(directory), filename_base="kern-10.py311", source_stamp=(1.0, 100))


def test_a_kill_between_data_and_index_leaves_an_index_naming_only_written_files(tmp_path, monkeypatch):
    cf = _cache_file(tmp_path)
    cf.save("sig-a", ("payload", "a"))

    def interrupted(self, name, data):
        raise KeyboardInterrupt  # the process dies while the data file is being written

    from numba.core.caching import IndexDataCacheFile

    monkeypatch.setattr(IndexDataCacheFile, "_save_data", interrupted)
    with pytest.raises(KeyboardInterrupt):
        cf.save("sig-b", ("payload", "b"))
    monkeypatch.undo()
    index = _cache_file(tmp_path)._load_index()
    assert index == {"sig-a": "kern-10.py311.1.nbc"}  # numba's own order had written sig-b's entry first
    assert _cache_file(tmp_path).load("sig-a") == ("payload", "a")
    assert not [p for p in tmp_path.iterdir() if safecache.TMP_INFIX in p.name]


CONCURRENT_SAVER = textwrap.dedent("""
    import sys, time
    import engine.kernels  # installs the safe writer
    from numba.core.caching import IndexDataCacheFile
    original = IndexDataCacheFile._load_index

    def slow_load_index(self):  # widen the read-modify-write window of the index to certain overlap
        index = original(self)
        time.sleep(1.0)
        return index

    IndexDataCacheFile._load_index = slow_load_index
    cf = IndexDataCacheFile(cache_path=sys.argv[1], filename_base="kern-10.py311", source_stamp=(1.0, 100))
    cf.save(sys.argv[2], ("payload", sys.argv[2]))
""")


def test_two_processes_adding_signatures_at_once_keep_both(tmp_path):
    # Without the lock both read an empty index, both take "1.nbc", and the index that stays names a data file
    # that may hold the other process's code. With it, the second reads the first's index.
    script = tmp_path / "saver.py"
    script.write_text(CONCURRENT_SAVER)
    env = _env(tmp_path / "unused")
    procs = [subprocess.Popen([sys.executable, str(script), str(tmp_path / "c"), key], env=env)
             for key in ("sig-a", "sig-b")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    cf = _cache_file(tmp_path / "c")
    index = cf._load_index()
    assert set(index) == {"sig-a", "sig-b"} and len(set(index.values())) == 2
    assert cf.load("sig-a") == ("payload", "sig-a") and cf.load("sig-b") == ("payload", "sig-b")


KERNELS = textwrap.dedent("""
    from engine.kernels import kernel

    @kernel
    def poly(x):
        acc = x
        for i in range(7):
            acc = acc * x + i
        return acc

    @kernel
    def twice(x):
        return poly(x) + poly(x + 1)
""")
COMPILER = textwrap.dedent("""
    import sys
    import numpy as np
    import kernels_under_test as k
    values = (np.int64(3), np.float64(3.0), np.int32(3), np.complex128(3.0))
    for v in values:
        assert k.twice(v) == k.twice.py_func(v), v
    print(sum(sum(d._cache_hits.values()) for d in (k.poly, k.twice)), flush=True)
""")


def test_a_compile_killed_midway_never_breaks_the_next_start(tmp_path):
    (tmp_path / "kernels_under_test.py").write_text(KERNELS)
    (tmp_path / "compiler.py").write_text(COMPILER)
    cache = tmp_path / "cache"
    env = _env(cache, tmp_path)
    run = [sys.executable, str(tmp_path / "compiler.py")]
    p = subprocess.Popen(run, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    # numba writes a signature's data file, then the index naming it: wait for the first index, so something
    # saved is loadable, and kill there, amid the other signatures' compiles (waiting for the first data file
    # raced: a kill between the two writes left no index, and CI hit that window)
    while not list(cache.glob("**/*.nbi")) and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    p.send_signal(signal.SIGKILL)
    assert p.wait() == -signal.SIGKILL, f"the compile ended before it could be killed: {p.stderr.read()[-2000:]!r}"
    p.stderr.close()
    for index in cache.glob("**/*.nbi"):  # every data file an index names was written whole
        with open(index, "rb") as f:
            pickle.load(f)
            _stamp, overloads = pickle.loads(f.read())
        for name in overloads.values():
            assert (index.parent / name).is_file(), name
    safecache.sweep_temporary_files(next(cache.glob("**/*.nbi")).parent)
    done = subprocess.run(run, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr  # every signature right, loaded or compiled again
    assert int(done.stdout.split()[-1]) > 0  # and what the killed runs saved was loaded
    assert not [q for q in cache.glob("**/*") if safecache.TMP_INFIX in q.name]


# ------------------------------------------------------------------------------------------ project tables
def test_array_cache_builds_once_rebuilds_a_damaged_file_and_drops_old_versions(tmp_path):
    calls = []

    def build():
        calls.append(1)
        return {"a": np.arange(5, dtype=np.int16)}

    old = tmp_path / "table-00000000.npz"
    old.write_bytes(b"an older version")
    path = tmp_path / "table-11111111.npz"
    assert safecache.array_cache(path, build)["a"].tolist() == [0, 1, 2, 3, 4]
    assert safecache.array_cache(path, build)["a"].dtype == np.int16
    assert len(calls) == 1 and not old.exists()
    path.write_bytes(path.read_bytes()[:40])  # damaged (not by us: every write is whole)
    assert safecache.array_cache(path, build)["a"].tolist() == [0, 1, 2, 3, 4]
    assert len(calls) == 2


def test_cache_file_names_the_sources_hash_and_honours_numba_cache_dir(tmp_path, monkeypatch):
    src = tmp_path / "m.py"
    src.write_text("x = 1\n")
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    a = safecache.cache_file(src, "t", [src])
    assert a.parent == tmp_path / "__pycache__" and a.name.startswith("t-") and a.suffix == ".npz"
    src.write_text("x = 2\n")
    assert safecache.cache_file(src, "t", [src]) != a
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "nc"))
    assert safecache.cache_file(src, "t", [src]).parent == tmp_path / "nc"


def test_mawarikudoi_landing_table_from_the_disk_cache_equals_a_fresh_build():
    from search import mawarikudoi as M

    cached = M.rollout_tables().land
    path = safecache.cache_file(M.__file__, "mawarikudoi-land", M.TABLE_SOURCES)
    assert path.is_file()
    assert np.array_equal(cached, M._build_land_table()["land"])


def test_mawarikudoi_race_tables_from_the_disk_cache_equal_a_fresh_build():
    from search import mawarikudoi as M

    cached = M.race_tables()  # the default probabilities: from the disk cache (written now if it was missing)
    assert safecache.cache_file(M.__file__, "mawarikudoi-race", M.TABLE_SOURCES).is_file()
    fresh = M.RaceTables()
    assert sorted(vars(cached)) == sorted(vars(fresh))
    for name, value in vars(fresh).items():
        if name == "seconds":
            continue
        got = getattr(cached, name)
        if isinstance(value, dict):
            assert list(got) == list(value) and all(np.array_equal(got[k], value[k]) for k in value), name
        elif isinstance(value, np.ndarray):
            assert got.dtype == value.dtype and np.array_equal(got, value), name
        else:
            assert got == value, name

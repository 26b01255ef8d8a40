"""numba kernels: functions of numpy arrays and scalars only, cached on disk.

All kernels use :func:`kernel` (called from Python and from kernels) or :func:`inner_kernel` (called only from
kernels: no CPython wrapper), i.e. ``njit(cache=True, nogil=True, _nrt=False, no_cfunc_wrapper=True)``, with one
compile per argument type (:func:`_call_type`); LLVM optimises at ``-O2`` (``NUMBA_OPT``). Turning off numba's
reference counting (NRT) is deliberate: kernels receive namedtuples of many arrays, and with NRT every call between
kernels increments and decrements the count of every array in them, which measured 50-100x slower than the move
generation itself. The price is that kernels may not allocate: every scratch buffer is passed in (see
``PosState.scratch``).
"""
import os
from typing import Any, Callable, NamedTuple

# LLVM at -O2, not numba's default -O3, unless the user set NUMBA_OPT: the kernels compile 10% faster and search
# 6% faster (docs/engine.md, "Compile time"). numba reads it again before every compile.
os.environ.setdefault("NUMBA_OPT", "2")

import numpy as np  # noqa: E402
from numba import njit, typeof, types  # noqa: E402
from numba.core.dispatcher import Dispatcher  # noqa: E402
from numba.core.registry import CPUDispatcher  # noqa: E402

from . import recursion, safecache  # noqa: E402

safecache.install()  # numba's cache writes locked, data before index, before any kernel is saved (safecache.py)
recursion.install()  # a self-recursive kernel typed once, not once per recursive call (recursion.py)

# no_cfunc_wrapper: numba would also build a C-callable wrapper for every kernel, which nothing here calls (it took
# 6% of shogi's cold warm-up when measured, 2026-12-06)
_JIT_OPTIONS = dict(nogil=True, _nrt=False, no_cfunc_wrapper=True)  # njit's, besides cache
_njit = njit(cache=True, **_JIT_OPTIONS)

def _call_type(ty: types.Type) -> types.Type:
    """The type a kernel is compiled for when called from another kernel with an argument of type ``ty``: a
    constant (``Literal[int](0)``, ``Literal[bool](True)``) as its plain type and a narrow signed integer as int64.
    Without this numba compiles the callee once per literal and per width at the call sites (``_emit`` 24 times for
    shogi alone), each a full compile of the callee and of everything it calls; the arithmetic is the same, since
    numba computes on narrow integers in int64 anyway."""
    ty = types.unliteral(ty)
    if isinstance(ty, types.Integer) and ty.signed and ty.bitwidth < 64:
        return types.int64
    return ty


def _one_signature_per_type(disp: Dispatcher) -> None:
    """Make the kernel-to-kernel calls of dispatcher ``disp`` ask for :func:`_call_type` signatures: a call site
    with ``f(x, 0)`` and one with ``f(x, i)`` share one compile (the move generator's ``mode`` included: one
    generator for every mode, see ``docs/engine.md``)."""
    resolve = disp.get_call_template

    def get_call_template(args, kws):
        return resolve(tuple(_call_type(a) for a in args), {k: _call_type(v) for k, v in kws.items()})

    disp.get_call_template = get_call_template


def kernel(func: Callable[..., Any]) -> Dispatcher:
    """``njit(cache=True, nogil=True, _nrt=False, no_cfunc_wrapper=True)``, compiled once per argument type rather
    than once per constant or integer width it is called with from other kernels (see :func:`_call_type`)."""
    disp = _njit(func)
    _one_signature_per_type(disp)
    return disp


class InnerDispatcher(CPUDispatcher):
    """The dispatcher of an :func:`inner_kernel`. Compiled without numba's CPython wrapper, an inner kernel has no
    entry point for Python; numba would jump to the missing one (a segfault), so a call from Python raises."""

    def __call__(self, *args, **kwargs):
        func = self.py_func
        raise TypeError(f"{func.__module__}.{func.__qualname__} is an inner kernel, called only from kernels; "
                        "make it a @kernel to call it from Python")


def inner_kernel(func: Callable[..., Any]) -> InnerDispatcher:
    """A :func:`kernel` that only other kernels call, compiled without numba's CPython wrapper (the code that
    unboxes each argument from Python objects; ``no_cpython_wrapper=True``). The wrappers of shogi's internal
    kernels were a quarter of its cold compile: each unboxes every array of its namedtuple arguments, and is
    optimised and turned into machine code like the kernel itself. A test (``tests/test_compile.py``) checks that
    no Python code outside kernels refers to an inner kernel."""
    options = dict(_JIT_OPTIONS, nopython=True, no_cpython_wrapper=True)
    disp = InnerDispatcher(py_func=func, locals={}, targetoptions=options)
    disp.enable_caching()
    _one_signature_per_type(disp)
    return disp


_twins: dict[Dispatcher, Dispatcher] = {}


def callable_from_python(inner: Dispatcher) -> Dispatcher:
    """A twin of the inner kernel ``inner`` that Python can call, for tests and tools that probe one piece of the
    engine: the same function compiled with numba's CPython wrapper, in memory only (cached, it would share the inner
    kernel's cache files). Kernels go on calling ``inner``. A :func:`kernel` is returned as it is."""
    if not isinstance(inner, InnerDispatcher):
        return inner
    twin = _twins.get(inner)
    if twin is None:
        twin = _twins[inner] = njit(**_JIT_OPTIONS)(inner.py_func)
    return twin


class CompileJob(NamedTuple):
    """A signature of a kernel (inner or not) to compile ahead, without calling it: the one another kernel asks
    for when it calls ``kernel`` with values of the types of ``args`` (:func:`_call_type` of each)."""
    kernel: Dispatcher
    args: tuple

    def signature(self) -> tuple:
        return tuple(_call_type(typeof(a)) for a in self.args)

    def compile(self) -> None:
        """Compile the signature, or load it from the disk cache."""
        self.kernel.compile(self.signature())


#: A small hot helper that numba inlines into every caller (``inline="always"``, at numba's IR level). A call
#: between kernels passes each array argument as a dozen scalars and LLVM does not inline across kernels: a
#: per-piece helper called 20 times a position measured 3x slower as a call than inlined. Every inline site is
#: compiled again with its caller, so this is for a few short helpers with one or two call sites.
inline_kernel = njit(cache=True, inline="always", **_JIT_OPTIONS)


class DirectCall:
    """A kernel called from Python without numba's per-call type dispatch.

    The dispatcher types every argument on every call; for the search's kernels, whose arguments are namedtuples of
    a few dozen arrays, that measured ~13 us a call, against ~9 us for the call itself on a node that the
    transposition table settles at once. The first call goes through the dispatcher (which loads or compiles the
    overload for its types); later calls go straight to that overload's compiled entry point.

    The entry point does not check types, so every call must pass arguments of the first call's types (the same
    dtypes, dimensions and contiguity, the same namedtuple classes): use it only where the caller owns the
    arguments, like a searcher calling a kernel with its own buffers."""

    __slots__ = ("dispatcher", "_call")

    def __init__(self, dispatcher) -> None:
        self.dispatcher = dispatcher
        self._call = self._first

    def _first(self, *args):
        result = self.dispatcher(*args)
        types = tuple(self.dispatcher.typeof_pyval(a) for a in args)
        self._call = self.dispatcher.overloads[types].entry_point
        return result

    def __call__(self, *args):
        return self._call(*args)


@inline_kernel
def hash_slot(key, n_entries):
    """The slot of a 64-bit position ``key`` in a hash table of ``n_entries`` (a power of two): the key's low bits.
    One definition for the transposition tables, the mate search's table and the evaluation hash."""
    return np.int64(key & np.uint64(n_entries - 1))

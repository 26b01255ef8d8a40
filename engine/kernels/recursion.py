"""Type a self-recursive kernel once, not once per recursive call site and inference round.

numba types a call of a kernel to itself by cloning the whole type inference of the function being compiled and
running it again without the recursive calls (``TypeInferer.return_types_from_partial``), to learn the return type.
It does so every time it resolves such a call: for each recursive call site, in every round of propagation until
the types settle. The search kernel (``search.kernels.search``) has eleven recursive call sites and took four rounds:
44 full re-typings of a 470-line kernel, 22 of the 36 seconds its cold compile took (measured on this machine).

:func:`install` makes the type inference of a self-recursive function keep the first return type such a clone
finds (mutual recursion is typed as numba does it). When the inference ends, the function's own return type is
checked against it; if they differ (a function whose return type widened on the way), or if typing failed after the
memo answered, the function is typed again the way numba does it, so every kernel compiles to what it did before.
The change wraps numba's internals (0.59-0.68); if the names it wraps are missing, nothing is installed and compiles
are only slower.
"""
from __future__ import annotations

import threading

_MEMO = "_fantasista_partial_return_type"
_state = threading.local()  # .exact: > 0 while a function is typed again without the memo; .served: memo answers


class _ReturnTypeDrifted(Exception):
    """The return type a memo gave the recursive calls is not the function's: type it again without the memo."""


def install() -> bool:
    """Install the memo into numba's type inference (once per process); return whether it is installed."""
    try:
        from numba.core import errors, typed_passes, typeinfer
    except ImportError:  # pragma: no cover - numba is a dependency
        return False
    inferer = typeinfer.TypeInferer
    if getattr(inferer, "_fantasista_recursion_memo", False):
        return True
    partial = getattr(inferer, "return_types_from_partial", None)
    unify = getattr(inferer, "unify", None)
    stage = getattr(typed_passes, "type_inference_stage", None)
    if partial is None or unify is None or stage is None:
        return False

    def return_types_from_partial(self):
        callstack = self.context.callstack
        self_recursion = len(callstack) > 0 and callstack[0].typeinfer is self  # [0]: the function being typed
        if getattr(_state, "exact", 0) or not self_recursion:
            return partial(self)
        known = self.__dict__.get(_MEMO)
        if known is None:
            known = partial(self)
            if known is not None:
                self.__dict__[_MEMO] = known
        else:
            _state.served = getattr(_state, "served", 0) + 1
        return known

    def checked_unify(self, *args, **kwargs):
        typemap, return_type, calltypes = unify(self, *args, **kwargs)
        known = self.__dict__.get(_MEMO)
        if known is not None and return_type != known:
            raise _ReturnTypeDrifted(self.func_id.func_qualname)
        return typemap, return_type, calltypes

    def type_inference_stage(*args, **kwargs):
        served = getattr(_state, "served", 0)
        try:
            return stage(*args, **kwargs)
        except _ReturnTypeDrifted:
            pass
        except errors.TypingError:
            if getattr(_state, "served", 0) == served:
                raise  # the memo had no part in it
        # out of the except blocks, so that an error of the exact typing is not shown as raised while handling ours
        _state.exact = getattr(_state, "exact", 0) + 1
        try:
            return stage(*args, **kwargs)
        finally:
            _state.exact -= 1

    return_types_from_partial.__doc__ = partial.__doc__
    inferer.return_types_from_partial = return_types_from_partial
    inferer.unify = checked_unify
    typed_passes.type_inference_stage = type_inference_stage
    inferer._fantasista_recursion_memo = True
    return True

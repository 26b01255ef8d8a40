"""USI ``info`` lines: one format for every searcher's :class:`search.Info`."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from search.interface import Info


def format_info(info: Info, pos: Any = None) -> str:
    """``info depth .. pv .. string ..`` for a :class:`search.Info`. ``pos``: the root position when the line's moves
    are kernel move codes (the shogi-family search); without it they are action tokens, printed as they are."""
    parts = [f"info depth {info.depth} seldepth {max(info.seldepth, info.depth)} time {info.time_ms} "
             f"nodes {info.nodes} nps {info.nps}"]
    if info.hashfull is not None:
        parts.append(f"hashfull {info.hashfull}")
    if info.mate is not None:
        parts.append(f"score mate {info.mate}")
    elif info.score_cp is not None:
        parts.append(f"score cp {info.score_cp}")
    if parts[-1].startswith("score") and info.bound in ("lowerbound", "upperbound"):
        parts.append(info.bound)
    parts.append(f"multipv {info.multipv}")
    if info.pv:
        if pos is not None:
            from search.interface import pv_tokens

            parts.append("pv " + " ".join(pv_tokens(pos, info.pv)))
        else:
            parts.append("pv " + " ".join(str(m) for m in info.pv))
    if info.string:
        parts.append(f"string {info.string}")
    return " ".join(parts)

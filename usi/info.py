"""USI ``info`` lines: one format for every searcher's :class:`search.SearchInfo` (the USI loop and the game
thinkers of :mod:`usi.games` print them the same way)."""
from __future__ import annotations


def format_info(info, pos) -> str:
    """``info depth .. pv ..`` for a :class:`search.SearchInfo`."""
    parts = [f"info depth {info.depth} seldepth {max(info.seldepth, info.depth)} time {info.time_ms} "
             f"nodes {info.nodes} nps {info.nps} hashfull {info.hashfull}"]
    if info.mate is not None:
        parts.append(f"score mate {info.mate}")
    elif info.score_cp is not None:
        parts.append(f"score cp {info.score_cp}")
    if parts[-1].startswith("score") and info.bound in ("lowerbound", "upperbound"):
        parts.append(info.bound)
    parts.append(f"multipv {info.multipv}")
    if info.pv:
        p, moves = pos.copy(), []
        for code in info.pv:
            moves.append(p.move_usi(int(code)))
            p.push_unchecked(int(code))
        parts.append("pv " + " ".join(moves))
    return " ".join(parts)

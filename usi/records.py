"""Game records: one JSON line per game, and KIF / CSA files for standard shogi.

The JSON record (a plain dict, written by :func:`write_jsonl`) is the source of truth; KIF and CSA are renderings
of it that ShogiHome, ShogiGUI and Kifu for Windows open, and that ``cshogi.KIF.Parser`` / ``cshogi.CSA.Parser``
read back. Keys of a record:

``game, pair, variant, seed, sente, gote`` (engine names), ``start_sfen`` (the base position), ``opening``
(``{"index", "line", "plies"}``: the first ``plies`` moves came from the opening book), ``moves`` (USI strings,
opening included), ``events`` (``[[index_in_history, token], ...]``, chance events such as ``roll=13``),
``times`` (seconds per move, ``null`` for book moves), ``scores`` (the mover's reported ``score`` in centipawns
from its own point of view, mates as ±(32000-n); ``null`` when none), ``depths``, ``result`` (``"sente"``,
``"gote"``, ``"draw"``), ``winner`` (engine name or ``null``), ``reason`` (see :data:`REASONS`), ``detail``
(free text), ``final_sfen``, ``started`` (ISO time), ``duration`` (seconds).
"""
from __future__ import annotations

import datetime as _dt
import json
import os
from pathlib import Path
from typing import IO, Iterable, Iterator, Optional

#: Why a game ended, as recorded in ``record["reason"]``.
REASONS = ("checkmate", "no legal moves", "resign", "sennichite", "perpetual check", "entering king",
           "illegal declaration", "illegal move", "time forfeit", "crash", "handshake", "setup", "max plies",
           "adjudication")

STARTPOS_SFEN = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1"

_KIF_PIECES = {"P": "歩", "L": "香", "N": "桂", "S": "銀", "G": "金", "B": "角", "R": "飛", "K": "玉",
               "+P": "と", "+L": "成香", "+N": "成桂", "+S": "成銀", "+B": "馬", "+R": "龍"}
_CSA_PIECES = {"P": "FU", "L": "KY", "N": "KE", "S": "GI", "G": "KI", "B": "KA", "R": "HI", "K": "OU",
               "+P": "TO", "+L": "NY", "+N": "NK", "+S": "NG", "+B": "UM", "+R": "RY"}
_ZEN_DIGITS = "０１２３４５６７８９"
_KANJI_DIGITS = "〇一二三四五六七八九"
_RANKS = "abcdefghi"


# ------------------------------------------------------------------ files
def write_text_atomic(path: str | Path, text: str, encoding: str = "utf-8") -> Path:
    """Write ``text`` to a temporary file beside ``path``, then rename it over ``path``: a reader, or a run killed
    half-way, sees the old file or the new one, never a part of either."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding=encoding)
    os.replace(tmp, path)
    return path


# ------------------------------------------------------------------ JSON lines
def write_jsonl(record: dict, out: IO[str] | str | Path) -> None:
    """Append one record as one JSON line to an open file or a path."""
    line = json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"
    if isinstance(out, (str, Path)):
        with open(out, "a", encoding="utf-8") as f:
            f.write(line)
    else:
        out.write(line)
        out.flush()


def read_jsonl(path: str | Path) -> Iterator[dict]:
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


# ------------------------------------------------------------- replay helpers
def _replay(record: dict) -> Iterator[tuple[int, str, str, bool, Optional[str]]]:
    """Yield ``(turn, usi, piece_before, promotes, captured)`` per move, replaying on :class:`engine.Position`."""
    from engine import Position  # the rules layer (numba) is imported only when a record is rendered

    pos = Position.from_sfen(record["start_sfen"], record.get("variant", "shogi"))
    g = pos.variant.geometry
    for usi in record["moves"]:
        turn = pos.turn
        if "*" in usi:
            piece, promotes = usi[0], False
        else:
            piece = pos.piece_at(g.parse_square(usi[:2]))[0]
            promotes = usi.endswith("+")
        pos.push(usi)
        yield turn, usi, piece, promotes, None


def _kif_square(sq: str) -> str:
    return _ZEN_DIGITS[int(sq[0])] + _KANJI_DIGITS[_RANKS.index(sq[1]) + 1]


def _clock(seconds: float) -> tuple[int, int, int]:
    total = int(seconds) if seconds > 0 else 0
    h, rest = divmod(total, 3600)
    return h, rest // 60, rest % 60


def _ended_by(record: dict) -> tuple[int, str]:
    """(loser or -1 for draw / winner-less, kind) where kind picks the KIF/CSA terminal."""
    result, reason = record["result"], record["reason"]
    loser = {"sente": 1, "gote": 0}.get(result, -1)
    return loser, reason


def _kif_terminal(record: dict, to_move: int) -> tuple[str, str]:
    """(terminal move word, summary line) for KIF."""
    loser, reason = _ended_by(record)
    n = len(record["moves"])
    side = ("先手", "後手")
    if loser < 0:
        word = "千日手" if reason == "sennichite" else "持将棋"
        return word, f"まで{n}手で{word}"
    winner = 1 - loser
    if reason == "resign" or reason == "adjudication":
        word = "投了"
    elif reason in ("checkmate", "no legal moves"):
        word = "詰み"
    elif reason == "time forfeit":
        word = "切れ負け"
    elif reason == "entering king":
        return "入玉勝ち", f"まで{n}手で{side[winner]}の入玉勝ち"
    else:  # fouls: illegal move or declaration, perpetual check, crash, handshake, setup
        word = "反則負け" if loser == to_move else "反則勝ち"
        return word, f"まで{n}手で{side[loser]}の反則負け"
    return word, f"まで{n}手で{side[winner]}の勝ち"


def to_kif(record: dict) -> str:
    """The record as KIF text (Kakinoki format; write it in cp932 with :func:`write_kif`)."""
    started = record.get("started")
    try:
        when = _dt.datetime.fromisoformat(started) if started else _dt.datetime.now()
    except ValueError:
        when = _dt.datetime.now()
    lines = ["# KIF形式棋譜ファイル written by fantasista-match", f"開始日時：{when:%Y/%m/%d %H:%M:%S}"]
    if record.get("event"):
        lines.append(f"棋戦：{record['event']}")
    start = record["start_sfen"]
    if start.split()[:3] == STARTPOS_SFEN.split()[:3]:
        lines.append("手合割：平手")
    else:
        lines += _bod(start)
    lines += [f"先手：{record['sente']}", f"後手：{record['gote']}", "手数----指手---------消費時間--"]
    totals = [0.0, 0.0]
    prev_to = None
    turn = 0 if start.split()[1] == "b" else 1
    times = record.get("times") or []
    for i, (turn, usi, piece, promotes, _) in enumerate(_replay(record)):
        to_sq = usi[-3:-1] if promotes else usi[-2:]
        name = _KIF_PIECES[piece if "*" not in usi else usi[0]]
        where = "同　" if to_sq == prev_to else _kif_square(to_sq)
        if "*" in usi:
            text = f"{where}{name}打"
        else:
            text = f"{where}{name}{'成' if promotes else ''}({usi[0]}{_RANKS.index(usi[1]) + 1})"
        spent = times[i] if i < len(times) and times[i] is not None else 0.0
        totals[turn] += spent
        m, s = divmod(int(spent) if spent > 0 else 0, 60)
        h, tm, ts = _clock(totals[turn])
        lines.append(f"{i + 1:>4} {text:<12}   ({m:>2}:{s:02}/{h:02}:{tm:02}:{ts:02})")
        scores = record.get("scores") or []
        score = scores[i] if i < len(scores) else None
        if score is not None:
            lines.append(f"*評価値 {score if turn == 0 else -score}")
        prev_to = to_sq
        turn = 1 - turn
    word, summary = _kif_terminal(record, turn)
    lines.append(f"{len(record['moves']) + 1:>4} {word:<12}   ( 0:00/00:00:00)")
    if record.get("detail"):
        lines.append(f"*{record['reason']}: {record['detail']}")
    lines.append(summary)
    return "\n".join(lines) + "\n"


def _bod(sfen: str) -> list[str]:
    """A KIF board diagram (BOD) for a non-standard start position."""
    board, side, hands = sfen.split()[:3]
    rows = []
    for row in board.split("/"):
        cells, promoted = [], False
        for ch in row:
            if ch.isdigit():
                cells += [" ・"] * int(ch)
            elif ch == "+":
                promoted = True
            else:
                letter = ("+" if promoted else "") + ch.upper()
                kanji = {"+L": "杏", "+N": "圭", "+S": "全"}.get(letter, _KIF_PIECES[letter])
                cells.append((" " if ch.isupper() else "v") + kanji)
                promoted = False
        rows.append(cells)
    hand = [[], []]
    count = ""
    for ch in ("" if hands == "-" else hands):
        if ch.isdigit():
            count += ch
            continue
        n = int(count or 1)
        count = ""
        hand[0 if ch.isupper() else 1].append(_KIF_PIECES[ch.upper()] + _kanji_count(n))
    out = [f"後手の持駒：{'　'.join(hand[1]) or 'なし'}", "  ９ ８ ７ ６ ５ ４ ３ ２ １",
           "+---------------------------+"]
    for r, cells in enumerate(rows):
        out.append("|" + "".join(cells) + "|" + _KANJI_DIGITS[r + 1])
    out += ["+---------------------------+", f"先手の持駒：{'　'.join(hand[0]) or 'なし'}"]
    if side == "w":
        out.append("後手番")
    return out


def _kanji_count(n: int) -> str:
    """Counts in hands: '' for one, 二..九, 十, 十一..十八."""
    if n <= 1:
        return ""
    return _KANJI_DIGITS[n] if n < 10 else "十" + (_KANJI_DIGITS[n - 10] if n > 10 else "")


def _csa_position(sfen: str) -> list[str]:
    board, side, hands = sfen.split()[:3]
    if board == STARTPOS_SFEN.split()[0] and hands == "-":
        return ["PI", "+" if side == "b" else "-"]
    out = []
    for r, row in enumerate(board.split("/")):
        cells, promoted = [], False
        for ch in row:
            if ch.isdigit():
                cells += [" * "] * int(ch)
            elif ch == "+":
                promoted = True
            else:
                cells.append(("+" if ch.isupper() else "-") + _CSA_PIECES[("+" if promoted else "") + ch.upper()])
                promoted = False
        out.append(f"P{r + 1}" + "".join(cells))
    hand = ["", ""]
    count = ""
    for ch in ("" if hands == "-" else hands):
        if ch.isdigit():
            count += ch
            continue
        hand[0 if ch.isupper() else 1] += ("00" + _CSA_PIECES[ch.upper()]) * int(count or 1)
        count = ""
    for c, sign in enumerate("+-"):
        if hand[c]:
            out.append(f"P{sign}{hand[c]}")
    out.append("+" if side == "b" else "-")
    return out


def to_csa(record: dict) -> str:
    """The record as CSA text (version 2.2)."""
    lines = ["'CSA record written by fantasista-match", "V2.2", f"N+{record['sente']}", f"N-{record['gote']}"]
    if record.get("started"):
        lines.append(f"$START_TIME:{record['started'][:19].replace('-', '/').replace('T', ' ')}")
    lines += _csa_position(record["start_sfen"])
    times = record.get("times") or []
    turn = 0 if record["start_sfen"].split()[1] == "b" else 1
    for i, (turn, usi, piece, promotes, _) in enumerate(_replay(record)):
        sign = "+-"[turn]
        if "*" in usi:
            text = f"{sign}00{usi[2]}{_RANKS.index(usi[3]) + 1}{_CSA_PIECES[usi[0]]}"
        else:
            after = ("+" + piece) if promotes else piece
            text = (f"{sign}{usi[0]}{_RANKS.index(usi[1]) + 1}{usi[2]}{_RANKS.index(usi[3]) + 1}"
                    f"{_CSA_PIECES[after]}")
        spent = times[i] if i < len(times) and times[i] is not None else 0.0
        lines.append(f"{text},T{int(spent)}")
        turn = 1 - turn
    loser, reason = _ended_by(record)
    if loser < 0:
        lines.append("%SENNICHITE" if reason == "sennichite" else "%JISHOGI")
    elif reason in ("resign", "adjudication"):
        lines.append("%TORYO")
    elif reason in ("checkmate", "no legal moves"):
        lines.append("%TSUMI")
    elif reason == "time forfeit":
        lines.append("%TIME_UP")
    elif reason == "entering king":
        lines.append("%KACHI")
    else:
        lines.append(f"%{'+-'[loser]}ILLEGAL_ACTION")
    lines.append(f"'result {record['result']} by {reason}" + (f": {record['detail']}" if record.get("detail") else ""))
    return "\n".join(lines) + "\n"


def write_kif(record: dict, path: str | Path) -> Path:
    """Write KIF in cp932 (Shift_JIS, what ``.kif`` means to ShogiHome and cshogi); ``.kifu`` is UTF-8."""
    path = Path(path)
    encoding = "utf-8" if path.suffix == ".kifu" else "cp932"
    path.write_text(to_kif(record), encoding=encoding, errors="replace")
    return path


def write_csa(record: dict, path: str | Path) -> Path:
    path = Path(path)
    path.write_text(to_csa(record), encoding="utf-8")
    return path


def write_game_files(record: dict, directory: str | Path, formats: Iterable[str] = ("kif", "csa")) -> list[Path]:
    """Write ``<directory>/<game>.kif`` / ``.csa`` for a standard-shogi record; other variants get none."""
    if record.get("variant", "shogi") != "shogi":
        return []
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    stem = f"game-{record['game']:05d}"
    out = []
    if "kif" in formats:
        out.append(write_kif(record, directory / f"{stem}.kif"))
    if "csa" in formats:
        out.append(write_csa(record, directory / f"{stem}.csa"))
    return out

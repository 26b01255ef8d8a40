"""Reading KIF and CSA records of standard shogi back into USI moves (the writers are in :mod:`usi.records`).

Enough for what ShogiHome, ShogiGUI and our own match runner write: KIF (Kakinoki) with ``手合割：平手`` or a
board diagram (BOD), CSA V2.x with ``PI`` or ``P1``..``P9`` lines and ``P+``/``P-`` hands. Moves are only parsed
here; their legality is checked when the session replays them.

>>> parse_record("手合割：平手\\n手数----指手---------消費時間--\\n   1 ７六歩(77)   ( 0:00/00:00:00)\\n"
...              "   2 ３四歩(33)\\n   3 ２二角成(88)\\n   4 同　銀(31)\\n   5 ５五角打\\n")
(None, ['7g7f', '3c3d', '8h2b+', '3a2b', 'B*5e'])
>>> parse_record("V2.2\\nPI\\n+\\n+7776FU,T0\\n-3334FU\\n%TORYO\\n")
(None, ['7g7f', '3c3d'])
"""
from __future__ import annotations

import re

RANKS = "abcdefghi"
ZEN = "０１２３４５６７８９"
KANJI_NUM = "〇一二三四五六七八九"
KIF_PIECE = {"歩": "P", "香": "L", "桂": "N", "銀": "S", "金": "G", "角": "B", "飛": "R", "玉": "K", "王": "K",
             "と": "+P", "成香": "+L", "杏": "+L", "成桂": "+N", "圭": "+N", "成銀": "+S", "全": "+S", "馬": "+B",
             "龍": "+R", "竜": "+R"}
CSA_PIECE = {"FU": "P", "KY": "L", "KE": "N", "GI": "S", "KI": "G", "KA": "B", "HI": "R", "OU": "K",
             "TO": "+P", "NY": "+L", "NK": "+N", "NG": "+S", "UM": "+B", "RY": "+R"}
STARTPOS = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1"
_KIF_MOVE = re.compile(r"^\s*[0-9]+\s+(同\s*|[１-９][一二三四五六七八九])\s*"
                       r"(成香|成桂|成銀|[歩香桂銀金角飛玉王と杏圭全馬龍竜])(不成|成)?(打)?\s*(\(([0-9])([0-9])\))?")
_KIF_END = re.compile(r"^\s*[0-9]+\s+(投了|詰み|中断|千日手|持将棋|切れ負け|反則勝ち|反則負け|入玉勝ち|不詰|"
                      r"トライ|封じ手|時間切れ)")


class RecordError(ValueError):
    """A record that cannot be read."""


def parse_record(text: str) -> tuple[str | None, list[str]]:
    """(start SFEN or ``None`` for the standard start, USI moves) of a KIF or CSA text."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if any(re.match(r"^(V2|PI|P1|[+-][0-9]{4}[A-Z]{2})", ln) for ln in lines):
        return parse_csa(lines)
    return parse_kif(lines)


def _sq(file: int, rank: int) -> str:
    return f"{file}{RANKS[rank - 1]}"


def parse_kif(lines: list[str]) -> tuple[str | None, list[str]]:
    start = None
    bod = [ln for ln in lines if ln.startswith("|")]
    if bod:
        start = _bod_sfen(lines)
    else:
        handicap = next((ln.split("：", 1)[1].strip() for ln in lines if ln.startswith("手合割")), "平手")
        if handicap != "平手":
            raise RecordError(f"handicap {handicap!r} is not supported (only 平手 or a board diagram)")
    moves, prev_to, seen = [], None, False
    for n, ln in enumerate(lines, 1):
        if not ln.strip() or ln.lstrip().startswith(("#", "*", "&")):
            continue
        if _KIF_END.match(ln):
            break
        m = _KIF_MOVE.match(ln)
        if not m:
            if re.match(r"^\s*[0-9]+\s+\S", ln) and seen:
                raise RecordError(f"line {n}: cannot read the move {ln.strip()!r}")
            if re.match(r"^\s*[0-9]+\s+\S", ln) and not ln.strip().startswith("手数"):
                raise RecordError(f"line {n}: cannot read the move {ln.strip()!r}")
            continue
        seen = True
        where, piece, promo, drop, _, ff, fr = m.groups()
        if where.startswith("同"):
            if prev_to is None:
                raise RecordError(f"line {n}: 同 without a previous move")
            to = prev_to
        else:
            to = _sq(ZEN.index(where[0]), KANJI_NUM.index(where[1]))
        if drop:
            letter = KIF_PIECE[piece]
            if letter.startswith("+") or letter == "K":
                raise RecordError(f"line {n}: {piece} cannot be dropped")
            moves.append(f"{letter}*{to}")
        else:
            if ff is None:
                raise RecordError(f"line {n}: a move without its origin square ({ln.strip()!r})")
            moves.append(f"{_sq(int(ff), int(fr))}{to}{'+' if promo == '成' else ''}")
        prev_to = to
    if not seen and not any(_KIF_END.match(ln) for ln in lines) and start is None:
        if not any("手数" in ln or "手合割" in ln for ln in lines):
            raise RecordError("neither a KIF nor a CSA record")
    return start, moves


def _bod_sfen(lines: list[str]) -> str:
    rows = []
    for ln in lines:
        if not ln.startswith("|"):
            continue
        body = ln[1:ln.rindex("|")]
        cells = [body[i:i + 2] for i in range(0, len(body), 2)]
        row, empty = "", 0
        for cell in cells:
            mark, name = cell[0], cell[1:]
            if name == "・":
                empty += 1
                continue
            if name not in KIF_PIECE:
                raise RecordError(f"unknown piece {name!r} in the board diagram")
            letter = KIF_PIECE[name]
            if empty:
                row, empty = row + str(empty), 0
            row += letter.lower() if mark == "v" else letter
        rows.append(row + (str(empty) if empty else ""))
    if len(rows) != 9:
        raise RecordError(f"the board diagram has {len(rows)} ranks, not 9")
    hands = ""
    for prefix, upper in (("先手の持駒", True), ("後手の持駒", False)):
        line = next((ln for ln in lines if ln.startswith(prefix)), "")
        text = line.split("：", 1)[1].strip() if "：" in line else ""
        if text in ("", "なし"):
            continue
        for item in re.split(r"[\s　]+", text):
            if not item:
                continue
            name, count = item[0], item[1:]
            if name not in KIF_PIECE:
                raise RecordError(f"unknown piece {name!r} in hand")
            n = 1 if not count else (10 + (KANJI_NUM.index(count[1]) if len(count) > 1 else 0)
                                     if count.startswith("十") else KANJI_NUM.index(count))
            letter = KIF_PIECE[name]
            hands += (str(n) if n > 1 else "") + (letter if upper else letter.lower())
    side = "w" if any(ln.startswith("後手番") for ln in lines) else "b"
    return f"{'/'.join(rows)} {side} {hands or '-'} 1"


def parse_csa(lines: list[str]) -> tuple[str | None, list[str]]:
    squares: dict[tuple[int, int], str] = _startpos_squares()
    custom = False  # P1..P9 lines seen: the start is not the standard one
    hands, side = "", "b"
    moves: list[str] = []
    start: str | None | bool = False  # False until the first move fixes it
    for n, raw in enumerate(lines, 1):
        for ln in raw.split(","):
            ln = ln.strip()
            if not ln or ln.startswith(("'", "V", "N", "$", "T")):
                continue
            if ln == "PI":
                squares, custom = _startpos_squares(), False
                continue
            m = re.match(r"^P([1-9])(.*)$", ln)
            if m:
                if not custom:
                    squares, custom = {}, True
                r, body = int(m.group(1)), m.group(2)
                for i in range(9):
                    cell = body[i * 3:i * 3 + 3]
                    if cell.strip() in ("*", ""):
                        continue
                    if cell[0] not in "+-" or cell[1:] not in CSA_PIECE:
                        raise RecordError(f"line {n}: unknown piece {cell!r}")
                    squares[(9 - i, r)] = cell
                continue
            m = re.match(r"^P([+-])(.*)$", ln)
            if m:
                for i in range(0, len(m.group(2)), 4):
                    item = m.group(2)[i:i + 4]
                    if item[2:] not in CSA_PIECE:
                        raise RecordError(f"line {n}: unknown piece {item!r} in hand")
                    letter = CSA_PIECE[item[2:]]
                    hands += letter if m.group(1) == "+" else letter.lower()
                continue
            if ln in ("+", "-"):
                side = "b" if ln == "+" else "w"
                continue
            if ln.startswith("%"):
                break
            m = re.match(r"^([+-])([0-9])([0-9])([0-9])([0-9])([A-Z]{2})$", ln)
            if not m:
                raise RecordError(f"line {n}: cannot read {ln!r}")
            if start is False:
                start = _sfen(squares, hands, side) if (custom or hands or side != "b") else None
            sign, ff, fr, tf, tr, kind = m.groups()
            if kind not in CSA_PIECE:
                raise RecordError(f"line {n}: unknown piece {kind!r}")
            to = _sq(int(tf), int(tr))
            if ff == "0":
                moves.append(f"{CSA_PIECE[kind]}*{to}")
                squares[(int(tf), int(tr))] = sign + kind
                continue
            before = squares.get((int(ff), int(fr)))
            if before is None:
                raise RecordError(f"line {n}: no piece on {ff}{fr}")
            promotes = CSA_PIECE[kind].startswith("+") and not CSA_PIECE[before[1:]].startswith("+")
            moves.append(f"{_sq(int(ff), int(fr))}{to}{'+' if promotes else ''}")
            squares.pop((int(ff), int(fr)))
            squares[(int(tf), int(tr))] = sign + kind
        else:
            continue
        break
    if start is False:
        if not custom and not any(ln.strip() in ("PI", "+", "-") for ln in lines):
            raise RecordError("neither a KIF nor a CSA record")
        start = _sfen(squares, hands, side) if (custom or hands or side != "b") else None
    return start, moves


def _sfen(squares: dict, hands: str, side: str) -> str:
    rows = []
    for r in range(1, 10):
        row, empty = "", 0
        for f in range(9, 0, -1):
            cell = squares.get((f, r))
            if cell is None:
                empty += 1
                continue
            if empty:
                row, empty = row + str(empty), 0
            letter = CSA_PIECE[cell[1:]]
            row += letter if cell[0] == "+" else letter.lower()
        rows.append(row + (str(empty) if empty else ""))
    counts: dict[str, int] = {}
    for ch in hands:
        counts[ch] = counts.get(ch, 0) + 1
    hand = "".join((str(counts[ch]) if counts[ch] > 1 else "") + ch
                   for ch in "RBGSNLPrbgsnlp" if ch in counts)
    return f"{'/'.join(rows)} {side} {hand or '-'} 1"


def _startpos_squares() -> dict[tuple[int, int], str]:
    out = {}
    inverse = {v: k for k, v in CSA_PIECE.items()}
    for r, row in enumerate(STARTPOS.split()[0].split("/"), 1):
        f = 9
        for ch in row:
            if ch.isdigit():
                f -= int(ch)
                continue
            out[(f, r)] = ("+" if ch.isupper() else "-") + inverse[ch.upper()]
            f -= 1
    return out



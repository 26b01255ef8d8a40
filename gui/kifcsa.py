"""Standard shogi records for the GUI: KIF, KI2 and CSA read into a :class:`Record` (lines of USI moves with their
comments and results) and written back; a pasted SFEN or ``position ...`` line read too.

Why our own reader: ``cshogi`` (KIF/KI2/CSA parsers, a compiled wheel) reads the main line only (its KIF parser
stops at the first result line: no 変化 branches) and its KIF reader drops a board diagram's hands; ``tsshogi``
(ShogiHome's record library) is TypeScript for the page, while records are read on the server, where the session
replays and checks them. So this module reads:

- **KIF** (Kakinoki): ``手合割`` (平手 and every named handicap, :data:`HANDICAPS`) or a board diagram (BOD) with
  hands and ``後手番``; moves with their origin; ``変化：N手`` branches (a branch replaces move N of the last line
  written before it that has a move N, so branches nest); ``*`` comments; the terminal move (投了, 詰み, 中断,
  千日手, 持将棋, 入玉勝ち, 切れ負け, 反則勝ち, 反則負け) or else a ``まで…`` summary line.
- **KI2**: the same header, moves as ``▲７六歩 △同　歩`` told apart by 打 / 左 右 上 引 寄 直 against the legal moves
  (the rules layer), ``変化：N手`` branches, ``*`` comments and the ``まで…`` summary.
- **CSA** (V2.x): ``PI`` (with the removed pieces of a handicap: ``PI82HI22KA``), ``P1``..``P9``, ``P+``/``P-`` hands,
  ``'`` comments (``'*`` too), ``%TORYO``, ``%TSUMI``, ``%CHUDAN``, ``%SENNICHITE``, ``%JISHOGI``, ``%KACHI``,
  ``%TIME_UP``, ``%ILLEGAL_MOVE``, ``%+ILLEGAL_ACTION`` / ``%-ILLEGAL_ACTION``, ``%HIKIWAKE``.
- An SFEN, ``sfen <SFEN> [moves ...]``, ``position startpos [moves ...]``, ``position sfen <SFEN> [moves ...]``
  (:func:`parse_position`; these may be of any board variant).

Moves are only parsed here (KI2's are matched against the legal moves); the session replays every line and refuses
an illegal one. Anything unreadable is a :class:`RecordError` naming the line.

>>> rec = parse_record("手合割：平手\\n手数----指手---------消費時間--\\n   1 ７六歩(77)   ( 0:00/00:00:00)\\n"
...                    "   2 ３四歩(33)\\n   3 ２二角成(88)\\n   4 同　銀(31)\\n   5 ５五角打\\n   6 投了\\n")
>>> rec.start, rec.lines[0].tokens, rec.lines[0].result
(None, ['7g7f', '3c3d', '8h2b+', '3a2b', 'B*5e'], (1.0, 'resign', 'the record ends in 投了'))
>>> parse_record("V2.2\\nPI\\n+\\n+7776FU,T0\\n-3334FU\\n%TORYO\\n").lines[0].result[:2]
(0.0, 'resign')
>>> parse_position("position startpos moves 7g7f 3c3d")
(None, ['7g7f', '3c3d'])
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

RANKS = "abcdefghi"
ZEN = "０１２３４５６７８９"
KANJI_NUM = "〇一二三四五六七八九"
KIF_PIECE = {"歩": "P", "香": "L", "桂": "N", "銀": "S", "金": "G", "角": "B", "飛": "R", "玉": "K", "王": "K",
             "と": "+P", "成香": "+L", "杏": "+L", "成桂": "+N", "圭": "+N", "成銀": "+S", "全": "+S", "馬": "+B",
             "龍": "+R", "竜": "+R"}
#: How KIF and KI2 moves name a piece (the letter as an SFEN writes it, ``+`` for promoted).
KIF_NAME = {"P": "歩", "L": "香", "N": "桂", "S": "銀", "G": "金", "B": "角", "R": "飛", "K": "玉",
            "+P": "と", "+L": "成香", "+N": "成桂", "+S": "成銀", "+B": "馬", "+R": "龍"}
CSA_PIECE = {"FU": "P", "KY": "L", "KE": "N", "GI": "S", "KI": "G", "KA": "B", "HI": "R", "OU": "K",
             "TO": "+P", "NY": "+L", "NK": "+N", "NG": "+S", "UM": "+B", "RY": "+R"}
STARTPOS = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1"
_HANDICAP_TAIL = "/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1"
#: KIF's 手合割 names and their start positions (the handicap giver, 上手, is gote and moves first).
HANDICAPS = {
    "香落ち": "lnsgkgsn1/1r5b1" + _HANDICAP_TAIL, "右香落ち": "1nsgkgsnl/1r5b1" + _HANDICAP_TAIL,
    "角落ち": "lnsgkgsnl/1r7" + _HANDICAP_TAIL, "飛車落ち": "lnsgkgsnl/7b1" + _HANDICAP_TAIL,
    "飛香落ち": "lnsgkgsn1/7b1" + _HANDICAP_TAIL, "二枚落ち": "lnsgkgsnl/9" + _HANDICAP_TAIL,
    "三枚落ち": "lnsgkgsn1/9" + _HANDICAP_TAIL, "四枚落ち": "1nsgkgsn1/9" + _HANDICAP_TAIL,
    "五枚落ち": "2sgkgsn1/9" + _HANDICAP_TAIL, "左五枚落ち": "1nsgkgs2/9" + _HANDICAP_TAIL,
    "六枚落ち": "2sgkgs2/9" + _HANDICAP_TAIL, "左七枚落ち": "2sgkg3/9" + _HANDICAP_TAIL,
    "右七枚落ち": "3gkgs2/9" + _HANDICAP_TAIL, "八枚落ち": "3gkg3/9" + _HANDICAP_TAIL,
    "十枚落ち": "4k4/9" + _HANDICAP_TAIL,
}
#: A KIF/KI2 terminal word -> (who loses: "mover" the side to move, "other" the side that just moved, None a draw
#: or no result, reason as the session's results name it). 中断 (suspended) leaves the game open.
END_WORDS = {"投了": ("mover", "resign"), "詰み": ("mover", "checkmate"), "切れ負け": ("mover", "time forfeit"),
             "時間切れ": ("mover", "time forfeit"), "反則負け": ("mover", "illegal move"),
             "反則勝ち": ("other", "illegal move"), "入玉勝ち": ("other-declared", "entering king"),
             "トライ": ("other-declared", "try"), "千日手": ("draw", "sennichite"), "持将棋": ("draw", "jishogi"),
             "中断": (None, ""), "不詰": (None, ""), "封じ手": (None, "")}
#: CSA's special moves, as :data:`END_WORDS`.
CSA_ENDS = {"%TORYO": ("mover", "resign"), "%TSUMI": ("mover", "checkmate"), "%TIME_UP": ("mover", "time forfeit"),
            "%ILLEGAL_MOVE": ("mover", "illegal move"), "%+ILLEGAL_ACTION": ("sente", "illegal move"),
            "%-ILLEGAL_ACTION": ("gote", "illegal move"), "%KACHI": ("other-declared", "entering king"),
            "%SENNICHITE": ("draw", "sennichite"), "%JISHOGI": ("draw", "jishogi"), "%HIKIWAKE": ("draw", "draw"),
            "%CHUDAN": (None, ""), "%FUZUMI": (None, ""), "%MATTA": (None, ""), "%ERROR": (None, "")}
_KIF_MOVE = re.compile(r"^\s*([0-9]+)\s+(同\s*|[１-９][一二三四五六七八九])\s*"
                       r"(成香|成桂|成銀|[歩香桂銀金角飛玉王と杏圭全馬龍竜])(不成|成)?(打)?\s*(\(([0-9])([0-9])\))?")
_KIF_END = re.compile(r"^\s*([0-9]+)\s+(" + "|".join(END_WORDS) + ")")
_NUMBERED = re.compile(r"^\s*[0-9]+\s+\S")
_BRANCH = re.compile(r"^変化[：:]\s*([0-9０-９]+)\s*手")
_SUMMARY = re.compile(r"^まで([0-9]+)手(?:目)?で(?:(先手|後手|下手|上手)の(勝ち|反則勝ち|反則負け|入玉勝ち)|(千日手|持将棋|引き分け|中断))")
_KI2_MOVE = re.compile(r"([▲△☗☖])\s*(同\s*|[１-９1-9][一二三四五六七八九])\s*(成香|成桂|成銀|[歩香桂銀金角飛玉王と杏圭全馬龍竜])"
                       r"([左右直]?)([上引寄]?)(不成|成|打)?")
_CSA_LINE = re.compile(r"^(V2|PI|P[1-9+-]|[+-][0-9]{4}[A-Z]{2}|N[+-]|\$|%[A-Z+-])")
_SFEN = re.compile(r"^[0-9A-Za-z+']+(/[0-9A-Za-z+']+)+\s+[bw](\s|$)")


class RecordError(ValueError):
    """A record that cannot be read."""


@dataclass
class Line:
    """One line of play from the start: the main line or a branch (its first ``fork`` moves are its parent's)."""

    tokens: list[str] = field(default_factory=list)
    #: (sente's score 1 / 0.5 / 0, reason, detail) when the record ends this line with a result, else ``None``
    result: Optional[tuple[float, str, str]] = None
    #: comments by the number of moves played before them (0: before the first move)
    comments: dict[int, str] = field(default_factory=dict)
    fork: int = 0
    #: seconds each move took, when the record says (the main line's, for KIF and CSA out)
    times: list = field(default_factory=list)
    #: the record's terminal word (投了 ..., %TORYO ...): a line that ended, even without a result (中断)
    end: str = ""


@dataclass
class Record:
    """A read record: the start (``None`` for the standard one) and its lines, the main line first."""

    start: Optional[str]
    lines: list[Line]
    names: tuple[str, str] = ("", "")


# ------------------------------------------------------------------------------------------ reading
def parse_record(text: str) -> Record:
    """A KIF, KI2 or CSA text as a :class:`Record`; :class:`RecordError` when it is none of them or a line cannot
    be read."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if any(_CSA_LINE.match(ln.strip()) for ln in lines) and not any(_KIF_MOVE.match(ln) for ln in lines):
        return parse_csa(lines)
    if not any(_NUMBERED.match(ln) for ln in lines) and any(_KI2_MOVE.search(ln) for ln in lines):
        return parse_ki2(lines)
    return parse_kif(lines)


def parse_position(text: str) -> Optional[tuple[Optional[str], list[str]]]:
    """(start SFEN or ``None`` for the variant's start, USI moves) of a pasted SFEN, ``sfen ...``, ``position
    startpos [moves ...]`` or ``position sfen ... [moves ...]``; ``None`` when the text is none of them."""
    words = text.split()
    if not words:
        return None
    if words[0] == "position":
        words = words[1:]
        if not words or words[0] not in ("startpos", "sfen"):
            raise RecordError("a position line is 'position startpos [moves ...]' or 'position sfen <SFEN> "
                              "[moves ...]'")
    if words[0] == "startpos":
        start, rest = None, words[1:]
    elif words[0] == "sfen" or _SFEN.match(" ".join(words)):
        body = words[1:] if words[0] == "sfen" else words
        cut = body.index("moves") if "moves" in body else len(body)
        if cut < 2:
            raise RecordError("an SFEN needs at least its board and the side to move ('b' or 'w')")
        start, rest = " ".join(body[:cut]), body[cut:]
        if len(body[:cut]) == 2:
            start += " - 1"
        elif len(body[:cut]) == 3:
            start += " 1"
    else:
        return None
    if rest and rest[0] != "moves":
        raise RecordError(f"expected 'moves' after the position, not {rest[0]!r}")
    return start, rest[1:]


def _sq(file: int, rank: int) -> str:
    return f"{file}{RANKS[rank - 1]}"


def _turn_at(start: Optional[str], plies: int) -> int:
    """The side to move (0 sente, 1 gote) after ``plies`` moves from ``start``."""
    first = 1 if start and start.split()[1:2] == ["w"] else 0
    return (first + plies) % 2


def _result(kind: Optional[str], reason: str, mover: int, word: str) -> Optional[tuple[float, str, str]]:
    """The session's result tuple for a terminal word: ``kind`` as in :data:`END_WORDS`."""
    if kind is None:
        return None
    detail = f"the record ends in {word}"
    if kind == "draw":
        return 0.5, reason, detail
    # "other-declared": the side to move declared (入玉宣言, a try) and wins
    loser = {"mover": mover, "other": 1 - mover, "other-declared": 1 - mover, "sente": 0, "gote": 1}[kind]
    return (0.0 if loser == 0 else 1.0), reason, detail


def _summary_result(ln: str, start: Optional[str], plies: int) -> Optional[tuple[float, str, str]]:
    """The result of a ``まで…`` summary (KIF without a terminal move, KI2)."""
    m = _SUMMARY.match(ln.strip())
    if not m:
        return None
    who, how, draw = m.group(2), m.group(3), m.group(4)
    word = ln.strip()
    if draw:
        return _result({"千日手": "draw", "持将棋": "draw", "引き分け": "draw"}.get(draw),
                       {"千日手": "sennichite", "持将棋": "jishogi", "引き分け": "agreement"}.get(draw, ""), 0, word)
    side = 0 if who in ("先手", "下手") else 1
    if how == "反則負け":
        loser = side
    else:
        loser = 1 - side
    reason = {"勝ち": "resign", "反則勝ち": "illegal move", "反則負け": "illegal move",
              "入玉勝ち": "entering king"}[how]
    return (0.0 if loser == 0 else 1.0), reason, f"the record ends in {word}"


def _header(lines: list[str]) -> tuple[Optional[str], tuple[str, str]]:
    """The start of a KIF / KI2 (``None``: the standard one) and the players' names."""
    names = ["", ""]
    for ln in lines:
        key, sep, value = ln.partition("：")
        if sep and key in ("先手", "下手"):
            names[0] = value.strip()
        elif sep and key in ("後手", "上手"):
            names[1] = value.strip()
    if any(ln.startswith("|") for ln in lines):
        return _bod_sfen(lines), (names[0], names[1])
    handicap = next((ln.split("：", 1)[1].strip() for ln in lines if ln.startswith("手合割：")), "平手")
    if handicap in ("平手", ""):
        return None, (names[0], names[1])
    if handicap not in HANDICAPS:
        raise RecordError(f"unknown handicap {handicap!r} (known: 平手, {', '.join(HANDICAPS)}; or a board diagram)")
    return HANDICAPS[handicap], (names[0], names[1])


def _branch(found: list[Line], n: int, offset: int, lineno: int) -> Line:
    """A new line for ``変化：n手``: it replaces move ``n`` of the last line written that has one."""
    index = n - 1 - offset
    for parent in reversed(found):
        if parent.fork <= index < len(parent.tokens) + (1 if parent.end else 0):
            return Line(tokens=list(parent.tokens[:index]), fork=index)
    raise RecordError(f"line {lineno}: 変化：{n}手 branches from no line with a move {n}")


def _comment(line: Line, text: str) -> None:
    n = len(line.tokens)
    line.comments[n] = (line.comments[n] + "\n" + text) if n in line.comments else text


#: the error for a text that no reader recognises
NOT_A_RECORD = "not a record: expected KIF, KI2, CSA, a JSON record, an SFEN or a 'position ...' line"


def _common_line(text: str, lineno: int, found: list[Line], cur: Line, offset: int) -> Optional[Line]:
    """What KIF and KI2 read alike: a blank or ignored line, a ``*`` comment (kept on ``cur``), a 変化 branch header
    (a new line appended to ``found``). The line to read on with, or ``None`` when ``text`` is none of these."""
    if not text or text.startswith(("#", "&")):
        return cur
    if text.startswith("*"):
        _comment(cur, text[1:])
        return cur
    b = _BRANCH.match(text)
    if b:
        branch = _branch(found, int(b.group(1).translate(str.maketrans(ZEN, "0123456789"))), offset, lineno)
        found.append(branch)
        return branch
    return None


def parse_kif(lines: list[str]) -> Record:
    start, names = _header(lines)
    main = Line()
    found, cur = [main], main
    offset: Optional[int] = None  # a diagram taken in mid-game may number its first move 31
    seen = False
    for n, ln in enumerate(lines, 1):
        text = ln.strip()
        common = _common_line(text, n, found, cur, offset or 0)
        if common is not None:
            cur = common
            continue
        e = _KIF_END.match(ln)
        if e:
            word = e.group(2)
            cur.end = word
            kind, reason = END_WORDS[word]
            cur.result = _result(kind, reason, _turn_at(start, len(cur.tokens)), word)
            continue
        m = _KIF_MOVE.match(ln)
        if not m:
            if _NUMBERED.match(ln) and not text.startswith("手数"):
                raise RecordError(f"line {n}: cannot read the move {text!r}")
            if cur.result is None and not cur.end and seen:
                res = _summary_result(text, start, len(cur.tokens))
                if res is not None:
                    cur.result, cur.end = res, text
            continue
        number, where, piece, promo, drop, _, ff, fr = m.groups()
        if offset is None:
            offset = int(number) - 1
        if int(number) != len(cur.tokens) + 1 + offset:
            raise RecordError(f"line {n}: move {number} where move {len(cur.tokens) + 1 + offset} was expected")
        if cur.end:
            raise RecordError(f"line {n}: a move after {cur.end}")
        seen = True
        if where.startswith("同"):
            if not cur.tokens:
                raise RecordError(f"line {n}: 同 without a previous move")
            to = _to_square(cur.tokens[-1])
        else:
            to = _sq(ZEN.index(where[0]), KANJI_NUM.index(where[1]))
        if drop:
            letter = KIF_PIECE[piece]
            if letter.startswith("+") or letter == "K":
                raise RecordError(f"line {n}: {piece} cannot be dropped")
            cur.tokens.append(f"{letter}*{to}")
        else:
            if ff is None:
                raise RecordError(f"line {n}: a move without its origin square ({text!r})")
            cur.tokens.append(f"{_sq(int(ff), int(fr))}{to}{'+' if promo == '成' else ''}")
    if not seen and not any(ln.startswith(("手合割", "手数", "|")) or "：" in ln and ln.startswith(("先手", "後手"))
                            for ln in lines):
        raise RecordError(NOT_A_RECORD)
    return Record(start, found, names)


def _to_square(token: str) -> str:
    return token[-3:-1] if token.endswith("+") else token[-2:]


def _bod_sfen(lines: list[str]) -> str:
    rows = []
    for ln in lines:
        if not ln.startswith("|"):
            continue
        body = ln[1:ln.rindex("|")] if ln.count("|") > 1 else ln[1:]
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
    for prefixes, upper in ((("先手の持駒", "下手の持駒"), True), (("後手の持駒", "上手の持駒"), False)):
        line = next((ln for ln in lines if ln.startswith(prefixes)), "")
        text = line.split("：", 1)[1].strip() if "：" in line else ""
        if text in ("", "なし"):
            continue
        for item in re.split(r"[\s　]+", text):
            if not item:
                continue
            name, count = item[0], item[1:]
            if name not in KIF_PIECE:
                raise RecordError(f"unknown piece {name!r} in hand")
            try:
                k = 1 if not count else (10 + (KANJI_NUM.index(count[1]) if len(count) > 1 else 0)
                                         if count.startswith("十") else KANJI_NUM.index(count))
            except ValueError:
                raise RecordError(f"cannot read the count {count!r} in hand") from None
            letter = KIF_PIECE[name]
            hands += (str(k) if k > 1 else "") + (letter if upper else letter.lower())
    side = "w" if any(ln.startswith(("後手番", "上手番")) for ln in lines) else "b"
    return f"{'/'.join(rows)} {side} {hands or '-'} 1"


def parse_ki2(lines: list[str]) -> Record:
    """KI2: moves without their origin, matched against the legal moves (the rules layer)."""
    from engine import Position, get_variant

    start, names = _header(lines)
    variant = get_variant("shogi")
    main = Line()
    found, cur = [main], main
    for n, ln in enumerate(lines, 1):
        text = ln.strip()
        common = _common_line(text, n, found, cur, 0)
        if common is not None:
            cur = common
            continue
        if text.startswith("まで"):
            res = _summary_result(text, start, len(cur.tokens))
            if res is not None or "中断" in text:
                cur.result, cur.end = res, text
            continue
        if "：" in text or not _KI2_MOVE.match(text):
            continue
        pos = Position.from_sfen(start or STARTPOS, variant)
        for t in cur.tokens:
            pos.push(t)
        at = 0
        while at < len(text):
            m = _KI2_MOVE.match(text, at)
            if not m:
                rest = text[at:].strip()
                if rest:
                    if rest.split()[0] in END_WORDS:
                        cur.end = rest.split()[0]
                        kind, reason = END_WORDS[cur.end]
                        cur.result = _result(kind, reason, pos.turn, cur.end)
                        break
                    raise RecordError(f"line {n}: cannot read {rest[:20]!r}")
                break
            if cur.end:
                raise RecordError(f"line {n}: a move after {cur.end}")
            token = _ki2_token(pos, m, cur.tokens, n)
            pos.push(token)
            cur.tokens.append(token)
            at = m.end()
            while at < len(text) and text[at] in " 　\t":
                at += 1
    if not main.tokens and not any(ln.startswith(("手合割", "|")) for ln in lines):
        raise RecordError(NOT_A_RECORD)
    return Record(start, found, names)


def _legal(pos) -> list[str]:
    return [pos.move_usi(int(c)) for c in pos.legal_codes()]


def _piece_letter(pos, sq: str) -> Optional[str]:
    cell = pos.piece_at(pos.variant.geometry.parse_square(sq))
    return None if cell is None else cell[0]


def _ki2_token(pos, m: re.Match, tokens: list[str], n: int) -> str:
    mark, where, piece, lr, motion, suffix = m.groups()
    side = 0 if mark in "▲☗" else 1
    if side != pos.turn:
        raise RecordError(f"line {n}: {m.group(0).strip()} is not the side to move's")
    if where.startswith("同"):
        if not tokens:
            raise RecordError(f"line {n}: 同 without a previous move")
        to = _to_square(tokens[-1])
    else:
        file = "１２３４５６７８９123456789".index(where[0]) % 9 + 1
        to = _sq(file, KANJI_NUM.index(where[1]))
    letter = KIF_PIECE[piece.replace("王", "玉")]
    cands = []
    for mv in _legal(pos):
        if mv.endswith(to) or mv.endswith(to + "+"):
            if "*" in mv:
                if mv[0] == letter and suffix in (None, "打"):
                    cands.append(mv)
            elif _piece_letter(pos, mv[:2]) == letter and suffix != "打":
                if (suffix == "成") == mv.endswith("+"):
                    cands.append(mv)
    if suffix is None and any("*" not in c for c in cands):
        cands = [c for c in cands if "*" not in c]  # 打 is written when a piece on the board could go there too
    picked = _ki2_filter(cands, lr + motion, side)
    if len(picked) != 1:
        what = "no legal move" if not picked else f"{len(picked)} moves ({', '.join(picked)})"
        raise RecordError(f"line {n}: {m.group(0).strip()} matches {what}")
    return picked[0]


def _ki2_filter(cands: list[str], words: str, side: int) -> list[str]:
    """The candidates a KI2 move's 左 右 直 上 引 寄 leave (the mover's left is file 9 for sente, file 1 for gote)."""
    def dy(mv: str) -> int:  # forward distance for the mover
        d = RANKS.index(mv[1]) - RANKS.index(mv[3])
        return d if side == 0 else -d

    out = list(cands)
    for w in sorted(words, key="上引寄直左右".index):  # the motion first, then the side
        board = [c for c in out if "*" not in c]
        if w == "上":
            out = [c for c in board if dy(c) > 0]
        elif w == "引":
            out = [c for c in board if dy(c) < 0]
        elif w == "寄":
            out = [c for c in board if dy(c) == 0]
        elif w == "直":
            out = [c for c in board if dy(c) > 0 and c[0] == c[2]]
        elif w in "左右" and board:
            files = [int(c[0]) for c in board]
            want = max(files) if (w == "左") == (side == 0) else min(files)
            out = [c for c in board if int(c[0]) == want]
    return out


def parse_csa(lines: list[str]) -> Record:
    squares: dict[tuple[int, int], str] = _startpos_squares()
    custom = False  # P1..P9 lines or a handicap PI seen: the start is not the standard one
    hands, side = "", "b"
    main = Line()
    names = ["", ""]
    start: Optional[str] | bool = False  # False until the first move (or the end) fixes it
    header_comments: list[str] = []
    for n, raw in enumerate(lines, 1):
        stripped = raw.strip()
        if stripped.startswith("'"):
            body = stripped[1:].lstrip("*") if stripped.startswith("'*") else stripped[1:]
            if start is False:
                header_comments.append(body)
            else:
                _comment(main, body)
            continue
        for ln in stripped.split(","):
            ln = ln.strip()
            if not ln or ln.startswith(("V", "$", "T")):
                continue
            if ln.startswith("N"):
                if ln[1:2] in "+-" and ln[1:2]:
                    names["+-".index(ln[1])] = ln[2:]
                continue
            if main.end:
                raise RecordError(f"line {n}: {ln!r} after {main.end}")
            if ln.startswith("PI"):
                squares, custom = _startpos_squares(), False
                body = ln[2:]
                for i in range(0, len(body), 4):
                    item = body[i:i + 4]
                    if len(item) != 4 or not item[:2].isdigit() or item[2:] not in CSA_PIECE:
                        raise RecordError(f"line {n}: cannot read {item!r} in {ln!r} (a removed piece is like 82HI)")
                    at = (int(item[0]), int(item[1]))
                    if squares.get(at, "")[1:] != item[2:]:
                        raise RecordError(f"line {n}: no {item[2:]} on {item[:2]} to take off")
                    del squares[at]
                    custom = True
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
                    if item[2:] not in CSA_PIECE or item[:2] != "00":
                        raise RecordError(f"line {n}: unknown piece {item!r} in hand")
                    letter = CSA_PIECE[item[2:]]
                    hands += letter if m.group(1) == "+" else letter.lower()
                continue
            if ln in ("+", "-"):
                side = "b" if ln == "+" else "w"
                continue
            if start is False:
                start = _sfen(squares, hands, side) if (custom or hands or side != "b") else None
            if ln.startswith("%"):
                word = ln.split(",")[0]
                if word not in CSA_ENDS:
                    raise RecordError(f"line {n}: unknown special move {word!r}")
                main.end = word
                kind, reason = CSA_ENDS[word]
                main.result = _result(kind, reason, _turn_at(start, len(main.tokens)), word)
                continue
            m = re.match(r"^([+-])([0-9])([0-9])([0-9])([0-9])([A-Z]{2})$", ln)
            if not m:
                raise RecordError(f"line {n}: cannot read {ln!r}")
            sign, ff, fr, tf, tr, kind = m.groups()
            if kind not in CSA_PIECE:
                raise RecordError(f"line {n}: unknown piece {kind!r}")
            if "+-".index(sign) != _turn_at(start, len(main.tokens)):
                raise RecordError(f"line {n}: {ln!r} is not the side to move's")
            to = _sq(int(tf), int(tr))
            if ff == "0":
                main.tokens.append(f"{CSA_PIECE[kind]}*{to}")
                squares[(int(tf), int(tr))] = sign + kind
                continue
            before = squares.get((int(ff), int(fr)))
            if before is None:
                raise RecordError(f"line {n}: no piece on {ff}{fr}")
            promotes = CSA_PIECE[kind].startswith("+") and not CSA_PIECE[before[1:]].startswith("+")
            main.tokens.append(f"{_sq(int(ff), int(fr))}{to}{'+' if promotes else ''}")
            squares.pop((int(ff), int(fr)))
            squares[(int(tf), int(tr))] = sign + kind
    if start is False:
        if not custom and not any(ln.strip() in ("PI", "+", "-") for ln in lines):
            raise RecordError(NOT_A_RECORD)
        start = _sfen(squares, hands, side) if (custom or hands or side != "b") else None
    if header_comments:
        main.comments[0] = "\n".join(header_comments + ([main.comments[0]] if 0 in main.comments else []))
    return Record(start, [main], (names[0], names[1]))


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


# ------------------------------------------------------------------------------------------ writing
def _lcp(a: list[str], b: list[str]) -> int:
    n = 0
    while n < len(a) and n < len(b) and a[n] == b[n]:
        n += 1
    return n


def tree_order(lines: list[Line]) -> list[tuple[int, int, int]]:
    """(line index, parent index or -1, fork) of the lines to write, main line first, then each line's branches
    depth first and the later forks first: the order in which KIF's ``変化：N手`` finds each branch's parent again
    (the last line written that has a move N). A line that is all of another's (no move of its own) is left out,
    and so is one that would go on past a parent's last move without a result (KIF has no move there)."""
    parents: dict[int, tuple[int, int]] = {}
    for k in range(1, len(lines)):
        best, fork = -1, -1
        for j in range(k):
            if j in parents or j == 0:
                n = _lcp(lines[j].tokens, lines[k].tokens)
                if n > fork:
                    best, fork = j, n
        if fork >= len(lines[k].tokens):
            continue  # nothing of its own
        if fork >= len(lines[best].tokens) and not lines[best].end:
            continue
        parents[k] = (best, fork)
    out: list[tuple[int, int, int]] = []

    def visit(k: int, parent: int, fork: int) -> None:
        out.append((k, parent, fork))
        kids = sorted((c for c, (p, _) in parents.items() if p == k), key=lambda c: (-parents[c][1], c))
        for c in kids:
            visit(c, k, parents[c][1])

    visit(0, -1, 0)
    return out


def _replay_names(start: str, tokens: list[str]) -> list[tuple[int, str, str, bool]]:
    """(side, usi, piece letter before the move, promotes) of each move, replayed on the rules layer."""
    from engine import Position, get_variant

    pos = Position.from_sfen(start, get_variant("shogi"))
    out = []
    for usi in tokens:
        side = pos.turn
        if "*" in usi:
            out.append((side, usi, usi[0], False))
        else:
            out.append((side, usi, _piece_letter(pos, usi[:2]), usi.endswith("+")))
        pos.push(usi)
    return out


def _kif_square(sq: str) -> str:
    return ZEN[int(sq[0])] + KANJI_NUM[RANKS.index(sq[1]) + 1]


def _kif_move(usi: str, piece: str, promotes: bool, prev_to: Optional[str]) -> str:
    to = _to_square(usi)
    where = "同　" if to == prev_to else _kif_square(to)
    if "*" in usi:
        return f"{where}{KIF_NAME[usi[0]]}打"
    return f"{where}{KIF_NAME[piece]}{'成' if promotes else ''}({usi[0]}{RANKS.index(usi[1]) + 1})"


def end_word(result: Optional[tuple[float, str, str]], mover: int) -> tuple[str, str]:
    """(KIF terminal word or "" when KIF has none for it, CSA special move or "") for a line's result, ``mover``
    being the side to move at its end. A win the side to move did not lose (a person resigning on the engine's
    turn) has no terminal move: the summary line says who won."""
    if result is None:
        return "", ""
    score, reason, _ = result
    if score == 0.5:
        if reason == "agreement":  # a draw agreed by the players: KIF has no terminal move for it (the summary says)
            return "", "%HIKIWAKE"
        return ("千日手", "%SENNICHITE") if reason == "sennichite" else ("持将棋", "%JISHOGI")
    loser = 0 if score == 0.0 else 1
    if reason in ("checkmate", "no legal moves"):
        return ("詰み", "%TSUMI") if loser == mover else ("", "")
    if reason in ("entering king", "try"):
        return ("入玉勝ち", "%KACHI") if loser != mover else ("", "")
    if reason == "time forfeit":
        return ("切れ負け", "%TIME_UP") if loser == mover else ("", "")
    if reason in ("resign", "adjudication"):
        return ("投了", "%TORYO") if loser == mover else ("", "")
    return ("反則負け", f"%{'+-'[loser]}ILLEGAL_ACTION") if loser == mover else (
        "反則勝ち", f"%{'+-'[loser]}ILLEGAL_ACTION")


def _summary(result: Optional[tuple[float, str, str]], n: int) -> str:
    if result is None:
        return ""
    score, reason, _ = result
    if score == 0.5:
        return f"まで{n}手で{ {'sennichite': '千日手', 'agreement': '引き分け'}.get(reason, '持将棋') }"
    winner = "先手" if score == 1.0 else "後手"
    if reason == "entering king":
        return f"まで{n}手で{winner}の入玉勝ち"
    if reason not in ("resign", "adjudication", "checkmate", "no legal moves", "time forfeit", "try"):
        return f"まで{n}手で{winner}の反則勝ち"
    return f"まで{n}手で{winner}の勝ち"


def _header_lines(start: str, names: tuple[str, str], started: str = "") -> list[str]:
    from usi.records import _bod

    out = ["# KIF形式棋譜ファイル written by fantasista-gui"]
    if started:
        out.append(f"開始日時：{started.replace('-', '/').replace('T', ' ')}")
    handicap = next((k for k, v in HANDICAPS.items() if v.split()[:3] == start.split()[:3]), None)
    if start.split()[:3] == STARTPOS.split()[:3]:
        out.append("手合割：平手")
    elif handicap:
        out.append(f"手合割：{handicap}")
    else:
        out += _bod(start)
    giver = handicap is not None
    out += [f"{'下手' if giver else '先手'}：{names[0]}", f"{'上手' if giver else '後手'}：{names[1]}"]
    return out


def _comment_lines(line: Line, n: int, mark: str) -> list[str]:
    text = line.comments.get(n)
    return [mark + c for c in text.split("\n")] if text else []


def to_kif(record: Record, started: str = "") -> str:
    """KIF text of a record, its branches as ``変化：N手`` sections."""
    start = record.start or STARTPOS
    out = _header_lines(start, record.names, started) + ["手数----指手---------消費時間--"]
    out += _comment_lines(record.lines[0], 0, "*")
    for k, parent, fork in tree_order(record.lines):
        line = record.lines[k]
        if parent >= 0:
            out += ["", f"変化：{fork + 1}手"]
        moves = _replay_names(start, line.tokens)
        prev_to = _to_square(line.tokens[fork - 1]) if fork > 0 else None
        totals = [0.0, 0.0]
        for i, (side, usi, piece, promotes) in enumerate(moves):
            spent = line.times[i] if i < len(line.times) and line.times[i] is not None else 0.0
            totals[side] += spent
            if i >= fork:
                text = _kif_move(usi, piece, promotes, prev_to)
                m, s = divmod(int(spent) if spent > 0 else 0, 60)
                total = int(totals[side])
                out.append(f"{i + 1:>4} {text:<12}   ({m:>2}:{s:02}/{total // 3600:02}:{total // 60 % 60:02}:"
                           f"{total % 60:02})")
                out += _comment_lines(line, i + 1, "*")
            prev_to = _to_square(usi)
        word, _ = end_word(line.result, _turn_at(start, len(line.tokens)))
        if word:
            out.append(f"{len(line.tokens) + 1:>4} {word:<12}   ( 0:00/00:00:00)")
        elif line.end in END_WORDS and line.result is None:  # 中断 and the other words without a result
            out.append(f"{len(line.tokens) + 1:>4} {line.end:<12}   ( 0:00/00:00:00)")
        if parent < 0 and line.result is not None:
            out.append(_summary(line.result, len(line.tokens)))
    return "\n".join(out) + "\n"


def to_ki2(record: Record) -> str:
    """KI2 text of a record (moves told apart by 打 / 左 右 直 上 引 寄 as the rules need), branches included."""
    from engine import Position, get_variant

    start = record.start or STARTPOS
    out = _header_lines(start, record.names)[1:]
    out += _comment_lines(record.lines[0], 0, "*")
    for k, parent, fork in tree_order(record.lines):
        line = record.lines[k]
        if parent >= 0:
            out += ["", f"変化：{fork + 1}手"]
        pos = Position.from_sfen(start, get_variant("shogi"))
        row: list[str] = []
        for i, usi in enumerate(line.tokens):
            if i >= fork:
                row.append(_ki2_move(pos, usi, line.tokens[i - 1] if i else None))
                comments = _comment_lines(line, i + 1, "*")
                if comments or len(row) == 6:
                    out.append("　".join(row))
                    out += comments
                    row = []
            pos.push(usi)
        if row:
            out.append("　".join(row))
        word, _ = end_word(line.result, pos.turn)
        summary = _summary(line.result, len(line.tokens))
        if summary:
            out.append(summary)
        elif line.end == "中断" or line.end.startswith("まで") and "中断" in line.end:
            out.append(f"まで{len(line.tokens)}手で中断")
    return "\n".join(out) + "\n"


def _ki2_move(pos, usi: str, prev: Optional[str]) -> str:
    side = pos.turn
    to = _to_square(usi)
    legal = _legal(pos)
    mark = "▲△"[side]
    where = "同　" if prev is not None and _to_square(prev) == to else _kif_square(to)
    if "*" in usi:
        piece = usi[0]
        others = [m for m in legal if "*" not in m and _to_square(m) == to and not m.endswith("+")
                  and _piece_letter(pos, m[:2]) == piece]
        return f"{mark}{where}{KIF_NAME[piece]}{'打' if others else ''}"
    piece = _piece_letter(pos, usi[:2])
    promotes = usi.endswith("+")
    cands = [m for m in legal if "*" not in m and _to_square(m) == to and m.endswith("+") == promotes
             and _piece_letter(pos, m[:2]) == piece]
    words = ""
    for option in ("", "上", "引", "寄", "直", "左", "右", "左上", "左引", "左寄", "右上", "右引", "右寄"):  # KI2's order
        if _ki2_filter(cands, option, side) == [usi]:
            words = option
            break
    could = not promotes and usi + "+" in legal
    promo = "成" if promotes else ("不成" if could else "")
    return f"{mark}{where}{KIF_NAME[piece]}{words}{promo}"


def to_csa(record: Record, started: str = "") -> str:
    """CSA text (V2.2) of a record's main line (CSA has no branches), its comments as ``'*`` lines."""
    from usi.records import _csa_position

    start = record.start or STARTPOS
    line = record.lines[0]
    out = ["V2.2", f"N+{record.names[0]}", f"N-{record.names[1]}"]
    if started:
        out.append(f"$START_TIME:{started[:19].replace('-', '/').replace('T', ' ')}")
    handicap = next((k for k, v in HANDICAPS.items() if v.split()[:3] == start.split()[:3]), None)
    if handicap:  # PI and the pieces taken off
        std = _startpos_squares()
        out += ["PI" + "".join(f"{f}{r}{std[(f, r)][1:]}" for (f, r) in sorted(std, key=lambda q: (q[1], -q[0]))
                               if std[(f, r)][0] == "-" and (f, r) not in _squares_of(start)), "-"]
    else:
        out += _csa_position(start)
    out += _comment_lines(line, 0, "'*")
    inverse = {v: k for k, v in CSA_PIECE.items()}
    for i, (side, usi, piece, promotes) in enumerate(_replay_names(start, line.tokens)):
        sign = "+-"[side]
        if "*" in usi:
            text = f"{sign}00{usi[2]}{RANKS.index(usi[3]) + 1}{inverse[usi[0]]}"
        else:
            after = ("+" + piece) if promotes else piece
            text = f"{sign}{usi[0]}{RANKS.index(usi[1]) + 1}{usi[2]}{RANKS.index(usi[3]) + 1}{inverse[after]}"
        spent = line.times[i] if i < len(line.times) and line.times[i] is not None else 0
        out.append(f"{text},T{int(spent)}")
        out += _comment_lines(line, i + 1, "'*")
    _, special = end_word(line.result, _turn_at(start, len(line.tokens)))
    if special:
        out.append(special)
    elif line.result is not None:
        out.append("'* " + _summary(line.result, len(line.tokens)))
    elif line.end in ("中断", "%CHUDAN"):
        out.append("%CHUDAN")
    return "\n".join(out) + "\n"


def _squares_of(sfen: str) -> set[tuple[int, int]]:
    out = set()
    for r, row in enumerate(sfen.split()[0].split("/"), 1):
        f = 9
        for tok in re.findall(r"\d+|\+?[A-Za-z]", row):
            if tok.isdigit():
                f -= int(tok)
            else:
                out.add((f, r))
                f -= 1
    return out

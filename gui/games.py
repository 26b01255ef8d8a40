"""The GUI's view of a game: one wrapper over :class:`engine.Position` and :class:`engine.game.GameState`.

The page never knows a rule. The server hands it, for the side to move, every legal action token together with a
*click path*: the steps a player takes on the page to play it (a square, a piece in hand, a button such as
``curtain`` or ``defect``). The page narrows the candidates click by click (pure prefix matching) and asks when
several complete candidates remain (the promotion prompt, a lion stopping after one step, a sword silver moving or
capturing in place). Everything here is display data derived from the rules layer; the rules stay in ``engine/``.

>>> click_path("7f6e,6e5d")
['sq:7f', 'sq:6e', 'sq:5d']
>>> click_path("R'*5e")
["hand:R'", 'sq:5e']
>>> click_path("curtain:4h,6h,4h3g")
['btn:curtain', 'sq:4h', 'sq:6h', 'sq:4h', 'sq:3g']
>>> click_path("defect")
['btn:defect']
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from usi.games import FANTASISTA_FAIRIES, FANTASISTA_RESERVED, FANTASISTA_RESERVED_SIDE

if TYPE_CHECKING:  # the engine package loads the numba kernels: imported where it is used
    from engine.variants.turncoat.state import TurncoatGame

_SQ = re.compile(r"\d{1,2}[a-m]")
_WORD_PART = re.compile(r"^([a-z]+):(.*)$")
_DROP = re.compile(r"^([A-Z]'?)\*")
_BOARD_TOKEN = re.compile(r"\d+|\+?[A-Za-z]")
_HAND_TOKEN = re.compile(r"(\d*)(\+?[A-Za-z]'?)")
#: The extra field of a turncoat SFEN inside any text: ``<identities>;<sente plan>;<gote plan>;``.
_TURNCOAT_PLANS = re.compile(r"((?:\d[a-i])+);([^;\s()]+);([^;\s()]+);")
#: The viewer who may see no side's secret (engines playing each other), for :meth:`GuiGame.sfen`, ``board`` and
#: ``panel``; ``None`` there is the true state (everything), 0 / 1 a side's own view.
NOBODY = -2

ZEN_DIGITS = "０１２３４５６７８９"
KANJI_RANKS = ("", "一", "二", "三", "四", "五", "六", "七", "八", "九", "十", "十一", "十二", "十三")
RANK_LETTERS = "abcdefghijklm"

#: Words of special action parts that become buttons (a part "word:args" whose args hold squares).
BUTTON_WORDS = {"curtain", "wave"}
#: Words dropped from the click path (the squares say it all).
SILENT_WORDS = {"rider", "target"}


# ------------------------------------------------------------------------------------------ click paths
def click_path(token: str) -> list[str]:
    """The page steps that play ``token``: ``sq:<square>``, ``hand:<letter>``, ``btn:<word>``.

    A leg starting where the previous one ended is one click (``7f6e,6e5d`` is three squares). Promotion marks and
    ``:x`` captures add no step: candidates with the same clicks are told apart by a prompt.
    """
    return [step for step, _ in click_steps(token)]


def click_steps(token: str) -> list[tuple[str, str]]:
    """:func:`click_path` with the *kind* of each step, for the page's highlighting: ``move`` (a plain step),
    ``curtain`` (a silver placed by the silver curtain), ``wave`` (a silver-wave move), ``rider`` (the upper piece of
    a stack moving), ``breath`` (a fire dragon's breath target after a drop), ``strike`` (a capture in place),
    ``button``, ``hand``, ``plan``. Boarding a carrier is a ``move`` onto an own piece (the page sees the piece).

    >>> click_steps("D*5e:x5c")
    [('hand:D', 'hand'), ('sq:5e', 'move'), ('sq:5c', 'breath')]
    >>> click_steps("curtain:4h,6h,4h3g")[1:]
    [('sq:4h', 'curtain'), ('sq:6h', 'curtain'), ('sq:4h', 'move'), ('sq:3g', 'move')]
    """
    steps: list[tuple[str, str]] = []
    if token.startswith("plan:"):
        return [("plan:" + token[5:], "plan")]
    mode = "move"  # after "curtain:" bare squares are placed silvers; after "wave:" every part is a silver move
    for part in token.split(","):
        kind = mode
        m = _WORD_PART.match(part)
        if m and not part[0].isdigit():
            word, rest = m.groups()
            if word in SILENT_WORDS:
                part, kind = rest, ("rider" if word == "rider" else "move")
            elif word in BUTTON_WORDS:
                steps.append((f"btn:{word}", "button"))
                part = rest
                mode = kind = word
            else:  # turn:e, throw:mixed, ... : one button for the whole part
                steps.append((f"btn:{part}", "button"))
                continue
        elif not _SQ.search(part) and not _DROP.match(part):
            steps.append((f"btn:{part}", "button"))  # defect, pass, win ...
            continue
        if mode == "curtain" and len(_SQ.findall(part)) == 2:
            kind = "move"  # the curtain's move after the placed silvers
        d = _DROP.match(part)
        if d:
            steps.append((f"hand:{d.group(1)}", "hand"))
            part = part[d.end():]
        main, _, struck = part.partition(":x")
        for sq in _SQ.findall(main):
            if steps and steps[-1][0] == f"sq:{sq}" and not d:
                continue  # the second leg starts where the first ended
            steps.append((f"sq:{sq}", kind))
            d = None
        for sq in _SQ.findall(struck):
            steps.append((f"sq:{sq}", "breath" if _DROP.match(token.split(",")[0]) else "strike"))
    return steps


def choice_label(token: str, others: list[str]) -> str:
    """How the prompt names ``token`` among ``others`` that need the same clicks."""
    base = token.rstrip("+")
    if len(others) == 2 and all(o.rstrip("+") == base for o in others):
        return "成 promote" if token.endswith("+") else "不成 don't promote"
    return token


# ------------------------------------------------------------------------------------------ notation
def ja_square(name: str) -> str:
    """``7f`` -> ``７六``, ``13m`` -> ``１３十三``; ValueError for anything that is not a square name."""
    if not re.fullmatch(r"[0-9]{1,2}[a-z]", name):
        raise ValueError(f"{name!r} is not a square")
    file, rank = name[:-1], name[-1]
    return "".join(ZEN_DIGITS[int(ch)] for ch in file) + KANJI_RANKS[RANK_LETTERS.index(rank) + 1]


def kif_origin(name: str) -> str:
    """The KIF origin in parentheses: ``7g`` -> ``77``, ``13m`` -> ``13 13`` style ``(1313)``."""
    return f"{name[:-1]}{RANK_LETTERS.index(name[-1]) + 1}"


EVENT_WORDS = {"roll": "出目", "card": "札", "throw": "振り", "plan": "伏兵", "defect": "寝返り"}
THROW_FACES_JA = {"x": "逆", "v": "立", "s": "横", "u": "表", "d": "裏"}
SUIT_SIGNS = {"S": "♠", "C": "♣", "H": "♥", "D": "♦"}


def ja_event(token: str) -> str:
    name, _, value = token.partition("=")
    if name == "card" and len(value) >= 2:
        return f"札 {SUIT_SIGNS.get(value[-1], value[-1])}{value[:-1]}"
    if name == "throw":
        try:
            throw = mawari_throw(token)
        except ValueError:
            return f"振り {value}"
        groups = " ".join(g["name"] + "".join(THROW_FACES_JA.get(f, f) for f in g["faces"]) for g in throw["groups"])
        return f"振り {groups} = {throw['n']}"
    return f"{EVENT_WORDS.get(name, name)} {value}"


# ------------------------------------------------------------------------------------------ boards
@dataclass
class Board:
    """What the page draws: squares by name -> (letter, colour, marks), hands per colour."""

    n_files: int
    n_ranks: int
    squares: dict[str, dict] = field(default_factory=dict)
    hands: list[list[dict]] = field(default_factory=lambda: [[], []])
    turn: int = 0

    def to_json(self) -> dict:
        return {"files": self.n_files, "ranks": self.n_ranks, "squares": self.squares, "hands": self.hands,
                "turn": self.turn}


def parse_sfen_board(sfen: str, n_files: int, n_ranks: int, names: Callable[[str], tuple[str, str]],
                     hand_order: str = "RBGSNLP") -> Board:
    """The first three SFEN fields as a :class:`Board`. ``names(letter)`` gives (kanji, western) for display."""
    fields = sfen.split()
    board = Board(n_files, n_ranks, turn=0 if len(fields) < 2 or fields[1] == "b" else 1)
    for r, row in enumerate(fields[0].split("/")):
        f = n_files
        for tok in _BOARD_TOKEN.findall(row):
            if tok.isdigit():
                f -= int(tok)
                continue
            letter, color = tok.upper(), 0 if tok[-1].isupper() else 1
            kanji, western = names(letter)
            board.squares[f"{f}{RANK_LETTERS[r]}"] = {"letter": letter, "color": color, "kanji": kanji,
                                                      "western": western, "marks": ""}
            f -= 1
    if len(fields) > 2 and fields[2] != "-":
        for count, tok in _HAND_TOKEN.findall(fields[2]):
            add_hand(board, tok, int(count or 1), names)
    for hand in board.hands:
        hand.sort(key=lambda h: (h["key"].endswith("'"), hand_order.find(h["letter"]) % 100))
    return board


def add_hand(board: Board, tok: str, count: int, names: Callable[[str], tuple[str, str]], token: bool = False
             ) -> None:
    color = 0 if tok[0].isupper() else 1
    letter = tok.upper().rstrip("'")
    kanji, western = names(letter)
    # the special pieces' token mark is implied (their drops are written D*5e, not D'*5e)
    key = letter + ("'" if (token and letter in "RBGSNLP") or tok.endswith("'") else "")
    for h in board.hands[color]:
        if h["key"] == key:
            h["count"] += count
            return
    board.hands[color].append({"key": key, "letter": letter, "count": count, "kanji": kanji, "western": western,
                               "token": token or key.endswith("'")})


# ------------------------------------------------------------------------------------------ variants
STANDARD_KANJI = {"P": "歩", "L": "香", "N": "桂", "S": "銀", "G": "金", "B": "角", "R": "飛", "K": "玉",
                  "+P": "と", "+L": "杏", "+N": "圭", "+S": "全", "+B": "馬", "+R": "龍"}


@dataclass
class VariantInfo:
    id: str
    name: str
    ja: str
    files: int = 9
    ranks: int = 9
    sides: int = 2  # 1 for the solitaire
    options: list[dict] = field(default_factory=list)  # [{name, label, choices, default}]
    kanji: dict[str, str] = field(default_factory=dict)
    available: bool = True
    note: str = ""
    hand: str = "RBGSNLP"  # the pieces a hand may hold (the position editor's hand counts); "" without drops
    editable: bool = True  # the position editor can set up its SFEN (a board, hands and the side to move)
    edit: dict = field(default_factory=dict)  # what the editor needs beyond the board (a variant's own SFEN fields)

    def names(self, letter: str) -> tuple[str, str]:
        return self.kanji.get(letter, letter), letter

    def to_json(self) -> dict:
        return {"id": self.id, "name": self.name, "ja": self.ja, "files": self.files, "ranks": self.ranks,
                "sides": self.sides, "options": self.options, "available": self.available, "note": self.note,
                "kanji": self.kanji, "hand": self.hand, "editable": self.editable, "edit": self.edit}


def _daishogi_kanji() -> dict[str, str]:
    from engine import get_variant

    return {p.letter: p.kanji for p in get_variant("daishogi2017").pieces}


def _mawarikudoi_edit() -> dict:
    """The editor's race fields: the runners in relay order, the facings, each side's three other corners (the
    corner record's choices) and the start SFEN (*Clear* goes back to it)."""
    from engine.variants.mawarikudoi import board as MB
    from engine.variants.mawarikudoi.state import new_game

    return {"runners": MB.RUNNERS, "facings": MB.FACINGS,
            "corners": [[MB.square_name(c) for c in MB.corners_of(side)] for side in (0, 1)],
            "start": new_game().sfen()}


def _enokian_edit() -> dict:
    """The editor's heading choices per suit (``x``: captured); the deck and pending card are kept as read."""
    import engine
    from engine.variants.enokian.state import HEADING_LETTERS, SUITS

    return {"suits": SUITS, "headings": list(HEADING_LETTERS), "start": engine.new_game("enokian").sfen()}


def _fantasista_kanji() -> dict[str, str]:
    from engine.variants.fantasista import pieces as PC

    out = dict(STANDARD_KANJI)
    out.update({PC.LETTERS[i]: PC.KANJI[i] for i in range(15, len(PC.LETTERS))})
    return out


# Fantasista's choices are the USI options' (usi/games.py, one definition): "choose" leaves the side's fairy (or
# reserved result) to its player, a pre-game decision (``fairy:<name>[,reserved:<result>]``); "default" follows the
# both-sides "rolls 9-18" option.
FAIRY_CHOICES = list(FANTASISTA_FAIRIES)
RESERVED_SIDE_CHOICES = list(FANTASISTA_RESERVED_SIDE)


def variant_infos() -> dict[str, VariantInfo]:
    """Every variant the GUI knows, marked available when the rules layer can play it."""
    import engine

    avail = set(engine.available_variants())
    infos = [
        VariantInfo("shogi", "Shogi", "将棋", kanji=STANDARD_KANJI),
        VariantInfo("daishogi2017", "Dai shogi (2017)", "2017年版普通唱導集大将棋", 13, 13,
                    kanji=_daishogi_kanji(), hand=""),
        VariantInfo("fantasista", "Ousho Fantasista", "王将ファンタジスタ", kanji=_fantasista_kanji(), options=[
            {"name": "fairy_sente", "label": "sente fairy", "choices": FAIRY_CHOICES + ["choose"], "default": "hiko"},
            {"name": "fairy_gote", "label": "gote fairy", "choices": FAIRY_CHOICES + ["choose"], "default": "ayumi"},
            {"name": "reserved", "label": "rolls 9-18", "choices": list(FANTASISTA_RESERVED),
             "default": "4-8"},
            {"name": "reserved_sente", "label": "sente's 9-18", "choices": RESERVED_SIDE_CHOICES,
             "default": "default"},
            {"name": "reserved_gote", "label": "gote's 9-18", "choices": RESERVED_SIDE_CHOICES,
             "default": "default"}]),
        VariantInfo("turncoat", "Turncoat shogi", "寝返り将棋", kanji=STANDARD_KANJI),
        VariantInfo("mawarikudoi", "Mawarikudoi shogi", "まわりくどい将棋", kanji=STANDARD_KANJI, hand="",
                    edit=_mawarikudoi_edit()),
        VariantInfo("enokian", "Enokian shogi (solitaire)", "榎庵将棋", sides=1, hand="", edit=_enokian_edit(),
                    kanji={"P": "歩", "K": "王", "+S": "炎", "+R": "龍", "+B": "馬"}, options=[
                        {"name": "michizane", "label": "Michizane's corner", "choices": ["1a", "9i"],
                         "default": "1a"}]),
    ]
    out = {}
    for info in infos:
        info.available = info.id in avail
        if not info.available:
            info.note = "not playable yet"
        out[info.id] = info
    out["enokian"].kanji["K"] = "王"
    return out


class GameFailure(ValueError):
    """A token or setting the game rejects (the game is left unchanged)."""


class GuiGame:
    """One game of any variant, driven by tokens; ``node``/``side``/``actions``/``apply``/``result``/``board``.

    Shogi-like games (:class:`engine.Position`) have only decision and terminal nodes; GameState games add chance
    nodes, whose events the server draws.
    """

    def __init__(self, info: VariantInfo, options: dict | None = None, start_sfen: str | None = None) -> None:
        import engine

        self.info = info
        self.options = dict(options or {})
        self.is_position = not engine.is_game_state_variant(info.id)
        if not info.available:
            raise GameFailure(f"variant {info.id!r} is not playable yet")
        if self.is_position:
            variant = engine.get_variant(info.id)
            try:
                self.state = engine.Position.from_sfen(start_sfen or variant.start_sfen, variant)
            except (engine.SfenError, ValueError) as exc:
                raise GameFailure(f"bad start position: {exc}") from None
        else:
            try:
                self.state = engine.new_game(info.id, **self._game_options())
            except ValueError as exc:  # a setting the rules refuse (an unknown fairy, reserved "choose" with "1" ...)
                raise GameFailure(f"{info.id} options refused: {exc}") from None
            if start_sfen and start_sfen != self.state.sfen():
                loader = getattr(type(self.state), "from_sfen", None)
                if loader is None:
                    raise GameFailure(f"{info.id} cannot start from a position")
                try:
                    self.state = loader(start_sfen)
                except Exception as exc:  # noqa: BLE001 - each game raises its own error type
                    raise GameFailure(f"bad start position: {exc}") from None
                if info.id == "turncoat" and _hides_a_plan(self.state):
                    # a viewer's view (a record saved during the game): the referee needs both plans
                    raise GameFailure("the start position hides a secret (a plan ?): it cannot be played; "
                                      "a record saved after the game has the whole start")
        #: The true start (both turncoat plans): what undo and replays start from. The page and records get
        #: :meth:`start_view` instead.
        self.start_sfen = self.sfen(None)
        # the start as a state, for its views (turncoat)
        self._start_state = self.state.copy() if self.info.id == "turncoat" else None
        self.played: list[str] = []  # tokens applied, events included
        self.card_effects: list[tuple[int, dict]] = []  # enokian: (index in played, what the card did)

    def _game_options(self) -> dict:
        o, vid = self.options, self.info.id
        if vid == "fantasista":
            both = o.get("reserved", "4-8")
            side = [o.get("reserved_sente", "default"), o.get("reserved_gote", "default")]
            return {"fairies": tuple(None if f == "choose" else f
                                     for f in (o.get("fairy_sente", "hiko"), o.get("fairy_gote", "ayumi"))),
                    "reserved": tuple(both if r == "default" else None if r == "choose" else r for r in side)}
        if vid == "enokian":
            return {"michizane": o.get("michizane", "1a")}
        return {}

    # ------------------------------------------------------------------ nodes
    def node(self) -> str:
        if self.result() is not None:
            return "terminal"
        if self.is_position:
            return "decision"
        return self.state.node_kind().value

    def side(self) -> int:
        return self.state.turn if self.is_position else int(self.state.side_to_move())

    def actions(self) -> list[str]:
        if self.is_position:
            return [self.state.move_usi(int(c)) for c in self.state.legal_codes()]
        return list(self.state.legal_actions())

    def chance_events(self) -> list[tuple[str, float]]:
        return [] if self.is_position else list(self.state.chance_events())

    def apply(self, token: str) -> None:
        if not isinstance(token, str) or not token.strip():
            raise GameFailure("an action must be a non-empty string")
        card = self.info.id == "enokian" and token.startswith("card=")
        before = {q: dict(c) for q, c in self.board(None).squares.items() if c} if card else None
        try:
            if self.is_position:
                self.state.push(token)
            else:
                self.state.apply(token)
        except Exception as exc:  # noqa: BLE001 - IllegalMoveError, MoveParseError, GameError: all "rejected"
            raise GameFailure(self._public(str(exc))) from None
        if card:  # the page shows which card moved which enemy piece (gui.rules.card_effect)
            from .rules import card_effect

            prev = self.played[-1] if self.played else ""
            pending = prev[5:] if prev.startswith("card=") and prev[5:-1] not in ("J", "Q", "K", "T") else None
            after = {q: c for q, c in self.board(None).squares.items() if c}
            self.card_effects.append((len(self.played), card_effect(before, after, token[5:], pending)))
        self.played.append(token)

    def _public(self, text: str) -> str:
        """A rules error as the page may read it: a turncoat SFEN in it (the rules quote the true position) shows
        every undeclared plan as ``?``, whoever the mover is."""
        if self.info.id != "turncoat":
            return text

        def hide(m: re.Match) -> str:
            return ";".join([m.group(1), *(p if p == "-" or p.startswith("!") else "?" for p in m.group(2, 3))]) + ";"

        return _TURNCOAT_PLANS.sub(hide, text)

    def result(self) -> tuple[float, str] | None:
        return self.state.result()

    def sfen(self, viewer: int | None) -> str:
        """The position as ``viewer`` may see it: ``None`` the true state, 0 / 1 that side's view (turncoat: the
        other's undeclared plan is ``?``), :data:`NOBODY` no side's plan."""
        if self.info.id == "turncoat":
            return _turncoat_sfen(self.state, viewer)
        return self.state.sfen()

    def start_view(self, viewer: int | None) -> str:
        """The start position as ``viewer`` may see it (as in :meth:`sfen`): a set-up turncoat start may give plans,
        which the page and records get only as that viewer's view; :attr:`start_sfen` stays the true start."""
        if self._start_state is not None:
            return _turncoat_sfen(self._start_state, viewer)
        return self.start_sfen

    def declare_win(self) -> bool:
        """Entering-king declaration (shogi-like games only)."""
        return bool(self.is_position and self.state.can_declare_win())

    # ------------------------------------------------------------------ display
    def check_square(self) -> str | None:
        """The square of a king in check (the page marks it), or ``None``: none is, or the variant has no check
        (mawarikudoi, the solitaire). Public in every variant: a turncoat plan plays no part until it is declared."""
        st = self.state
        if self.is_position:
            return _attacked_royal(st) if st.is_check() else None
        if self.info.id == "turncoat":
            return _attacked_royal(st.pos) if st.in_check() else None
        if self.info.id == "fantasista":
            from engine.variants.fantasista.pieces import square_name

            for c in (st.bd.stm, 1 - st.bd.stm):
                if st.bd.in_check(c):
                    return square_name(st.bd.king_square(c))
        return None

    def board(self, viewer: int | None) -> Board:
        info = self.info
        if info.id == "mawarikudoi":
            return mawari_board(self.state, info)
        sfen = self.sfen(viewer)
        board = parse_sfen_board(sfen, info.files, info.ranks, info.names)
        if info.id == "fantasista":
            self._fantasista_marks(board, sfen)
        return board

    def _fantasista_marks(self, board: Board, sfen: str) -> None:
        extra = dict(item.split("=", 1) for item in sfen.split()[4].split(";") if "=" in item)
        for mark in filter(None, extra.get("m", "").split(",")):
            m = re.match(r"(\d[a-i])(.*)$", mark)
            if not m or m.group(1) not in board.squares:
                continue
            sq, flags = m.groups()
            cell = board.squares[sq]
            carrier, _, rider = flags.partition("@")
            cell["marks"] = carrier
            if rider:
                letter = re.match(r"\+?[A-Za-z]", rider).group(0)
                kanji, western = self.info.names(letter.upper())
                cell["rider"] = {"letter": letter.upper(), "kanji": kanji, "western": western,
                                 "marks": rider[len(letter):]}
        for count, tok in _HAND_TOKEN.findall(extra.get("h", "")):
            add_hand(board, tok, int(count or 1), self.info.names, token=True)

    def panel(self, viewer: int | None) -> dict:
        """Variant-specific facts for the side panel (rights, fairies, deck, runners ...)."""
        vid, s = self.info.id, self.state
        out: dict[str, Any] = {}
        if vid == "fantasista":
            extra = dict(item.split("=", 1) for item in s.sfen().split()[4].split(";") if "=" in item)
            out["fairies"] = [FAIRY_CHOICES[i] if i is not None else "choose" for i in s.fairy]
            out["reserved"] = [r if r is not None else "choose" for r in s.reserved]
            rights = [[], []]
            for count, letter in re.findall(r"(\d*)([A-Za-z])", extra.get("r", "")):
                name = {"A": "awakening", "C": "curtain", "W": "wave", "E": "emblem"}[letter.upper()]
                rights[0 if letter.isupper() else 1].append(name + (f" ×{count}" if count else ""))
            out["rights"] = rights
            tokens: list[list[dict]] = [[], []]
            for count, tok in _HAND_TOKEN.findall(extra.get("h", "")):
                letter = tok.upper().rstrip("'")
                kanji, western = self.info.names(letter)
                tokens[0 if tok[0].isupper() else 1].append({"letter": letter, "kanji": kanji, "western": western,
                                                              "count": int(count or 1)})
            out["inventory"] = [{"fairy": out["fairies"][c], "rights": rights[c], "tokens": tokens[c],
                                 "emblem": any(r.startswith("emblem") for r in rights[c])} for c in (0, 1)]
            out["pending"] = extra.get("n", "")
            from engine.variants.fantasista import roll_effect

            rolls = [i for i, t in enumerate(self.played) if t.startswith("roll=")]
            if rolls:
                n = int(self.played[rolls[-1]].split("=")[1])
                # the roller is the side not to move right after its roll; each turn played since flips the side
                since = sum(1 for t in self.played[rolls[-1] + 1:] if "=" not in t.split(",")[0]
                            and not t.startswith("target:"))
                roller = (1 - s.bd.stm + since) % 2
                out["last_roll"] = {"n": n, "effect": roll_effect(n, s.reserved[roller] or "4-8")}
        elif vid == "enokian":
            cards = list(s.remaining_cards())
            out["deck"] = len(cards)
            out["kings_left"] = sum(1 for c in cards if c.startswith("K"))
            out["player_pieces"] = sum(1 for sq, c in self.board(viewer).squares.items() if c["color"] == 0)
            # the cards drawn since the player's last move, each with what it moved and why
            last_move = max((i for i, t in enumerate(self.played) if not t.startswith("card=")), default=-1)
            out["card_effects"] = [dict(e, i=i) for i, e in self.card_effects if i > last_move]
        elif vid == "turncoat":
            fields = self.sfen(viewer).split()[4].split(";")
            out["plans"] = [fields[1] if len(fields) > 1 else "-", fields[2] if len(fields) > 2 else "-"]
            out["can_defect"] = bool(getattr(s, "can_declare", lambda: False)())
        elif vid == "mawarikudoi":
            out.update(mawari_panel(s, self.played))
        return out

    def legal_entries(self) -> tuple[list[dict], bool]:
        """``([{"token", "path", "kinds"}], wave)``: every legal action with its click path for the page, and whether
        a silver wave is among them. Wave tokens are left out of the list: the page builds a wave silver by silver
        in any order through :meth:`wave_step` (a wave of many silvers has thousands of tokens, each with one
        fixed order). A plain move onto an own piece (fantasista: boarding a carrier, the only such move) gets the
        kind ``board``."""
        tokens = self.actions()
        wave = any(t.startswith("wave:") for t in tokens) or bool(self._unlisted_wave_moves())
        squares = self.board(None).squares if self.info.id == "fantasista" else {}
        side = self.side() if squares else 0
        out = []
        for token in tokens:
            if token.startswith("wave:"):
                continue
            steps = click_steps(token)
            kinds = [k for _, k in steps]
            if squares and len(steps) == 2 and kinds == ["move", "move"] and steps[0][0].startswith("sq:"):
                target = squares.get(steps[1][0][3:])
                if target is not None and target["color"] == side:
                    kinds[1] = "board"
            out.append({"token": token, "path": [p for p, _ in steps], "kinds": kinds})
        return out, wave

    def _wave_sets(self) -> list[tuple[str, frozenset]]:
        """The listed silver waves of this position as (canonical token, set of silver moves), cached per position."""
        key = (len(self.played), self.state.sfen())
        cached = getattr(self, "_wave_cache", None)
        if cached is None or cached[0] != key:
            waves = [(t, frozenset(filter(None, t[5:].split(",")))) for t in self.actions() if t.startswith("wave:")]
            cached = self._wave_cache = (key, waves)
        return cached[1]

    def _unlisted_wave_moves(self) -> list[str]:
        """Fantasista, a position whose waves are too many for the rules to list (``TurnTable.truncated``, past
        the largest of ``engine.variants.fantasista.turns.LEVELS``): every single move of each own
        silver that may take part in a wave (the rules' own ``piece_moves``); empty elsewhere. Which sets of them make
        a wave is left to ``canonical``."""
        if self.info.id != "fantasista" or self.node() != "decision" or not self.state.turns()[0].truncated:
            return []
        from engine.variants.fantasista import board as FB

        bd, c = self.state.bd, self.state.bd.stm
        if not bd.rights[c][FB.RIGHT_WAVE]:
            return []
        silver = FB.S + 32 * c
        stacks = [(sq, 0) for sq in range(FB.N_SQ) if bd.b[sq] == silver] + \
                 [(sq, 1) for sq in range(FB.N_SQ) if bd.r[sq] == silver]
        return sorted({text for sq, layer in stacks for text, _, _ in FB.piece_moves(bd, sq, layer)})

    def wave_step(self, moves: Any) -> dict:
        """Fantasista: a silver wave chosen silver by silver, **in any order**. ``moves`` are silver moves as the
        wave writes them (``5g5f``, ``5d5c+``, ``rider:8h8g``); they are read as a set (each silver's start and end
        square), so the order of the clicks does not matter. The answer lists the ``next`` moves that some legal
        wave adds to that set, and the canonical ``token`` when the set is a whole wave (every silver not chosen
        stays). The sets come from the rules' own list of waves (``legal_actions``); a set the list spells
        otherwise (two silvers trading destinations: 5g4f with 4g5f for 5g5f with 4g4f) is checked by the rules'
        ``canonical`` in an order where each silver leaves before another lands there. The page needs no rule."""
        if self.info.id != "fantasista":
            raise GameFailure("a silver wave is built silver by silver only in fantasista")
        if not isinstance(moves, list) or not all(isinstance(m, str) for m in moves):
            raise GameFailure("'moves' must be a list of strings")
        waves = self._wave_sets()
        unlisted = [] if waves else self._unlisted_wave_moves()
        if not waves and not unlisted:
            raise GameFailure("no silver wave is possible now")
        chosen: set[str] = set()
        origins: set[str] = set()
        for i, move in enumerate(moves):
            origin = wave_origin(move)
            if move in chosen or origin in origins:
                raise GameFailure(f"the silver on {origin} already moves in this wave ({move!r})")
            chosen.add(move)
            origins.add(origin)
            if not any(chosen <= s for _, s in waves) and self._whole_wave(chosen) is None:
                raise GameFailure(f"silver move {i + 1} {move!r} is not possible in a wave with "
                                  f"{', '.join(moves[:i]) or 'no other move'}")
        further = set()
        token = None
        for t, s in waves:
            if chosen <= s:
                further |= s - chosen
                if s == chosen:
                    token = t
        if token is None:
            token = self._whole_wave(chosen)
        # the other assignments of silvers to squares: any silver move of the position that makes a whole wave
        every = set().union(*(s for _, s in waves)) | set(unlisted)
        for m in sorted(every - further - chosen):
            if wave_origin(m) not in origins and self._whole_wave(chosen | {m}) is not None:
                further.add(m)
        nxt = [{"move": m, "from": wave_origin(m), "to": _SQ.findall(m)[-1], "promote": m.endswith("+")}
               for m in sorted(further)]
        out: dict[str, Any] = {"moves": list(moves), "next": nxt}
        if token is not None:
            out["token"] = token
        return out

    def _whole_wave(self, moves: set) -> str | None:
        """The canonical token of the wave made of exactly ``moves`` (every other silver stays), or ``None`` if the
        rules refuse it. The moves are put in an order where a silver leaves a square before another lands on it
        (no order exists for a cycle); ``FantasistaState.canonical`` then judges the spelling."""
        order, left = [], sorted(moves)
        while left:
            origins = {wave_origin(m) for m in left}
            free = [m for m in left if _SQ.findall(m)[-1] not in origins]
            if not free:
                return None
            order += free
            left = [m for m in left if m not in free]
        try:
            return self.state.canonical("wave:" + ",".join(order))
        except Exception:  # noqa: BLE001 - GameError: not a legal wave
            return None

    def turn_step(self, actions: list) -> dict:
        """Mawarikudoi: the turn being built action by action (see :func:`mawari_turn_step`)."""
        self._check_turn()
        return mawari_turn_step(self.state, self.info, actions)

    def _turn_rest(self, actions: Any) -> MawariRest:
        """The rest of the turn after ``actions`` (cached per position and actions: the page asks twice)."""
        self._check_turn()
        key = (len(self.played), self.state.sfen(), tuple(actions) if isinstance(actions, list) else actions)
        cached = getattr(self, "_rest_cache", None)
        if cached is None or cached[0] != key:
            from engine.variants.mawarikudoi.turns import TurnGenerator

            if getattr(self, "_turn_gen", None) is None:
                self._turn_gen = TurnGenerator()  # scratch buffers, used under the session's lock
            cached = self._rest_cache = (key, MawariRest(self.state, actions, self._turn_gen))
        return cached[1]

    def turn_ends(self, actions: Any = ()) -> dict:
        """Mawarikudoi: where the turn can end after ``actions`` (see :func:`mawari_turn_ends`) and, when the king
        can finish, the whole winning token (``win_token``)."""
        from engine.variants.mawarikudoi import board as MB

        rest = self._turn_rest(list(actions) if isinstance(actions, tuple) else actions)
        out: dict[str, Any] = {"ends": mawari_turn_ends(rest)}
        if MB.WIN in rest.states:
            out["win_token"] = rest.token(MB.WIN)  # traces the one winning path only
        return out

    def turn_end_token(self, end: Any, actions: Any = ()) -> str:
        """Mawarikudoi: the turn token made of ``actions`` and then the canonical path to end state ``end`` (an id
        from :meth:`turn_ends`); :class:`GameFailure` if no turn of this throw ends there."""
        if isinstance(end, bool) or not isinstance(end, int):
            raise GameFailure(f"'end' must be an end-state number from the turn's list, not {end!r}")
        return self._turn_rest(actions).token(end)

    def _check_turn(self) -> None:
        if self.info.id != "mawarikudoi" or getattr(self.state, "phase", "") != "turn":
            raise GameFailure("there is no mawarikudoi turn to build now")

    # ------------------------------------------------------------------ notation
    def japanese(self, token: str, prev_to: str | None) -> str:
        """KIF-style Japanese notation of ``token`` in the current position (before it is played).

        A token whose squares cannot be named (``target:zz``, ``plan:``) is refused with :class:`GameFailure`, the
        error the move itself would get, never a server error."""
        try:
            return self._japanese(token, prev_to)
        except (ValueError, IndexError, KeyError) as exc:
            raise GameFailure(f"{token!r} is not a move of this game ({exc})") from None

    def _japanese(self, token: str, prev_to: str | None) -> str:
        if "=" in token.split(",")[0] and not token.startswith("defect"):
            return ja_event(token)
        if self.info.id == "mawarikudoi":
            return mawari_japanese(self.state, token)
        if token.startswith("plan:"):
            return "伏兵 " + "・".join(ja_square(q) for q in token[5:].split(",") if q)
        if token == "defect" or token.startswith("defect"):
            rest = token.partition(",")[2]
            return "寝返り" + (" " + self._japanese(rest, prev_to) if rest else "")
        board = self.board(None) if self.info.id != "turncoat" else self.board(self.side())
        legs = token.split(",")
        if len(legs) > 1 and all(re.fullmatch(r"(\d{1,2}[a-m]){2}\+?", leg) for leg in legs) and all(
                _SQ.findall(a)[1] == _SQ.findall(b)[0] for a, b in zip(legs, legs[1:])):
            # one piece moving in several legs (lion, rook awakening, gale horse): destination, piece, origin, via
            frm, to = _SQ.findall(legs[0])[0], _SQ.findall(legs[-1])[1]
            via = [_SQ.findall(leg)[1] for leg in legs[:-1]]
            cell = board.squares.get(frm)
            piece = cell["kanji"] if cell else "?"
            promo = "成" if any(leg.endswith("+") for leg in legs) else ""
            where = "同　" if to == prev_to else ja_square(to)
            return f"{where}{piece}{promo}({kif_origin(frm)}) " + "・".join(ja_square(q) for q in via) + "経由"
        first, _, rest = token.partition(",")
        word = ""
        m = _WORD_PART.match(first)
        if m and not first[0].isdigit():
            word, first = m.groups()
            if word == "target":
                return "対象 " + ja_square(first)
            if word not in BUTTON_WORDS | SILENT_WORDS:
                return token
            word = {"curtain": "銀の帳 ", "wave": "銀の波 ", "rider": "騎乗 "}.get(word, "")
        d = _DROP.match(first)
        squares = _SQ.findall(first)
        if d and squares:
            letter = d.group(1).rstrip("'")
            text = f"{ja_square(squares[0])}{self.info.names(letter)[0]}打"
            if first.endswith("+"):
                text += "成"
        elif len(squares) >= 2:
            frm, to = squares[0], squares[-1] if ":x" not in first else squares[0]
            cell = board.squares.get(frm)
            piece = cell["kanji"] if cell else "?"
            where = "同　" if to == prev_to else ja_square(to)
            promo = "成" if first.endswith("+") else ""
            text = f"{where}{piece}{promo}({kif_origin(frm)})"
            if ":x" in first:
                text += f" 取{ja_square(squares[1])}"
        elif squares:
            text = ja_square(squares[0])
        else:
            return word + token if word else token
        if rest:
            text += " " + ",".join(rest.split(","))
        return word + text


def _attacked_royal(pos) -> str | None:
    """The square of a royal piece (king, dai shogi's crown prince) of the side to move that the other side attacks."""
    from engine.variant import COLOR_SHIFT

    g, me = pos.variant.geometry, pos.turn
    for sq in (g.square(f, r) for f in range(g.n_files) for r in range(g.n_ranks)):
        code = int(pos.state.board[sq])
        if code and code >> COLOR_SHIFT == me and pos.variant.piece(code & 31).royal and pos.attackers(sq, 1 - me):
            return g.square_name(sq)
    return None


def _hides_a_plan(state: TurncoatGame) -> bool:
    """Whether a turncoat state has a plan it shows as hidden (a side's view, not the true state)."""
    from engine.variants.turncoat.state import HIDDEN

    return HIDDEN in state.plans


def _turncoat_sfen(state: TurncoatGame, viewer: int | None) -> str:
    """A turncoat state's SFEN as ``viewer`` may see it (see :meth:`GuiGame.sfen`)."""
    if viewer == NOBODY:
        own = [state.sfen(side).split(" ") for side in (0, 1)]
        extra = own[0][4].split(";")
        extra[1] = own[1][4].split(";")[1]  # sente's plan as gote sees it: each side hides the other's
        return " ".join(own[0][:4] + [";".join(extra)])
    return state.sfen(viewer)


def last_move_squares(token: str) -> list[str]:
    """The squares a played token touched (for the last-move highlight)."""
    return list(dict.fromkeys(_SQ.findall(token)))


def to_square(token: str) -> str | None:
    """Where the turn's piece ended (for KIF's 同); captures in place (``:x``) do not move it. A turncoat plan moves
    no piece (and its squares are secret): ``None``."""
    if token.startswith("plan"):
        return None
    squares = _SQ.findall(re.sub(r":x\d{1,2}[a-m]", "", token))
    return squares[-1] if squares else None


def wave_origin(move: str) -> str:
    """The square a silver-wave move starts from (``5g5f`` and ``rider:8h8g`` -> ``5g`` / ``8h``)."""
    squares = _SQ.findall(move)
    if len(squares) != 2 or not re.fullmatch(r"(rider:)?\d[a-i]\d[a-i]\+?", move):
        raise GameFailure(f"{move!r} is not a silver move like 5g5f, 5d5c+ or rider:8h8g")
    return squares[0]


# ------------------------------------------------------------------------------------------ mawarikudoi
RUNNER_KANJI = "歩香桂銀角飛玉"
FACING_ARROWS = {"n": "↑", "e": "→", "s": "↓", "w": "←"}
FACE_NAMES = {"x": "upside down (100)", "v": "upright (10)", "s": "on its side (5)", "u": "face up (1)",
              "d": "face down (0)"}


def mawari_board(state, info: VariantInfo) -> Board:
    """The runners, each turned to its facing (``facing`` 0..3 = n e s w); a runner sharing the other's square is
    shown as that square's ``rider``; the corners each side has touched this leg are listed in ``corners``."""
    from engine.variants.mawarikudoi import board as MB

    board = Board(9, 9, turn=state.side)
    for side in (0, 1):
        me = state.sides[side]
        if me.runner >= MB.FINISHED:
            continue
        letter = MB.RUNNERS[me.runner]
        kanji, western = info.names(letter)
        cell = {"letter": letter, "color": side, "kanji": kanji, "western": western, "marks": "",
                "facing": MB.FACINGS[me.facing]}
        name = MB.square_name(me.sq)
        if name in board.squares:
            board.squares[name]["rider"] = dict(cell)
        else:
            board.squares[name] = cell
    return board


def _mawari_corners(side: int, code: int) -> dict:
    from engine.variants.mawarikudoi import board as MB

    corners = [MB.square_name(c) for c in MB.corners_of(side)]
    if code == 0:
        touched = []
    elif code == MB.CORNERS_DONE:
        touched = ["two or more"]
    else:
        touched = [corners[code - 1]]
    return {"corners": corners, "touched": touched, "home": MB.square_name(MB.start_square(side)),
            "ready": code == MB.CORNERS_DONE}


def mawari_throw(token: str) -> dict:
    """A ``throw=`` event as the page draws it: the generals' faces, each group's score and N."""
    from engine.variants.mawarikudoi import throws as MT

    gold, silver = MT.parse_throw(token)
    groups = [{"name": "金", "faces": list(gold), "score": MT.group_score(gold)}]
    if silver is not None:
        groups.append({"name": "銀", "faces": list(silver), "score": MT.group_score(silver)})
    return {"token": token, "groups": groups, "n": MT.throw_value(gold, silver), "mixed": silver is not None}


def mawari_panel(state, played: list[str]) -> dict:
    """Runner progress per side (current runner in relay order, square, facing, corners), the throw rights, the
    phase and the last throw."""
    from engine.variants.mawarikudoi import board as MB

    sides = []
    for side in (0, 1):
        me = state.sides[side]
        done = me.runner >= MB.FINISHED
        entry = {"runner": me.runner, "relay": list(RUNNER_KANJI), "finished": done, "mixed_right": me.mixed_right,
                 "mixed_allowed": state.mixed_allowed(side) if state.phase != "end" else False}
        if not done:
            entry.update(square=MB.square_name(me.sq), facing=MB.FACINGS[me.facing],
                         name=MB.RUNNER_NAMES[me.runner], kanji=RUNNER_KANJI[me.runner],
                         **_mawari_corners(side, me.corners))
        sides.append(entry)
    out: dict[str, Any] = {"sides": sides, "phase": state.phase, "steps": state.steps}
    throws = [t for t in played if t.startswith("throw=")]
    if throws:
        out["last_throw"] = mawari_throw(throws[-1])
    return out


def _mawari_next(state, side: int, s2: int) -> list[tuple[str, int]]:
    """Every single action of the runner in turn-state ``s2`` (sente's frame): (action text, action index)."""
    from engine.variants.mawarikudoi import board as MB

    r, sq, f, _ = MB.unpack(s2 >> 1)
    nt = int(MB.N_TARGETS[r, sq, f])
    here = MB.square_name(MB.from_frame(side, sq, 0)[0])
    out = [(here + MB.square_name(MB.from_frame(side, int(MB.TARGETS[r, sq, f, a]), 0)[0]), a) for a in range(nt)]
    for k in range(MB.N_FACINGS - 1):
        nf = k if k < f else k + 1
        out.append(("turn:" + MB.FACINGS[MB.from_frame(side, 0, nf)[1]], nt + k))
    return out


def _mawari_walk(state, actions: Any) -> int:
    """The turn-state (sente's frame, stomp bit included) after ``actions``, each checked with the rules' own step
    function (the one ``parse_turn`` uses); :class:`GameFailure` names the first action that is not possible."""
    from engine.variants.mawarikudoi import board as MB
    from engine.variants.mawarikudoi import kernels as MK

    if not isinstance(actions, (list, tuple)) or not all(isinstance(a, str) for a in actions):
        raise GameFailure("'actions' must be a list of strings")
    side = state.side
    esq, erank = state.enemy_in_frame(side)
    s2 = state.frame_state(side) * 2
    for i, act in enumerate(actions):
        if s2 == MB.WIN2:
            raise GameFailure(f"the king finished after {i} action(s): the turn is over")
        if i >= state.steps:
            raise GameFailure(f"the throw gave {state.steps} action(s), not {len(actions)}")
        a = dict(_mawari_next(state, side, s2)).get(act)
        if a is None:
            raise GameFailure(f"action {i + 1} {act!r} is not possible for the runner here")
        s2 = int(MK.step(s2, a, MB.TARGETS, MB.N_TARGETS, esq, erank))
    return s2


class MawariRest:
    """The rest of a mawarikudoi turn after some ``actions``: where it can end and the canonical path to an end.

    Uses the rules' turn generation (:class:`engine.variants.mawarikudoi.turns.TurnGenerator`) from the runner's
    state after those actions, with the actions left; a stomp already made this turn disables further stomps
    (``enemy_rank = -1``, as the generator documents), so every end listed can be reached from here."""

    def __init__(self, state, actions: Any, generator) -> None:
        from engine.variants.mawarikudoi import board as MB

        s2 = _mawari_walk(state, actions)
        self.state, self.actions, self.gen = state, list(actions), generator
        if s2 == MB.WIN2:
            raise GameFailure("the king has finished: the turn is over")
        self.start, self.left = s2 >> 1, state.steps - len(self.actions)
        self.esq, erank = state.enemy_in_frame(state.side)
        self.erank = -1 if s2 & 1 else erank
        self.states = [int(x) for x in self.gen.end_states(self.start, self.left, self.esq, self.erank)[0]] \
            if self.left > 0 else []

    def token(self, end: int) -> str:
        """The whole turn token: the actions so far, then the canonical path to ``end`` (or ``board.WIN``)."""
        if end not in self.states:
            raise GameFailure(f"no turn of {self.state.steps} action(s) ends in state {end} from here")
        rest = self.state.format_turn(self.gen.path_to(self.start, self.left, self.esq, self.erank, end))
        return ",".join(self.actions + ([rest] if rest else []))


def mawari_turn_step(state, info: VariantInfo, actions: list) -> dict:
    """A mawarikudoi turn built one action at a time. ``actions`` so far are checked with the rules' own step
    function; the answer has the runner after them (``board``, ``panel`` previews), ``left`` actions, whether the
    king has ``won``, the possible ``next`` actions with their click step, and ``token`` once the turn is complete.
    Every action of the runner can be followed by a full turn (turning on the spot always spends an action), so
    the page may offer each of them."""
    from engine.variants.mawarikudoi import board as MB

    side = state.side
    s2 = _mawari_walk(state, actions)
    won = s2 == MB.WIN2
    left = 0 if won else state.steps - len(actions)
    preview = state.copy()
    me = preview.sides[side]
    if won:
        me.runner = MB.FINISHED
    else:
        r, sq, f, c = MB.unpack(s2 >> 1)
        me.runner, me.corners = r, c
        me.sq, me.facing = MB.from_frame(side, sq, f)
    nxt = []
    if left > 0:
        for act, _ in _mawari_next(state, side, s2):
            nxt.append({"action": act, "step": f"btn:{act}" if act.startswith("turn:") else f"sq:{act[2:]}"})
    out = {"actions": list(actions), "steps": state.steps, "left": left, "won": won, "next": nxt,
           "board": mawari_board(preview, info).to_json(), "panel": mawari_panel(preview, [])}
    if left == 0:
        out["token"] = ",".join(actions)
    return out


def mawari_turn_ends(rest: MawariRest) -> list[dict]:
    """Every distinct end of the turn from ``rest`` on but the win (which the page offers as one button): the
    end-state number (``end``, for :meth:`MawariRest.token`), the runner's board ``square``, ``facing``, runner
    (``kanji``, ``relays`` made this turn), the corners touched on its leg, and a short ``label``. The states come
    from the rules' turn generation; no path is traced until one is chosen."""
    from engine.variants.mawarikudoi import board as MB

    state = rest.state
    side = state.side
    now = state.sides[side].runner
    out = []
    for end in rest.states:
        if end == MB.WIN:
            continue
        r, sq, f, c = MB.unpack(end)
        square, facing = MB.from_frame(side, sq, f)
        corners = _mawari_corners(side, c)
        name, face = MB.square_name(square), MB.FACINGS[facing]
        label = f"{RUNNER_KANJI[r]} {name} {FACING_ARROWS[face]}{face}"
        if r != now:
            label += f" (relay → {RUNNER_KANJI[r]})"
        label += "; corners: " + (", ".join(corners["touched"]) or "none")
        out.append({"end": end, "square": name, "step": f"sq:{name}", "facing": face, "runner": r,
                    "kanji": RUNNER_KANJI[r], "relays": r - now, "touched": corners["touched"], "label": label})
    return out


def mawari_japanese(state, token: str) -> str:
    """``歩 １九→１三 (6手)``, ``金銀振り``; the runner and squares of a turn, the relays it made."""
    from engine.variants.mawarikudoi import board as MB

    if token == "throw:gold":
        return "金振り"
    if token == "throw:mixed":
        return "金銀振り"
    if getattr(state, "phase", "") != "turn":
        return token
    side = state.side
    me = state.sides[side]
    start = RUNNER_KANJI[me.runner] + " " + ja_square(MB.square_name(me.sq))
    try:
        after = mawari_turn_step(state, VariantInfo("mawarikudoi", "", ""), token.split(","))
    except GameFailure:
        return token
    them = after["panel"]["sides"][side]
    n = len(token.split(","))
    if after["won"]:
        return f"{start} → 上がり ({n}手)"
    relay = "" if them["runner"] == me.runner else f" {RUNNER_KANJI[them['runner']]}へ"
    return f"{start} → {ja_square(them['square'])}{relay} ({n}手)"

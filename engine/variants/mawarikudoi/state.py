"""The race as a :class:`engine.game.GameState`: nodes, tokens, extended SFEN.

A turn is three nodes::

    decision  "throw:gold" | "throw:mixed"     only when the mixed throw is allowed (else skipped)
    chance    "throw=<gold faces>[/<silver faces>]"
    decision  "<action>,<action>,..."          exactly N actions (fewer only when the king finishes)

An action is a move ``<from><to>`` in USI squares (``1i1a``) or a turn ``turn:<facing>`` with an absolute facing
``n`` (toward rank a), ``e`` (toward file 1), ``s`` (toward rank i), ``w`` (toward file 9). Relays happen inside
the token with no mark: after a relay the next move simply starts from the start corner.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from ...game import GameError, NodeKind
from . import board as B
from . import kernels as K
from . import throws as T
from .turns import TurnEnd, TurnGenerator

VARIANT_ID = "mawarikudoi"
PHASES = ("choose", "gold", "mixed", "turn", "end")
_PHASE_CODE = {"choose": "c", "gold": "g", "mixed": "m", "end": "end"}


@dataclass
class _Side:
    runner: int  # 0..6 (P L N S B R K), FINISHED once the king's leg is complete
    sq: int  # board square
    facing: int  # board facing, 0..3 = n e s w
    corners: int  # corner code (see board.py), in this side's frame
    mixed_right: bool = True


def _fresh(side: int, runner: int = 0) -> _Side:
    return _Side(runner, B.start_square(side), B.from_frame(side, B.START_SQ, B.START_FACING)[1], 0)


_generators: dict[int, TurnGenerator] = {}


def _generator() -> TurnGenerator:
    import threading
    key = threading.get_ident()
    gen = _generators.get(key)
    if gen is None:
        gen = _generators[key] = TurnGenerator()
    return gen


@dataclass
class MawarikudoiState:
    """Mawarikudoi shogi. ``MawarikudoiState()`` is the start position; options: ``probs`` (face probabilities)."""

    probs: T.ThrowProbabilities = T.DEFAULT_PROBABILITIES
    sides: list = field(default_factory=lambda: [_fresh(0), _fresh(1)])
    side: int = 0
    phase: str = "gold"
    steps: int = 0  # N, during the "turn" phase
    turn: int = 1
    winner: int = -1

    variant_id = VARIANT_ID

    # ------------------------------------------------------------ queries
    def copy(self) -> "MawarikudoiState":
        return replace(self, sides=[replace(s) for s in self.sides])

    def node_kind(self) -> NodeKind:
        if self.phase == "end":
            return NodeKind.TERMINAL
        if self.phase in ("gold", "mixed"):
            return NodeKind.CHANCE
        return NodeKind.DECISION

    def side_to_move(self) -> int:
        return self.side

    def mixed_allowed(self, side: int) -> bool:
        """The gold-and-silver throw: own runner lower in the relay order than the enemy's, right not yet lost."""
        me, you = self.sides[side], self.sides[1 - side]
        return me.mixed_right and me.runner < you.runner

    def n_silvers(self) -> int:
        """Silvers a mixed throw uses: four minus the silvers running as runners."""
        return T.N_SILVERS - sum(1 for s in self.sides if s.runner == B.SILVER)

    def frame_state(self, side: int) -> int:
        """Runner state index of ``side`` in sente's frame (``board.WIN`` once finished)."""
        me = self.sides[side]
        if me.runner >= B.FINISHED:
            return B.WIN
        sq, f = B.to_frame(side, me.sq, me.facing)
        return B.pack(me.runner, sq, f, me.corners)

    def enemy_in_frame(self, side: int) -> tuple[int, int]:
        """(enemy square in ``side``'s frame, enemy rank) for stomps; rank -1 when there is none."""
        you = self.sides[1 - side]
        if you.runner >= B.FINISHED:
            return -1, -1
        return B.to_frame(side, you.sq, 0)[0], you.runner

    def throw_distribution(self, kind: str):
        """``d[N]`` of the gold (``"gold"``) or mixed (``"mixed"``) throw for the side to move."""
        if kind == "gold":
            return T.gold_distribution(self.probs)
        return T.mixed_distribution(self.n_silvers(), self.probs)

    def legal_actions(self) -> list[str]:
        if self.phase == "choose":
            return ["throw:gold", "throw:mixed"]
        if self.phase == "turn":
            return [self.format_turn(e) for e in self.turn_ends()]
        return []

    def chance_events(self) -> list[tuple[str, float]]:
        if self.phase == "gold":
            return T.throw_events(None, self.probs)
        if self.phase == "mixed":
            return T.throw_events(self.n_silvers(), self.probs)
        return []

    def result(self) -> tuple[float, str] | None:
        if self.phase != "end":
            return None
        who = "sente" if self.winner == 0 else "gote"
        return (1.0 if self.winner == 0 else 0.0, f"{who}'s king completed its leg")

    # ------------------------------------------------------------ turns
    def turn_ends(self) -> list[TurnEnd]:
        """Distinct end states of the current turn (sente's frame) with canonical paths."""
        if self.phase != "turn":
            return []
        esq, erank = self.enemy_in_frame(self.side)
        return _generator().turn_ends(self.frame_state(self.side), self.steps, esq, erank)

    def turn_token(self, end: int) -> str:
        """The canonical turn token that ends the current turn in runner state ``end`` (sente's frame)."""
        esq, erank = self.enemy_in_frame(self.side)
        return self.format_turn(_generator().path_to(self.frame_state(self.side), self.steps, esq, erank, end))

    def end_states(self):
        """Sorted array of the distinct end runner states (sente's frame; ``board.WIN`` if the win is reachable)."""
        esq, erank = self.enemy_in_frame(self.side)
        return _generator().end_states(self.frame_state(self.side), self.steps, esq, erank)[0]

    def format_turn(self, end: TurnEnd) -> str:
        """The turn token of a path (board coordinates of the side to move)."""
        parts = []
        for s2, a in end.path:
            r, sq, f, _ = B.unpack(s2 >> 1)
            nt = int(B.N_TARGETS[r, sq, f])
            if a < nt:
                to = int(B.TARGETS[r, sq, f, a])
                parts.append(B.square_name(B.from_frame(self.side, sq, 0)[0])
                             + B.square_name(B.from_frame(self.side, to, 0)[0]))
            else:
                k = a - nt
                nf = k if k < f else k + 1
                parts.append("turn:" + B.FACINGS[B.from_frame(self.side, 0, nf)[1]])
        return ",".join(parts)

    def parse_turn(self, token: str) -> int:
        """Check a turn token against the rules; return the end runner state (sente's frame, or ``board.WIN``)."""
        if self.phase != "turn":
            raise GameError(f"no turn to play now (the game is at its {self.phase!r} node)")
        if not token or token != token.strip():
            raise GameError(f"empty or padded turn token {token!r}")
        parts = token.split(",")
        esq, erank = self.enemy_in_frame(self.side)
        s2 = self.frame_state(self.side) * 2
        for i, part in enumerate(parts):
            if s2 == B.WIN2:
                raise GameError(f"the king finished after {i} action(s); {token!r} goes on with {part!r}")
            r, sq, f, _ = B.unpack(s2 >> 1)
            nt = int(B.N_TARGETS[r, sq, f])
            if part.startswith("turn:"):
                name = part[5:]
                if len(name) != 1 or name not in B.FACINGS:
                    raise GameError(f"bad facing in {part!r} (action {i + 1}): use turn:n, turn:e, turn:s or turn:w")
                nf = B.to_frame(self.side, 0, B.FACINGS.index(name))[1]
                if nf == f:
                    raise GameError(f"action {i + 1} {part!r}: the runner already faces {name}")
                a = nt + (nf if nf < f else nf - 1)
            else:
                try:
                    frm, to = B.parse_square(part[:2]), B.parse_square(part[2:])
                    if len(part) != 4:
                        raise ValueError
                except ValueError:
                    raise GameError(f"bad action {part!r} (action {i + 1}): expected a move like 1i1h "
                                    f"or a turn like turn:w") from None
                here = B.from_frame(self.side, sq, 0)[0]
                if frm != here:
                    raise GameError(f"action {i + 1} {part!r}: the runner stands on {B.square_name(here)}, "
                                    f"not {part[:2]}")
                tf = B.to_frame(self.side, to, 0)[0]
                found = [j for j in range(nt) if int(B.TARGETS[r, sq, f, j]) == tf]
                if not found:
                    raise GameError(f"action {i + 1} {part!r}: a {B.RUNNER_NAMES[r]} facing "
                                    f"{B.FACINGS[B.from_frame(self.side, 0, f)[1]]} cannot move from "
                                    f"{part[:2]} to {part[2:]}")
                a = found[0]
            s2 = int(K.step(s2, a, B.TARGETS, B.N_TARGETS, esq, erank))
        if s2 != B.WIN2 and len(parts) != self.steps:
            raise GameError(f"the throw gave {self.steps} action(s), the turn {token!r} has {len(parts)}")
        return B.WIN if s2 == B.WIN2 else s2 >> 1

    # ------------------------------------------------------------ playing
    def apply(self, token: str) -> None:
        if not isinstance(token, str):
            raise GameError(f"tokens are strings, not {type(token).__name__}")
        if self.phase == "end":
            raise GameError(f"the game is over; cannot play {token!r}")
        if self.phase == "choose":
            if token == "throw:gold":
                self.phase = "gold"
            elif token == "throw:mixed":
                self.phase = "mixed"
            else:
                raise GameError(f"expected the choice of throw 'throw:gold' or 'throw:mixed', got {token!r}")
            return
        if self.phase in ("gold", "mixed"):
            try:
                gold, silver = T.parse_throw(token)
            except ValueError as exc:
                raise GameError(str(exc)) from None
            want = self.n_silvers() if self.phase == "mixed" else None
            if len(gold) != T.N_GOLDS:
                raise GameError(f"{token!r}: a throw has {T.N_GOLDS} golds, not {len(gold)}")
            if want is None and silver is not None:
                raise GameError(f"{token!r}: this is a gold throw, no silvers")
            if want is not None and (silver is None or len(silver) != want):
                raise GameError(f"{token!r}: this mixed throw has {want} silvers after '/'")
            self.apply_throw_value(T.throw_value(gold, silver))
            return
        self.apply_end_state(self.parse_turn(token))

    def apply_throw_value(self, n: int) -> None:
        """Fast path (simulations): the throw at the chance node gave ``n`` steps."""
        if self.phase == "mixed" and n >= T.MIXED_LOSS_THRESHOLD:
            self.sides[self.side].mixed_right = False
        self.steps = n
        self.phase = "turn"

    def choose_throw(self, kind: str) -> None:
        """Fast path: ``"gold"`` or ``"mixed"`` (applies ``throw:<kind>`` when there is a choice)."""
        if self.phase == "choose":
            self.apply("throw:" + kind)
        elif kind != "gold" or self.phase != "gold":
            raise GameError(f"no choice of throw now ({kind!r} at the {self.phase!r} node)")

    def apply_end_state(self, state: int) -> None:
        """Fast path: end the turn in runner state ``state`` (sente's frame), assumed reachable."""
        me = self.sides[self.side]
        if state == B.WIN:
            me.runner = B.FINISHED
            self.winner = self.side
            self.phase = "end"
            self.turn += 1
            return
        r, sq, f, c = B.unpack(state)
        me.runner, me.corners = r, c
        me.sq, me.facing = B.from_frame(self.side, sq, f)
        self.side = 1 - self.side
        self.turn += 1
        self.steps = 0
        self.phase = "choose" if self.mixed_allowed(self.side) else "gold"

    # ------------------------------------------------------------ SFEN
    def sfen(self) -> str:
        return f"{self._board_field()} {'bw'[self.side]} - {self.turn} {self._state_field()}"

    def _board_field(self) -> str:
        cells = [""] * B.N_SQUARES
        for side in (1, 0):  # sente drawn last: it shows when both share a square
            s = self.sides[side]
            if s.runner < B.FINISHED:
                ch = B.RUNNERS[s.runner]
                cells[s.sq] = ch if side == 0 else ch.lower()
        rows = []
        for rank in range(B.N_RANKS):
            row, empty = "", 0
            for file in range(B.N_FILES - 1, -1, -1):
                c = cells[file * B.N_RANKS + rank]
                if c:
                    row += (str(empty) if empty else "") + c
                    empty = 0
                else:
                    empty += 1
            rows.append(row + (str(empty) if empty else ""))
        return "/".join(rows)

    def _side_field(self, side: int) -> str:
        s = self.sides[side]
        right = "m" if s.mixed_right else "-"
        if s.runner >= B.FINISHED:
            return "done:" + right
        ch = B.RUNNERS[s.runner] if side == 0 else B.RUNNERS[s.runner].lower()
        if s.corners == 0:
            corners = "-"
        elif s.corners == B.CORNERS_DONE:
            corners = "*"
        else:
            corners = B.square_name(B.corners_of(side)[s.corners - 1])
        return f"{ch}{B.square_name(s.sq)}:{B.FACINGS[s.facing]}:{corners}:{right}"

    def _state_field(self) -> str:
        phase = f"t{self.steps}" if self.phase == "turn" else _PHASE_CODE[self.phase]
        return f"{self._side_field(0)}/{self._side_field(1)}/{phase}"

    @classmethod
    def from_sfen(cls, sfen: str, probs: T.ThrowProbabilities = T.DEFAULT_PROBABILITIES) -> "MawarikudoiState":
        """Parse an extended SFEN (see docs/mawarikudoi.md). Raises :class:`GameError` on anything malformed."""
        fields = sfen.split(" ")
        if len(fields) != 5:
            raise GameError(f"a mawarikudoi SFEN has 5 space-separated fields (board, side, hand, turn, race), "
                            f"got {len(fields)}: {sfen!r}")
        board, side_text, hand, turn_text, race = fields
        if side_text not in ("b", "w"):
            raise GameError(f"side to move must be b or w, not {side_text!r}")
        if hand != "-":
            raise GameError(f"the race has no pieces in hand; the hand field must be '-', not {hand!r}")
        if not turn_text.isdigit() or int(turn_text) < 1:
            raise GameError(f"bad turn number {turn_text!r}")
        parts = race.split("/")
        if len(parts) != 3:
            raise GameError(f"the race field is <sente>/<gote>/<phase>, got {race!r}")
        sides = [cls._parse_side(parts[i], i) for i in (0, 1)]
        side = "bw".index(side_text)
        ph = parts[2]
        steps = 0
        if ph.startswith("t") and ph[1:].isdigit() and not ph[1:].startswith("0"):
            phase, steps = "turn", int(ph[1:])
        elif ph in ("c", "g", "m", "end"):
            phase = {"c": "choose", "g": "gold", "m": "mixed", "end": "end"}[ph]
        else:
            raise GameError(f"bad phase {ph!r} (c, g, m, t<N> or end)")
        done = [s.runner >= B.FINISHED for s in sides]
        winner = -1
        if any(done):
            if all(done) or phase != "end":
                raise GameError(f"{race!r}: exactly one side finished and the phase is 'end', or none finished")
            winner = done.index(True)
            if winner != side:
                raise GameError(f"{sfen!r}: the side to move is the one whose king finished")
        elif phase == "end":
            raise GameError(f"{race!r}: phase 'end' but no side has finished")
        state = cls(probs=probs, sides=sides, side=side, phase=phase, steps=steps, turn=int(turn_text),
                    winner=winner)
        if phase in ("choose", "mixed") and not state.mixed_allowed(side):
            raise GameError(f"{race!r}: phase {ph!r} needs the mixed throw to be allowed for the side to move "
                            f"(own runner lower than the enemy's and the right not lost)")
        if state._board_field() != board:
            raise GameError(f"board field {board!r} does not match the runners of the race field "
                            f"(expected {state._board_field()!r})")
        return state

    @staticmethod
    def _parse_side(text: str, side: int) -> _Side:
        who = "sente" if side == 0 else "gote"
        items = text.split(":")
        if len(items) == 2 and items[0] == "done" and items[1] in ("m", "-"):
            return _Side(B.FINISHED, -1, 0, 0, items[1] == "m")
        if len(items) != 4:
            raise GameError(f"{who}'s runner field {text!r} is <runner><square>:<facing>:<corners>:<right>")
        head, facing, corners, right = items
        letters = B.RUNNERS if side == 0 else B.RUNNERS.lower()
        if len(head) != 3 or head[0] not in letters:
            raise GameError(f"{who}'s runner {head!r}: a letter of {letters} (case gives the side) and a square")
        try:
            sq = B.parse_square(head[1:])
        except ValueError as exc:
            raise GameError(str(exc)) from None
        runner = letters.index(head[0])
        if facing not in B.FACINGS or len(facing) != 1:
            raise GameError(f"{who}'s facing {facing!r} is one of n, e, s, w")
        if right not in ("m", "-"):
            raise GameError(f"{who}'s throw right {right!r} is 'm' (mixed throw kept) or '-' (lost)")
        own = B.corners_of(side)
        if corners == "-":
            code = 0
        elif corners == "*":
            code = B.CORNERS_DONE
        else:
            try:
                csq = B.parse_square(corners)
            except ValueError as exc:
                raise GameError(str(exc)) from None
            if csq not in own:
                raise GameError(f"{who}'s corner {corners!r} is not one of its corners "
                                f"{', '.join(B.square_name(c) for c in own)}")
            code = 1 + own.index(csq)
        if sq in own and not (code == B.CORNERS_DONE or (code and own[code - 1] == sq)):
            raise GameError(f"{who}'s runner stands on the corner {head[1:]} but the corners field {corners!r} "
                            f"does not record it")
        fsq = B.to_frame(side, sq, 0)[0]
        if runner == B.RUNNERS.index("B") and ((fsq // 9) + (fsq % 9)) % 2 != 0:
            raise GameError(f"{who}'s bishop on {head[1:]} is off the corners' colour; it could never get there")
        return _Side(runner, sq, B.FACINGS.index(facing), code, right == "m")


def new_game(**options) -> MawarikudoiState:
    """The start position. Options: the five face probabilities ``face_up``, ``face_down``, ``side``,
    ``upright``, ``upside_down`` (see :class:`throws.ThrowProbabilities`), or ``probs=ThrowProbabilities(...)``."""
    probs = options.pop("probs", None)
    if options:
        try:
            probs = T.ThrowProbabilities(**options)
        except TypeError as exc:
            raise ValueError(f"unknown mawarikudoi option: {exc}") from None
    return MawarikudoiState(probs=probs or T.DEFAULT_PROBABILITIES)

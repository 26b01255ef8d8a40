"""The referee for the GameState games (fantasista, turncoat, mawarikudoi, enokian); see ``docs/matches.md``.

:class:`GameReferee` plays a two-player game (fantasista, turncoat, mawarikudoi): it owns the true
:class:`engine.game.GameState`, draws every chance event (``roll=``, ``throw=``) from the game's seeded
``random.Random``, sends each engine ``position ... moves ...`` with only the tokens its side may see (turncoat: its
own plan as ``plan=<squares>``, the enemy's as ``plan=?`` until ``defect=<squares>`` reveals it), asks the engine to
decide with ``go`` at every decision node of its side (turns, ``target:``, ``plan:``, ``throw:gold|mixed``,
``defect,<move>``), validates every answer with ``state.apply`` (a rejected one loses: ``illegal move``) and ends
the game on ``state.result()``.

:class:`SoloReferee` plays enokian, a one-player game, as a *duplicate*: one deck is shuffled from the game's seed
(its order is never sent; only the drawn ``card=`` events are), both engines play it alone, one after the other, and
the better outcome wins the game (both survive or both lose: a draw).
"""
from __future__ import annotations

import datetime as _dt
import time
from typing import Any, Callable, Optional

from . import games
from .referee import SIDES, GameOver, GameTask, HistoryItem, Referee


def _opt_getter(settings) -> Callable[[str], Any]:
    return games.option_getter(getattr(settings, "variant_options", None) or {})


def _split_opening(opening) -> tuple[list[str], list[str]]:
    head = ["startpos"] if opening.sfen == "startpos" else ["sfen", *opening.sfen.split()]
    return head, list(opening.moves)


def _result_of(r: tuple[float, str]) -> tuple[str, str]:
    score, reason = r
    return ("sente" if score >= 1.0 else "gote" if score <= 0.0 else "draw"), reason


class GameReferee(Referee):
    """One two-player GameState game between two USI engines (see the module doc)."""

    def __init__(self, task: GameTask, engine_factory: Optional[Callable[..., Any]] = None) -> None:
        self._init_game(task, engine_factory)  # the base referee's fields; the game's state is a GameState here
        self.variant = self.settings.variant
        self.opt = _opt_getter(self.settings)
        head, moves = _split_opening(task.opening)
        self.start = games.build_state(self.variant, head, [], self.opt)
        self.state = self.start.copy()
        self._opening_tokens = moves
        self.sent: list[list[str]] = [[], []]  # every position line sent to each side (for audits and tests)

    # ------------------------------------------------------------ tokens
    def _play_token(self, token: str, is_event: bool) -> list[HistoryItem]:
        """Apply ``token`` to the true state; the history items it adds (``GameError`` propagates)."""
        state = self.state
        side = state.side_to_move()
        if self.variant == "turncoat":
            n0 = len(state.record)
            state.apply(token)
            items = []
            for tok in state.record[n0:]:
                if tok.startswith("plan:") or tok.startswith("plan="):  # secret: only its owner sees it
                    items.append(HistoryItem("plan=" + tok[5:], is_event=True, visible_to=(side,)))
                elif tok.startswith("defect="):  # public: it reveals the declarer's plan
                    items.append(HistoryItem(tok, is_event=True))
                else:
                    items.append(HistoryItem(tok))
            return items
        if not is_event and hasattr(state, "canonical"):
            try:
                canon = state.canonical(token)
            except Exception:
                canon = token
        else:
            canon = token
        state.apply(token)
        return [HistoryItem(canon or token, is_event=is_event)]

    def draw_event(self) -> str:
        """The chance event at the current chance node, from ``self.rng``."""
        return games.sample_event(self.state.chance_events(), self.rng)

    def chance_event(self) -> Optional[HistoryItem]:
        from engine.game import NodeKind

        if self.state.node_kind() is not NodeKind.CHANCE:
            return None
        return self._play_token(self.draw_event(), True)[0]

    # ------------------------------------------------------------ play
    def play(self) -> dict:
        started = _dt.datetime.now().isoformat(timespec="seconds")
        t0 = time.perf_counter()
        for tok in self._opening_tokens:
            items = self._play_token(tok, "=" in tok.split(",", 1)[0])
            self.history.extend(items)
            for item in items:
                if not item.is_event:
                    self.times.append(None), self.scores.append(None), self.depths.append(None)
        try:
            for side in (0, 1):
                self._open(side)
            while True:
                self._step()
        except GameOver as over:
            result, reason, detail = over.result, over.reason, over.detail
        self._finish(result)
        return self._record(started, t0, result, reason, detail)

    def _record(self, started, t0, result, reason, detail) -> dict:
        names = (self.specs[0].name, self.specs[1].name)
        return {
            "game": self.task.index, "pair": self.task.pair, "variant": self.variant, "seed": self.task.seed,
            "sente": names[0], "gote": names[1], "start_sfen": self.start.sfen(),
            "opening": {"index": self.task.opening.index, "line": self.task.opening.line,
                        "plies": sum(1 for t in self._opening_tokens if "=" not in t.split(",", 1)[0])},
            "moves": [h.token for h in self.history if not h.is_event],
            "events": [[i, h.token] for i, h in enumerate(self.history) if h.is_event],
            "tokens": [h.token for h in self.history],
            "times": self.times, "scores": self.scores, "depths": self.depths,
            "result": result, "winner": None if result == "draw" else names[SIDES.index(result)],
            "reason": reason, "detail": detail, "final_sfen": self.state.sfen(),
            "time_control": self.settings.tc.kind, "started": started,
            "duration": round(time.perf_counter() - t0, 3),
        }

    def _end_check(self) -> None:
        r = self.state.result()
        if r is not None:
            raise GameOver(*_result_of(r))
        if sum(1 for h in self.history if not h.is_event) >= self.settings.max_plies:
            raise GameOver("draw", "max plies", f"{self.settings.max_plies} plies")

    def _step(self) -> None:
        from engine.game import NodeKind

        self._end_check()
        if self.state.node_kind() is NodeKind.CHANCE:
            self.history.append(self.chance_event())
            return
        side = self.state.side_to_move()
        res = self._ask(side, self.view_for(side))
        self._apply_answer(side, res)

    def view_for(self, side: int) -> str:
        """The ``position`` line ``side`` may see. A game that has its own (turncoat's ``position_command``, the line
        the GUI sends too) gives it: the start SFEN as ``side`` sees it (an opening's SFEN may hold both plans: the
        enemy's undeclared one becomes ``?``), then ``side``'s view of the record. Other games: the opening as
        written and the history with hidden tokens masked (:meth:`Referee.view_for`)."""
        own = getattr(self.state, "position_command", None)
        return own(side) if own is not None else super().view_for(side)

    def _ask(self, side: int, view: str, limit=None):
        """As :meth:`Referee._ask`, also keeping every view sent (the tests check that no plan ever leaks)."""
        self.sent[side].append(view)
        return super()._ask(side, view, limit)

    def _apply_answer(self, side: int, res) -> None:
        from engine.game import GameError

        from .client import score_to_cp

        name = self.specs[side].name
        score = score_to_cp(res.info.get("score"))
        if res.resign:
            raise GameOver(SIDES[1 - side], "resign", f"{name} resigned")
        if res.win:
            raise GameOver(SIDES[1 - side], "illegal declaration", f"{name} declared a win ({self.variant} has none)")
        try:
            items = self._play_token(res.move, False)
        except (GameError, ValueError) as exc:
            raise GameOver(SIDES[1 - side], "illegal move", f"{name} played {res.move}: {exc}")
        self.history.extend(items)
        if any(not it.is_event for it in items):
            self._record_move(res, score)
        self._adjudicate(side, score)


class SoloReferee(GameReferee):
    """Enokian as a duplicate game: both engines play the same secret deck alone; the better outcome wins."""

    def __init__(self, task: GameTask, engine_factory: Optional[Callable[..., Any]] = None) -> None:
        super().__init__(task, engine_factory)
        probe = self.start.copy()
        for tok in self._opening_tokens:
            probe.apply(tok)
        deck = sorted(t for t, _ in probe.chance_events()) if probe.node_kind().value == "chance" else []
        if not deck and hasattr(probe, "remaining_cards"):
            deck = sorted("card=" + c for c in probe.remaining_cards())
        self.rng.shuffle(deck)
        self.deck = deck  # the referee's secret: never sent, only the drawn cards are
        self._next_card = 0

    def draw_event(self) -> str:
        legal = {t for t, _ in self.state.chance_events()}
        while self._next_card < len(self.deck):
            card = self.deck[self._next_card]
            self._next_card += 1
            if card in legal:
                return card
        return games.sample_event(self.state.chance_events(), self.rng)  # not reached: the deck covers the pile

    def _solo(self, side: int) -> dict:
        """One engine plays the deck alone as the player (it is sente in its ``position`` lines)."""
        self.state = self.start.copy()
        self.history, self.times, self.scores, self.depths = [], [], [], []
        self._next_card = 0
        self.low_streak = [0, 0]
        for tok in self._opening_tokens:
            self.history.extend(self._play_token(tok, "=" in tok))
        t0 = time.perf_counter()
        try:
            try:
                self._open(side)
            except GameOver as over:  # failed to start: the player loses its solitaire
                raise GameOver("gote", over.reason, over.detail) from None
            while True:
                self._solo_step(side)
        except GameOver as over:
            outcome, reason, detail = over.result, over.reason, over.detail
        r = self.state.result()
        # "sente" is the player winning its solitaire; a cut-off run (max plies) counts half
        score = {"sente": 1.0, "draw": 0.5}.get(outcome, 0.0)
        self._finish_one(side, {1.0: "win", 0.5: "draw"}.get(score, "lose"))
        return {"engine": self.specs[side].name, "score": score, "reason": reason, "detail": detail,
                "moves": [h.token for h in self.history if not h.is_event],
                "events": [[i, h.token] for i, h in enumerate(self.history) if h.is_event],
                "tokens": [h.token for h in self.history], "times": self.times, "scores": self.scores,
                "depths": self.depths, "final_sfen": self.state.sfen(),
                "result_of_state": list(r) if r is not None else None,
                "duration": round(time.perf_counter() - t0, 3)}

    def _solo_step(self, side: int) -> None:
        from engine.game import NodeKind

        r = self.state.result()
        if r is not None:
            raise GameOver("sente" if r[0] >= 1.0 else "gote", r[1])
        if sum(1 for h in self.history if not h.is_event) >= self.settings.max_plies:
            raise GameOver("draw", "max plies", f"{self.settings.max_plies} plies")
        if self.state.node_kind() is NodeKind.CHANCE:
            self.history.append(self.chance_event())
            return
        limit = self.limit_for(side)
        if self.settings.tc.clocked:  # the player is sente in its own game: its clock is btime
            limit.btime = limit.wtime = max(0, int(self.clocks[side]))
        try:
            res = self._ask(side, self.view_for(0), limit)
            self._apply_answer(side, res)
        except GameOver as over:  # a loss of the engine on move: the player loses its solitaire
            raise GameOver("gote", over.reason, over.detail) from None

    def play(self) -> dict:
        started = _dt.datetime.now().isoformat(timespec="seconds")
        t0 = time.perf_counter()
        runs = [self._solo(0), self._solo(1)]
        a, b = runs[0]["score"], runs[1]["score"]
        result = "sente" if a > b else "gote" if b > a else "draw"
        reason = f"duplicate deck: {runs[0]['reason']} / {runs[1]['reason']}"
        names = (self.specs[0].name, self.specs[1].name)
        first = runs[0]
        return {
            "game": self.task.index, "pair": self.task.pair, "variant": self.variant, "seed": self.task.seed,
            "sente": names[0], "gote": names[1], "start_sfen": self.start.sfen(),
            "opening": {"index": self.task.opening.index, "line": self.task.opening.line,
                        "plies": sum(1 for t in self._opening_tokens if "=" not in t)},
            "moves": first["moves"], "events": first["events"], "tokens": first["tokens"], "times": first["times"],
            "scores": first["scores"], "depths": first["depths"],
            "result": result, "winner": None if result == "draw" else names[SIDES.index(result)],
            "reason": reason, "detail": "; ".join(f"{r['engine']}: {r['detail']}" for r in runs if r["detail"]),
            "final_sfen": first["final_sfen"], "solo": runs, "deck": self.deck,
            "time_control": self.settings.tc.kind, "started": started,
            "duration": round(time.perf_counter() - t0, 3),
        }


def make_referee(task: GameTask, engine_factory: Optional[Callable[..., Any]] = None) -> GameReferee:
    cls = SoloReferee if task.settings.variant == "enokian" else GameReferee
    return cls(task, engine_factory)

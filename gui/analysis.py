"""Analysis mode (issue 51, item 5): an engine analyses the shown position without end (``go infinite``) until the
page stops it or the position changes; and the rules' probabilities of the coming chance event.

:class:`Analyser` owns one USI engine process per game (tab) and a worker thread: the session hands it a
:class:`Job` (the position line as the page's viewer may see it, the MultiPV count) and the worker runs it until a
newer job (or none) is wanted; ``stop`` ends the running search, whose ``bestmove`` ends the job. The session turns
each ``info`` line into what the page shows (:meth:`gui.session.Session._analysis_info`).
"""
from __future__ import annotations

import concurrent.futures
import copy
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from . import games as G
from .rules import effect_label

#: The MultiPV counts the page may ask for.
MULTIPV_RANGE = (1, 5)
#: Centipawns of a win probability of 1/(1+10^-1) ≈ 91 %: the logistic scale that turns a score into a probability.
WINPROB_SCALE_CP = 600
#: Decisions walked (the first legal action each) to find the coming chance event of a position.
CHANCE_LOOKAHEAD = 40
#: Seconds between the worker's checks whether its running search is still wanted.
POLL_S = 0.2


def winprob_of(cp: Optional[int], mate: Optional[int] = None) -> Optional[float]:
    """Sente's winning probability from a score from sente's view: 1/(1+10^(-cp/600)); a mate is certain."""
    if mate is not None:
        return 1.0 if mate > 0 else 0.0
    if cp is None:
        return None
    return 1.0 / (1.0 + 10.0 ** (-cp / WINPROB_SCALE_CP))


def copy_game(game: G.GuiGame) -> G.GuiGame:
    """An independent copy of ``game`` (its rules state copied): what a PV or a look-ahead is played on."""
    out = copy.copy(game)
    out.state = game.state.copy()
    out.played = list(game.played)
    out.card_effects = list(game.card_effects)
    return out


def pv_japanese(game: G.GuiGame, pv: list[str], prev_to: Optional[str], stop_words: tuple = ()) -> list[str]:
    """The PV in the move list's Japanese notation, played on a copy of ``game``; a token that cannot be played (or a
    hidden ``?``) ends the translation and the rest is shown as given. ``stop_words``: tokens starting with these are
    never played (turncoat: a declaration would apply the true plan, not the one the engine saw)."""
    g, out = copy_game(game), []
    for i, token in enumerate(pv):
        if token == "?" or token.startswith(stop_words):
            return out + list(pv[i:])
        try:
            out.append(g.japanese(token, prev_to))
            g.apply(token)
        except G.GameFailure:
            return out + list(pv[i:])
        if "=" not in token.split(",")[0]:
            prev_to = G.to_square(token) or prev_to
    return out


# ------------------------------------------------------------------------------------------ the coming chance event
def _first_action(game: G.GuiGame) -> Optional[str]:
    """Some legal action (a mawarikudoi turn: the first place it can end), to walk toward the next chance node."""
    if game.info.id == "mawarikudoi" and getattr(game.state, "phase", "") == "turn":
        ends = game.turn_ends([])["ends"]
        return game.turn_end_token(ends[0]["end"], []) if ends else None
    actions = game.actions()
    return actions[0] if actions else None


def _groups(game: G.GuiGame, events: list[tuple[str, float]]) -> tuple[list[dict], dict]:
    """The events grouped as a player reads them: fantasista by the roll's effect for the roller, mawarikudoi by N,
    enokian by the card's rank; and extras (the roller, the mean N)."""
    vid, groups, extra = game.info.id, {}, {}

    def add(key: str, label: str, p: float) -> None:
        g = groups.setdefault(key, {"label": label, "p": 0.0, "count": 0})
        g["p"] += p
        g["count"] += 1

    if vid == "fantasista":
        from engine.variants.fantasista import roll_effect

        roller = game.state.side_to_move()
        fairy = G.FAIRY_CHOICES[game.state.fairy[roller]] if game.state.fairy[roller] is not None else None
        reserved = game.state.reserved[roller] or "4-8"
        extra = {"roller": int(roller), "fairy": fairy}
        for token, p in events:
            n = int(token.split("=")[1])
            effect = roll_effect(n, reserved)
            add(effect, effect_label(effect, fairy), p)
        for g in groups.values():  # "rolls 4–8: rook token"
            rolls = [int(t.split("=")[1]) for t, _ in events
                     if effect_label(roll_effect(int(t.split("=")[1]), reserved), fairy) == g["label"]]
            span = f"{min(rolls)}" if len(rolls) == 1 else f"{min(rolls)}–{max(rolls)}" if \
                max(rolls) - min(rolls) + 1 == len(rolls) else ", ".join(map(str, rolls))
            g["label"] = f"{span}: {g['label']}"
    elif vid == "mawarikudoi":
        mean = 0.0
        for token, p in events:
            n = G.mawari_throw(token)["n"]
            mean += n * p
            add(f"{n:04d}", f"N = {n}", p)
        extra = {"mean": mean}
    elif vid == "enokian":
        names = {"T": "10", "J": "J", "Q": "Q", "K": "K", "A": "A"}
        for token, p in events:
            rank = token[5:-1]
            add(rank, names.get(rank, rank), p)
    else:
        for token, p in events:
            add(token, G.ja_event(token), p)
    out = sorted(groups.values(), key=lambda g: -g["p"])
    return out, extra


def coming_events(game: G.GuiGame) -> dict:
    """The next chance event of ``game`` by the rules (``chance_events()``): now when a chance node is next, else
    after the decisions before it (walked on a copy with some legal action each: in these games which action is
    played does not change the coming event's probabilities, only, in mawarikudoi, whether a mixed throw may be
    chosen, which is then listed as a choice of its own). Answers ``{"outlooks": [{"choice", "after", "events":
    [{"token", "p", "ja"}], "groups": [{"label", "p", "count"}], ...}]}``, no outlook when none comes."""
    if game.is_position or game.info.id == "turncoat":
        return {"outlooks": []}
    g, after = copy_game(game), 0
    while g.node() == "decision" and after < CHANCE_LOOKAHEAD:
        actions = [] if (g.info.id == "mawarikudoi" and getattr(g.state, "phase", "") == "turn") else g.actions()
        if actions and all(a.startswith("throw:") for a in actions):  # a choice of throws: each one's outlook
            outs = []
            for a in actions:
                h = copy_game(g)
                h.apply(a)
                outs.append(_outlook(h, after, a))
            return {"outlooks": outs}
        token = _first_action(g)
        if token is None:
            break
        g.apply(token)
        after += 1
    if g.node() != "chance":
        return {"outlooks": []}
    return {"outlooks": [_outlook(g, after, None)]}


def _outlook(g: G.GuiGame, after: int, choice: Optional[str]) -> dict:
    events = g.chance_events()
    groups, extra = _groups(g, events)
    return {"choice": choice, "after": after, "side": int(g.state.side_to_move()) if g.info.id != "enokian" else 0,
            "events": [{"token": t, "p": p, "ja": G.ja_event(t)} for t, p in events],
            "groups": groups, **extra}


# ------------------------------------------------------------------------------------------ the engine worker
@dataclass
class Job:
    """One analysis: the position line sent, the MultiPV count, and what the page needs to read the answers."""

    key: tuple
    line: str
    multipv: int
    side: int  # the side to move (USI scores are its)
    game: Any  # a copy of the position, for the PV's Japanese
    prev_to: Optional[str]
    stop_words: tuple = ()
    done: threading.Event = field(default_factory=threading.Event)


class Analyser:
    """One analysis engine (an :class:`gui.session.EnginePlayer` opened lazily) and the worker thread running the
    wanted :class:`Job` with ``go infinite``; a newer job stops the running one first."""

    def __init__(self, player, on_info: Callable[[Job, dict], None], on_end: Callable[[Job, Optional[str]], None]
                 ) -> None:
        self.player = player
        self.on_info, self.on_end = on_info, on_end
        self.cond = threading.Condition()
        self.wanted: Optional[Job] = None
        self.running: Optional[Job] = None
        self.closed = False
        self.thread = threading.Thread(target=self._loop, name="gui-analysis", daemon=True)
        self.thread.start()

    def want(self, job: Optional[Job]) -> None:
        """Analyse ``job`` from now on (``None``: nothing); a running search for another job is stopped."""
        with self.cond:
            self.wanted = job
            running = self.running
            self.cond.notify_all()
        if running is not None and running is not job:
            self.player.stop()

    def close(self) -> threading.Thread:
        """Stop the search and let the engine go (quit, then kill) in a thread of its own, which is returned."""
        with self.cond:
            self.closed, self.wanted = True, None
            self.cond.notify_all()
        self.player.stop()
        closer = threading.Thread(target=self.player.close, daemon=True)
        closer.start()
        return closer

    def _loop(self) -> None:
        from usi.client import UsiLimit

        while True:
            with self.cond:
                self.cond.wait_for(lambda: self.closed or (self.wanted is not None and not self.wanted.done.is_set()))
                if self.closed:
                    return
                job = self.running = self.wanted
            failure = None
            try:
                with self.player.lock:
                    if self.player.engine is None:
                        self.player._open()
                    eng = self.player.engine
                    offered = {name.lower(): name for name in eng.options}
                    if "multipv" in offered:
                        eng.configure({offered["multipv"]: job.multipv})
                    future = eng._submit(eng.usi.play(job.line, UsiLimit(infinite=True),
                                                      on_info=lambda info: self.on_info(job, info)), None)
                    while True:
                        try:
                            future.result(timeout=POLL_S)
                            break
                        except concurrent.futures.TimeoutError:
                            if self.closed or self.wanted is not job:
                                eng.stop()  # again, until its bestmove ends the search (a stop may cross the go)
            except Exception as exc:  # noqa: BLE001 - a failed engine ends this analysis, not the server
                failure = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            with self.cond:
                job.done.set()
                self.running = None
            if not self.closed:
                self.on_end(job, failure)

"""Training pipeline of the king-relative (KP) evaluation (:mod:`eval.kp`): ``python -m train
gen|teach|relabel|fit|add-threats|losses|check|derive``.

* ``gen``: self-play of our own engine (the hand-set evaluation) at a small node budget from the balanced openings
  (``bench/openings/shogi-balanced.txt``) plus two random plies; it keeps quiet positions (not in check, the
  searched best move neither captures nor promotes, no mate score, past the opening line) with the search score of
  the position (side to move's view) and, when the game ends, its result. One process; stops after ``--minutes``.
* ``teach``: positions scored by a teacher engine over USI (:mod:`train.teacher`; fairy-stockfish's output).
* ``relabel``: the teacher's scores for the positions of games recorded by ``usi.match`` (our engine's own games).
* ``fit``: Texel-style logistic fit with numpy: first the labels' scale ``K_label`` of ``sigmoid(score / K_label)``
  that best fits the results, and ours, ``K = K_label / unit_ratio`` (:func:`label_unit_ratio`: the labels'
  centipawns per one of ours), then Adam on the sparse KP features (and the side-to-move bonus, with
  ``--mobility`` a weight per sliding piece type, with ``--king-safety`` the king-zone table of
  :mod:`eval.kernels`, ``KS_*``, with ``--threats`` the threat table, ``TH_*``, with ``--safe-mobility`` the
  safe-mobility table, ``SM_BUCKETS``) toward the target ``lam * sigmoid(score / K_label) +
  (1 - lam) * result``, with L2 toward the hand-set evaluation's values (the table starts as the hand-set evaluation
  written in KP form, see :func:`train.features.prior_tables`), so little data still gives a sane table. A king-free
  factor (piece x square, shared by every king square) is trained beside the KP table and folded into it on
  export. Games are split 90/10 into training and validation by game; both losses are printed and stored in the
  weights file.
* ``add-threats``: the threat table (:mod:`eval.kernels`, ``TH_*``: pieces attacked by a cheaper piece or
  undefended, by side and type) and the side-to-move bonus fitted the same way on top of the fixed tables of a
  weights file, written as a new weights file.
* ``losses``: the validation loss of the hand-set tables and of weights files on fit's split of the given data,
  optionally only on the games of the newest files (positions no compared fit was trained on).
* ``check``: loads a weights file and prints its score on the fixed position of the tests.
* ``derive``: a variant's tables from shogi's learned ones (:mod:`train.derive`; fantasista's).

Commands, data size and timings: ``docs/eval.md``.
"""
from __future__ import annotations

import argparse
import random
import shlex
import sys
import time
from pathlib import Path

import numpy as np

from engine import Position

from .games import MATE_CLAMP, OURS_BOTH, _openings, _save_data, close_game, is_quiet, start_position

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = ROOT / "eval" / "data" / "kp_shogi_data.npz"  # committed (200 KB): the run of docs/eval.md
RESIGN_CP = 2500      # adjudication: both sides' scores agree the game is lost by this much
MAX_PLIES = 320       # adjudicated a draw after this many plies


def generate(out: Path, minutes: float, nodes: int, seed: int, random_plies: int = 2) -> dict:
    """Self-play data (see the module docstring); writes ``out`` (npz) after every game, returns a summary."""
    from search import Limits, Searcher
    rng = random.Random(seed)
    openings = _openings()
    searcher = Searcher(hash_mb=16, seed=seed)
    boards, hands, stms, scores, results, game_ids, plies = [], [], [], [], [], [], []
    t0 = time.perf_counter()
    games = moves_played = 0
    outcome_counts = {"sente": 0, "gote": 0, "draw": 0}
    while time.perf_counter() - t0 < minutes * 60:
        pos, _ = start_position(rng, openings, random_plies)
        searcher.clear()
        result = None  # sente's score
        lost_streak = [0, 0]
        while result is None:
            r = pos.result()
            if r is not None:
                result = r[0]
                break
            if pos.ply >= MAX_PLIES:
                result = 0.5
                break
            res = searcher.search(pos, Limits(nodes=nodes))
            moves_played += 1
            stm = pos.turn
            if res.mate is not None:
                result = (1.0 if res.mate > 0 else 0.0) if stm == 0 else (0.0 if res.mate > 0 else 1.0)
                break
            sc = int(res.score_cp)
            lost_streak[stm] = lost_streak[stm] + 1 if sc <= -RESIGN_CP else 0
            if lost_streak[stm] >= 2:
                result = 0.0 if stm == 0 else 1.0
                break
            mv = int(res.best)
            if is_quiet(pos, mv) and abs(sc) < MATE_CLAMP and not pos.is_check():
                boards.append(pos.state.board.copy())
                hands.append(pos.state.hands.copy())
                stms.append(stm)
                scores.append(sc)
                game_ids.append(games)
                plies.append(pos.ply)
            pos.push_unchecked(mv)
        close_game(stms, results, result, outcome_counts)
        games += 1
        elapsed = time.perf_counter() - t0
        print(f"game {games}: {pos.ply} plies, result {result}, {len(stms)} positions, {elapsed:.0f} s "
              f"({moves_played / elapsed:.1f} moves/s)", flush=True)
        _save_data(out, boards, hands, stms, scores, results, game_ids, plies, nodes, seed)
    return {"games": games, "positions": len(stms), "seconds": time.perf_counter() - t0, **outcome_counts}


_DATA_KEYS = ("board", "hands", "stm", "score", "result", "game", "ply")
def _against_ours(ours: np.ndarray) -> np.ndarray:
    """The rows of games where our engine played one side against the teacher or a peer."""
    return (ours == 0) | (ours == 1)


def _load_data(paths: list[Path], teacher_games_only: bool = False) -> dict:
    """The positions of one or more ``gen`` / ``teach`` files, concatenated (game ids offset so games stay apart),
    with ``source``: the index in ``paths`` of each position's file; ``teacher_games_only``: without the positions of
    games where our engine played one side against the teacher or a peer (``ours`` 0 or 1): the teacher's own games
    (``ours == -1``) and relabelled games of our engine against itself (``ours == -2``) stay."""
    parts = []
    for i, path in enumerate(paths):
        if not Path(path).is_file():
            raise ValueError(f"no training data file {path} (make one with: python -m train gen)")
        try:
            with np.load(path, allow_pickle=False) as z:
                d = {k: z[k] for k in _DATA_KEYS}
                ours = z["ours"] if "ours" in z.files else None
        except (OSError, KeyError, ValueError) as exc:
            raise ValueError(f"training data file {path} is not readable: {exc}") from None
        if ours is None:
            if teacher_games_only:
                raise ValueError(f"training data file {path} does not say which games our engine played (no 'ours')")
            ours = np.full(len(d["stm"]), -1, np.int8)  # gen data: nothing to tell apart, every position weighs 1
        d["ours"] = ours
        if teacher_games_only:
            keep = ~_against_ours(ours)
            d = {k: x[keep] for k, x in d.items()}
        if len(d["stm"]) == 0:
            raise ValueError(f"training data file {path} holds no positions")
        d["source"] = np.full(len(d["stm"]), i, np.int32)
        parts.append(d)
    offset = 0
    for d in parts:
        d["game"] = d["game"] + offset
        offset = int(d["game"].max()) + 1
    return {k: np.concatenate([d[k] for d in parts]) for k in (*_DATA_KEYS, "source", "ours")}


def adam_step(params: list[np.ndarray], grads: list[np.ndarray], moments: list[tuple[np.ndarray, np.ndarray]],
              step: int, lr: float, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8) -> None:
    """One Adam update of ``params`` in place; ``moments``: each parameter's first and second moment (zeros at
    first, updated in place), ``step`` counts from 1."""
    for p, g, (m, v) in zip(params, grads, moments):
        m *= b1
        m += (1 - b1) * g
        v *= b2
        v += (1 - b2) * g * g
        p -= lr * (m / (1 - b1 ** step)) / (np.sqrt(v / (1 - b2 ** step)) + eps)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(x, -60, 60)))


def _bce(p: np.ndarray, t: np.ndarray) -> float:
    p = np.clip(p, 1e-9, 1 - 1e-9)
    return float(-(t * np.log(p) + (1 - t) * np.log(1 - p)).mean())


def fit_scale(ev: np.ndarray, result: np.ndarray) -> float:
    """Texel's first step: the ``K`` of ``sigmoid(eval / K)`` that best predicts the game results."""
    grid = np.arange(100, 2001, 10, dtype=np.float64)
    losses = [_bce(_sigmoid(ev / k), result) for k in grid]
    return float(grid[int(np.argmin(losses))])


def label_unit_ratio(d: dict, variant) -> float:
    """How many of the labels' centipawns one of ours is: the median of score / material balance (side to move's
    view, our hand-set piece and hand values) over the positions whose balance is 150-800 of our centipawns, where
    material dominates a score; 1 when fewer than 100 such positions."""
    from eval import build_eval_tables
    E = build_eval_tables(variant, "hand")
    codes = d["board"].astype(np.int64)
    colour = np.where(codes >> 5 == 0, 1, -1)
    balance = (E.value.astype(np.int64)[codes] * colour * (codes != 0)).sum(axis=1)
    hands = d["hands"].astype(np.int64)
    hv = E.hand_val[0].astype(np.int64)
    balance += (hands[:, 0, :] * hv).sum(axis=1) - (hands[:, 1, :] * hv).sum(axis=1)
    balance = np.where(d["stm"] == 0, balance, -balance)
    rows = (np.abs(balance) >= 150) & (np.abs(balance) < 800)
    if rows.sum() < 100:
        return 1.0
    return float(np.median(d["score"][rows] / balance[rows]))


def _side_to_move_value(w: np.ndarray, idx: np.ndarray, coef: np.ndarray, sign: np.ndarray, tempo: float,
                        mob: np.ndarray | None = None, wm: np.ndarray | None = None) -> np.ndarray:
    """The KP evaluation of positions as the kernel computes it, side to move's view: the sente-view sum of the
    sparse features (:func:`train.features.features`) and, with ``wm``, the dense features ``mob`` (the sliders' mobility,
    in a fit also the king-zone table) times their weights, signed by ``sign`` (+1 sente
    to move), plus the side-to-move bonus ``tempo``."""
    s = (w[idx] * coef).sum(axis=1)
    if wm is not None:
        s = s + mob @ wm
    return sign * s + tempo


def _split_and_target(d: dict, variant, seed: int, lam: float, lam_ours: float | None = None
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float]:
    """The split and the labels of :func:`fit`: training and validation rows (90/10 by game, ``seed``), the target
    ``lam * sigmoid(score / K_label) + (1 - lam) * result`` of every row, ``K_label`` and the unit ratio.
    ``lam_ours`` (None: ``lam``) is the ``lam`` of the positions of games where our engine played one side against
    the teacher or a peer (``ours`` 0 or 1): their results say more about our engine than about the positions."""
    games = np.unique(d["game"])
    rng = np.random.default_rng(seed)
    val_games = rng.choice(games, size=max(1, len(games) // 10), replace=False)
    is_val = np.isin(d["game"], val_games)
    tr, va = np.flatnonzero(~is_val), np.flatnonzero(is_val)
    if len(tr) == 0 or len(va) == 0:
        raise ValueError("too little data: need positions from at least two games")
    result = d["result"].astype(np.float64)
    # Two scales: the labels' own, and ours. A teacher counts in its own centipawns: the ratio of its scores to our
    # material balance (the median over positions a minor piece or so apart) converts, so the learned tables stay in
    # our centipawns (the search's pruning margins assume them).
    k_label = fit_scale(d["score"][tr].astype(np.float64), result[tr])
    lam_row = np.where(_against_ours(d["ours"]), lam if lam_ours is None else lam_ours, lam)
    target = lam_row * _sigmoid(d["score"] / k_label) + (1 - lam_row) * result
    return tr, va, target, k_label, label_unit_ratio(d, variant)


def validation_losses(data_paths: list[Path], weights_paths: list[Path], newest: int = 0, lam: float = 0.5,
                      seed: int = 0, teacher_games_only: bool = False, lam_ours: float | None = None
                      ) -> dict[str, float]:
    """The validation loss of the hand-set tables and of each weights file on the data of :func:`fit` (the same
    split, labels and scale for the same files, ``seed`` and ``lam``); with ``newest`` > 0 only on the validation
    games of the last ``newest`` files, the games that tables fitted on the earlier files never saw. A table fitted
    on more files has seen the training games of the newer ones, never their validation games, so this compares
    fits on different amounts of data on positions none of them was fitted on."""
    from engine import get_variant
    from eval import kp as KP
    from . import features as F
    from eval.params import TEMPO
    v = get_variant("shogi")
    if not 0 <= newest <= len(data_paths):
        raise ValueError(f"--newest must be between 0 and the number of data files ({len(data_paths)})")
    d = _load_data(data_paths, teacher_games_only)
    tr, va, target, k_label, unit_ratio = _split_and_target(d, v, seed, lam, lam_ours)
    if newest:
        va = va[d["source"][va] >= len(data_paths) - newest]
        if len(va) == 0:
            raise ValueError(f"no validation game in the last {newest} data file(s): give more of them")
    K = k_label / unit_ratio
    sub = {k: x[va] for k, x in d.items()}
    hand = KP.KPWeights(*F.prior_tables(v), TEMPO, None)
    out = {"positions": float(len(va)), "hand": _bce(_sigmoid(tables_value(sub, hand, v) / K), target[va])}
    for path in weights_paths:
        out[str(path)] = _bce(_sigmoid(tables_value(sub, KP.load_weights(path, v), v) / K), target[va])
    return out


def tables_value(d: dict, w, variant, chunk: int = 200_000) -> np.ndarray:
    """The evaluation of every position of the data ``d`` (``board``, ``hands``, ``stm``) under the weights ``w``
    (:class:`eval.kp.KPWeights`), side to move's view, as the kernel computes it (KP tables, mobility, king-zone,
    threat and safe-mobility tables when ``w`` has them), in chunks of ``chunk`` rows to bound the memory of the
    sparse features."""
    from . import features as F
    out = np.zeros(len(d["stm"]))
    flat = F.flat_weights(w.kp, w.kp_hand)
    wm = None if w.mobility is None else w.mobility.astype(np.float64)
    for a in range(0, len(out), chunk):
        rows = slice(a, min(len(out), a + chunk))
        board, hands, stm = d["board"][rows], d["hands"][rows], d["stm"][rows]
        sign = np.where(stm == 0, 1.0, -1.0)
        idx, coef = F.features(board, hands, variant)
        mob = None if wm is None else F.mobility_features(board, variant)
        value = _side_to_move_value(flat, idx, coef, sign, float(w.tempo), mob, wm)
        if w.ks is not None:
            value += sign * (F.king_zone_features(board, hands, variant) @ w.ks.astype(np.float64))
        if w.threats is not None:
            value += F.threat_features(board, stm, variant) @ w.threats.astype(np.float64)
        if w.smob is not None:
            value += sign * (F.safe_mobility_features(board, variant) @ w.smob.astype(np.float64))
        out[rows] = value
    return out


def fit_threats(data_paths: list[Path], base: Path, out: Path | None, steps: int = 400, lr: float = 2.0,
                lam: float = 0.5, seed: int = 0, lam_ours: float | None = None, teacher_games_only: bool = False,
                own_only: bool = False) -> dict:
    """Fit the threat table (:mod:`eval.kernels`, ``TH_*``) and the side-to-move bonus on top of the fixed tables of
    the weights file ``base`` (full-batch Adam, :func:`fit`'s split, labels and scale; a threat table ``base`` has
    is replaced); writes ``out`` (``base``'s arrays with the new table and bonus) unless ``None``; returns the figures
    (losses of ``base`` as it is and of the result, the table's entries by name). ``own_only``: only the entries of
    the side to move's threatened pieces are learned (the opponent's stay 0: what the side to move can take, its
    quiescence search sees)."""
    from engine import get_variant
    from eval import kp as KP
    from . import features as F
    from eval.kernels import TH_KINDS, TH_MULTI, threat_entry, threat_multi_entry
    t0 = time.perf_counter()
    v = get_variant("shogi")
    d = _load_data(data_paths, teacher_games_only)
    tr, va, target, k_label, unit_ratio = _split_and_target(d, v, seed, lam, lam_ours)
    K = k_label / unit_ratio
    w0 = KP.load_weights(base, v)
    fixed = tables_value(d, w0._replace(threats=None), v) - w0.tempo  # without the bonus, which is refitted
    X = F.threat_features(d["board"], d["stm"], v)
    base_value = fixed + w0.tempo + (0.0 if w0.threats is None else X @ w0.threats.astype(np.float64))  # as it is
    table, tempo = np.zeros(X.shape[1]), np.array([float(w0.tempo)])
    n1 = len(v.pieces) + 1
    learned = np.ones(X.shape[1])
    if own_only:  # the opponent's entries (side 1) stay 0
        learned[[threat_entry(n1, 1, kind, pt) for kind in range(TH_KINDS) for pt in range(n1)]] = 0.0
        learned[[threat_multi_entry(n1, 1, n) for n in range(2, TH_MULTI + 2)]] = 0.0
    moments = [(np.zeros(p.size), np.zeros(p.size)) for p in (table, tempo)]

    def value(rows: np.ndarray, tab: np.ndarray, bonus: float) -> np.ndarray:
        return fixed[rows] + X[rows] @ tab + bonus

    for step in range(1, steps + 1):
        g = (_sigmoid(value(tr, table, tempo[0]) / K) - target[tr]) / K / len(tr)
        adam_step([table, tempo], [(X[tr].T @ g) * learned, np.array([g.sum()])], moments, step, lr)
    table_cp, tempo_cp = np.rint(table).astype(np.int32), int(round(tempo[0]))
    entries = {f"{'own' if side == 0 else 'enemy'} {'cheaper' if kind == 0 else 'undefended'} "
               f"{v.pieces[pt - 1].letter}": int(table_cp[threat_entry(n1, side, kind, pt)])
               for side in range(2) for kind in range(TH_KINDS) for pt in range(1, n1) if not v.pieces[pt - 1].royal}
    entries.update({f"{'own' if side == 0 else 'enemy'} {m + 2}{'+' if m == TH_MULTI - 1 else ''} threatened":
                    int(table_cp[threat_multi_entry(n1, side, m + 2)])
                    for side in range(2) for m in range(TH_MULTI)})
    figures = {"positions": int(len(target)), "validation": int(len(va)),
               "loss_base_train": _bce(_sigmoid(base_value[tr] / K), target[tr]),
               "loss_train": _bce(_sigmoid(value(tr, table_cp, tempo_cp) / K), target[tr]),
               "loss_base_validation": _bce(_sigmoid(base_value[va] / K), target[va]),
               "loss_validation": _bce(_sigmoid(value(va, table_cp, tempo_cp) / K), target[va]),
               "tempo": tempo_cp, "threats": entries, "seconds": time.perf_counter() - t0}
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        with np.load(base, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        arrays.update(threats=table_cp, tempo=np.float64(tempo_cp), threats_base=np.str_(Path(base).name),
                      threats_loss_validation=np.float64(figures["loss_validation"]))
        np.savez_compressed(out, **arrays)
        figures["bytes"] = out.stat().st_size
    return figures


def fit(data_paths: list[Path], out: Path | None, steps: int, lr: float, lam: float, l2_kp: float, l2_factor: float,
        seed: int = 0, mobility: bool = False, teacher_games_only: bool = False, king_safety: bool = False,
        self_play_weight: float = 1.0, lam_ours: float | None = None, peer_weight: float = 1.0,
        threats: bool = False, safe_mobility: bool = False) -> dict:
    """Fit the KP tables to the data (see the module docstring); writes ``out`` (npz) unless ``None``; returns the
    figures (scale, losses of the hand-set and the learned tables on training and validation positions).
    ``mobility``, ``king_safety``, ``threats``, ``safe_mobility``: also learn the sliders' mobility weights, the
    king-zone table, the threat table (jointly with the KP tables; ``add-threats`` fits it on top of fixed ones), the
    safe-mobility table.
    ``self_play_weight``: the weight in the training loss of a position from a relabelled game of our engine against
    itself (``ours == -2``); ``peer_weight``: of a position from a game where our engine played one side against the
    teacher or a peer (``ours`` 0 or 1); every other position weighs 1; the reported losses are unweighted.
    ``lam_ours``: see :func:`_split_and_target`."""
    from engine import get_variant
    from eval.kp import KPWeights, save_weights
    from eval.params import TEMPO

    from . import features as F
    t0 = time.perf_counter()
    v = get_variant("shogi")
    d = _load_data(data_paths, teacher_games_only)
    sign = np.where(d["stm"] == 0, 1.0, -1.0)
    idx, coef = F.features(d["board"], d["hands"], v)
    coef = coef.astype(np.float64)
    kp0, kh0 = F.prior_tables(v)
    prior = F.flat_weights(kp0, kh0)
    fmap = F.factor_map(v)
    n_w, n_f = prior.size, int(fmap.max()) + 1
    dummy = n_w - 1

    # dense features beside the sparse KP ones, each block learned when asked: the sliders' mobility (a weight per
    # piece type on its count of destinations), the king-zone table (eval.kernels.KS_*), the threat table
    # (eval.kernels.TH_*) and the safe-mobility table (eval.kernels.SM_BUCKETS). The dense block is in sente's view
    # like the KP sum; the threat features are the side to move's, so they enter signed (sign * sign = 1 in the side
    # to move's value).
    n_mob = len(v.pieces) + 1
    mob = F.mobility_features(d["board"], v) if mobility else np.zeros((len(sign), n_mob))
    ksf = F.king_zone_features(d["board"], d["hands"], v) if king_safety else np.zeros((len(sign), 0))
    thf = (F.threat_features(d["board"], d["stm"], v) * sign[:, None] if threats
           else np.zeros((len(sign), 0)))
    smf = F.safe_mobility_features(d["board"], v) if safe_mobility else np.zeros((len(sign), 0))
    n_ks, n_th = ksf.shape[1], thf.shape[1]
    dense = np.hstack([mob, ksf, thf, smf])
    del ksf, thf, smf
    dense_mask = np.zeros(dense.shape[1])
    if mobility:
        dense_mask[F.slider_types(v)] = 1.0
    dense_mask[n_mob:] = 1.0

    def value(w: np.ndarray, tempo: float, rows: np.ndarray, wd: np.ndarray | None = None) -> np.ndarray:
        return _side_to_move_value(w, idx[rows], coef[rows], sign[rows], tempo,
                                   None if wd is None else dense[rows], wd)

    tr, va, target, k_label, unit_ratio = _split_and_target(d, v, seed, lam, lam_ours)
    games = np.unique(d["game"])
    K = k_label / unit_ratio

    def losses(w: np.ndarray, tempo: float, wd: np.ndarray | None = None) -> tuple[float, float]:
        return (_bce(_sigmoid(value(w, tempo, tr, wd) / K), target[tr]),
                _bce(_sigmoid(value(w, tempo, va, wd) / K), target[va]))

    loss_hand = losses(prior, float(TEMPO))
    # trained parameters: a per-slot delta, the king-free factor and the side-to-move bonus;
    # w = prior + delta + factor[fmap]
    delta, factor, tempo, wd = np.zeros(n_w), np.zeros(n_f), np.array([float(TEMPO)]), np.zeros(dense.shape[1])
    trained = [delta, factor, tempo, wd]
    moments = [(np.zeros(p.size), np.zeros(p.size)) for p in trained]
    ours = d["ours"][tr]
    row_w = np.where(ours == OURS_BOTH, self_play_weight, np.where(_against_ours(ours), peer_weight, 1.0))
    row_w /= row_w.sum()  # the mean loss when every weight is 1
    flat_idx = idx[tr].ravel()
    for step in range(1, steps + 1):
        w = prior + delta + factor[fmap]
        w[dummy] = 0.0
        e = value(w, tempo[0], tr, wd)
        g_v = (_sigmoid(e / K) - target[tr]) / K * row_w  # d loss / d (side-to-move value)
        g_e = g_v * sign[tr]                              # d loss / d (sente-view sum)
        g_w = np.bincount(flat_idx, weights=(coef[tr] * g_e[:, None]).ravel(), minlength=n_w)
        g_w[dummy] = 0.0
        grads = [g_w + 2 * l2_kp * delta, np.bincount(fmap, weights=g_w, minlength=n_f) + 2 * l2_factor * factor,
                 np.array([g_v.sum()]), (dense[tr] * g_e[:, None]).sum(axis=0) * dense_mask]
        adam_step(trained, grads, moments, step, lr)
        if step % 50 == 0 or step == steps:
            w = prior + delta + factor[fmap]
            w[dummy] = 0.0
            lt, lv = losses(w, tempo[0], wd)
            print(f"step {step}: train {lt:.5f} validation {lv:.5f} tempo {tempo[0]:.1f}", flush=True)
    w = np.rint(prior + delta + factor[fmap])
    w[dummy] = 0.0
    tempo_cp = int(round(tempo[0]))
    mobility_cp = np.rint(wd[:n_mob]).astype(np.int32)
    ks_cp = np.rint(wd[n_mob:n_mob + n_ks]).astype(np.int32)
    threats_cp = np.rint(wd[n_mob + n_ks:n_mob + n_ks + n_th]).astype(np.int32)
    smob_cp = np.rint(wd[n_mob + n_ks + n_th:]).astype(np.int32)
    kp = w[:kp0.size].reshape(kp0.shape).astype(np.int32)
    kh = w[kp0.size:kp0.size + kh0.size].reshape(kh0.shape).astype(np.int32)
    lt, lv = losses(w, tempo_cp, np.concatenate([mobility_cp, ks_cp, threats_cp, smob_cp]).astype(np.float64))
    figures = {"positions": int(len(sign)), "train": int(len(tr)), "validation": int(len(va)),
               "games": int(len(games)), "label_scale": k_label, "unit_ratio": unit_ratio, "scale": K,
               "loss_hand_train": loss_hand[0],
               "loss_hand_validation": loss_hand[1], "loss_train": lt, "loss_validation": lv,
               "max_change_cp": int(np.abs(w - np.rint(prior)).max()), "tempo": tempo_cp,
               "mobility": {v.pieces[pt - 1].letter: int(mobility_cp[pt]) for pt in np.flatnonzero(dense_mask[:n_mob])},
               "seconds": time.perf_counter() - t0}
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        weights = KPWeights(kp, kh, tempo_cp, mobility_cp, ks_cp if king_safety else None,
                            threats_cp if threats else None, smob_cp if safe_mobility else None)
        save_weights(out, v.id, weights,
                     **{k: np.float64(x) for k, x in figures.items() if k not in ("mobility", "tempo")},
                     settings=np.array([steps, lr, lam, l2_kp, l2_factor], np.float64),
                     **({} if lam_ours is None else {"lam_ours": np.float64(lam_ours)}),
                     **({} if self_play_weight == 1.0 else {"self_play_weight": np.float64(self_play_weight)}),
                     **({} if peer_weight == 1.0 else {"peer_weight": np.float64(peer_weight)}))
        figures["bytes"] = out.stat().st_size
    return figures


#: The fixed position of ``check`` and of the test of the shipped weights (the bench middlegame, search.bench_positions)
CHECK_SFEN = "ln5nl/1r1sk1g2/p1pgpsbp1/3p1pp1p/1p5P1/P1P1PPP1P/1PSPS1N2/2GK1G1R1/LN6L b Bp 1"


def main(argv: list[str] | None = None) -> int:
    from .teacher import DEFAULT_TEACHER
    ap = argparse.ArgumentParser(prog="python -m train", description=__doc__.split("\n\n")[0])
    from usi.kernel_cache import purge_stale_kernels

    purge_stale_kernels()  # before the first kernel loads: one cached against an edited shared kernel crashes
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen", help="self-play data")
    g.add_argument("--out", type=Path, default=DEFAULT_DATA)
    g.add_argument("--minutes", type=float, default=20.0)
    g.add_argument("--nodes", type=int, default=3000)
    g.add_argument("--seed", type=int, default=1)
    t = sub.add_parser("teach", help="positions scored by a teacher engine over USI (fairy-stockfish by default)")
    t.add_argument("--out", type=Path, required=True)
    t.add_argument("--minutes", type=float, default=30.0)
    t.add_argument("--games", type=int, default=None, help="stop after this many games (default: only the time)")
    t.add_argument("--teacher", default=" ".join(DEFAULT_TEACHER), help="the teacher's command line")
    t.add_argument("--teacher-nodes", type=int, default=5000, help="mean nodes of each labelling search")
    t.add_argument("--our-nodes", type=int, default=3000, help="nodes of our engine's moves")
    t.add_argument("--our-share", type=float, default=0.5, help="share of games where our engine plays one side")
    t.add_argument("--seed", type=int, default=1)
    r = sub.add_parser("relabel", help="teacher scores for the positions of recorded games (usi.match games.jsonl)")
    r.add_argument("--games", type=Path, nargs="+", required=True, help="games.jsonl files of usi.match runs")
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--teacher", default=" ".join(DEFAULT_TEACHER), help="the teacher's command line")
    r.add_argument("--teacher-nodes", type=int, default=5000, help="mean nodes of each labelling search")
    r.add_argument("--max-games", type=int, default=None, help="only the first N recorded games")
    r.add_argument("--seed", type=int, default=1)
    f = sub.add_parser("fit", help="Texel-style logistic fit of the KP tables")
    f.add_argument("--data", type=Path, nargs="+", default=[DEFAULT_DATA], help="one or more gen or teach files")
    f.add_argument("--out", type=Path, default=None, help="weights file (default eval/weights/kp_shogi.npz)")
    f.add_argument("--steps", type=int, default=300)
    f.add_argument("--lr", type=float, default=1.0, help="Adam step, centipawns")
    f.add_argument("--lam", type=float, default=0.5, help="weight of the search score in the target (rest: result)")
    f.add_argument("--l2-kp", type=float, default=1e-6, help="L2 toward the hand-set values, per KP slot")
    f.add_argument("--l2-factor", type=float, default=1e-5, help="L2 of the king-free factor")
    f.add_argument("--mobility", action="store_true", help="also learn a mobility weight per sliding piece type")
    f.add_argument("--king-safety", action="store_true",
                   help="also learn the king-zone table (attacks next to each king by the attacker's hand)")
    f.add_argument("--threats", action="store_true",
                   help="also learn the threat table (pieces attacked by cheaper or undefended; jointly with the KP "
                        "tables, where add-threats keeps them fixed)")
    f.add_argument("--safe-mobility", action="store_true",
                   help="also learn the safe-mobility table (each piece's destinations no enemy piece attacks, "
                        "one-hot by piece type and count)")
    f.add_argument("--teacher-games-only", action="store_true",
                   help="leave out the games where our engine played against the teacher or a peer")
    f.add_argument("--lam-ours", type=float, default=None,
                   help="--lam of the positions of games where our engine played one side against the teacher or a "
                        "peer (default: --lam)")
    f.add_argument("--self-play-weight", type=float, default=1.0,
                   help="training weight of the positions of relabelled games of our engine against itself")
    f.add_argument("--peer-weight", type=float, default=1.0,
                   help="training weight of the positions of games where our engine played one side against the "
                        "teacher or a peer (our engine's own choices: the positions its search steers into)")
    at = sub.add_parser("add-threats", help="fit the threat table on top of a weights file's fixed tables")
    at.add_argument("--data", type=Path, nargs="+", required=True, help="one or more teach, relabel or gen files")
    at.add_argument("--base", type=Path, required=True, help="the weights file whose tables stay fixed")
    at.add_argument("--out", type=Path, required=True, help="the new weights file")
    at.add_argument("--steps", type=int, default=400)
    at.add_argument("--lr", type=float, default=2.0, help="Adam step, centipawns")
    at.add_argument("--lam", type=float, default=0.5, help="as fit's --lam")
    at.add_argument("--lam-ours", type=float, default=None, help="as fit's")
    at.add_argument("--teacher-games-only", action="store_true", help="as fit's")
    at.add_argument("--own-only", action="store_true",
                    help="learn only the entries of the side to move's threatened pieces (the opponent's stay 0)")
    vl = sub.add_parser("losses", help="validation loss of the hand-set tables and of weights files on fit's split")
    vl.add_argument("--data", type=Path, nargs="+", required=True, help="the data files, as given to fit")
    vl.add_argument("--weights", type=Path, nargs="+", required=True, help="weights files to compare")
    vl.add_argument("--newest", type=int, default=0,
                    help="only the validation games of the last N data files (games older fits never saw)")
    vl.add_argument("--lam", type=float, default=0.5, help="as fit's --lam")
    vl.add_argument("--lam-ours", type=float, default=None, help="as fit's")
    vl.add_argument("--teacher-games-only", action="store_true", help="as fit's")
    c = sub.add_parser("check", help="load a weights file and print its score on a fixed position")
    c.add_argument("--weights", type=Path, default=None)
    dv = sub.add_parser("derive", help="a variant's tables derived from shogi's (train.derive)")
    dv.add_argument("--variant", default="fantasista")
    dv.add_argument("--source", type=Path, default=None, help="shogi's weights file (default the shipped one)")
    dv.add_argument("--out", type=Path, default=None, help="default eval/weights/kp_<variant>.npz")
    args = ap.parse_args(argv)
    if args.cmd == "derive":
        from engine import get_variant
        from eval.kp import load_weights, weights_path
        from . import derive
        try:
            shogi, variant = get_variant("shogi"), derive.variant_record(args.variant)
            source = args.source or weights_path("shogi")
            out = args.out or weights_path(variant.id)
            derive.write(derive.derive(load_weights(source, shogi), shogi, variant), variant, out, source)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(f"wrote {out}")
        return 0
    if args.cmd == "fit":
        from eval.kp import weights_path
        if (args.steps <= 0 or args.lr <= 0 or not 0 <= args.lam <= 1 or args.l2_kp < 0 or args.l2_factor < 0
                or args.self_play_weight <= 0 or args.peer_weight <= 0 or not 0 <= (args.lam_ours or 0) <= 1):
            ap.error("--steps, --lr, --self-play-weight and --peer-weight must be positive, --lam and --lam-ours in "
                     "[0, 1], the L2 weights non-negative")
        try:
            figures = fit(args.data, args.out or weights_path("shogi"), args.steps, args.lr, args.lam, args.l2_kp,
                          args.l2_factor, mobility=args.mobility, teacher_games_only=args.teacher_games_only,
                          king_safety=args.king_safety, self_play_weight=args.self_play_weight,
                          lam_ours=args.lam_ours, peer_weight=args.peer_weight, threats=args.threats,
                          safe_mobility=args.safe_mobility)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(figures)
        return 0
    if args.cmd == "add-threats":
        if args.steps <= 0 or args.lr <= 0 or not 0 <= args.lam <= 1 or not 0 <= (args.lam_ours or 0) <= 1:
            ap.error("--steps and --lr must be positive, --lam and --lam-ours in [0, 1]")
        try:
            figures = fit_threats(args.data, args.base, args.out, args.steps, args.lr, args.lam,
                                  lam_ours=args.lam_ours, teacher_games_only=args.teacher_games_only,
                                  own_only=args.own_only)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(figures)
        return 0
    if args.cmd == "losses":
        if not 0 <= args.lam <= 1 or not 0 <= (args.lam_ours or 0) <= 1:
            ap.error("--lam and --lam-ours must be in [0, 1]")
        try:
            figures = validation_losses(args.data, args.weights, args.newest, args.lam,
                                        teacher_games_only=args.teacher_games_only, lam_ours=args.lam_ours)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(f"validation positions: {int(figures.pop('positions'))}")
        for name, value in figures.items():
            print(f"{name}: {value:.5f}")
        return 0
    if args.cmd == "check":
        from engine import get_variant
        from eval import evaluate, kp_eval_tables, threat_scratch
        from eval.kernels import evaluate_k
        from eval.kp import load_weights, weights_path
        v = get_variant("shogi")
        try:
            E = kp_eval_tables(v, *load_weights(args.weights or weights_path("shogi"), v))
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        pos = Position.from_sfen(CHECK_SFEN)
        learned = int(evaluate_k(pos.state, pos.tables, E, threat_scratch(v)))
        print(f"{CHECK_SFEN}: learned {learned}, hand {evaluate(pos)}")
        return 0
    if args.cmd == "teach":
        from .teacher import generate_teacher
        if args.minutes <= 0 or args.teacher_nodes <= 0 or args.our_nodes <= 0 or not 0 <= args.our_share <= 1:
            ap.error("--minutes and the node counts must be positive, --our-share in [0, 1]")
        try:
            summary = generate_teacher(args.out, args.minutes, shlex.split(args.teacher), args.teacher_nodes,
                                       args.our_nodes, args.our_share, args.seed, max_games=args.games)
        except (OSError, RuntimeError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(summary)
        return 0
    if args.cmd == "relabel":
        from .teacher import relabel_games
        if args.teacher_nodes <= 0 or (args.max_games is not None and args.max_games <= 0):
            ap.error("--teacher-nodes and --max-games must be positive")
        try:
            summary = relabel_games(args.games, args.out, shlex.split(args.teacher), args.teacher_nodes, args.seed,
                                    max_games=args.max_games)
        except (OSError, RuntimeError, ValueError, KeyError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(summary)
        return 0
    if args.cmd == "gen":
        if args.minutes <= 0 or args.nodes <= 0:
            ap.error("--minutes and --nodes must be positive")
        summary = generate(args.out, args.minutes, args.nodes, args.seed)
        print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())

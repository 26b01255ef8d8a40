"""Probe: would a small network on the KP features predict better than the linear KP tables? (issue 24, item 3)

::

    python -m train.nn_probe --hidden 8 --epochs 6 --l2 1e-4     # about 9 minutes here, niced beside an SPRT

A measurement, not an evaluation the engine uses. On the data, split, labels and scale of ``python -m train
fit`` (the teacher files 11-16, teacher games only, seed 0, lam 0.5) it trains a residual on top of the shipped
tables, side to move's view::

    v = kp(x) + 100 * (w2 . clip([a_stm, a_opp], 0, 4) + b2),   a_p = b1 + sum over p's active features of
                                                               (W1[f] + F1[factor(f)])

``a_p`` is the accumulator of perspective ``p``: the KP features (``train.features.features``) of one king's table, the
board and the hand blocks, each a row of ``W1`` plus the king-free factor row it shares with the other king squares
(``train.features.factor_map``, as the KP fit shares them). The accumulators are what an engine would update incrementally;
the side to move's comes first, so the network is colour-symmetric by construction. Adam on mini-batches, L2 on
``W1`` (``--l2``) and a tenth of it on ``F1``. Prints the validation loss of the shipped tables and, after each
epoch, the residual model's.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

#: the teacher files of the shipped tables (docs/eval.md)
DATA_FILES = [Path(__file__).resolve().parents[1] / "eval" / "data" / f"kp_shogi_teacher_{i}.npz"
              for i in range(11, 17)]
CLIP = 4.0     # hidden activations are clipped to [0, CLIP]
OUT_SCALE = 100.0  # the output layer counts in units of 100 centipawns


class ResidualNet:
    """The residual network's parameters and its forward and backward passes over rows of sparse features."""

    def __init__(self, n_w: int, n_f: int, fmap: np.ndarray, pad: int, hidden: int, seed: int) -> None:
        rng = np.random.default_rng(seed)
        self.fmap, self.pad, self.hidden = fmap, pad, hidden
        self.W1 = np.zeros((n_w, hidden))
        self.F1 = rng.normal(0, 0.05, (n_f, hidden))
        self.F1[fmap[pad]] = 0.0
        self.b1 = np.zeros(hidden)
        self.w2 = rng.normal(0, 0.1, 2 * hidden)
        self.b2 = np.zeros(1)

    @property
    def params(self) -> list[np.ndarray]:
        return [self.W1, self.F1, self.b1, self.w2, self.b2]

    def _acc(self, ix: np.ndarray) -> np.ndarray:
        e = self.W1[ix] + self.F1[self.fmap[ix]]
        e[ix == self.pad] = 0.0
        return self.b1 + e.sum(axis=1)

    def forward(self, ix_s: np.ndarray, ix_g: np.ndarray, sente_to_move: np.ndarray) -> tuple[np.ndarray, tuple]:
        """Output in centipawns (side to move's view) of rows with sente's and gote's feature indices."""
        a_s, a_g = self._acc(ix_s), self._acc(ix_g)
        st = sente_to_move[:, None]
        z = np.concatenate([np.where(st, a_s, a_g), np.where(st, a_g, a_s)], axis=1)
        h = np.clip(z, 0.0, CLIP)
        return OUT_SCALE * (h @ self.w2 + self.b2[0]), (z, h, st)

    def backward(self, ix_s: np.ndarray, ix_g: np.ndarray, cache: tuple, g_out: np.ndarray) -> list[np.ndarray]:
        """Gradients of the parameters (order of :attr:`params`) given d loss / d output for each row."""
        z, h, st = cache
        H = self.hidden
        g_raw = OUT_SCALE * g_out
        g_z = g_raw[:, None] * self.w2[None, :] * ((z > 0) & (z < CLIP))
        g_as = np.where(st, g_z[:, :H], g_z[:, H:])
        g_ag = np.where(st, g_z[:, H:], g_z[:, :H])
        g_W1 = np.zeros_like(self.W1)
        for ix, g in ((ix_s, g_as), (ix_g, g_ag)):
            flat = ix.ravel()
            for j in range(H):
                g_W1[:, j] += np.bincount(flat, weights=np.repeat(g[:, j], ix.shape[1]), minlength=len(g_W1))
        g_W1[self.pad] = 0.0
        g_F1 = np.stack([np.bincount(self.fmap, weights=g_W1[:, j], minlength=len(self.F1)) for j in range(H)], 1)
        return [g_W1, g_F1, g_as.sum(0) + g_ag.sum(0), h.T @ g_raw, np.array([g_raw.sum()])]


def perspective_columns(n_cols: int, n_sq: int) -> tuple[np.ndarray, np.ndarray]:
    """The columns of ``train.features.features`` that belong to sente's king table and to gote's: the board blocks (one
    column a square, sente's first) and the four hand blocks (sente's king: own, foe; gote's king: own, foe)."""
    nh = (n_cols - 2 * n_sq) // 4
    return (np.r_[0:n_sq, 2 * n_sq:2 * n_sq + 2 * nh], np.r_[n_sq:2 * n_sq, 2 * n_sq + 2 * nh:2 * n_sq + 4 * nh])


def main(argv: list[str] | None = None) -> int:
    from engine import get_variant

    from eval import kp as KP
    from . import features as F
    from .fit import _bce, _load_data, _side_to_move_value, _sigmoid, _split_and_target, adam_step

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hidden", type=int, default=8, help="accumulator width per perspective")
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--l2", type=float, default=1e-4)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--batch", type=int, default=8192)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    t0 = time.time()
    v = get_variant("shogi")
    d = _load_data(DATA_FILES, teacher_games_only=True)
    tr, va, target, k_label, unit_ratio = _split_and_target(d, v, 0, 0.5)
    K = k_label / unit_ratio
    idx, coef = F.features(d["board"], d["hands"], v)
    sign = np.where(d["stm"] == 0, 1.0, -1.0)
    w = KP.load_weights(KP.weights_path(v.id), v)
    base = _side_to_move_value(F.flat_weights(w.kp, w.kp_hand), idx, coef.astype(np.float64), sign, float(w.tempo),
                               F.mobility_features(d["board"], v), w.mobility.astype(np.float64))
    print(f"{len(sign)} positions; shipped tables: train {_bce(_sigmoid(base[tr] / K), target[tr]):.5f} "
          f"validation {_bce(_sigmoid(base[va] / K), target[va]):.5f} ({time.time() - t0:.0f} s)", flush=True)
    cols_s, cols_g = perspective_columns(idx.shape[1], v.geometry.n_squares)
    idx_s, idx_g = idx[:, cols_s], idx[:, cols_g]
    sente = d["stm"] == 0
    fmap = F.factor_map(v)
    n_w = F.flat_weights(w.kp, w.kp_hand).size
    net = ResidualNet(n_w, int(fmap.max()) + 1, fmap, n_w - 1, a.hidden, a.seed)

    def loss(rows: np.ndarray) -> float:
        total = 0.0
        for k in range(0, len(rows), 20000):
            r = rows[k:k + 20000]
            out, _ = net.forward(idx_s[r], idx_g[r], sente[r])
            total += _bce(_sigmoid((base[r] + out) / K), target[r]) * len(r)
        return total / len(rows)

    rng = np.random.default_rng(a.seed)
    moments = [(np.zeros_like(p), np.zeros_like(p)) for p in net.params]
    step = 0
    for epoch in range(1, a.epochs + 1):
        perm = rng.permutation(tr)
        for k in range(0, len(perm), a.batch):
            r = perm[k:k + a.batch]
            out, cache = net.forward(idx_s[r], idx_g[r], sente[r])
            g_out = (_sigmoid((base[r] + out) / K) - target[r]) / K / len(r)
            grads = net.backward(idx_s[r], idx_g[r], cache, g_out)
            grads[0] += 2 * a.l2 * net.W1
            grads[1] += 2 * a.l2 * 0.1 * net.F1
            step += 1
            adam_step(net.params, grads, moments, step, a.lr)
        print(f"epoch {epoch}: validation {loss(va):.5f} train (every 10th) {loss(tr[::10]):.5f} "
              f"({time.time() - t0:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

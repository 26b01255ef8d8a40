"""``train.nn_probe``: the residual network's backward pass is the gradient of its forward pass, and the network
sees the side to move's accumulator first (colour symmetry)."""
import numpy as np

from train.nn_probe import ResidualNet, perspective_columns


def _net_and_rows(seed: int = 3):
    rng = np.random.default_rng(seed)
    n_w, n_f, hidden, rows, cols = 40, 10, 4, 12, 6
    fmap = rng.integers(0, n_f - 1, n_w)
    fmap[n_w - 1] = n_f - 1  # the padding slot has its own factor
    net = ResidualNet(n_w, n_f, fmap, n_w - 1, hidden, seed)
    net.W1[:] = rng.normal(0, 0.3, net.W1.shape)
    net.W1[n_w - 1] = 0
    net.F1[:] = rng.normal(0, 0.3, net.F1.shape)
    net.F1[n_f - 1] = 0
    net.b1[:] = rng.normal(0.5, 0.3, hidden)
    ix_s = rng.integers(0, n_w, (rows, cols))
    ix_g = rng.integers(0, n_w, (rows, cols))
    sente = rng.random(rows) < 0.5
    return net, ix_s, ix_g, sente, rng


def test_backward_is_the_gradient_of_forward():
    net, ix_s, ix_g, sente, rng = _net_and_rows()
    weights = rng.normal(0, 1, len(sente))

    def f() -> float:  # a scalar of the outputs: sum of weights * output
        return float(weights @ net.forward(ix_s, ix_g, sente)[0])

    out, cache = net.forward(ix_s, ix_g, sente)
    grads = net.backward(ix_s, ix_g, cache, weights)
    eps = 1e-6
    for p, g in zip(net.params, grads):
        for flat in rng.choice(p.size, size=min(p.size, 15), replace=False):
            i = np.unravel_index(flat, p.shape)
            old = p[i]
            p[i] = old + eps
            up = f()
            p[i] = old - eps
            down = f()
            p[i] = old
            assert abs((up - down) / (2 * eps) - g[i]) < 1e-4 * max(1.0, abs(g[i])), (p.shape, i)


def test_swapping_the_perspectives_and_the_side_to_move_keeps_the_output():
    net, ix_s, ix_g, sente, _ = _net_and_rows(5)
    a = net.forward(ix_s, ix_g, sente)[0]
    b = net.forward(ix_g, ix_s, ~sente)[0]
    assert np.allclose(a, b) and not np.allclose(a, net.forward(ix_s, ix_g, ~sente)[0])


def test_perspective_columns_split_the_kp_features():
    s, g = perspective_columns(2 * 81 + 4 * 7, 81)
    assert len(s) == len(g) == 81 + 14 and set(s).isdisjoint(g) and sorted([*s, *g]) == list(range(190))
    assert s[0] == 0 and g[0] == 81 and s[81] == 162 and g[81] == 176

"""``splitopt sweep`` for throughput (issue 24 item 5): every sampled placement is optimal (brute
force), the optimum is non-increasing in a rate or a speed, the flat intervals really are optimal
throughout and the stated resolution holds between samples (checked at midpoints by brute force)."""

from __future__ import annotations

import math

import pytest

from splitopt.errors import InstanceError
from splitopt.instances.throughput import generate
from splitopt.models.throughput import evaluate
from splitopt.solvers.throughput import bruteforce
from splitopt.solvers.throughput.sweep import _setter
from splitopt.validation.sweep import plot, sweep


def brute(inst):
    return evaluate(inst, bruteforce.bruteforce(inst))[0]


def re_pct(res):
    return float(res.resolution.split("within ")[1].split(" %")[0]) / 100


@pytest.mark.parametrize("param,lo,hi", [("rate_bytes_per_s:n0:n1", 1e3, 1e8), ("node_flops:n2", 1e8, 1e11),
                                         ("rate_bytes_per_s", 1e4, 1e8)])
def test_sweep_pieces_optimal_and_resolution_holds(param, lo, hi):
    inst = generate(2, n_layers=7, n_nodes=3, max_splits=None)
    res = sweep(inst, param, lo, hi, samples=8)
    set_value, _label = _setter(inst, param)
    assert not res.exact and res.family == "throughput"
    samples = []
    for pc in res.pieces:
        for v, c in ((pc.lo, pc.cost_lo), (pc.hi, pc.cost_hi)):
            assert abs(c - brute(set_value(v))) <= 1e-9 * c
            samples.append((v, c))
    costs = [c for _v, c in sorted(samples)]
    assert all(b <= a * (1 + 1e-12) for a, b in zip(costs, costs[1:]))  # non-increasing
    worst = re_pct(res)
    # between neighbouring pieces and inside them: the lower end's placement is within the resolution
    for pc in res.pieces:
        if pc.hi > pc.lo:
            mid = math.sqrt(pc.lo * pc.hi)
            inst_mid = set_value(mid)
            opt = brute(inst_mid)
            assert evaluate(inst_mid, pc.solution)[0] <= opt * (1 + worst + 1e-9)
            if abs(pc.cost_lo - pc.cost_hi) <= 1e-9 * pc.cost_lo:  # flat: proven optimal throughout
                assert abs(evaluate(inst_mid, pc.solution)[0] - opt) <= 1e-9 * opt


def test_unknown_parameter_names_the_field():
    inst = generate(2, n_layers=5, n_nodes=3)
    with pytest.raises(InstanceError) as exc:
        sweep(inst, "rate_bytes_per_s:n0:n9", 1, 10)
    assert "--param" in str(exc.value)
    with pytest.raises(InstanceError):
        sweep(inst, "speed", 1, 10)


def test_plot_has_units(tmp_path, monkeypatch):
    inst = generate(2, n_layers=6, n_nodes=3)
    res = sweep(inst, "node_flops:n1", 1e9, 1e10, samples=5)
    labels = {}
    import matplotlib.axes

    orig_y, orig_x = matplotlib.axes.Axes.set_ylabel, matplotlib.axes.Axes.set_xlabel

    def sy(self, text, *a, **k):
        labels.setdefault("y", []).append(text)
        return orig_y(self, text, *a, **k)

    def sx(self, text, *a, **k):
        labels.setdefault("x", []).append(text)
        return orig_x(self, text, *a, **k)

    monkeypatch.setattr(matplotlib.axes.Axes, "set_ylabel", sy)
    monkeypatch.setattr(matplotlib.axes.Axes, "set_xlabel", sx)
    out = tmp_path / "s.png"
    plot(res, str(out))
    assert out.stat().st_size > 0
    assert "optimal period (s)" in labels["y"] and "nodes used" in labels["y"]
    assert "speed of node n1 (FLOP/s)" in labels["x"]


def test_plot_marks_every_sample_and_whole_number_counts(tmp_path, monkeypatch):
    """Looked at (issue 24): a run of one sample had no length, so the bottom panel showed one of
    eleven runs, and a flat node count got ticks 2.84 ... 3.16. Every run now has visible marks and
    the count axis spans whole numbers."""
    import matplotlib.figure

    seen = []
    orig = matplotlib.figure.Figure.savefig

    def spy(self, *a, **k):
        ax2 = self.axes[1]
        marked = {round(x, 6) for line in ax2.get_lines() for x in line.get_xdata()}
        seen.append((marked, ax2.get_ylim(), [t for t in ax2.get_yticks()]))
        return orig(self, *a, **k)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", spy)
    res = sweep(generate(0, n_layers=6, n_nodes=3), "node_flops:n2", 1e8, 1e11, samples=6)
    plot(res, str(tmp_path / "t.png"))
    marked, (lo, hi), ticks = seen[0]
    for pc in res.pieces:
        assert round(pc.lo, 6) in marked and round(pc.hi, 6) in marked
    inside = [t for t in ticks if lo <= t <= hi]
    assert inside and all(float(t).is_integer() for t in inside)

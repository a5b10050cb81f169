"""``splitopt sweep`` for the pipeline family (issue 24 item 5): every sample's plan is the
brute-force optimum of the instance at that parameter value, runs of equal plans are the pieces,
``batch`` is exact over the integers when every integer is sampled, and the plot is written."""

from __future__ import annotations

import math

import pytest

from splitopt.errors import InstanceError
from splitopt.instances.pipeline_generate import generate
from splitopt.models.pipeline import evaluate
from splitopt.solvers.pipeline import bruteforce
from splitopt.solvers.pipeline.sweep import _at
from splitopt.validation.sweep import log_samples, plot, sweep


def inst():
    return generate(2, n_layers=4, n_servers=3, n_clients=2, batch=8)


def opt(i):
    return evaluate(i, bruteforce.bruteforce(i))[0]


@pytest.mark.parametrize("param, lo, hi", [("rate_scale", 0.01, 100.0), ("client_flops[1]", 1e9, 1e13)])
def test_sampled_sweep_is_optimal_at_every_sample(param, lo, hi):
    base = inst()
    res = sweep(base, param, lo, hi, samples=5)
    assert not res.exact and "5 log-spaced samples" in res.resolution
    xs = log_samples(lo, hi, 5)
    covered = []
    for pc in res.pieces:
        for x in xs:
            if pc.lo <= x <= pc.hi:
                at = _at(base, param, x)
                assert math.isclose(evaluate(at, pc.solution)[0], opt(at), rel_tol=1e-9)
                covered.append(x)
    assert covered == xs
    if param == "rate_scale":
        assert len(res.pieces) >= 2  # slow links and fast links give different plans


def test_batch_is_exact_over_integers():
    base = inst()
    res = sweep(base, "batch", 6, 9, samples=10)
    assert res.exact and res.pieces[0].lo == 6 and res.pieces[-1].hi == 9
    for B in range(6, 10):
        pc = next(p for p in res.pieces if p.lo <= B <= p.hi)
        at = base.with_(batch=B)
        assert math.isclose(evaluate(at, pc.solution)[0], opt(at), rel_tol=1e-9)


def test_bad_parameters():
    with pytest.raises(InstanceError, match="unknown pipeline sweep parameter"):
        sweep(inst(), "bandwidth", 1, 2)
    with pytest.raises(InstanceError, match="clients 0..1"):
        sweep(inst(), "client_flops[5]", 1, 2)
    with pytest.raises(InstanceError, match="integers"):
        sweep(inst(), "batch", 1.5, 4)


def test_plot_has_units(tmp_path, monkeypatch):
    import matplotlib.figure

    titles = []
    orig = matplotlib.figure.Figure.savefig

    def spy(self, *a, **k):
        ax1, ax2 = self.axes
        titles.append((ax1.get_title(), ax1.get_ylabel(), ax2.get_xlabel(), ax2.get_ylabel()))
        return orig(self, *a, **k)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", spy)
    res = sweep(inst(), "rate_scale", 0.1, 10, samples=3)
    plot(res, str(tmp_path / "s.png"))
    assert (tmp_path / "s.png").stat().st_size > 1000
    title, ylab, xlab, y2 = titles[0]
    assert "(s)" in ylab and "x rates_bytes_per_s" in xlab and y2 == "server blocks"
    assert "3 samples" in title and "sampled" in title

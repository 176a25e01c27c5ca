"""Processor seconds of one fit's R-hat / ESS diagnostics: ArviZ's per-parameter functions
against analysis.convergence (all parameters at once, via analysis.fit.diagnose).

    python scripts/bench_diagnostics.py P

P parameters (an ordinal model of 362 x 5 has ~740, a GAMM ~2,900), 4 chains of 1,500 AR(1)
draws; prints both times and whether the extremes (max R-hat, min bulk and tail ESS) agree.
"""

from __future__ import annotations

import sys
import time
import warnings

import arviz as az
import numpy as np

from analysis.fit import diagnose


def main() -> None:
    params, chains, draws = int(sys.argv[1]), 4, 1500
    rng = np.random.default_rng(0)
    x = np.zeros((chains, draws, params))
    noise = rng.normal(size=x.shape)
    phi = rng.uniform(0, 0.9, params)
    for t in range(1, draws):
        x[:, t] = phi * x[:, t - 1] + noise[:, t]
    idata = az.from_dict(posterior={"v": x},
                         sample_stats={"diverging": np.zeros((chains, draws), dtype=bool)})
    start = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        post = idata.posterior[["v"]]
        rhat = az.rhat(post)["v"]
        bulk = az.ess(post, method="bulk")["v"]
        tail = az.ess(post, method="tail")["v"]
    arviz_seconds = time.process_time() - start
    start = time.process_time()
    ours = diagnose(idata, ["v"])
    our_seconds = time.process_time() - start
    same = (np.isclose(float(rhat.max()), ours.max_rhat, rtol=1e-12)
            and np.isclose(float(bulk.min()), ours.min_ess_bulk, rtol=1e-12)
            and np.isclose(float(tail.min()), ours.min_ess_tail, rtol=1e-12))
    print(f"P={params}: ArviZ {arviz_seconds:.1f} s CPU, analysis.convergence "
          f"{our_seconds:.1f} s CPU, {arviz_seconds / our_seconds:.1f}x, same extremes: {same}")


if __name__ == "__main__":
    main()

"""The two analysis engines side by side: the Bayesian models (PyMC) and mgcv / ordinal (R).

``mgcv_part`` fits the reference study's four GAMMs with mgcv (analysis.mgcv) on the
ratings the Bayesian models were fitted on (the same exclusions), and returns summary.json's
``mgcv`` block: status (fitted | skipped | failed | off) and its reason, the models, Table
S2 (analysis.table_s2) and one agreement sentence per model. R needs only the ratings and
the grid of each Bayesian smooth, so ``analyze`` starts it beside the sampler
(``mgcv_beside``: R's process fits while the models compile and sample) and adds the
agreement (``with_agreement``) once the Bayesian models are done.

**Smooths** (``smooth_agreement``): mgcv's s(d) and the Bayesian GAMM's f(d) are both
centred over the analysed ratings (sum_i s(d_i) = 0) and on the rating scale, so they are
compared point by point on the same grid: they *agree* at a grid point when each engine's
estimate lies inside the other's 95% interval,

    lo_B(d) <= s_M(d) <= hi_B(d)   and   lo_M(d) <= f_B(d) <= hi_M(d).

Each engine's verdict on the effect of distance is its own test: mgcv's F test (p < 0.05)
and a Bayesian band that excludes 0 somewhere; where effects are marginal the two can
disagree, and the sentence says so. Without a Bayesian GAMM the ordinal model's band (on
the logit scale) gives the Bayesian verdict and the curves are not compared.

**Ordinal coefficients** (``clmm_agreement``): ordinal::clmm fits the ordinal model's
likelihood by maximum likelihood on the same design (the centred spline columns 2..K,
satisfaction, violation, arm contrasts; a random intercept per participant, and with
``random_slope`` a random slope on the centred distance, which clmm fits slowly); a
coefficient agrees when clmm's estimate lies in the
Bayesian 94% interval and the posterior mean in clmm's 95% Wald interval.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np
from scipy.stats import norm

from analysis import mgcv, table_s2
from analysis.models import OUTCOMES, ModelData
from analysis.results import ModelResult

MGCV_MODES: tuple[str, ...] = ("auto", "require", "off")
WALD = norm.ppf(0.975)


def smooth_agreement(bayes: dict[str, np.ndarray], fitted: dict[str, np.ndarray]) -> np.ndarray:
    """Per grid point: each estimate inside the other's interval (module docstring);
    ``bayes`` {mean, lo, hi}, ``fitted`` (mgcv) {fit, lo, hi}, on the same grid."""
    b_mean, b_lo, b_hi = (np.asarray(bayes[k], dtype=float) for k in ("mean", "lo", "hi"))
    m_fit, m_lo, m_hi = (np.asarray(fitted[k], dtype=float) for k in ("fit", "lo", "hi"))
    if b_mean.shape != m_fit.shape:
        raise ValueError(f"the smooths are on different grids ({b_mean.size} and "
                         f"{m_fit.size} points)")
    return (b_lo <= m_fit) & (m_fit <= b_hi) & (m_lo <= b_mean) & (b_mean <= m_hi)


def band_excludes_zero(model: ModelResult) -> bool:
    s = model.smooth
    return bool(((s["lo"] > 0) | (s["hi"] < 0)).any())


def agreement(fitted: dict[str, Any], models: list[ModelResult]) -> dict[str, Any]:
    """One mgcv model against its Bayesian counterpart: {model, bayesian_model,
    mgcv_effect, bayesian_effect, points_agree, grid_points, sentence}."""
    label = table_s2.model_label(fitted["outcome"], fitted["distance"]) or fitted["name"]
    what = f"{label} ({fitted['outcome']} ~ s({fitted['distance']}))"
    same = [m for m in models if m.outcome == fitted["outcome"]
            and m.distance == fitted["distance"]]
    bayes = next((m for m in same if m.family.matches_mgcv),
                 next((m for m in same if m.family.main), None))
    s = fitted["smooth"]
    m_effect = bool(table_s2.significant(s["p"]))
    mgcv_says = (f"mgcv {'finds' if m_effect else 'finds no'} effect of distance "
                 f"(EDF {s['edf']:.2f}, F = {s['F']:.2f}, {table_s2.p_text(s['p'])})")
    out: dict[str, Any] = {"model": label, "mgcv_model": fitted["name"],
                           "bayesian_model": None, "mgcv_effect": m_effect,
                           "bayesian_effect": None, "points_agree": None,
                           "grid_points": len(fitted["curve"]["d"])}
    if bayes is None:
        out["sentence"] = f"{what}: {mgcv_says}; no Bayesian model of it was fitted."
        return out
    b_effect = band_excludes_zero(bayes)
    out.update(bayesian_model=bayes.spec.name, bayesian_effect=b_effect)
    kind = bayes.family.title
    bayes_says = (f"the {kind}'s 95% band {'excludes' if b_effect else 'contains'} 0 "
                  f"{'somewhere' if b_effect else 'everywhere'}")
    verdict = "the engines agree on the effect" if b_effect == m_effect else (
        "the engines DIFFER on the effect (a marginal effect: the F test and the band "
        "are different tests)")
    curves = ""
    if bayes.family.matches_mgcv:
        grid = np.asarray(fitted["curve"]["d"], dtype=float)
        if np.allclose(grid, bayes.smooth["d"].to_numpy(dtype=float)):
            ok = smooth_agreement(
                {k: bayes.smooth[k].to_numpy() for k in ("mean", "lo", "hi")},
                {k: np.asarray(fitted["curve"][k], dtype=float) for k in ("fit", "lo", "hi")})
            out["points_agree"] = int(ok.sum())
            curves = (f"; the two smooths agree within their 95% intervals at "
                      f"{int(ok.sum())} of {ok.size} grid points")
            if bayes.data.terms or len(bayes.data.arms) > 1:
                curves += (" (the Bayesian GAMM also adjusts for "
                           + ", ".join([*bayes.data.terms] + (["arm"] if len(bayes.data.arms)
                                                              > 1 else [])) + ")")
    out["sentence"] = f"{what}: {mgcv_says}; {bayes_says}: {verdict}{curves}."
    return out


def mgcv_part(ratings: Any, distances: tuple[str, str], models: list[ModelResult], *,
              mode: str = "auto", method: str = mgcv.DEFAULT_METHOD,
              on_log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """summary.json's ``mgcv`` block (module docstring) for ``ratings`` (the analysed
    ones), the (L0, L1) ``distances`` and the Bayesian ``models`` fitted on them: ``mgcv_fit``
    on the models' grids, then ``with_agreement``."""
    grids = {m.distance: m.smooth["d"].to_numpy(dtype=float) for m in models}
    block = mgcv_fit(ratings, distances, grids, mode=mode, method=method, on_log=on_log)
    return with_agreement(block, models)


def mgcv_fit(ratings: Any, distances: tuple[str, str], grids: dict[str, np.ndarray], *,
             mode: str = "auto", method: str = mgcv.DEFAULT_METHOD,
             on_log: Callable[[str], None] | None = None,
             blas_threads: int | None = mgcv.BLAS_THREADS) -> dict[str, Any]:
    """The ``mgcv`` block without its agreement (it needs the Bayesian models; R does not):
    the four GAMMs on ``ratings`` with each distance's curve on ``grids[distance]`` (the
    Bayesian smooth's grid, so the curves compare point by point). Never raises for R's
    sake: a missing R, or too few ratings per participant for the GAMM
    (analysis.mgcv.too_few_ratings), gives status skipped, an R error status failed;
    ``blas_threads``: analysis.mgcv.fit_gamms'."""
    log = on_log or (lambda _m: None)
    block: dict[str, Any] = {"status": "off", "reason": None, "mode": mode, "method": method,
                             "models": [], "table_s2": [], "agreement": []}
    if mode == "off":
        block["reason"] = "not asked for (--mgcv off)"
        return block
    specs = [mgcv.GammSpec(o, d) for o in OUTCOMES for d in distances]
    few = mgcv.too_few_ratings(ratings, specs)
    if few is not None:
        return {**block, "status": "skipped", "reason": few}
    status = mgcv.r_status()
    if not status["available"]:
        return {**block, "status": "skipped", "reason": status["reason"]}
    started = time.perf_counter()
    log(f"fitting the reference study's four GAMMs with mgcv (method {method})")
    try:
        fitted = mgcv.fit_gamms(ratings, specs, method=method, grids=grids,
                                blas_threads=blas_threads)
    except mgcv.MgcvUnavailable as e:
        return {**block, "status": "skipped", "reason": str(e)}
    except (mgcv.MgcvError, ValueError, KeyError) as e:
        return {**block, "status": "failed", "reason": " ".join(str(e).split())}
    block.update(status="fitted", r_version=fitted.get("r_version"),
                 mgcv_version=fitted.get("mgcv_version"),
                 seconds=time.perf_counter() - started, models=fitted["models"],
                 table_s2=table_s2.rows(fitted["models"]))
    return block


def with_agreement(block: dict[str, Any], models: list[ModelResult]) -> dict[str, Any]:
    """``block`` (``mgcv_fit``'s) with one agreement sentence per fitted mgcv model against
    the Bayesian ``models``."""
    return {**block, "agreement": [agreement(m, models) for m in block["models"]]}


def mgcv_beside(ratings: Any, distances: tuple[str, str], grids: dict[str, np.ndarray], *,
                mode: str = "auto", method: str = mgcv.DEFAULT_METHOD) -> Future[dict[str, Any]]:
    """``mgcv_fit`` started in a background thread, so R fits its GAMMs while the Bayesian
    models compile and sample (R runs as its own process: the thread only waits for it;
    single-threaded and at a lower CPU priority, analysis.mgcv.NICENESS, as the sampler's
    chains use the cores); ``with_agreement`` on the
    future's result once the models are there."""
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mgcv")
    try:
        return pool.submit(mgcv_fit, ratings, distances, grids, mode=mode, method=method)
    finally:
        pool.shutdown(wait=False)


def clmm_agreement(data: ModelData, result: ModelResult, *,
                   random_slope: bool = False) -> list[dict[str, Any]]:
    """ordinal::clmm on ``data`` (the design of the module docstring; the random slope only
    with ``random_slope``: clmm's Laplace fit of it is slow) against the Bayesian ordinal
    ``result``'s effects: [{term, mean, lo, hi, clmm, clmm_se, agree}]."""
    assert data.basis is not None
    basis = data.basis(data.d)
    columns = {f"basis_{j}": basis[:, j] for j in range(1, basis.shape[1])}
    columns.update(data.terms)
    for a in range(1, len(data.arms)):
        columns[f"arm_{a}"] = (data.arm == a).astype(float)
    fitted = mgcv.fit_clmm(data.y, data.participant, columns,
                           slope=data.d - data.d_centre if random_slope else None)
    by = {c["name"]: c for c in fitted["coefficients"]}
    out = []
    for c in result.coefficients:
        if c.group != "effect" or c.name not in by:
            continue
        est, se = by[c.name]["estimate"], by[c.name]["se"]
        agree = bool(c.lo <= est <= c.hi and est - WALD * se <= c.mean <= est + WALD * se)
        out.append({"term": c.name, "mean": c.mean, "lo": c.lo, "hi": c.hi,
                    "clmm": est, "clmm_se": se, "agree": agree})
    return out

"""Sampling, diagnostics and model comparison.

Backends (measured by ``recourse-study benchmark analysis``, see the README):

- ``nutpie`` (default): nutpie's NUTS on the model compiled with numba — the fastest reliable
  backend here (its compile time is included in every timing we report);
- ``pymc``: PyMC's default NUTS (``pm.sample``), the baseline.

Diagnostics follow Vehtari et al. (2021): max rank-normalized R-hat and min bulk / tail ESS
over every free parameter (analysis.convergence: ArviZ's estimators for all parameters in
one pass), plus the number of divergent transitions; ``Diagnostics.problems``
lists each missed threshold (R-hat <= 1.01, ESS >= 400, no divergences) and ``fit`` warns.
"""

from __future__ import annotations

import contextlib
import logging
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal

import arviz as az
import numpy as np
import pymc as pm

from analysis import psis
from analysis.convergence import convergence, parameter_draws
from analysis.model_data import SettingError
from analysis.nutpie_cache import compile_model

Backend = Literal["nutpie", "pymc"]
BACKENDS: tuple[str, ...] = ("nutpie", "pymc")
DEFAULT_TUNE = {"nutpie": 300, "pymc": 1000}
# Draws per chain of a first try (PyMC's own default, nutpie's too). Left to its default, the
# number of draws is adaptive: a fit that misses R-hat <= 1.01 or bulk / tail ESS >= 400 draws
# again, longer chains or more of them (``sample_to_target`` at ``DEFAULT_ESS_TARGET``), so
# 1,000 serves the fits that need no more and the others get what they need, where a fixed
# number leaves them short. A ``draws`` given is a single run of that many unless an ESS
# target is given too (``resolve``). How often a first try falls short on studies of the
# reference size, and what it costs: docs/benchmarks.md, "analyze, adaptive draws".
DEFAULT_DRAWS = {"nutpie": 1000, "pymc": 1000}
# NUTS step-size adaptation target for both backends: 0.95 rather than the usual 0.8 removes
# the divergences left near a flat smooth (analysis.models, "Parameterization").
DEFAULT_TARGET_ACCEPT = 0.95
RHAT_MAX = 1.01
ESS_MIN = 400
DEFAULT_ESS_TARGET = ESS_MIN  # the ESS a fit left to its default draws toward
# With an ESS target (``sample_to_target``), a fit draws at most this many times its first
# try's draws (chains x draws per chain).
TARGET_MAX_FACTOR = 4
# A first try whose R-hat misses RHAT_MAX by no more than this is given as many chains again,
# pooled (``next_try``); above it, or if the pooled chains miss too, longer chains afresh.
RHAT_POOLED = 1.02


class SamplingWarning(UserWarning):
    """A fit missed a convergence threshold.

    Issued (``warnings.warn``) when a fit misses a convergence threshold, so a script can make
    it an error:

    >>> import warnings
    >>> from analysis import SamplingWarning
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error", SamplingWarning)
    ...     try:
    ...         warnings.warn("r_hat 1.08 > 1.01", SamplingWarning)
    ...     except SamplingWarning as w:
    ...         print(w)
    r_hat 1.08 > 1.01
    """


@dataclass(frozen=True)
class Diagnostics:
    max_rhat: float
    min_ess_bulk: float
    min_ess_tail: float
    divergences: int
    # what they were read from: every try toward an ESS target pooled (sample_to_target);
    # None where not known (diagnostics built by hand)
    chains: int | None = None
    draws: int | None = None  # per chain

    def drawn(self) -> str:
        """The chains and draws as "C chains x N draws" (empty when not known)."""
        return "" if self.chains is None else f"{self.chains} chains x {self.draws:,} draws"

    def problems(self) -> list[str]:
        out = []
        if not self.max_rhat <= RHAT_MAX:
            out.append(f"max R-hat {self.max_rhat:.3f} > {RHAT_MAX}")
        if not self.min_ess_bulk >= ESS_MIN:
            out.append(f"min bulk ESS {self.min_ess_bulk:.0f} < {ESS_MIN}")
        if not self.min_ess_tail >= ESS_MIN:
            out.append(f"min tail ESS {self.min_ess_tail:.0f} < {ESS_MIN}")
        if self.divergences:
            out.append(f"{self.divergences} divergent transitions")
        return out

    def meets(self, ess_target: int) -> bool:
        """R-hat <= RHAT_MAX and bulk and tail ESS >= ``ess_target`` (divergences aside)."""
        return (self.max_rhat <= RHAT_MAX and self.min_ess_bulk >= ess_target
                and self.min_ess_tail >= ess_target)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Fit:
    idata: az.InferenceData
    backend: str
    seconds: float  # model compilation included
    diagnostics: Diagnostics


def resolve(backend: str, draws: int | None = None, tune: int | None = None,
            target_accept: float | None = None, ess_target: int | None = None
            ) -> dict[str, Any]:
    """{draws, tune, target_accept, ess_target} with each default resolved for ``backend``.

    ``ess_target`` (``sample_to_target``'s; None: a single run of ``draws``) defaults to
    ``DEFAULT_ESS_TARGET`` when ``draws`` is left to its default, and to none when ``draws``
    is given (a number of draws asked for is what is drawn); 0 turns it off. An unknown
    backend or a negative target: SettingError naming it."""
    if backend not in BACKENDS:
        raise SettingError(f"unknown backend {backend!r}; expected one of {', '.join(BACKENDS)}",
                           "backend")
    if ess_target is not None and ess_target < 0:
        raise SettingError(f"the ESS target must be at least 1 (0: none), got {ess_target}",
                           "ess_target")
    if ess_target is None:
        ess_target = DEFAULT_ESS_TARGET if draws is None else None
    return {"draws": DEFAULT_DRAWS[backend] if draws is None else draws,
            "tune": DEFAULT_TUNE[backend] if tune is None else tune,
            "target_accept": DEFAULT_TARGET_ACCEPT if target_accept is None else target_accept,
            "ess_target": ess_target or None}


def free_names(model: pm.Model) -> list[str]:
    """The model's free parameters as its priors state them: a free RV's name, or, for the
    pieces a stated parameter is sampled as (analysis.families.base.SAMPLED_AS), the stated
    parameter's (a deterministic of the model)."""
    from analysis.families.base import SAMPLED_AS

    names = [v.name for v in model.free_RVs]
    for stated, pieces in SAMPLED_AS.items():
        if stated in model.named_vars and set(pieces) <= set(names):
            names = [n for n in names if n not in pieces] + [stated]
    return names


def diagnose(idata: az.InferenceData, names: list[str]) -> Diagnostics:
    """The extremes over every scalar of the free parameters ``names``: max R-hat, min bulk
    and tail ESS (analysis.convergence, all parameters at once), the divergences, and the
    chains and draws per chain they were read from."""
    rhat, ess_b, ess_t = convergence(parameter_draws(idata.posterior, names))

    def extreme(values: np.ndarray, fn: Any) -> float:
        with warnings.catch_warnings():  # one chain: R-hat is NaN everywhere (reported null)
            warnings.simplefilter("ignore", RuntimeWarning)
            return float(fn(values))

    div = idata.sample_stats.get("diverging")
    return Diagnostics(
        max_rhat=extreme(rhat, np.nanmax),
        min_ess_bulk=extreme(ess_b, np.nanmin),
        min_ess_tail=extreme(ess_t, np.nanmin),
        divergences=int(div.values.sum()) if div is not None else 0,
        chains=int(idata.posterior.sizes["chain"]),
        draws=int(idata.posterior.sizes["draw"]),
    )


@dataclass(frozen=True)
class Try:
    """The next try toward an ESS target: ``chains`` of ``draws`` each, either a fresh run
    that replaces what was drawn or chains added to those at hand (``fresh`` False)."""

    chains: int
    draws: int
    fresh: bool


def next_try(chains: int, draws: int, first: tuple[int, int], diag: Diagnostics,
             ess_target: int) -> Try | None:
    """The next try after ``chains`` x ``draws`` with diagnostics ``diag``, or None: they
    meet ``ess_target`` (``Diagnostics.meets``) or reach the cap, ``TARGET_MAX_FACTOR`` x
    the first try's draws in all (``first``: its (chains, draws)).

    - R-hat above RHAT_MAX by a little (at most RHAT_POOLED) at the first try: the largest
      of hundreds of R-hats, each noisy at about 1 / ESS, so as many chains again with new
      seeds, pooled (more when ESS asks, as below).
    - R-hat above RHAT_POOLED, or still above RHAT_MAX: for a slowly mixing parameter
      R-hat is about 1 + (1 / n_eff - 1 / n) / 2 (n draws of a split chain, n_eff of them
      effective), an excess that more chains do not shrink, only longer ones: a fresh run of
      the first try's chains with at least twice the draws (more when ESS asks:
      draws x 1.2 x target / ESS). A stuck chain is dropped that way too.
    - ESS alone short: ESS grows linearly with the chains pooled, so chains of the same
      draws are added, to ceil(chains x 1.2 x target / ESS) in all (at least one more).
    """
    cap = TARGET_MAX_FACTOR * first[0] * first[1]
    if diag.meets(ess_target) or chains * draws >= cap:
        return None
    ess = min(diag.min_ess_bulk, diag.min_ess_tail)
    factor = 1.2 * ess_target / ess if ess > 0 else float(TARGET_MAX_FACTOR)
    pooled = max(int(np.ceil(chains * factor)), chains + 1)
    if not diag.max_rhat <= RHAT_MAX:
        if diag.max_rhat <= RHAT_POOLED and (chains, draws) == first:
            pooled = max(pooled, 2 * chains)
        else:
            longer = min(cap // first[0], max(2 * draws, int(np.ceil(draws * factor))))
            return Try(first[0], longer, fresh=True) if longer > draws else None
    more = min(cap // draws, pooled)
    return Try(more - chains, draws, fresh=False) if more > chains else None


def try_seed(seed: int, attempt: int) -> int:
    """The sampler seed of try ``attempt`` toward an ESS target (the first try: ``seed``
    itself; each later one its own stream, so chains added are independent of the first)."""
    if attempt == 0:
        return seed
    return int(np.random.SeedSequence([seed, attempt]).generate_state(1, dtype=np.uint32)[0])


def sample_to_target(draw: Callable[[int, int, int], az.InferenceData], names: list[str],
                     chains: int, draws: int, ess_target: int | None = None
                     ) -> tuple[az.InferenceData, Diagnostics]:
    """``draw(chains, draws, 0)`` and its diagnostics over the free parameters ``names``.
    With an ``ess_target`` that is the first try, and while the draws at hand miss it, try
    t draws ``draw(k, n, t)`` (``next_try``; its seeds: ``try_seed``): chains added to those
    at hand, nothing drawn thrown away, or a fresh run with longer chains when R-hat misses
    by more than a little or again; until the target is met or the cap reached. Without
    one, a single run."""
    idata = draw(chains, draws, 0)
    diag = diagnose(idata, names)
    attempt = 0
    while ess_target is not None:
        have = idata.posterior.sizes
        step = next_try(have["chain"], have["draw"], (chains, draws), diag, ess_target)
        if step is None:
            break
        attempt += 1
        new = draw(step.chains, step.draws, attempt)
        idata = new if step.fresh else az.concat(idata, new, dim="chain")
        diag = diagnose(idata, names)
    return idata, diag


def sample(
    model: pm.Model,
    *,
    backend: Backend = "nutpie",
    draws: int | None = None,
    tune: int | None = None,
    chains: int = 4,
    cores: int = 2,
    seed: int = 0,
    log_likelihood: bool = False,
    target_accept: float | None = None,
    ess_target: int | None = None,
    low_rank: bool = False,
) -> Fit:
    """Draw from the posterior of ``model``; ``seconds`` counts compilation too (and every
    try toward an ``ess_target``: ``sample_to_target``); ``low_rank``: nutpie's low-rank
    mass matrix (``start_nutpie``; PyMC's sampler has none).

    ``draws`` and ``tune`` default to each backend's own (``DEFAULT_DRAWS``, ``DEFAULT_TUNE``:
    nutpie's adaptation needs fewer tuning steps), ``target_accept`` to
    ``DEFAULT_TARGET_ACCEPT``, ``ess_target`` as ``resolve`` says."""
    start = time.perf_counter()
    resolved = resolve(backend, draws, tune, target_accept, ess_target)
    draw = drawer(model, compile_model(model) if backend == "nutpie" else None, seed=seed,
                  low_rank=low_rank, tune=resolved["tune"],
                  target_accept=resolved["target_accept"], cores=cores)
    idata, diag = sample_to_target(draw, free_names(model), chains, resolved["draws"],
                                   resolved["ess_target"])
    seconds = time.perf_counter() - start
    if log_likelihood:
        add_log_likelihood(model, idata)
    problems = diag.problems()
    if problems:
        warnings.warn("sampling diagnostics: " + "; ".join(problems), SamplingWarning,
                      stacklevel=2)
    return Fit(idata, backend, seconds, diag)


def drawer(model: pm.Model, compiled: Any | None, *, seed: int, low_rank: bool = False,
           **settings: Any) -> Callable[[int, int, int], az.InferenceData]:
    """``sample_to_target``'s ``draw(chains, draws, attempt)``: nutpie's NUTS on
    ``compiled`` (its compiled ``model``; ``draw_nutpie``) or, with ``compiled`` None, PyMC's
    (``draw_pymc``), seeded ``try_seed(seed, attempt)``; ``low_rank``: nutpie's mass matrix
    (``start_nutpie``; PyMC's sampler has none); ``settings``: tune, target_accept, cores."""
    def draw(k: int, n: int, attempt: int) -> az.InferenceData:
        mine = try_seed(seed, attempt)
        if compiled is None:
            return draw_pymc(model, chains=k, draws=n, seed=mine, **settings)
        return draw_nutpie(compiled, chains=k, draws=n, seed=mine, low_rank=low_rank,
                           **settings)

    return draw


def add_log_likelihood(model: pm.Model, idata: az.InferenceData) -> None:
    """Add the pointwise log-likelihood of every draw to ``idata`` (group log_likelihood)."""
    with model:
        pm.compute_log_likelihood(idata, progressbar=False)


def start_nutpie(compiled: Any, *, draws: int, tune: int, chains: int, cores: int, seed: int,
                 target_accept: float, low_rank: bool = False) -> Any:
    """nutpie's NUTS on a compiled model (``nutpie.compile_pymc_model``; tuning draws are
    not kept, as in PyMC), running in nutpie's own threads: ``wait_nutpie`` of the returned
    sampler gives the InferenceData. The caller's thread is free meanwhile (the chains call
    the numba-compiled log-density without Python). ``low_rank``: nutpie's mass matrix
    adapted as a diagonal plus a low-rank part from the gradients (its
    ``low_rank_modified_mass_matrix``) instead of a diagonal only (``ModelFamily.low_rank_mass``)."""
    import nutpie

    return nutpie.sample(compiled, draws=draws, tune=tune, chains=chains, cores=cores,
                         seed=seed, progress_bar=False, target_accept=target_accept,
                         save_warmup=False, blocking=False,
                         low_rank_modified_mass_matrix=low_rank)


def wait_nutpie(sampler: Any) -> az.InferenceData:
    """The InferenceData of a ``start_nutpie`` sampler once its chains are done; an
    interruption or error while waiting stops the chains and is raised."""
    try:
        return sampler.wait()
    except BaseException:
        cancel_nutpie(sampler)
        raise


def cancel_nutpie(sampler: Any) -> None:
    """Stop a ``start_nutpie`` sampler's chains (one already finished or failed: nothing)."""
    with contextlib.suppress(Exception):  # a cancel is best effort: the caller's error counts
        sampler.cancel()


def draw_nutpie(compiled: Any, **settings: Any) -> az.InferenceData:
    """``start_nutpie`` and wait for it (its keyword settings)."""
    return wait_nutpie(start_nutpie(compiled, **settings))


def draw_pymc(model: pm.Model, *, draws: int, tune: int, chains: int, cores: int, seed: int,
              target_accept: float) -> az.InferenceData:
    """PyMC's default NUTS (``pm.sample``) on ``model``."""
    with model:
        return pm.sample(draws=draws, tune=tune, chains=chains, cores=cores, random_seed=seed,
                         progressbar=False, compute_convergence_checks=False,
                         target_accept=target_accept)


def posterior_predictive(model: pm.Model, fit: Fit, seed: int = 0) -> az.InferenceData:
    """Replicated observations ``y`` for every posterior draw (group ``posterior_predictive``;
    ordinal ratings on the model's 0..6 scale, Gaussian values as they are)."""
    quiet = logging.getLogger("pymc")
    level = quiet.level
    quiet.setLevel(logging.WARNING)  # not "Sampling: [y]" on every call
    try:
        with model:
            return pm.sample_posterior_predictive(fit.idata, random_seed=seed,
                                                  progressbar=False, extend_inferencedata=False)
    finally:
        quiet.setLevel(level)


def loo(idata: az.InferenceData) -> az.ELPDData:
    """Pointwise PSIS-LOO of a fit holding the log-likelihood: ArviZ's ``az.loo`` for every
    rating at once (analysis.psis; Pareto-k notes are not printed: ``pareto_k`` carries
    them)."""
    return psis.loo(idata)


def compare(elpds: Mapping[str, az.ELPDData]) -> list[dict[str, Any]]:
    """PSIS-LOO comparison of pointwise LOO results (``loo``) of models of the same ratings."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = az.compare(dict(elpds), ic="loo")
    return [{"model": str(name), "rank": int(r["rank"]), "elpd_loo": float(r["elpd_loo"]),
             "se": float(r["se"]), "elpd_diff": float(r["elpd_diff"]), "dse": float(r["dse"]),
             "weight": float(r["weight"])} for name, r in table.iterrows()]

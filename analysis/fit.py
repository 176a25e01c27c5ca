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

from analysis.convergence import convergence
from analysis.nutpie_cache import compile_model

Backend = Literal["nutpie", "pymc"]
BACKENDS: tuple[str, ...] = ("nutpie", "pymc")
DEFAULT_TUNE = {"nutpie": 300, "pymc": 1000}
# Draws per chain of a first try (PyMC's own default, nutpie's too). Left to its default, the
# number of draws is adaptive: a fit that misses R-hat <= 1.01 or bulk / tail ESS >= 400 draws
# again with more (``sample_to_target`` at ``DEFAULT_ESS_TARGET``), so 1,000 serves the fits
# that need no more and the others get what they need, where a fixed number leaves them
# short. A ``draws`` given is a single run of that many unless an ESS target is given too
# (``resolve``). How often a first try falls short on studies of the reference size, and
# what it costs: docs/benchmarks.md, "analyze, adaptive draws".
DEFAULT_DRAWS = {"nutpie": 1000, "pymc": 1000}
# NUTS step-size adaptation target for both backends: 0.95 rather than the usual 0.8 removes
# the divergences left near a flat smooth (analysis.models, "Parameterization").
DEFAULT_TARGET_ACCEPT = 0.95
RHAT_MAX = 1.01
ESS_MIN = 400
DEFAULT_ESS_TARGET = ESS_MIN  # the ESS a fit left to its default draws toward
# With an ESS target (``sample_to_target``), a fit draws at most this many times its first
# number of draws.
TARGET_MAX_FACTOR = 4


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
    is given (a number of draws asked for is what is drawn); 0 turns it off."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; expected one of {', '.join(BACKENDS)}")
    if ess_target is not None and ess_target < 0:
        raise ValueError(f"the ESS target must be at least 1 (0: none), got {ess_target}")
    if ess_target is None:
        ess_target = DEFAULT_ESS_TARGET if draws is None else None
    return {"draws": DEFAULT_DRAWS[backend] if draws is None else draws,
            "tune": DEFAULT_TUNE[backend] if tune is None else tune,
            "target_accept": DEFAULT_TARGET_ACCEPT if target_accept is None else target_accept,
            "ess_target": ess_target or None}


def free_names(model: pm.Model) -> list[str]:
    return [v.name for v in model.free_RVs]


def diagnose(idata: az.InferenceData, names: list[str]) -> Diagnostics:
    """The extremes over every scalar of the free parameters ``names``: max R-hat, min bulk
    and tail ESS (analysis.convergence, all parameters at once), and the divergences."""
    post = idata.posterior
    draws = np.concatenate([np.asarray(post[v].values, dtype=float).reshape(
        post.sizes["chain"], post.sizes["draw"], -1) for v in names], axis=2)
    rhat, ess_b, ess_t = convergence(draws.transpose(2, 0, 1))

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
    )


def more_draws(draws: int, first: int, diag: Diagnostics, ess_target: int) -> int | None:
    """The draws per chain of the next try toward ``ess_target``, or None: the fit at
    ``draws`` meets it (R-hat <= RHAT_MAX, bulk and tail ESS >= ``ess_target``) or is at the
    cap (``TARGET_MAX_FACTOR`` x ``first``). ESS grows about linearly with the draws, so an
    ESS short of the target asks for draws x 1.2 x target / ESS; an R-hat above RHAT_MAX,
    whose excess shrinks about like 1 / draws, for at least twice the draws:

        next = min(cap, max(ceil(1.2 draws target / min ESS), 2 draws if R-hat misses))
    """
    cap = TARGET_MAX_FACTOR * first
    ess = min(diag.min_ess_bulk, diag.min_ess_tail)
    ess_short = not ess >= ess_target
    rhat_short = not diag.max_rhat <= RHAT_MAX
    if not (ess_short or rhat_short) or draws >= cap:
        return None
    wanted = draws
    if ess_short:
        wanted = int(np.ceil(1.2 * draws * ess_target / ess)) if ess > 0 else cap
    if rhat_short:
        wanted = max(wanted, 2 * draws)
    return min(cap, max(wanted, draws + 1))


def sample_to_target(draw: Callable[[int], az.InferenceData], names: list[str], draws: int,
                     ess_target: int | None = None) -> tuple[az.InferenceData, Diagnostics]:
    """``draw(draws)`` and its diagnostics over the free parameters ``names``; with an
    ``ess_target``, ``draws`` is the first try and the posterior is drawn again with more
    draws per chain (``more_draws``) until it is met or the cap reached (each try a fresh
    run: the last one is returned). Without one, a single run, as before."""
    idata = draw(draws)
    diag = diagnose(idata, names)
    current = draws
    while ess_target is not None:
        nxt = more_draws(current, draws, diag, ess_target)
        if nxt is None:
            break
        current = nxt
        idata = draw(current)
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
) -> Fit:
    """Draw from the posterior of ``model``; ``seconds`` counts compilation too (and every
    try toward an ``ess_target``: ``sample_to_target``).

    ``draws`` and ``tune`` default to each backend's own (``DEFAULT_DRAWS``, ``DEFAULT_TUNE``:
    nutpie's adaptation needs fewer tuning steps), ``target_accept`` to
    ``DEFAULT_TARGET_ACCEPT``, ``ess_target`` as ``resolve`` says."""
    start = time.perf_counter()
    resolved = resolve(backend, draws, tune, target_accept, ess_target)
    settings = {"tune": resolved["tune"], "target_accept": resolved["target_accept"],
                "chains": chains, "cores": cores, "seed": seed}
    if backend == "nutpie":
        compiled = compile_model(model)

        def draw(n: int) -> az.InferenceData:
            return draw_nutpie(compiled, draws=n, **settings)
    else:
        def draw(n: int) -> az.InferenceData:
            return draw_pymc(model, draws=n, **settings)
    idata, diag = sample_to_target(draw, free_names(model), resolved["draws"],
                                   resolved["ess_target"])
    seconds = time.perf_counter() - start
    if log_likelihood:
        add_log_likelihood(model, idata)
    problems = diag.problems()
    if problems:
        warnings.warn("sampling diagnostics: " + "; ".join(problems), SamplingWarning,
                      stacklevel=2)
    return Fit(idata, backend, seconds, diag)


def add_log_likelihood(model: pm.Model, idata: az.InferenceData) -> None:
    """Add the pointwise log-likelihood of every draw to ``idata`` (group log_likelihood)."""
    with model:
        pm.compute_log_likelihood(idata, progressbar=False)


def start_nutpie(compiled: Any, *, draws: int, tune: int, chains: int, cores: int, seed: int,
                 target_accept: float) -> Any:
    """nutpie's NUTS on a compiled model (``nutpie.compile_pymc_model``; tuning draws are
    not kept, as in PyMC), running in nutpie's own threads: ``wait_nutpie`` of the returned
    sampler gives the InferenceData. The caller's thread is free meanwhile (the chains call
    the numba-compiled log-density without Python)."""
    import nutpie

    return nutpie.sample(compiled, draws=draws, tune=tune, chains=chains, cores=cores,
                         seed=seed, progress_bar=False, target_accept=target_accept,
                         save_warmup=False, blocking=False)


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
    """Pointwise PSIS-LOO of a fit holding the log-likelihood (ArviZ's Pareto-k notes are
    not printed: ``pareto_k`` carries them)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return az.loo(idata, pointwise=True)


def compare(elpds: Mapping[str, az.ELPDData]) -> list[dict[str, Any]]:
    """PSIS-LOO comparison of pointwise LOO results (``loo``) of models of the same ratings."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = az.compare(dict(elpds), ic="loo")
    return [{"model": str(name), "rank": int(r["rank"]), "elpd_loo": float(r["elpd_loo"]),
             "se": float(r["se"]), "elpd_diff": float(r["elpd_diff"]), "dse": float(r["dse"]),
             "weight": float(r["weight"])} for name, r in table.iterrows()]

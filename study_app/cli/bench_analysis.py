"""`recourse-study benchmark analysis`: the ordinal model's fit time, single and amortized over
studies fitted with the model compiled once, against PyMC's default NUTS."""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer

from study_app.cli.apps import benchmark_app
from study_app.cli.choices import Backend, Outcome
from study_app.cli.output import emit, err, json_file_option, json_option

_PARTICIPANTS = typer.Option(362, min=2, help="Simulated participants.")
_PLANS = typer.Option(5, min=2, help="Plans (ratings) per participant.")
_OUTCOME = typer.Option("action", help="The rating the model fits.")
_BACKEND = typer.Option("nutpie",
                                help="The backend to time against PyMC's NUTS.")
_DRAWS = typer.Option(
    None, min=50, help="Draws per chain of --backend (default: its own, "
    "analysis.fit.DEFAULT_DRAWS: 1000, a single run).")
_TUNE = typer.Option(
    None, min=50, help="Tuning steps per chain of --backend (default: its own, nutpie 300).")
_BASELINE_DRAWS = typer.Option(
    None, min=50, help="Draws per chain of PyMC's NUTS (default: PyMC's own, 1000).")
_BASELINE_TUNE = typer.Option(
    None, min=50, help="Tuning steps per chain of PyMC's NUTS (default: PyMC's own, 1000).")
_CHAINS = typer.Option(4, min=1, help="Chains (both backends).")
_TARGET_ACCEPT = typer.Option(
    None, min=0.5, max=0.999,
    help="NUTS step-size target for both backends (default: "
         "analysis.fit.DEFAULT_TARGET_ACCEPT, 0.95).")
_SEED = typer.Option(0, help="Data and sampling seed.")
_BASELINE = typer.Option(True, help="Also time PyMC's default NUTS (the baseline).")
_CORES = typer.Option(
    2, min=1, help="Processes the chains run in (both backends). 1: every chain in this "
    "process, one after another, and the CPU seconds of each fit are reported too.")
_REFITS = typer.Option(
    3, min=0, help="Further simulated studies of the same size fitted with the model "
    "compiled once (analysis.refit): the amortized per-fit time. 0: none.")


@benchmark_app.command("analysis")
def analysis(
    participants: int = _PARTICIPANTS,
    plans: int = _PLANS,
    outcome: Outcome = _OUTCOME,
    backend: Backend = _BACKEND,
    draws: int | None = _DRAWS,
    tune: int | None = _TUNE,
    baseline_draws: int | None = _BASELINE_DRAWS,
    baseline_tune: int | None = _BASELINE_TUNE,
    chains: int = _CHAINS,
    target_accept: float | None = _TARGET_ACCEPT,
    seed: int = _SEED,
    baseline: bool = _BASELINE,
    cores: int = _CORES,
    refits: int = _REFITS,
    json_out: bool = json_option(),
    json_file: Path | None = json_file_option(),
) -> None:
    """Time the analysis backend against PyMC's NUTS.

    Simulate a study of the reference size (engine.synthetic.rating_model, reference
    behaviour), then fit the full ordinal model (smooth of L1 over the profile, satisfaction,
    violation, arms, participant intercepts and slopes) with ``--backend`` and with PyMC's
    default NUTS, in the same run. Both use the same chains, target_accept (0.95 — PyMC's own
    0.8 leaves divergences on this model) and ``--cores``; draws and tuning steps are each
    backend's own defaults (analysis.fit: nutpie 1,000 draws after 300 tuning steps, PyMC 1,000
    after 1,000), each a single run (no ESS target: the same work every time, so the times
    compare); ``converged`` says whether they met R-hat <= 1.01 and bulk ESS >= 400.

    The backend's model is compiled once (analysis.refit, as ``power`` does): its first fit
    (compilation included) is the single fit, timed against PyMC's; then ``--refits`` more
    studies of the same size (seeds seed+1, ...) are fitted on the compiled model, and their
    mean sampling time is the amortized seconds per fit. Each speedup divides PyMC's time by
    the backend's; ``converged`` says whether every fit of the backend (and the baseline)
    reached R-hat <= 1.01 and bulk ESS >= 400.

    Wall seconds depend on what else runs on the machine, and PyMC's multiprocess sampler
    (``--cores`` > 1) trades every draw with its parent process, so beside other work it waits
    for the scheduler more than it computes. With ``--cores 1`` both backends sample in this
    process, and the CPU seconds of each fit (user + system, all threads), which do not depend
    on the load, give the ``cpu_*`` figures and speedups.

    JSON: {participants, plans, outcome, draws, tune (--backend's, resolved), baseline_draws,
    baseline_tune, chains, target_accept, blas (the BLAS link flags PyTensor found, "" for
    none: PyMC's sampler is then much slower), backend, seconds (first fit, compilation
    included), compile_seconds, max_rhat, min_ess_bulk, min_ess_tail, divergences, refits,
    amortized_seconds_per_fit (null without refits), amortized_fits [{seed, seconds, max_rhat,
    min_ess_bulk, divergences}], amortized_max_rhat, amortized_min_ess_bulk, converged,
    baseline_backend ("pymc"), baseline_seconds, baseline_max_rhat, baseline_min_ess_bulk,
    baseline_min_ess_tail, baseline_divergences, baseline_converged, speedup (single fit),
    amortized_speedup, cores, and with --cores 1: cpu_seconds (first fit, compilation
    included), amortized_cpu_seconds_per_fit, baseline_cpu_seconds, cpu_speedup,
    amortized_cpu_speedup (null otherwise)}.
    """
    from analysis.fit import resolve

    own = resolve(backend, draws, tune, target_accept)
    pymc_settings = resolve("pymc", baseline_draws, baseline_tune, target_accept)
    target_accept = own["target_accept"]
    doc: dict = {"participants": participants, "plans": plans, "outcome": outcome,
                 "draws": own["draws"], "tune": own["tune"],
                 "baseline_draws": pymc_settings["draws"],
                 "baseline_tune": pymc_settings["tune"], "chains": chains,
                 "target_accept": target_accept, "blas": _blas(), "backend": backend,
                 "cores": cores}
    study = _Studies(participants, plans, outcome)
    _backend_fits(doc, study, own, refits, seed)
    if baseline:
        _baseline(doc, study, pymc_settings, seed)
    if cores != 1:  # other processes' CPU is not this process's to count
        for key in ("cpu_seconds", "amortized_cpu_seconds_per_fit"):
            doc[key] = None
        for f in doc["amortized_fits"]:
            f["cpu_seconds"] = None
    emit(doc, json_out=json_out, json_file=json_file)


@dataclass(frozen=True)
class _Studies:
    """Simulated studies of one size and outcome, by seed."""

    participants: int
    plans: int
    outcome: str

    def __call__(self, seed: int) -> Any:
        from analysis.models import prepare
        from analysis.simdata import simulate_ratings

        return prepare(simulate_ratings(self.participants, self.plans, seed=seed),
                       self.outcome, "l1_profile")


def _ok(d: Any) -> bool:
    from analysis.fit import ESS_MIN, RHAT_MAX

    return bool(d.max_rhat <= RHAT_MAX and d.min_ess_bulk >= ESS_MIN)


def _backend_fits(doc: dict[str, Any], study: _Studies, own: dict[str, Any], refits: int,
                  seed: int) -> None:
    """The backend's first fit (compilation included) and ``refits`` more on the model
    compiled once, into ``doc``: the first fit's figures, the refits' and their mean."""
    from analysis.refit import Refitter

    backend, cores = doc["backend"], doc["cores"]
    refitter = Refitter("ordinal", backend, own["draws"], own["tune"], doc["chains"],
                        cores=cores, target_accept=doc["target_accept"])
    fits = []
    for i in range(1 + refits):
        err.print(f"fitting with {backend} ({'compiling, then ' if i == 0 else ''}study "
                  f"{i + 1} of {1 + refits}) ...")
        data = study(seed + i)
        cpu = _cpu()
        fit = refitter.fit(data, seed=seed + i)
        cpu = round(_cpu() - cpu, 2)
        d = fit.diagnostics
        fits.append({"seed": seed + i, "seconds": round(fit.seconds, 2), "cpu_seconds": cpu,
                     "max_rhat": d.max_rhat, "min_ess_bulk": d.min_ess_bulk,
                     "divergences": d.divergences,
                     "compile_seconds": round(fit.compile_seconds, 2), "ok": _ok(d)})
        err.print(f"  {fit.compile_seconds + fit.seconds:.1f} s (compilation "
                  f"{fit.compile_seconds:.1f} s), max R-hat {d.max_rhat:.3f}, min bulk ESS "
                  f"{d.min_ess_bulk:.0f}, {d.divergences} divergences")
        if i == 0:
            doc.update({"seconds": round(fit.compile_seconds + fit.seconds, 2),
                        "cpu_seconds": cpu,
                        "compile_seconds": round(fit.compile_seconds, 2),
                        "max_rhat": d.max_rhat, "min_ess_bulk": d.min_ess_bulk,
                        "min_ess_tail": d.min_ess_tail, "divergences": d.divergences})
    later = fits[1:]
    doc.update({
        "refits": refits,
        "amortized_seconds_per_fit": _mean(f["seconds"] for f in later),
        "amortized_cpu_seconds_per_fit": _mean(f["cpu_seconds"] for f in later),
        "amortized_fits": [{k: v for k, v in f.items() if k not in ("ok", "compile_seconds")}
                           for f in later],
        "amortized_max_rhat": max((f["max_rhat"] for f in later), default=None),
        "amortized_min_ess_bulk": min((f["min_ess_bulk"] for f in later), default=None),
        "converged": all(f["ok"] for f in fits)})


def _baseline(doc: dict[str, Any], study: _Studies, pymc_settings: dict[str, Any],
              seed: int) -> None:
    """PyMC's default NUTS on the first study, and the speedups against it, into ``doc``."""
    from analysis.fit import SamplingWarning, sample
    from analysis.models import build_model

    cores = doc["cores"]
    err.print("fitting with pymc (PyMC's default NUTS, the baseline) ...")
    model = build_model(study(seed))
    cpu = _cpu()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplingWarning)
        fit = sample(model, backend="pymc", draws=pymc_settings["draws"],
                     tune=pymc_settings["tune"], chains=doc["chains"], cores=cores, seed=seed,
                     target_accept=doc["target_accept"])
    cpu = round(_cpu() - cpu, 2)
    d = fit.diagnostics
    base = round(fit.seconds, 2)  # speedups from the reported figures: the JSON adds up
    doc.update({"baseline_backend": "pymc", "baseline_seconds": base,
                "baseline_max_rhat": d.max_rhat, "baseline_min_ess_bulk": d.min_ess_bulk,
                "baseline_min_ess_tail": d.min_ess_tail, "baseline_divergences": d.divergences,
                "baseline_converged": _ok(d),
                "speedup": _ratio(base, doc["seconds"]),
                "amortized_speedup": _ratio(base, doc["amortized_seconds_per_fit"]),
                "baseline_cpu_seconds": cpu if cores == 1 else None,
                "cpu_speedup": _ratio(cpu, doc["cpu_seconds"]) if cores == 1 else None,
                "amortized_cpu_speedup": _ratio(cpu, doc["amortized_cpu_seconds_per_fit"])
                if cores == 1 else None})
    err.print(f"  pymc: {fit.seconds:.1f} s, max R-hat {d.max_rhat:.3f}, min bulk ESS "
              f"{d.min_ess_bulk:.0f}, {d.divergences} divergences")
    err.print(f"speedup {doc['speedup']}x (single fit, compilation included), "
              f"{doc['amortized_speedup']}x amortized over PyMC's default NUTS")
    if cores == 1:
        err.print(f"CPU seconds: speedup {doc['cpu_speedup']}x single, "
                  f"{doc['amortized_cpu_speedup']}x amortized")


def _cpu() -> float:
    """User + system CPU seconds of this process (all threads) and its waited-for children."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _mean(values) -> float | None:
    values = list(values)
    return round(sum(values) / len(values), 2) if values else None


def _ratio(num: float, den: float | None) -> float | None:
    return round(num / den, 2) if den else None


def _blas() -> str:
    import pytensor

    return str(pytensor.config.blas__ldflags)

"""`recourse-study benchmark analysis`: the ordinal model's fit time, chosen backend vs PyMC."""

from __future__ import annotations

import warnings
from pathlib import Path

import typer

from study_app.cli.apps import benchmark_app
from study_app.cli.output import emit, err, fail, json_file_option, json_option


@benchmark_app.command("analysis")
def analysis(
    participants: int = typer.Option(362, min=2, help="Simulated participants."),
    plans: int = typer.Option(5, min=2, help="Plans (ratings) per participant."),
    outcome: str = typer.Option("action", help="acceptance | action."),
    backend: str = typer.Option("nutpie", help="The backend to time against PyMC's NUTS."),
    draws: int = typer.Option(1000, min=50, help="Draws per chain (both backends)."),
    tune: int | None = typer.Option(
        None, min=50, help="Tuning steps per chain (default: the backend's own, nutpie 300, PyMC 1000)."),
    chains: int = typer.Option(4, min=1, help="Chains (both backends)."),
    target_accept: float | None = typer.Option(
        None, min=0.5, max=0.999,
        help="NUTS step-size target for both backends (default: "
             "analysis.fit.DEFAULT_TARGET_ACCEPT, 0.95)."),
    seed: int = typer.Option(0, help="Data and sampling seed."),
    baseline: bool = typer.Option(True, help="Also time PyMC's default NUTS (the baseline)."),
    json_out: bool = json_option(),
    json_file: Path | None = json_file_option(),
) -> None:
    """Simulate a study of the reference size (engine.synthetic.rating_model, reference behaviour),
    then fit the full ordinal model (smooth of L1 over the profile, satisfaction, violation,
    arms, participant intercepts and slopes) once with ``--backend`` and once with PyMC's
    default NUTS, in the same run; compilation counts. Both use the same NUTS settings
    (draws, chains, target_accept 0.95 — PyMC's own 0.8 leaves divergences on this model);
    only the tuning length is each backend's default.

    JSON: {participants, plans, outcome, draws, tune, chains, target_accept, blas (the BLAS
    link flags PyTensor found, "" for none: PyMC's sampler is then much slower), backend, seconds, max_rhat,
    min_ess_bulk, min_ess_tail, divergences, baseline_backend ("pymc"), baseline_seconds,
    baseline_max_rhat, baseline_min_ess_bulk, baseline_divergences, speedup}.
    """
    from analysis.fit import DEFAULT_TARGET_ACCEPT, SamplingWarning, sample
    from analysis.models import build_model, prepare
    from analysis.simdata import simulate_ratings

    if outcome not in ("acceptance", "action"):
        fail(f"--outcome must be acceptance or action, got {outcome!r}", 2)
    if backend not in ("nutpie", "pymc"):
        fail(f"--backend must be nutpie or pymc, got {backend!r}", 2)
    if target_accept is None:
        target_accept = DEFAULT_TARGET_ACCEPT
    ratings = simulate_ratings(participants, plans, seed=seed)
    data = prepare(ratings, outcome, "l1_profile")
    doc: dict = {"participants": participants, "plans": plans, "outcome": outcome,
                 "draws": draws, "tune": tune or "backend default", "chains": chains,
                 "target_accept": target_accept, "blas": _blas()}
    runs = [("", backend)] + ([("baseline_", "pymc")] if baseline else [])
    for prefix, name in runs:
        err.print(f"fitting with {name} ...")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SamplingWarning)
            fit = sample(build_model(data), backend=name, draws=draws, tune=tune,  # type: ignore[arg-type]
                         chains=chains, seed=seed, target_accept=target_accept)
        d = fit.diagnostics
        doc.update({f"{prefix}backend": name, f"{prefix}seconds": round(fit.seconds, 2),
                    f"{prefix}max_rhat": d.max_rhat, f"{prefix}min_ess_bulk": d.min_ess_bulk,
                    f"{prefix}min_ess_tail": d.min_ess_tail, f"{prefix}divergences": d.divergences})
        err.print(f"  {name}: {fit.seconds:.1f} s, max R-hat {d.max_rhat:.3f}, "
                       f"min bulk ESS {d.min_ess_bulk:.0f}, {d.divergences} divergences")
    if baseline:
        doc["speedup"] = round(doc["baseline_seconds"] / doc["seconds"], 2)
        err.print(f"speedup {doc['speedup']}x over PyMC's default NUTS")
    emit(doc, json_out=json_out, json_file=json_file)


def _blas() -> str:
    import pytensor

    return str(pytensor.config.blas__ldflags)

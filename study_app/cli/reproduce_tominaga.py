"""`recourse-study reproduce tominaga`: the reference study's Table S2, ours beside theirs.

A *recovery check of the pipeline*, not a replication: the authors' data is not public, so
the ratings are simulated from a truth built from the paper's findings, and the findings
holding shows that simulation, exclusion and mgcv's fits recover what was put in.

Simulates the paper's design (``tominaga-replication``: 362 participants, five pool plans
each) with a synthetic truth (``TRUTHS``): ``shipped``, the protocol's ``simulation`` block,
encodes the paper's findings (mean acceptance flat in distance, mean action falling steeply
over the smallest distances, participant intercepts and slopes; both curves are population
means, ``curve_of: population``); ``sloped``, the negative control, gives acceptance the
falling curve finding 1 denies, so finding 1 must fail on it. Then applies the paper's
exclusion (ratings with an item marked impossible), fits the four GAMMs with mgcv
(analysis.mgcv) and checks the paper's three findings on our table (analysis.table_s2).
``scripts/tominaga_seeds.py`` runs it over seeds.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from protocols.definition.schema import Protocol
from protocols.definition.simulation import OutcomeOverrides
from study_app.cli.output import err, fail

PROTOCOL = "tominaga-replication"
KIND = ("recovery check of the pipeline on a synthetic truth built from the paper's findings "
        "(the authors' data is not public): findings that hold show the pipeline recovers "
        "what was put in, not that the paper replicates")
# truth -> (what it is, the acceptance overrides it puts over the protocol's simulation block)
TRUTHS: dict[str, tuple[str, dict[str, float]]] = {
    "shipped": ("the protocol's simulation block: the paper's findings", {}),
    "sloped": ("negative control: mean acceptance falls from 4.5 at distance 0 to 2.5 far "
               "away (halfway at L1 = 0.3), so finding 1 must fail",
               {"at_zero": 4.5, "at_far": 2.5, "half_distance": 0.3}),
}


def truth_protocol(protocol: Protocol, truth: str) -> Protocol:
    """``protocol`` with the acceptance curve of ``truth`` (``TRUTHS``; ValueError naming
    the truths for another name)."""
    if truth not in TRUTHS:
        raise ValueError(f"truth must be one of {', '.join(TRUTHS)}, got {truth!r}")
    changes = TRUTHS[truth][1]
    if not changes:
        return protocol
    ratings = protocol.simulation.ratings
    acceptance = OutcomeOverrides(**{**ratings.acceptance.model_dump(exclude_none=True),
                                     **changes})
    simulation = protocol.simulation.model_copy(
        update={"ratings": ratings.model_copy(update={"acceptance": acceptance})})
    return protocol.model_copy(update={"simulation": simulation})
TITLE = ("Tominaga et al., Reassessing Evaluation Functions in Algorithmic Recourse: "
         "An Empirical Study from a Human-Centered Perspective")


def run(participants: int = 362, seed: int = 1, method: str | None = None,
        db: Path | None = None, truth: str = "shipped") -> dict[str, Any]:
    """Simulate from ``truth``, exclude, fit, compare (module docstring); the JSON document
    of ``reproduce tominaga --json``. ``method``: mgcv's, analysis.table_s2.PAPER_METHOD by
    default."""
    from analysis import table_s2
    from analysis.mgcv import GammSpec, MgcvError, MgcvUnavailable, fit_gamms, r_status
    from analysis.pipeline import distance_family
    from data.store import Store
    from protocols.definition.schema import load_protocol
    from study_app.exclusion_rules import study_rules
    from study_app.simulator import simulate
    from study_app.study_analysis import protocol_distance

    method = method or table_s2.PAPER_METHOD
    status = r_status()
    if not status["available"]:
        fail(f"reproduce tominaga needs R with mgcv: {status['reason']}", 1)
    started = time.perf_counter()
    protocol = truth_protocol(load_protocol(PROTOCOL), truth)
    with tempfile.TemporaryDirectory(prefix="recourse-tominaga-") as tmp:
        path = db or Path(tmp) / "tominaga.duckdb"
        _note(f"simulating {participants} participants of {PROTOCOL} (seed {seed}), truth "
              f"{truth}: {TRUTHS[truth][0]}")
        simulated = simulate(protocol, path, participants, seed=seed)
        with Store(path, read_only=True) as store:
            ratings = store.ratings_long(PROTOCOL)
            settings = store.studies().set_index("study_id").loc[PROTOCOL].to_dict()
    simulate_seconds = time.perf_counter() - started
    kept, exclusions, _ = study_rules(ratings, settings)
    l0, l1 = distance_family(protocol_distance(settings))
    specs = [GammSpec(o, d) for o in ("acceptance", "action") for d in (l0, l1)]
    _note(f"fitting the four GAMMs with mgcv on {len(kept)} of {len(ratings)} ratings "
          "(this takes minutes)")
    fit_started = time.perf_counter()
    try:
        fitted = fit_gamms(kept, specs, method=method)
    except (MgcvUnavailable, MgcvError) as e:
        fail(f"mgcv failed: {e}", 1)
    checks = table_s2.findings(fitted["models"])
    return {
        "target": "tominaga", "title": TITLE, "table": "Table S2", "kind": KIND,
        "config": {"protocol": PROTOCOL, "participants": participants, "seed": seed,
                   "method": method, "distances": [l0, l1], "truth": truth,
                   "truth_is": TRUTHS[truth][0]},
        "paper": {"n": table_s2.PAPER_N, "mgcv": "1.9-0"},
        "ours": {"participants": simulated["participants"], "evaluations": len(ratings),
                 "excluded": len(ratings) - len(kept), "analysed": len(kept),
                 "participants_short": simulated.get("participants_short"),
                 "r_version": fitted.get("r_version"), "mgcv": fitted.get("mgcv_version")},
        "exclusions": {k: v for k, v in exclusions.items() if k != "excluded"},
        "table_s2": table_s2.rows(fitted["models"]),
        "beside_paper": table_s2.beside_paper(fitted["models"]),
        "findings": checks,
        "summary": {"findings": len(checks),
                    "hold": sum(1 for c in checks if c["holds"])},
        "models": fitted["models"],
        "seconds": time.perf_counter() - started,
        "seconds_simulate": simulate_seconds,
        "seconds_mgcv": time.perf_counter() - fit_started,
    }


def print_doc(out: Console, doc: dict[str, Any]) -> None:
    """Table S2 ours beside the paper's (EDF, F, p per model and term), then the findings."""
    table = Table(title=f"{doc['title']}: Table S2, ours (a recovery check on a synthetic "
                  f"truth, {doc['config']['truth']}) beside the paper's "
                  f"({doc['ours']['analysed']} of {doc['ours']['evaluations']} ratings "
                  f"analysed; paper 1,738 of 1,810)", box=box.SIMPLE_HEAD)
    for col in ("model", "outcome", "variable"):
        table.add_column(col)
    stats = ("coef", "se", "t", "edf", "F", "p", "aic")
    for stat in stats:
        table.add_column(f"{stat} paper / ours", justify="right", no_wrap=True)
    cells: dict[tuple[str, str], dict[str, Any]] = {}
    for c in doc["beside_paper"]:
        cells.setdefault((c["model"], c["variable"]), {"outcome": c["outcome"]})[
            c["statistic"]] = (c["paper"], c["ours"])
    for (model, var), row in cells.items():
        table.add_row(model, row["outcome"], var, *(_pair(row.get(s)) for s in stats))
    out.print(table)
    for c in doc["findings"]:
        mark = {True: "[green]HOLDS[/green]", False: "[red]DOES NOT HOLD[/red]",
                None: "[yellow]NOT CHECKED[/yellow]"}[c["holds"]]
        err.print(f"{mark} finding {c['finding']}: {c['claim']} ({c['detail']})")
    s = doc["summary"]
    err.print(f"A {doc['kind']}. Truth {doc['config']['truth']}: {doc['config']['truth_is']}.")
    err.print(f"{s['hold']}/{s['findings']} of the paper's findings hold; "
              f"{doc['seconds']:.0f} s (simulation {doc['seconds_simulate']:.0f} s, mgcv "
              f"{doc['seconds_mgcv']:.0f} s)")


def _pair(cell: tuple[Any, Any] | None) -> str:
    if cell is None:
        return ""
    return f"{_fmt(cell[0])} / {_fmt(cell[1])}"


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    return v if isinstance(v, str) else f"{v:.2f}"


def _note(message: str) -> None:
    err.print(f"{time.strftime('%H:%M:%S')} tominaga: {message}", highlight=False)

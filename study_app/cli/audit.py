"""`recourse-study audit --protocol P --participants N`: the pre-launch stimulus report of a
protocol (study_app.audit), on stderr or as JSON, with an HTML page under --out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from study_app.cli.apps import app
from study_app.cli.choices import StudyDecisionModel
from study_app.cli.output import emit, err, fail, json_file_option, json_option


@app.command()
def audit(
    protocol: str = typer.Option(..., help="A shipped protocol id or a protocol YAML file."),
    participants: int = typer.Option(40, min=1, help="Synthetic participants to simulate."),
    seed: int | None = typer.Option(
        None, help="Seed of the synthetic participants (default: the protocol's simulation.seed)."),
    db: str | None = typer.Option(
        None, help="Keep the simulated study in this database (a DuckDB file or "
        "postgresql://...; default: a temporary DuckDB, deleted afterwards). An existing "
        "study there is continued, as `simulate` does."),
    out: Path | None = typer.Option(
        None, help="Folder for audit.json, audit.html and preview/ (the screenshots)."),
    screenshots: bool = typer.Option(
        True, help="With --out: photograph every page kind as the app draws it (as `preview` "
        "does; needs Debian's Chromium)."),
    decision_model: StudyDecisionModel | None = typer.Option(
        None, help="Override the protocol's decision model: trained | bayes | rule."),
    json_out: bool = json_option(),
    json_file: Path | None = json_file_option(),
) -> None:
    """Audit what a protocol's participants would be shown.

    Audit what a protocol's participants would be shown, before launch: simulate N
    participants and list, per arm, every plan-rule break (each rule of the plan rule set),
    question whose two options read the same, promised plan not delivered, participant-text
    problem (`validate --strict`), and the share of ratings the protocol's exclusions leave
    out, with a warning when two arms differ by more than 10 points.

    Exit status: 1 when there is an error-level finding (a rule break, a same-reading pair,
    a promise kept for fewer than 95% of an arm's participants, a text error), 0 otherwise
    (warnings only), 2 for bad input.

    --json prints: protocol, title, source, participants, seed, db (null: temporary),
    study_id, rules (the plan rules audited), promise_kept_min (95), arms [{arm, method,
    reached_plans, got_every_plan, promise_kept (%, null when nobody reached the plans),
    missing_plans, shortfalls [{reason, participants, missing, fallback}], plans, options,
    plans_broken {rule: n}, options_broken {rule: n}, same_readings, same_reading_examples
    [{participant_id, step, kind, options, changes [{label, current, suggested}]}],
    exclusions {arm, ratings, excluded, rate, participants, participants_excluded} or
    null}], exclusions {rules, by_arm, uneven, points, ratings_excluded}, text {errors,
    warnings: [{path, line, message, suggestions}]}, findings [{level (error | warning),
    kind (rule | same_reading | promise | exclusions | text), arm, message, ...}], errors,
    warnings, ok, seconds, and with --out: html, preview (the screenshots' index or null).
    """
    from data.store import StoreError
    from protocols.definition.schema import ProtocolError, load_protocol
    from protocols.definition.translation import TranslationError
    from protocols.running.resources import MethodUnavailableError
    from protocols.running.session import StudyMismatchError
    from study_app.audit import run_audit

    try:
        proto = load_protocol(protocol)
    except ProtocolError as e:
        fail(e, 2, keep_lines=True, json_out=json_out)
    try:
        with Progress(TextColumn("[bold]simulating {task.description}"), BarColumn(),
                      MofNCompleteColumn(), TimeElapsedColumn(), console=err,
                      transient=json_out) as progress:
            task = progress.add_task(proto.id, total=participants)
            report = run_audit(protocol, participants, seed=seed, db=db,
                               decision_model=decision_model,
                               progress=lambda done, total: progress.update(
                                   task, completed=done, total=total))
    except (StoreError, StudyMismatchError, MethodUnavailableError, FileNotFoundError,
            TranslationError) as e:
        fail(e, 2, json_out=json_out)
    if out is not None:
        _write(report, out, proto, decision_model if decision_model != "rule" else None,
               screenshots)
    emit(report, json_out=json_out, json_file=json_file, human=lambda: _print(report))
    if not report["ok"]:
        raise typer.Exit(1)


def _write(report: dict[str, Any], out: Path, proto: Any, decision_model: str | None,
           screenshots: bool) -> None:
    """audit.json, audit.html and, unless switched off, preview/ with the screenshots (a
    preview that cannot be taken here is said on stderr; the audit stands without it)."""
    from data.jsonio import write_json
    from study_app.audit_page import render
    from study_app.preview import PreviewError, collect_pages, write_preview

    out.mkdir(parents=True, exist_ok=True)
    shots: list[dict[str, Any]] = []
    report["preview"] = None
    if screenshots:
        try:
            err.print("photographing the pages as the app draws them", highlight=False)
            taken = write_preview(collect_pages(proto, decision_model=decision_model),
                                  out / "preview", proto.title)
            shots, report["preview"] = taken["pages"], "preview/index.html"
        except PreviewError as e:
            err.print(f"note: no screenshots: {e}", highlight=False, markup=False)
    report["html"] = "audit.html"
    (out / "audit.html").write_text(render(report, shots, "preview"), encoding="utf-8")
    write_json(out / "audit.json", report)


def _print(report: dict[str, Any]) -> None:
    """The findings, one per line, and the verdict, on stderr."""
    for f in report["findings"]:
        where = f"arm {f['arm']}: " if f["arm"] else ""
        err.print(f"{f['level']}: {f['kind']}: {where}{f['message']}", highlight=False,
                  markup=False)
    for a in report["arms"]:
        ex = a["exclusions"]
        kept = "-" if a["promise_kept"] is None else f"{a['promise_kept']:.1f}%"
        err.print(f"arm {a['arm']}: {a['plans']} plans, {a['options']} options, "
                  f"{a['same_readings']} same-reading pairs, every promised plan for "
                  f"{a['got_every_plan']} of {a['reached_plans']} ({kept}), "
                  + (f"{ex['excluded']} of {ex['ratings']} ratings excluded ({ex['rate']:.1f}%)"
                     if ex else "no ratings"), highlight=False, markup=False)
    err.print(f"{report['protocol']}: {report['errors']} error(s), {report['warnings']} "
              f"warning(s) from {report['participants']} simulated participants in "
              f"{report['seconds']:.0f} s" + (f" -> {report['html']}" if "html" in report
                                               else ""), highlight=False, markup=False)

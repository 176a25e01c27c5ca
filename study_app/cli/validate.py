"""`recourse-study validate FILE`: every problem of a protocol at once, or the resolved
protocol (page sequence, arms, every participant-visible text with defaults marked) and
warnings. Creates nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from study_app.cli.apps import app
from study_app.cli.output import emit, err, json_file_option, json_option, result_console


@app.command()
def validate(
    protocol: str = typer.Argument(..., help="A protocol YAML file or a shipped protocol id."),
    strict: bool = typer.Option(False, help="Exit 1 when there are warnings."),
    json_out: bool = json_option(),
    json_file: Path | None = json_file_option(),
) -> None:
    """Check a protocol and print it resolved.

    Check a protocol without running it: every problem at once (structural and across
    fields), each with its path, line and, for a near miss, what was probably meant; exit 2.
    A valid protocol is printed resolved: page sequence per arm, arms and their share,
    every text a participant reads (defaults marked), and warnings for suspicious choices.
    Nothing is created (no database, no artifact).

    --json prints: source, valid, errors and warnings (each path, line, message,
    suggestions), resolved (null when invalid: id, title, scenario, seed, assignment, arms
    [id, method, options, personalized, cost_profile, source, base, interactive, share,
    plans], page_sequence {arm: [page ids]}, plans, exclusions, texts [path, text,
    default], defaults [paths left to their default], fingerprint, plan_rules [feature,
    direction, bounds, from_protocol]: per item a plan may change, the direction and
    plausible-change bounds every method obeys).
    """
    from protocols.definition.review import review

    result = review(protocol)
    doc = result.as_dict()
    emit(doc, json_out=json_out, json_file=json_file,
         human=lambda: _print(doc, result_console(json_out)))
    if not result.valid:
        n = len(result.errors)
        err.print(f"error: {result.source}: {n} problem{'s' * (n != 1)} in the protocol",
                  highlight=False, markup=False)
        raise typer.Exit(2)
    if strict and result.warnings:
        raise typer.Exit(1)


def _where(f: dict[str, Any]) -> str:
    return f["path"] + (f" (line {f['line']})" if f["line"] is not None else "")


def _print(doc: dict[str, Any], out: Any) -> None:
    if not doc["valid"]:
        for f in doc["errors"]:
            err.print(f"  - {_where(f)}: {f['message']}", highlight=False, markup=False)
        return
    r = doc["resolved"]
    def p(*args: Any, **kw: Any) -> None:
        out.print(*args, soft_wrap=True, **kw)

    p(f"[bold]{r['title']}[/bold] ({r['id']}), scenario {r['scenario']}, seed {r['seed']}: "
      "valid", highlight=False)
    p(f"\n[bold]Arms[/bold] (assignment: {r['assignment']})", highlight=False)
    for a in r["arms"]:
        base = f", base {a['base']}" if a["base"] else ""
        p(f"  {a['id']}: {a['method']} {a['options'] or ''}{base}, "
          f"{'personalized' if a['personalized'] else 'not personalized'}, cost "
          f"{a['cost_profile']}, {a['plans']} plans, share {a['share']:.0%}",
          highlight=False, markup=False)
    p("\n[bold]Page sequence[/bold]", highlight=False)
    for arm, ids in r["page_sequence"].items():
        p(f"  {arm}: {' > '.join(ids)}", highlight=False, markup=False)
    p("\n[bold]Plan rules[/bold] (per item a plan may change)", highlight=False)
    for rule in r.get("plan_rules", []):
        own = " (protocol)" if rule["from_protocol"] else ""
        p(f"  {rule['feature']}: {rule['direction']}; {rule['bounds']}{own}", highlight=False,
          markup=False)
    p("\n[bold]What participants read[/bold] ([dim](default)[/dim] = filled in by the "
      "platform)", highlight=False)
    for t in r["texts"]:
        mark = " (default)" if t["default"] else ""
        p(f"  {t['path']}{mark}: {' '.join(t['text'].split())}", highlight=False, markup=False)
    if doc["warnings"]:
        err.print(f"\n{len(doc['warnings'])} warning(s):", highlight=False)
        for f in doc["warnings"]:
            err.print(f"  - {_where(f)}: {f['message']}", highlight=False, markup=False)

"""The pre-launch stimulus audit: what N simulated participants of a protocol were shown, and
what a researcher should fix before people see it (``recourse-study audit``).

N synthetic participants walk the protocol (study_app.simulator: the pages people get, in a
throw-away DuckDB unless a database is given), and the stored study is read back per arm:

- **rule breaks**: shown plans and compared options breaking a plan rule, per rule of
  ``engine.recourse.plan_rules.RULES`` (protocols.running.plan_audit.audit); every rule
  the rule set holds is audited, the plausible-change bounds among them;
- **same-reading pairs**: two options of one question whose every shown value is equal
  (``plan_audit.same_readings``: the rows the page draws), so the pick says nothing;
- **promises**: the share of the arm's participants who reached the plans and got every
  plan the protocol promises (``data.dashboard_queries.plan_promises``), with the reasons
  of the shortfalls (``plan_shortfalls``); below ``PROMISE_KEPT`` % it is an error;
- **participant text**: ``validate --strict``'s findings (protocols.definition.review):
  its errors and the researcher words in what participants read
  (``review.wording_findings``) are errors, its other warnings (design choices) warnings;
- **exclusions**: the share of each arm's ratings the protocol's exclusions leave out, as
  ``analyze`` applies them (study_app.exclusion_rules, analysis.exclusions), with a warning
  when two arms differ by more than ``UNEVEN_POINTS`` percentage points.

Error-level findings: a rule break, a same-reading pair, a promise kept for fewer than
``PROMISE_KEPT`` % of an arm, a text error. Everything else is a warning.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from analysis.exclusions import UNEVEN_POINTS
from data import dashboard_queries
from data.store import Store
from engine.recourse.plan_rules import RULES
from protocols.definition.review import review, wording_findings
from protocols.definition.schema import Protocol, load_protocol
from protocols.running.plan_audit import audit, same_readings
from study_app.exclusion_rules import study_rules
from study_app.simulator import simulate

PROMISE_KEPT = 95.0  # % of an arm's participants who must get every promised plan
EXAMPLES = 5  # same-reading pairs and shortfall reasons listed per arm
ERROR, WARNING = "error", "warning"
Progress = Callable[[int, int], None]


def run_audit(protocol: str | Path, participants: int, *, seed: int | None = None,
              db: str | Path | None = None, decision_model: str | None = None,
              progress: Progress | None = None) -> dict[str, Any]:
    """Simulate ``participants`` of ``protocol`` (a shipped id or a file) into ``db`` (a
    temporary DuckDB when None) and audit them (module docstring): the report documented
    by ``recourse-study audit --json``."""
    start = time.perf_counter()
    proto = load_protocol(protocol)
    with tempfile.TemporaryDirectory(prefix="recourse-audit-") as tmp:
        path = db if db is not None else Path(tmp) / "audit.duckdb"
        with Store(path) as store:
            run = simulate(str(protocol), store, participants, seed=seed,
                           decision_model=decision_model, progress=progress)
            report = study_report(store, run["study_id"], proto, str(protocol))
    return {"protocol": proto.id, "title": proto.title, "source": str(protocol),
            "participants": participants, "seed": run["seed"],
            "db": None if db is None else str(db), **report,
            "seconds": round(time.perf_counter() - start, 3)}


def study_report(store: Store, study_id: str, protocol: Protocol,
                 source: str) -> dict[str, Any]:
    """The audit of a stored study of ``protocol`` (``source``: its id or file, for the
    text checks): {study_id, rules, arms, exclusions, text, findings, errors, warnings,
    ok}."""
    promises, shortfalls = _promises(store, study_id)
    exclusions = _exclusions(store, study_id)
    by_arm = {r["arm"]: r for r in exclusions["by_arm"]}
    arms = [a.id for a in protocol.arms]
    arms += sorted(set(promises) - set(arms))  # a within-participant study's own arm
    rows = []
    for arm in arms:
        method = protocol.arm(arm).method if arm in {a.id for a in protocol.arms} else None
        broken = audit(store, study_id, protocol, arm) if method else None
        pairs = same_readings(store, study_id, protocol, arm) if method else []
        rows.append({"arm": arm, "method": method,
                     **_promise_row(promises.get(arm), shortfalls.get(arm, [])),
                     "plans": broken["plans"] if broken else 0,
                     "options": broken["options"] if broken else 0,
                     "plans_broken": broken["plans_broken"] if broken else {},
                     "options_broken": broken["options_broken"] if broken else {},
                     "same_readings": len(pairs), "same_reading_examples": pairs[:EXAMPLES],
                     "exclusions": by_arm.get(arm)})
    text = _text(source, protocol)
    findings = [*_arm_findings(rows), *_exclusion_findings(exclusions), *text["findings"]]
    errors = sum(f["level"] == ERROR for f in findings)
    return {"study_id": study_id, "rules": list(RULES), "promise_kept_min": PROMISE_KEPT,
            "arms": rows, "exclusions": exclusions,
            "text": {"errors": text["errors"], "warnings": text["warnings"]},
            "findings": findings, "errors": errors, "warnings": len(findings) - errors,
            "ok": errors == 0}


def _promises(store: Store, study_id: str) -> tuple[dict[str, dict[str, Any]],
                                                    dict[str, list[dict[str, Any]]]]:
    """(arm -> {participants, short, missing}, arm -> its shortfall reasons); the queries
    are DuckDB SQL: on PostgreSQL they read a snapshot."""
    view = store.snapshot()
    try:
        kept = dashboard_queries.plan_promises(view, study_id).to_dict(orient="records")
        short = dashboard_queries.plan_shortfalls(view, study_id).to_dict(orient="records")
    finally:
        if view is not store:
            view.close()
    reasons: dict[str, list[dict[str, Any]]] = {}
    for r in short:
        reasons.setdefault(r["arm"], []).append(
            {k: r[k] for k in ("reason", "participants", "missing", "fallback")})
    return {r["arm"]: r for r in kept}, reasons


def _promise_row(kept: dict[str, Any] | None,
                 reasons: list[dict[str, Any]]) -> dict[str, Any]:
    """An arm's promise columns: participants who reached the plans, those who got every
    promised plan, that share in %, plans missing, the reasons."""
    reached = int(kept["participants"]) if kept else 0
    got = reached - (int(kept["short"]) if kept else 0)
    return {"reached_plans": reached, "got_every_plan": got,
            "promise_kept": round(100.0 * got / reached, 1) if reached else None,
            "missing_plans": int(kept["missing"]) if kept else 0,
            "shortfalls": reasons[:EXAMPLES]}


def _exclusions(store: Store, study_id: str) -> dict[str, Any]:
    """The protocol's exclusions applied as ``analyze`` applies them: {rules, by_arm,
    uneven, points, ratings_excluded}."""
    ratings = store.ratings_long(study_id)
    if ratings.empty:
        return {"rules": {}, "by_arm": [], "uneven": False, "points": UNEVEN_POINTS,
                "ratings_excluded": {}}
    settings = store.studies().set_index("study_id").loc[study_id].to_dict()
    _, record, _ = study_rules(ratings, settings)
    return {"rules": record["rules"], "by_arm": record["by_arm"], "uneven": record["uneven"],
            "points": UNEVEN_POINTS, "ratings_excluded": record["ratings_excluded"]}


def _finding(level: str, kind: str, arm: str | None, message: str,
             **extra: Any) -> dict[str, Any]:
    return {"level": level, "kind": kind, "arm": arm, "message": message, **extra}


def _arm_findings(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rule breaks, same-reading pairs and promises not kept, per arm."""
    out = []
    for r in rows:
        arm = r["arm"]
        for rule in r["plans_broken"]:
            plans, options = r["plans_broken"][rule], r["options_broken"].get(rule, 0)
            if plans or options:
                out.append(_finding(ERROR, "rule", arm, f"{plans} of {r['plans']} shown plans "
                                    f"and {options} of {r['options']} compared options break "
                                    f"the plan rule '{rule}'", rule=rule,
                                    count=plans + options))
        if r["same_readings"]:
            out.append(_finding(ERROR, "same_reading", arm, f"{r['same_readings']} question(s) "
                                "offer two options that read the same as shown; the pick is "
                                "stored as a preference", count=r["same_readings"]))
        kept = r["promise_kept"]
        if kept is not None and kept < 100.0:
            why = "; ".join(f"{s['participants']} x {s['reason']}" for s in r["shortfalls"])
            level = ERROR if kept < PROMISE_KEPT else WARNING
            out.append(_finding(level, "promise", arm, f"{r['got_every_plan']} of "
                                f"{r['reached_plans']} participants ({kept:.1f}%) got every "
                                f"promised plan; {r['missing_plans']} plan(s) missing"
                                + (f" ({why})" if why else ""), count=r["reached_plans"]
                                - r["got_every_plan"]))
    return out


def _exclusion_findings(ex: dict[str, Any]) -> list[dict[str, Any]]:
    """A warning when the arms' exclusion rates differ by more than the threshold."""
    if not ex["uneven"]:
        return []
    rates = ", ".join(f"{r['arm']} {r['excluded']} of {r['ratings']} ({r['rate']:.1f}%)"
                      for r in ex["by_arm"])
    rules = ", ".join(k for k, v in ex["ratings_excluded"].items() if v)
    return [_finding(WARNING, "exclusions", None, f"the exclusions ({rules}) leave out "
                     f"unevenly many ratings per arm: {rates}, more than "
                     f"{ex['points']:.0f} points apart; the excluded ratings are not missing "
                     "at random. analyze reports the exclusions per arm and fits the main "
                     "model on every rating (intention to treat) beside the per-protocol "
                     "fit")]


def _text(source: str, protocol: Protocol) -> dict[str, Any]:
    """``validate --strict``'s findings: its errors and researcher words are errors, its
    other warnings warnings."""
    result = review(source)
    words = {(f.path, f.message) for f in wording_findings(protocol)}
    errors = [f.as_dict() for f in result.errors]
    errors += [f.as_dict() for f in result.warnings if (f.path, f.message) in words]
    warnings = [f.as_dict() for f in result.warnings if (f.path, f.message) not in words]
    findings = [_finding(ERROR, "text", None, f"{f['path']}: {f['message']}") for f in errors]
    findings += [_finding(WARNING, "text", None, f"{f['path']}: {f['message']}")
                 for f in warnings]
    return {"errors": errors, "warnings": warnings, "findings": findings}

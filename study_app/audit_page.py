"""The audit as one HTML page (``audit --out``): the verdict, the findings, a table per arm
and example screenshots of the pages (study_app.preview's, linked from ``preview/``), for a
colleague or an ethics board to read without the tool."""

from __future__ import annotations

import html
from typing import Any

_STYLE = ("body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;"
          "color:#222}table{border-collapse:collapse;font-size:.9em;margin:.5em 0}"
          "td,th{padding:.25em .6em;border-bottom:1px solid #ddd;text-align:left;"
          "vertical-align:top}.error{color:#a00}.warning{color:#8a5a00}"
          "figure{display:inline-block;vertical-align:top;margin:1em}"
          "img{max-width:480px;border:1px solid #ccc}")


def _e(value: Any) -> str:
    return html.escape(str(value))


def _table(head: list[str], rows: list[list[Any]]) -> str:
    cells = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return ("<table><tr>" + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr>"
            + cells + "</table>")


def _findings(report: dict[str, Any]) -> str:
    if not report["findings"]:
        return "<p>No finding.</p>"
    return _table(["level", "kind", "arm", "finding"], [
        [f"<span class='{_e(f['level'])}'>{_e(f['level'])}</span>", _e(f["kind"]),
         _e(f["arm"] or "all"), _e(f["message"])] for f in report["findings"]])


def _arms(report: dict[str, Any]) -> str:
    rows = []
    for a in report["arms"]:
        broken = {r: a["plans_broken"].get(r, 0) + a["options_broken"].get(r, 0)
                  for r in report["rules"]}
        ex = a["exclusions"]
        rows.append([_e(a["arm"]), _e(a["method"] or ""), _e(a["plans"]), _e(a["options"]),
                     *[_e(broken[r]) for r in report["rules"]], _e(a["same_readings"]),
                     _e(f"{a['got_every_plan']} of {a['reached_plans']}"
                        + (f" ({a['promise_kept']:.1f}%)" if a["promise_kept"] is not None
                           else "")),
                     _e(f"{ex['excluded']} of {ex['ratings']} ({ex['rate']:.1f}%)" if ex
                        else "no ratings")])
    return _table(["arm", "method", "plans shown", "options compared",
                   *[f"broken: {r}" for r in report["rules"]], "same-reading pairs",
                   "got every promised plan", "ratings excluded"], rows)


def _examples(report: dict[str, Any]) -> str:
    items = []
    for a in report["arms"]:
        for ex in a["same_reading_examples"]:
            changes = "; ".join(f"{c['label']}: {c['current']} -> {c['suggested']}"
                                for c in ex["changes"]) or "no change shown"
            items.append(f"<li>arm {_e(a['arm'])}, participant {_e(ex['participant_id'])}, "
                         f"question {_e(ex['step'])}: options {_e(ex['options'][0] + 1)} and "
                         f"{_e(ex['options'][1] + 1)} both read {_e(changes)}</li>")
        for s in a["shortfalls"]:
            items.append(f"<li>arm {_e(a['arm'])}: {_e(s['participants'])} participant(s), "
                         f"{_e(s['missing'])} plan(s) missing: {_e(s['reason'])}</li>")
    return f"<ul>{''.join(items)}</ul>" if items else "<p>None.</p>"


def _shots(shots: list[dict[str, Any]], folder: str) -> str:
    if not shots:
        return "<p>No screenshots taken (audit --no-screenshots, or no --out).</p>"
    return "".join(
        f"<figure><figcaption><b>{_e(s['kind'])}</b> &middot; {_e(s['title'])}</figcaption>"
        f"<a href='{_e(folder)}/{_e(s['png'])}'><img src='{_e(folder)}/{_e(s['png'])}' "
        f"alt='the {_e(s['kind'])} page as a participant sees it'></a></figure>"
        for s in shots)


def render(report: dict[str, Any], shots: list[dict[str, Any]], folder: str) -> str:
    """The page; ``shots``: study_app.preview.write_preview's pages, their images under
    ``folder`` (relative to the page)."""
    verdict = (f"<p class='error'><b>{report['errors']} error(s)</b>, {report['warnings']} "
               "warning(s): fix the errors before launch.</p>" if report["errors"] else
               f"<p><b>No error</b>, {report['warnings']} warning(s).</p>")
    title = f"Pre-launch audit of {_e(report['title'])} ({_e(report['protocol'])})"
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{title}"
            f"</title><style>{_STYLE}</style></head><body><h1>{title}</h1>"
            f"<p>{_e(report['participants'])} simulated participants (seed "
            f"{_e(report['seed'])}) walked the study's pages; what they were shown was read "
            "back from the study database. Plan rules audited: "
            f"{_e(', '.join(report['rules']))}. A promise kept for fewer than "
            f"{report['promise_kept_min']:.0f}% of an arm's participants is an error; "
            "exclusion rates more than "
            f"{report['exclusions']['points']:.0f} points apart are a warning.</p>{verdict}"
            f"<h2>Findings</h2>{_findings(report)}<h2>Per arm</h2>{_arms(report)}"
            f"<h2>Examples</h2>{_examples(report)}"
            f"<h2>The pages (one synthetic participant, as the app draws them)</h2>"
            f"{_shots(shots, folder)}</body></html>")

"""A power analysis's outputs: power.json, the power curve (power.png) and power.html.

The figure shows power against the number of participants with its Monte Carlo 95%
interval (Clopper-Pearson), the false-positive rate of the null runs when there are any,
the target power and the 5% line. The page (self-contained: the figure is embedded) holds
the figure, the table per N, what counts as a detection and the sampling diagnostics.
"""

from __future__ import annotations

import base64
import html
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from data.jsonio import write_json  # noqa: E402

RULE_TEXT = {
    "band": "the simultaneous 95% credible band of the smooth excludes 0 somewhere in the "
            "distance range",
    "contrast": "the 95% credible interval of f(hi) - f(lo) excludes 0",
    "interval": "the central 95% credible interval of the coefficient excludes 0",
}


def write_outputs(out: Path, doc: dict[str, Any]) -> None:
    """OUT/power.json, OUT/power.png and OUT/power.html for the document ``doc``."""
    out.mkdir(parents=True, exist_ok=True)
    files = {"json": "power.json", "html": "power.html", "plot": "power.png",
             "results": "results.jsonl"}
    doc["files"] = {k: str(out / v) for k, v in files.items()}
    figure(doc, out / files["plot"])
    write_json(out / files["json"], doc)
    (out / files["html"]).write_text(page(doc, out / files["plot"]), encoding="utf-8")


def _series(doc: dict[str, Any], which: str) -> tuple[list[int], list[float], list[list[float]]]:
    rows = [r for r in doc["rows"] if r[which] and r[which]["rate"] is not None]
    n = [r["participants"] for r in rows]
    p = [r[which]["rate"] for r in rows]
    err = [[r[which]["rate"] - r[which]["lo"] for r in rows],
           [r[which]["hi"] - r[which]["rate"] for r in rows]]
    return n, p, err


def figure(doc: dict[str, Any], path: Path) -> None:
    fig, ax = plt.subplots(figsize=(6.4, 4))
    for which, label, style in (("power", "power", "o-"),
                                ("false_positive", "false-positive rate (null)", "s--")):
        n, p, err = _series(doc, which)
        if n:
            ax.errorbar(n, p, yerr=err, fmt=style, capsize=3, label=label)
    ax.axhline(doc["target"], color="grey", lw=1, ls=":", label=f"target {doc['target']:.2f}")
    ax.axhline(0.05, color="grey", lw=1, ls="-.", label="0.05")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("participants")
    ax.set_ylabel("share of simulated studies detecting it")
    ax.set_title(f"{doc['protocol']}: {doc['effect']}")
    ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _cell(r: dict[str, Any] | None) -> str:
    if not r or r["rate"] is None:
        return "-"
    return f"{r['rate']:.2f} [{r['lo']:.2f}, {r['hi']:.2f}] ({r['detected']}/{r['sims']})"


def _num(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def page(doc: dict[str, Any], plot: Path) -> str:
    img = base64.b64encode(plot.read_bytes()).decode()
    rows = "".join(
        f"<tr><td>{r['participants']}</td><td>{_cell(r['power'])}</td>"
        f"<td>{_cell(r['false_positive'])}</td>"
        f"<td>{(r['power'] or r['false_positive'] or {}).get('rhat_above_1_05', '-')}</td></tr>"
        for r in doc["rows"])
    fits = doc["fits"]
    smallest = doc["smallest_n"]
    verdict = (f"The smallest sample size tried that reaches power {doc['target']:.2f} is "
               f"<b>{smallest}</b> participants." if smallest is not None else
               f"No sample size tried reaches power {doc['target']:.2f}.")
    esc = html.escape
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Power: {esc(doc['protocol'])}</title>
<style>body{{font-family:system-ui,sans-serif;max-width:900px;margin:2em auto;padding:0 1em;
color:#222}} img{{max-width:100%}} td,th{{padding:.25em .7em;border-bottom:1px solid #ddd;
text-align:right}} table{{border-collapse:collapse}} .note{{color:#555;font-size:.9em}}</style>
</head><body><h1>Power of {esc(doc['protocol'])} for {esc(doc['effect'])}</h1>
<p>{verdict}</p><img alt="power curve" src="data:image/png;base64,{img}">
<table><tr><th>participants</th><th>power [95% MC interval] (detected/studies)</th>
<th>false-positive rate</th><th>fits with R-hat &gt; 1.05</th></tr>{rows}</table>
<h2>What was simulated and what counts</h2>
<p>Each simulated study runs the protocol with synthetic participants (seed {doc['seed']}, decision
model {esc(str(doc['decision_model']))}) and fits the ordinal model of {esc(doc['effect'].split('.')[0])}
on {esc(doc['distance'])}. Detected when {esc(RULE_TEXT[doc['rule']])}
{esc(str(doc['distance_range'] or '(every observed distance)')) if doc['rule'] != 'interval' else ''}.
{_truth_text(doc)} The false-positive rate comes from the same studies
with that effect set to 0 (<code>--null</code>).</p>
<h2>Fits</h2><p class="note">{fits['finished']} of {fits['planned']} studies finished
({fits['reused']} reused from an earlier run); {len(fits['failed'])} failed; max R-hat
{_num(fits['max_rhat'], 3)}, min bulk ESS {_num(fits['min_ess_bulk'], 0)};
{fits['divergent_fits']} fits with divergences; {_num(fits['seconds_per_fit'], 1)} s per fit
fitted in this run, after compilation. Sampler:
{esc(str(doc['sampler']))}. Wall time {doc['wall_seconds']} s.</p></body></html>"""


def _truth_text(doc: dict[str, Any]) -> str:
    """What the synthetic participants were given: the protocol's truth, or the pilot's
    posterior (a different draw per simulated study) with the quantities that drove it."""
    esc = html.escape
    pilot = doc.get("pilot")
    if not pilot:
        return f"Synthetic truth: {esc(str(doc['truth']))}."
    rows = "".join(
        f"<tr><td>{esc(outcome)}</td><td>{esc(name)}</td><td>{esc(str(q['mean']))}</td>"
        f"<td>{esc(str(q['sd']))}</td><td>{esc(q['source'])}</td></tr>"
        for outcome, quantities in pilot["quantities"].items()
        for name, q in quantities.items() if "source" in q)
    return (f"Each simulated study's synthetic participants rate as one draw of the posterior "
            f"of pilot {esc(pilot['study_id'])} ({pilot['participants']} participants, "
            f"{pilot['ratings']} ratings; {pilot['draws_used']} of its {pilot['draws']} draws "
            f"used, one per simulated study). Posterior mean of the effect's parameter: "
            f"{esc(str(doc['truth']))}.</p><table><tr><th>outcome</th><th>parameter</th>"
            f"<th>mean</th><th>sd</th><th>from the model's</th></tr>{rows}</table><p>")

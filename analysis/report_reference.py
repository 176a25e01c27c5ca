"""The reference study's own figures and table in the report (Tominaga et al., "Reassessing
Evaluation Functions in Algorithmic Recourse"): Figure 1 (the distributions of sparsity and
proximity over the shown plans, here per arm), Table S2 and Figure 3 from mgcv (the smooth
of each rating against L0 and L1 with its 95% interval and a rug of the analysed
distances), and the sentence per model saying where mgcv and the Bayesian models agree.
"""

from __future__ import annotations

import html
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from analysis import table_s2  # noqa: E402

LABELS = {"l0_actions": "L0 (actions)", "l1_actions": "L1 (actions)",
          "l0_profile": "L0 (profile)", "l1_profile": "L1 (profile)"}


def distance_figure(plans: pd.DataFrame, distances: tuple[str, str], png: Any) -> str:
    """Figure 1: histograms of L0 and L1 of the shown plans, one series per arm (``png``
    turns a matplotlib figure into an <img>)."""
    present = [d for d in distances if d in plans and plans[d].notna().any()]
    if not present:
        return "<p>Plan distances not recorded.</p>"
    arm = (plans["arm"] if "arm" in plans else pd.Series(None, index=plans.index))
    arm = arm.fillna("(arm not recorded)").astype(str)
    fig, axes = plt.subplots(1, len(present), figsize=(5 * len(present), 3.2), squeeze=False)
    for ax, d in zip(axes[0], present, strict=True):
        values = pd.to_numeric(plans[d], errors="coerce")
        finite = values[np.isfinite(values)]
        discrete = bool(np.allclose(finite, np.round(finite)))
        bins: Any = (np.arange(finite.min() - 0.5, finite.max() + 1.5) if discrete
                     else np.linspace(finite.min(), finite.max(), 21))
        series = [(a, values[(arm == a) & np.isfinite(values)]) for a in sorted(arm.unique())]
        ax.hist([v for _, v in series], bins=bins, label=[f"{a} (n={len(v)})" for a, v in series])
        ax.set_xlabel(LABELS.get(d, d))
        ax.set_ylabel("plans")
        ax.set_title(f"{'Sparsity' if d.startswith('l0') else 'Proximity'}: {LABELS.get(d, d)}")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    return png(fig)


def figure3(block: dict[str, Any], ratings: pd.DataFrame, png: Any) -> str:
    """Figure 3 from mgcv: per outcome (rows) and distance (columns) the centred smooth
    s(d) on the rating scale with its 95% interval and a rug of the analysed distances."""
    models = block.get("models") or []
    if not models:
        return ""
    outcomes = sorted({m["outcome"] for m in models})
    dists = sorted({m["distance"] for m in models})
    fig, axes = plt.subplots(len(outcomes), len(dists), figsize=(5 * len(dists),
                             3.4 * len(outcomes)), squeeze=False)
    for i, o in enumerate(outcomes):
        for j, d in enumerate(dists):
            ax = axes[i][j]
            m = next((m for m in models if m["outcome"] == o and m["distance"] == d), None)
            if m is None:
                ax.set_axis_off()
                continue
            c = m["curve"]
            ax.fill_between(c["d"], c["lo"], c["hi"], alpha=0.3, label="95% interval")
            ax.plot(c["d"], c["fit"], lw=2, label="s(d)")
            ax.axhline(0, color="grey", lw=1, ls="--")
            rug = pd.to_numeric(ratings.dropna(subset=[o])[d], errors="coerce").dropna()
            ax.plot(rug, np.full(len(rug), min(c["lo"])), "|", color="k", alpha=0.15)
            ax.set_xlabel(LABELS.get(d, d))
            ax.set_ylabel(f"s({d}) on {o} (rating)")
            label = table_s2.model_label(o, d) or ""
            ax.set_title(f"{label}: {o} vs {table_s2.variable(d).lower()} "
                         f"({table_s2.p_text(m['smooth']['p'])})")
    axes[0][0].legend(loc="best", fontsize=8)
    fig.tight_layout()
    return png(fig)


def table_s2_html(block: dict[str, Any], table: Any) -> str:
    """Table S2 as the paper lays it out (``table`` renders a DataFrame)."""
    rows = block.get("table_s2") or []
    if not rows:
        return ""
    df = pd.DataFrame([{
        "Model": r["model"], "Outcome": f"propensity for {r['outcome']}",
        "Variable": r["variable"], "Smth": "yes" if r["smooth"] else "no",
        "Coef.": _n(r["coef"]), "S.E.": _n(r["se"]), "t value": _n(r["t"]),
        "EDF": _n(r["edf"]), "F value": _n(r["F"]), "p value": table_s2.format_p(r["p"]),
        "AIC": _n(r["aic"]),
    } for r in rows])
    return table(df)


def mgcv_section(block: dict[str, Any] | None, ratings: pd.DataFrame, png: Any,
                 table: Any) -> str:
    """The report's mgcv section: status, Table S2, Figure 3, the agreement sentences."""
    if not block:
        return "<p>Not run.</p>"
    if block["status"] != "fitted":
        return (f"<div class='warn'><p>mgcv part {html.escape(block['status'])}: "
                f"{html.escape(str(block.get('reason')))}. The Bayesian models above are "
                "complete.</p></div>")
    versions = (f"R {html.escape(str(block.get('r_version')))}, mgcv "
                f"{html.escape(str(block.get('mgcv_version')))}, smoothing parameters by "
                f"{html.escape(block['method'])}")
    sentences = "".join(f"<li>{html.escape(a['sentence'])}</li>" for a in block["agreement"])
    return (f"<p>{versions}.</p><h3>Table S2</h3>" + table_s2_html(block, table)
            + "<h3>Figure 3</h3>" + figure3(block, ratings, png)
            + f"<h3>mgcv and the Bayesian models</h3><ul>{sentences}</ul>")


def _n(v: float | None) -> str:
    return "" if v is None or not np.isfinite(v) else f"{v:.2f}"

"""The self-contained HTML report of ``recourse-study analyze`` (figures embedded as PNG).

Sections: the smooth of each rating against L0 and against L1 with 95% bands (the reference
study's Figure 3, on the latent logit scale, centred: 0 is the average plan), coefficients
with 94% intervals, variance components, posterior predictive check (observed rating shares
against the replicated ones), rating distributions by arm, recourse metrics by arm, LOO
comparison and sampling diagnostics.
"""

from __future__ import annotations

import base64
import html
import io
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from analysis.pipeline import Analysis, ModelResult  # noqa: E402
from analysis.tables import recourse_table  # noqa: E402

LABELS = {"l0_actions": "L0 (actions)", "l1_actions": "L1 (actions)",
          "l0_profile": "L0 (profile)", "l1_profile": "L1 (profile)"}


def _png(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return f'<img alt="figure" src="data:image/png;base64,{base64.b64encode(buf.getvalue()).decode()}">'


def smooth_figure(models: list[ModelResult]) -> str:
    ordinal = [m for m in models if m.likelihood == "ordinal"]
    outcomes = sorted({m.outcome for m in ordinal})
    dists = sorted({m.distance for m in ordinal})
    fig, axes = plt.subplots(len(outcomes), len(dists), figsize=(5 * len(dists), 3.4 * len(outcomes)),
                             squeeze=False)
    for i, o in enumerate(outcomes):
        for j, d in enumerate(dists):
            ax = axes[i][j]
            m = next(m for m in ordinal if m.outcome == o and m.distance == d)
            s = m.smooth
            ax.fill_between(s["d"], s["lo"], s["hi"], alpha=0.3, label="95% band")
            ax.plot(s["d"], s["mean"], lw=2, label="posterior mean")
            ax.axhline(0, color="grey", lw=1, ls="--")
            ax.plot(m.data.d, np.full(m.data.n, s["lo"].min()), "|", color="k", alpha=0.15)
            ax.set_xlabel(LABELS.get(d, d))
            ax.set_ylabel(f"s({d}) on {o} (logit)")
            ax.set_title(f"{o.capitalize()} vs {LABELS.get(d, d)}")
    axes[0][0].legend(loc="best", fontsize=8)
    fig.tight_layout()
    return _png(fig)


def coefficient_figure(models: list[ModelResult], group: str) -> str:
    rows = [(f"{m.outcome}: {c['name']}", c) for m in models
            if m.likelihood == "ordinal" and m.distance == _main(models) for c in m.coefficients
            if (c["group"] != "variance") == (group == "effects")]
    if not rows:
        return "<p>No such parameters in these models.</p>"
    fig, ax = plt.subplots(figsize=(7, 0.4 * len(rows) + 1))
    y = np.arange(len(rows))
    ax.errorbar([c["mean"] for _, c in rows], y,
                xerr=[[max(c["mean"] - c["lo"], 0) for _, c in rows],
                      [max(c["hi"] - c["mean"], 0) for _, c in rows]],
                fmt="o", capsize=3)
    ax.set_yticks(y, [n for n, _ in rows])
    ax.axvline(0, color="grey", lw=1, ls="--")
    ax.set_xlabel("posterior mean and 94% interval (logit scale)")
    ax.invert_yaxis()
    fig.tight_layout()
    return _png(fig)


def ppc_figure(models: list[ModelResult]) -> str:
    with_pp = [m for m in models if m.ppc is not None]
    if not with_pp:
        return "<p>No posterior predictive draws.</p>"
    fig, axes = plt.subplots(1, len(with_pp), figsize=(5 * len(with_pp), 3.2), squeeze=False)
    k = np.arange(1, 8)
    for ax, m in zip(axes[0], with_pp, strict=True):
        obs = np.array([(m.data.y == v).mean() for v in k])
        rep = np.stack([(m.ppc + 1 == v).mean(axis=1) for v in k], axis=1)
        lo, hi = np.quantile(rep, [0.025, 0.975], axis=0)
        ax.bar(k, obs, color="#9ecae1", label="observed")
        ax.errorbar(k, rep.mean(axis=0), yerr=[rep.mean(axis=0) - lo, hi - rep.mean(axis=0)],
                    fmt="o", color="k", capsize=3, label="replicated (95%)")
        ax.set_xticks(k)
        ax.set_xlabel(f"{m.outcome} rating")
        ax.set_ylabel("share")
        ax.set_title(f"{m.outcome} ~ s({m.distance})")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    return _png(fig)


def arm_figure(ratings: pd.DataFrame) -> str:
    arms = sorted(ratings["arm"].fillna("(none)").astype(str).unique())
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.2))
    k = np.arange(1, 8)
    width = 0.8 / max(len(arms), 1)
    for ax, outcome in zip(axes, ("acceptance", "action"), strict=True):
        for i, a in enumerate(arms):
            v = ratings.loc[ratings["arm"].fillna("(none)").astype(str) == a, outcome]
            share = [(v == x).mean() for x in k]
            ax.bar(k + (i - (len(arms) - 1) / 2) * width, share, width, label=f"{a} (n={len(v)})")
        ax.set_xticks(k)
        ax.set_xlabel(f"{outcome} rating (1 = strongly disagree, 7 = strongly agree)")
        ax.set_ylabel("share")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    return _png(fig)


def _main(models: list[ModelResult]) -> str:
    with_pp = [m for m in models if m.ppc is not None]
    return with_pp[0].distance if with_pp else models[0].distance


def _table(df: pd.DataFrame, digits: int = 3) -> str:
    return df.to_html(index=False, float_format=lambda v: f"{v:.{digits}f}", na_rep="-",
                      border=0, classes="t", escape=True)


def render(analysis: Analysis) -> str:
    """The whole report as one HTML document."""
    models = analysis.models
    diag = pd.DataFrame([{
        "outcome": m.outcome, "distance": m.distance, "likelihood": m.likelihood,
        "max R-hat": m.fit.diagnostics.max_rhat, "min bulk ESS": m.fit.diagnostics.min_ess_bulk,
        "min tail ESS": m.fit.diagnostics.min_ess_tail,
        "divergences": m.fit.diagnostics.divergences, "seconds": m.fit.seconds,
        "warnings": "; ".join(m.fit.diagnostics.problems()) or "none",
    } for m in models])
    gauss = pd.DataFrame([{"outcome": m.outcome, "distance": m.distance, **{
        c["name"]: f"{c['mean']:.2f} [{c['lo']:.2f}, {c['hi']:.2f}]" for c in m.coefficients}}
        for m in models if m.likelihood == "gaussian"])
    loo = "".join(f"<h3>{html.escape(o)}</h3>" + _table(pd.DataFrame(rows))
                  for o, rows in analysis.loo.items())
    n_p = analysis.ratings["participant_id"].nunique()
    sections = [
        ("Smooths of the ratings against distance", smooth_figure(models),
         "Centred smooth f(d) on the latent (logit) scale with 95% bands; 0 is the average "
         "plan. A band containing 0 everywhere means no evidence that distance matters."),
        ("Effects (94% intervals)", coefficient_figure(models, "effects"),
         "Preference satisfaction, violation of the stated constraints and arm contrasts."),
        ("Variance components", coefficient_figure(models, "variance"),
         "sigma_u: participant intercepts; sigma_b: participant slopes on distance; sigma_f: "
         "smoothness of the distance curve."),
        ("Posterior predictive check", ppc_figure(models),
         "Observed shares of each rating against replicated data from the fitted model."),
        ("Ratings by arm", arm_figure(analysis.ratings), ""),
        ("Recourse metrics by arm", _table(recourse_table(analysis.plans)),
         "From the stored plans (engine.metrics definitions)."),
        ("Model comparison (PSIS-LOO, ordinal models)", loo or "<p>Not computed.</p>",
         "Per outcome: the model with L0 against the one with L1 (higher elpd is better)."),
        ("Gaussian variant (comparison with the reference study's GAMMs)",
         _table(gauss) if not gauss.empty else "<p>Not fitted.</p>", ""),
        ("Sampling diagnostics", _table(diag), "Thresholds: R-hat <= 1.01, ESS >= 400, "
         "no divergent transitions."),
    ]
    body = "".join(
        f"<section><h2>{html.escape(t)}</h2>{content}"
        + (f"<p class='note'>{html.escape(note)}</p>" if note else "") + "</section>"
        for t, content, note in sections)
    title = f"Analysis of {html.escape(str(analysis.study_id))}"
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>{title}</title>
<style>body{{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;
color:#222}} img{{max-width:100%}} table.t{{border-collapse:collapse;font-size:.9em}}
table.t td,table.t th{{padding:.25em .6em;border-bottom:1px solid #ddd;text-align:right}}
.note{{color:#555;font-size:.9em}} section{{margin-bottom:2.5em}}</style></head><body>
<h1>{title}</h1><p>{len(analysis.ratings)} ratings from {n_p} participants.</p>
{body}</body></html>"""

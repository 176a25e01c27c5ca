"""The report's shared pieces (analysis.report, the families' own sections): figures as
embedded PNG, tables as HTML, and the smooth of each fitted model against its distance with
its 95% band (the reference study's Figure 3; centred: 0 is the average plan).
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

LABELS = {"l0_actions": "L0 (actions)", "l1_actions": "L1 (actions)",
          "l0_profile": "L0 (profile)", "l1_profile": "L1 (profile)"}
NOT_RECORDED = "not recorded"


def png(fig: Any) -> str:
    """``fig`` as an embedded PNG image (the figure is closed)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return f'<img alt="figure" src="data:image/png;base64,{base64.b64encode(buf.getvalue()).decode()}">'


def smooth_figure(models: Sequence[Any], scale: str = "logit") -> str:
    """Each of ``models``' smooths (fitted models of one family: analysis.results
    ModelResult) on ``scale``, one panel per outcome and distance."""
    fitted = list(models)
    if not fitted:
        return "<p>No model was fitted.</p>"
    outcomes = sorted({m.outcome for m in fitted})
    dists = sorted({m.distance for m in fitted})
    fig, axes = plt.subplots(len(outcomes), len(dists), figsize=(5 * len(dists), 3.4 * len(outcomes)),
                             squeeze=False)
    for i, o in enumerate(outcomes):
        for j, d in enumerate(dists):
            ax = axes[i][j]
            m = next((m for m in fitted if m.outcome == o and m.distance == d), None)
            if m is None:
                ax.text(0.5, 0.5, f"{o} ~ s({d}): not fitted", ha="center", va="center")
                ax.set_axis_off()
                continue
            s = m.smooth
            ax.fill_between(s["d"], s["lo"], s["hi"], alpha=0.3, label="95% band")
            ax.plot(s["d"], s["mean"], lw=2, label="posterior mean")
            ax.axhline(0, color="grey", lw=1, ls="--")
            ax.plot(m.data.d, np.full(m.data.n, s["lo"].min()), "|", color="k", alpha=0.15)
            ax.set_xlabel(LABELS.get(d, d))
            ax.set_ylabel(f"s({d}) on {o} ({scale})")
            ax.set_title(f"{o.capitalize()} vs {LABELS.get(d, d)}")
    drawn = [ax for row in axes for ax in row if ax.lines]
    if drawn:
        drawn[0].legend(loc="best", fontsize=8)
    fig.tight_layout()
    return png(fig)


def table(df: pd.DataFrame, digits: int = 3) -> str:
    """``df`` as an HTML table (missing values: "not recorded")."""
    return df.to_html(index=False, float_format=lambda v: f"{v:.{digits}f}",
                      na_rep=NOT_RECORDED, border=0, classes="t", escape=True)

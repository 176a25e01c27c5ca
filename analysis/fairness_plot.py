"""The fairness case study's figure (iCARMA paper, Figure 4 style), drawn from its JSON result.

Input: the document written by ``recourse-study benchmark fairness --json`` (or the same
dict in memory): ``groups`` rows (assignment, metric, axis, group, estimate, lo, hi, n, ...),
``gaps`` rows (assignment, metric, axis, contrast, estimate, lo, hi, change_vs_none) and
``worst_cell`` rows. Only numpy, pandas and matplotlib: re-plotting a stored result needs no
model.

Layout: rows = metric (mean unweighted cost, mean counterfactual log-density), columns =
axis (gender, race, gender x race). In every panel the x axis lists the preference
assignments; each group is a point (its mean) with its bootstrap interval. The gender and
race panels print the gap (first group - second group) and its interval under each
assignment; in the intersection panel a star marks the worst-off cell where its margin over
the runner-up has an interval above zero.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.transforms import offset_copy

PLOTTED_METRICS: dict[str, str] = {
    "cost": "mean recourse cost\n(normalized L1; lower = cheaper)",
    "log_prob_cf": "mean counterfactual log-density\n(higher = more plausible)",
}
AXES: dict[str, str] = {
    "gender": "by gender",
    "race": "by race (stylized, randomly assigned)",
    "intersection": "by gender x race",
}
SHORT_ASSIGNMENT: dict[str, str] = {
    "none": "none\n(baseline)",
    "random": "random",
    "income": "income-\ndependent",
    "race": "race-\ncorrelated",
}
ASSIGNMENT_DEFINITIONS = (
    "x axis = preference assignment. none: all 4 actionable features usable; random: "
    "privileged profile with prob. 1/2; income-dependent: privileged iff income in the top "
    "25% of applicants; race-correlated: privileged with prob. 0.90 (white) / 0.05 (non-white)"
)
GROUP_COLOURS: dict[str, str] = {
    "female": "#d95f02",
    "male": "#1f78b4",
    "non-white": "#7b3294",
    "white": "#008837",
    "non-white female": "#a63603",
    "white female": "#fdae6b",
    "non-white male": "#08519c",
    "white male": "#9ecae1",
}
REQUIRED_KEYS = ("groups", "gaps", "worst_cell")


def _frames(result: Mapping[str, Any]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    missing = [k for k in REQUIRED_KEYS if k not in result]
    if missing:
        raise ValueError(
            f"fairness result is missing {', '.join(missing)}; expected the JSON written by "
            "`recourse-study benchmark fairness --json`"
        )
    groups, gaps, worst = (pd.DataFrame(result[k]) for k in REQUIRED_KEYS)
    if groups.empty:
        raise ValueError("fairness result holds no group rows")
    return groups, gaps, worst


def _fmt(v: float | None, digits: int) -> str:
    return "n/a" if v is None or not np.isfinite(v) else f"{v:+.{digits}f}"


def fairness_figure(result: Mapping[str, Any]) -> Figure:
    """The Figure-4-style panel grid for one fairness result (see the module docstring).

    >>> from engine import BayesDecision, RecourseContext, get_method, get_scenario
    >>> from engine.papers import fairness_population, fairness_summary, run_fairness
    >>> loan = get_scenario("loan")
    >>> ctx = RecourseContext(loan, BayesDecision(loan))
    >>> people = fairness_population(loan, ctx.classifier, n=16, seed=0)
    >>> oracle = get_method("oracle", ctx, bins=5, plausibility=False)
    >>> result = fairness_summary(people, run_fairness(oracle, people, ("none", "random")),
    ...                           n_boot=20)
    >>> from analysis import fairness_figure
    >>> figure = fairness_figure(result)
    >>> len(figure.axes) > 0
    True
    """
    groups, gaps, worst = _frames(result)
    assignments = [a for a in SHORT_ASSIGNMENT if a in set(groups["assignment"])]
    fig = Figure(figsize=(17, 10.5), dpi=110)
    FigureCanvasAgg(fig)
    grid = fig.add_gridspec(len(PLOTTED_METRICS), len(AXES), hspace=0.55, wspace=0.28)
    for r, (metric, ylabel) in enumerate(PLOTTED_METRICS.items()):
        digits = 3 if metric == "cost" else 2
        for c, (axis, title) in enumerate(AXES.items()):
            ax = fig.add_subplot(grid[r, c])
            rows = groups[(groups["metric"] == metric) & (groups["axis"] == axis)]
            names = list(dict.fromkeys(rows["group"]))
            width = 0.7 / max(len(names), 1)
            for k, name in enumerate(names):
                sub = rows[rows["group"] == name].set_index("assignment").reindex(assignments)
                xs = np.arange(len(assignments)) + (k - (len(names) - 1) / 2) * width
                est = sub["estimate"].to_numpy(dtype=float)
                err = np.vstack(
                    [est - sub["lo"].to_numpy(dtype=float), sub["hi"].to_numpy(dtype=float) - est]
                )
                ax.errorbar(
                    xs,
                    est,
                    yerr=err,
                    fmt="o",
                    ms=6,
                    capsize=3,
                    lw=1.6,
                    color=GROUP_COLOURS.get(name, f"C{k}"),
                    label=f"{name} (n={int(sub['n'].max())})",
                )
                if axis == "intersection":
                    _mark_worst(ax, worst, metric, name, assignments, xs, est + err[1])
            if axis != "intersection":
                _annotate_gaps(ax, gaps, metric, axis, assignments, digits)
            ax.set_xticks(np.arange(len(assignments)))
            ax.set_xticklabels([SHORT_ASSIGNMENT[a] for a in assignments], fontsize=8)
            ax.set_xlim(-0.5, len(assignments) - 0.5)
            ax.grid(axis="y", alpha=0.3)
            if c == 0:
                ax.set_ylabel(ylabel, fontsize=9)
            ax.set_title(f"{ylabel.splitlines()[0]}, {title}", fontsize=10)
            lo, hi = ax.get_ylim()
            # room below the points for the gap boxes, above them for the stars
            ax.set_ylim(lo - 0.35 * (hi - lo), hi + 0.08 * (hi - lo))
            if r == 0:  # one legend per column, between the rows
                handles, labels = ax.get_legend_handles_labels()
                if axis == "intersection":
                    handles.append(Line2D([], [], marker="*", ls="", color="k", ms=11))
                    labels.append("worst-off cell (margin over runner-up: interval > 0)")
                box = ax.get_position()
                fig.legend(
                    handles,
                    labels,
                    loc="upper center",
                    bbox_to_anchor=((box.x0 + box.x1) / 2, box.y0 - 0.07),
                    ncol=2,
                    fontsize=8,
                    frameon=False,
                )
    fig.suptitle(_title(result), fontsize=12, y=0.995)
    fig.text(0.5, 0.955, _subtitle(result), ha="center", va="top", fontsize=9, color="#333333")
    return fig


def _annotate_gaps(
    ax: Any, gaps: pd.DataFrame, metric: str, axis: str, assignments: list[str], digits: int
) -> None:
    rows = gaps[(gaps["metric"] == metric) & (gaps["axis"] == axis)].set_index("assignment")
    for x, a in enumerate(assignments):
        if a not in rows.index:
            continue
        g = rows.loc[a]
        text = f"\u0394 {_fmt(g['estimate'], digits)}\n[{_fmt(g['lo'], digits)}, {_fmt(g['hi'], digits)}]"
        ax.text(
            x,
            0.02,
            text,
            transform=ax.get_xaxis_transform(),
            ha="center",
            va="bottom",
            fontsize=7,
            color="#222222",
            bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "#bbbbbb", "lw": 0.5},
        )
    contrast = rows["contrast"].iloc[0] if len(rows) else ""
    ax.set_xlabel(f"\u0394 = {contrast} (95% interval)", fontsize=8)


def _mark_worst(
    ax: Any,
    worst: pd.DataFrame,
    metric: str,
    name: str,
    assignments: list[str],
    xs: np.ndarray,
    top: np.ndarray,
) -> None:
    """A star above the worst-off cell's interval where its margin's interval is above 0."""
    rows = worst[(worst["metric"] == metric) & (worst["cell"] == name)]
    for _, w in rows.iterrows():
        lo = (w["margin"] or {}).get("lo")
        if w["assignment"] in assignments and lo is not None and lo > 0:
            k = assignments.index(w["assignment"])
            above = offset_copy(ax.transData, fig=ax.figure, y=9, units="points")
            ax.plot(xs[k], top[k], marker="*", ms=13, color="k", ls="", transform=above)


def _title(result: Mapping[str, Any]) -> str:
    method = result.get("method_label") or result.get("method", "recourse method")
    scenario = result.get("scenario", "?")
    return (
        f"Recourse cost and plausibility by group under individual actionability "
        f"({method}, scenario {scenario})"
    )


def _subtitle(result: Mapping[str, Any]) -> str:
    pop = result.get("population", {})
    level = int(round(100 * float(result.get("level", 0.95))))
    parts = [
        f"{pop.get('n', '?')} rejected test applicants (of {pop.get('n_rejected', '?')}), "
        f"seed {result.get('seed', '?')}",
        "every plan's cost and log-density over valid recourses; "
        f"error bars and [ ]: {level}% stratified bootstrap intervals "
        f"(B = {result.get('n_boot', '?')})",
        "outside the baseline each person may act on exactly 2 features: privileged profile "
        "favours income and savings, non-privileged favours loan amount and duration",
        f"densities: {result.get('density_source', '?')}",
    ]
    return "\n".join(["; ".join(parts[:2]), "; ".join(parts[2:]), ASSIGNMENT_DEFINITIONS])


def save_fairness_figure(result: Mapping[str, Any], path: str | Path) -> Path:
    """Draw ``fairness_figure(result)`` and write it as a PNG to ``path``."""
    path = Path(path)
    if path.suffix.lower() != ".png":
        raise ValueError(f"the fairness figure is written as PNG; got {path.name!r}")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig = fairness_figure(result)
    fig.savefig(path, format="png", bbox_inches="tight")
    return path

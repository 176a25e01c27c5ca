"""Recourse disparities between groups: means, gaps, gap changes, worst-off cells, intervals.

Used by the fairness case study (engine.papers.icarma.fairness): for every preference
assignment, the mean unweighted cost and mean counterfactual log-density log p(x') over valid
recourses (and the validity rate) per gender, race and gender x race cell, with percentile
intervals from a stratified, paired bootstrap over people (``group_statistics`` states the
math).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.papers.icarma.fairness import (
    ASSIGNMENT_LABELS,
    RACE_CATEGORIES,
    FairnessOutcome,
    FairnessPopulation,
)
from engine.recourse.batch import RecourseBatch

METRICS: tuple[str, ...] = ("cost", "log_prob_cf", "validity")


def _metric_values(batch: RecourseBatch) -> np.ndarray:
    """(3, n): cost and log p(x') over valid recourses (NaN elsewhere), validity as 0/1."""
    valid = batch.valid.numpy()
    nan = np.full(valid.shape, np.nan)
    return np.stack(
        [
            np.where(valid, batch.cost.numpy(), nan),
            np.where(valid, batch.log_prob_cf.numpy(), nan),
            valid.astype(float),
        ]
    )


def _interval(draws: np.ndarray, point: float, level: float) -> dict[str, float | None]:
    lo, hi = np.nanquantile(draws, [(1 - level) / 2, (1 + level) / 2])

    def clean(v: float) -> float | None:
        return float(v) if np.isfinite(v) else None

    return {"estimate": clean(point), "lo": clean(lo), "hi": clean(hi)}


def group_statistics(
    population: FairnessPopulation,
    outcomes: Sequence[FairnessOutcome],
    *,
    n_boot: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> dict[str, list[dict]]:
    """Group means, gaps, gap changes vs the baseline and worst-off cells, with intervals.

    For a metric y (cost or log p(x') of valid recourses, v_i = 1 if valid; validity itself
    over everyone) and a group G (a union of gender x race cells) the estimate is

        mu_G = sum_{i in G} v_i y_i / sum_{i in G} v_i.

    Gaps are differences of group means: gender  mu_female - mu_male, race
    mu_non-white - mu_white, intersection mu_cell - mu_(white male). A gap's change under
    assignment a is Delta_a - Delta_none. The worst-off cell has the highest mean cost (lowest
    mean log-density, lowest validity); its margin is its distance to the runner-up.

    Intervals: stratified, paired percentile bootstrap. Each of the ``n_boot`` draws resamples
    people with replacement within every gender x race cell (cell sizes fixed) and uses the
    same resampled people under every assignment, so the between-assignment comparisons keep
    their pairing. Reported: the ``level`` percentile interval of each statistic's draws.
    """
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    if not outcomes:
        raise ValueError("outcomes must hold at least one assignment")
    values = np.stack([_metric_values(o.recourse) for o in outcomes])  # (A, M, n)
    sums, counts = _bootstrap_cell_sums(population, values, n_boot, seed)
    names = population.cell_names()
    gi, ri = population.gender_categories, RACE_CATEGORIES
    axes: dict[str, dict[str, list[int]]] = {
        "gender": {gi[0]: [0, 1], gi[1]: [2, 3]},
        "race": {ri[0]: [0, 2], ri[1]: [1, 3]},
        "intersection": {names[c]: [c] for c in range(4)},
    }
    with np.errstate(invalid="ignore", divide="ignore"):
        means = {
            (axis, g): sums[:, :, cells].sum(2) / counts[:, :, cells].sum(2)
            for axis, groups in axes.items()
            for g, cells in groups.items()
        }  # each (A, M, 1 + B)
    contrasts = [("gender", gi[0], gi[1]), ("race", ri[0], ri[1])] + [
        ("intersection", names[c], names[3]) for c in range(3)
    ]
    base = next((k for k, o in enumerate(outcomes) if o.assignment == "none"), None)
    out: dict[str, list[dict]] = {"groups": [], "gaps": [], "worst_cell": []}
    for a, o in enumerate(outcomes):
        for m, metric in enumerate(METRICS):
            key = {"assignment": o.assignment, "metric": metric}
            for axis, groups in axes.items():
                for g, cells in groups.items():
                    in_g = np.isin(population.cell, cells)
                    draws = means[(axis, g)][a, m]
                    out["groups"].append({
                        **key, "axis": axis, "group": g,
                        **_interval(draws[1:], draws[0], level),
                        "n": int(in_g.sum()), "n_used": int(counts[a, m, cells, 0].sum()),
                        "privileged_share": float(o.privileged[in_g].mean()),
                    })
            for axis, g1, g0 in contrasts:
                gap = means[(axis, g1)][:, m] - means[(axis, g0)][:, m]  # (A, 1 + B)
                change = None
                if base is not None and a != base:
                    diff = gap[a] - gap[base]
                    change = _interval(diff[1:], diff[0], level)
                out["gaps"].append({**key, "axis": axis, "contrast": f"{g1} - {g0}",
                                    **_interval(gap[a, 1:], gap[a, 0], level),
                                    "change_vs_none": change})
            cell_means = np.stack([means[("intersection", nm)][a, m] for nm in names])
            out["worst_cell"].append({**key, **_worst_cell(cell_means, metric, names, level)})
    return out


def _bootstrap_cell_sums(
    population: FairnessPopulation, values: np.ndarray, n_boot: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Sums and counts of the finite values per (assignment, metric, cell, draw), shape
    (A, M, 4, 1 + n_boot); draw 0 is the sample itself, the others resample people within
    each cell, the same people under every assignment (``group_statistics``)."""
    rng = np.random.default_rng([seed, 7919])
    cell, names = population.cell, population.cell_names()
    sums = np.zeros(values.shape[:2] + (4, n_boot + 1))
    counts = np.zeros_like(sums)
    for c in range(4):
        members = np.flatnonzero(cell == c)
        if members.size == 0:
            raise ValueError(f"no one in the {names[c]} cell: cannot compare groups")
        idx = np.vstack([members, rng.choice(members, size=(n_boot, members.size))])
        for a in range(values.shape[0]):
            v = values[a][:, idx]  # (M, 1 + B, n_c)
            sums[a, :, c] = np.nansum(v, axis=-1)
            counts[a, :, c] = np.isfinite(v).sum(axis=-1)
    return sums, counts


def _worst_cell(
    cell_means: np.ndarray, metric: str, names: Sequence[str], level: float
) -> dict:
    """The worst-off cell of one metric (highest cost, lowest density or validity), the
    runner-up and the margin between them, from cell means (4, 1 + B)."""
    sign = 1.0 if metric == "cost" else -1.0  # worse = higher cost, lower density
    order = np.argsort(-sign * np.nan_to_num(cell_means[:, 0], nan=-np.inf * sign))
    margin = sign * (cell_means[order[0]] - cell_means[order[1]])
    return {"cell": names[order[0]], "runner_up": names[order[1]],
            "margin": _interval(margin[1:], margin[0], level)}


def fairness_summary(
    population: FairnessPopulation,
    outcomes: Sequence[FairnessOutcome],
    *,
    n_boot: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> dict:
    """The JSON-ready result: population, per-assignment overview and ``group_statistics``.

    >>> from engine import BayesDecision, RecourseContext, get_method, get_scenario
    >>> from engine.papers import fairness_population, fairness_summary, run_fairness
    >>> loan = get_scenario("loan")
    >>> ctx = RecourseContext(loan, BayesDecision(loan))
    >>> people = fairness_population(loan, ctx.classifier, n=16, seed=0)
    >>> oracle = get_method("oracle", ctx, bins=5, plausibility=False)
    >>> outcomes = run_fairness(oracle, people, ("none", "random"))
    >>> [o.assignment for o in outcomes], [len(o.recourse) for o in outcomes]
    (['none', 'random'], [16, 16])
    >>> summary = fairness_summary(people, outcomes, n_boot=20)
    >>> population = summary["population"]
    >>> population["n"], [a["name"] for a in summary["assignments"]]
    (16, ['none', 'random'])
    """
    names = population.cell_names()
    cell = population.cell
    return {
        "density_source": outcomes[0].recourse.density_source if outcomes else None,
        "level": level,
        "n_boot": n_boot,
        "population": {
            "n": len(population),
            "n_test": population.n_test,
            "n_rejected": population.n_rejected,
            "cells": {names[c]: int((cell == c).sum()) for c in range(4)},
        },
        "assignments": [
            {
                "name": o.assignment,
                "label": ASSIGNMENT_LABELS[o.assignment],
                "privileged_share": float(o.privileged.mean()),
                "n_actionable": sorted({int(k) for k in o.profiles.n_actionable.tolist()}),
                "validity": float(o.recourse.valid.double().mean()),
                "seconds": o.recourse.runtime,
            }
            for o in outcomes
        ],
        **group_statistics(population, outcomes, n_boot=n_boot, level=level, seed=seed),
    }

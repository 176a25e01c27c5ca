"""The fairness figure is drawn from the stored JSON shape alone, with clear input errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from matplotlib.image import imread

from analysis.fairness_plot import fairness_figure, save_fairness_figure

ASSIGNMENTS = ("none", "random", "income", "race")
AXES = {
    "gender": ("female", "male"),
    "race": ("non-white", "white"),
    "intersection": ("non-white female", "white female", "non-white male", "white male"),
}


def _result() -> dict:
    rng = np.random.default_rng(0)
    groups, gaps, worst = [], [], []
    for a in ASSIGNMENTS:
        for metric in ("cost", "log_prob_cf", "validity"):
            for axis, names in AXES.items():
                for g in names:
                    est = float(rng.normal())
                    groups.append(
                        {
                            "assignment": a,
                            "metric": metric,
                            "axis": axis,
                            "group": g,
                            "estimate": est,
                            "lo": est - 0.1,
                            "hi": est + 0.1,
                            "n": 40,
                            "n_used": 39,
                            "privileged_share": 0.5,
                        }
                    )
                first, second = names[0], names[-1]
                gaps.append(
                    {
                        "assignment": a,
                        "metric": metric,
                        "axis": axis,
                        "contrast": f"{first} - {second}",
                        "estimate": 0.2,
                        "lo": None if a == "race" else 0.1,  # a missing bound still draws
                        "hi": 0.3,
                        "change_vs_none": None,
                    }
                )
            worst.append(
                {
                    "assignment": a,
                    "metric": metric,
                    "cell": "non-white female",
                    "runner_up": "white female",
                    "margin": {"estimate": 0.2, "lo": 0.1, "hi": 0.3},
                }
            )
    return {
        "scenario": "loan",
        "method": "test",
        "seed": 0,
        "n_boot": 10,
        "level": 0.95,
        "density_source": "scm",
        "population": {"n": 160, "n_rejected": 2000},
        "groups": groups,
        "gaps": gaps,
        "worst_cell": worst,
    }


def test_figure_has_a_panel_per_metric_and_axis_with_labels() -> None:
    fig = fairness_figure(_result())
    axes = fig.get_axes()
    assert len(axes) == 6
    titles = [ax.get_title() for ax in axes]
    assert any("cost" in t and "gender x race" in t for t in titles)
    assert any("log-density" in t and "race" in t for t in titles)
    tick_labels = [t.get_text() for t in axes[0].get_xticklabels()]
    assert tick_labels[0].startswith("none") and "correlated" in tick_labels[-1]
    gap_texts = [t.get_text() for t in axes[0].texts]
    assert len(gap_texts) == 4 and gap_texts[0].startswith("\u0394 +0.200")
    assert "n/a" in gap_texts[-1]


def test_save_round_trips_the_json_shape(tmp_path: Path) -> None:
    stored = json.loads(json.dumps(_result()))
    out = save_fairness_figure(stored, tmp_path / "sub" / "fig.png")
    img = imread(out)
    assert img.shape[0] > 600 and img.shape[1] > 1000


def test_bad_input_is_named(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="missing gaps"):
        fairness_figure({"groups": [], "worst_cell": []})
    with pytest.raises(ValueError, match="PNG"):
        save_fairness_figure(_result(), tmp_path / "fig.pdf")

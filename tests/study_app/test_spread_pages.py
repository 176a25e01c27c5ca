"""The Tominaga spread table is rendered from the stored seed files, and a misnamed or
mismatched file is an error rather than a silently wrong row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from study_app.cli.spread_pages import (
    PAGE,
    PAPER_RANGE,
    SAMPLING_SEEDS,
    spread_markdown,
    spread_pages,
)


def _seed_file(folder: Path, sd: str, seed: int, f: list[float], holds: bool = True) -> None:
    rows = []
    for i, (model, smooth) in enumerate([("Model-1", "Sparsity"), ("Model-2", "Proximity"),
                                         ("Model-3", "Sparsity"), ("Model-4", "Proximity")]):
        rows += [{"model": model, "variable": smooth, "edf": 1.0 + i, "F": 1.0, "p": 0.2},
                 {"model": model, "variable": "uid (r.i.)", "edf": 260.0, "F": f[i], "p": 0.0},
                 {"model": model, "variable": "uid (r.s.)", "edf": 100.0, "F": 2.0, "p": 0.0}]
    doc = {"rows": [{"seed": seed}],
           "seeds": [{"seed": seed, "table_s2": rows,
                      "findings": [{"finding": k, "holds": holds} for k in (1, 2, 3)]}]}
    (folder / f"sd-intercept-{sd}-seed-{seed}.json").write_text(json.dumps(doc))


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "reproductions" / "tominaga"
    folder.mkdir(parents=True)
    _seed_file(folder, "2.2", 0, [9.0, 8.0, 11.0, 9.5])
    _seed_file(folder, "2.2", 1, [10.0, 9.0, 9.0, 8.6], holds=False)
    (tmp_path / PAGE).write_text("# mgcv\n\nprose\n", encoding="utf-8")
    return tmp_path


def test_each_seed_is_a_row_and_each_spread_is_summarized(docs: Path) -> None:
    page = spread_pages(docs)[PAGE]
    assert page.startswith("# mgcv\n\nprose\n")  # the prose is kept
    assert "| 2.2 / 2.2 | 0 | 9.00 / 8.00 / 11.00 / 9.50 | 260 / 260 / 260 / 260 |" in page
    lo, hi = PAPER_RANGE
    inside = sum(lo <= v <= hi for v in [9.0, 8.0, 11.0, 9.5, 10.0, 9.0, 9.0, 8.6])
    assert (f"random-intercept F mean 9.50 / 8.50 / 10.00 / 9.05, median 9.50 / 8.50 / 10.00 / "
            f"9.05 (the paper's 9.21 / 9.40 / "
            f"10.37 / 8.49); {inside} of 8 F values within the paper's 8.49-10.37; all three "
            f"findings hold at 1 of 2 seed(s)") in page
    assert inside == 6  # 8.0 and 11.0 fall outside


def test_a_misnamed_file_or_a_wrong_seed_is_an_error(docs: Path) -> None:
    folder = docs / "reproductions" / "tominaga"
    (folder / "sd-intercept-two-seed-3.json").write_text("{}")
    with pytest.raises(ValueError, match="not named"):
        spread_pages(docs)
    (folder / "sd-intercept-two-seed-3.json").unlink()
    _seed_file(folder, "2.4", 5, [9.0] * 4)
    (folder / "sd-intercept-2.4-seed-5.json").rename(folder / "sd-intercept-2.4-seed-6.json")
    with pytest.raises(ValueError, match="holds seed 5, its name says 6"):
        spread_pages(docs)


def test_a_file_may_name_the_acceptance_and_the_action_spread_apart(docs: Path) -> None:
    folder = docs / "reproductions" / "tominaga"
    _seed_file(folder, "1.9-2.1", 0, [9.2, 9.4, 10.0, 8.5])
    _seed_file(folder, "2.1", 0, [12.0, 11.0, 10.0, 8.5])
    page = spread_pages(docs)[PAGE]
    rows = [line.split(" | ")[0] for line in page.splitlines() if line.startswith("| 2")
            or line.startswith("| 1")]
    assert rows == ["| 1.9 / 2.1", "| 2.1 / 2.1", "| 2.2 / 2.2", "| 2.2 / 2.2"]  # by spread
    assert "- `sd_intercept` 1.9 / 2.1, seed(s) 0: random-intercept F mean 9.20 / 9.40" in page
    assert "- `sd_intercept` 2.1 / 2.1, seed(s) 0: random-intercept F mean 12.00 / 11.00" in page
    (folder / "sd-intercept-1.9-2.1-2.3-seed-1.json").write_text("{}")
    with pytest.raises(ValueError, match="not named"):
        spread_pages(docs)


def test_no_stored_seed_leaves_the_page_alone(tmp_path: Path) -> None:
    (tmp_path / PAGE).write_text("text\n", encoding="utf-8")
    assert spread_pages(tmp_path) == {}
    assert spread_markdown([]).startswith("| sd_intercept (acceptance / action) | seed |")


def test_the_median_is_the_middle_seed_not_the_mean(tmp_path: Path) -> None:
    folder = tmp_path / "reproductions" / "tominaga"
    folder.mkdir(parents=True)
    for seed, f in enumerate([8.0, 9.0, 19.0]):  # mean 12, median 9
        _seed_file(folder, "2.0", seed, [f] * 4)
    (tmp_path / PAGE).write_text("", encoding="utf-8")
    page = spread_pages(tmp_path)[PAGE]
    assert "F mean 12.00 / 12.00 / 12.00 / 12.00, median 9.00 / 9.00 / 9.00 / 9.00" in page


def test_a_spread_with_enough_seeds_gets_its_sampling_distribution(tmp_path: Path) -> None:
    folder = tmp_path / "reproductions" / "tominaga"
    folder.mkdir(parents=True)
    (tmp_path / PAGE).write_text("", encoding="utf-8")
    for seed in range(SAMPLING_SEEDS - 1):  # 8.00, 8.25, ..., 10.00 in every model
        _seed_file(folder, "2.1", seed, [8.0 + 0.25 * seed] * 4)
    assert "sampling distribution" not in spread_pages(tmp_path)[PAGE]
    _seed_file(folder, "2.1", 9, [10.25] * 4)
    page = spread_pages(tmp_path)[PAGE]
    # numpy's linear percentiles of 8.00..10.25: 8.1125 and 10.1375; the paper's 9.21 is
    # >= 5 of our 10 values, 9.40 >= 6, 10.37 >= all, 8.49 >= 2; 8.50..10.25 lie inside
    # 8.49-10.37 (8 of 10), q^6 = 0.8^6 = 0.26
    assert ("- `sd_intercept` 2.1 / 2.1, sampling distribution over 10 seeds: F 5th-95th "
            "percentile " + " / ".join(["8.11-10.14"] * 4)
            + "; the paper's F at percentile 50 / 60 / 100 / 20 of ours; seeds with all four F "
            "within 8.49-10.37: 8 of 10 (q = 0.800), so six seeds all within: q^6 = 0.26") in page


def test_no_seed_inside_is_bounded_by_the_rule_of_three(tmp_path: Path) -> None:
    folder = tmp_path / "reproductions" / "tominaga"
    folder.mkdir(parents=True)
    (tmp_path / PAGE).write_text("", encoding="utf-8")
    for seed in range(SAMPLING_SEEDS):
        _seed_file(folder, "2.5", seed, [9.0, 9.0, 9.0, 20.0])  # Model-4 always outside
    page = spread_pages(tmp_path)[PAGE]
    # 3 / 10 = 0.3 and 0.3^6 = 0.000729
    assert ("seeds with all four F within 8.49-10.37: none of 10 (q < 0.300 at 95% "
            "confidence, the rule of three), so six seeds all within: q^6 < 0.00073") in page

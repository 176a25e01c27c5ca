"""`recourse-study reproduce TARGET --fast --json` for every target, on CARMA's published
samples (``pytest -m slow``; minutes per target), and the platform's decision model on the
published classifier split.

Runs in ``$RECOURSE_STUDY_SLOW_HOME`` (default: the repository's ``.recourse-study``, where
`recourse-study train` keeps its artifacts), so decision models and flows are built once
(seconds to minutes) and reused; each target's own training (``--fast``: one seed, 20 epochs
per iCARMA model) is cached too. Each target must finish within 5 minutes (its own
``seconds``, measured on the shared 2-core machine, README "Reproducing the papers").
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

import pytest

from engine.papers.paper_values import target_values
from engine.papers.reproduce import TARGET_NAMES
from engine.papers.reproduce_choices import REPRODUCE_SCENARIO
from tests.cli_process import cli_json

REPO = Path(__file__).resolve().parents[2]
FAST_SECONDS = 300
# HARE's Tables 1-4 on the paper's data sets: 3 data sets x up to 6 bases x 2 classifiers
TABLE_FAST_SECONDS = 900
pytestmark = pytest.mark.slow


def _cli(home: Path, *args: str) -> dict:
    code, doc = cli_json(*args, env={"RECOURSE_STUDY_HOME": str(home)}, timeout=24 * 3600)
    assert code == 0, doc
    return doc


@pytest.fixture(scope="module")
def home() -> Path:
    return Path(os.environ.get("RECOURSE_STUDY_SLOW_HOME") or REPO / ".recourse-study")


def test_the_platform_decision_model_is_accurate_on_the_published_classifier_split(home):
    """The acceptance's 0.99 line: our default decision model (``loan-carma``: Adam, cosine)
    on the test split of CARMA's published classifier samples; the labels are the
    deterministic rule, so the Bayes rule is exact (test_published_samples.py checks the
    rule against every published label)."""
    doc = _cli(home, "train", "--scenario", "loan-carma", "--only", "decision")
    assert doc["decision_accuracy"] >= 0.99 and doc["bayes_accuracy"] == 1.0


def test_the_reproductions_decision_model_is_carmas_recipe(home):
    """The reproductions' default world trains CARMA's classifier recipe (SGD): less accurate
    than the platform's model but not saturated on the rejections."""
    doc = _cli(home, "train", "--scenario", REPRODUCE_SCENARIO, "--only", "decision,flow")
    assert 0.88 <= doc["decision_accuracy"] < 0.99
    assert doc["flow_test_nll"] < doc["exact_test_nll"] + 0.25


def _cells(doc: dict, method: str, metric: str) -> list[dict]:
    return [c for c in doc["cells"] if c["method"] == method and c["metric"] == metric]


@cache
def _fast(home: Path, target: str) -> dict:
    """One ``reproduce TARGET --fast`` run per test session, shared by the tests below."""
    return _cli(home, "reproduce", target, "--fast")


# Where our reproduction is known to miss the acceptance's tolerance. Strict: the
# test fails as soon as the row comes within tolerance, so this list cannot go stale.
# (Table 1's two-feature row was one until the Oracle averaged over profile draws: one draw's
# 0.509 was 0.0302 below the paper; the mean over draws is 0.519.)
KNOWN_GAPS: dict[tuple[str, str], str] = {}


def _oracle_rows() -> list:
    rows = []
    for target in ("icarma-table1", "icarma-table2"):
        for r in target_values(target)["rows"]:
            if r["method"] == "oracle":
                gap = KNOWN_GAPS.get((target, r["row"]))
                marks = [pytest.mark.xfail(strict=True, reason=gap)] if gap else []
                rows.append(pytest.param(target, r["row"], marks=marks,
                                         id=f"{target}-{r['row']}-{r.get('cost_profile')}"))
    return rows


@pytest.mark.timeout(900)
@pytest.mark.parametrize(("target", "row"), _oracle_rows())
def test_oracle_validity_is_the_papers_within_tolerance(home, target, row):
    """The Oracle runs in full even with --fast: its validity is the paper's within 0.03."""
    cells = [c for c in _cells(_fast(home, target), "oracle", "validity") if c["row"] == row]
    assert cells and all(c["within"] for c in cells), cells


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("target", TARGET_NAMES)
def test_fast_reproduction(home, target):
    doc = _fast(home, target)
    print(f"{target}: {doc['seconds']:.0f} s, {doc['summary']}")
    assert doc["target"] == target and doc["config"]["fast"] is True
    limit = TABLE_FAST_SECONDS if target.startswith("hare-table") else FAST_SECONDS
    assert doc["seconds"] <= limit, f"{target} took {doc['seconds']:.0f} s"
    assert doc["cells"] and doc["checks"]
    for c in doc["cells"]:
        if c["paper"] is not None and c["ours"] is not None and c["tolerance"] is not None:
            assert c["diff"] == pytest.approx(c["ours"] - c["paper"])
            # every cell against its own value (a HARE range is shown, not judged)
            assert c["within"] == (abs(c["diff"]) <= c["tolerance"] + 1e-12)
    if target.startswith("icarma"):
        assert doc["config"]["repair"] is False
        assert doc["config"]["scenario"] == REPRODUCE_SCENARIO
    if target in ("icarma-table1", "icarma-table2"):
        # the Oracle runs in full even with --fast: plausible by construction (its validity:
        # test_oracle_validity_is_the_papers_within_tolerance)
        assert all(c["ours"] == 1.0 for c in _cells(doc, "oracle", "plausibility"))
    if target == "icarma-table1":
        oracle = [c["ours"] for c in _cells(doc, "oracle", "validity")]
        assert oracle[0] > oracle[1] > oracle[2] > oracle[3]  # all > 3 > 2 > 1 features
    if target.startswith("icarma-table"):
        for c in _cells(doc, "icarma", "validity"):
            assert 0.5 <= c["ours"] <= 1.0 and c["seeds"] == 1
    if target == "icarma-fairness":
        assert {c["metric"] for c in doc["cells"]} == {"cost gap", "log_prob_cf gap"}
    if target.startswith("hare"):
        budget = next(c for c in doc["checks"] if "budget" in c["claim"])
        assert budget["passed"], budget["detail"]
    if target.startswith("hare-table"):
        _check_hare_table(doc)


def _check_hare_table(doc: dict) -> None:
    """The paper's data sets ran (each with its classifiers; the credit column on
    GiveMeSomeCredit itself, no stand-in), no plan changes an immutable feature, and HARE's
    GTD is at most the base's wherever Table 1 is run."""
    assert set(doc["config"]["datasets"]) == {"adult", "compas", "gmsc"}
    credit = [c for c in doc["cells"] if c["setting"]["column"] == "credit"]
    assert credit and all(c["setting"]["scenario"] == "gmsc" and "German" not in c["note"]
                          for c in credit)
    claims = {c["claim"]: c for c in doc["checks"]}
    immutables = claims["every plan respects the immutable features (0 violations)"]
    assert immutables["passed"], immutables["detail"]
    if doc["target"] == "hare-table1":
        clue_adult = [c for c in doc["cells"] if c["setting"]["base"] == "clue"
                      and c["setting"]["column"] == "adult" and "ratio" not in c["metric"]]
        assert all(c["paper"] is None and "reports no number" in c["note"] for c in clue_adult)
        hare = claims["HARE's GTD at most the base's (every data set, base and classifier)"]
        assert hare["passed"], hare["detail"]

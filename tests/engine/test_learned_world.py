"""A data scenario's learned world (`loan-data`): the flow read as an SCM, the Oracle on it,
and the benchmark rows that judge its plans by the true Loan SCM."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from engine.artifacts import load_classifier, load_flow
from engine.flow_scm import FlowSCM, world_model
from engine.papers.learned_world import exact_evaluation
from engine.papers.recourse_benchmark import BenchmarkConfig, rejected_population, run_benchmark
from engine.recourse import build_method
from engine.recourse.base import RecourseContext
from engine.scenarios import get_scenario


@pytest.fixture(scope="module")
def learned(trained_home: Path) -> Path:
    """Quick decision model and flow of loan-data (the test home builds them)."""
    return trained_home


def test_flow_read_as_an_scm_is_the_flow(learned: Path) -> None:
    s = get_scenario("loan-data")
    flow, world = load_flow("loan-data"), world_model(s)
    assert isinstance(world, FlowSCM) and world.parents == s.parents
    x = s.dataset["test"][0][:300]
    u = world.abduct(x)
    assert torch.allclose(u, flow.abduct(x).double(), atol=1e-6)
    assert torch.allclose(world.predict(u), x, atol=1e-4)  # the equations invert abduction
    mask = torch.zeros(300, 7, dtype=torch.bool)
    mask[:, [3, 5]] = True
    values = x + torch.tensor([0, 0, 0, -1.0, 0, 2.0, 0])
    assert torch.allclose(world.counterfactual(x, mask, values),
                          flow.counterfactual(x, mask, values).double(), atol=1e-4)
    assert torch.allclose(world.log_prob(x), flow.log_prob(x).double(), atol=1e-4)
    # gender (a discrete root) keeps its value as noise; its log-mass is the training share
    assert torch.equal(u[:, 0], x[:, 0])


def test_oracle_on_the_learned_world_is_its_exact_optimum(learned: Path) -> None:
    s = get_scenario("loan-data")
    classifier = load_classifier(s)
    ctx = RecourseContext(s, classifier)
    assert ctx.density_source == "flow" and isinstance(ctx.world, FlowSCM)
    oracle = build_method("oracle", ctx, bins=6)
    x = rejected_population(s, classifier, 12)
    batch = oracle.recourse(x, ctx.everybody(12))
    found, cost = oracle.reference_search(x, ctx.everybody(12))
    assert torch.equal(found, batch.found)
    objective = oracle.objective(batch, ctx.everybody(12))
    assert torch.allclose(cost[found], objective[found], rtol=1e-9)
    # in the world it planned on, every plan it found is favourable
    assert bool(batch.valid[batch.found].all())
    judged = exact_evaluation(batch, classifier, s.exact_scm)
    assert 0.0 <= judged["validity_exact"] <= float(batch.found.double().mean())


def test_benchmark_judges_learned_plans_by_the_truth(learned: Path) -> None:
    s = get_scenario("loan-data")
    classifier = load_classifier(s)
    config = BenchmarkConfig(methods=("oracle",), constraints=("all",), n=15, bins=6,
                             speedup_sample=1)
    rows = run_benchmark(s, classifier, config)
    assert [r["world"] for r in rows] == ["learned", "exact"]
    learned_row, exact_row = rows
    assert learned_row["density_source"] == "flow" and exact_row["density_source"] == "scm"
    assert learned_row["validity_exact"] is not None
    # the exact-world Oracle's plans are valid in the true world by construction
    assert exact_row["validity_exact"] == pytest.approx(exact_row["validity"])
    # judging the learned plans by the truth: recompute one figure by hand
    x = rejected_population(s, classifier, 15)
    oracle = build_method("oracle", RecourseContext(s, classifier), bins=6)
    from engine.papers.recourse_benchmark import constraint_profiles

    batch = oracle.recourse(x, constraint_profiles(s, "all", config, 15))
    truth = get_scenario("loan").scm
    x_cf = truth.counterfactual(batch.x, batch.action_mask,
                                torch.where(batch.action_mask, batch.action_values, batch.x))
    ok = classifier.decision(x_cf.float()).bool() & batch.found
    assert learned_row["validity_exact"] == pytest.approx(float(ok.double().mean()))

"""Shift actions, the gradient base generators, HARE / Multi-HARE with simulated people, and
the resumable interactive session (quick trained decision model)."""

from __future__ import annotations

import json

import pytest
import torch

from engine import artifacts
from engine.papers.recourse_benchmark import rejected_population
from engine.preferences import sample_profiles
from engine.recourse import get_method
from engine.recourse.base import RecourseContext
from engine.recourse.hare.config import HareConfig
from engine.recourse.hare.method import Hare
from engine.recourse.hare.session import HareSession
from engine.recourse.shift_actions import allowed_mask, realize, shift_of
from engine.scenarios import get_scenario
from engine.synthetic.hare_people import SimulatedPeople

N = 40


@pytest.fixture(scope="module")
def ctx(trained_home):
    loan = get_scenario("loan")
    return RecourseContext(loan, artifacts.load_decision_model("loan"))


@pytest.fixture(scope="module")
def people(ctx):
    x = rejected_population(ctx.scenario, ctx.classifier, N).double()
    profiles = sample_profiles(ctx.scenario.feature_names, ctx.scenario.actionable, len(x),
                               distribution="uniform", n_actionable=None,
                               elicitation="ranking", seed=3)
    return x, profiles


class _GenericWorld:
    """The exact SCM without its one-pass shift method (the generic realize path)."""

    def __init__(self, scm):
        self.scm = scm

    def counterfactual(self, x, mask, values):
        return self.scm.counterfactual(x, mask, values)

    def log_prob(self, x):
        return self.scm.log_prob(x)


def test_zero_shift_is_no_action_and_shift_of_inverts_realize(ctx, people):
    x, profiles = people
    allowed = allowed_mask(ctx, profiles.hard_mask)
    r0 = realize(ctx, x, torch.zeros_like(x), allowed)
    assert not r0.action_mask.any()
    torch.testing.assert_close(r0.x_cf, x)
    z = torch.randn(x.shape, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    r = realize(ctx, x, 0.05 * z, allowed)
    assert not (r.action_mask & ~allowed).any()
    back = shift_of(ctx, x, r.action_mask, r.action_values)
    torch.testing.assert_close(realize(ctx, x, back, allowed).x_cf, r.x_cf)


def test_one_pass_and_generic_realize_agree(ctx, people):
    x, profiles = people
    allowed = allowed_mask(ctx, profiles.hard_mask)
    z = 0.1 * torch.randn(x.shape, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    generic = RecourseContext(ctx.scenario, ctx.classifier, world=_GenericWorld(ctx.scenario.scm))
    a, b = realize(ctx, x, z, allowed), realize(generic, x, z, allowed)
    torch.testing.assert_close(a.x_cf, b.x_cf)
    assert torch.equal(a.action_mask, b.action_mask)


@pytest.mark.parametrize("name", ["wachter", "gs"])
def test_gradient_bases_respect_constraints_and_find_recourse(ctx, people, name):
    x, profiles = people
    batch = get_method(name, ctx).recourse(x, profiles)
    assert int(batch.violations.sum()) == 0
    moved = (batch.x_cf != batch.x) & ~batch.action_mask
    immutable = list(ctx.scenario.immutable)
    assert not (batch.x_cf[:, immutable] != x[:, immutable]).any()
    assert not moved[:, immutable].any()
    assert float(batch.valid.double().mean()) >= 0.8
    assert bool((batch.valid <= batch.found).all())  # valid plans are found plans


def test_growing_spheres_is_deterministic_for_a_seed(ctx, people):
    x, profiles = people
    a = get_method("gs", ctx, seed=5).recourse(x[:10], profiles[torch.arange(10)])
    b = get_method("gs", ctx, seed=5).recourse(x[:10], profiles[torch.arange(10)])
    assert torch.equal(a.action_values, b.action_values)


def test_hare_moves_toward_the_hidden_ideal_without_violations(ctx, people):
    x, profiles = people
    base = get_method("gs", ctx)
    plans = base.recourse(x, profiles)
    sim = SimulatedPeople.draw(ctx, x, allowed_mask(ctx, profiles.hard_mask), "far", seed=0)
    ok = sim.found & plans.valid
    base_gtd = float(sim.gtd(plans.x_cf)[ok].mean())
    runs = {}
    for t, cal in [(1, "all"), (3, "all"), (1, "winner")]:
        hare = Hare(ctx, base, budget=15, iterations=t, calibrate=cal, steps=30)
        run = hare.run(x, profiles, sim, base=plans)
        assert int(run.final.violations.sum()) == 0
        assert bool((run.final.valid | ~plans.valid).all())  # never loses a valid plan
        runs[(t, cal)] = float(sim.gtd(run.final.x_cf)[ok].mean())
        # comparisons and acceptance questions together: T (B // T - 1) + T = 15 for
        # B = 15 and T in (1, 3); whoever sees only favourable pairs is asked all of them
        assert int(run.state.asked.max()) <= 15
        if t == 1 and cal == "all":
            assert int(run.state.asked.max()) == 15
    assert runs[(1, "all")] <= 0.5 * base_gtd
    assert runs[(1, "all")] < runs[(1, "winner")]


def test_hare_needs_people_and_a_base(ctx, people):
    x, profiles = people
    with pytest.raises(ValueError, match="base"):
        Hare(ctx, None)
    with pytest.raises(ValueError, match="wraps a base method itself"):
        Hare(ctx, "hare")
    hare = Hare(ctx, "gs", budget=6)
    assert hare.capabilities.interactive and hare.query_budget == 6
    with pytest.raises(ValueError, match="answered_by"):
        hare.recourse(x, profiles)
    with pytest.raises(ValueError, match="budget must be at least"):
        HareConfig(budget=2, iterations=5)


def test_interactive_recourse_is_the_run_with_the_bound_people(ctx, people):
    """``answered_by(people).recourse`` has every method's signature and gives the plans of a
    batch run with the same people (the method itself stays unbound)."""
    x, profiles = people
    allowed = allowed_mask(ctx, profiles.hard_mask)
    sim = SimulatedPeople.draw(ctx, x[:8], allowed[:8], "near", seed=2)
    hare = Hare(ctx, "gs", budget=6)
    bound = hare.answered_by(sim)
    batch = bound.recourse(x[:8], profiles[:8])
    ref = hare.run(x[:8], profiles[:8], sim).final
    torch.testing.assert_close(batch.x_cf, ref.x_cf)
    assert batch.method == "hare" and len(batch) == 8 and hare.people is None


def _scripted_answers(session, sim, names):
    q = session.next_query()
    shown = [torch.tensor([[o["x_cf"][f] for f in names]]) for o in q.options]
    if q.kind == "compare":
        session.answer(int(sim.compare(shown[0], shown[1])[0]))
    elif q.kind == "accept":
        session.accept(bool(sim.accept(shown[0])[0]))
    return q


def test_session_resumes_exactly_after_every_answer(ctx, people):
    x, profiles = people
    names = ctx.scenario.feature_names
    hare = Hare(ctx, "gs", budget=8, iterations=2, steps=20)
    i = next(i for i in range(N) if int(profiles.hard_mask[i].sum()) >= 2)
    sim = SimulatedPeople.draw(ctx, x[i : i + 1], allowed_mask(ctx, profiles.hard_mask[i : i + 1]),
                               "far", seed=1, accept_tol=0.0)
    straight = HareSession.start(hare, x[i : i + 1], profiles[i], seed=7)
    while _scripted_answers(straight, sim, names).kind != "done":
        pass
    resumed = HareSession.start(hare, x[i : i + 1], profiles[i], seed=7)
    text = resumed.to_json()
    steps = 0
    while True:
        before = resumed.next_query()
        again = HareSession.from_json(text, hare).next_query()
        assert json.dumps(before.options) == json.dumps(again.options)  # same next pair
        q = _scripted_answers(HareSession.from_json(text, hare), sim, names)
        if q.kind == "done":
            break
        session = HareSession.from_json(text, hare)
        _scripted_answers(session, sim, names)
        text = session.to_json()
        resumed = HareSession.from_json(text, hare)
        steps += 1
    assert steps >= 4
    assert resumed.final() == straight.final()
    assert steps <= 8  # comparisons and the acceptance questions within the budget 8


def test_session_rejects_wrong_answers_and_bad_state(ctx, people):
    x, profiles = people
    hare = Hare(ctx, "gs", budget=4, iterations=1, steps=5)
    i = next(i for i in range(N) if int(profiles.hard_mask[i].sum()) >= 2)
    s = HareSession.start(hare, x[i : i + 1], profiles[i], seed=0)
    q = s.next_query()
    if q.kind == "compare":
        with pytest.raises(ValueError, match="0 or 1"):
            s.answer(2)
        with pytest.raises(ValueError, match="acceptance"):
            s.accept(True)
    with pytest.raises(ValueError, match="not valid JSON"):
        HareSession.from_json("{nope", hare)
    with pytest.raises(ValueError, match="not a HARE session"):
        HareSession.from_json(json.dumps({"format": "other"}), hare)
    with pytest.raises(ValueError, match="one person"):
        HareSession.start(hare, x[:2], profiles[torch.arange(2)], seed=0)


class _Never:
    """Prefers the challenger and never accepts: every question the machine may ask, asked."""

    def compare(self, left, right):
        return torch.ones(left.shape[0], dtype=torch.long)

    def accept(self, profile):
        return torch.zeros(profile.shape[0], dtype=torch.bool)


@pytest.mark.parametrize(
    ("budget", "t", "keep_incumbent", "final_accept"),
    [(30, 5, False, "ask"), (30, 1, False, "ask"), (10, 3, True, "ask"), (30, 5, False, "skip")],
)
def test_comparisons_and_accept_questions_stay_within_the_budget(
    ctx, people, budget, t, keep_incumbent, final_accept
):
    """Per iteration k = B // T contenders: k - 1 comparisons, then one accept question (the
    paper's Algorithm 4): at most T k <= B questions; under ``final_accept="skip"`` none after
    the last tournament, at most T (k - 1) + T - 1 <= B - 1."""
    x, profiles = people
    x, profiles = x[:8], profiles[torch.arange(8)]
    hare = Hare(ctx, "gs", budget=budget, iterations=t, steps=10,
                keep_incumbent=keep_incumbent, final_accept=final_accept)
    run = hare.run(x, profiles, _Never())
    k = budget // t
    most = t * (k - 1) + (t if final_accept == "ask" else t - 1)
    assert int(run.state.asked.max()) <= most <= budget
    # with every plan favourable, everybody is asked exactly that many questions
    yes = RecourseContext(ctx.scenario, _ApprovesAll())
    full = Hare(yes, "gs", budget=budget, iterations=t, steps=2, bisections=2,
                keep_incumbent=keep_incumbent, final_accept=final_accept).run(
                    x, profiles, _Never())
    assert full.state.asked.tolist() == [most] * len(x)


class _ApprovesAll:
    def predict_proba(self, x):
        return torch.full((x.shape[0],), 0.9)

    def decision(self, x):
        return torch.ones(x.shape[0], dtype=torch.bool)


def test_the_incumbent_is_contender_zero_unless_dropped(ctx, people):
    """As the paper's released code runs (the default), the base plan, calibrated, is
    contender 0 beside the new candidates; keep_incumbent=False (Algorithm 4 as written)
    samples candidates around it but leaves it out of the tournament."""
    from engine.recourse.hare.search import boundary_point_search

    x, profiles = people
    x, profiles = x[:4], profiles[torch.arange(4)]
    base = get_method("gs", ctx)
    plans = base.recourse(x, profiles)
    for keep in (False, True):
        hare = Hare(ctx, base, budget=6, iterations=1, steps=5, keep_incumbent=keep)
        state = hare.start(x, profiles, plans, seed=0)
        assert state.contenders.shape[1] == 6
        z0, _ = boundary_point_search(ctx, state.x, state.incumbent, state.allowed)
        assert torch.equal(state.contenders[:, 0], z0) is keep


def test_a_boundary_margin_keeps_calibrated_plans_approved(ctx, people):
    """BoundaryPointSearch ends on the boundary (logit about 0, float32 noise decides); with
    ``margin`` every calibrated favourable point keeps logit >= margin."""
    from engine.recourse.hare.search import boundary_point_search, random_directions
    from engine.recourse.shift_actions import favourable_logit

    x, profiles = people
    allowed = allowed_mask(ctx, profiles.hard_mask)
    cand = random_directions(allowed, 1, torch.Generator().manual_seed(0))[:, 0] * 2.0
    logits = {}
    for m in (0.0, 0.05):
        z, valid = boundary_point_search(ctx, x, cand, allowed, margin=m)
        assert bool(valid.any())
        logits[m] = favourable_logit(ctx, realize(ctx, x, z, allowed).x_cf)[valid]
    assert float(logits[0.0].abs().max()) < 0.05  # the paper's test: on the boundary
    assert float(logits[0.05].min()) >= 0.05
    with pytest.raises(ValueError, match="boundary_margin"):
        HareConfig(boundary_margin=-1.0)

"""Actionability profiles: elicitation -> scores, scores -> weights/priors, samplers."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from engine.preferences import (
    COST_PROFILE_EXPONENTS,
    ActionabilityProfiles,
    CostProfile,
    all_actionable,
    profiles_from_elicitation,
    sample_profiles,
)
from engine.scenarios import get_scenario

LOAN = get_scenario("loan")
NAMES, GLOB = LOAN.feature_names, LOAN.actionable
L, D, INC, S = 3, 4, 5, 6
NON_CONSTANT = ("concave", "linear", "convex")


def _likert(scores: dict[str, int | None]) -> ActionabilityProfiles:
    return profiles_from_elicitation(NAMES, GLOB, [scores], "likert")


# ---- score -> weight / prior ---------------------------------------------------------------
@pytest.mark.parametrize("profile", NON_CONSTANT)
@pytest.mark.parametrize("elicitation", ["ranking", "likert"])
def test_weights_rise_and_priors_fall_with_difficulty(profile, elicitation):
    """For every non-constant profile: a harder score never costs less nor gets more prior."""
    cp = CostProfile(profile)
    # ranks 1..4, or Likert difficulties 1..4 (K = 4 for Loan)
    answer = {"loan_amount": 1, "loan_duration": 2, "income": 3, "savings": 4}
    p = profiles_from_elicitation(NAMES, GLOB, [answer], elicitation)  # type: ignore[arg-type]
    w = p.weights(cp)[0, list(GLOB)]
    pi = p.priors(cp)[0, list(GLOB)]
    assert bool((w[1:] > w[:-1]).all()), w
    assert bool((pi[1:] < pi[:-1]).all()), pi
    assert float(w[0]) == 1.0 and float(w[-1]) == pytest.approx(1.0 + cp.a)
    assert float(pi[0]) == pytest.approx(cp.pi_max) and float(pi[-1]) == pytest.approx(cp.pi_min)


def test_constant_profile_ignores_scores():
    p = sample_profiles(NAMES, GLOB, 50, n_actionable=None, elicitation="likert", seed=1)
    cp = CostProfile("constant")
    assert torch.equal(p.weights(cp), torch.ones_like(p.scores))
    pi = p.priors(cp)
    assert bool((pi[p.hard_mask] == cp.pi_flat).all())
    assert bool((pi[~p.hard_mask] == 0).all())


def test_profile_shapes_order_concave_linear_convex():
    """At an interior score the concave penalty is the largest, the convex one the smallest."""
    p = _likert({"loan_amount": 1, "loan_duration": 2, "income": 3, "savings": 4})
    w = {name: p.weights(CostProfile(name))[0] for name in NON_CONSTANT}
    pi = {name: p.priors(CostProfile(name))[0] for name in NON_CONSTANT}
    for j in (D, INC):
        assert w["concave"][j] > w["linear"][j] > w["convex"][j]
        assert pi["concave"][j] < pi["linear"][j] < pi["convex"][j]
    for j in (L, S):  # the end points agree
        assert w["concave"][j] == pytest.approx(float(w["convex"][j]))


def test_weights_are_monotone_over_random_profiles():
    """Within each person, ordering features by score orders their weights the same way."""
    for elicitation in ("ranking", "likert"):
        p = sample_profiles(NAMES, GLOB, 300, elicitation=elicitation, seed=7)  # type: ignore[arg-type]
        for name in NON_CONSTANT:
            w = p.weights(CostProfile(name))
            pi = p.priors(CostProfile(name))
            for i in range(len(p)):
                act = p.hard_mask[i].nonzero().flatten()
                s = p.scores[i, act]
                harder = s[:, None] > s[None, :]
                assert bool((w[i, act][:, None] > w[i, act][None, :])[harder].all())
                assert bool((pi[i, act][:, None] < pi[i, act][None, :])[harder].all())
                same = s[:, None] == s[None, :]
                assert bool((w[i, act][:, None] == w[i, act][None, :])[same].all())


def test_non_actionable_features_get_no_prior():
    p = _likert({"loan_amount": 2, "loan_duration": None, "income": 1, "savings": None})
    for name in COST_PROFILE_EXPONENTS:
        pi = p.priors(CostProfile(name))[0]
        assert float(pi[D]) == 0.0 and float(pi[S]) == 0.0
        assert float(pi[L]) > 0 and float(pi[INC]) > 0


def test_single_actionable_feature_is_easiest():
    p = profiles_from_elicitation(NAMES, GLOB, [{"income": 1}, {}], "ranking")
    assert float(p.relative_difficulty()[0, INC]) == 0.0
    assert float(p.weights(CostProfile("convex"))[0, INC]) == 1.0
    # one ranked feature (or none): a scale of one level, the others at levels + 1
    assert p.levels.dtype == torch.float64 and p.levels.tolist() == [1.0, 1.0]
    assert p.scores[:, list(GLOB)].tolist() == [[2.0, 2.0, 1.0, 2.0], [2.0] * 4]


def test_cost_profile_validation():
    with pytest.raises(ValueError, match="unknown cost profile"):
        CostProfile("steep")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="pi_min"):
        CostProfile("linear", pi_min=0.6, pi_max=0.5)
    with pytest.raises(ValueError, match="slope"):
        CostProfile("linear", a=-1.0)


# ---- elicitation -> scores -------------------------------------------------------------------
def test_ranking_answer_to_scores():
    p = profiles_from_elicitation(
        NAMES, GLOB, [{"loan_amount": 2, "income": 1, "savings": None}], "ranking"
    )
    assert p.hard_mask[0].tolist() == [False, False, False, True, False, True, False]
    assert float(p.levels[0]) == 2
    assert float(p.scores[0, INC]) == 1 and float(p.scores[0, L]) == 2
    assert float(p.scores[0, D]) == 3 and float(p.scores[0, S]) == 3  # reserved K + 1
    assert p.least_preferred()[0].tolist() == [False, False, False, True, False, False, False]


def test_binary_answer_means_indifference():
    p = profiles_from_elicitation(
        NAMES, GLOB, [{"loan_amount": 1, "loan_duration": 0, "income": 1, "savings": 1}], "binary"
    )
    assert p.hard_mask[0, [L, D, INC, S]].tolist() == [True, False, True, True]
    for name in COST_PROFILE_EXPONENTS:
        assert bool((p.weights(CostProfile(name))[0, [L, INC, S]] == 1).all())
    assert int(p.least_preferred()[0].sum()) == 3  # all tie
    # binary: a scale of one level; scores 1 where changeable, 2 (levels + 1) elsewhere
    assert p.levels.tolist() == [1.0] and p.elicitation == "binary"
    assert p.scores.dtype == torch.float64
    assert p.scores[0, [L, D, INC, S]].tolist() == [1.0, 2.0, 1.0, 1.0]


@pytest.mark.parametrize(
    ("answer", "elicitation", "match"),
    [
        ({"loan_amount": 1, "income": 1}, "ranking", "ranks must be"),
        ({"loan_amount": 1, "income": 3}, "ranking", "ranks must be"),
        ({"loan_amount": 5}, "likert", "likert scores must be 1..4"),
        ({"age": 1}, "likert", "not globally actionable"),
        ({"education": 1}, "binary", "not globally actionable"),
        ({"income": 1, "education": 1, "age": 1}, "binary",
         r"^answer 0: not globally actionable feature\(s\): age, education$"),
        ({"income": 1, "savings": 1}, "ranking",
         r"^answer 0: ranks must be 1..2 each used once, got \[1, 1\]$"),
        ({"income": 5, "savings": 0}, "likert", r"^answer 0: likert scores must be 1..4 \(income\)$"),
        ({"income": 5, "savings": 7}, "likert",
         r"^answer 0: likert scores must be 1..4 \(income, savings\)$"),
    ],
)
def test_bad_answers_raise(answer, elicitation, match):
    with pytest.raises(ValueError, match=match):
        profiles_from_elicitation(NAMES, GLOB, [answer], elicitation)


def test_unknown_elicitation_raises():
    with pytest.raises(ValueError, match="unknown elicitation"):
        profiles_from_elicitation(NAMES, GLOB, [{}], "slider")  # type: ignore[arg-type]


# ---- samplers --------------------------------------------------------------------------------
@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_sampled_rankings_are_bijections(k):
    p = sample_profiles(NAMES, GLOB, 200, n_actionable=k, elicitation="ranking", seed=k)
    assert bool((p.n_actionable == k).all())
    assert not bool(p.hard_mask[:, [0, 1, 2]].any())
    for i in range(len(p)):
        ranks = sorted(p.scores[i][p.hard_mask[i]].tolist())
        assert ranks == list(range(1, k + 1))
        rest = p.scores[i, list(GLOB)][~p.hard_mask[i, list(GLOB)]]
        assert bool((rest == k + 1).all())
    assert bool((p.levels == k).all())


def test_likert_samples_stay_on_the_scale():
    """Our earlier ("sorted") sampler: |F_i| uniform on 1..4, sorted scores."""
    p = sample_profiles(NAMES, GLOB, 300, n_actionable=None, elicitation="likert",
                        score_sampling="sorted", seed=3)
    s = p.scores[p.hard_mask]
    assert bool(((s >= 1) & (s <= 4)).all())
    assert bool((p.scores[:, list(GLOB)][~p.hard_mask[:, list(GLOB)]] == 5).all())
    assert set(p.n_actionable.tolist()) == {1, 2, 3, 4}


def test_paper_likert_scores_are_iid_uniform_with_a_cannot_level():
    """The paper's sampler (App. C.1): hard + soft = every feature uniform on 1..5 on its own,
    5 = cannot change; so |F_i| ~ Binomial(4, 0.8) and someone may have nothing to change."""
    n = 20_000
    p = sample_profiles(NAMES, GLOB, n, n_actionable=None, elicitation="likert", seed=4)
    sc = p.scores[:, list(GLOB)]
    for level in range(1, 6):
        assert bool(((sc == level).double().mean(dim=0) - 0.2).abs().max() < 0.012)
    assert torch.equal(p.hard_mask[:, list(GLOB)], sc <= 4)
    assert bool((p.levels == 4).all())
    share = torch.bincount(p.n_actionable.long(), minlength=5).double() / n
    expected = torch.tensor([0.0016, 0.0256, 0.1536, 0.4096, 0.4096], dtype=torch.float64)
    assert bool(((share - expected).abs() < 0.012).all())
    corr = torch.corrcoef(sc.T)
    assert bool((corr - torch.eye(4, dtype=torch.float64)).abs().max() < 0.03)  # independent
    soft = sample_profiles(NAMES, GLOB, n, n_actionable=4, elicitation="likert", seed=5)
    ssc = soft.scores[:, list(GLOB)]
    assert bool(soft.hard_mask[:, list(GLOB)].all()) and bool(((ssc >= 1) & (ssc <= 4)).all())
    assert bool(((ssc == 4).double().mean(dim=0) - 0.25).abs().max() < 0.015)
    with pytest.raises(ValueError, match="score sampling"):
        sample_profiles(NAMES, GLOB, 3, elicitation="likert", score_sampling="sorted-ish")


def test_sampling_is_seeded():
    a = sample_profiles(NAMES, GLOB, 50, seed=11)
    b = sample_profiles(NAMES, GLOB, 50, seed=11)
    c = sample_profiles(NAMES, GLOB, 50, seed=12)
    assert torch.equal(a.scores, b.scores) and torch.equal(a.hard_mask, b.hard_mask)
    assert not torch.equal(a.scores, c.scores)
    g = np.random.default_rng(5)
    assert len(sample_profiles(NAMES, GLOB, 10, seed=g)) == 10


def test_biased_distributions_favour_their_features():
    """co puts loan amount and income on top more often than rco does, and vice versa."""
    co = sample_profiles(NAMES, GLOB, 4000, distribution="co", n_actionable=2, seed=0)
    rco = sample_profiles(NAMES, GLOB, 4000, distribution="rco", n_actionable=2, seed=0)
    uni = sample_profiles(NAMES, GLOB, 4000, distribution="uniform", n_actionable=2, seed=0)
    share = {k: p.hard_mask.double().mean(dim=0) for k, p in (("co", co), ("rco", rco), ("u", uni))}
    for j in (L, INC):
        assert share["co"][j] > share["u"][j] + 0.1 > share["rco"][j] + 0.2
    for j in (D, S):
        assert share["rco"][j] > share["u"][j] + 0.1 > share["co"][j] + 0.2
    assert bool(((share["u"][list(GLOB)] - 0.5).abs() < 0.05).all())


def test_sampler_rejects_bad_arguments():
    with pytest.raises(ValueError, match="unknown preference distribution"):
        sample_profiles(NAMES, GLOB, 3, distribution="skewed")
    with pytest.raises(ValueError, match="n_actionable"):
        sample_profiles(NAMES, GLOB, 3, n_actionable=5)
    with pytest.raises(ValueError, match="globally actionable"):
        sample_profiles(NAMES, (), 3)
    # the whole messages: what was wrong and what is allowed
    for kwargs, message in (
        ({"distribution": "skewed"}, r"^unknown preference distribution 'skewed'; expected one "
                                     r"of uniform, co, rco, privileged, non_privileged$"),
        ({"score_sampling": "sorted-ish"},
         r"^unknown score sampling 'sorted-ish'; expected one of iid, sorted$"),
        ({"elicitation": "slider"},
         r"^unknown elicitation 'slider'; expected one of \('binary', 'ranking', 'likert'\)$"),
    ):
        with pytest.raises(ValueError, match=message):
            sample_profiles(NAMES, GLOB, 3, **kwargs)
    for make in (lambda: sample_profiles(NAMES, (), 3), lambda: all_actionable(NAMES, (), 3),
                 lambda: profiles_from_elicitation(NAMES, (), [{}], "binary")):
        with pytest.raises(ValueError,
                           match=r"^a scenario needs at least one globally actionable feature$"):
            make()


def test_preference_orders_are_plackett_luce_draws():
    """A person's first choice is feature j with probability w_j / sum(w) (co: loan amount
    and income weigh FAVOURED_WEIGHT, the others 1), and both favoured features lead with
    probability (40/42)(20/22) (module docstring)."""
    from engine.preferences import FAVOURED_WEIGHT

    n = 40_000
    p = sample_profiles(NAMES, GLOB, n, distribution="co", n_actionable=4, seed=6)
    first = (p.scores[:, list(GLOB)] == 1).double().mean(dim=0)
    w = torch.tensor([FAVOURED_WEIGHT, 1.0, FAVOURED_WEIGHT, 1.0], dtype=torch.float64)
    share = w / w.sum()  # 20/42 and 1/42
    assert bool(((first - share).abs() < torch.tensor([0.01, 0.005, 0.01, 0.005])).all()), first
    lead = (p.scores[:, [L, INC]] <= 2).all(dim=1).double().mean()
    assert abs(float(lead) - (40 / 42) * (20 / 22)) < 0.01


def test_numbers_of_actionable_features_and_sorted_scores_are_uniform():
    """Left to chance, |F_i| is uniform on 1..|F_g|; the sorted Likert sampler hands out
    uniform scores (one actionable feature: its score uniform on 1..K)."""
    n = 20_000
    r = sample_profiles(NAMES, GLOB, n, elicitation="ranking", seed=8)
    share = torch.bincount(r.n_actionable.long(), minlength=5)[1:].double() / n
    assert bool(((share - 0.25).abs() < 0.015).all()), share
    s = sample_profiles(NAMES, GLOB, n, n_actionable=1, elicitation="likert",
                        score_sampling="sorted", seed=9)
    score = s.scores[s.hard_mask]
    assert len(score) == n
    share = torch.bincount(score.long(), minlength=5)[1:].double() / n
    assert bool(((share - 0.25).abs() < 0.015).all()), share


def test_all_actionable_and_indexing():
    p = all_actionable(NAMES, GLOB, 5)
    assert p.elicitation == "binary" and p.levels.dtype == p.scores.dtype == torch.float64
    assert p.levels.tolist() == [1.0] * 5
    assert p.scores[0].tolist() == [2.0, 2.0, 2.0, 1.0, 1.0, 1.0, 1.0]
    assert bool(p.hard_mask[:, list(GLOB)].all()) and not bool(p.hard_mask[:, :3].any())
    w = p.weights(CostProfile("convex"))
    assert bool((w[:, list(GLOB)] == 1).all())  # indifference: every actionable feature easiest
    assert len(p[1:3]) == 2 and len(p[[0, 4]]) == 2 and len(p[2]) == 1
    assert torch.equal(p[torch.tensor([True, False, True, False, False])].scores, p.scores[[0, 2]])


def test_indexing_concat_and_plain_lists_round_trip():
    p = sample_profiles(NAMES, GLOB, 6, distribution="uniform", n_actionable=None,
                        elicitation="ranking", seed=2)
    # an int is a batch of one: that person's rows, -1 the last person
    for i in (0, 3, -1):
        one = p[i]
        assert len(one) == 1 and one.elicitation == "ranking"
        assert torch.equal(one.hard_mask, p.hard_mask[[i]])
        assert torch.equal(one.scores, p.scores[[i]]) and torch.equal(one.levels, p.levels[[i]])
    assert torch.equal(p[[4, 1]].scores, p.scores[[4, 1]])
    assert torch.equal(p[torch.tensor([5, 0])].levels, p.levels[[5, 0]])
    assert torch.equal(p[2:5].hard_mask, p.hard_mask[2:5])
    both = ActionabilityProfiles.concat([p[0:2], p[4:6]])
    assert len(both) == 4 and both.elicitation == "ranking"
    for field in ("hard_mask", "scores", "levels"):
        assert torch.equal(getattr(both, field), getattr(p, field)[[0, 1, 4, 5]])
    one = ActionabilityProfiles.concat([p[2:4]])  # a list of one batch (one chunk)
    assert one.elicitation == "ranking" and torch.equal(one.scores, p.scores[2:4])
    plain = p.to_lists()
    assert set(plain) == {"hard_mask", "scores", "levels", "elicitation"}
    assert plain["hard_mask"] == p.hard_mask.tolist() and plain["levels"] == p.levels.tolist()
    back = ActionabilityProfiles.from_lists(**plain)
    assert back.hard_mask.dtype == torch.bool and back.scores.dtype == torch.float64
    assert back.levels.dtype == torch.float64 and back.elicitation == "ranking"
    for field in ("hard_mask", "scores", "levels"):
        assert torch.equal(getattr(back, field), getattr(p, field))


def test_least_preferred_is_the_highest_score_with_ties():
    hard = torch.tensor([[False, True, True, True], [False, True, True, False],
                         [False, False, False, True]])
    scores = torch.tensor([[5.0, 1.0, 3.0, 3.0], [9.0, 2.0, 1.0, 9.0], [1.0, 1.0, 1.0, 1.0]],
                          dtype=torch.float64)
    p = ActionabilityProfiles(hard, scores, torch.tensor([3.0, 2.0, 1.0], dtype=torch.float64),
                              "ranking")
    # a non-actionable feature's score never counts (feature 0: 5; feature 3 of person 2: 9)
    assert p.least_preferred().tolist() == [[False, False, True, True],
                                            [False, True, False, False],
                                            [False, False, False, True]]
    assert p.n_actionable.tolist() == [3, 2, 1]


def test_cost_profile_bounds_are_inclusive_and_messages_exact():
    # 0 <= pi_min <= pi_max <= 1 and a >= 0, every bound inclusive
    assert CostProfile("linear", pi_min=0.0, pi_max=0.0, a=0.0).a == 0.0
    assert CostProfile("linear", pi_min=1.0, pi_max=1.0, a=0.5).pi_max == 1.0
    with pytest.raises(ValueError, match=r"^cost profile priors need 0 <= pi_min <= pi_max "
                       r"<= 1$"):
        CostProfile("linear", pi_max=1.5)
    with pytest.raises(ValueError, match=r"^cost profile weight slope a must be >= 0$"):
        CostProfile("linear", a=-0.5)
    with pytest.raises(ValueError, match=r"^unknown cost profile 'steep'; expected one of "
                       r"constant, concave, linear, convex$"):
        CostProfile("steep")  # type: ignore[arg-type]


def test_weights_off_the_hard_mask_and_a_two_level_scale():
    """A feature the person cannot change weighs 1 + a (the hardest); on a two-level scale
    score 2 is the hardest (r = 1), score 1 the easiest (r = 0)."""
    p = ActionabilityProfiles.from_lists(
        [[False, False, False, True, True, False, False]],
        [[0, 0, 0, 2, 1, 3, 3]], [2], "likert")
    torch.testing.assert_close(p.relative_difficulty()[0, [L, D]],
                               torch.tensor([1.0, 0.0], dtype=torch.float64))
    w = p.weights(CostProfile("linear", a=3.0))
    assert w[0, [L, D, INC, S]].tolist() == [4.0, 1.0, 4.0, 4.0]


def test_sampled_binary_and_sorted_likert_scores():
    b = sample_profiles(NAMES, GLOB, 50, elicitation="binary", seed=2)
    assert b.elicitation == "binary" and b.levels.tolist() == [1.0] * 50
    assert bool((b.scores[b.hard_mask] == 1).all())
    assert bool((b.scores[:, list(GLOB)][~b.hard_mask[:, list(GLOB)]] == 2).all())
    # the sorted sampler reaches both ends of the 1..K scale
    p = sample_profiles(NAMES, GLOB, 300, elicitation="likert", score_sampling="sorted",
                        likert_levels=5, seed=3)
    s = p.scores[p.hard_mask]
    assert s.min().item() == 1 and s.max().item() == 5
    r = sample_profiles(NAMES, GLOB, 300, elicitation="ranking", seed=3)
    assert set(r.n_actionable.tolist()) == {1, 2, 3, 4}  # |F_i| uniform on 1..4
    # the default seed is 0
    assert torch.equal(sample_profiles(NAMES, GLOB, 20).scores,
                       sample_profiles(NAMES, GLOB, 20, seed=0).scores)

"""The exact Loan SCM: counterfactual identities, interventions, exact density, bad input.

The density test recomputes log p(x) independently of engine.scm: the structural equations
are re-implemented here in numpy, the exogenous densities come from scipy.stats and the
Jacobian of the education equation from a finite difference.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy import stats
from scipy.special import expit, logit

from engine.scenarios import UnknownScenarioError, get_scenario
from engine.scm import WorldModelInputError

G, A, E, L, D, INC, S = range(7)


@pytest.fixture(scope="module")
def x(loan):
    return loan.scm.sample(2000, seed=7)


def test_feature_order_and_roles(loan):
    assert loan.feature_names == (
        "gender", "age", "education", "loan_amount", "loan_duration", "income", "savings"
    )
    assert loan.immutable == (G, A)
    assert loan.actionable == (L, D, INC, S)
    assert [f.role.value for f in loan.features][:3] == ["immutable", "immutable", "mutable"]


def test_sample_matches_the_spec_sanity_figures(loan):
    x = loan.scm.sample(200_000, seed=0).numpy()
    means = {A: 0.0, E: -0.06, L: 0.03, D: 0.03, INC: 0.49, S: -2.1}
    sds = {A: 11.1, E: 0.14, L: 2.8, D: 4.6, INC: 2.5, S: 5.6}
    for j in means:
        assert abs(x[:, j].mean() - means[j]) < 0.05 + 0.02 * sds[j]
        assert abs(x[:, j].std() - sds[j]) < 0.02 * sds[j] + 0.01
    assert abs(loan.scm.label_proba(x).mean().item() - 0.52) < 0.01


def test_empty_action_returns_the_factual(loan, x):
    none = torch.zeros_like(x, dtype=torch.bool)
    x_cf = loan.scm.counterfactual(x, none, torch.zeros_like(x))
    assert torch.equal(x_cf, x) or (x_cf - x).abs().max() <= 1e-9


def test_abduct_then_predict_is_the_identity(loan, x):
    u = loan.scm.abduct(x)
    assert (loan.scm.predict(u) - x).abs().max() <= 1e-6


def test_income_intervention_changes_savings_by_the_equation(loan, x):
    mask = torch.zeros_like(x, dtype=torch.bool)
    mask[:, INC] = True
    values = x.clone()
    values[:, INC] = x[:, INC] + 1.5
    x_cf = loan.scm.counterfactual(x, mask, values)
    u_s = x[:, S] - (-4 + 1.5 * (x[:, INC] > 0) * x[:, INC])
    expected_s = -4 + 1.5 * (values[:, INC] > 0) * values[:, INC] + u_s
    assert torch.allclose(x_cf[:, S], expected_s, atol=1e-12, rtol=0)
    assert torch.equal(x_cf[:, INC], values[:, INC])
    for j in (G, A, E, L, D):  # non-descendants of income are untouched
        assert (x_cf[:, j] - x[:, j]).abs().max() <= 1e-12


def test_loan_amount_intervention_moves_duration_one_for_one(loan, x):
    mask = torch.zeros_like(x, dtype=torch.bool)
    mask[:, L] = True
    values = x.clone()
    values[:, L] = x[:, L] - 2.0
    x_cf = loan.scm.counterfactual(x, mask, values)
    assert torch.allclose(x_cf[:, D], x[:, D] - 2.0, atol=1e-12, rtol=0)
    for j in (G, A, E, INC, S):
        assert (x_cf[:, j] - x[:, j]).abs().max() <= 1e-12


def _independent_log_prob(x: np.ndarray) -> np.ndarray:
    g, a, e, amount, dur, inc, sav = x.T
    sig = expit

    def u_e(ev: np.ndarray) -> np.ndarray:
        return logit(ev + 0.5) + 1 - 0.5 * g - sig(0.1 * a)

    h = 1e-6
    jac = np.abs((u_e(e + h) - u_e(e - h)) / (2 * h))
    lp = np.log(0.5) + stats.gamma.logpdf(a + 35, 10, scale=3.5)
    lp += stats.norm.logpdf(u_e(e), 0, 0.5) + np.log(jac)
    lp += stats.norm.logpdf(amount - (1 + 0.01 * (a - 5) * (5 - a) + (1 - g)), 0, 2)
    lp += stats.norm.logpdf(dur - (-1 + 0.1 * a + 2 * (1 - g) + amount), 0, 3)
    lp += stats.norm.logpdf(inc - (-4 + 0.1 * (a + 35) + 2 * g + g * e), 0, 2)
    lp += stats.norm.logpdf(sav - (-4 + 1.5 * (inc > 0) * inc), 0, 5)
    return lp


def test_log_prob_matches_an_independent_computation(loan, x):
    rng = np.random.default_rng(3)
    pts = x[rng.choice(len(x), 300, replace=False)].numpy()
    pts[:, L:] += rng.normal(0, 1, size=(300, 4))  # off-sample points too
    ours = loan.scm.log_prob(torch.from_numpy(pts)).numpy()
    np.testing.assert_allclose(ours, _independent_log_prob(pts), rtol=0, atol=1e-6)


def test_numpy_and_float32_inputs(loan, x):
    out64 = loan.scm.log_prob(x[:5].numpy())
    assert out64.dtype == torch.float64
    out32 = loan.scm.counterfactual(x[:5].float(), torch.zeros(5, 7), x[:5].float())
    assert out32.dtype == torch.float32


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda scm, x: scm.log_prob(x[:, :6]), r"shape \(n, 7\)"),
        (lambda scm, x: scm.abduct(torch.full((2, 7), float("nan"))), "NaN or inf"),
        (
            lambda scm, x: scm.counterfactual(x[:3], torch.eye(7)[[1, 1, 1]], x[:3]),
            "immutable feature.*age",
        ),
        (
            lambda scm, x: scm.counterfactual(x[:3], torch.full((3, 7), 0.5), x[:3]),
            "only 0/1",
        ),
        (lambda scm, x: scm.counterfactual(x[:3], torch.zeros(2, 7), x[:3]), "2 rows"),
        (lambda scm, x: scm.log_prob(torch.tensor([[0.5, 0, 0, 0, 0, 0, 0.0]])), "gender"),
        (lambda scm, x: scm.log_prob(torch.tensor([[0, 0, 0.7, 0, 0, 0, 0.0]])), "education"),
    ],
)
def test_bad_input_is_named(loan, x, call, match):
    with pytest.raises(WorldModelInputError, match=match):
        call(loan.scm, x)


def test_unknown_scenario():
    with pytest.raises(UnknownScenarioError, match="unknown scenario 'mortgage'.*loan"):
        get_scenario("mortgage")


def test_display_maps_are_monotone_and_invertible(loan):
    lo, hi = loan.bounds
    for j, f in enumerate(loan.features):
        if f.discrete:
            continue
        grid = np.linspace(float(lo[j]), float(hi[j]), 50)
        shown = np.asarray(f.display.to_display(grid))
        assert np.all(np.diff(shown) > 0), f.name
        np.testing.assert_allclose(f.display.from_display(shown), grid, atol=1e-9)
    assert loan.features[1].display.to_display(0.0) == 35.0  # age in years = A + 35
    with pytest.raises(ValueError, match="positive"):
        loan.features[5].display.from_display(-10.0)


def test_bounds_come_from_the_training_split(loan):
    x = loan.dataset["train"][0]
    assert torch.equal(loan.bounds[0], x.min(dim=0).values)
    assert torch.equal(loan.bounds[1], x.max(dim=0).values)
    assert len(loan.dataset["train"][0]) == 10_000 and len(loan.dataset["test"][0]) == 5_000


def test_graph_descendants_and_adjacency(loan):
    scm = loan.scm
    assert scm.descendants(G) == {E, L, D, INC, S}
    assert scm.descendants(E) == {INC, S}
    assert scm.descendants(L) == {D}
    assert scm.descendants(INC) == {S}
    assert scm.descendants(S) == set() and scm.descendants(D) == set()
    a = scm.adjacency()
    assert a.dtype == torch.bool and a.shape == (7, 7)
    expected = torch.eye(7, dtype=torch.bool)
    for child, parents in {E: (G, A), L: (G, A), D: (G, A, L), INC: (G, A, E), S: (INC,)}.items():
        expected[child, list(parents)] = True
    assert torch.equal(a, expected)


def test_shift_counterfactual_is_the_hard_intervention_on_the_shifted_values(loan, x):
    """x'_j = clamp(f_j(x'_pa, u_j) + s_j): the same as do(x_j = x'_j) computed in order."""
    scm = loan.scm
    xs = x[:50]
    lower = torch.full((7,), -1e9, dtype=torch.float64)
    upper = torch.full((7,), 1e9, dtype=torch.float64)
    mask = torch.zeros(50, 7, dtype=torch.bool)
    mask[:, L] = True
    mask[::2, INC] = True
    s = torch.zeros(50, 7, dtype=torch.float64)
    s[:, L] = 0.3
    s[:, INC] = -0.2
    out = scm.shift_counterfactual(xs, mask, s, lower, upper)
    # loan amount: no mutable parents changed, so x'_L = x_L + s; duration follows it
    torch.testing.assert_close(out[:, L], xs[:, L] + 0.3)
    torch.testing.assert_close(out[::2, INC], xs[::2, INC] - 0.2)  # income has no shifted parent
    torch.testing.assert_close(out[1::2, INC], xs[1::2, INC])  # not shifted: unchanged
    hard = scm.counterfactual(xs, mask, out)
    torch.testing.assert_close(out, hard)
    torch.testing.assert_close(out[:, [G, A, E]], xs[:, [G, A, E]])
    assert not torch.allclose(out[::2, S], xs[::2, S])  # savings follow income
    # no shift is the factual; the bounds clamp the shifted features only
    torch.testing.assert_close(scm.shift_counterfactual(xs, mask, torch.zeros_like(s), lower,
                                                        upper), xs)
    cap = upper.clone()
    cap[L] = float(xs[:, L].min())
    capped = scm.shift_counterfactual(xs, mask, s, lower, cap)
    assert torch.all(capped[:, L] == cap[L])
    floor = lower.clone()
    floor[INC] = float(xs[:, INC].max()) + 1
    floored = scm.shift_counterfactual(xs, mask, s, floor, upper)
    assert torch.all(floored[::2, INC] == floor[INC])
    assert torch.equal(floored[1::2, INC], xs[1::2, INC])  # the bound acts on shifted rows only
    # one row of mask and shifts broadcasts to the batch; float32 in, float32 out
    one = scm.shift_counterfactual(xs.float(), mask[:1], s[:1], lower, upper)
    assert one.dtype == torch.float32 and one.shape == (50, 7)
    torch.testing.assert_close(one.double()[:, L], xs[:, L] + 0.3, atol=1e-5, rtol=1e-5)
    with pytest.raises(WorldModelInputError, match="action_values has 2 rows, x has 50"):
        scm.shift_counterfactual(xs, mask, s[:2], lower, upper)
    with pytest.raises(WorldModelInputError, match="immutable feature.*gender"):
        scm.shift_counterfactual(xs, torch.eye(7)[[0]].expand(50, 7), s, lower, upper)


def test_input_checks_name_what_is_wrong(loan, x):
    from engine.scm import as_action_mask, as_batch

    names, imm = loan.feature_names, loan.immutable
    t, dtype = as_batch(np.zeros(7), 7)  # one profile as a row
    assert t.shape == (1, 7) and t.dtype == torch.float64 and dtype == torch.float64
    assert as_batch(torch.zeros(2, 7, dtype=torch.float32), 7)[1] == torch.float32
    assert as_batch(torch.zeros(2, 7, dtype=torch.long), 7)[1] == torch.float64
    with pytest.raises(WorldModelInputError, match=r"^profile must have shape \(n, 7\) \(one "
                       r"column per feature\), got \(2, 3, 7\)$"):
        as_batch(torch.zeros(2, 3, 7), 7, "profile")
    bad = torch.zeros(3, 7)
    bad[2, 4] = float("inf")
    with pytest.raises(WorldModelInputError, match=r"^x holds NaN or inf \(first at row 2, "
                       r"column 4\)$"):
        as_batch(bad, 7)
    m = as_action_mask(torch.tensor([[0, 0, 1, 0, 0, 1, 0]]), 4, names, imm)
    assert m.shape == (4, 7) and m.dtype == torch.float64
    assert m.sum().item() == 8 and bool((m[:, [2, 5]] == 1).all())
    assert as_action_mask(torch.zeros(1, 7), 1, names, ()).shape == (1, 7)
    with pytest.raises(WorldModelInputError, match=r"^action_mask has 2 rows, x has 3$"):
        as_action_mask(torch.zeros(2, 7), 3, names, imm)
    with pytest.raises(WorldModelInputError, match=r"^action_mask must hold only 0/1"):
        as_action_mask(torch.full((1, 7), 2.0), 1, names, imm)
    with pytest.raises(WorldModelInputError, match=r"^action_mask acts on immutable "
                       r"feature\(s\): gender, age$"):
        as_action_mask(torch.tensor([[1, 1, 0, 0, 0, 0, 0]]), 1, names, imm)
    # the same mask is fine when nothing is immutable
    assert as_action_mask(torch.tensor([[1, 1, 0, 0, 0, 0, 0]]), 1, names, ()).sum() == 2
    # a floating mask keeps its graph (straight-through training)
    soft = torch.zeros(1, 7, requires_grad=True)
    assert as_action_mask(soft + 0, 1, names, imm).requires_grad
    with pytest.raises(WorldModelInputError, match=r"^action_values has 2 rows, x has 3$"):
        loan.scm.counterfactual(x[:3], torch.zeros(3, 7), x[:2])
    cf = loan.scm.counterfactual(x[:3], torch.zeros(1, 7), x[:1])  # one row broadcasts
    torch.testing.assert_close(cf, x[:3])


def test_sample_predict_abduct_and_log_prob_values(loan, x):
    scm = loan.scm
    assert scm.sample(0).shape == (0, 7)
    with pytest.raises(ValueError, match="n must be >= 0, got -1"):
        scm.sample(-1)
    torch.testing.assert_close(scm.sample(5, seed=3), scm.sample(5, seed=3))
    assert not torch.equal(scm.sample(5, seed=3), scm.sample(5, seed=4))
    u = scm.abduct(x[:20])
    assert u.dtype == torch.float64 and u.shape == (20, 7)
    torch.testing.assert_close(scm.predict(u), x[:20])
    assert scm.abduct(x[:20].float()).dtype == torch.float32
    lp = scm.log_prob(x[:20])
    assert lp.shape == (20,) and lp.dtype == torch.float64 and torch.isfinite(lp).all()
    assert scm.log_prob(x[:20].float()).dtype == torch.float32
    torch.testing.assert_close(lp, scm.noise_log_prob(u).sum(dim=1)
                               + scm.log_abs_det_jacobian(x[:20]))


def test_each_message_names_its_argument_and_one_row_broadcasts(loan, x):
    """Which argument was wrong is part of every message; one row of a mask or of values
    broadcasts over a batch of two (the smallest batch that needs it)."""
    import pandas as pd

    from engine.scm import as_action_mask, as_batch

    scm, names, imm = loan.scm, loan.feature_names, loan.immutable
    nan = torch.full((1, 7), float("nan"))
    with pytest.raises(WorldModelInputError, match=r"^action_mask holds NaN or inf"):
        as_action_mask(nan, 1, names, imm)
    with pytest.raises(WorldModelInputError, match=r"^action_values holds NaN or inf"):
        scm.counterfactual(x[:2], torch.zeros(2, 7), nan)
    off = x[:2].clone()
    off[:, G] = 0.5
    with pytest.raises(WorldModelInputError, match=r"^x: gender must be 0 or 1"):
        scm.counterfactual(off, torch.zeros(2, 7), x[:2])
    with pytest.raises(WorldModelInputError, match=r"^x: gender must be 0 or 1"):
        scm.shift_counterfactual(off, torch.zeros(2, 7), torch.zeros(2, 7),
                                 torch.full((7,), -1e9), torch.full((7,), 1e9))
    for read in (scm.abduct, scm.log_prob):
        with pytest.raises(WorldModelInputError, match=r"^x: gender must be 0 or 1"):
            read(off)
    mask = torch.zeros(2, 7)
    mask[:, E] = 1
    values = x[:2].clone()
    values[:, E] = 0.7  # education outside its support: the counterfactual is refused
    with pytest.raises(WorldModelInputError, match=r"^action_values: education must lie"):
        scm.counterfactual(x[:2], mask, values)
    assert as_action_mask(torch.eye(7)[[5]], 2, names, imm).shape == (2, 7)
    raise_income = x[:1].clone()
    raise_income[0, INC] += 1.0
    cf = scm.counterfactual(x[:2], torch.eye(7)[[INC]], raise_income)
    assert torch.equal(cf[:, INC], raise_income[0, INC].expand(2))
    # a DataFrame is array-like: converted through numpy
    frame = pd.DataFrame(x[:2].numpy(), columns=list(names))
    torch.testing.assert_close(as_batch(frame, 7)[0], x[:2])


def test_label_proba_default_seed_and_predict_dtype(loan, x):
    scm = loan.scm
    p = scm.label_proba(x[:50])
    torch.testing.assert_close(p, torch.sigmoid(scm.label_logit(x[:50])))
    assert p.shape == (50,) and bool(((p > 0) & (p < 1)).all())
    assert torch.equal(scm.sample(5), scm.sample(5, seed=0))  # the default seed is 0
    u = scm.abduct(x[:5]).float()
    assert scm.predict(u).dtype == torch.float64  # predict computes in float64 always


def _shifted_by_interventions(scm, x, mask, s, lo, hi):
    """The reference for shift interventions: in causal order, each shifted feature set by
    a hard intervention to clamp(its value under the earlier interventions + s_j)."""
    done = torch.zeros_like(mask)
    values = x.clone()
    for j in range(scm.d):
        if not bool(mask[:, j].any()):
            continue
        x_cf = scm.counterfactual(x, done, values)
        v_j = torch.clamp(x_cf[:, j] + s[:, j], lo[j], hi[j])
        at_j = torch.zeros_like(mask)
        at_j[:, j] = mask[:, j]
        values = torch.where(at_j, v_j[:, None], values)
        done = done | at_j
    return scm.counterfactual(x, done, values)


@pytest.mark.parametrize("columnwise", [True, False])
def test_a_shift_pass_is_the_hard_interventions_it_stands_for(loan, x, columnwise):
    """shift_counterfactual (and shift_pass with the equations no shift changes computed
    once) equals setting each shifted feature by do() in causal order, values and gradients,
    with rows shifted on different features, a row shifted on none, and shifts past the
    bounds (clamped)."""
    scm = loan.scm
    people = x[:6].to(torch.float64)
    lo, hi = loan.bounds.to(torch.float64)
    mask = torch.zeros(6, scm.d, dtype=torch.bool)
    mask[0, [L, INC]] = True
    mask[1, [D, S]] = True
    mask[2, [L, D, INC, S]] = True
    mask[3, [E]] = True
    mask[5, [INC]] = True  # row 4 is shifted on nothing
    scale = (hi - lo)
    s = torch.randn(6, scm.d, generator=torch.Generator().manual_seed(5),
                    dtype=torch.float64) * 0.3 * scale
    s[5, INC] = 5.0 * scale[INC]  # past the upper bound: clamped
    s[1, D] = -5.0 * scale[D]  # past the lower bound
    s.requires_grad_(True)
    weights = torch.linspace(-1.0, 2.0, people.numel(), dtype=torch.float64).reshape(6, scm.d)
    scm.columnwise = columnwise
    try:
        ours = scm.shift_counterfactual(people, mask, s, lo, hi)
        u = scm.abduct(people)
        shifted = [j for j in range(scm.d) if bool(mask[:, j].any())]
        once = scm.shift_pass(u, mask, s, lo, hi, shifted, scm.fixed_equations(u, shifted))
    finally:
        scm.columnwise = True
    ref = _shifted_by_interventions(scm, people, mask, s, lo, hi)
    torch.testing.assert_close(ours, ref, rtol=0, atol=1e-9)
    torch.testing.assert_close(once, ref, rtol=0, atol=1e-9)
    assert ours[5, INC] == hi[INC] and ours[1, D] == lo[D]
    torch.testing.assert_close(ours[4], people[4], rtol=0, atol=1e-9)  # nothing shifted
    assert ours[0, D] != people[0, D] and ours[0, S] != people[0, S]  # L's and INC's children
    for out in (ours, once):
        (g,) = torch.autograd.grad((torch.tanh(out) * weights).sum(), s, retain_graph=True)
        (g_ref,) = torch.autograd.grad((torch.tanh(ref) * weights).sum(), s, retain_graph=True)
        torch.testing.assert_close(g, g_ref, rtol=1e-9, atol=1e-12)
        assert not bool(g[~mask].any()) and bool(g[0, L] != 0)
        assert g[5, INC] == 0 and g[1, D] == 0  # clamped: no gradient


def test_fixed_equations_are_the_columns_no_shift_reaches(loan, x):
    """fixed_equations: exactly the columns none of whose ancestors is shifted, with the
    values the unshifted equations give; an SCM read as a whole tensor has none."""
    scm = loan.scm
    people = x[:5].to(torch.float64)
    u = scm.abduct(people)
    shifted = [L]
    fixed = scm.fixed_equations(u, shifted)
    reached = {L} | scm.descendants(L)
    expected = {j for j in range(scm.d) if not (set(scm.parents.get(j, ())) & reached)}
    assert set(fixed) == expected and L in fixed and not (scm.descendants(L) & set(fixed))
    for j, col in fixed.items():
        torch.testing.assert_close(col, people[:, j], rtol=0, atol=1e-9)
    assert set(scm.fixed_equations(u, [])) == set(range(scm.d))
    scm.columnwise = False
    try:
        assert scm.fixed_equations(u, shifted) == {}
    finally:
        scm.columnwise = True

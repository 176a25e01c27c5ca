"""iCARMA as the paper trains and deploys it: the configuration, the hinge on 2h - 1, CARMA's
Lagrange multiplier, one model per cost profile with the best seed on validation, repair
off unless asked (quick-trained models in the test home)."""

from __future__ import annotations

import math

import pytest
import torch

from engine import artifacts
from engine.decision import rejected_rows
from engine.papers.icarma.datasets import paper_dataset, table_rows
from engine.papers.icarma.models import (
    ensure_paper_models,
    paper_config,
    paper_model_name,
    paper_seeds,
)
from engine.papers.paper_values import target_values
from engine.papers.recourse_benchmark import rejected_population
from engine.preferences import CostProfile, sample_profiles
from engine.recourse import get_method, option_names
from engine.recourse.base import RecourseContext
from engine.recourse.icarma.config import ICarmaConfig
from engine.recourse.icarma.method import Carma, ICarma
from engine.recourse.icarma.training import (
    ProfileBatch,
    ValidityMultiplier,
    logit_margin,
    recourse_loss,
    train_amortized,
)


@pytest.fixture(scope="module")
def paper(trained_home):
    """Two quick seeds of the paper's ranking/constant setup and one of ranking/convex."""
    return {
        "constant": ensure_paper_models("loan", "ranking", "constant", 2, quick=True),
        "convex": ensure_paper_models("loan", "ranking", "convex", 1, quick=True),
    }


def test_gmsc_has_the_papers_own_configuration_and_rows():
    g = paper_config("gmsc-causal", "ranking", "linear", 2000)
    assert (g.epochs, g.batch_size, g.lr, g.hinge_margin, g.tau) == (400, 256, 0.001, 0.013, 0.33)
    assert (g.cost_weight, g.kl_weight, g.plausibility_weight, g.feasibility_weight) == (
        1.1, 1.1, 0.04, 0.09)
    assert g.shift_bounds is None and g.cost_profiles == ("linear",) and g.seed == 2000
    assert paper_config("loan", "ranking", "linear", 2000) == ICarmaConfig.paper(
        "ranking", "linear", 2000)
    rows = table_rows(target_values("icarma-table2"), "gmsc-causal")
    assert [(r["constraint"], r["cost_profile"], r["hap"]) for r in rows] == [
        ("all", "linear", 0.30), ("3", "constant", 0.40), ("3", "linear", 0.34)]
    assert all(r["row"].startswith("Loan") for r in table_rows(
        target_values("icarma-table2"), "loan-carma-reference"))
    with pytest.raises(ValueError, match="Table 3 .* has no GMSC rows"):
        table_rows(target_values("icarma-table3"), "gmsc-causal")


def test_only_a_scenario_of_the_papers_data_sets_meets_its_rows():
    # the data set is what the scenario's file says, inherited through extends, not its name
    assert paper_dataset("gmsc") == paper_dataset("gmsc-causal") == "gmsc"
    assert paper_dataset("loan-bernoulli") == paper_dataset("adult") == "loan"  # training
    for name, says in (("adult", "is the adult data set"),
                       ("tominaga", "is no published data set")):
        with pytest.raises(ValueError, match=says):
            table_rows(target_values("icarma-table1"), name)


def test_the_papers_configuration_is_the_default():
    r, s = ICarmaConfig(), ICarmaConfig.paper("likert", "linear", 3000)
    assert (r.epochs, r.batch_size, r.lr, r.hinge_margin, r.tau) == (450, 128, 0.005, 0.013, 0.36)
    assert (r.cost_weight, r.plausibility_weight, r.feasibility_weight, r.kl_weight) == (
        1.1, 0.225, 0.1, 1.5)
    assert (s.epochs, s.lr, s.hinge_margin, s.tau, s.cost_weight, s.kl_weight) == (
        900, 0.001, 0.004, 0.49, 1.3, 0.9)
    assert (s.plausibility_weight, s.feasibility_weight) == (0.125, 0.1)
    assert s.cost_profiles == ("linear",) and s.seed == 3000 and s.elicitation == "likert"
    assert (r.validity_loss, r.validity_multiplier, r.schedule, r.keep, r.score_sampling) == (
        "hinge-probability", "lagrangian", "constant", "last", "iid")
    assert r.validity_weight == s.validity_weight == 1.0  # the validation losses' weight
    f = ICarmaConfig.fast()
    assert (f.epochs, f.validity_loss, f.validity_multiplier, f.schedule, f.keep) == (
        60, "hinge-logit", "fixed", "cosine", "best")
    assert f.validity_weight == 1.0
    assert len(f.cost_profiles) == 4 and f.score_sampling == "sorted"
    assert (r.fill_empty_mask, f.fill_empty_mask) == (False, True)
    assert paper_seeds(3) == (1000, 2000, 3000)
    with pytest.raises(ValueError, match="validity_multiplier"):
        ICarmaConfig(validity_multiplier="sometimes")


class _Constant(torch.nn.Module):
    """A decision model whose logit is a fixed number, and a flow that changes nothing."""

    def __init__(self, logit: float) -> None:
        super().__init__()
        self.logit = logit

    def forward(self, x):
        return torch.full((x.shape[0],), self.logit)

    def decision(self, x):
        return self(x) >= 0


class _Identity:
    """A flow whose features are their own noise: do(x_m = a) sets them, a latent shift
    adds to them."""

    def counterfactual(self, x, mask, values):
        return torch.where(mask.bool(), values, x)

    def shift(self, x, mask, shift):
        return x + mask * shift

    def log_prob(self, x):
        return torch.zeros(x.shape[0])


@pytest.mark.parametrize("logit", [-3.0, 0.0, 0.02, 2.0])
def test_the_hinge_is_on_2h_minus_1_with_margin_eps(loan, logit):
    from engine.recourse.icarma.networks import AmortizedRecourse

    x = loan.dataset["train"][0][:5].float()
    model = AmortizedRecourse(x.mean(0), x.std(0) + 1, loan.ranges, torch.tensor(loan.actionable))
    hard = torch.ones(5, 4)
    prof = ProfileBatch(hard, torch.ones(5, 4), torch.full((5, 4), 0.5))
    cfg = ICarmaConfig()
    _, parts = recourse_loss(model, _Identity(), _Constant(logit), x, prof, cfg, loan.bounds)
    h = 1 / (1 + math.exp(-logit))
    want = max(0.0, 0.013 - (2 * h - 1))
    assert torch.allclose(parts["hinge"], torch.full((5,), want), atol=1e-6)
    fast = ICarmaConfig.fast()
    _, parts = recourse_loss(model, _Identity(), _Constant(logit), x, prof, fast, loan.bounds)
    want = max(0.0, logit_margin(0.013) - logit)
    assert torch.allclose(parts["hinge"], torch.full((5,), want), atol=1e-6)
    # the two hinges vanish at the same point: h = (1 + eps) / 2  <=>  logit = 2 artanh(eps)
    assert math.isclose(1 / (1 + math.exp(-logit_margin(0.013))), (1 + 0.013) / 2)


def test_carmas_multiplier_grows_with_the_hinge_and_never_goes_negative():
    m = ValidityMultiplier(ICarmaConfig())
    assert m.lagrangian and m.lam == 0.0
    for h in (0.5, 0.25, 0.0):
        m.prepare()
        m.update(torch.full((4,), h))
    assert m.lam == pytest.approx(0.75)
    m.prepare()
    assert m.weight == pytest.approx(0.75)
    fixed = ValidityMultiplier(ICarmaConfig.fast())
    fixed.prepare()
    fixed.update(torch.ones(3))
    assert not fixed.lagrangian and fixed.weight == 1.0
    # our variant counts only the draws whose sampled mask acts (an empty one cannot be valid)
    acting = ValidityMultiplier(ICarmaConfig(validity_multiplier="lagrangian-acting"))
    mask = torch.tensor([[1.0, 0.0], [0.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    acting.update(torch.tensor([0.5, 1.0, 0.25, 1.0]), mask)
    assert acting.lagrangian and acting.lam == pytest.approx(0.375)  # (0.5 + 0.25) / 2
    acting.update(torch.ones(2), torch.zeros(2, 2))  # nobody acts: no step
    assert acting.lam == pytest.approx(0.375)
    carma = ValidityMultiplier(ICarmaConfig())
    carma.update(torch.tensor([0.5, 1.0, 0.25, 1.0]), mask)
    assert carma.lam == pytest.approx(0.6875)  # CARMA's: every draw
    with pytest.raises(ValueError, match="needs the sampled mask"):
        acting.update(torch.ones(2))


def test_an_empty_mask_stays_empty_as_the_paper_unless_filled():
    """The paper deploys m = 1[l > 0] h (no action when every l <= 0); our option switches on
    the most probable actionable feature. The option keeps the fast models' fingerprints:
    ``to_dict`` omits it when True, the behaviour before it existed."""
    from engine.recourse.icarma.networks import AmortizedRecourse

    logits = torch.tensor([[-1.0, -0.2, -3.0, 0.5], [-1.0, -0.2, -3.0, -0.1]])
    hard = torch.tensor([[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0]])
    paper = AmortizedRecourse.deterministic_mask(logits, hard, fill_empty=False)
    assert paper.tolist() == [[0, 0, 0, 0], [0, 0, 0, 0]]
    filled = AmortizedRecourse.deterministic_mask(logits, hard, fill_empty=True)
    assert filled.tolist() == [[0, 1, 0, 0], [0, 0, 0, 1]]
    assert "fill_empty_mask" not in ICarmaConfig.fast().to_dict()
    assert ICarmaConfig().to_dict()["fill_empty_mask"] is False
    for cfg in (ICarmaConfig(), ICarmaConfig.fast()):
        assert ICarmaConfig.from_dict(cfg.to_dict()) == cfg


def test_carmas_mask_head_samples_by_the_log_odds_and_deploys_by_the_on_logit():
    """CARMA's mask network outputs (off, on) logits per feature: the Gumbel sample and the KL
    term see phi_on - phi_off, the deployed mask 1[phi_on > 0] (its code's eval rule), which
    differs from 1[phi_on > phi_off] wherever the two logits share a sign."""
    from engine.recourse.icarma.networks import AmortizedRecourse

    g, d = 4, 7
    model = AmortizedRecourse(torch.zeros(d), torch.ones(d), torch.ones(d),
                              torch.tensor([3, 4, 5, 6]), hidden=(8,), mask_head="carma")
    last = model.mask_net[-1]
    assert last.out_features == 2 * g and torch.all(last.bias == 0.01)  # CARMA's init
    pairs = torch.tensor([[-2.0, -1.0], [1.0, 3.0], [2.0, 1.0], [-1.0, 0.5]])  # (off, on)
    with torch.no_grad():
        last.weight.zero_()
        last.bias.copy_(pairs.flatten())
    x, code, hard = torch.zeros(1, d), torch.zeros(1, 3 * g), torch.ones(1, g)
    assert model.mask_logits(x, code).tolist() == [[1.0, 2.0, -1.0, 1.5]]
    deployed = model.deployment_mask(model.mask_outputs(x, code), hard, fill_empty=False)
    assert deployed.tolist() == [[0, 1, 1, 1]]
    # the log-odds head deploys its own logits: 1[l > 0]
    plain = AmortizedRecourse(torch.zeros(d), torch.ones(d), torch.ones(d),
                              torch.tensor([3, 4, 5, 6]), hidden=(8,))
    with torch.no_grad():
        plain.mask_net[-1].weight.zero_()
        plain.mask_net[-1].bias.copy_(torch.tensor([1.0, 2.0, -1.0, 1.5]))
    deployed = plain.deployment_mask(plain.mask_outputs(x, code), hard, fill_empty=False)
    assert deployed.tolist() == [[1, 1, 0, 1]]
    with pytest.raises(ValueError, match="mask_head must be one of log-odds, carma"):
        ICarmaConfig(mask_head="three")
    carma = ICarmaConfig(mask_head="carma")
    assert "mask_head" not in ICarmaConfig().to_dict()  # earlier models keep their fingerprints
    assert ICarmaConfig.from_dict(carma.to_dict()) == carma


def test_training_never_moves_the_carma_heads_sum_of_logits(loan):
    """Why CARMA's deployed mask differs from 1[l > 0]: the loss's gradients on phi_on and
    phi_off are opposite, so Adam leaves the head's sum weights at their initial values while
    the difference (the log-odds) learns."""
    from engine.recourse.icarma.networks import AmortizedRecourse

    x = loan.dataset["train"][0][:32].float()
    model = AmortizedRecourse(x.mean(0), x.std(0), loan.ranges, torch.tensor(loan.actionable),
                              hidden=(16,), mask_head="carma")
    w0 = model.mask_net[-1].weight.detach().view(4, 2, -1).clone()
    prof = ProfileBatch(torch.ones(32, 4), torch.ones(32, 4), torch.full((32, 4), 0.1))
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    for _ in range(20):
        loss, _ = recourse_loss(model, _Identity(), _Constant(-3.0), x, prof, ICarmaConfig(),
                                loan.bounds)
        opt.zero_grad()
        loss.backward()
        opt.step()
    w = model.mask_net[-1].weight.detach().view(4, 2, -1)
    assert torch.allclose(w.sum(dim=1), w0.sum(dim=1), atol=1e-5)
    assert (w[:, 1] - w[:, 0] - (w0[:, 1] - w0[:, 0])).abs().max() > 0.05


def test_a_carma_head_model_is_trained_cached_under_its_tag_and_deployed_by_its_rule(loan, clf,
                                                                                   trained_home):
    """The variant trains through the paper models' cache under its own name, loads back with
    its two-logit head, and ICarma deploys it by CARMA's rule (the model's own mask)."""
    pm = ensure_paper_models("loan", "ranking", "constant", 1, quick=True,
                             changes={"mask_head": "carma"})
    assert pm.selected.name == paper_model_name("ranking", "constant", tag="carma")
    model = artifacts.load_amortized("loan", pm.member_name(1000))
    assert model.mask_head == "carma" and model.mask_net[-1].out_features == 2 * model.g
    ctx = RecourseContext(loan, clf)
    x = rejected_population(loan, clf, 64)
    prof = sample_profiles(loan.feature_names, loan.actionable, len(x), seed=3)
    mask, _ = ICarma(ctx, model=model, training="paper").actions(x, prof)
    hard = prof.hard_mask[:, model.actionable].float()
    code = ICarma(ctx, model=model, training="paper").network_code(prof, model)
    with torch.no_grad():
        on_logit = model.mask_outputs(x, code)[..., 1]
    assert torch.equal(mask[:, model.actionable], (on_logit > 0) & hard.bool())
    # ... which is not the log-odds rule for some of these people (else the test proves nothing)
    log_odds = model.mask_logits(x, code).detach()
    assert not torch.equal(mask[:, model.actionable], (log_odds > 0) & hard.bool())


def test_the_training_log_records_the_multiplier_and_the_draws_without_recourse(loan):
    """Every evaluation logs lambda (non-decreasing under CARMA's update) and the shares of
    training draws with an active hinge and with an empty sampled mask."""

    clf = _Constant(-3.0)  # nobody is ever accepted: every hinge stays active
    cfg = ICarmaConfig().reduced(epochs=4, eval_every=2, max_people=64)
    _, log = train_amortized(loan, clf, _Identity(), cfg)
    assert log.epochs == [2, 4] and len(log.multiplier) == len(log.train_empty) == 2
    assert 0 < log.multiplier[0] <= log.multiplier[1]
    assert log.train_active == [1.0, 1.0]
    assert all(0.0 <= e <= 1.0 for e in log.train_empty)
    fixed = ICarmaConfig().reduced(epochs=2, eval_every=2, max_people=64,
                                   validity_multiplier="fixed", validity_weight=5.0)
    assert train_amortized(loan, clf, _Identity(), fixed)[1].multiplier == [5.0]


def test_one_model_per_cost_profile_and_the_best_seed_is_selected(paper):
    pm = paper["constant"]
    assert pm.seeds == (1000, 2000)
    scores = {int(r.metadata["config"]["seed"]): r.metadata["metrics"]["val_score"]
              for r in pm.members}
    best = min(scores, key=scores.get)
    assert pm.selected_seed == best
    for r in pm.members:  # one profile per model, the paper's hyper-parameters, kept last
        cfg = r.metadata["config"]
        assert cfg["cost_profiles"] == ["constant"] and cfg["lr"] == 0.005
        assert r.metadata["metrics"]["kept_epoch"] == cfg["epochs"]
    selected = artifacts.weights_path("loan", pm.selected.name).read_bytes()
    assert selected == artifacts.weights_path("loan", pm.member_name(best)).read_bytes()
    again = ensure_paper_models("loan", "ranking", "constant", 2, quick=True)
    assert again.selected.cache_hit and all(r.cache_hit for r in again.members)
    assert paper["convex"].members[0].metadata["config"]["cost_profiles"] == ["convex"]


def test_icarma_loads_the_paper_model_of_its_cost_profile(loan, clf, paper):
    profiles = sample_profiles(loan.feature_names, loan.actionable, 4, seed=1)
    for cp in ("constant", "convex"):
        method = get_method("icarma", RecourseContext(loan, clf, cost_profile=CostProfile(cp)))
        assert method.training == "paper" and method.repair is False
        assert method.fill_empty_mask is False
        assert method.model_for(profiles) is artifacts.load_amortized(
            "loan", paper_model_name("ranking", cp))
    linear = get_method("icarma", RecourseContext(loan, clf, cost_profile=CostProfile("linear")))
    with pytest.raises(artifacts.ArtifactMissingError, match="--icarma-training paper"):
        linear.model_for(profiles)
    with pytest.raises(ValueError, match="training must be one of"):
        ICarma(RecourseContext(loan, clf), training="slow")
    assert ICarma(RecourseContext(loan, clf), training="fast").fill_empty_mask is True
    assert ICarma(RecourseContext(loan, clf), fill_empty_mask=True).fill_empty_mask is True
    assert "training" not in option_names("carma")  # CARMA is trained one way only
    with pytest.raises(TypeError, match="training"):
        Carma(RecourseContext(loan, clf), training="paper")


def test_repair_is_off_unless_asked_and_only_ever_helps_validity(loan, clf, paper):
    x = rejected_population(loan, clf, 300)
    profiles = sample_profiles(loan.feature_names, loan.actionable, len(x), seed=3)
    ctx = RecourseContext(loan, clf)
    plain = get_method("icarma", ctx).recourse(x, profiles)
    repaired = get_method("icarma", ctx, repair=True).recourse(x, profiles)
    assert float(repaired.valid.double().mean()) >= float(plain.valid.double().mean())
    assert not torch.equal(plain.action_values, repaired.action_values)
    assert int(repaired.violations.sum()) == 0 == int(plain.violations.sum())


def test_the_latent_shift_action_space_clamps_its_shifts_and_states_the_flows_values(loan):
    """CARMA's action space: the action network's outputs are shifts of the flow's noise,
    clamped to the model's shift bounds; the plan's values are the counterfactual's on the
    masked features, x elsewhere."""
    from engine.recourse.icarma.networks import AmortizedRecourse

    d, g = 7, 4
    model = AmortizedRecourse(torch.zeros(d), torch.ones(d), torch.ones(d),
                              torch.tensor([3, 4, 5, 6]), hidden=(8,),
                              action_space="latent-shift", shift_bounds=(-2.0, 3.0))
    with torch.no_grad():
        model.action_net[-1].weight.zero_()
        model.action_net[-1].bias.copy_(torch.tensor([-9.0, 1.0, 9.0, 0.5]))
    flow = _ShiftRecorder()
    x = loan.dataset["train"][0][:5].float()
    mask = torch.tensor([[1.0, 0.0, 1.0, 0.0]]).expand(5, g)
    values, x_cf = model.proposal(x, mask, torch.zeros(5, 3 * g), flow)
    assert flow.shifts[0][0, [3, 4, 5, 6]].tolist() == [-2.0, 1.0, 3.0, 0.5]
    assert torch.equal(x_cf, x + 100.0 * flow.masks[0] * flow.shifts[0])
    assert torch.equal(values[:, [3, 5]], x_cf[:, [3, 5]])
    assert torch.equal(values[:, [0, 1, 2, 4, 6]], x[:, [0, 1, 2, 4, 6]])
    assert model.needs_flow and torch.equal(model.action_values(x, mask, torch.zeros(5, 3 * g),
                                                                flow), values)
    with pytest.raises(ValueError, match="need the causal flow"):
        model.action_values(x, mask, torch.zeros(5, 3 * g))
    with pytest.raises(ValueError, match="action_space must be one of intervention, latent-shift"):
        ICarmaConfig(action_space="x-space")
    with pytest.raises(ValueError, match="lo < 0 < hi"):
        ICarmaConfig(shift_bounds=(1.0, 6.0))
    # the paper configuration: CARMA's latent shift and clamp; the fast one acts by do-values
    paper = ICarmaConfig()
    assert (paper.action_space, paper.shift_bounds) == ("latent-shift", (-4.0, 5.0))
    assert paper.to_dict()["shift_bounds"] == [-4.0, 5.0]
    rule = ICarmaConfig(shift_bounds=None)
    assert rule.to_dict()["shift_bounds"] is None  # stored, not the default's
    for cfg in (paper, rule):
        assert ICarmaConfig.from_dict(cfg.to_dict()) == cfg
    fast = ICarmaConfig.fast()
    assert fast.action_space == "intervention"
    # do-value models store neither field (their fingerprints predate them) and load as such
    stored = fast.to_dict()
    assert "action_space" not in stored and "shift_bounds" not in stored
    assert ICarmaConfig.from_dict(stored).action_space == "intervention"


def test_a_paper_model_shifts_the_flows_noise_within_its_bounds_and_states_its_plan(
        loan, clf, trained_home):
    """The paper configuration's models act by CARMA's latent shift: cached under their plain
    names with CARMA's clamp, under the tag ``shift-flow`` with the rule's clamp on our flow
    (floor min, ceil max of the rejected training people's latents, as CARMA's code filters
    its data before it sets the clamp); ICarma's plans reproduce the flow counterfactual the
    network proposed."""
    flow = artifacts.load_flow("loan")
    rule = ensure_paper_models("loan", "ranking", "constant", 1, quick=True,
                               changes={"shift_bounds": None})
    assert rule.selected.name == paper_model_name("ranking", "constant", tag="shift-flow")
    model = artifacts.load_amortized("loan", rule.member_name(1000))
    assert model.action_space == "latent-shift"
    rejected = loan.dataset["train"][0][rejected_rows(loan, clf, "train")]
    assert tuple(model.shift_bounds.tolist()) == flow.latent_range(rejected)
    assert flow.latent_range(rejected) != flow.latent_range(loan.dataset["train"][0])
    pm = ensure_paper_models("loan", "ranking", "constant", 1, quick=True)
    model = artifacts.load_amortized("loan", pm.member_name(1000))
    assert model.shift_bounds.tolist() == [-4.0, 5.0]
    ctx = RecourseContext(loan, clf)
    x = rejected_population(loan, clf, 64)
    prof = sample_profiles(loan.feature_names, loan.actionable, len(x), seed=3)
    method = ICarma(ctx, model=model, training="paper")
    mask, values = method.actions(x, prof)
    code = method.network_code(prof, model)
    hard = prof.hard_mask[:, model.actionable].float()
    with torch.no_grad():
        m = model.deployment_mask(model.mask_outputs(x, code), hard, False)
        _, x_cf = model.proposal(x, m, code, flow)
    assert mask.any()
    assert torch.allclose(values[mask].float(), x_cf[mask], atol=1e-5)
    # the plan as an intervention gives the network's counterfactual back on the flow
    assert torch.allclose(flow.counterfactual(x.float(), mask.float(), values.float()), x_cf,
                          atol=1e-3)


class _ShiftRecorder:
    """A stand-in flow whose latent shift is x + 100 m s (records m and s)."""

    def __init__(self) -> None:
        self.masks: list[torch.Tensor] = []
        self.shifts: list[torch.Tensor] = []

    def shift(self, x, mask, shift):
        self.masks.append(mask)
        self.shifts.append(shift)
        return x + 100.0 * mask * shift

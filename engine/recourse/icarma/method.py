"""iCARMA and CARMA at deployment: amortized causal recourse, one forward pass per batch.

iCARMA (the iCARMA paper, section 4 and appendix B). For factuals x and actionability profiles
(hard mask h, scores -> weights w and priors pi under the context's cost profile), the trained
networks of engine.recourse.icarma.networks give the deterministic mask

    m_j = 1[l_j(x, c) > 0] * h_j

and intervention values on the masked features: a = x + M * f_theta(x, m, c) for a model
that proposes do-values (our fast configuration), or the values x'_m of the flow
counterfactual of its clamped latent shift for the paper configuration's, which acts as
CARMA's code does (engine.recourse.icarma.networks). Because the
mask is multiplied by h, a feature outside the person's actionable set can never be acted on.
A person whose mask is empty gets no action (the paper's pipeline); ``fill_empty_mask`` (ours;
the default for our fast models, as they were trained) switches on the most probable
actionable feature instead.

CARMA (population level) uses the same machinery with a model trained for everybody being able
to act on every globally actionable feature at constant cost; it never sees the profile. At
deployment its mask is intersected with the person's hard mask (so it never violates a hard
constraint either) and the action network is re-run with that mask.

Records are built by ``RecourseContext.evaluate``, i.e. the actions are evaluated on the
context's world model (the exact SCM for Loan), not on the flow.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from engine.decision import favourable_logit
from engine.preferences import ActionabilityProfiles, CostProfile, all_actionable
from engine.recourse.base import Capabilities, RecourseContext, RecourseMethod, Timer
from engine.recourse.batch import RecourseBatch
from engine.recourse.icarma.config import TRAININGS
from engine.recourse.icarma.networks import AmortizedRecourse, profile_code
from engine.recourse.icarma.paper_names import paper_model_name
from engine.recourse.plan_rules import toward_edge, within_rules
from engine.scm import ArrayLike
from engine.trained import trained

REPAIR_SCALES: tuple[float, ...] = (1.5, 2.0, 3.0)
# Under plan rules the candidates also take the network's moves shortened, so that a move the
# bounds clip still leaves distinct plans inside them.
RULE_SCALES: tuple[float, ...] = (0.5, 0.75)
# ... and spread along their own direction up to the edge of the rules' interval (a quarter,
# half, three quarters and all of the way: plan_rules.toward_edge).
EDGE_FRACTIONS: tuple[float, ...] = (0.25, 0.5, 0.75, 1.0)


class ICarma(RecourseMethod):
    """iCARMA (module docstring). ``model``/``flow`` override the scenario's artifacts;
    ``training`` picks the trained model (``trainings``; default the first: paper),
    ``repair`` the final check, ``fill_empty_mask`` an action for a person whose mask is
    empty (None: as the model was trained).

    Models (``training``): ``paper`` (the default) uses the paper's model for the profiles'
    elicitation scheme and the context's cost profile, the best of its seeds on validation
    (engine.papers.icarma.models; ``recourse-study train --icarma-training paper`` builds them);
    ``fast`` uses our faster configuration's model shared by every cost profile (``icarma`` /
    ``icarma-likert``, built by ``recourse-study train``). ``model`` overrides both.

    Final check (``repair``, off by default: our engineering safeguard beyond the paper; every
    benchmark row says whether it was on). The proposal's counterfactual is predicted with the causal flow, x'_flow = CF_flow(x, do(x_m = a_m)).
    For people whose x'_flow the decision model still rejects, a few batched alternatives are
    tried: the network's action with every actionable feature switched on, and both proposals
    with their moves scaled by 1.5, 2 and 3 (kept inside the training range). Among the
    alternatives the flow predicts favourable, the one with the lowest individually weighted cost
    is kept; if none is, the one with the highest decision logit. Only h-allowed features are ever
    switched on, so the hard constraint still holds.

    Under a study's plan rules (``context.rules``) the network's actions and candidates are put
    inside them before they are judged (plan_rules.within_rules: each value clamped into its
    plausible-change bounds and direction, a change too small to show left out); a context
    without rules (the paper's tables) gets the network's actions as they are.
    """

    name = "icarma"
    capabilities = Capabilities(candidates=True, amortized=True,
                                artifacts=("decision", "flow", "icarma", "icarma-likert"))
    individual = True
    trainings: tuple[str, ...] = TRAININGS

    def __init__(
        self,
        context: RecourseContext,
        *,
        model: AmortizedRecourse | None = None,
        flow: Any = None,
        repair: bool = False,
        training: str | None = None,
        fill_empty_mask: bool | None = None,
    ) -> None:
        super().__init__(context)
        problem = self._training_problem(training)
        if problem is not None:
            raise ValueError(f"{self.name}: {problem}")
        training = training or self.trainings[0]
        self._model = model
        self._flow = flow
        self.repair = bool(repair)
        self.training = training
        # None: as the model was trained (the paper's: no; our fast configuration: yes)
        self.fill_empty_mask = (training == "fast") if fill_empty_mask is None else bool(
            fill_empty_mask)

    @classmethod
    def option_problems(cls, options: dict[str, Any]) -> list[str]:
        """An unknown ``training`` (the constructor refuses it alike)."""
        problem = cls._training_problem(options.get("training"))
        return [] if problem is None else [problem]

    @classmethod
    def _training_problem(cls, training: str | None) -> str | None:
        if not training or training in cls.trainings:
            return None
        return f"training must be one of {', '.join(cls.trainings)}, got {training!r}"

    # ---- artifacts --------------------------------------------------------------------
    def artifact_name(self, elicitation: str) -> str:
        """The trained model serving profiles elicited with ``elicitation``."""
        if not self.individual:
            return "carma"
        if self.training == "paper":
            return paper_model_name(elicitation, self.context.cost_profile.name)
        return "icarma-likert" if elicitation == "likert" else "icarma"

    def model_for(self, profiles: ActionabilityProfiles) -> AmortizedRecourse:
        """The model given at construction, else the artifact for the profiles' elicitation."""
        if self._model is not None:
            return self._model
        return trained().amortized(self.context.scenario.name, self.artifact_name(profiles.elicitation))

    @property
    def flow(self) -> Any:
        if self._flow is None:
            self._flow = trained().flow(self.context.scenario.name)
        return self._flow

    # ---- actions ----------------------------------------------------------------------
    def cost_weights(self, profiles: ActionabilityProfiles) -> Tensor:
        """(n, d) weights the method minimizes (CARMA: 1, it ignores preferences)."""
        if self.individual:
            return profiles.weights(self.context.cost_profile)
        return torch.ones_like(profiles.scores)

    def network_code(self, profiles: ActionabilityProfiles, model: AmortizedRecourse) -> Tensor:
        """The profile code the networks see (CARMA: everybody all-actionable, constant)."""
        if self.individual:
            return profile_code(profiles, self.context.cost_profile, model.actionable)
        scenario = self.context.scenario
        everyone = all_actionable(scenario.feature_names, scenario.actionable, len(profiles))
        return profile_code(everyone, CostProfile("constant"), model.actionable)

    def _values(self, model: AmortizedRecourse, x: Tensor, m: Tensor, code: Tensor) -> Tensor:
        """The network's intervention values; the flow is loaded only for a latent-shift
        model (engine.recourse.icarma.networks), which needs it to state its plan."""
        return model.action_values(x, m, code, self.flow if model.needs_flow else None)

    def actions(self, x: Tensor, profiles: ActionabilityProfiles) -> tuple[Tensor, Tensor]:
        """(mask (n, d) bool, values (n, d) float64) for factuals x; batched, no grad."""
        model = self.model_for(profiles)
        hard = profiles.hard_mask[:, model.actionable].float()
        with torch.no_grad():
            code = self.network_code(profiles, model)
            m = model.deployment_mask(model.mask_outputs(x, code), hard, self.fill_empty_mask)
            values = self._values(model, x, m, code)
            if self.repair:
                m, values = self._repair(model, x, hard, code, m, values, profiles)
        mask = model.full_mask(m).bool()
        values = torch.where(mask, values.to(torch.float64), x.to(torch.float64))
        return within_rules(self.context.scenario, self.context.rules, x, mask, values)

    def _repair(
        self,
        model: AmortizedRecourse,
        x: Tensor,
        hard: Tensor,
        code: Tensor,
        m: Tensor,
        values: Tensor,
        profiles: ActionabilityProfiles,
    ) -> tuple[Tensor, Tensor]:
        """The final check of the module docstring, on the people the flow says still fail."""
        x32 = x.to(torch.float32)
        clf = self.context.classifier
        logit = favourable_logit(clf, self.flow.counterfactual(x32, model.full_mask(m), values))
        bad = (logit <= 0).nonzero().flatten()
        if len(bad) == 0:
            return m, values
        xb, hb, cb = x32[bad], hard[bad], code[bad]
        lo, hi = self.context.scenario.bounds.to(torch.float32)
        full_values = self._values(model, xb, hb, cb)
        proposals = [(m[bad], values[bad]), (hb, full_values)]
        cands = list(proposals)
        for s in REPAIR_SCALES:
            for pm, pv in proposals:
                cands.append((pm, (xb + s * (pv - xb)).clamp(lo, hi)))
        weights = self.cost_weights(profiles)[bad][:, model.actionable].float()
        idx = model.actionable
        k, nb = len(cands), len(bad)
        masks = torch.stack([c[0] for c in cands])  # (k, nb, g)
        vals = torch.stack([c[1] for c in cands])  # (k, nb, d)
        x_rep = xb.expand(k, nb, -1).reshape(k * nb, -1)
        x_cf = self.flow.counterfactual(
            x_rep, model.full_mask(masks.reshape(k * nb, -1)), vals.reshape(k * nb, -1)
        )
        cand_logit = favourable_logit(clf, x_cf).reshape(k, nb)
        moved = (vals[:, :, idx] - xb[None, :, idx]).abs() / model.ranges[idx]
        wcost = (masks * weights[None] * moved).sum(dim=2)
        score = torch.where(cand_logit > 0, wcost, torch.inf)
        none_valid = torch.isinf(score).all(dim=0)
        choice = torch.where(none_valid, cand_logit.argmax(dim=0), score.argmin(dim=0))
        cols = torch.arange(nb)
        m, values = m.clone(), values.clone()
        m[bad] = masks[choice, cols]
        values[bad] = vals[choice, cols]
        return m, values

    # ---- RecourseMethod ---------------------------------------------------------------
    def recourse(self, factuals: ArrayLike, profiles: ActionabilityProfiles) -> RecourseBatch:
        """One recourse per person, evaluated by the context (module docstring)."""
        x = self.context.check_inputs(factuals, profiles)
        with Timer() as t:
            mask, values = self.actions(x, profiles)
        return self.context.evaluate(self.name, x, mask, values, profiles, runtime=t.seconds)


    def candidates(self, factuals: ArrayLike, profiles: ActionabilityProfiles) -> RecourseBatch:
        """Valid plans per person, for a distance design to choose from.

        For every non-empty subset S of the person's actionable set, the action network's
        values with S as the mask, and the same moves scaled by 1.5, 2 and 3 (kept inside the
        training range): up to (2^|F_i| - 1) * 4 plans, evaluated on the context's world
        model. Invalid and duplicate plans are dropped; rows are sorted by person, then
        weighted cost. A person without a valid plan gets no row. Under a study's plan rules
        every plan is first put inside them (plan_rules.within_rules: values clamped into the
        bounds and directions, changes too small to show left out), as in ``actions``, and
        the moves are also scaled by 0.5 and 0.75 (``RULE_SCALES``) and every move is
        spread along its own direction up to the edge of the rules' interval
        (``EDGE_FRACTIONS``, plan_rules.toward_edge), so that moves the bounds clip still
        leave distinct plans inside them.
        """
        x = self.context.check_inputs(factuals, profiles)
        with Timer() as t:
            model = self.model_for(profiles)
            g = model.g
            subsets = torch.tensor(
                [[(s >> k) & 1 for k in range(g)] for s in range(1, 2**g)], dtype=torch.float32
            )  # (2^g - 1, g)
            hard = profiles.hard_mask[:, model.actionable].float()
            n, k = x.shape[0], subsets.shape[0]
            masks = subsets[None].expand(n, k, g) * hard[:, None]  # subsets of F_i (+ repeats)
            keep = (masks.sum(dim=2) == subsets.sum(dim=1)[None]).reshape(-1)
            person = torch.arange(n).repeat_interleave(k)[keep]
            m = masks.reshape(n * k, g)[keep]
            x32 = x.to(torch.float32)[person]
            with torch.no_grad():
                code = self.network_code(profiles, model)[person]
                values = self._values(model, x32, m, code)
            lo, hi = self.context.scenario.bounds.to(torch.float32)
            scales = REPAIR_SCALES if self.context.rules is None else RULE_SCALES + REPAIR_SCALES
            scaled = [values] + [(x32 + s * (values - x32)).clamp(lo, hi) for s in scales]
            values = torch.cat(scaled)
            m = m.repeat(len(scaled), 1)
            person = person.repeat(len(scaled))
            mask = model.full_mask(m).bool()
            x_rows = x[person]
            values = torch.where(mask, values.to(torch.float64), x_rows)
            if self.context.rules is not None:
                far = toward_edge(self.context.scenario, self.context.rules, x_rows, values,
                                  EDGE_FRACTIONS)
                values = torch.cat([values, *far])
                mask = mask.repeat(len(far) + 1, 1)
                person = person.repeat(len(far) + 1)
                x_rows = x[person]
            mask, values = within_rules(self.context.scenario, self.context.rules, x_rows, mask,
                                        values)
        batch = self.context.evaluate(
            self.name, x_rows, mask, values, profiles[person], runtime=t.seconds, person=person
        )
        batch = batch.select(batch.valid.nonzero().flatten())
        key = torch.cat([batch.person[:, None].double(), batch.action_values], dim=1)
        _, first = _unique_rows(key)
        batch = batch.select(first)
        order = torch.argsort(batch.weighted_cost, stable=True)
        order = order[torch.argsort(batch.person[order], stable=True)]
        return batch.select(order)


def _unique_rows(key: Tensor) -> tuple[Tensor, Tensor]:
    """(inverse, first index of each distinct row) of a 2-d tensor."""
    uniq, inverse = torch.unique(key, dim=0, return_inverse=True)
    first = torch.full((len(uniq),), len(key), dtype=torch.long)
    first = first.scatter_reduce(0, inverse, torch.arange(len(key)), reduce="amin")
    return inverse, first


class Carma(ICarma):
    """CARMA: population-level mask and constant profile (module docstring); trained with
    the fast configuration only."""

    name = "carma"
    capabilities = Capabilities(candidates=True, amortized=True,
                                artifacts=("decision", "flow", "carma"))
    individual = False
    trainings = ("fast",)

    def __init__(
        self,
        context: RecourseContext,
        *,
        model: AmortizedRecourse | None = None,
        flow: Any = None,
        repair: bool = False,
    ) -> None:
        super().__init__(context, model=model, flow=flow, repair=repair, training="fast")

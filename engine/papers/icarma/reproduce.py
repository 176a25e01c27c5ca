"""The iCARMA paper's Tables 1-3 on the Loan world, as published (its section 5).

Setup (as the paper's): scenario ``loan-carma-reference`` (CARMA's published
samples: the decision model trained on the classifier split with CARMA's classifier recipe,
the flow on the causal-estimator split, iCARMA on the recourse split's training rejections),
deployment population = the recourse test split's rejections (reproduce_core:
``REPRODUCE_SCENARIO``; ``loan-carma`` has the platform's more accurate decision model).
Profiles per hard-constraint setting as in engine.papers.recourse_benchmark (draw 0 = seed 0: every
method and cost profile sees the same people with the same profiles; the Oracle also runs on
further draws, below); Likert scores i.i.d. (the paper's sampling).

Methods: the causal Oracle with the paper's grid (25 bins around each factual, clipped to the
range of the training split's rejected people, as CARMA's reference Oracle; oracle_grid) and
the plausibility constraint, run on ``oracle_draws`` independent draws of
the profiles (draw r = profile seed r; the paper's ten, ``FAST_ORACLE_DRAWS`` with ``fast``):
the Oracle has no training, so its only randomness is which features each person may act on,
and "ours" is the mean over the draws, the estimate of what the paper's single draw estimates
(on Table 1's two-feature row one draw's validity has sd 0.012 across draws: 0.505 .. 0.536
over draws 0-5, against the 0.03 tolerance); iCARMA without repair, one model per
elicitation and cost profile, trained with the paper's configuration for seeds 1000, 2000, ...
(engine.papers.icarma.models), every seed on draw 0 of the profiles. "Ours" for an iCARMA cell is
the best seed on validation (what the paper reports); the mean and sd over the seeds sit
beside it. hap, as the paper's tables count it (engine.papers.recourse_benchmark.hap_paper): among
the people who get a valid recourse, the share whose recommended profile x' changes their
least-preferred actionable feature (by an action or as a consequence of one), one-feature
people included (why this reading: its docstring). Each hap cell's note gives the count over
people with >= 2 features (no recourse counting 0) and the count of actions only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine.artifacts import build_artifacts, load_amortized, load_decision_model, load_flow
from engine.icarma_choices import PAPER_SEEDS
from engine.papers.icarma.datasets import paper_dataset, table_rows
from engine.papers.icarma.models import ensure_paper_models
from engine.papers.icarma.variants import (
    FAST_EPOCHS,
    training_changes,
    variant_config,
    variant_notes,
)
from engine.papers.paper_values import paper_source, target_values, tolerance
from engine.papers.recourse_benchmark import (
    BenchmarkConfig,
    constraint_profiles,
    hap_paper,
    hap_profile,
    rejected_population,
)
from engine.papers.reproduce_core import (
    Cell,
    Check,
    Progress,
    ReproduceConfig,
    TargetResult,
    seed_stats,
)
from engine.preferences import ActionabilityProfiles, CostProfile
from engine.recourse.base import RecourseContext
from engine.recourse.icarma.config import ICarmaConfig
from engine.recourse.icarma.method import ICarma
from engine.recourse.oracle.method import CausalOracle
from engine.scenarios import get_scenario
from engine.scenarios.base import Scenario

FAST_ORACLE_DRAWS = 3
METRICS = ("validity", "plausibility", "hap")
# The methods of the paper's tables, with the switches they run with (as published).
PAPER_METHODS: dict[str, dict[str, Any]] = {
    "oracle": {"repair": None, "oracle_grid": "factual", "oracle_range": "rejected"},
    "icarma": {"repair": False, "oracle_grid": None, "oracle_range": None},
}


class World:
    """The scenario, its trained decision model and flow, and the deployment population."""

    def __init__(self, config: ReproduceConfig, note: Progress) -> None:
        note(f"{config.scenario}: decision model and flow")
        build_artifacts(config.scenario, quick=config.quick, only=("decision", "flow"))
        self.config = config
        self.scenario: Scenario = get_scenario(config.scenario)
        self.classifier = load_decision_model(config.scenario)
        self.flow = load_flow(config.scenario)
        self.x = rejected_population(self.scenario, self.classifier, config.n)
        self.note = note
        self._oracle: dict[tuple[str, str, str, int], dict[str, Any]] = {}
        self._oracles: dict[str, CausalOracle] = {}  # per cost profile: one grid range
        self.models: dict[tuple[str, str], Any] = {}

    @property
    def seeds(self) -> int:
        if self.config.seeds is not None:
            return self.config.seeds
        return 1 if self.config.fast else PAPER_SEEDS

    @property
    def oracle_draws(self) -> int:
        """Profile draws the Oracle's figures average over (module docstring)."""
        return FAST_ORACLE_DRAWS if self.config.fast else PAPER_SEEDS

    def profiles(self, constraint: str, elicitation: str, draw: int = 0) -> ActionabilityProfiles:
        """The deployment population's profiles of one hard-constraint setting; ``draw`` r
        is the r-th independent draw (profile seed r)."""
        cfg = BenchmarkConfig(elicitation=elicitation, score_sampling="iid", seed=draw)
        return constraint_profiles(self.scenario, constraint, cfg, len(self.x))

    def context(self, cost_profile: str) -> RecourseContext:
        return RecourseContext(
            self.scenario, self.classifier, cost_profile=CostProfile(cost_profile)
        )

    def summary(self, batch: Any, profiles: ActionabilityProfiles) -> dict[str, Any]:
        return {**batch.summary(), "hap_profile": hap_profile(batch, profiles),
                "hap_paper": hap_paper(batch, profiles)}

    def runs(
        self, method: str, constraint: str, cost_profile: str, elicitation: str
    ) -> tuple[list[dict[str, Any]], int | None, dict[str, Any] | None]:
        """A paper row's method run as published: per seed (or profile draw) the summary, the
        index of the reported run (None: the mean over runs is reported), training facts
        (None for a method without training)."""
        runners = {"oracle": self.oracle_runs, "icarma": self.icarma}
        if method not in runners:
            raise ValueError(f"no paper runner for method {method!r}")
        return runners[method](constraint, cost_profile, elicitation)

    def oracle_runs(
        self, constraint: str, cost_profile: str, elicitation: str
    ) -> tuple[list[dict[str, Any]], None, None]:
        """The Oracle is deterministic given the profiles: one run per profile draw, the mean
        reported, no training."""
        n = self.oracle_draws
        self.note(f"Oracle: {constraint} actionable, {cost_profile}, {n} profile draw(s)")
        return [self.oracle(constraint, cost_profile, elicitation, r) for r in range(n)], None, None

    def oracle(
        self, constraint: str, cost_profile: str, elicitation: str, draw: int = 0
    ) -> dict[str, Any]:
        key = (constraint, cost_profile, elicitation, draw)
        if key not in self._oracle:
            if cost_profile not in self._oracles:
                paper = PAPER_METHODS["oracle"]
                self._oracles[cost_profile] = CausalOracle(
                    self.context(cost_profile), grid=paper["oracle_grid"],
                    grid_range=paper["oracle_range"])
            profiles = self.profiles(constraint, elicitation, draw)
            batch = self._oracles[cost_profile].recourse(self.x, profiles)
            self._oracle[key] = self.summary(batch, profiles)
        return self._oracle[key]

    def icarma(
        self, constraint: str, cost_profile: str, elicitation: str
    ) -> tuple[list[dict[str, Any]], int, dict[str, Any]]:
        """Per seed the summary, the index of the best seed on validation, training facts."""
        key = (elicitation, cost_profile)
        if key not in self.models:
            fast = self.config.fast
            self.note(f"iCARMA {elicitation}/{cost_profile}: {self.seeds} seed(s)"
                      f"{' (fast)' if fast else ''}")
            self.models[key] = ensure_paper_models(
                self.config.scenario, elicitation, cost_profile, self.seeds,
                quick=self.config.quick, changes=training_changes(self.config, elicitation),
            )
        pm = self.models[key]
        profiles = self.profiles(constraint, elicitation)
        ctx = self.context(cost_profile)
        per_seed = []
        for seed in pm.seeds:
            model = load_amortized(self.config.scenario, pm.member_name(seed))
            method = ICarma(ctx, model=model, flow=self.flow, repair=False)
            per_seed.append(self.summary(method.recourse(self.x, profiles), profiles))
        facts = {
            "seeds": list(pm.seeds),
            "selected_seed": pm.selected_seed,
            "val_scores": pm.selected.metadata["metrics"]["val_scores"],
            "epochs": pm.selected.metadata["config"]["epochs"],
            "training_seconds": {
                str(r.metadata["config"]["seed"]): r.metadata["seconds"] for r in pm.members
            },
            # the hinge's final weight (CARMA's multiplier) and, over the last training draws,
            # the shares with an active hinge and an empty sampled mask (icarma_training)
            **{key: {str(r.metadata["config"]["seed"]): r.metadata["metrics"].get(key)
                     for r in pm.members}
               for key in ("multiplier_final", "train_hinge_active", "train_empty_mask")},
        }
        return per_seed, list(pm.seeds).index(pm.selected_seed), facts


def _reported(per_seed: list[dict[str, Any]], best: int | None, key: str) -> float | None:
    """The figure a cell reports: the selected run's, or the mean over runs (best None)."""
    return seed_stats([s[key] for s in per_seed])[0] if best is None else per_seed[best][key]


def table_cells(world: World, target: str) -> tuple[list[Cell], dict[str, Any]]:
    """Every row of a Tables 1-3 target, with ours beside it."""
    spec = target_values(target)
    elicitation = spec["elicitation"]
    cells: list[Cell] = []
    training: dict[str, Any] = {}
    for row in table_rows(spec, world.config.scenario):
        method, constraint, cp = row["method"], str(row["constraint"]), row["cost_profile"]
        per_seed, best, facts = world.runs(method, constraint, cp, elicitation)
        setting = {"constraint": constraint, "cost_profile": cp, "elicitation": elicitation,
                   **PAPER_METHODS[method]}
        if facts is not None:
            training[f"{elicitation}/{cp}"] = facts
        if best is None:
            setting["profile_draws"] = len(per_seed)
        hap_actions = _reported(per_seed, best, "hap")
        hap_two = _reported(per_seed, best, "hap_profile")
        cost_mean = _reported(per_seed, best, "cost_mean")
        for metric in METRICS:
            if metric not in row:
                continue
            key = "hap_paper" if metric == "hap" else metric
            mean, sd = seed_stats([s[key] for s in per_seed])
            notes = [f"among valid recourses, the least-preferred feature changes in x'; over "
                     f"people with >= 2 features (no recourse: 0): {hap_two:.3f}; counting "
                     f"actions only: {hap_actions:.3f}"] if metric == "hap" else []
            if best is None and len(per_seed) > 1:
                notes.append(f"mean over {len(per_seed)} profile draws; draw 0 (iCARMA's "
                             f"profiles): {per_seed[0][key]:.3f}")
            cells.append(Cell(
                table=spec["table"], row=row["row"], method=method, metric=metric,
                paper=float(row[metric]), ours=_reported(per_seed, best, key), ours_mean=mean,
                ours_sd=sd, seeds=len(per_seed), tolerance=tolerance(method, metric),
                note="; ".join(notes),
                setting={**setting, "hap_actions": hap_actions, "hap_profile": hap_two,
                         "cost_mean": cost_mean,
                         "n": per_seed[0]["n"]},
            ).judge())
    return cells, training


def _value(cells: list[Cell], method: str, metric: str, **setting: str) -> float:
    for c in cells:
        if c.method == method and c.metric == metric and all(
            c.setting.get(k) == v for k, v in setting.items()
        ):
            return float("nan") if c.ours is None else c.ours
    raise KeyError((method, metric, setting))


def _within_all(cells: list[Cell], method: str, metric: str) -> Check:
    rows = [c for c in cells if c.method == method and c.metric == metric]
    bad = [c for c in rows if not c.within]
    tol = rows[0].tolerance if rows else None
    detail = "; ".join(f"{c.row}: {c.ours:.3f} vs {c.paper:.3f}" for c in rows
                       if c.ours is not None and c.paper is not None)
    return Check(f"{method} {metric} within {tol} of the paper on every row", not bad, detail)


def _falls(cells: list[Cell], method: str, metric: str) -> Check:
    vals = [_value(cells, method, metric, constraint=k) for k in ("all", "3", "2", "1")]
    ok = all(b < a for a, b in zip(vals, vals[1:], strict=False))
    return Check(f"{method} {metric} falls as features are removed (all > 3 > 2 > 1)", ok,
                 " > ".join(f"{v:.3f}" for v in vals))


def _constant_hap_far_above(cells: list[Cell], constraint: str, gap: float = 0.2) -> Check:
    hap = {cp: _value(cells, "icarma", "hap", constraint=constraint, cost_profile=cp)
           for cp in ("constant", "concave", "linear", "convex")}
    others = max(hap[cp] for cp in ("concave", "linear", "convex"))
    label = "soft" if constraint == "all" else "hard (random) + soft"
    return Check(
        f"iCARMA hap of the constant profile far above the three others ({label}; by >= {gap})",
        hap["constant"] - others >= gap,
        ", ".join(f"{cp} {v:.3f}" for cp, v in hap.items()),
    )


def _result(world: World, target: str, cells: list[Cell], checks: list[Check],
            training: dict[str, Any]) -> TargetResult:
    spec = target_values(target)
    cfg = world.config
    notes = []
    if cfg.fast:
        elicitation = spec.get("elicitation", "ranking")
        paper = ICarmaConfig.paper(elicitation, dataset=paper_dataset(cfg.scenario))
        notes.append(f"fast: {world.seeds} seed(s), iCARMA trained {FAST_EPOCHS[elicitation]} "
                     f"epochs instead of the paper's {paper.epochs}, the Oracle over "
                     f"{world.oracle_draws} profile draws instead of {PAPER_SEEDS}; not the "
                     "paper's configuration")
    notes.extend(variant_notes(cfg))
    return TargetResult(
        target=target, title=spec["title"], table=spec["table"],
        paper=paper_source("icarma"),
        config={"scenario": cfg.scenario, "seeds": world.seeds, "fast": cfg.fast,
                "n": len(world.x), "repair": False,
                "oracle_grid": PAPER_METHODS["oracle"]["oracle_grid"],
                "oracle_range": PAPER_METHODS["oracle"]["oracle_range"],
                "oracle_profile_draws": world.oracle_draws,
                "icarma_training": "paper" + (" (shortened)" if cfg.fast else ""),
                **variant_config(cfg),
                "score_sampling": "iid",
                "decision_model": world.scenario.extras.get("decision", "trained")},
        cells=cells, checks=checks, notes=notes, extras={"icarma_models": training},
    )


def _drops_with_random(cells: list[Cell]) -> Check:
    """GMSC (the paper's App. D.3): with random hard constraints both validity and
    plausibility drop below the all-four case."""
    pairs = {m: (_value(cells, "icarma", m, constraint="all"),
                 _value(cells, "icarma", m, constraint="random")) for m in ("validity",
                                                                          "plausibility")}
    return Check("iCARMA validity and plausibility lower with random hard constraints than "
                 "with all four features", all(r < a for a, r in pairs.values()),
                 "; ".join(f"{m}: all {a:.3f}, random {r:.3f}" for m, (a, r) in pairs.items()))


def _linear_hap_below_constant(cells: list[Cell]) -> Check:
    """GMSC (App. D.3): under hard (3) + soft, the linear profile's hap below the constant's."""
    hap = {cp: _value(cells, "icarma", "hap", constraint="3", cost_profile=cp)
           for cp in ("constant", "linear")}
    return Check("iCARMA hap lower with the linear profile than the constant one (hard (3) + "
                 "soft)", hap["linear"] < hap["constant"],
                 ", ".join(f"{cp} {v:.3f}" for cp, v in hap.items()))


def _is_one(cells: list[Cell], method: str, metric: str) -> Check:
    got = [c.ours for c in cells if c.method == method and c.metric == metric]
    return Check(f"{method} {metric} 1.0 on every row", all(v == 1.0 for v in got),
                 ", ".join(f"{v:.3f}" for v in got if v is not None))


# The claims each table's text makes (and the acceptance checks), on our cells.
CHECKS: dict[str, Callable[[list[Cell]], list[Check]]] = {
    "icarma-table1": lambda cells: [
        _within_all(cells, "oracle", "validity"),
        _is_one(cells, "oracle", "plausibility"),
        _within_all(cells, "icarma", "validity"),
        _falls(cells, "icarma", "plausibility"),
        _falls(cells, "oracle", "validity"),
    ],
    "icarma-table2": lambda cells: [
        _within_all(cells, "oracle", "validity"),
        _within_all(cells, "icarma", "validity"),
        _constant_hap_far_above(cells, "all"),
        _constant_hap_far_above(cells, "random"),
    ],
    "icarma-table3": lambda cells: [
        _within_all(cells, "icarma", "validity"),
        _constant_hap_far_above(cells, "all"),
        _constant_hap_far_above(cells, "random"),
    ],
}


# The same for the GMSC rows (App. D.3's claims).
GMSC_CHECKS: dict[str, Callable[[list[Cell]], list[Check]]] = {
    "icarma-table1": lambda cells: [_within_all(cells, "icarma", "validity"),
                                    _drops_with_random(cells)],
    "icarma-table2": lambda cells: [_within_all(cells, "icarma", "validity"),
                                    _linear_hap_below_constant(cells)],
}


def table_target(target: str) -> Callable[[ReproduceConfig, Progress], TargetResult]:
    """The runner of one of Tables 1-3: every row, then the table's checks.

    ``fast``: one seed and a shortened training (``FAST_EPOCHS``), the Oracle over
    ``FAST_ORACLE_DRAWS`` profile draws.
    Variants of iCARMA's training (a fixed or acting-only hinge weight, the best epoch, CARMA's
    mask head, do-values or another clamp) are cached under their own names and noted in the
    result: engine.papers.icarma.variants.
    """

    def run(config: ReproduceConfig, note: Progress) -> TargetResult:
        checks = GMSC_CHECKS if paper_dataset(config.scenario) == "gmsc" else CHECKS
        world = World(config, note)
        cells, training = table_cells(world, target)
        return _result(world, target, cells, checks[target](cells), training)

    return run


def _fairness(config: ReproduceConfig, note: Progress) -> TargetResult:
    from engine.papers.icarma.reproduce_fairness import fairness_target

    return fairness_target(World(config, note))


TARGETS = {
    **{name: table_target(name) for name in CHECKS},
    "icarma-fairness": _fairness,
}

__all__ = ["TARGETS", "World", "table_cells", "training_changes"]

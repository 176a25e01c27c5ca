"""The HARE benchmark (the HARE paper, section 5): base generators vs HARE vs Multi-HARE with
simulated people, plus the budget and calibration ablations and the interactive step time.

For every seed s: ``n`` rejected deployment-test applicants drawn at random (with
``fixed_people`` the same n fixed ones in every seed, engine.decision.fixed_test_people), their
actionability profiles (``constraint``: how many features each person may change; uniform
preferences, ranking scores), and for every scale the simulated people of
engine.synthetic.hare_people (hidden ideal plans). Each base method's plans are computed once
per seed; HARE (T = 1) and Multi-HARE (T > 1) refine them with the same people.

Per row (base, variant, scale, budget, iterations, calibrate), over the people who have an
ideal plan (a person without a favourable plan keeps x' = x, so failures count as GTP =
|v(x_gt)| and GTD = 1; with ``failed_plans`` dropped, as the paper's released code scores
them, GTP and GTD are over the people with a favourable plan only:
engine.papers.hare.metrics): ``gtp``/``gtd`` means per seed, reported as the mean and standard
deviation over seeds; the classical metrics of the paper's Table 4 as it defines them (section
4.1): ``success_rate`` (favourable plans), ``violations`` (acted features outside the person's
actionable set, the mean per person), ``proximity`` (the L2 distance between the factual and
the plan's profile, over the per-feature deltas of engine.metrics.feature_deltas: range units,
0/1 for categorical features) and ``sparsity`` (L0 over actions) over favourable plans,
``redundancy`` (acted features whose revert alone keeps the plan favourable, mean per
favourable plan); ``proximity_l1`` and ``violations_total`` (summed); ``queries`` and
``queries_max`` (comparisons and acceptance questions asked: mean per person, and the most
any person was asked, never more than the budget), ``keep_incumbent`` (engine.recourse.hare.state;
on as the paper's released code runs), ``gamma``, ``gamma_schedule`` and ``final_accept`` (the
machine's step size, its schedule and last accept question: the paper's ``paper`` / ``ask`` by
default), ``iterations_reading`` (what T means: the paper's text, ``text`` by default, or its
released code, engine.recourse.hare.config), ``ground_truth`` (how the simulated people's
ideals were drawn: engine.synthetic.hare_truth, the paper's ``perturbation`` by default) and
``seconds`` (mean per seed: the method's own time; base generation is not part of HARE's).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import Tensor

from engine.decision import Classifier, fixed_test_people
from engine.papers.hare.metrics import FAILED_PLANS, plan_metrics
from engine.papers.recourse_benchmark import n_actionable, rejected_population
from engine.papers.run_checkpoint import Checkpoint
from engine.preferences import ActionabilityProfiles, sample_profiles
from engine.recourse import METHODS, capabilities, get_method
from engine.recourse.base import RecourseContext, RecourseMethod
from engine.recourse.hare.config import HareConfig
from engine.recourse.hare.method import Hare
from engine.recourse.shift_actions import allowed_mask
from engine.scenarios.base import Scenario
from engine.synthetic.hare_people import SCALES, SimulatedPeople
from engine.synthetic.hare_truth import PAPER_GROUND_TRUTH, check_ground_truth


def base_methods() -> tuple[str, ...]:
    """The catalogue's methods HARE can refine (every one that does not ask people itself)."""
    return tuple(m for m in METHODS if not capabilities(m).interactive)


@dataclass(frozen=True)
class HareBenchmarkConfig:
    """What the HARE benchmark runs (module docstring): bases, scales, budget B, iterations
    T, people and seeds, and HARE's own settings (the paper's by default).

    >>> from engine.papers import HareBenchmarkConfig
    >>> paper = HareBenchmarkConfig()       # the HARE paper's setting
    >>> paper.budget, paper.gamma, paper.gamma_schedule, paper.final_accept, paper.seeds
    (30, 1.0, 'paper', 'ask', 5)
    """

    bases: tuple[str, ...] = ("wachter", "gs", "oracle", "icarma")
    scales: tuple[str, ...] = ("near", "intermediate", "far")
    budget: int = 30
    iterations: tuple[int, ...] = (1, 5)
    ablation_budgets: tuple[int, ...] = (10, 30, 70)
    ablation_scale: str = "far"
    calibration_ablation: bool = True
    constraint: str = "random"
    n: int = 150
    seeds: int = 5
    steps: int = 100
    step_sessions: int = 5
    keep_incumbent: bool = HareConfig.keep_incumbent
    gamma: float = 1.0  # the candidates' step (the paper's 1; engine.recourse.hare.state)
    gamma_schedule: str = "paper"  # engine.recourse.hare.state: paper | halve
    final_accept: str = "ask"  # engine.recourse.hare.state: ask | skip
    iterations_reading: str = "text"  # engine.recourse.hare.config: text | code
    # a person whose plan failed: scored as no plan (x' = x) or dropped from GTP/GTD as the
    # paper's released code drops them (engine.papers.hare.metrics)
    failed_plans: str = FAILED_PLANS[0]
    # the simulated people's ideal plans (engine.synthetic.hare_truth): perturbation | rays
    ground_truth: str = PAPER_GROUND_TRUTH
    base_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    # (scale, budget, iterations, calibrate) rows to run instead of the ones derived above
    settings: tuple[tuple[str, int, int, str], ...] = ()
    step_timing: bool = True
    # the same n fixed rejected test people in every seed (the HARE paper's "150 fixed
    # individual samples taken from the test-set"), else n drawn anew per seed
    fixed_people: bool = False

    def validate(self, scenario: Scenario) -> None:
        problems = []
        bases = base_methods()
        for b in self.bases:
            if b not in bases:
                problems.append(f"unknown base {b!r} (choose from {', '.join(bases)})")
        for s in (*self.scales, self.ablation_scale):
            if s not in SCALES:
                problems.append(f"unknown scale {s!r} (choose from {', '.join(SCALES)})")
        if any(t < 1 for t in self.iterations) or not self.iterations:
            problems.append("iterations must be >= 1")
        for b in (self.budget, *self.ablation_budgets):
            if b < max(self.iterations):
                problems.append(f"budget {b} is smaller than the largest iteration count")
        try:
            HareConfig(gamma=self.gamma, gamma_schedule=self.gamma_schedule,
                       final_accept=self.final_accept,
                       iterations_reading=self.iterations_reading)
        except ValueError as e:
            problems.append(str(e))
        if self.failed_plans not in FAILED_PLANS:
            problems.append(f"failed plans must be one of {', '.join(FAILED_PLANS)}, got "
                            f"{self.failed_plans!r}")
        try:
            check_ground_truth(self.ground_truth)
        except ValueError as e:
            problems.append(str(e))
        if self.n < 1 or self.seeds < 1:
            problems.append("n and seeds must be >= 1")
        try:
            n_actionable(self.constraint, len(scenario.actionable))
        except ValueError as e:
            problems.append(str(e))
        if problems:
            raise ValueError("; ".join(problems))


def variant_name(iterations: int) -> str:
    return "hare" if iterations == 1 else "multi-hare"


def _aggregate(key: dict[str, Any], per_seed: list[dict[str, float]], n: int) -> dict[str, Any]:
    def col(name: str) -> np.ndarray:
        return np.array([r[name] for r in per_seed], dtype=float)

    row = dict(key)
    row["n"] = n
    row["seeds"] = len(per_seed)
    for m in ("gtp", "gtd"):
        v = col(m)
        row[f"{m}_mean"] = float(np.nanmean(v))
        row[f"{m}_sd"] = float(np.nanstd(v, ddof=1)) if len(v) > 1 else 0.0
        row[f"{m}_seeds"] = [float(x) for x in v]
    for m in ("success_rate", "violations", "proximity", "proximity_l1", "sparsity",
              "redundancy", "queries", "seconds"):
        row[m] = float(np.nanmean(col(m)))
    row["queries_max"] = int(col("queries_max").max())
    row["violations_total"] = int(col("violations_total").sum())
    return row


def _population(
    scenario: Scenario, classifier: Classifier, config: HareBenchmarkConfig, seed: int
) -> tuple[Tensor, ActionabilityProfiles]:
    rng = np.random.default_rng([seed, 7])
    if config.fixed_people:
        rows = fixed_test_people(scenario, classifier, config.n)
        x = scenario.dataset["test"][0][torch.from_numpy(rows)].to(torch.float64)
    else:
        pool = rejected_population(scenario, classifier, None)
        idx = rng.choice(len(pool), size=min(config.n, len(pool)), replace=False)
        x = pool[torch.as_tensor(np.sort(idx))].to(torch.float64)
    profiles = sample_profiles(
        scenario.feature_names, scenario.actionable, len(x), distribution="uniform",
        n_actionable=n_actionable(config.constraint, len(scenario.actionable)),
        elicitation="ranking", seed=rng,
    )
    return x, profiles


def run_hare_benchmark(
    context: RecourseContext,
    config: HareBenchmarkConfig,
    *,
    on_step: Callable[[str], None] | None = None,
    checkpoint: Checkpoint | None = None,
) -> dict[str, Any]:
    """Every row of the benchmark plus the interactive step timing (module docstring).
    With a ``checkpoint`` (engine.papers.run_checkpoint), each seed and base method's
    results are stored as they finish and an earlier run's are reused; torch's global
    generator is seeded at the start of each, so a unit's result does not depend on which
    units ran before it in this process."""
    config.validate(context.scenario)
    note = on_step or (lambda _msg: None)
    bases: dict[str, RecourseMethod] = {
        b: get_method(b, context, **config.base_options.get(b, {})) for b in config.bases
    }
    runs: dict[tuple, list[dict[str, float]]] = {}

    def add(key: tuple, metrics: dict[str, float]) -> None:
        runs.setdefault(key, []).append(metrics)

    settings = run_settings(config)
    n = 0
    for seed in range(config.seeds):
        x, profiles = _population(context.scenario, context.classifier, config, seed)
        n = len(x)
        allowed = allowed_mask(context, profiles.hard_mask)
        people = {s: SimulatedPeople.draw(context, x, allowed, s, seed=seed * 31 + i,
                                          ground_truth=config.ground_truth)
                  for i, s in enumerate(SCALES) if s in {*config.scales, config.ablation_scale}}
        for index, (name, base) in enumerate(bases.items()):
            unit = f"seed {seed} base {name}"
            stored = checkpoint.get(unit) if checkpoint is not None else None
            if stored is not None:
                note(f"seed {seed}: {name} reused from the checkpoint")
                for key, metrics in stored:
                    add(tuple(key), metrics)
                continue
            torch.manual_seed(seed * len(bases) + index)
            found = _base_unit(context, config, base, name, seed, x, profiles, people,
                               settings, note)
            for key, metrics in found:
                add(key, metrics)
            if checkpoint is not None:
                checkpoint.put(unit, [[list(key), metrics] for key, metrics in found])
    rows = [
        {**_aggregate(dict(zip(("base", "variant", "scale", "budget", "iterations", "calibrate"),
                               key, strict=True)), per_seed, n),
         **({k: (v if key[1] != "base" else None)
             for k, v in machine_options(config).items()}),
         "ground_truth": config.ground_truth, "failed_plans": config.failed_plans}
        for key, per_seed in runs.items()
    ]
    step = None
    if config.step_timing:
        note("interactive step timing")
        step = interactive_step_ms(context, bases[config.bases[0]], config)
    return {"rows": rows, "checks": acceptance_checks(rows, config), "step_ms": step}


def _base_unit(context: RecourseContext, config: HareBenchmarkConfig, base: RecourseMethod,
               name: str, seed: int, x: Tensor, profiles: ActionabilityProfiles,
               people: dict[str, SimulatedPeople], settings: list[tuple[str, int, int, str]],
               note: Callable[[str], None]) -> list[tuple[tuple, dict[str, float]]]:
    """One seed and base method: the base's plans scored at every scale, then every HARE
    setting over them; (row key, metrics) pairs."""
    found: list[tuple[tuple, dict[str, float]]] = []
    note(f"seed {seed}: {name} base plans")
    t0 = time.perf_counter()
    plans = base.recourse(x, profiles)
    base_seconds = time.perf_counter() - t0
    for s in config.scales:
        m = plan_metrics(context, plans, people[s], config.failed_plans)
        found.append(((name, "base", s, 0, 0, "none"),
                      {**m, "queries": 0.0, "queries_max": 0, "seconds": base_seconds}))
    for s, budget, t, cal in settings:
        note(f"seed {seed}: {name} {variant_name(t)} B={budget} T={t} {s} ({cal})")
        hare = Hare(context, base, budget=budget, iterations=t, calibrate=cal,
                    steps=config.steps, seed=seed, **machine_options(config))
        run = hare.run(x, profiles, people[s], base=plans)
        m = plan_metrics(context, run.final, people[s], config.failed_plans)
        asked = run.state.asked
        found.append(((name, variant_name(t), s, budget, t, cal),
                      {**m, "queries": float(asked.double().mean()),
                       "queries_max": int(asked.max()), "seconds": run.seconds}))
    return found


def machine_options(config: HareBenchmarkConfig) -> dict[str, Any]:
    """The state machine's options a run names in its rows (engine.recourse.hare.state)."""
    return {"keep_incumbent": config.keep_incumbent, "gamma": config.gamma,
            "gamma_schedule": config.gamma_schedule, "final_accept": config.final_accept,
            "iterations_reading": config.iterations_reading}


def run_settings(config: HareBenchmarkConfig) -> list[tuple[str, int, int, str]]:
    """The (scale, budget, iterations, calibrate) rows of a run: ``settings`` if given, else
    every scale at the budget, the budget ablation and the calibration ablation."""
    if config.settings:
        return list(dict.fromkeys(config.settings))
    settings = [(s, config.budget, t, "all") for s in config.scales for t in config.iterations]
    settings += [(config.ablation_scale, b, t, "all")
                 for b in config.ablation_budgets for t in config.iterations]
    if config.calibration_ablation:
        settings += [(config.ablation_scale, config.budget, 1, "winner")]
    return list(dict.fromkeys(settings))


def interactive_step_ms(
    context: RecourseContext, base: RecourseMethod, config: HareBenchmarkConfig
) -> dict[str, float]:
    """Milliseconds per interactive step (module docstring), over ``step_sessions`` people
    answering with the far-scale simulated ideal, Multi-HARE with the largest T.

    ``step_ms``: one interactive step of a ``HareSession`` as the web app performs it (restore
    from JSON, apply the answer, compute the next query, serialize), driven by a scripted person;
    p50, p95 and max in milliseconds.
    """
    x, profiles = _population(context.scenario, context.classifier, config, 0)
    k = min(config.step_sessions, len(x))
    x, profiles = x[:k], profiles[torch.arange(k)]
    people = SimulatedPeople.draw(context, x, allowed_mask(context, profiles.hard_mask),
                                  config.ablation_scale, seed=0,
                                  ground_truth=config.ground_truth)
    hare = Hare(context, base, budget=config.budget, iterations=max(config.iterations),
                steps=config.steps, **machine_options(config))
    times: list[float] = []
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as the web server runs: tiny tensors, many requests
    try:
        for i in range(k):
            _drive_session(context, hare, people, x, profiles, i, times)
    finally:
        torch.set_num_threads(threads)
    arr = np.array(times)
    return {"steps": len(arr), "p50": float(np.percentile(arr, 50)),
            "p95": float(np.percentile(arr, 95)), "max": float(arr.max())}


def _drive_session(
    context: RecourseContext, hare: Hare, people: SimulatedPeople, x: Tensor,
    profiles: ActionabilityProfiles, i: int, times: list[float],
) -> None:
    """One scripted person through a whole session, timing every step into ``times``."""
    session = hare.start_session(x[i : i + 1], profiles[i], seed=i)
    text = session.to_json()
    while True:
        q = session.next_query()
        if q.kind == "done":
            break
        names = context.scenario.feature_names
        shown = [torch.tensor([[o["x_cf"][f] for f in names]]) for o in q.options]
        one = people.row(i)
        t0 = time.perf_counter()
        session = hare.resume_session(text)
        if q.kind == "compare":
            session.answer(int(one.compare(shown[0], shown[1])[0]))
        else:
            session.accept(bool(one.accept(shown[0])[0]))
        session.next_query()
        text = session.to_json()
        times.append((time.perf_counter() - t0) * 1000.0)


def acceptance_checks(rows: list[dict[str, Any]], config: HareBenchmarkConfig) -> list[dict]:
    """The issue's acceptance criteria, evaluated on the rows (one entry per check)."""
    s, b = config.ablation_scale, config.budget
    by = {(r["base"], r["variant"], r["scale"], r["budget"], r["iterations"], r["calibrate"]): r
          for r in rows}
    t_multi = max(config.iterations)
    checks: list[dict[str, Any]] = []

    def check(name: str, ok: bool, detail: str) -> None:
        checks.append({"check": name, "passed": bool(ok), "detail": detail})

    for base in config.bases:
        r0 = by.get((base, "base", s, 0, 0, "none"))
        r1 = by.get((base, "hare", s, b, 1, "all"))
        if r0 and r1:
            check(f"{base}: HARE GTD <= half the base's ({s}, B={b})",
                  r1["gtd_mean"] <= 0.5 * r0["gtd_mean"],
                  f"{r1['gtd_mean']:.3f} vs {r0['gtd_mean']:.3f}")
        rm = by.get((base, "multi-hare", s, b, t_multi, "all"))
        if r1 and rm:
            check(f"{base}: Multi-HARE GTD <= HARE's", rm["gtd_mean"] <= r1["gtd_mean"],
                  f"{rm['gtd_mean']:.3f} vs {r1['gtd_mean']:.3f}")
        for t in config.iterations:
            seq = [by.get((base, variant_name(t), s, bb, t, "all"))
                   for bb in sorted(config.ablation_budgets)]
            if all(seq):
                vals = [r["gtd_mean"] for r in seq]  # type: ignore[index]
                check(f"{base}: {variant_name(t)} GTD does not increase with budget "
                      f"{'/'.join(map(str, sorted(config.ablation_budgets)))}",
                      all(b2 <= b1 + 1e-12 for b1, b2 in zip(vals, vals[1:], strict=False)),
                      " -> ".join(f"{v:.3f}" for v in vals))
        rw = by.get((base, "hare", s, b, 1, "winner"))
        if r1 and rw:
            check(f"{base}: calibrating every candidate beats calibrating the winner",
                  r1["gtd_mean"] < rw["gtd_mean"],
                  f"all {r1['gtd_mean']:.3f} vs winner {rw['gtd_mean']:.3f}")
    total = sum(r["violations_total"] for r in rows)
    check("zero actionability violations", total == 0, f"{total} violations")
    over = [r for r in rows if r["variant"] != "base" and r["queries_max"] > r["budget"]]
    check("no person is asked more than the budget (comparisons + accept questions)",
          not over, f"{len(over)} row(s) over budget; largest max/budget "
          f"{max((r['queries_max'] / r['budget'] for r in rows if r['budget']), default=0):.2f}")
    return checks

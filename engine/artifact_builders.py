"""How each trained artifact of a scenario is built, and with which configuration.

``configs(quick)`` gives the configuration of every artifact (``quick``: reduced training for
tests, same code). ``BUILDERS[name](scenario, config, progress, load_dep)`` trains one
artifact and returns it with the metrics recorded in its metadata; ``load_dep`` loads an
artifact it depends on (engine.artifacts resolves the order and the cache).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import torch
from torch import nn

from engine.decision import DecisionConfig, DecisionModel, accuracy, train_decision_model
from engine.flows import CausalFlow, FlowConfig, conditional_nll, counterfactual_rmse, train_flow
from engine.recourse.icarma.ensemble import train_ensemble
from engine.recourse.icarma.log import TrainingLog
from engine.recourse.icarma.networks import AmortizedRecourse
from engine.recourse.icarma.training import ICarmaConfig, train_amortized
from engine.scenarios.base import Scenario
from engine.vaes import CSVAEConfig, VAEConfig, build_vae_module, train_csvae, train_vae

Progress = Callable[[str, int, int, str], None]
LoadDep = Callable[[str], nn.Module]
GENERATIVE: tuple[str, ...] = ("vae", "csvae")  # the latent-space bases' models (engine.vaes)


@dataclass(frozen=True)
class Built:
    """A trained artifact and the metrics to record with it."""

    module: nn.Module
    metrics: dict[str, Any]


# A tabular world's artifacts (engine.scenarios.tabular): the HARE paper's two classifiers and
# the latent-space base generators' models.
TABULAR_ARTIFACTS: tuple[str, ...] = ("lr", "ann", *GENERATIVE)
CLASSIFIERS: tuple[str, ...] = ("lr", "ann")


def scenario_artifacts(scenario: Scenario, all_names: tuple[str, ...]) -> tuple[str, ...]:
    """The artifacts a scenario trains: none for a pool world (a fixed rule), the two
    classifiers and the latent-space bases' VAEs for a tabular world (no causal graph: no
    flow, no iCARMA), else
    ``all_names``."""
    if scenario.pool is not None:
        return ()
    return TABULAR_ARTIFACTS if scenario.world_kind == "tabular" else all_names


def decision_artifact(scenario: Scenario, kind: str = "trained") -> str:
    """The artifact of a scenario's trained decision model: ``decision``, or in a tabular
    world its ``classifier`` (``lr`` or ``ann``, the scenario file's choice, or ``kind`` when
    it names one)."""
    if scenario.world_kind != "tabular":
        if kind in CLASSIFIERS:
            raise ValueError(f"the {kind} classifier belongs to tabular worlds; scenario "
                             f"{scenario.name!r} is a {scenario.world_kind} world")
        return "decision"
    return kind if kind in CLASSIFIERS else str(scenario.extras.get("classifier", "ann"))


def classifier_configs(quick: bool) -> dict[str, DecisionConfig]:
    """The HARE paper's classifiers (section 4: "a 3-layer ANN and a logistic
    regression per data set, trained and fixed"): ``lr`` a logistic regression (no hidden
    layer), ``ann`` a ReLU network with CARLA's hidden widths (18, 9, 3). Both: binary cross
    entropy, Adam at 3e-3 on a cosine schedule, batch 256, 100 epochs (``quick``: 40 epochs
    at 1e-2: on German Credit's 500 training rows 40 epochs at 3e-3 leave the network
    approving everybody), the state with the best validation accuracy kept
    (engine.decision.train_decision_model)."""
    epochs, lr = (40, 1e-2) if quick else (100, 3e-3)
    return {"lr": DecisionConfig(hidden=(), epochs=epochs, lr=lr),
            "ann": DecisionConfig(hidden=(18, 9, 3), epochs=epochs, lr=lr)}


def scenario_configs(scenario: Scenario, quick: bool) -> dict[str, Any]:
    """``configs`` with the scenario's own choices for its decision model (its ``extras``:
    ``decision``, ``unfavourable_weight``)."""
    return configs(quick, scenario.extras.get("decision", "trained"),
                   float(scenario.extras.get("unfavourable_weight", 1.0)))


def configs(quick: bool, decision: str = "trained",
            unfavourable_weight: float = 1.0) -> dict[str, Any]:
    """Configuration of every artifact (module docstring); ``decision`` ``reference``: the
    decision model trained as CARMA's reference code (``DecisionConfig.reference``);
    ``unfavourable_weight``: its cost-sensitive loss weight (DecisionConfig)."""
    amortized = {
        "icarma": ICarmaConfig.fast(),
        "icarma-likert": ICarmaConfig.fast("likert"),
        "carma": ICarmaConfig.fast(individual=False),
    }
    dec = replace(DecisionConfig.reference() if decision == "reference" else DecisionConfig(),
                  unfavourable_weight=unfavourable_weight)
    if quick:
        return {
            "decision": replace(dec, epochs=40),
            "flow": FlowConfig(epochs=40, patience=10),
            **{name: cfg.reduced() for name, cfg in amortized.items()},
            **classifier_configs(quick),
            "vae": VAEConfig().reduced(),
            "csvae": CSVAEConfig().reduced(),
        }
    return {"decision": dec, "flow": FlowConfig(), **amortized, **classifier_configs(quick),
            "vae": VAEConfig(), "csvae": CSVAEConfig()}


def _note(progress: Progress | None, name: str) -> Callable[[int, int, str], None]:
    def report(done: int, total: int, note: str = "") -> None:
        if progress is not None:
            progress(name, done, total, note)

    return report


def build_decision(
    scenario: Scenario, config: DecisionConfig, progress: Progress | None, load_dep: LoadDep
) -> Built:
    """Train the decision model; record test accuracy and the Bayes rule's test accuracy
    (None without an exact SCM)."""
    data = scenario.data("decision")
    (xt, yt), (xv, yv), (xs, ys) = (data[s] for s in ("train", "validation", "test"))
    report = _note(progress, "decision")
    model, log = train_decision_model(
        xt, yt, xv, yv, config, lambda e, n: report(e, n, f"epoch {e}/{n}")
    )
    scm = scenario.exact_scm
    bayes = (None if scm is None else
             float(((scm.label_logit(xs) >= 0) == ys.bool()).double().mean()))
    with torch.no_grad():
        rejected = int((~model.decision(xs)).sum())
    return Built(
        model,
        {
            "decision_accuracy": accuracy(model, xs, ys),
            "bayes_accuracy": bayes,
            "validation_accuracy": max(log.val_accuracy),
            "best_epoch": log.best_epoch,
            "test_rejected": rejected,
        },
    )


def build_flow(
    scenario: Scenario, config: FlowConfig, progress: Progress | None, load_dep: LoadDep
) -> Built:
    """Train the causal flow; record test NLLs (flow vs exact) and counterfactual RMSE (the
    exact figures None without an exact SCM)."""
    report = _note(progress, "flow")
    flow, log = train_flow(
        scenario, config, lambda e, n, nll: report(e, n, f"epoch {e}/{n}, val nll {nll:.3f}")
    )
    xs = scenario.data("flow")["test"][0]
    scm = scenario.exact_scm
    exact = rmse = None
    if scm is not None:
        roots = torch.zeros(len(xs), dtype=torch.float64)
        for j in flow.context_idx:  # the exact log-mass of the discrete roots, as the flow drops it
            roots += scm.noise_log_prob(scm.abduct(xs))[:, j]
        exact = float(-(scm.log_prob(xs) - roots).mean())
        rmse = counterfactual_rmse(flow, scenario, xs, seed=1, scm=scm)
    return Built(
        flow,
        {
            "flow_test_nll": conditional_nll(flow, xs),
            "exact_test_nll": exact,
            "flow_cf_rmse": rmse,
            "best_epoch": log.best_epoch,
            "epochs_run": len(log.val_nll),
        },
    )


def build_amortized(
    scenario: Scenario, config: ICarmaConfig, progress: Progress | None, load_dep: LoadDep
) -> Built:
    """Train iCARMA (or CARMA) on the trained decision model and flow."""
    report = _note(progress, "icarma" if config.individual else "carma")
    classifier, flow = load_dep("decision"), load_dep("flow")
    model, log = train_amortized(
        scenario, classifier, flow, config,
        lambda e, n, info: report(e, n, f"epoch {e}/{n}, val validity {info['val_validity']:.3f}"),
    )
    return Built(model, _amortized_metrics(log))


def build_amortized_ensemble(
    scenario: Scenario, configs: list[ICarmaConfig], progress: Progress | None,
    load_dep: LoadDep,
) -> list[Built]:
    """Train several seeds of one iCARMA configuration together
    (engine.recourse.icarma.ensemble: each as its single run); one Built per seed."""
    report = _note(progress, "icarma")
    classifier, flow = load_dep("decision"), load_dep("flow")
    trained = train_ensemble(
        scenario, classifier, flow, configs,
        lambda e, n, info: report(e, n, f"epoch {e}/{n}, {len(configs)} seeds, mean val "
                                        f"validity {info['val_validity']:.3f}"),
    )
    return [Built(model, _amortized_metrics(log)) for model, log in trained]


def _amortized_metrics(log: TrainingLog) -> dict[str, Any]:
    return {
        "best_epoch": log.best_epoch,
        "kept_epoch": log.kept_epoch,
        "val_loss": log.kept("val_loss"),
        "val_validity_flow": log.kept("val_validity"),
        "val_cost": log.kept("val_cost"),
        "val_score": log.val_score,
        "multiplier_final": log.multiplier[-1],
        "train_hinge_active": log.train_active[-1],
        "train_empty_mask": log.train_empty[-1],
        "training_seconds": log.seconds,
    }


def build_vae(
    scenario: Scenario, config: VAEConfig, progress: Progress | None, load_dep: LoadDep
) -> Built:
    """Train the latent-space bases' VAE (CCHVAE, CLUE) or CSVAE (CRUDS) (engine.vaes)."""
    if isinstance(config, CSVAEConfig):
        return Built(*train_csvae(scenario, config, _note(progress, "csvae")))
    return Built(*train_vae(scenario, config, _note(progress, "vae")))


Builder = Callable[[Scenario, Any, Progress | None, LoadDep], Built]
BUILDERS: dict[str, Builder] = {
    "decision": build_decision,
    "flow": build_flow,
    "icarma": build_amortized,
    "icarma-likert": build_amortized,
    "carma": build_amortized,
    "lr": build_decision,
    "ann": build_decision,
    "vae": build_vae,
    "csvae": build_vae,
}


def builder_for(name: str) -> Builder:
    """The builder of artifact ``name`` (every ``icarma...`` model is an amortized one)."""
    if name in BUILDERS:
        return BUILDERS[name]
    if name.startswith("icarma"):
        return build_amortized
    raise ValueError(f"no builder for artifact {name!r}")


def construct(scenario: Scenario, name: str, cfg: dict[str, Any]) -> nn.Module:
    """An untrained module of artifact ``name`` with configuration ``cfg`` (its metadata's),
    to load the trained weights into."""
    d = scenario.d
    if name == "decision" or name in CLASSIFIERS:
        return DecisionModel(torch.zeros(d), torch.ones(d), DecisionConfig.from_dict(cfg).hidden)
    if name == "flow":
        return CausalFlow(scenario, FlowConfig.from_dict(cfg))
    if name in GENERATIVE:
        return build_vae_module(scenario, name, cfg)
    ic = ICarmaConfig.from_dict(cfg)
    return AmortizedRecourse(
        torch.zeros(d), torch.ones(d), torch.ones(d), torch.tensor(scenario.actionable), ic.hidden,
        ic.mask_head, ic.action_space,  # shift bounds: a buffer, loaded with the weights
    )

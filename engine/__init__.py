"""The engine: computation (scenarios, world models, decision models, preferences, metrics,
trained artifacts, recourse methods, synthetic people, the papers' harness). Imports nothing
of ours.

The Python API's entry point is ``load``:

    import engine
    loan = engine.load("loan")          # the Loan scenario and its trained decision model
    person = loan.rejected(1)
    plans = loan.plans(person, loan.constraints({"income": 1, "savings": 2}))

Names are imported on first use (``engine.exports``): ``import engine`` does not import torch.
Rooms: ``engine.recourse`` (methods), ``engine.synthetic`` (synthetic people),
``engine.papers`` (the papers' benchmarks and reproductions; nothing of a study imports
it).
"""

from __future__ import annotations

from engine.exports import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, globals(), {
    "engine.workbench": ("load", "Workbench"),
    "engine.scenarios": (
        "Scenario", "FeatureSpec", "get_scenario", "scenario_names", "UnknownScenarioError",
    ),
    "engine.scm": ("StructuralCausalModel",),
    "engine.flows": ("CausalFlow",),
    "engine.decision": (
        "Classifier", "BayesDecision", "DecisionModel", "decide", "fixed_test_people",
        "rejected_rows",
    ),
    "engine.preferences": (
        "ActionabilityProfiles", "CostProfile", "all_actionable", "profiles_from_elicitation",
        "sample_profiles",
    ),
    "engine.metric_names": ("DISTANCES", "METRIC_NAMES"),
    "engine.artifacts": ("ArtifactMissingError", "ensure_artifacts", "load_classifier"),
    "engine.recourse": (
        "METHODS", "Capabilities", "MethodUnavailableError", "RecourseBatch", "RecourseContext",
        "RecourseMethod", "capabilities", "get_method",
    ),
})

"""The `>>>` examples in the docstrings of the public API are run, and every public class and
function a researcher calls has one.

The public API is each package's ``__all__`` (engine, engine.recourse, engine.synthetic,
engine.papers, data, protocols, analysis). Each example runs in a fresh namespace (it
imports what it uses, as a reader would type it), on tiny data, without training: the names
whose only honest example needs a trained model, an R installation or an MCMC run are
listed in ``EXEMPT`` with the reason. The module docstrings of the modules that define them
are run too (e.g. ``protocols.running.session``'s opening example).
"""

from __future__ import annotations

import doctest
import importlib
import inspect
from types import ModuleType

import pytest

PACKAGES = ("engine", "engine.recourse", "engine.synthetic", "engine.papers", "data",
            "protocols", "analysis")

TRAINED = "its only honest example needs trained models (recourse-study train)"
SAMPLED = "its only honest example runs PyMC's sampler (seconds to minutes)"
R_NEEDED = "needs R with mgcv / ordinal, which a fresh machine may not have"
EXEMPT: dict[str, str] = {
    "engine.artifacts.ensure_artifacts": "it trains the scenario's artifacts (minutes)",
    "engine.flows.CausalFlow": TRAINED + " (an untrained flow's values mean nothing)",
    "engine.papers.hare.benchmark.run_hare_benchmark": "HARE's search over many people takes "
                                                 "minutes; `benchmark hare` runs it",
    "engine.papers.reproduce.run_target": TRAINED + " and minutes; `reproduce` runs it",
    "engine.papers.icarma.training.compare_training": "it trains iCARMA's seeds twice, one "
                                                   "after another and together (minutes)",
    "analysis.pipeline.Analysis": SAMPLED,
    "analysis.pipeline.run_analysis": SAMPLED,
    "analysis.fit.sample": SAMPLED,
    "analysis.refit.Refitter": SAMPLED,
    "analysis.recovery.recovery_study": SAMPLED + " many times",
    "analysis.recovery.RecoveryConfig": "configures recovery_study (exempt: " + SAMPLED + ")",
    "analysis.mgcv.fit_gamms": R_NEEDED,
    "analysis.mgcv.fit_clmm": R_NEEDED,
    "analysis.engines.mgcv_part": R_NEEDED,
    "analysis.engines.clmm_agreement": R_NEEDED + " (it compares fitted models)",
    "analysis.engines.smooth_agreement": R_NEEDED + " (it compares fitted models)",
    "analysis.report.render": SAMPLED + " (it renders a fitted analysis)",
    "analysis.fairness_plot.save_fairness_figure": "fairness_figure's example draws the same "
        "figure; a second fairness run only to write the PNG would double its seconds",
    "analysis.results.ModelResult": SAMPLED + " (it holds a fitted model)",
    "analysis.mgcv.MgcvError": R_NEEDED + " (R runs and fails)",
}


def _public() -> dict[str, object]:
    """'module.qualname' -> object for every public class and function (first export wins)."""
    found: dict[str, object] = {}
    for package in PACKAGES:
        module = importlib.import_module(package)
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj) or inspect.isfunction(obj):
                found.setdefault(f"{obj.__module__}.{obj.__qualname__}", obj)
    return found


PUBLIC = _public()
HOMES = sorted({key.rsplit(".", 1)[0] for key in PUBLIC})


def _run(obj: object, name: str) -> None:
    """Run the docstring's own examples (not its members') in a fresh namespace."""
    finder = doctest.DocTestFinder(recurse=False)
    tests = [t for t in finder.find(obj, name, globs={"__name__": "__doctest__"}) if t.examples]
    runner = doctest.DocTestRunner(
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in tests:
        runner.run(test, out=lambda text: pytest.fail(text, pytrace=False))


def test_every_public_name_has_an_example_or_a_stated_exemption() -> None:
    missing = sorted(key for key, obj in PUBLIC.items()
                     if key not in EXEMPT and ">>>" not in (obj.__doc__ or ""))
    assert missing == []
    assert set(EXEMPT) <= set(PUBLIC), set(EXEMPT) - set(PUBLIC)


@pytest.mark.parametrize("key", sorted(k for k in PUBLIC if k not in EXEMPT))
def test_the_example_runs(key: str) -> None:
    _run(PUBLIC[key], key)


@pytest.mark.parametrize("home", HOMES)
def test_the_module_docstring_example_runs(home: str) -> None:
    module: ModuleType = importlib.import_module(home)
    _run(module, home)

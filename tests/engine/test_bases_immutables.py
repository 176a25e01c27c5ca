"""Every base generator of the HARE paper respects immutability on the paper's three data sets
(adult, compas, german-credit; quick classifiers and VAEs, a few fixed rejected test people):
no plan acts on an immutable feature, and no plan's profile differs from the factual there."""

from __future__ import annotations

import pytest
import torch

from engine import artifacts
from engine.decision import fixed_test_people
from engine.recourse import get_method
from engine.recourse.base import RecourseContext
from engine.scenarios import get_scenario

DATASETS = ("adult", "compas", "german-credit")
BASES = ("wachter", "gs", "face", "cchvae", "clue", "cruds")
N = 8
# shorter searches than the defaults keep the test fast (the same code)
OPTIONS = {"wachter": {"steps": 100}, "gs": {}, "face": {"points": 500},
           "cchvae": {"samples": 100, "max_layers": 40}, "clue": {"steps": 150},
           "cruds": {"steps": 100, "samples": 2}}


@pytest.fixture(scope="module")
def worlds(trained_home):
    """(scenario, context with the quick LR, N fixed rejected test people) of a data set,
    built on first use (adult's and compas' quick models take minutes on a fresh clone)."""
    out: dict[str, tuple] = {}

    def world(name: str) -> tuple:
        if name not in out:
            artifacts.build_artifacts(name, quick=True)  # a cache hit after the first run
            s = get_scenario(name)
            ctx = RecourseContext(s, artifacts.load_classifier(s, "lr"))
            rows = torch.as_tensor(fixed_test_people(s, ctx.classifier, N))
            out[name] = (s, ctx, s.dataset["test"][0][rows].double())
        return out[name]

    return world


# german-credit's models are the test home's anyway (make test); adult and compas train
# their quick models first (make test-slow)
@pytest.mark.parametrize("name", [n if n == "german-credit" else
                                  pytest.param(n, marks=pytest.mark.slow) for n in DATASETS])
def test_no_base_changes_an_immutable_feature(worlds, name):
    s, ctx, x = worlds(name)
    immutable = list(s.immutable)
    assert immutable  # the paper's immutables: age, sex, race, ...
    changes = 0
    found = 0
    for base in BASES:
        batch = get_method(base, ctx, **OPTIONS[base]).recourse(x, ctx.everybody(len(x)))
        assert len(batch) == len(x), base  # every person has a row (found or not)
        changes += int(batch.action_mask[:, immutable].sum())
        changes += int((batch.x_cf[:, immutable] != x[:, immutable]).sum())
        found += int(batch.found.sum())
    assert changes == 0
    assert found > 0  # the bases did produce plans to check

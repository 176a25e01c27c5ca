"""The catalogue of model families (analysis.families): every family module registered, an
unknown name refused with the known ones, one main family, the families analyze fits by
default, and each family's model built from exactly its arrays with its coefficients."""

from __future__ import annotations

import pkgutil
import warnings

import numpy as np
import pytest

import analysis.families
from analysis import FAMILIES, prepare, simulate_ratings
from analysis.families import Catalogue, ModelFamily, UnknownFamilyError
from analysis.families.ordinal import OrdinalFamily
from analysis.model_data import AnalysisDataError
from analysis.pipeline import plan_models, planned_families


def test_every_family_module_is_in_the_catalogue():
    modules = {m.name for m in pkgutil.iter_modules(analysis.families.__path__)} - {"base"}
    assert {type(f).__module__.rsplit(".", 1)[1] for f in FAMILIES.values()} == modules
    assert {"ordinal", "gaussian", "gamm", "ordinal_position"} <= set(FAMILIES)
    assert all(FAMILIES[name].name == name and isinstance(FAMILIES[name], ModelFamily)
               for name in FAMILIES)


def test_an_unknown_family_is_refused_with_the_known_ones():
    with pytest.raises(UnknownFamilyError) as e:
        FAMILIES["probit"]
    assert str(e.value).startswith("unknown model family 'probit'; known: ")
    assert all(name in str(e.value) for name in FAMILIES)
    with pytest.raises(AnalysisDataError, match=f"known: {', '.join(sorted(FAMILIES))}$"):
        plan_models("l1_profile", families=("probit",))


def test_one_main_family_first_then_the_rest_by_name():
    assert FAMILIES.main is FAMILIES["ordinal"] and list(FAMILIES)[0] == "ordinal"
    assert list(FAMILIES)[1:] == sorted(list(FAMILIES)[1:])
    with pytest.raises(RuntimeError, match="exactly one main"):
        Catalogue([FAMILIES["gamm"]])

    class Twin(OrdinalFamily):
        main = False
    with pytest.raises(RuntimeError, match="share a name"):
        Catalogue([FAMILIES["ordinal"], Twin()])


def test_the_default_plan_is_the_ordinal_models_and_the_gamms():
    assert [f.name for f in FAMILIES.defaults()] == ["ordinal", "gamm"]
    specs = plan_models("l1_profile")
    assert [s.name for s in specs[:4]] == [
        "acceptance_l0_profile_ordinal", "acceptance_l1_profile_ordinal",
        "acceptance_l0_profile_gamm", "acceptance_l1_profile_gamm"]
    assert [(s.ppc, s.log_likelihood) for s in specs[:4]] == [
        (False, True), (True, True), (False, False), (False, False)]
    assert [f.name for f in planned_families(gaussian=False)] == ["ordinal"]
    chosen = planned_families(families=("ordinal_position", "ordinal"))
    assert [f.name for f in chosen] == ["ordinal", "gamm", "ordinal_position"]
    assert len(plan_models("l0_actions", families=("ordinal_position",))) == 12


@pytest.mark.parametrize("name", list(FAMILIES))
def test_each_family_summarizes_its_parameters(name):
    """The coefficients name the effects, every variance and the family's own parameters,
    each once, with their draws' mean inside the interval (the arrays: test_power)."""
    family = FAMILIES[name]
    data = prepare(simulate_ratings(8, 4, seed=3), "action", "l1_profile")
    model = family.build(data)
    draws = model.point_logps()  # the model evaluates at its initial point
    assert np.isfinite(list(draws.values())).all()
    with model, warnings.catch_warnings():
        import pymc as pm

        # a Gaussian family's likelihood is a potential; the prior draws need only the priors
        warnings.filterwarnings("ignore", "The effect of Potentials", UserWarning)
        prior = pm.sample_prior_predictive(draws=20, random_seed=1).prior
    coefs = family.coefficients(data, prior)
    names = [c.name for c in coefs]
    assert [c.name for c in coefs if c.group == "variance"][:len(family.variances)] == list(
        family.variances)
    assert names[:2] == ["satisfaction", "violation"] and len(set(names)) == len(names)
    assert all(c.lo <= c.mean <= c.hi for c in coefs)
    assert "l1_profile" in family.describe("action", "l1_profile", "") and family.formula

"""analyze's sampler options: a bad value is named as the option it came from."""

from __future__ import annotations

import pytest

from study_app.study_analysis import Sampler, StudyAnalysisInputError, sampler_settings


def test_a_bad_sampler_value_names_its_option() -> None:
    with pytest.raises(StudyAnalysisInputError, match=r"^--ess-target: the ESS target must"):
        sampler_settings("l1_profile", Sampler(ess_target=-1))
    with pytest.raises(StudyAnalysisInputError, match=r"^--backend: unknown backend"):
        sampler_settings("l1_profile", Sampler(backend="stan"))
    with pytest.raises(StudyAnalysisInputError, match=r"^--distance: "):
        sampler_settings("l3_profile", Sampler())
    assert sampler_settings("l1_profile", Sampler(ess_target=0)).get("ess_target") is None


def test_every_setting_the_analysis_can_refuse_has_an_option() -> None:
    from analysis import fit, pipeline
    from analysis.model_data import SettingError
    from study_app.study_analysis import SETTING_OPTIONS

    refused = []
    for call in (lambda: fit.resolve("stan"), lambda: fit.resolve("nutpie", ess_target=-2),
                 lambda: pipeline.distance_family("l3_profile")):
        with pytest.raises(SettingError) as e:
            call()
        refused.append(e.value.setting)
    assert sorted(refused) == sorted(SETTING_OPTIONS)

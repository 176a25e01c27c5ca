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

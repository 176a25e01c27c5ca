"""The options' fixed choices (study_app.cli.choices) are the engine's and the analysis' own.

The command line spells them out so that building it imports neither; each ``Literal`` here
must list exactly the values its owner accepts, or the command line would refuse a valid
value or pass an invalid one down.
"""

from __future__ import annotations

from typing import get_args

import pytest

from analysis.engines import MGCV_MODES
from analysis.fit import BACKENDS
from analysis.folder import TRACE_LEVELS
from analysis.mgcv import METHODS
from analysis.models import OUTCOMES
from data.accounts import ROLES
from data.export import FORMATS
from engine.artifact_builders import CLASSIFIERS
from engine.preferences import ELICITATIONS, SCORE_SAMPLINGS
from engine.recourse.hare.config import FINAL_ACCEPT, GAMMA_SCHEDULES, ITERATIONS_READINGS
from engine.recourse.icarma.config import TRAININGS
from engine.recourse.oracle.grid import GRIDS
from engine.synthetic.hare_truth import GROUND_TRUTHS
from study_app.cli import choices


@pytest.mark.parametrize(("choice", "owner"), [
    (choices.IcarmaTraining, TRAININGS),
    (choices.Elicitation, ELICITATIONS),
    (choices.ScoreSampling, SCORE_SAMPLINGS),
    (choices.OracleGrid, GRIDS),
    (choices.GammaSchedule, GAMMA_SCHEDULES),
    (choices.FinalAccept, FINAL_ACCEPT),
    (choices.IterationsReading, ITERATIONS_READINGS),
    (choices.GroundTruth, GROUND_TRUTHS),
    (choices.Backend, BACKENDS),
    (choices.Outcome, OUTCOMES),
    (choices.TraceLevel, TRACE_LEVELS),
    (choices.MgcvMode, MGCV_MODES),
    (choices.MgcvMethod, METHODS),
    (choices.BenchmarkDecisionModel, ("trained", "bayes", *CLASSIFIERS)),
    (choices.ExportFormat, (*FORMATS, "psych-ds")),
    (choices.Role, ROLES),
])
def test_a_choice_lists_its_owners_values(choice: object, owner: tuple[str, ...]) -> None:
    assert set(get_args(choice)) == set(owner)

"""The fixed choices of the commands' options, as ``Literal`` types typer shows and checks.

An option annotated with one of these lists its values in ``--help`` (``<on|off>``) and
refuses any other before the command runs (exit 2, naming the option and the values it
takes); the command receives the plain string. The values are those of the engine's and
the analysis' own tuples (tests/study_app/test_cli_choices.py checks them); they are spelled
out here so that building the command line imports neither.
"""

from __future__ import annotations

from typing import Literal

Switch = Literal["on", "off"]
# A protocol's decision model, overridden: the trained artifact or the exact Bayes rule; a
# pool world's fixed rule; a benchmark's, also a tabular world's two classifiers
# (engine.artifact_builders.CLASSIFIERS).
DecisionModel = Literal["trained", "bayes"]
StudyDecisionModel = Literal["trained", "bayes", "rule"]
BenchmarkDecisionModel = Literal["trained", "bayes", "lr", "ann"]
IcarmaTraining = Literal["fast", "paper"]  # engine.recourse.icarma.config.TRAININGS
Elicitation = Literal["ranking", "likert", "binary"]  # engine.preferences.ELICITATIONS
ScoreSampling = Literal["iid", "sorted"]  # engine.preferences.SCORE_SAMPLINGS
OracleGrid = Literal["factual", "carma", "shared"]  # engine.recourse.oracle.grid.GRIDS
GammaSchedule = Literal["paper", "halve"]  # engine.recourse.hare.config.GAMMA_SCHEDULES
FinalAccept = Literal["ask", "skip"]  # engine.recourse.hare.config.FINAL_ACCEPT
IterationsReading = Literal["text", "code"]  # engine.recourse.hare.config.ITERATIONS_READINGS
GroundTruth = Literal["perturbation", "rays"]  # engine.synthetic.hare_truth.GROUND_TRUTHS
Backend = Literal["nutpie", "pymc"]  # analysis.fit.BACKENDS
Outcome = Literal["acceptance", "action"]  # analysis.models.OUTCOMES
TraceLevel = Literal["none", "compact", "full"]  # analysis.folder.TRACE_LEVELS
MgcvMode = Literal["auto", "require", "off"]  # analysis.engines.MGCV_MODES
MgcvMethod = Literal["REML", "GCV.Cp", "ML"]  # analysis.mgcv.METHODS
ExportFormat = Literal["parquet", "csv", "psych-ds"]  # data.export.FORMATS and Psych-DS
Role = Literal["viewer", "exporter", "admin"]  # data.accounts.ROLES

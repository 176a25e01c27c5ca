"""`recourse-study prereg`: a preregistration of a protocol (study_app.prereg); what
``analyze --prereg`` does with it is study_app.study_analysis's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from study_app.cli.apps import app
from study_app.cli.choices import Backend
from study_app.cli.output import emit, err, fail, json_file_option, json_option


@app.command("prereg")
def prereg(
    protocol: str = typer.Option(..., help="A shipped protocol id or a protocol YAML file."),
    out: Path = typer.Option(..., help="New (or empty) folder for prereg.md and prereg.json."),
    power: Path | None = typer.Option(
        None, help="A power.json of this protocol (recourse-study power): its effect is the "
        "hypothesis and its smallest N reaching the target the planned N."),
    participants: int | None = typer.Option(
        None, min=1, help="The planned N (default: the power run's smallest N reaching its "
        "target, else the protocol's quotas' total; else none is fixed)."),
    backend: Backend = typer.Option("nutpie", help="The sampler analyze will use."),
    draws: int | None = typer.Option(None, min=50, help="Posterior draws per chain "
                                     "(default: the backend's own)."),
    tune: int | None = typer.Option(None, min=50, help="Tuning steps per chain (default: "
                                    "the backend's own)."),
    chains: int = typer.Option(4, min=1, help="Chains."),
    seed: int = typer.Option(0, help="Sampling seed."),
    target_accept: float | None = typer.Option(None, min=0.5, max=0.999,
                                               help="NUTS step-size target (default 0.95)."),
    gaussian: bool = typer.Option(True, help="The Gaussian GAMM is part of the plan."),
    exclude: str | None = typer.Option(
        None, help="Quality-flag exclusions preregistered besides the protocol's, as "
        "analyze --exclude: speeders, straightliners, attention (comma-separated)."),
    json_out: bool = json_option(),
    json_file: Path | None = json_file_option(),
) -> None:
    """Write a protocol's preregistration (OSF template).

    Write OUT/prereg.md and OUT/prereg.json: a preregistration in the sections of the OSF
    Preregistration template (hypotheses, design, sampling plan, variables, analysis plan,
    exclusions) and the protocol's SHA-256, as the study database stores it.

    `analyze --prereg OUT/prereg.json` then lists the analysis's deviations from it. An
    OUT that exists and is not empty is refused; nothing is overwritten.

    JSON: {format, version, protocol {id, title, sha256}, planned {participants (null: not
    fixed), distance, exclusions {rule: applied}, models [name], sampler {backend, draws,
    tune, chains, seed, target_accept}}, hypotheses [{name, sentence, rule, decision}],
    models [{name, outcome, distance, likelihood, formula, words}], priors [{parameter,
    distribution, meaning}], sections [{id, title, text [sentence]}], files {json,
    markdown}}.

    Exit status: 0 written; 2 bad input (protocol, power file, OUT not empty).
    """
    from protocols.definition.schema import ProtocolError, load_protocol
    from study_app.prereg import PreregError, preregistration, write_prereg
    from study_app.study_analysis import StudyAnalysisInputError, exclusion_flags

    try:
        spec = load_protocol(protocol)
    except ProtocolError as e:
        fail(e, 2, keep_lines=True, json_out=json_out)
    except (FileNotFoundError, ValueError) as e:
        fail(f"--protocol: {e}", 2, json_out=json_out)
    sampler = _sampler(backend, draws, tune, chains, seed, target_accept, json_out)
    try:
        flag_rules = exclusion_flags(exclude)
    except StudyAnalysisInputError as e:
        fail(e, 2, json_out=json_out)
    try:
        doc = preregistration(spec, power=_power(power, json_out) if power else None,
                              participants=participants, sampler=sampler, gaussian=gaussian,
                              flag_rules=flag_rules)
        files = write_prereg(doc, out)
    except PreregError as e:  # OUT not empty, a power file of another protocol
        fail(e, 2, json_out=json_out)
    doc["files"] = {k: str(v) for k, v in files.items()}
    err.print(f"preregistration written to {files['markdown']} and {files['json']}",
              highlight=False)
    emit(doc, json_out=json_out, json_file=json_file)


def _sampler(backend: str, draws: int | None, tune: int | None, chains: int, seed: int,
             target_accept: float | None, json_out: bool) -> dict[str, Any]:
    from analysis.model_data import SettingError
    from analysis.pipeline import sampler_settings
    from study_app.study_analysis import SETTING_OPTIONS

    try:
        return sampler_settings(backend, draws, tune, chains, seed, target_accept)
    except SettingError as e:
        fail(f"{SETTING_OPTIONS[e.setting]}: {e}", 2, json_out=json_out)


def _power(path: Path, json_out: bool) -> dict[str, Any]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        fail(f"--power: no file {path}", 2, json_out=json_out)
    except (OSError, ValueError) as e:
        fail(f"--power: cannot read {path} as JSON: {e}", 2, json_out=json_out)
    if not isinstance(doc, dict) or not {"protocol", "effect", "rows"} <= set(doc):
        fail(f"--power: {path} is not a power.json (recourse-study power)", 2,
             json_out=json_out)
    return doc

"""A study as a Psych-DS data package: the ratings, one row per participant, value labels, R.

``write_package(store, out_dir, items)`` writes (Psych-DS 1.x layout; data.psych_ds_check
checks it against the specification's rules):

- ``dataset_description.json``: schema.org JSON-LD (``@context``, ``@type`` Dataset, name,
  description, ``variableMeasured``): one ``PropertyValue`` per column of every data file
  with its name and meaning; a coded column also lists its codes as ``valueReference``
  (``PropertyValue`` value + name): each 7-point scale's points and labels (from the stored
  protocol: data.value_labels), each profile item's codes and level names (``items``);
- ``data/study-<id>_description-ratings_data.csv``: one row per rated plan (the
  ``ratings_long`` view: distances, preference terms, both ratings, arm, method, position);
- ``data/study-<id>_description-participants_data.csv``: one row per participant (the wide
  file): source, arm, status, each profile item (``profile_<item>``, model units as
  ``profiles.x_json`` stores them; a coded item's code), and each rating as a column
  (``acceptance_<n>``, ``action_<n>``, ``plan_<n>``: the n-th plan shown, n = position + 1);
- ``codebook.csv``: file, column, type, meaning, levels (``1 = Strongly no; ...``);
- ``analysis/primary.R``: re-fits the primary ordinal model with ``ordinal::clmm`` from the
  package alone (data/primary.R; docs/export.md says how it differs from the PyMC model).

File names follow the Psych-DS keyword rule ``([a-z]+-[a-zA-Z0-9]+)(_[a-z]+-[a-zA-Z0-9]+)*
_data.csv`` with the official keywords ``study`` and ``description``; a study id's other
characters are dropped from its keyword value (the full id is in the files and the
description). Withdrawn participants are left out (their answers are deleted already:
data.withdrawal); free text and linkage columns are never in the package.

A package holds one study with ratings: a database with none (a pilot nobody finished) or
with several studies is refused (``PackageError``), and so is an output folder that exists,
so nothing is ever overwritten or half-written over an earlier package.
"""

from __future__ import annotations

import json
import re
import shutil
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

from data.codebook import MEANINGS
from data.columns import DISTANCE_COLUMNS, RATINGS_LONG
from data.psych_ds_check import problems
from data.value_labels import ProfileItem, levels_text, scale_levels

PSYCH_DS_VERSION = "Psych-DS 1.0.0"
R_SCRIPT = "primary.R"
PRIMARY_OUTCOME = "acceptance"
_PLAN_COLUMNS = ("plan", "acceptance", "action")
_WIDE_FIXED = {"participant_id": MEANINGS["participants"]["participant_id"],
               "source": MEANINGS["participants"]["source"],
               "arm": MEANINGS["participants"]["arm"],
               "status": MEANINGS["participants"]["status"]}


class PackageError(ValueError):
    """The study cannot be packaged as asked (the message says why); nothing was written.

    >>> import tempfile
    >>> from pathlib import Path
    >>> from data import PackageError, Store, write_package
    >>> folder = Path(tempfile.mkdtemp())
    >>> with Store(folder / "empty.duckdb") as store:
    ...     try:
    ...         write_package(store, folder / "package")
    ...     except PackageError as e:
    ...         print(e)
    the database holds no study: there is nothing to package
    """


def keyword_value(study_id: str) -> str:
    """A study id as a Psych-DS keyword value (letters and digits only).

    >>> keyword_value("tominaga-replication_2")
    'tominagareplication2'
    """
    value = re.sub(r"[^a-zA-Z0-9]", "", study_id)
    if not value:
        raise PackageError(f"study id {study_id!r} has no letter or digit to name its files")
    return value


def data_file(study_id: str, description: str) -> str:
    """``study-<id>_description-<what>_data.csv``."""
    return f"study-{keyword_value(study_id)}_description-{description}_data.csv"


def write_package(store: Any, out_dir: str | Path, items: list[ProfileItem] | None = None,
                  distance: str = "l1_profile") -> dict[str, Any]:
    """Write the package of the module docstring into ``out_dir`` (which must not exist);
    return its manifest (study_id, files, rows per data file, variables, primary_model).
    ``distance`` is the primary model's distance (the protocol's: analyze's default).

    >>> import tempfile
    >>> from pathlib import Path
    >>> import pandas as pd
    >>> from data import Store, import_ratings, write_package
    >>> folder = Path(tempfile.mkdtemp())
    >>> pd.DataFrame({"participant_id": ["p1", "p1", "p2"], "plan_id": ["a", "b", "a"],
    ...               "l0": [1, 2, 1], "l1": [0.2, 0.6, 0.3], "acceptance": [5, 3, 6],
    ...               "action": [4, 2, 5]}).to_csv(folder / "ratings.csv", index=False)
    >>> store = Store(folder / "study.duckdb")
    >>> _ = import_ratings(store, folder / "ratings.csv", study_id="pilot")
    >>> manifest = write_package(store, folder / "package")
    >>> sorted(manifest["rows"].items())
    [('study-pilot_description-participants_data.csv', 2), ('study-pilot_description-ratings_data.csv', 3)]
    """
    if distance not in DISTANCE_COLUMNS:
        raise PackageError(f"unknown distance {distance!r}; expected one of "
                           f"{', '.join(DISTANCE_COLUMNS)}")
    out = Path(out_dir)
    if out.exists():
        raise PackageError(f"{out} exists: give a new folder (nothing was written)")
    study = _one_study(store)
    ratings = _ratings(store, study["study_id"])
    if ratings.empty:
        raise PackageError(f"study {study['study_id']!r} has no ratings yet: there is nothing "
                           "to package (nothing was written)")
    wide, wide_meanings = _wide(store, study["study_id"], ratings, items or [])
    scales = scale_levels(study["protocol_json"])
    files = {data_file(study["study_id"], "ratings"): ratings,
             data_file(study["study_id"], "participants"): wide}
    variables = _variables(files, wide_meanings, scales, items or [])
    staging = out.with_name(out.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    try:
        (staging / "data").mkdir(parents=True)
        (staging / "analysis").mkdir()
        for name, frame in files.items():
            frame.to_csv(staging / "data" / name, index=False)
        description = _description(study, variables)
        (staging / "dataset_description.json").write_text(json.dumps(description, indent=1))
        _codebook(files, variables).to_csv(staging / "codebook.csv", index=False)
        (staging / "analysis" / R_SCRIPT).write_text(r_script(
            data_file(study["study_id"], "ratings"), distance, study["protocol_json"]))
        broken = problems(staging)
        if broken:  # a writer bug: never hand out a package that breaks the specification
            raise PackageError("the package breaks the Psych-DS rules: " + "; ".join(broken))
        staging.rename(out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return {"format": "psych-ds", "study_id": study["study_id"], "out": str(out),
            "files": sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()),
            "rows": {name: len(frame) for name, frame in files.items()},
            "variables": len(variables),
            "primary_model": {"outcome": PRIMARY_OUTCOME, "distance": distance,
                              "script": f"analysis/{R_SCRIPT}"}}


def r_script(ratings_file: str, distance: str, protocol_json: str | None) -> str:
    """data/primary.R for this package: its ratings file, the primary model's outcome and
    distance, and the protocol's rating-level exclusions (``exclusions.impossible_items``
    and ``failed_attention``; both on by default, as in the protocol schema)."""
    rules = (json.loads(protocol_json).get("exclusions") or {}) if protocol_json else {}
    script = resources.files("data").joinpath(R_SCRIPT).read_text()
    fill = {"@RATINGS_FILE@": ratings_file, "@OUTCOME@": PRIMARY_OUTCOME,
            "@DISTANCE@": distance,
            "@EXCLUDE_IMPOSSIBLE@": _r_bool(rules.get("impossible_items", True)),
            "@EXCLUDE_FAILED_ATTENTION@": _r_bool(rules.get("failed_attention", True))}
    for key, value in fill.items():
        script = script.replace(key, value)
    return script


def _r_bool(flag: bool) -> str:
    return "TRUE" if flag else "FALSE"


def _one_study(store: Any) -> dict[str, Any]:
    rows = store.query("SELECT study_id, title, protocol_id, protocol_json, protocol_hash, "
                       "scenario FROM studies ORDER BY study_id")
    if not rows:
        raise PackageError("the database holds no study: there is nothing to package")
    if len(rows) > 1:
        ids = ", ".join(r["study_id"] for r in rows)
        raise PackageError(f"the database holds {len(rows)} studies ({ids}); a Psych-DS "
                           "package holds one: export the plain format or split the database")
    return rows[0]


def _ratings(store: Any, study_id: str) -> pd.DataFrame:
    cols = ", ".join(RATINGS_LONG.names)
    rows = store.query(f"SELECT {cols} FROM ratings_long WHERE study_id = ? "
                       "ORDER BY participant_id, position, plan_id", [study_id])
    return pd.DataFrame(rows, columns=list(RATINGS_LONG.names))


def _wide(store: Any, study_id: str, ratings: pd.DataFrame, items: list[ProfileItem]
          ) -> tuple[pd.DataFrame, dict[str, str]]:
    """One row per (non-withdrawn) participant and the meanings of its columns."""
    people = pd.DataFrame(store.query(
        "SELECT p.participant_id, p.source, p.arm, p.status, f.x_json FROM participants p "
        "LEFT JOIN profiles f ON f.study_id = p.study_id AND f.participant_id = p.participant_id"
        " WHERE p.study_id = ? AND p.status <> 'withdrawn' ORDER BY p.seq, p.participant_id",
        [study_id]), columns=["participant_id", "source", "arm", "status", "x_json"])
    meanings = dict(_WIDE_FIXED)
    profiles = [json.loads(x) if x else {} for x in people.pop("x_json")]
    named = {i.name: i for i in items}
    keys = [i.name for i in items] + sorted({k for p in profiles for k in p} - set(named))
    for key in keys:
        item = named.get(key)
        what = f"profile item {key}" + (f" ({item.label})" if item else "")
        unit = f", {item.unit}" if item and item.unit else ""
        meanings[f"profile_{key}"] = (f"{what}: its code (valueReference)" if item and
                                      item.levels else f"{what}, model units{unit}")
        people[f"profile_{key}"] = [p.get(key) for p in profiles]
        if item and item.levels:  # a code, not a measure: 0..k-1 as integers
            people[f"profile_{key}"] = pd.to_numeric(people[f"profile_{key}"]).round(
                ).astype("Int64")
    plans = ratings.assign(n=ratings["position"].fillna(0).astype(int) + 1)
    plans = plans.rename(columns={"plan_id": "plan"})
    spread = plans.pivot_table(index="participant_id", columns="n", values=list(_PLAN_COLUMNS),
                               aggfunc="first")
    order = sorted(plans["n"].unique())
    for n in order:
        for col in _PLAN_COLUMNS:
            name = f"{col}_{n}"
            people[name] = people["participant_id"].map(spread[(col, n)]) if (
                col, n) in spread else None
            meanings[name] = {"plan": f"id of the plan shown {_ordinal(n)}",
                              "acceptance": f"acceptance rating of the plan shown {_ordinal(n)}",
                              "action": f"action rating of the plan shown {_ordinal(n)}"}[col]
        for col in ("acceptance", "action"):
            people[f"{col}_{n}"] = people[f"{col}_{n}"].astype("Int64")
    return people, meanings


def _ordinal(n: int) -> str:
    return f"{n}{'st' if n == 1 else 'nd' if n == 2 else 'rd' if n == 3 else 'th'}"


def _variables(files: dict[str, pd.DataFrame], wide_meanings: dict[str, str],
               scales: dict[str, list[tuple[int, str]]], items: list[ProfileItem]
               ) -> dict[str, dict[str, Any]]:
    """{column: PropertyValue} over every column of every data file; a column in both
    files with two meanings (``arm``: the plan's arm, the participant's assigned arm) says
    both, each with its file."""
    codes = {f"profile_{i.name}": list(enumerate(i.levels)) for i in items if i.levels}
    meanings: dict[str, dict[str, str]] = {}
    for (name, frame), known in zip(files.items(), (RATINGS_LONG.meanings(), wide_meanings),
                                    strict=True):
        for col in frame.columns:
            meanings.setdefault(col, {})[name] = known[col]
    out: dict[str, dict[str, Any]] = {}
    for col, by_file in meanings.items():
        texts = sorted(set(by_file.values()))
        meaning = texts[0] if len(texts) == 1 else "; ".join(
            f"{name}: {text}" for name, text in by_file.items())
        value: dict[str, Any] = {"@type": "PropertyValue", "name": col, "description": meaning}
        levels = _levels(col, scales, codes)
        if levels:
            value["minValue"], value["maxValue"] = levels[0][0], levels[-1][0]
            value["valueReference"] = [{"@type": "PropertyValue", "value": c, "name": label}
                                       for c, label in levels]
        out[col] = value
    return out


def _levels(col: str, scales: dict[str, list[tuple[int, str]]],
            codes: dict[str, list[tuple[int, str]]]) -> list[tuple[int, str]] | None:
    """The codes of a column: a scale's points (``acceptance``, ``acceptance_3``), a coded
    profile item's codes, or None."""
    if col in scales:
        return scales[col]
    head, _, tail = col.partition("_")
    if head in scales and tail.isdigit():
        return scales[head]
    return codes.get(col)


def _description(study: dict[str, Any], variables: dict[str, dict[str, Any]]) -> dict[str, Any]:
    title = study["title"] or study["study_id"]
    return {
        "@context": "https://schema.org/",
        "@type": "Dataset",
        "name": title,
        "description": (f"Ratings of recourse plans from the study {study['study_id']!r} "
                        f"(protocol {study['protocol_id']}, scenario {study['scenario']}; "
                        f"protocol SHA-256 {study['protocol_hash']}): one row per rated plan "
                        "and one row per participant, with value labels and an R script that "
                        "re-fits the primary ordinal model."),
        "schemaVersion": PSYCH_DS_VERSION,
        "identifier": study["study_id"],
        "keywords": ["algorithmic recourse", "counterfactual explanations", "ratings"],
        "variableMeasured": list(variables.values()),
    }


def _codebook(files: dict[str, pd.DataFrame], variables: dict[str, dict[str, Any]]
              ) -> pd.DataFrame:
    rows = []
    for name, frame in files.items():
        for col in frame.columns:
            v = variables[col]
            levels = [(r["value"], r["name"]) for r in v.get("valueReference", [])]
            rows.append({"file": f"data/{name}", "column": col, "type": str(frame[col].dtype),
                         "meaning": v["description"], "levels": levels_text(levels)})
    return pd.DataFrame(rows)

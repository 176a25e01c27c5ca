"""Check a folder against the Psych-DS specification's rules (1.x), as a validator would.

The official validator is not installable from a package registry here, so this module
checks the rules of the specification that a package written by data.psych_ds must meet;
``problems(folder)`` lists every broken rule (empty: the folder passes):

- ``dataset_description.json`` exists at the top level and is a JSON object with the
  JSON-LD keys ``@context`` (schema.org) and ``@type`` ``Dataset``, and the required
  ``name``, ``description`` and ``variableMeasured``;
- a ``data`` folder holds at least one data file, and every CSV file under it is named by
  the keyword rule ``([a-z]+-[a-zA-Z0-9]+)(_[a-z]+-[a-zA-Z0-9]+)*_data.csv`` with no keyword
  repeated;
- every data file has a header, no header repeated or empty, and rows as long as the
  header; every column it has appears in ``variableMeasured`` (by name, as a string or a
  ``PropertyValue``'s ``name``);
- every ``PropertyValue`` of ``variableMeasured`` has a ``name``; a ``valueReference``'s
  entries each a ``value`` and a ``name``.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

DATA_FILE = re.compile(r"([a-z]+-[a-zA-Z0-9]+)(_[a-z]+-[a-zA-Z0-9]+)*_data\.csv")
SCHEMA_ORG = ("https://schema.org", "http://schema.org", "https://schema.org/",
              "http://schema.org/")
REQUIRED = ("name", "description", "variableMeasured")


def problems(folder: str | Path) -> list[str]:
    """Every broken rule of the module docstring, one sentence each."""
    root = Path(folder)
    found: list[str] = []
    described = _description(root, found)
    data = root / "data"
    files = sorted(data.rglob("*.csv")) if data.is_dir() else []
    if not files:
        found.append("no CSV data file under data/")
    names = _measured(described, found) if described is not None else None
    for path in files:
        rel = path.relative_to(root)
        if not DATA_FILE.fullmatch(path.name):
            found.append(f"{rel}: not named by the keyword rule (key-value_..._data.csv)")
        else:
            keys = [kv.split("-")[0] for kv in path.name.removesuffix("_data.csv").split("_")]
            if len(keys) != len(set(keys)):
                found.append(f"{rel}: a keyword is repeated")
        found += _columns(path, rel, names)
    return found


def _description(root: Path, found: list[str]) -> dict[str, Any] | None:
    path = root / "dataset_description.json"
    if not path.is_file():
        found.append("dataset_description.json is missing")
        return None
    try:
        meta = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        found.append(f"dataset_description.json is not JSON: {e}")
        return None
    if not isinstance(meta, dict):
        found.append("dataset_description.json is not a JSON object")
        return None
    if meta.get("@context") not in SCHEMA_ORG:
        found.append("dataset_description.json: @context is not schema.org")
    if meta.get("@type") != "Dataset":
        found.append("dataset_description.json: @type is not Dataset")
    found += [f"dataset_description.json: {key} is missing or empty" for key in REQUIRED
              if not meta.get(key)]
    return meta


def _measured(meta: dict[str, Any], found: list[str]) -> set[str]:
    names = set()
    for i, v in enumerate(meta.get("variableMeasured") or []):
        if isinstance(v, str):
            names.add(v)
            continue
        if not isinstance(v, dict) or not v.get("name"):
            found.append(f"variableMeasured[{i}] has no name")
            continue
        names.add(v["name"])
        for ref in v.get("valueReference", []):
            if not isinstance(ref, dict) or "value" not in ref or not ref.get("name"):
                found.append(f"variableMeasured {v['name']}: a valueReference lacks a "
                             "value or a name")
    return names


def _columns(path: Path, rel: Path, names: set[str] | None) -> list[str]:
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    if not rows or not rows[0]:
        return [f"{rel}: empty file or no header"]
    header, found = rows[0], []
    if len(set(header)) != len(header) or "" in header:
        found.append(f"{rel}: a header is repeated or empty")
    bad = [i + 2 for i, row in enumerate(rows[1:]) if len(row) != len(header)]
    if bad:
        found.append(f"{rel}: rows {bad[:5]} do not have {len(header)} cells")
    if names is not None:
        missing = [c for c in header if c not in names]
        if missing:
            found.append(f"{rel}: columns not in variableMeasured: {', '.join(missing)}")
    return found

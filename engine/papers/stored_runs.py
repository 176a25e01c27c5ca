"""Whether a stored ``reproduce`` result (docs/reproductions/data/*.json) still describes
what the current code runs.

A run is *stale* when its config lacks an option the current code records for its target
(``recorded_defaults``: the HARE options of every HARE target, the iCARMA training switches
of the iCARMA tables), or holds a value other than today's default for an option that the
command it was made with (``config.command``, written by the CLI) does not name (or that
the named HARE configuration it names does not set so). A run made before a default changed
is thus caught, and a run of a named variant (``--drop-incumbent``, ``--as-released``, ...)
is not.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from engine.papers.icarma.variants import variant_config
from engine.papers.reproduce_core import HARE_PRESETS, ReproduceConfig, recorded_options

# options whose command-line flags are not "--" + the name with dashes
FLAGS: dict[str, tuple[str, ...]] = {"keep_incumbent": ("--keep-incumbent", "--drop-incumbent")}


def recorded_defaults(target: str, scenario: str | None = None) -> dict[str, Any]:
    """The options a run of ``target`` (on ``scenario``, default the target's) with every
    default records, as JSON stores them (an iCARMA default may depend on the data set:
    engine.papers.icarma.datasets)."""
    config = ReproduceConfig(target) if scenario is None else ReproduceConfig(
        target, scenario=scenario)
    if target.startswith("hare"):
        options = recorded_options(config)
    elif target in ("icarma-table1", "icarma-table2", "icarma-table3"):
        options = variant_config(config)
    else:
        options = {}
    return json.loads(json.dumps(options))


def option_flags(name: str) -> tuple[str, ...]:
    """The command-line flags that set option ``name``."""
    return FLAGS.get(name, ("--" + name.replace("_", "-"),))


def stale_reasons(run: dict[str, Any]) -> list[str]:
    """Why a stored run no longer describes the current code's run (empty: it does). A
    command naming a HARE configuration (``--as-released``, ``--as-written``) expects that
    configuration's values of the options it sets."""
    config = run.get("config", {})
    words = shlex.split(config.get("command", ""))
    named = {w.split("=", 1)[0] for w in words if w.startswith("--")}
    presets = [HARE_PRESETS[p] for p in HARE_PRESETS if f"--{p}" in named]
    reasons = []
    scenario = config.get("scenario") if run["target"].startswith("icarma") else None
    for name, default in recorded_defaults(run["target"], scenario).items():
        if presets and name in presets[0]:
            default = presets[0][name]
        if name not in config:
            reasons.append(f"its config lacks {name!r}, which the current code records "
                           f"(default {default!r})")
        elif config[name] != default and not named & set(option_flags(name)):
            reasons.append(f"made with {name} = {config[name]!r}, but the current default is "
                           f"{default!r} and its command names no "
                           f"{' / '.join(option_flags(name))}")
    return reasons

"""The drivers: the Streamlit app (``study_app.web``), synthetic participants
(``simulator``) and the ``recourse-study`` command (``study_app.cli``).

    import study_app
    summary = study_app.simulate("icarma-personalization", "pilot.duckdb", 20)
    run = study_app.PowerRun(protocols.load_protocol("tominaga-replication"), [60, 120],
                             100, "action.distance", Path("power"))
    power = study_app.run_power(run)  # the `recourse-study power --json` document
    doc = study_app.preregistration(protocols.load_protocol("tominaga-replication"))

Names are imported on first use (engine.exports).
"""

from __future__ import annotations

from engine.exports import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, globals(), {
    "study_app.simulator": ("simulate", "SyntheticDriver"),
    "study_app.power": ("PowerRun", "run_power"),
    "study_app.prereg": ("preregistration", "write_prereg", "read_prereg", "PreregError"),
})

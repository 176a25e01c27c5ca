"""Synthetic people whose hidden behaviour we set: a study's synthetic participants
(constraints, elicitation reports, ordinal ratings, HARE answers) and the HARE benchmark's
simulated people (hidden ideal plans); one answering model for HARE (``hare_people``)."""

from __future__ import annotations

from engine.exports import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, globals(), {
    "engine.synthetic.participants": ("Behaviour", "Person", "Population"),
    "engine.synthetic.rating_model": ("DistanceCurve", "OutcomeModel", "RatingBehaviour"),
    "engine.synthetic.hare_people": ("SCALES", "SimulatedPeople", "accepts", "luce_choice"),
})

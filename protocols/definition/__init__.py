"""What a study is: the protocol schema, its blocks and checks, its texts and translations.

A protocol (a shipped ``protocols/<id>.yaml`` or a file of one's own) is parsed into
``schema.Protocol`` from the blocks in ``specs`` (arms, plans, questions, recruitment,
simulation, ...); ``sequence`` gives the pages a participant goes through, ``validation``
reports every problem at once, ``review`` shows the resolved protocol, ``reference``
generates its documentation, ``wording`` flags researcher words in participant texts, and
``translation`` reads its texts in other languages (``protocols/translations/``). Nothing
here runs a study: that is ``protocols.running``, which imports this half and never the
other way round.
"""

from __future__ import annotations

from engine.exports import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, globals(), {
    "protocols.definition.schema": (
        "Protocol", "ProtocolError", "load_protocol", "parse_protocol", "shipped_protocols",
    ),
    "protocols.definition.specs": ("ArmSpec",),
    "protocols.definition.simulation": ("SimulationSpec",),
    "protocols.definition.translation": (
        "Translator", "TranslationError", "translators", "translations_dir",
    ),
})

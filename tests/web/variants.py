"""Shipped protocols with one setting changed: for tests that cannot wait (the replication
runs in two sessions two weeks apart, ``sessions.delay_seconds``), and for participants the
shipped protocol refuses (``hare-interactive`` asks for two changeable items)."""

from __future__ import annotations

from pathlib import Path

from protocols.definition.schema import resolve

TWO_WEEKS = "delay_seconds: 1209600"


def with_delay(protocol: str, folder: Path, seconds: float = 0.0) -> str:
    """``protocol`` as a file in ``folder`` whose second session opens ``seconds`` after the
    first (0: one session); a protocol without a pause is returned as it is."""
    text = resolve(protocol).read_text(encoding="utf-8")
    if TWO_WEEKS not in text:
        return protocol
    path = folder / f"{protocol}-delay-{seconds:g}.yaml"
    path.write_text(text.replace(TWO_WEEKS, f"delay_seconds: {seconds:g}"), encoding="utf-8")
    return str(path)


def without_min_changeable(folder: Path) -> str:
    """``hare-interactive`` as a file in ``folder`` without its minimum of changeable items
    (``elicitation.min_changeable``), so a participant may say they can change one item or
    none (the shipped protocol refuses that answer: tests/web/test_answers_given.py)."""
    text = resolve("hare-interactive").read_text(encoding="utf-8")
    assert "  min_changeable: 2\n" in text
    path = folder / "hare-interactive.yaml"
    path.write_text(text.replace("  min_changeable: 2\n", ""), encoding="utf-8")
    return str(path)

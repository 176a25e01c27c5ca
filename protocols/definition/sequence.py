"""The pages a protocol gives a participant, in order: a pure function of the protocol.

    consent -> [screening] -> scenario -> profile -> decision -> [elicitation]
      -> [hare-1 .. hare-k] -> plan-1 .. plan-n -> debrief

(the fixed part is ``Protocol.page_slots``; a study screening first puts screening before
consent), with each attention check inserted right after the page it names; a check after
``plan-k`` of N promised plans keeps its place among the n plans a participant actually got
(after plan max(1, round(k n / N)): after plan 3 of 5 is after plan 2 of 3), and is left out
when there is no plan to rate. How a participant moves along it (ended sessions, the pause
of a study in two sessions) is protocols.running.flow.

>>> from protocols import load_protocol
>>> from protocols.definition.sequence import page_sequence
>>> seq = page_sequence(load_protocol("icarma-personalization"), 3)
>>> seq[-4:]
['plan-1', 'plan-2', 'plan-3', 'debrief']
"""

from __future__ import annotations

from protocols.definition.schema import Protocol


def page_sequence(protocol: Protocol, n_plans: int, interactive: bool = False,
                  hare_pages: int | None = None, promised: int | None = None) -> list[str]:
    """The pages of a participant who is not ended early: the fixed slots, the interactive
    pages (``hare-1..k``; ``hare-*`` when their number is not known yet), the plans, the
    attention checks after the pages they name (a plan check moved in proportion when the
    participant got ``n_plans`` of ``promised`` plans, left out without plans) and the
    debrief."""
    ids = list(protocol.page_slots())
    if interactive:
        ids += ["hare-*"] if hare_pages is None else [f"hare-{k}" for k in
                                                       range(1, hare_pages + 1)]
    plan_ids = [f"plan-{k}" for k in range(1, n_plans + 1)]
    ids += plan_ids
    promised = n_plans if promised is None else promised
    for check in protocol.attention_checks:
        anchor = check.after
        if anchor.startswith("plan-"):
            if not plan_ids:
                continue  # nothing to rate, nothing to check attention on
            k = int(anchor.split("-")[1])
            anchor = plan_ids[max(1, min(n_plans, round(k * n_plans / max(promised, 1)))) - 1]
        elif anchor not in ids:
            anchor = plan_ids[-1] if plan_ids else ids[-1]
        ids.insert(ids.index(anchor) + 1, f"attention-{check.id}")
    return ids + ["debrief"]

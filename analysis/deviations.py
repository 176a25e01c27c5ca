"""Deviations of an analysis from its preregistration (``recourse-study prereg``).

The preregistration's ``planned`` block states N, the exclusion rules (in the keys of
analysis.exclusions' record), the models (analysis.pipeline.plan_models' names) and the
sampler settings (analysis.pipeline.sampler_settings); its ``protocol.sha256`` the
protocol's fingerprint. ``prereg_deviations`` compares them with what the analysis did:

- ``participants``: N planned vs N reached (the participants with ratings, before
  exclusions: analysed plus excluded), whenever a plan states N;
- ``exclusion``: a rule applied that was not planned (added) or planned and not applied
  (removed);
- ``model``: a planned model not fitted, or a model fitted that was not planned (another
  distance, the Gaussian variant switched);
- ``sampler``: each sampler setting that differs;
- ``protocol``: the study's stored protocol hash differs from the preregistered one (the
  same protocol id, edited: the protocol's own exclusions and design may have changed).

The result is ``{"none": bool, "items": [{kind, what, planned, actual, sentence}],
"sentence"}``; ``none`` is true, and the sentence "no deviations", when there are none.
"""

from __future__ import annotations

from typing import Any


def prereg_deviations(prereg: dict[str, Any], *, participants: int,
                      exclusions: dict[str, Any] | None, models: list[str],
                      sampler: dict[str, Any], protocol_hash: str | None) -> dict[str, Any]:
    """The comparison of the module docstring. ``participants``: N reached;
    ``exclusions``: analysis.exclusions' record (None: no rule applied); ``models``: the
    names of the models the analysis fits; ``protocol_hash``: the study's stored hash.

    >>> from analysis import prereg_deviations
    >>> plan = {"protocol": {"id": "s", "title": "S", "sha256": "ab" * 32},
    ...         "planned": {"participants": 40, "exclusions": {"speeder": False},
    ...                     "models": ["m"], "sampler": {"draws": 1500}}}
    >>> found = prereg_deviations(plan, participants=38, exclusions={"rules": {"speeder": True}},
    ...                           models=["m"], sampler={"draws": 1500}, protocol_hash="ab" * 32)
    >>> [i["sentence"] for i in found["items"]]
    ['N planned 40, reached 38 (-2).', 'exclusion speeder added (planned: not applied).']
    """
    plan = prereg["planned"]
    items: list[dict[str, Any]] = []

    def add(kind: str, what: str, planned: Any, actual: Any, sentence: str) -> None:
        items.append({"kind": kind, "what": what, "planned": planned, "actual": actual,
                      "sentence": sentence})

    n = plan.get("participants")
    if n is not None and n != participants:
        add("participants", "N", n, participants,
            f"N planned {n}, reached {participants} ({participants - n:+d}).")
    applied = (exclusions or {}).get("rules", {})
    for rule in dict.fromkeys([*plan["exclusions"], *applied]):
        want, got = bool(plan["exclusions"].get(rule)), bool(applied.get(rule))
        if want != got:
            add("exclusion", rule, want, got,
                f"exclusion {rule} {'added' if got else 'removed'} "
                f"(planned: {'applied' if want else 'not applied'}).")
    for name in plan["models"]:
        if name not in models:
            add("model", name, True, False, f"model {name} planned but not fitted.")
    for name in models:
        if name not in plan["models"]:
            add("model", name, False, True, f"model {name} fitted but not planned.")
    for key in dict.fromkeys([*plan["sampler"], *sampler]):
        if plan["sampler"].get(key) != sampler.get(key):
            add("sampler", key, plan["sampler"].get(key), sampler.get(key),
                f"sampler {key}: planned {plan['sampler'].get(key)}, used "
                f"{sampler.get(key)}.")
    planned_hash = prereg["protocol"]["sha256"]
    if protocol_hash != planned_hash:
        add("protocol", "sha256", planned_hash, protocol_hash,
            f"the study's protocol (SHA-256 {str(protocol_hash)[:12]}) differs from the "
            f"preregistered one ({planned_hash[:12]}).")
    sentence = ("no deviations" if not items else
                f"{len(items)} deviation(s) from the preregistration")
    return {"none": not items, "prereg_protocol": prereg["protocol"], "items": items,
            "sentence": sentence}

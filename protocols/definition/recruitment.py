"""The recruitment platform's side of a protocol: what a link's participant id looks like,
where each ending sends the participant back, and the data-quality thresholds.

Endings (the platform's round trip). Every session ends in one of the platform's endings,
each with its own code and/or return URL (``recruitment.<ending>``):

- ``completion``: the debrief (and a session the study itself ended: the entered profile was
  approved, or too few plans were found; the participant did what was asked). Its code is
  ``completion.code``, else ``debrief.completion_code``, else one per participant;
- ``screened_out``: the screening answers made the participant ineligible;
- ``no_consent``: the participant did not consent (the platform's "returned" submission);
- ``withdrawn``: the participant withdrew (their answers deleted: data.withdrawal);
  ``no_consent``'s code and URL when not given;
- ``timed_out``: the session passed the protocol's ``time_limit`` (the platform's
  "timed out" return; protocols.definition.quotas);
- ``study_full``: every arm had reached its quota when the participant came (``quotas``).

A return URL is ``http(s)://host/...`` and may hold ``{code}`` (the ending's code) and
``{id}`` (the participant id the recruitment link carried, e.g. ``PROLIFIC_PID``; a generic
panel's ``?id=``); both are URL-quoted when filled in (``fill``). ``validate`` rejects a
URL that is not one (``url_problem``).
"""

from __future__ import annotations

import re
from typing import Literal
from urllib.parse import quote, urlsplit

from pydantic import Field, field_validator, model_validator

from data.quality import DEFAULT_SPEEDER_FRACTION, DEFAULT_STRAIGHTLINER_MIN_RATINGS
from protocols.definition.specs import Strict

EndingName = Literal["completion", "screened_out", "no_consent", "withdrawn", "timed_out",
                     "study_full"]
# participants.status -> the ending it returns with
ENDING_OF_STATUS: dict[str, EndingName] = {
    "complete": "completion", "approved": "completion", "no_plans": "completion",
    "screened_out": "screened_out", "declined": "no_consent", "withdrawn": "withdrawn",
    "timed_out": "timed_out", "full": "study_full",
}
PLACEHOLDERS = ("code", "id")
MAX_URL = 2000
_HOST = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*"
                   r"[A-Za-z0-9])?)*$")


def url_problem(url: str) -> str | None:
    """Why ``url`` is not a usable return URL (module docstring), or None."""
    if len(url) > MAX_URL:
        return f"longer than {MAX_URL} characters"
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in url):
        return "contains spaces or control characters"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as e:
        return f"not a URL ({e})"
    if parts.scheme not in ("https", "http"):
        return "must start with https:// (or http://)"
    host = parts.hostname or ""
    if not host or not (_HOST.match(host) or host.startswith("[")):
        return f"has no valid host name ({parts.netloc!r})"
    if port == 0:
        return "has port 0"
    for name in re.findall(r"\{([^{}]*)\}", url):
        if name not in PLACEHOLDERS:
            return (f"has an unknown placeholder {{{name}}}; the placeholders are "
                    + ", ".join(f"{{{p}}}" for p in PLACEHOLDERS))
    if re.sub(r"\{[^{}]*\}", "", url).count("{") or re.sub(r"\{[^{}]*\}", "", url).count("}"):
        return "has an unmatched { or }"
    return None


def fill(template: str, code: str | None, external_id: str | None) -> str:
    """The return URL with ``{code}`` and ``{id}`` filled in (URL-quoted; empty when
    unknown)."""
    return (template.replace("{code}", quote(code or "", safe=""))
            .replace("{id}", quote(external_id or "", safe="")))


class Ending(Strict):
    """An ending's code (shown to the participant, and the URL's ``{code}``) and return URL
    (module docstring); at least one of the two."""

    code: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_-]{1,64}$")
    url: str | None = None

    @field_validator("url")
    @classmethod
    def _usable(cls, url: str | None) -> str | None:
        problem = None if url is None else url_problem(url)
        if problem:
            raise ValueError(f"not a usable return URL: {problem}")
        return url

    @model_validator(mode="after")
    def _something(self) -> Ending:
        if self.code is None and self.url is None:
            raise ValueError("give a code, a url or both")
        return self


class RecruitmentSpec(Strict):
    """What a recruitment link's participant id must look like (``id_pattern``: a regular
    expression the whole id must match, e.g. ``"[0-9a-f]{24}"`` for Prolific; a link whose
    id does not match starts nobody) and where each ending sends the participant (module
    docstring)."""

    id_pattern: str | None = Field(default=None, min_length=1, max_length=200)
    completion: Ending | None = None
    screened_out: Ending | None = None
    no_consent: Ending | None = None
    withdrawn: Ending | None = None
    timed_out: Ending | None = None
    study_full: Ending | None = None

    @field_validator("id_pattern")
    @classmethod
    def _compiles(cls, pattern: str | None) -> str | None:
        if pattern is None:
            return None
        try:
            compiled = re.compile(pattern)
        except re.error as e:
            raise ValueError(f"not a regular expression: {e}") from None
        if compiled.fullmatch(""):
            raise ValueError("the pattern accepts an empty id")
        return pattern

    def ending(self, status: str) -> tuple[EndingName, Ending | None]:
        """(the ending a participant of this status returns with, its code and URL or None
        when the protocol names none); withdrawn falls back to no_consent."""
        name = ENDING_OF_STATUS.get(status, "no_consent")
        spec = getattr(self, name)
        if spec is None and name == "withdrawn":
            spec = self.no_consent
        return name, spec


class QualitySpec(Strict):
    """Data-quality thresholds (data.quality): a participant whose total time, or typical
    page time, is under ``speeder_fraction`` of the median is a speeder; one who gave the
    same acceptance and the same action rating on every plan, over at least
    ``straightliner_min_ratings`` plans, a straight-liner."""

    speeder_fraction: float = Field(default=DEFAULT_SPEEDER_FRACTION, gt=0, lt=1)
    straightliner_min_ratings: int = Field(default=DEFAULT_STRAIGHTLINER_MIN_RATINGS, ge=2)

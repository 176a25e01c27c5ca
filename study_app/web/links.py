"""What a participant's link means: resume a token, start (or find) a recruited participant,
start a new one, or refuse with a clear message.

Rules, in order:

1. ``?p=<token>`` resumes that participant at their current page. A malformed or unknown
   token is refused, unless the link also carries the platform's participant id (then 3.).
2. A token this browser session already holds (the participant used the back button, or the
   address lost its ``p``) resumes that participant.
3. The platform's participant id (``PROLIFIC_PID`` by default) starts the participant. An id
   already started resumes that participant only when the link carries the same recruitment
   session (``SESSION_ID`` by default) as the first visit (protocols.running.admission): the id
   identifies, the session of the person's own link authenticates. Otherwise the visit is
   refused (``ID_REFUSED``) and sees nothing of the participant.
4. Without an id: refused when the server requires one (``serve --require-id``, the
   default with a completion URL), else a new anonymous participant starts.

A parameter given twice with different values, longer than ``MAX_PARAM`` characters, or
containing control characters is refused: such links are damaged or tampered with.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

TOKEN_PARAM = "p"
TOKEN_RE = re.compile(r"^[A-Za-z0-9_-]{16,128}$")
MAX_PARAM = 128

BAD_TOKEN = ("This study link is not valid: its participant code is damaged or unknown. "
             "Please open the link from your invitation again; if it keeps failing, contact "
             "the researchers.")

FOUND_BY_ID = ("Your link's participant code was damaged or unknown; we found your place from "
               "your participant ID.")

ID_REFUSED = ("This study link cannot be used: the participant ID in it was already used to "
              "start the study from another link. Please open the study from the original link "
              "in your invitation, or from the address this study gave you when you started. "
              "If that does not work, contact the researchers.")

NEED_ID = ("This study can only be opened from the link on the recruitment platform, which "
           "carries your participant ID. Please open the study from there; if the link "
           "fails, contact the researchers.")

BAD_ID = ("This study link is not valid: its participant ID does not have the form this "
          "study expects. Please open the link from your invitation again; if it keeps "
          "failing, contact the researchers.")


class LinkError(ValueError):
    """A link the app refuses (the message is shown to the participant)."""


@dataclass(frozen=True)
class LinkAction:
    kind: Literal["resume", "start"]
    token: str | None = None  # resume
    external_id: str | None = None  # start
    session: str | None = None  # start: the raw recruitment session of the link
    extra: dict[str, str] = field(default_factory=dict)  # raw values of hashed parameters
    note: str = ""  # shown to the participant


@dataclass(frozen=True)
class LinkParams:
    """The names of a server's link parameters (``serve`` options)."""

    id_param: str = "PROLIFIC_PID"
    session_param: str = "SESSION_ID"
    hash_params: tuple[str, ...] = ("STUDY_ID", "SESSION_ID")
    require_id: bool = False


def single(params: Mapping[str, Sequence[str]], name: str) -> str | None:
    """The one value of parameter ``name`` (None when absent); LinkError when it is
    repeated with different values, too long or contains control characters."""
    values = [v for v in params.get(name, []) if v is not None]
    if not values:
        return None
    if len(set(values)) > 1:
        raise LinkError("This study link is not valid: part of it is given twice. Please "
                        "open the link from your invitation again.")
    value = values[0].strip()
    if not value:
        return None
    if len(value) > MAX_PARAM or any(unicodedata.category(c)[0] == "C" for c in value):
        raise LinkError("This study link is not valid: part of it is damaged. Please open "
                        "the link from your invitation again.")
    return value


def by_id(params: Mapping[str, Sequence[str]], names: LinkParams, note: str = "") -> LinkAction:
    """Start (or find) the participant of the link's recruitment id (rules 3 and 4)."""
    external = single(params, names.id_param)
    if external is None and names.require_id:
        raise LinkError(NEED_ID)
    extra = {n: v for n in names.hash_params if (v := single(params, n)) is not None}
    session = single(params, names.session_param) if external is not None else None
    return LinkAction("start", external_id=external, session=session, extra=extra, note=note)


def decide(
    params: Mapping[str, Sequence[str]], remembered: str | None, names: LinkParams
) -> LinkAction:
    """What to do with a link (module docstring)."""
    token = single(params, TOKEN_PARAM)
    if token is not None:
        if TOKEN_RE.match(token):
            return LinkAction("resume", token=token)
        if single(params, names.id_param) is None:
            raise LinkError(BAD_TOKEN)
        return by_id(params, names, FOUND_BY_ID)
    if remembered is not None:
        return LinkAction("resume", token=remembered)
    return by_id(params, names)

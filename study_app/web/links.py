"""What a participant's link means: resume a token, start (or find) a recruited participant,
start a new one, or refuse with a clear message.

Rules, in order:

1. ``?p=<token>`` resumes that participant at their current page. A malformed or unknown
   token is refused, unless the link also carries the platform's participant id (then 3.).
2. A token this browser session already holds (the participant used the back button, or the
   address lost its ``p``) resumes that participant.
3. The platform's participant id (``PROLIFIC_PID`` by default) starts the participant, or
   resumes the one already started with that id (the session stores only its salted hash).
4. Otherwise a new anonymous participant starts.

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


class LinkError(ValueError):
    """A link the app refuses (the message is shown to the participant)."""


@dataclass(frozen=True)
class LinkAction:
    kind: Literal["resume", "start"]
    token: str | None = None  # resume
    external_id: str | None = None  # start
    extra: dict[str, str] = field(default_factory=dict)  # raw values of hashed parameters
    note: str = ""  # shown to the participant


def single(params: Mapping[str, Sequence[str]], name: str) -> str | None:
    """The one value of parameter ``name`` (None when absent); LinkError when it is
    repeated with different values, too long or contains control characters."""
    values = [v for v in params.get(name, []) if v is not None]
    if not values:
        return None
    if len(set(values)) > 1:
        raise LinkError(f"This study link is not valid: it gives {name} more than once.")
    value = values[0].strip()
    if not value:
        return None
    if len(value) > MAX_PARAM or any(unicodedata.category(c)[0] == "C" for c in value):
        raise LinkError(f"This study link is not valid: its {name} is malformed. Please open "
                        "the link from your invitation again.")
    return value


def decide(
    params: Mapping[str, Sequence[str]],
    remembered: str | None,
    *,
    id_param: str,
    hash_params: Sequence[str],
) -> LinkAction:
    """What to do with a link (module docstring)."""
    external = single(params, id_param)
    extra = {n: v for n in hash_params if (v := single(params, n)) is not None}
    token = single(params, TOKEN_PARAM)
    if token is not None:
        if TOKEN_RE.match(token):
            return LinkAction("resume", token=token)
        if external is None:
            raise LinkError(BAD_TOKEN)
        return LinkAction("start", external_id=external, extra=extra, note=FOUND_BY_ID)
    if remembered is not None:
        return LinkAction("resume", token=remembered)
    return LinkAction("start", external_id=external, extra=extra)

"""ArviZ's once-a-day stamp, written before ArviZ is first imported so that parallel first
imports cannot race.

ArviZ 0.23 warns once a day when it is imported and records the day in
``<user cache>/arviz/daily_warning`` (``~/.cache/arviz`` on Linux) by writing
``daily_warning.tmp`` and renaming it over the stamp. The temporary name is the same in every
process: when several processes import ArviZ while today's stamp is missing (pytest-xdist
workers, Ray's power tasks, several servers on a new machine), one process's rename moves the
file another is about to rename, and that process's ``import arviz`` raises
``FileNotFoundError``. ``write_arviz_stamp`` writes today's date first, through a temporary
file whose name is unique to the process, renamed atomically over the stamp: every later
ArviZ import, in any process, reads today's date and skips its own write. Any number of
processes may run it at once; each rename replaces a complete stamp with a complete one.

The analysis package's ``__init__`` calls it, so it runs before any module of ours imports
ArviZ, or PyMC or nutpie (which import ArviZ); tests/test_architecture.py keeps those imports
inside the package. ArviZ's daily notice (about its coming 1.0 refactor; PyMC keeps ArviZ
below 1.0) is then not printed.
"""

from __future__ import annotations

import datetime
import os
import sys
import tempfile
from pathlib import Path

STAMP_NAME = "daily_warning"  # ArviZ 0.23's name for the stamp (arviz/__init__.py)


def arviz_stamp_path() -> Path:
    """Where ArviZ keeps its stamp: the same ``platformdirs`` call ArviZ makes."""
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("arviz", "arviz")) / STAMP_NAME


def write_arviz_stamp(today: datetime.date | None = None) -> Path | None:
    """Make ArviZ's stamp hold ``today`` (default: the local date, as ArviZ reads it) unless
    ArviZ is already imported; the stamp's path, or None when nothing was needed or the
    cache cannot be written (then ArviZ's own write fails alike and ArviZ is no worse off)."""
    if "arviz" in sys.modules:
        return None
    stamp = arviz_stamp_path()
    day = (today or datetime.date.today()).isoformat()
    try:
        if stamp.read_text().strip() == day:
            return stamp
    except (OSError, UnicodeDecodeError):
        pass
    tmp: str | None = None
    try:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=stamp.parent, prefix=f"{STAMP_NAME}.", suffix=".tmp")
        with os.fdopen(fd, "w") as out:
            out.write(day)
        os.replace(tmp, stamp)
    except OSError:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
        return None
    return stamp

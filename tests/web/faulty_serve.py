"""`recourse-study serve` whose screening page fails: the forced error of the browser test.

Run as ``python faulty_serve.py serve --protocol ...``: the real command, the real server and
app, with only the renderer of the ``screening`` page replaced by one that raises an exception
whose message and traceback must never reach the browser.
"""

from __future__ import annotations

import sys

import study_app.web.renderers  # noqa: F401  (registers the real renderers first)
from study_app.cli import main
from study_app.web.registry import RENDERERS

SECRET = "SECRET-DETAIL /srv/private/module.py"


def _fail(page: object) -> None:
    raise RuntimeError(f"forced failure: {SECRET}")


RENDERERS["screening"] = _fail
sys.argv = ["recourse-study", *sys.argv[1:]]
main()

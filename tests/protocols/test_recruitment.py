"""The protocol's endings: return URLs checked by ``validate`` (a malformed one is an error
with its path and line), each status mapped to its ending, the URL filled in safely."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from protocols.definition.recruitment import RecruitmentSpec, fill, url_problem
from protocols.definition.schema import ProtocolError, parse_protocol
from study_app.cli import app

BASE = """\
id: endings
title: Endings
arms: [{id: o, method: oracle}]
recruitment:
  completion: {code: DONE1, url: "https://app.prolific.com/submissions/complete?cc={code}"}
  screened_out: {code: SCREEN2, url: "%s"}
  no_consent: {url: "https://panel.example/back?id={id}&status=returned"}
"""


@pytest.mark.parametrize("url, problem", [
    ("app.prolific.com/done?cc={code}", "must start with https://"),
    ("ftp://host/x", "must start with https://"),
    ("https:///nohost?cc={code}", "no valid host"),
    ("https://bad_host!/x", "no valid host"),
    ("https://host/x?cc={kode}", "unknown placeholder {kode}"),
    ("https://host/x?cc={code", "unmatched"),
    ("https://host/a b", "spaces"),
    ("https://host:99999/x", "not a URL"),
])
def test_a_malformed_return_url_is_refused(url: str, problem: str) -> None:
    assert problem in (url_problem(url) or "")
    with pytest.raises(ProtocolError, match=r"recruitment\.screened_out\.url \(line 6\): .*"
                       + problem.split()[0]):
        parse_protocol(BASE % url)


def test_validate_names_the_malformed_url(tmp_path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(BASE % "htps://app.prolific.com/submissions/complete?cc={code}")
    out = CliRunner().invoke(app, ["validate", str(path), "--json"])
    assert out.exit_code == 2
    (error,) = json.loads(out.stdout)["errors"]
    assert error["path"] == "recruitment.screened_out.url" and error["line"] == 6
    assert "must start with https://" in error["message"]
    path.write_text(BASE % "https://app.prolific.com/submissions/complete?cc={code}")
    assert CliRunner().invoke(app, ["validate", str(path), "--json"]).exit_code == 0


def test_each_status_has_its_ending() -> None:
    spec = parse_protocol(BASE % "https://x.example/s?c={code}").recruitment
    assert spec.ending("complete")[1].code == "DONE1"
    assert spec.ending("approved")[0] == spec.ending("no_plans")[0] == "completion"
    assert spec.ending("screened_out")[1].code == "SCREEN2"
    assert spec.ending("declined")[0] == "no_consent"
    assert spec.ending("withdrawn") == ("withdrawn", spec.no_consent)  # the fallback
    assert RecruitmentSpec().ending("declined") == ("no_consent", None)
    with pytest.raises(ValueError, match="give a code, a url or both"):
        RecruitmentSpec(no_consent={})
    assert fill("https://h/x?cc={code}&id={id}", "A B", "p&1") == (
        "https://h/x?cc=A%20B&id=p%261")


def test_the_completion_code_is_given_once() -> None:
    text = BASE % "https://x.example/" + "debrief: {completion_code: OTHER}\n"
    with pytest.raises(ProtocolError, match="differs from debrief.completion_code"):
        parse_protocol(text)

"""The user cache of trained test homes (tests/conftest.py): which homes ``prune_cache`` keeps,
and that the training-code hash covers the paper models' training code."""

from __future__ import annotations

import os
from pathlib import Path

from tests.conftest import CODE_HASH_FILE, REPO, _cache_lock, prune_cache, training_code_files


def _home(root: Path, name: str, used: float) -> Path:
    home = root / f"test-home-{name}"
    (home / "artifacts").mkdir(parents=True)
    (home / CODE_HASH_FILE).write_text(name + "\n")
    os.utime(home / CODE_HASH_FILE, (used, used))
    return home


def test_the_cache_keeps_the_current_home_and_the_ones_used_last(tmp_path):
    current = _home(tmp_path, "cur", used=100.0)  # the oldest marker, kept all the same
    homes = {name: _home(tmp_path, name, used=t)
             for name, t in (("a", 400.0), ("b", 300.0), ("c", 200.0), ("d", 500.0))}
    (tmp_path / "test-home-broken").mkdir()  # no marker: as if never used
    deleted = prune_cache(current, keep=3)
    assert sorted(p.name for p in deleted) == ["test-home-b", "test-home-broken", "test-home-c"]
    left = sorted(p.name for p in tmp_path.glob("test-home-*") if p.is_dir())
    assert left == ["test-home-a", "test-home-cur", "test-home-d"]
    assert (homes["d"] / CODE_HASH_FILE).is_file() and (current / "artifacts").is_dir()


def test_a_home_in_use_by_another_session_is_not_deleted(tmp_path):
    current = _home(tmp_path, "cur", used=300.0)
    old = _home(tmp_path, "old", used=100.0)
    with _cache_lock(old):
        assert prune_cache(current, keep=1) == []
    assert old.is_dir()
    assert prune_cache(current, keep=1) == [old] and not old.exists()


def test_the_training_code_hash_covers_the_paper_models_training():
    files = {p.relative_to(REPO).as_posix() for p in training_code_files()}
    assert {"engine/papers/icarma/models.py", "engine/recourse/icarma/ensemble.py",
            "engine/artifact_builders.py", "engine/scenarios/loan.py"} <= files

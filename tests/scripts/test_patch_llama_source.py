"""scripts/patch_llama_source.py: llamafile's kernels only from N rows, all edits or none."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPEC = importlib.util.spec_from_file_location(
    "patch_llama_source", ROOT / "scripts" / "patch_llama_source.py"
)
assert SPEC and SPEC.loader
patcher = importlib.util.module_from_spec(SPEC)
sys.modules["patch_llama_source"] = patcher
SPEC.loader.exec_module(patcher)

# The pinned sdist's text around each edit, shortened to what the patch touches.
MATMUL_TEXT = """
#if GGML_USE_LLAMAFILE
    const bool src1_cont = ggml_is_contiguous(src1);

    if (src1_cont) {
        for (int64_t i13 = 0; i13 < ne13; i13++)
            for (int64_t i12 = 0; i12 < ne12; i12++)
                if (!llamafile_sgemm(params, ne01, ne11)) goto UseGgmlGemm1;
        return;
    }
UseGgmlGemm1:;
#endif
#if GGML_USE_LLAMAFILE
    if (src1->type != vec_dot_type) {
        const void* wdata = (src1->type == vec_dot_type) ? src1->data : params->wdata;
        if (!llamafile_sgemm(params, ne01, ne11)) goto UseGgmlGemm2;
        return;
    }
UseGgmlGemm2:;
#endif
"""
FEATURES_TEXT = """
        if (ggml_cpu_has_llamafile()) {
            features.push_back({ "LLAMAFILE", "1" });
        }
"""


@pytest.fixture
def source(tmp_path: Path) -> Path:
    for rel, text in ((patcher.MATMUL, MATMUL_TEXT), (patcher.FEATURES, FEATURES_TEXT)):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def test_both_kernel_calls_need_the_minimum_rows_and_the_build_says_so(source: Path) -> None:
    changed = patcher.patch(source, 8)
    matmul = (source / patcher.MATMUL).read_text()
    assert len(changed) == 3
    assert "if (src1_cont && ne11 >= 8) {" in matmul
    assert "if (src1->type != vec_dot_type && ne11 >= 8) {" in matmul
    assert "if (src1_cont) {" not in matmul
    assert '{ "LLAMAFILE", "8" }' in (source / patcher.FEATURES).read_text()


def test_patching_twice_changes_nothing(source: Path) -> None:
    patcher.patch(source, 8)
    before = (source / patcher.MATMUL).read_text()
    assert patcher.patch(source, 8) == []
    assert (source / patcher.MATMUL).read_text() == before


def test_a_source_that_does_not_match_is_refused_and_left_untouched(source: Path) -> None:
    matmul = source / patcher.MATMUL
    matmul.write_text(MATMUL_TEXT.replace("if (src1->type != vec_dot_type) {", "if (x) {"))
    features_before = (source / patcher.FEATURES).read_text()
    with pytest.raises(patcher.PatchError, match="expected 1 of"):
        patcher.patch(source, 8)
    assert "if (src1_cont) {" in matmul.read_text()  # the first edit was not written either
    assert (source / patcher.FEATURES).read_text() == features_before


def test_the_command_line_refuses_a_missing_source_and_a_useless_minimum(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert patcher.main([str(tmp_path)]) == 1
    assert "not found" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        patcher.main([str(tmp_path), "--min-rows", "1"])


def test_show_prints_every_edit_and_changes_nothing(
    source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = (source / patcher.MATMUL).read_text()
    assert patcher.main([str(source), "--show", "--min-rows", "8"]) == 0
    shown = capsys.readouterr().out
    assert shown.count(" x1\n") == 3 and "ne11 >= 8" in shown
    assert (source / patcher.MATMUL).read_text() == before
    patcher.main([str(source), "--show", "--min-rows", "9"])
    assert capsys.readouterr().out != shown  # the wheel's name follows the edits

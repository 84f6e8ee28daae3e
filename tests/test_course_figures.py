"""calc.sizing.course: the chapter's memory figures beside the calculator's (physics.md section C).

Read the table below as printed | correct: each row has the printed text, the printed value in
bytes (the course's "GB" read as 1e9), the correct value by hand, and the relative error of the
printed figure, (printed - correct) / correct.
"""

import re

import pytest

from calc.spec.catalog import get_model
from calc.sizing.course import QUANTITIES, CourseFigure, computed_bytes, course_figures

GB, GiB = 1e9, 2**30

# Llama-2 per-token KV in FP16: 7B 2*32*32*128*2 = 524,288 B; 13B 2*40*40*128*2 = 819,200 B;
# 70B (GQA, 8 KV heads) 2*80*8*128*2 = 327,680 B.
# FP16 weights: 7B 6,738,415,616 * 2; 13B 13,015,864,320 * 2; 70B 68,976,648,192 * 2 (physics.md A1).
SIDE_BY_SIDE = [
    # key,                      printed,  printed B,  correct B (by hand),                  rel. error
    ("intro_70b_weights",       "140GB",   140e9,     68_976_648_192 * 2,                   +0.015),  # 137.95 GB = 128.5 GiB
    ("llama2_70b_kv_2048",      "1.4GB",   1.4e9,     327_680 * 2048,                       +1.086),  # 0.671 GB = 0.625 GiB
    ("llama2_70b_kv_2048_x100", "140GB",   140e9,     100 * 327_680 * 2048,                 +1.086),  # 67.1 GB = 62.5 GiB
    ("example_7b_kv_4096",      "2GB",     2e9,       2 * 32 * 32 * 128 * 4096 * 2,         -0.069),  # 2.147 GB = 2 GiB
    ("table_7b_weights",        "14 GB",   14e9,      6_738_415_616 * 2,                    +0.039),  # 13.48 GB = 12.55 GiB
    ("table_7b_kv_4k",          "2 GB",    2e9,       524_288 * 4096,                       -0.069),  # 2.147 GB = 2 GiB
    ("table_7b_kv_32k",         "16 GB",   16e9,      524_288 * 32768,                      -0.069),  # 17.18 GB = 16 GiB
    ("table_13b_weights",       "26 GB",   26e9,      13_015_864_320 * 2,                   -0.001),  # 26.03 GB = 24.24 GiB
    ("table_13b_kv_4k",         "3.7 GB",  3.7e9,     819_200 * 4096,                       +0.103),  # 3.36 GB = 3.125 GiB
    ("table_13b_kv_32k",        "29.6 GB", 29.6e9,    819_200 * 32768,                      +0.103),  # 26.84 GB = 25 GiB
    ("table_70b_weights",       "140 GB",  140e9,     68_976_648_192 * 2,                   +0.015),  # 137.95 GB
    ("table_70b_kv_4k",         "20 GB",   20e9,      327_680 * 4096,                       +13.901), # 1.34 GB = 1.25 GiB
    ("table_70b_kv_32k",        "160 GB",  160e9,     327_680 * 32768,                      +13.901), # 10.74 GB = 10 GiB
]

FIGURES = {f.key: f for f in course_figures()}


class TestCourseFigures:
    def test_covers_exactly_the_table(self):
        assert [row[0] for row in SIDE_BY_SIDE] == [f.key for f in course_figures()]

    @pytest.mark.parametrize("key, printed_text, printed_bytes, correct_bytes, rel_error", SIDE_BY_SIDE)
    def test_side_by_side(self, key, printed_text, printed_bytes, correct_bytes, rel_error):
        fig = FIGURES[key]
        assert (fig.printed_text, fig.printed_bytes) == (printed_text, pytest.approx(printed_bytes))
        assert computed_bytes(fig) == correct_bytes
        assert round(fig.printed_bytes / computed_bytes(fig) - 1, 3) == rel_error

    def test_the_worked_example_is_exactly_2_gib(self):
        # 2 * 32 * 32 * 128 * 4096 * 2 = 2,147,483,648 = 2^31 B: the course's "2GB" is 2 GiB
        assert computed_bytes(FIGURES["example_7b_kv_4096"]) == 2 * GiB

    def test_printed_text_is_the_printed_bytes(self):
        for f in course_figures():
            number = float(re.fullmatch(r"([\d.]+) ?GB", f.printed_text).group(1))
            assert f.printed_bytes == pytest.approx(number * GB), f.key

    def test_printed_text_appears_in_the_chapter(self, chapter_text):
        for f in course_figures():
            assert f.printed_text in chapter_text, f.key


class TestFigureFields:
    def test_keys_unique_and_sections(self):
        figs = course_figures()
        assert len({f.key for f in figs}) == len(figs)
        assert {f.section for f in figs} == {"3.1", "3.2"}

    def test_quantities_and_contexts(self):
        for f in course_figures():
            assert f.quantity in QUANTITIES
            assert (f.context_tokens is None) == (f.quantity == "weights"), f.key
            assert f.requests == (100 if f.quantity == "kv_total" else 1), f.key
            assert get_model(f.model_id).id == f.model_id

    def test_both_languages(self):
        han = re.compile(r"[\u4e00-\u9fff]")
        for f in course_figures():
            assert f.label_en and f.reason_en and not han.search(f.label_en + f.reason_en), f.key
            assert han.search(f.label_zh) and han.search(f.reason_zh), f.key

    def test_reasons_say_match_or_why_not(self):
        # "Matches" when the printed number is within 5 % reading its "GB" as GB or as GiB, and the
        # context is one the model serves (Llama-2: 4,096 tokens)
        for f in course_figures():
            printed_number = f.printed_bytes / GB
            close = any(abs(printed_number * unit / computed_bytes(f) - 1) < 0.05 for unit in (GB, GiB))
            servable = (f.context_tokens or 0) <= get_model(f.model_id).max_position_embeddings
            assert f.reason_en.startswith("Matches") == (close and servable), f.key
            assert f.reason_zh.startswith(("一致", "基本一致")) == (close and servable), f.key
        assert "GQA" in FIGURES["table_70b_kv_4k"].reason_zh or "grouped-query" in FIGURES["table_70b_kv_4k"].reason_en
        assert "4,096 tokens" in FIGURES["table_13b_kv_32k"].reason_en  # context beyond Llama-2's 4k

    def test_frozen(self):
        with pytest.raises(AttributeError):
            FIGURES["table_7b_kv_4k"].printed_bytes = 0.0  # type: ignore[misc]
        assert isinstance(FIGURES["table_7b_kv_4k"], CourseFigure)


class TestComputedBytes:
    def test_fp8_kv_halves(self):
        # 327,680 / 2 = 163,840 B per token * 4096 = 671,088,640
        assert computed_bytes(FIGURES["table_70b_kv_4k"], kv_cache_dtype="fp8") == 671_088_640

    def test_fp32_weights_double(self):
        # 6,738,415,616 * 4 B = 26,953,662,464
        assert computed_bytes(FIGURES["table_7b_weights"], dtype="float32") == 26_953_662_464

    def test_kv_follows_dtype_on_auto(self):
        # auto KV with float32 model dtype: 4 B -> 2 * 524,288 * 4096
        assert computed_bytes(FIGURES["table_7b_kv_4k"], dtype="float32") == 2 * 524_288 * 4096

    def test_bad_quantity(self):
        bad = CourseFigure(key="x", section="3.2", printed_text="1 GB", printed_bytes=1e9, model_id=FIGURES[
            "table_7b_kv_4k"].model_id, quantity="kv_per_request", context_tokens=None, requests=1,
            label_en="", label_zh="", reason_en="", reason_zh="")
        with pytest.raises(ValueError, match="context_tokens None"):
            computed_bytes(bad)


@pytest.fixture
def chapter_text():
    from tests.conftest import SHARED

    path = SHARED / "course" / "chapter3-inference-bottlenecks.zh.md"
    if not path.exists():
        pytest.skip(f"course chapter not found at {path}")
    return path.read_text(encoding="utf-8")

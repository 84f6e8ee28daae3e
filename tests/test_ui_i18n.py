"""Translations: both languages have the same keys and the same {placeholders}."""

import string
import unicodedata

import pytest

from ui.i18n import EN, LANGS, STRINGS, ZH, Translator, language_from_locale


def _fields(text):
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_both_languages_have_the_same_keys():
    assert set(EN) - set(ZH) == set()
    assert set(ZH) - set(EN) == set()
    assert tuple(STRINGS) == LANGS


@pytest.mark.parametrize("key", sorted(EN))
def test_placeholders_match(key):
    assert _fields(EN[key]) == _fields(ZH[key]), key


def test_chinese_strings_are_translated():
    # Labels that are vLLM flag names stay as they are; everything else differs from English.
    same = {k for k in EN if EN[k] == ZH[k]}
    assert same <= {"ctl.gpu", "ctl.gpu_memory_utilization", "lang.label", "kv.col.kv_token", "kv.col.kv_at",
                    "kv.short.kv", "kv.short.kv_total",
                    # percentile names read the same in Chinese
                    "opt.sla_stat.p90", "opt.sla_stat.p95", "opt.sla_stat.p99",
                    "sc.request.short",  # "#2 · 2,048" (the Gantt's labels on a phone): a number and a count
                    "lt.fig.pq",  # the statistic's own name ("P95", or the translated "mean")
                    # the price box's placeholder: the catalog price itself, or a dash
                    "fr.price.catalog", "fr.price.none", "band.moe",
                    "dg.metric.gpus_pair"}, same  # "1 · 3": the card's label names the two numbers  # "MoE" is the term in Chinese too


def test_every_control_has_a_label_and_help_in_both_languages():
    from ui import controls as C
    from ui.traffic import SLA
    for ctl in C.SHARED + C.PAGE + SLA:
        for lang in LANGS:
            assert f"ctl.{ctl.key}" in STRINGS[lang]
            assert f"ctl.{ctl.key}.help" in STRINGS[lang]


def test_translator_formats_and_falls_back():
    t = Translator("zh")
    assert t("mem.chart.max", value="57") == "最多 57"
    assert Translator("fr").lang == "en"
    assert t("no.such.key") == "no.such.key"


@pytest.mark.parametrize("locale, lang", [("zh-CN", "zh"), ("zh-TW", "zh"), ("en-US", "en"), ("de", "en"),
                                          (None, "en"), ("", "en")])
def test_language_from_locale(locale, lang):
    assert language_from_locale(locale) == lang


def _bold_closers_glued_to_cjk_punctuation(text: str) -> list[str]:
    """CommonMark: a closing ``**`` right after punctuation must be followed by a space or punctuation,
    else it is not right-flanking and stays literal. Chinese puts a letter right after "：", so
    ``**标题：**正文`` shows its asterisks (seen on the memory page); ``**标题**：正文`` is bold."""
    parts = text.split("**")
    bad = []
    for k in range(1, len(parts) - 1, 2):  # parts[k] is bold; the delimiter after it closes
        inner, after = parts[k], parts[k + 1]
        if inner and after and unicodedata.category(inner[-1]).startswith("P") \
                and not (after[0].isspace() or unicodedata.category(after[0]).startswith("P")):
            bad.append(f"**{inner}**{after[:6]}")
    return bad


def test_bold_in_chinese_closes():
    bad = {k: b for k, v in ZH.items() if (b := _bold_closers_glued_to_cjk_punctuation(v))}
    assert bad == {}
    assert _bold_closers_glued_to_cjk_punctuation("**太大：**这次") == ["**太大：**这次"]
    assert _bold_closers_glued_to_cjk_punctuation("**太大**：这次") == []


def test_gpu_names_in_chinese_keep_the_product_name_and_translate_the_note():
    """Catalog names with an English note in brackets ("(per GPU)", "(GPU side)") read in Chinese in the Chinese
    UI (the look at 390 px found them in the planner's legend and the sidebar); the product name is unchanged."""
    from calc.spec.catalog import get_gpu
    from ui.i18n import GPU_NAMES_ZH, Translator

    zh, en = Translator("zh"), Translator("en")
    for gid, name in GPU_NAMES_ZH.items():
        g = get_gpu(gid)
        assert name.startswith(g.name.split(" (")[0]) and "（" in name and "(" not in name
        assert zh.gpu(g) == name and en.gpu(g) == g.name
    assert zh.gpu(get_gpu("h100-sxm")) == get_gpu("h100-sxm").name  # no note: the catalog's name

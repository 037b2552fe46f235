"""The decode-phase widget of notebook 01: streams real tokens, reruns on slider release, errors stay inside."""

from __future__ import annotations

import decodelab
from decodelab.teach.widgets.decode import DecodeExplorer, tokens_html


def test_explorer_shows_the_same_tokens_as_generate(pair):
    w = DecodeExplorer(pair.target, pair.tokenizer, prompt="모든 국민은", max_new_tokens=12, delay_ms=0)
    r = w.run()
    ref = decodelab.generate(pair.target, pair.tokenizer, "모든 국민은", 12)
    assert r.token_ids == ref.token_ids
    assert w.tokens.value.count("<span") == len(ref.token_ids)
    assert "TTFT" in w.status.value and "TPOT" in w.status.value


def test_slider_release_reruns_with_the_new_setting(pair):
    w = DecodeExplorer(pair.target, pair.tokenizer, prompt="모든 국민은", max_new_tokens=5, delay_ms=0)
    w.run()
    w.n.value = 9  # what a slider release does
    assert w.result is not None and len(w.result.token_ids) in range(1, 10)
    assert w.result.token_ids == decodelab.generate(pair.target, pair.tokenizer, "모든 국민은", 9).token_ids
    w.temperature.value = 1.0
    assert w.settings()["temperature"] == 1.0 and w.settings()["top_k"] is None


def test_bad_prompt_is_reported_inside_the_widget(pair):
    w = DecodeExplorer(pair.target, pair.tokenizer, prompt="", max_new_tokens=5, delay_ms=0)
    assert w.run() is None
    assert "입력 오류" in w.status.value and "프롬프트" in w.status.value


def test_tokens_html_counts_tokens(pair):
    html = tokens_html(pair.tokenizer, "국회는 법률을 제정한다.")
    n = len(pair.tokenizer("국회는 법률을 제정한다.", add_special_tokens=False)["input_ids"])
    assert html.count("<span") == n and f"토큰 {n}개" in html

"""What a student types by hand in notebook 01 gets a Korean answer that says what to change
(issue 32, item 7): each test fails on the behaviour the issue reported."""

from __future__ import annotations

import json

import pytest
import torch

import decodelab
from decodelab import decoding, models
from decodelab.assess import exercises as ex
from decodelab.tools import lab
from decodelab.sampling import SamplingConfig


# ---- a token id outside the vocabulary: Korean ValueError, not torch's IndexError


@pytest.mark.parametrize("bad", [4096, 99999, -1])
def test_prefill_refuses_a_token_id_outside_the_vocabulary(pair, bad):
    rows = decoding.vocab_rows(pair.target)
    assert rows == 4096
    with pytest.raises(ValueError) as info:
        decodelab.prefill(pair.target, torch.tensor([[5, bad]]))
    msg = str(info.value)
    assert "어휘" in msg and f"0~{rows - 1}" in msg and "tok(" in msg and str(bad) in msg


@pytest.mark.parametrize("bad", [4096, 10**6, -1])
def test_decode_step_refuses_a_token_id_outside_the_vocabulary(pair, bad):
    state = decodelab.prefill(pair.target, torch.tensor([[5, 6]]))
    with pytest.raises(ValueError) as info:
        decodelab.decode_step(pair.target, state, bad)
    msg = str(info.value)
    assert f"token_id={bad}" in msg and "4095 이하" in msg and "state.logits" in msg
    assert state.position == 2  # nothing happened: the same state goes on
    assert decodelab.decode_step(pair.target, state, int(state.logits.argmax())).position == 3


def test_decode_step_takes_the_argmax_tensor_and_refuses_a_text(pair):
    state = decodelab.prefill(pair.target, torch.tensor([[5, 6]]))
    after = decodelab.decode_step(pair.target, state, state.logits.argmax())  # without int(...)
    assert after.input_ids[0, -1].item() == int(state.logits.argmax())
    with pytest.raises(TypeError, match="토큰 번호"):
        decodelab.decode_step(pair.target, after, "7")


# ---- top_k=0 means off, as the explorer's slider says ("0=끄기")


def test_top_k_zero_is_off():
    assert SamplingConfig(1.0, 0) == SamplingConfig(1.0, None)
    assert SamplingConfig(temperature=1.0, top_k=0).top_k is None
    with pytest.raises(ValueError, match="0 또는 None = 끄기"):
        SamplingConfig(temperature=1.0, top_k=-1)


def test_generate_with_top_k_zero_samples_like_top_k_off(pair):
    kw = dict(temperature=1.0, seed=3, stop_at_eos=False)
    off = decodelab.generate(pair.target, pair.tokenizer, "모든 국민은", 12, top_k=None, **kw)
    zero = decodelab.generate(pair.target, pair.tokenizer, "모든 국민은", 12, top_k=0, **kw)
    five = decodelab.generate(pair.target, pair.tokenizer, "모든 국민은", 12, top_k=1, **kw)
    assert zero.token_ids == off.token_ids
    greedy = decodelab.generate(pair.target, pair.tokenizer, "모든 국민은", 12, stop_at_eos=False)
    assert five.token_ids == greedy.token_ids  # top_k=1 is greedy: the setting does reach the sampler


# ---- dict(temp=2.0) in the 01 task: a Korean error naming the allowed keys


def test_an_unknown_setting_name_is_a_korean_error_naming_the_allowed_ones():
    my_setting = dict(temp=2.0)
    with pytest.raises(TypeError) as info:
        SamplingConfig(**my_setting)
    msg = str(info.value)
    assert "'temp'" in msg and "temperature, top_k, top_p" in msg and "'temperature'" in msg  # the close match
    assert "unexpected keyword" not in msg
    with pytest.raises(TypeError, match="3개까지만"):
        SamplingConfig(1.0, None, None, 4)
    with pytest.raises(TypeError, match="두 번"):
        SamplingConfig(1.0, temperature=2.0)
    assert SamplingConfig(**dict(temperature=2.0, top_p=0.9)) == SamplingConfig(2.0, None, 0.9)


# ---- the explorer: an input error clears the earlier tokens; max_new_tokens is honoured or refused


def test_after_an_empty_prompt_the_explorer_shows_no_earlier_tokens(pair):
    pytest.importorskip("ipywidgets")
    from decodelab.teach.widgets.decode import DecodeExplorer

    w = DecodeExplorer(pair.target, pair.tokenizer, prompt="모든 국민은", max_new_tokens=5, delay_ms=0)
    assert w.run() is not None and w.tokens.value and w.top.value
    w.prompt.value = "   "
    assert w.run() is None
    assert "입력 오류" in w.status.value and "프롬프트가 비어" in w.status.value
    assert w.tokens.value == "" and w.top.value == "" and w.result is None


def test_a_large_max_new_tokens_is_honoured_or_refused_never_cut(pair):
    pytest.importorskip("ipywidgets")
    from decodelab.teach.widgets.decode import DecodeExplorer

    w = DecodeExplorer(pair.target, pair.tokenizer, prompt="모든 국민은", max_new_tokens=200, delay_ms=0)
    assert (w.n.value, w.n.max) == (200, 200)
    n_prompt = len(models.format_prompt(pair.tokenizer, "모든 국민은"))
    limit = decoding.context_length(pair.target)
    with pytest.raises(ValueError) as info:
        DecodeExplorer(pair.target, pair.tokenizer, prompt="모든 국민은", max_new_tokens=10000)
    assert f"max_new_tokens를 {limit - n_prompt} 이하로" in str(info.value)
    with pytest.raises(ValueError, match="1 이상"):
        DecodeExplorer(pair.target, pair.tokenizer, max_new_tokens=0)


# ---- prediction boxes read Korean counters ("8개") as they read the unit ("-3 위치")


@pytest.mark.parametrize("text, unit, value", [
    ("8개", "위치", 8.0), ("8 개", "위치", 8.0), ("-3 위치", "위치", -3.0), ("약 8개 정도", "위치", 8.0),
    ("260번", "번", 260.0), ("3.5배", "배", 3.5), ("20 MS", "ms", 20.0), ("1,000 토큰", "토큰", 1000.0), ("12.5", None, 12.5),
])
def test_parse_number_reads_counters(text, unit, value):
    assert ex.parse_number(text, unit) == value


@pytest.mark.parametrize("text, unit, says", [("2초", "ms", "단위가 다릅니다"), ("8 GB", "개", "단위가 다릅니다"),
                                              ("여덟", "개", "숫자로 읽을 수 없습니다"), ("8 사과", "개", "숫자")])
def test_parse_number_refuses_another_scale_or_words(text, unit, says):
    with pytest.raises(ValueError, match=says):
        ex.parse_number(text, unit)


def test_a_prediction_box_commits_8_counters(tmp_path, monkeypatch):
    pytest.importorskip("ipywidgets")
    monkeypatch.setenv("DECODELAB_ANSWERS_DIR", str(tmp_path / "answers"))
    view = ex.PredictView("01-predict-cache-length")  # unit 위치
    view.input.value = "8개"
    assert view.commit() == 8.0 and "예측을 저장했습니다" in view.feedback.value


# ---- no "Jupyter news?" pop-up over notebook 01


def test_the_lab_turns_the_announcements_plugin_off_without_user_settings(monkeypatch):
    page = json.loads((lab.JUPYTER_CONFIG / "labconfig" / "page_config.json").read_text(encoding="utf-8"))
    assert page["disabledExtensions"] == {"@jupyterlab/apputils-extension:announcements": True,
                                          "@jupyter/nbgrader": True}  # no nbgrader menu in a student's lab
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", "/etc/site-jupyter")
    assert lab.lab_env()["JUPYTER_CONFIG_PATH"].split(":") == [str(lab.JUPYTER_CONFIG), "/etc/site-jupyter"]
    monkeypatch.delenv("JUPYTER_CONFIG_PATH")
    assert lab.lab_env()["JUPYTER_CONFIG_PATH"] == str(lab.JUPYTER_CONFIG)


# ---- issue 43, item 6: ids the model has no row for, and ids beyond int64, never reach torch


def _added_special_token(tokenizer):
    """A copy of ``tokenizer`` with one added special token: its id is the vocabulary size (4096),
    one past the model's last embedding row."""
    import copy

    tok = copy.deepcopy(tokenizer)
    tok.add_tokens(["<도구>"], special_tokens=True)
    return tok


@pytest.mark.parametrize("call", ["batch_generate", "continuous_batching"])
def test_batching_refuses_an_added_special_token(pair, call):
    from decodelab.batching import Request, batch_generate, continuous_batching

    tok = _added_special_token(pair.tokenizer)
    rows = decoding.vocab_rows(pair.target)
    assert tok.convert_tokens_to_ids("<도구>") == rows == 4096
    run = {"batch_generate": lambda ps: batch_generate(pair.target, tok, ps, 2),
           "continuous_batching": lambda ps: continuous_batching(pair.target, tok, [Request(p, 2, 0) for p in ps])}[call]
    with pytest.raises(ValueError, match=r"^prompt=\[4096\]: .*임베딩 행\(4096행\).*추가한 특수 토큰") as info:
        run(["헌법은", "모든 <도구> 국민은"])
    assert "'<도구>'" in str(info.value)
    served = run(["헌법은", "모든 국민은"])  # without the added token: served as before
    tokens = served.token_ids if call == "batch_generate" else [r.token_ids for r in served.requests]
    assert [len(t) for t in tokens] == [2, 2]


@pytest.mark.parametrize("bad", [4096, -1])
def test_head_attention_refuses_a_token_id_outside_the_vocabulary(pair, bad):
    from decodelab import attention

    with pytest.raises(ValueError) as info:
        attention.head_attention(pair.target, pair.tokenizer, [5, bad])
    msg = str(info.value)
    assert msg.startswith(f"prompt=[{bad}]: 이 모델의 어휘 밖에 있는 토큰 번호입니다") and "0~4095" in msg


@pytest.mark.parametrize("bad", [2**63, 2**64, -(2**63) - 1])
def test_prefill_refuses_an_id_beyond_int64_in_korean(pair, bad):
    with pytest.raises(ValueError) as info:
        decodelab.prefill(pair.target, [[5, bad]])
    msg = str(info.value)
    assert msg.startswith(f"input_ids=[{bad}]: 이 모델의 어휘 밖에 있는 토큰 번호입니다") and "0 이상 4095 이하" in msg


def test_prefill_refuses_ids_that_are_not_ints(pair):
    for bad in ([[5, 6.5]], [[5, True]], "5 6", torch.tensor([[5.0, 6.0]])):
        with pytest.raises(TypeError, match=r"^input_ids=.*토큰 번호"):
            decodelab.prefill(pair.target, bad)
    assert decodelab.prefill(pair.target, [[5, 6]]).position == 2  # plain ints still work

"""Notebook 01's build-it task "🛠️ 어텐션 헤드 하나" (issue 43, item 4): the student computes one head's
``softmax(Q K^T / sqrt(d)) V`` from the model's own weight matrices, and
:func:`decodelab.teach.build.check_head_attention` compares it with the model's KV cache and its
forward pass. The check fails on the notebook's scaffold (read from the MyST source), passes on a
reference solution kept here, and rejects a wrong scale, a missing causal mask, a wrong head, a
wrong GQA mapping and a key without RoPE, naming each mistake."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
import torch
import yaml

import decodelab
from decodelab import attention as A
from decodelab.teach import build

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "notebooks" / "src" / "01_decode_phase.md"
MARK = "# 🛠️ 직접 구현하세요"
TASK = "01-task-build-attention"


def _scaffold():
    text = SOURCE.read_text(encoding="utf-8")
    cells = [m.group(1) for m in re.finditer(r"```\{code-cell\}\n(?:---\n.*?\n---\n)?(.*?)```", text, re.S)]
    (cell,) = [c for c in cells if c.lstrip().startswith(MARK) and "def my_head_attention(" in c]
    ns = {"torch": torch, "decodelab": decodelab}
    exec(cell, ns)
    return ns["my_head_attention"]


def _head(inp, head, *, scale=None, causal=True, kv=None, q_head=None, rope_k=True):
    """The reference solution, and (through the keywords) its near misses."""
    d, S = inp.d_head, inp.x.shape[0]
    h = head if q_head is None else q_head
    Q = inp.rope(inp.x @ inp.W_Q[:, h * d:(h + 1) * d])
    kv = h // inp.group if kv is None else kv(h)
    K = inp.x @ inp.W_K[:, kv * d:(kv + 1) * d]
    K = inp.rope(K) if rope_k else K
    V = inp.x @ inp.W_V[:, kv * d:(kv + 1) * d]
    scores = (Q @ K.T) * (1 / math.sqrt(d) if scale is None else scale(d))
    if causal:
        scores = scores.masked_fill(torch.ones(S, S, dtype=torch.bool).triu(1), float("-inf"))
    return torch.softmax(scores, dim=-1) @ V, K, V


def test_the_task_asks_for_every_case_and_the_notebook_checks_it():
    data = yaml.safe_load((REPO / "quizzes" / "exercises" / "01.yaml").read_text(encoding="utf-8"))
    (task,) = [t for t in data["tasks"] if t["id"] == TASK]
    assert task["check"] == {"op": "==", "value": 1.0}
    text = SOURCE.read_text(encoding="utf-8")
    assert "build.check_head_attention(my_head_attention, model, tok)" in text
    assert f'ex.check("{TASK}", score)' in text
    section = text.split("### 🛠️ 직접 만들어 보기: 어텐션 헤드 하나", 1)[1].split("\n## ", 1)[0]
    assert section.count("<summary>힌트") == 2  # hints, folded


def test_the_scaffold_fails_and_says_what_is_left(pair, capsys):
    assert build.check_head_attention(_scaffold(), pair.target, pair.tokenizer) == 0.0
    out = capsys.readouterr().out
    assert "아직 채우지 않은 TODO가 있습니다" in out and "6개 경우 중 0개" in out


def test_the_reference_passes_every_case(pair, capsys):
    assert build.check_head_attention(_head, pair.target, pair.tokenizer) == 1.0
    assert "✅ 어텐션 헤드 하나: 6개 경우 중 6개가 모델의 KV 캐시·출력과 같습니다" in capsys.readouterr().out


@pytest.mark.parametrize("miss, says", [
    (dict(scale=lambda d: 1.0), "√d로 나누지 않았습니다"),
    (dict(scale=lambda d: 1.0 / d), "√d가 아니라 d로 나눴습니다"),
    (dict(causal=False), "인과 마스크가 없습니다"),
    (dict(rope_k=False), "키에 RoPE를 적용하지 않았습니다"),
])
def test_a_near_miss_fails_every_case_and_is_named(pair, capsys, miss, says):
    def fn(inp, head):
        return _head(inp, head, **miss)

    assert build.check_head_attention(fn, pair.target, pair.tokenizer) == 0.0
    out = capsys.readouterr().out
    assert out.count(says) == 3  # the first three failures are printed in full


def test_a_wrong_query_head_fails(pair, capsys):
    # always head 0: right only where the case asks for head 0 (the first case)
    def fn(inp, head):
        return _head(inp, head, q_head=0)

    assert build.check_head_attention(fn, pair.target, pair.tokenizer) == pytest.approx(1 / 6)
    assert "KV 헤드 0의 키입니다" in capsys.readouterr().out


def test_the_gqa_mapping_is_checked_on_the_gqa_model(pair, capsys):
    # kv = head (no GQA): right on the bundled model (group 1), wrong on every GQA case
    def fn(inp, head):
        return _head(inp, head, kv=lambda h: h)

    assert build.check_head_attention(fn, pair.target, pair.tokenizer) == 0.5
    out = capsys.readouterr().out
    assert "KV 헤드 1의 키입니다: 쿼리 헤드는 KV 헤드 head // group = 0를 읽습니다" in out
    # the GQA cases really are GQA, and ask for heads whose KV head differs from the query head
    assert A.attention_shapes(build.gqa_model()).group == 2
    assert all(h // 2 != h for which, _, _, h in build.ATTENTION_CASES if which == "gqa")


def test_wrong_shapes_are_reported_not_raised(pair, capsys):
    def transposed(inp, head):
        out, k, v = _head(inp, head)
        return out.T, k, v

    assert build.check_head_attention(transposed, pair.target, pair.tokenizer) == 0.0
    assert "출력의 모양이" in capsys.readouterr().out


def test_model_attention_is_the_cache_and_the_forward_pass(pair):
    prompt = "모든 국민은 법률 앞에 평등하다"
    ref = A.model_attention(pair.target, pair.tokenizer, prompt, layer=2)
    state = decodelab.prefill(pair.target, A._prompt_ids(pair.target, pair.tokenizer, prompt))
    keys, values = A.cached_kv(state.cache, layer=2)
    assert torch.equal(ref.keys, keys[0].float()) and torch.equal(ref.values, values[0].float())
    for head in range(5):  # the step-by-step head equals the model's own output for that head
        r = A.head_attention(pair.target, pair.tokenizer, prompt, layer=2, head=head)
        torch.testing.assert_close(r.output, ref.outputs[head], atol=1e-5, rtol=1e-5)


def test_layer_inputs_hold_the_models_weights_as_copies(pair):
    inp = A.layer_inputs(pair.target, pair.tokenizer, "헌법은", layer=0)
    attn = pair.target.model.layers[0].self_attn
    assert torch.equal(inp.W_Q, attn.q_proj.weight.T.float()) and torch.equal(inp.W_V, attn.v_proj.weight.T.float())
    before = attn.k_proj.weight.detach().clone()
    inp.W_K.zero_()  # a student's in-place change does not reach the model
    assert torch.equal(attn.k_proj.weight, before)
    with pytest.raises(ValueError, match=r"^rope\(t\): t\.shape=\(99, 64\): .*\(허용: 모양 \(\d+, 64\)"):
        inp.rope(torch.zeros(99, 64))
    with pytest.raises(TypeError, match="텐서가 아닙니다"):
        inp.rope([1.0])

"""decodelab.attention (notebook 01's primer "어텐션: 쿼리, 키, 값"): the sizes read from the real
config files, and one head's weights computed by hand equal transformers' own eager attention
(``output_attentions=True``) for every head of the bundled target model and of a small GQA model."""

from __future__ import annotations

import json

import pytest
import torch
from transformers import AutoModelForCausalLM, LlamaConfig, LlamaForCausalLM

import decodelab
from decodelab import attention as A
from decodelab import profiles
from decodelab._paths import MODELS_DIR

PROMPT = "모든 국민은 법률 앞에 평등하다"


def _config(name: str) -> dict:
    return json.loads((MODELS_DIR / name / "config.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", ["target", "draft"])
def test_shapes_are_the_config_files_numbers(name):
    cfg = _config(name)
    model = decodelab.load_models().target if name == "target" else decodelab.load_models().draft
    s = A.attention_shapes(model)
    assert (s.n_layers, s.d_model, s.n_q_heads, s.n_kv_heads, s.d_head) == (
        cfg["num_hidden_layers"], cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"],
        cfg["head_dim"])
    assert s.group == cfg["num_attention_heads"] // cfg["num_key_value_heads"]


def test_bundled_target_numbers_the_notebook_teaches():
    # notebook 01 and lecturer/01.md quote these: 6 layers, 5 query heads, 5 KV heads (no GQA), 64 per head
    s = A.attention_shapes(decodelab.load_models().target)
    assert (s.n_layers, s.n_q_heads, s.n_kv_heads, s.d_head, s.group) == (6, 5, 5, 64, 1)
    assert s.n_q_heads * s.d_head == s.d_model == 320


def test_llama_3_8b_is_grouped_query_attention():
    # published config.json (presets.csv): 32 query heads, 8 KV heads, head size 128
    s = A.attention_shapes(profiles.get_model("Llama-3-8B"))
    assert (s.n_q_heads, s.n_kv_heads, s.d_head, s.group) == (32, 8, 128, 4)
    assert [s.kv_head_of(h) for h in (0, 3, 4, 7, 8, 31)] == [0, 0, 1, 1, 2, 7]


def _eager(path_or_model):
    return path_or_model if isinstance(path_or_model, torch.nn.Module) else AutoModelForCausalLM.from_pretrained(
        path_or_model, attn_implementation="eager", dtype=torch.float32)


def _assert_every_head_matches(model, eager, tok, prompt):
    s = A.attention_shapes(model)
    ids = A._prompt_ids(model, tok, prompt)
    with torch.no_grad():
        ref = eager(input_ids=ids, output_attentions=True).attentions   # per layer (1, n_q_heads, S, S)
    assert len(ref) == s.n_layers
    for layer in range(s.n_layers):
        for head in range(s.n_q_heads):
            r = A.head_attention(model, tok, prompt, layer=layer, head=head)
            torch.testing.assert_close(r.weights, ref[layer][0, head].float(), atol=2e-6, rtol=1e-5)


def test_every_head_of_the_bundled_target_equals_transformers_attention():
    pair = decodelab.load_models()
    _assert_every_head_matches(pair.target, _eager(MODELS_DIR / "target"), pair.tokenizer, PROMPT)


def test_gqa_heads_read_the_right_kv_head():
    # a small random Llama with 4 query heads sharing 2 KV heads: query heads 0,1 read KV head 0, 2,3 KV head 1
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=50, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, head_dim=8, max_position_embeddings=64)
    cfg._attn_implementation = "eager"
    model = LlamaForCausalLM(cfg).eval()
    s = A.attention_shapes(model)
    assert (s.n_q_heads, s.n_kv_heads, s.group) == (4, 2, 2)
    assert [s.kv_head_of(h) for h in range(4)] == [0, 0, 1, 1]
    _assert_every_head_matches(model, model, None, [3, 17, 5, 42, 8, 11, 29])


def test_weights_are_causal_rows_of_a_softmax():
    pair = decodelab.load_models()
    r = A.head_attention(pair.target, pair.tokenizer, PROMPT, layer=1, head=2)
    n = len(r.token_ids)
    assert r.weights.shape == r.scores.shape == (n, n) and r.query.shape == (n, 64)
    torch.testing.assert_close(r.weights.sum(-1), torch.ones(n))
    assert torch.all(r.weights.triu(1) == 0) and torch.isinf(r.scores.triu(1)[0, 1:]).all()
    assert r.weights[0, 0] == 1.0                   # the first position can only see itself
    torch.testing.assert_close(r.scores, torch.where(r.scores.isinf(), r.scores, r.query @ r.key.T / 8.0))
    torch.testing.assert_close(r.output, r.weights @ r.value)


def test_the_cache_holds_each_kv_heads_key_and_value():
    pair = decodelab.load_models()
    ids = A._prompt_ids(pair.target, pair.tokenizer, PROMPT)
    state = decodelab.prefill(pair.target, ids)
    keys, values = A.cached_kv(state.cache, layer=3)
    assert keys.shape == values.shape == (1, 5, ids.shape[1], 64)
    for head in (0, 4):
        r = A.head_attention(pair.target, pair.tokenizer, PROMPT, layer=3, head=head)
        torch.testing.assert_close(keys[0, r.kv_head], r.key, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(values[0, r.kv_head], r.value, atol=1e-5, rtol=1e-5)


def test_bad_arguments_say_what_to_change():
    pair = decodelab.load_models()
    with pytest.raises(ValueError, match=r"layer=6: 층 번호.*0~5"):
        A.head_attention(pair.target, pair.tokenizer, PROMPT, layer=6)
    with pytest.raises(ValueError, match=r"head=-1: 쿼리 헤드 번호.*0~4"):
        A.head_attention(pair.target, pair.tokenizer, PROMPT, head=-1)
    with pytest.raises(TypeError, match="head="):
        A.head_attention(pair.target, pair.tokenizer, PROMPT, head="0")
    with pytest.raises(ValueError, match="빈 프롬프트"):
        A.head_attention(pair.target, pair.tokenizer, "")
    with pytest.raises(ValueError, match="KV 캐시가 없습니다"):
        A.cached_kv(None)
    with pytest.raises(TypeError, match="어텐션 크기를 읽을 수 없습니다"):
        A.attention_shapes("Llama-3-8B")

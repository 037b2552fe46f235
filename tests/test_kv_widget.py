"""The KV-memory calculator (issue 43, item 4): the formula's one home is
decodelab.latency.kv_cache_bytes (hand-computed bytes here), and the widget of notebooks 01 and 02
shows what it computes for the inputs on screen."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from decodelab import latency as lat
from decodelab import profiles
from decodelab.teach.widgets.kv import KVCalculator, kv_calculator


def test_llama_3_8b_by_hand():
    # published config.json: 32 layers, 8 KV heads, head size 128; BF16 = 2 bytes per value
    assert lat.kv_cache_bytes(32, 8, 128, 2) == 8 * 128 * 32 * 2 * 2 == 131_072
    assert lat.kv_cache_bytes(32, 8, 128, 2, 8192) == 131_072 * 8192 == 2**30  # 1 GiB at 8k
    assert lat.kv_cache_bytes(32, 8, 128, 2, 8192, 4) == 4 * 2**30
    # the bundled target, fp32: 2 x 6 layers x 5 KV heads x 64 x 4 bytes
    assert lat.kv_cache_bytes(6, 5, 64, 4) == 15_360
    np.testing.assert_array_equal(lat.kv_cache_bytes(32, 8, 128, 2, np.array([0, 1, 2])), [0, 131_072, 262_144])


@pytest.mark.parametrize("name", profiles.MODEL_NAMES)
def test_the_profiles_bytes_per_token_is_the_same_formula(name):
    m = profiles.get_model(name)
    assert lat.kv_bytes_per_token(m) == lat.kv_cache_bytes(m.n_layers, m.n_kv_heads, m.d_head, m.kv_bytes_per_value)


@pytest.mark.parametrize("args, kind, says", [
    ((0, 8, 128, 2), ValueError, r"^n_layers=0: 층 수에 맞지 않는 값입니다"),
    ((32, 8.5, 128, 2), ValueError, r"^n_kv_heads=8.5: KV 헤드 수"),
    ((32, 8, "128", 2), TypeError, r"^d_head='128': 헤드 크기"),
    ((32, 8, 128, 0), ValueError, r"^bytes_per_value=0: 값 하나의 바이트 수.*예: BF16이면 2"),
    ((32, 8, 128, 2, -1), ValueError, r"^context_tokens=-1: 맥락"),
    ((32, 8, 128, 2, 1, 0), ValueError, r"^batch=0: 배치 크기"),
])
def test_bad_inputs_say_what_to_change(args, kind, says):
    with pytest.raises(kind, match=says):
        lat.kv_cache_bytes(*args)


def _text(calc: KVCalculator) -> str:
    return calc.result.value


def test_the_default_is_llama_3_8b_and_shows_the_formula():
    calc = kv_calculator().calculator
    assert calc.model.value == "Llama-3-8B"
    assert (calc.kv_heads.value, calc.head_size.value, calc.layers.value, calc.dtype.value) == (8, 128, 32, "bf16")
    assert calc.per_token == 131_072 and calc.total == 2**30
    assert "2 × 32층 × KV 헤드 8개 × 헤드 크기 128 × 2바이트 = <b>131,072 B</b>" in _text(calc)
    assert "× 맥락 8,192 토큰 × 배치 1 = <b>1,073,741,824 B</b> = 1.07 GB (1 GiB)" in _text(calc)


def test_every_input_changes_the_bytes():
    calc = KVCalculator()
    calc.dtype.value = "fp32"
    assert calc.per_token == 262_144 and "× 4바이트" in _text(calc)
    calc.batch.value = 4
    assert calc.total == 262_144 * 8192 * 4
    calc.context.value = 32768
    assert calc.total == 262_144 * 32768 * 4
    calc.layers.value = 16
    assert calc.per_token == 131_072
    calc.head_size.value = 64
    assert calc.per_token == 65_536
    calc.kv_heads.value = 32  # no GQA: as many KV heads as query heads
    assert calc.per_token == 262_144
    assert calc.model.value == KVCalculator.CUSTOM  # the sliders no longer hold a preset's shape


def test_a_preset_fills_the_shape_from_its_config():
    calc = KVCalculator()
    calc.model.value = "Qwen3-32B"  # config.json: 64 layers, 8 KV heads, head size 128
    assert (calc.kv_heads.value, calc.head_size.value, calc.layers.value) == (8, 128, 64)
    assert calc.per_token == 2 * 64 * 8 * 128 * 2 == 262_144 and calc.model.value == "Qwen3-32B"
    calc.model.value = "Llama-3-70B"
    assert calc.per_token == 327_680  # facts/hardware.md's worked example


def test_notebook_01_starts_from_the_bundled_model(pair):
    calc = kv_calculator(pair.target, context_tokens=512, dtype="fp32").calculator
    assert calc.model.value == "bundled-target"
    assert calc.per_token == 15_360 and calc.total == 15_360 * 512
    assert "= <b>15,360 B</b> = 15.4 KB (15 KiB)" in _text(calc) and "= 7.86 MB (7.5 MiB)" in _text(calc)


def test_its_caption_states_where_the_formula_holds():
    box = kv_calculator()
    caption = box.children[-1].value
    assert "GQA" in caption and "MLA" in caption and "config.json" in caption


@pytest.mark.parametrize("kw, kind, says", [
    (dict(batch=0), ValueError, "^batch=0: 배치 크기"),
    (dict(batch=1000), ValueError, "^batch=1000: 배치 크기"),
    (dict(context_tokens=10**7), ValueError, "^context_tokens=10000000"),
    (dict(dtype="fp4"), ValueError, "^dtype='fp4': 계산기가 고를 수 있는 형식이 아닙니다"),
])
def test_bad_starting_values_are_refused(kw, kind, says):
    with pytest.raises(kind, match=says):
        kv_calculator(**kw)
    with pytest.raises(TypeError, match="어텐션 크기를 읽을 수 없습니다"):
        kv_calculator("Llama-3-8B")


def test_the_notebooks_use_it():
    src = Path(__file__).resolve().parents[1] / "notebooks" / "src"
    for nb in ("01_decode_phase.md", "02_prefill_vs_decode.md"):
        assert "from decodelab.teach.widgets.kv import kv_calculator" in (src / nb).read_text(encoding="utf-8")

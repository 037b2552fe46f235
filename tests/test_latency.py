"""decodelab.latency reproduces the worked numbers of facts/hardware.md (to 1%), is monotone
where physics says it must be, and rejects bad input with errors that name the field."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest

from decodelab import latency as L
from decodelab import profiles as P
from decodelab.teach.widgets import latency as W

REL = 0.01  # "match to 1%"


@pytest.fixture(scope="module")
def llama70_fp8():
    return P.get_model("Llama-3-70B", "fp8")


@pytest.fixture(scope="module")
def llama70_bf16():
    return P.get_model("Llama-3-70B", "bf16")


# ------------------------------------------------------------------------------------------
# worked example of facts/hardware.md, Llama-3-70B


def test_llama70_sizes(llama70_fp8, llama70_bf16):
    m = llama70_bf16
    assert (m.n_layers, m.d_model, m.n_q_heads, m.n_kv_heads, m.d_head) == (80, 8192, 64, 8, 128)
    assert m.n_params == pytest.approx(70.6e9, rel=REL)
    assert m.weight_bytes == pytest.approx(141e9, rel=REL)  # "weights 141 GB BF16"
    assert llama70_fp8.weight_bytes == pytest.approx(70.6e9, rel=REL)  # "70.6 GB FP8"
    # FP8 weights keep a BF16 KV cache, as in the facts file's example
    assert llama70_fp8.kv_dtype == "bf16"


def test_kv_bytes_per_token(llama70_fp8, llama70_bf16):
    # 2 * 80 layers * 8 kv heads * 128 * 2 bytes, exactly
    assert L.kv_bytes_per_token(llama70_bf16) == 2 * 80 * 8 * 128 * 2 == 327_680
    assert L.kv_bytes_per_token(llama70_bf16) == pytest.approx(0.33e6, rel=REL)  # "0.33 MB per token"
    assert 8192 * L.kv_bytes_per_token(llama70_fp8) == pytest.approx(2.68e9, rel=REL)  # "2.68 GB at 8k"
    assert L.kv_bytes_per_token(P.get_model("Llama-3-70B", "fp8", kv_dtype="fp8")) == 163_840


def test_decode_one_h100_fp8_8k(llama70_fp8):
    step = L.estimate_decode_step(llama70_fp8, "H100", 8192)
    hand = (70_553_706_496 + 8192 * 327_680) / 3.35e12 * 1e3
    assert step.ms == pytest.approx(hand, rel=1e-9)
    assert step.ms == pytest.approx(22.0, rel=REL)  # "~22 ms per token"
    assert 1e3 / step.ms <= 46  # "(<= 46 tok/s)"
    assert step.bound == "memory" and step.fits is True
    assert L.estimate_decode_step_ms(llama70_fp8, P.get_hardware("H100"), 8192) == step.ms
    assert round(step.ms, 2) == 21.86


def test_decode_tp8_and_rubin(llama70_fp8, llama70_bf16):
    assert L.estimate_decode_step_ms(llama70_bf16, "H100", 8192, n_chips=8) == pytest.approx(5.4, rel=REL)
    assert round(L.estimate_decode_step_ms(llama70_bf16, "H100", 8192, n_chips=8), 2) == 5.37
    assert round(L.estimate_decode_step_ms(llama70_fp8, "Rubin", 0), 2) == 3.21
    # a 141 GB BF16 model does not fit one 80 GB H100, it does fit eight
    assert L.estimate_decode_step(llama70_bf16, "H100", 8192).fits is False
    assert L.estimate_decode_step(llama70_bf16, "H100", 8192, n_chips=8).fits is True
    # "Rubin FP8: 70.6 / 22 ~ 3.2 ms" (weights only, i.e. an empty cache)
    assert L.estimate_decode_step_ms(llama70_fp8, "Rubin", 0) == pytest.approx(3.2, rel=REL)
    # comm_ms is added on top
    assert L.estimate_decode_step_ms(llama70_bf16, "H100", 8192, n_chips=8, comm_ms=1.5) == pytest.approx(
        L.estimate_decode_step_ms(llama70_bf16, "H100", 8192, n_chips=8) + 1.5)


def test_prefill_8k(llama70_fp8):
    flops = L.prefill_flops(llama70_fp8, 8192)
    assert flops == 2 * 70_553_706_496 * 8192 + 2 * 80 * 8192**2 * 8192
    assert flops == pytest.approx(1.25e15, rel=REL)  # "~1.25 PFLOP"
    t = L.estimate_prefill_ms(llama70_fp8, "H100", 8192)
    assert t == pytest.approx(flops / 1979e12 * 1e3, rel=1e-9)
    assert t / 1e3 == pytest.approx(0.63, rel=REL)  # "~0.63 s at 100% MFU"
    assert round(flops / 1e15, 3) == 1.244 and round(t / 1e3, 3) == 0.629
    assert L.estimate_prefill_ms(llama70_fp8, "H100", 8192, mfu=0.5) == pytest.approx(2 * t)  # "~1.3 s at 50%"
    # a one-token "prefill" is memory-bound: about one decode step with an empty cache
    assert L.estimate_prefill_ms(llama70_fp8, "H100", 1) == pytest.approx(
        (70_553_706_496 + 327_680) / 3.35e12 * 1e3, rel=1e-9)


def test_prefill_with_cached_prefix(llama70_fp8):
    # new tokens attending to cached ones add 4 L S S_past a FLOPs
    extra = L.prefill_flops(llama70_fp8, 1000, past_tokens=4000) - L.prefill_flops(llama70_fp8, 1000)
    assert extra == 4 * 80 * 1000 * 4000 * 8192


def test_kv_transfer(llama70_bf16):
    assert L.kv_transfer_ms(llama70_bf16, 8192, "NVLink") == pytest.approx(6.0, rel=REL)  # "~6 ms"
    assert L.kv_transfer_ms(llama70_bf16, 8192, "400G-NIC") == pytest.approx(54.0, rel=REL)  # "~54 ms"
    assert round(L.kv_transfer_ms(llama70_bf16, 8192, "NVLink"), 2) == 5.97
    assert round(L.kv_transfer_ms(llama70_bf16, 8192, "400G-NIC"), 1) == 53.7
    slow = P.get_link("400G-NIC", latency_ms=2.0)
    assert L.kv_transfer_ms(llama70_bf16, 8192, slow) == pytest.approx(
        L.kv_transfer_ms(llama70_bf16, 8192, "400G-NIC") + 2.0)


def test_ridge_points_and_intensity(llama70_fp8, llama70_bf16):
    assert L.ridge_point("H100", "bf16") == pytest.approx(295, rel=REL)
    assert L.ridge_point("H200", "bf16") == pytest.approx(206, rel=REL)
    assert (round(L.ridge_point("H100")), round(L.ridge_point("H200"))) == (295, 206)
    assert L.weight_matmul_intensity(1, 2.0) == 1.0
    assert L.weight_matmul_intensity(64, 1.0) == 128.0
    # batch-1 decode: intensity ~ 2 / bytes_per_param, far below every ridge point
    ai = L.arithmetic_intensity(llama70_bf16, 0, 1)
    assert ai == pytest.approx(1.0, rel=1e-9)
    for name in ("H100", "H200", "B200", "Trainium2", "Trainium3"):
        assert ai < L.ridge_point(name, "bf16")
    # FP8 on H100: ridge 1979/3.35 = 591 FLOP/byte; weight intensity 2B -> crossover near B ~ 295
    assert L.estimate_decode_step(llama70_fp8, "H100", 0, batch=250).bound == "memory"
    assert L.estimate_decode_step(llama70_fp8, "H100", 0, batch=350).bound == "compute"


def test_agent_illustration():
    # 50 steps x 300 output tokens + 2 s tool per step: 400 s at 50 tok/s, 115 s at 1,000 tok/s.
    # Here the prefill pass yields each call's first token, so 299 decode steps per call:
    slow = L.agent_loop(50, 300, 2000.0, decode_ms_per_token=1000 / 50, prefill_tokens_per_s=1e4)
    fast = L.agent_loop(50, 300, 2000.0, decode_ms_per_token=1000 / 1000, prefill_tokens_per_s=1e4)
    assert slow.total_s == pytest.approx(50 * (299 * 0.020 + 2.0))  # 399.0 s
    assert slow.total_s == pytest.approx(400, rel=REL)
    assert fast.total_s == pytest.approx(115, rel=REL)
    # past that, tool time dominates (Amdahl)
    assert fast.totals["tool"] / fast.total_ms > 0.85
    assert slow.depth == 50 and slow.decode_ms.shape == (50,)
    assert slow.totals["prefill"] == 0 and slow.totals["transfer"] == 0


def test_agent_breakdown_profile_mode(llama70_fp8):
    sched = dict(initial_context_tokens=2000, context_growth_per_call=700, prefix_caching=False)
    rates = L.agent_rates(llama70_fp8, "H100", 4, 100, **sched)
    r = L.agent_loop(4, 100, 500.0, **rates.kwargs, **sched)
    np.testing.assert_array_equal(r.context_tokens, [2000, 2700, 3400, 4100])
    np.testing.assert_array_equal(r.prefill_tokens, r.context_tokens)
    assert r.prefill_ms[2] == pytest.approx(L.estimate_prefill_ms(llama70_fp8, "H100", 3400))
    # decode: 99 steps at contexts 3401..3499 (linear in context -> the midpoint gives the mean)
    assert r.decode_ms[2] == pytest.approx(99 * L.estimate_decode_step_ms(llama70_fp8, "H100", 3450), rel=1e-9)
    assert np.all(np.diff(r.prefill_ms) > 0)  # context grows -> prefill grows
    np.testing.assert_array_equal(r.tool_ms, 500.0)
    assert r.total_ms == pytest.approx(r.call_ms.sum())

    sched = dict(initial_context_tokens=2000, context_growth_per_call=700)
    cached = L.agent_loop(4, 100, 500.0, **L.agent_rates(llama70_fp8, "H100", 4, 100, **sched).kwargs, **sched)
    np.testing.assert_array_equal(cached.prefill_tokens, [2000, 700, 700, 700])
    assert cached.prefill_ms[3] == pytest.approx(L.estimate_prefill_ms(llama70_fp8, "H100", 700, past_tokens=3400))
    assert cached.totals["prefill"] < r.totals["prefill"]


def test_agent_disaggregated_transfer(llama70_fp8):
    sched = dict(initial_context_tokens=8192, context_growth_per_call=1000)
    rates = L.agent_rates(llama70_fp8, "H100", 3, 50, decode_hardware="H200", link="400G-NIC", **sched)
    r = L.agent_loop(3, 50, 0.0, **rates.kwargs, **sched)
    assert r.transfer_ms[0] == pytest.approx(L.kv_transfer_ms(llama70_fp8, 8192, "400G-NIC"))
    assert r.transfer_ms[1] == pytest.approx(L.kv_transfer_ms(llama70_fp8, 1000, "400G-NIC"))
    assert r.tpot_ms[0] == pytest.approx(L.estimate_tpot_ms(llama70_fp8, "H200", 8192, 50), rel=1e-9)


def test_disaggregated_and_e2e(llama70_fp8):
    d = L.disaggregated(llama70_fp8, "H100", "H200", "NVLink", 8192, 200)
    assert d.ttft_ms == pytest.approx(d.prefill_ms + L.kv_transfer_ms(llama70_fp8, 8192, "NVLink"))
    assert d.e2e_ms == pytest.approx(d.ttft_ms + 199 * d.tpot_ms)
    same = L.disaggregated(llama70_fp8, "H100", "H100", "NVLink", 8192, 200)
    assert same.e2e_ms == pytest.approx(same.colocated_e2e_ms + same.transfer_ms)
    e2e = L.estimate_e2e_ms(llama70_fp8, "H100", 8192, 200)
    assert e2e == pytest.approx(same.colocated_e2e_ms)
    assert L.estimate_ttft_ms(llama70_fp8, "H100", 8192, queue_ms=5) == pytest.approx(L.estimate_prefill_ms(llama70_fp8, "H100", 8192) + 5)


def test_layer_split(llama70_fp8):
    r = L.layer_split_decode_ms(llama70_fp8, "Rubin", "Groq3-LPX", 8192)
    assert r["gpu_attention_ms"] == pytest.approx(8192 * 327_680 / 22e12 * 1e3)
    assert r["lpu_weights_ms"] == pytest.approx(70_553_706_496 / (40e15 / 256) * 1e3)
    assert r["total_ms"] == pytest.approx(r["gpu_attention_ms"] + r["lpu_weights_ms"])
    ideal = L.layer_split_decode_ms(llama70_fp8, "Rubin", "Groq3-LPX", 8192, lpu_parallel="ideal")
    assert ideal["lpu_weights_ms"] == pytest.approx(r["lpu_weights_ms"] / 256)
    hops = L.layer_split_decode_ms(llama70_fp8, "Rubin", "Groq3-LPX", 8192, hop_ms=0.001)
    assert hops["total_ms"] == pytest.approx(r["total_ms"] + 2 * 80 * 0.001)
    assert r["lpu_fits"] is True
    assert L.layer_split_decode_ms(P.get_model("Llama-3-70B"), lpu="Groq3-LPX")["lpu_fits"] is False


def test_speculative_speedup():
    # Leviathan et al.: alpha 0.75, gamma 7, c 0.02
    expected = (1 - 0.75**8) / ((1 - 0.75) * (7 * 0.02 + 1))
    assert L.expected_speedup(0.75, 7, 0.02) == pytest.approx(expected)
    assert L.expected_speedup(0.75, 7, 0.02) == pytest.approx(3.157, rel=1e-3)
    assert L.expected_speedup(1.0, 4, 0.0) == 5.0
    assert L.expected_speedup(0.0, 3, 0.1) == pytest.approx(1 / 1.3)  # nothing accepted: slower
    base = L.agent_loop(10, 200, 1000.0, decode_ms_per_token=20.0, prefill_tokens_per_s=1e4)
    spec = L.agent_loop(10, 200, 1000.0, decode_ms_per_token=20.0, prefill_tokens_per_s=1e4,
                        speculative=L.SpeculativeConfig(0.75, 7, 0.02))
    assert spec.totals["decode"] == pytest.approx(base.totals["decode"] / expected)
    assert spec.totals["tool"] == base.totals["tool"] and spec.totals["prefill"] == base.totals["prefill"]


# ------------------------------------------------------------------------------------------
# profiles


def _numel(config) -> int:
    torch = pytest.importorskip("torch")
    from transformers import AutoModelForCausalLM

    with torch.device("meta"):  # shapes only, no memory
        model = AutoModelForCausalLM.from_config(config)
    return sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize("name", ["Llama-3-8B", "Llama-3-70B", "Qwen3-32B", "Qwen3-0.6B", "bundled-target", "bundled-draft"])
def test_param_count_equals_transformers(name):
    from transformers import LlamaConfig, Qwen3Config

    c = dict(P._model_config(name))
    cls = Qwen3Config if c.get("model_type") == "qwen3" else LlamaConfig
    keys = ("vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
            "num_key_value_heads", "head_dim", "tie_word_embeddings")
    config = cls(**{k: c[k] for k in keys if k in c})
    assert P.get_model(name).n_params == _numel(config)
    # a PretrainedConfig is accepted as well as a dict
    assert P.model_from_config(config).n_params == P.get_model(name).n_params


def test_published_sizes():
    assert P.get_model("Llama-3-8B").n_params == pytest.approx(8.03e9, rel=REL)
    assert P.get_model("Qwen3-32B").n_params == pytest.approx(32.8e9, rel=REL)
    assert P.get_model("Qwen3-0.6B").n_params == pytest.approx(0.6e9, rel=REL)
    assert P.get_model("qwen3-0.6b").name == "Qwen3-0.6B"  # case-insensitive


def test_bundled_config_read_at_call_time(tmp_path, monkeypatch):
    for which in ("target", "draft"):
        c = P._model_config(f"bundled-{which}")
        c["num_hidden_layers"] = 1
        (tmp_path / which).mkdir()
        (tmp_path / which / "config.json").write_text(json.dumps(c))
    before = P.get_model("bundled-target", "fp32")
    monkeypatch.setattr(P, "MODELS_DIR", tmp_path)
    after = P.get_model("bundled-target", "fp32")
    assert after.n_layers == 1 and after.n_params < before.n_params
    assert before.weight_bytes == 4 * before.n_params


def test_dtypes_and_hardware_formats():
    m = P.get_model("Llama-3-8B", "fp4")
    assert m.bytes_per_param == 0.5 and m.kv_dtype == "bf16"
    assert P.get_model("Llama-3-8B", "bfloat16").dtype == "bf16"
    assert L.estimate_decode_step_ms(m, "B200", 0) == pytest.approx(m.n_params * 0.5 / 7.7e12 * 1e3)
    with pytest.raises(ValueError, match="dtype.*fp8"):
        L.estimate_prefill_ms(m, "H100", 100)  # H100 has no FP4 figure: the message lists what it has


def test_hardware_presets_and_aliases():
    for name in P.HARDWARE_NAMES:
        if name == "this-computer":
            continue
        hw = P.get_hardware(name)
        assert hw.source.startswith("facts/hardware.md")
        assert hw.bandwidth > 0 and hw.memory_bytes > 0
    assert P.get_hardware("h100 sxm").bandwidth == 3.35e12
    assert P.get_hardware("groq3_lpx").n_chips == 256
    assert P.get_hardware("TRN2").memory_bytes == 96 * 2**30
    assert P.get_hardware("Rubin").notes  # its dense FLOP/s are an assumption, and say so
    assert P.get_hardware("H100").flops["bf16"] == 989e12  # dense, not the sparse 1,979


def test_measure_this_computer_is_cached_and_positive(monkeypatch):
    monkeypatch.setattr(P, "_THIS_COMPUTER", {})  # restored after the test
    hw = P.measure_this_computer(refresh=True, copy_mib=8, matmul_n=128)
    assert hw.bandwidth > 1e8 and hw.flops["fp32"] > 1e7  # any computer beats 100 MB/s, 10 MFLOP/s
    assert P.measure_this_computer(copy_mib=8, matmul_n=128) is hw  # same arguments: cached
    assert hw.source.startswith("measured on this computer")
    assert "8 MiB" in hw.source and "128x128" in hw.source


def test_measure_this_computer_cache_is_keyed_on_arguments(monkeypatch):
    monkeypatch.setattr(P, "_THIS_COMPUTER", {})
    small = P.measure_this_computer(copy_mib=8, matmul_n=128)
    # new sizes measure again (the old cache returned the 8 MiB result here)
    other = P.measure_this_computer(copy_mib=4, matmul_n=64)
    assert other is not small
    assert "4 MiB" in other.source and "64x64" in other.source
    assert P.measure_this_computer(copy_mib=8, matmul_n=128) is small
    again = P.measure_this_computer(refresh=True, copy_mib=8, matmul_n=128)
    assert again is not small and P.measure_this_computer(copy_mib=8, matmul_n=128) is again
    # get_hardware("this-computer") is the measurement with the default sizes (128 MiB, 1024)
    monkeypatch.setitem(P._THIS_COMPUTER, (128, 1024), small)  # stand-in, so no 128 MiB copy runs here
    assert P.get_hardware("this-computer") is small
    for bad in ({"copy_mib": 0}, {"matmul_n": -1}, {"copy_mib": 1.5}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            P.measure_this_computer(**bad)


# ------------------------------------------------------------------------------------------
# monotonicity


def test_monotone_in_depth_tokens_tool_and_speed(llama70_fp8):
    def total(**kw):
        args = dict(depth=10, output_tokens_per_call=200, tool_ms_per_call=1000.0, decode_ms_per_token=10.0,
                    prefill_tokens_per_s=5000.0, initial_context_tokens=3000, context_growth_per_call=500)
        args.update(kw)
        return L.agent_loop(args.pop("depth"), args.pop("output_tokens_per_call"), args.pop("tool_ms_per_call"),
                            **args).total_ms

    for key, values in {"depth": [0, 1, 2, 5, 20, 60], "output_tokens_per_call": [1, 2, 50, 300, 2000],
                        "tool_ms_per_call": [0.0, 1.0, 500.0, 5000.0], "decode_ms_per_token": [0.0, 1.0, 10.0, 50.0],
                        "context_growth_per_call": [0, 100, 2000]}.items():
        totals = [total(**{key: v}) for v in values]
        assert all(a <= b for a, b in zip(totals, totals[1:])), (key, totals)
    rates = [total(prefill_tokens_per_s=r) for r in (100.0, 1000.0, 1e4, math.inf)]
    assert all(a >= b for a, b in zip(rates, rates[1:]))
    assert total(depth=0) == 0.0


def test_slower_hardware_never_lowers_total(llama70_fp8):
    hw = P.get_hardware("H200")
    prev = -1.0
    for scale in (4.0, 2.0, 1.0, 0.5, 0.25):  # from fast to slow
        slower = dataclasses.replace(hw, bandwidth=hw.bandwidth * scale,
                                     flops={k: v * scale for k, v in hw.flops.items()})
        sched = dict(initial_context_tokens=4000, context_growth_per_call=500)
        t = L.agent_loop(5, 100, 100.0, **L.agent_rates(llama70_fp8, slower, 5, 100, **sched).kwargs, **sched).total_ms
        assert t >= prev
        prev = t
    for n in (1, 8, 64, 512):  # deeper into each preset's range
        times = [L.estimate_decode_step_ms(llama70_fp8, dataclasses.replace(hw, bandwidth=hw.bandwidth * s), 1000, n)
                 for s in (2.0, 1.0, 0.5)]
        assert times == sorted(times)
    ctx = np.array([0, 1000, 8000, 32000])
    assert np.all(np.diff(L.estimate_decode_step_ms(llama70_fp8, "H100", ctx)) > 0)
    assert np.all(np.diff(L.estimate_prefill_ms(llama70_fp8, "H100", ctx)) >= 0)


# ------------------------------------------------------------------------------------------
# errors name the field


@pytest.mark.parametrize("bw", [0, -3.35e12, float("nan"), float("inf")])
def test_bad_bandwidth(bw):
    with pytest.raises(ValueError, match="bandwidth") as e:
        P.Hardware("x", 80e9, bw, {"bf16": 1e15}, source="test")
    assert "대역폭" in str(e.value)
    with pytest.raises(ValueError, match="bandwidth"):
        P.Link("x", bw)


def test_bad_depth_and_counts():
    with pytest.raises(ValueError, match="depth") as e:
        L.agent_loop(-1, 100, 0.0, decode_ms_per_token=1.0, prefill_tokens_per_s=1.0)
    assert "깊이" in str(e.value)
    with pytest.raises(ValueError, match="output_tokens_per_call"):
        L.agent_loop(3, 0, 0.0, decode_ms_per_token=1.0, prefill_tokens_per_s=1.0)
    with pytest.raises(ValueError, match="tool_ms_per_call"):
        L.agent_loop(3, 10, -1.0, decode_ms_per_token=1.0, prefill_tokens_per_s=1.0)
    with pytest.raises(ValueError, match="prefill_tokens_per_s"):
        L.agent_loop(3, 10, 0.0, decode_ms_per_token=1.0, prefill_tokens_per_s=0)
    with pytest.raises(TypeError, match="decode_ms_per_token"):
        L.agent_loop(3, 10, 0.0, prefill_tokens_per_s=1.0)  # a rate is missing
    with pytest.raises(ValueError, match="batch"):
        L.estimate_decode_step_ms(P.get_model("Llama-3-8B"), "H100", 100, batch=0)
    with pytest.raises(ValueError, match="context_tokens"):
        L.estimate_decode_step_ms(P.get_model("Llama-3-8B"), "H100", -5)
    with pytest.raises(ValueError, match="mfu"):
        L.estimate_prefill_ms(P.get_model("Llama-3-8B"), "H100", 100, mfu=1.5)
    with pytest.raises(ValueError, match="alpha"):
        L.SpeculativeConfig(alpha=1.2)
    with pytest.raises(ValueError, match="gamma"):
        L.expected_speedup(0.5, 0, 0.1)


_ARRAY_CTX = np.array([0.0, 1000.0, 8000.0])


@pytest.mark.parametrize("kwargs, field", [
    ({"comm_ms": -5.0}, "comm_ms"),
    ({"mfu": 2.0}, "mfu"),
    ({"mbu": 0.0}, "mbu"),
    ({"mbu": 1.5}, "mbu"),
    ({"n_chips": 0}, "n_chips"),
    ({"n_chips": 1.5}, "n_chips"),
    ({"batch": 0}, "batch"),
])
def test_array_inputs_are_validated(kwargs, field):
    # arrays of contexts took a separate path that skipped these checks (negative TPOT, inf, ...)
    m = P.get_model("Llama-3-8B")
    for scalar_or_array in (1000, _ARRAY_CTX):
        with pytest.raises(ValueError, match=field):
            L.estimate_decode_step_ms(m, "H100", scalar_or_array, **kwargs)
    with pytest.raises(ValueError, match=field):
        L.estimate_tpot_ms(m, "H100", 1000, 50, **kwargs)  # 49 steps: an array of contexts inside
    with pytest.raises(ValueError, match=field):
        L.estimate_tpot_ms(m, "H100", 1000, 1, **kwargs)  # one token: the scalar path
    with pytest.raises(ValueError, match=field):
        L.estimate_e2e_ms(m, "H100", 1000, 50, **kwargs)


def test_array_input_errors_in_other_entry_points():
    m = P.get_model("Llama-3-8B")
    with pytest.raises(ValueError, match="context_tokens"):
        L.estimate_decode_step_ms(m, "H100", np.array([100.0, -1.0]))
    with pytest.raises(ValueError, match="prompt_tokens"):
        L.estimate_prefill_ms(m, "H100", np.array([100.0, np.nan]))
    with pytest.raises(ValueError, match="mfu"):
        L.estimate_prefill_ms(m, "H100", _ARRAY_CTX, mfu=2.0)
    with pytest.raises(ValueError, match="n_chips"):
        L.estimate_prefill_ms(m, "H100", _ARRAY_CTX, n_chips=1.5)
    with pytest.raises(ValueError, match="tokens"):
        L.kv_transfer_ms(m, np.array([10.0, -10.0]), "NVLink")
    with pytest.raises(ValueError, match="decode_chips"):
        L.disaggregated(m, "H100", "H200", "NVLink", 1000, 50, decode_chips=0)
    with pytest.raises(ValueError, match="prefill_chips"):
        L.disaggregated(m, "H100", "H200", "NVLink", 1000, 50, prefill_chips=1.5)
    with pytest.raises(ValueError, match="mfu"):
        L.disaggregated(m, "H100", "H200", "NVLink", 1000, 50, mfu=0)
    # agent_rates checks mfu even when no call prefills anything (an empty context)
    with pytest.raises(ValueError, match="mfu"):
        L.agent_rates(m, "H100", 3, 10, mfu=0.0)
    # a whole array where one number is expected is the wrong type: a TypeError naming the field
    with pytest.raises(TypeError, match="prompt_tokens"):
        L.disaggregated(m, "H100", "H200", "NVLink", _ARRAY_CTX, 50)
    with pytest.raises(TypeError, match="context_tokens"):
        L.chips_needed(m, "H100", _ARRAY_CTX)


def test_unknown_names():
    with pytest.raises(ValueError, match="hardware") as e:
        P.get_hardware("H300")
    assert "H100" in str(e.value) and "Trainium3" in str(e.value)  # lists the allowed names
    with pytest.raises(ValueError, match="model") as e:
        P.get_model("GPT-5")
    assert "Llama-3-70B" in str(e.value)
    with pytest.raises(ValueError, match="dtype") as e:
        P.get_model("Llama-3-70B", "int3")
    assert "fp8" in str(e.value) and "bf16" in str(e.value)
    with pytest.raises(ValueError, match="link"):
        P.get_link("carrier pigeon")
    with pytest.raises(ValueError, match="lpu_parallel"):
        L.layer_split_decode_ms(P.get_model("Llama-3-8B"), lpu_parallel="magic")
    with pytest.raises(ValueError, match="num_hidden_layers"):
        P.model_from_config({"hidden_size": 8, "num_attention_heads": 1, "intermediate_size": 8, "vocab_size": 8})


def test_rate_presets_are_sourced():
    presets = W.rate_presets()
    labels = [p.label for p in presets]
    assert any("H100" in x for x in labels) and any("LPX" in x for x in labels)
    for p in presets:
        assert p.source and p.decode_ms_per_token > 0
    h100 = next(p for p in presets if "H100" in p.label)
    assert h100.decode_ms_per_token == pytest.approx(L.estimate_decode_step_ms(P.get_model("Llama-3-70B", "fp8"), "H100", 8192))
    lpx = next(p for p in presets if "LPX" in p.label)
    assert lpx.decode_ms_per_token == 1.0  # "approach 1,000 tokens per second per user"


def test_amdahl_and_chips_needed(llama70_fp8):
    assert L.amdahl_speedup(0.75, math.inf) == pytest.approx(4.0)
    assert L.amdahl_speedup(0.5, 2.0) == pytest.approx(1 / (0.5 + 0.25))
    assert L.amdahl_speedup(0.0, 100.0) == 1.0
    with pytest.raises(ValueError, match="fraction"):
        L.amdahl_speedup(1.5, 2.0)
    # 70.6 GB of FP8 weights in 500 MB SRAM chips: ceil(70.55 / 0.5) = 142; one 80 GB H100
    assert L.chips_needed(llama70_fp8, "Groq3-LPU") == 142
    assert L.chips_needed(llama70_fp8, "H100") == 1
    assert L.chips_needed(P.get_model("Llama-3-70B"), "H100") == 2


# ------------------------------------------------------------------------------------------
# measuring the bundled model (decodelab.latency_measure, uses torch)


def test_measure_helpers(pair):
    import torch

    from decodelab import latency_measure as M

    ids = M.prompt_ids(pair.tokenizer, 37)
    assert ids.shape == (1, 37) and ids.dtype == torch.long
    threads = torch.get_num_threads()
    t = M.measure_ttft(pair.target, pair.tokenizer, (4, 16), repeats=2, warmup=0)
    assert t["prompt_tokens"] == [4, 16] and len(t["ttft_ms"]) == 2 and all(v > 0 for v in t["ttft_ms"])
    assert [len(a) for a in t["all_ms"]] == [2, 2]
    p = M.measure_tpot(pair.target, pair.tokenizer, (2, 5), prompt_tokens=8, repeats=1, warmup=0)
    assert p["position"] == [8, 9, 10, 11]  # 4 decode steps after an 8-token prompt
    assert p["tpot_ms"][0] == pytest.approx(p["step_ms"][0])
    assert p["tpot_ms"][1] == pytest.approx(sum(p["step_ms"][:4]) / 4)
    assert torch.get_num_threads() == threads  # restored
    assert M.fit_line([1, 2, 3], [5.0, 7.0, 9.0]) == pytest.approx((3.0, 2.0))
    with pytest.raises(ValueError, match="prompt_lengths"):
        M.measure_ttft(pair.target, pair.tokenizer, (0, 10))
    with pytest.raises(ValueError, match="output_lengths"):
        M.measure_tpot(pair.target, pair.tokenizer, (1, 4))
    with pytest.raises(ValueError, match="output_lengths"):
        M.measure_tpot(pair.target, pair.tokenizer, (10_000,))
    with pytest.raises(ValueError, match="n_tokens"):
        M.prompt_ids(pair.tokenizer, 0)
    with pytest.raises(ValueError, match="prompt_tokens"):
        M.measure_tpot(pair.target, pair.tokenizer, (2, 4), prompt_tokens=0)


def test_profiles_and_latency_import_without_torch():
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = str(Path(L.__file__).resolve().parents[1])  # this checkout's decodelab, not an installed one
    code = (
        "import sys\n"
        "import decodelab.profiles, decodelab.latency as lat\n"
        "m = decodelab.profiles.get_model('Llama-3-70B', 'fp8')\n"
        "assert round(lat.estimate_decode_step_ms(m, 'H100', 8192), 1) == 21.9\n"
        f"assert decodelab.__file__.startswith({root!r})\n"
        "bad = sorted(k for k in sys.modules if k.split('.')[0] in ('torch', 'transformers'))\n"
        "assert not bad, bad\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60, env=env)


# ------------------------------------------------------------------------------------------
# one roofline core: every estimate is the core, on numbers and arrays alike


def test_roofline_core_and_estimates_agree_on_arrays_and_scalars(llama70_fp8):
    m, hw = llama70_fp8, P.get_hardware("H100")
    ctx = np.array([0.0, 1.0, 1000.0, 8192.0, 32000.0])
    kw = dict(n_chips=2, mfu=0.5, mbu=0.8)
    # decode step: 1 new token per sequence, its query meets the S cached keys, S tokens of KV read
    core = L.roofline(m, hw, 1.0, ctx, ctx, 4, **kw)
    step = L.estimate_decode_step(m, hw, ctx, 4, comm_ms=0.25, **kw)
    np.testing.assert_array_equal(step.ms, core.ms + 0.25)
    np.testing.assert_array_equal(step.bytes, core.bytes)
    np.testing.assert_array_equal(step.flops, core.flops)
    np.testing.assert_array_equal(L.estimate_decode_step_ms(m, hw, ctx, 4, comm_ms=0.25, **kw), step.ms)
    # prefill: S new tokens, S^2 / 2 + S S_past query-key pairs, S tokens of KV written
    pre_core = L.roofline(m, hw, ctx, ctx**2 / 2 + ctx * 100, ctx, **kw)
    pre = L.estimate_prefill_ms(m, hw, ctx, past_tokens=100, **kw)
    np.testing.assert_array_equal(pre, pre_core.ms)
    np.testing.assert_array_equal(L.prefill_flops(m, ctx, 100), pre_core.flops)
    ai = L.arithmetic_intensity(m, ctx, 8)
    core8 = L.roofline(m, hw, 1.0, ctx, ctx, 8)
    np.testing.assert_array_equal(ai, core8.flops / core8.bytes)
    split = L.layer_split_decode_ms(m, "Rubin", "Groq3-LPX", ctx)
    np.testing.assert_array_equal(split["gpu_attention_ms"],
                                  L.roofline(m, P.get_hardware("Rubin"), 1.0, ctx, ctx).kv_bytes / 22e12 * 1e3)
    # each entry of an array answer is the scalar answer, exactly
    for i, s in enumerate(ctx):
        one = L.estimate_decode_step(m, hw, s, 4, comm_ms=0.25, **kw)
        assert isinstance(one.ms, float) and isinstance(one.bound, str) and isinstance(one.fits, bool)
        assert (one.ms, one.bytes, one.flops, one.bound, one.fits) == (
            step.ms[i], step.bytes[i], step.flops[i], step.bound[i], step.fits[i])
        assert L.estimate_decode_step_ms(m, hw, int(s), 4, comm_ms=0.25, **kw) == step.ms[i]
        assert L.estimate_prefill_ms(m, hw, int(s), past_tokens=100, **kw) == pre[i]
        assert L.arithmetic_intensity(m, s, 8) == ai[i]
        assert L.layer_split_decode_ms(m, "Rubin", "Groq3-LPX", s)["total_ms"] == split["total_ms"][i]
        assert L.chips_needed(m, "Groq3-LPU", s, 8) == math.ceil(core8.bytes[i] / 500e6)
    # TPOT is the mean of the core's decode steps; E2E = TTFT + (n - 1) TPOT; both take arrays
    prompts = np.array([100, 8192])
    tpot = L.estimate_tpot_ms(m, hw, prompts, 50, 2, **kw)
    e2e = L.estimate_e2e_ms(m, hw, prompts, 50, 2, **kw)
    for i, p in enumerate(prompts):
        steps = L.roofline(m, hw, 1.0, p + np.arange(1, 50), p + np.arange(1, 50), 2, **kw).ms
        assert tpot[i] == L.estimate_tpot_ms(m, hw, int(p), 50, 2, **kw) == pytest.approx(steps.mean(), rel=1e-15)
        assert e2e[i] == pytest.approx(L.estimate_ttft_ms(m, hw, int(p), **kw) + 49 * tpot[i], rel=1e-15)


def test_one_home_per_name():
    # no shims: the old names are gone, and latency does not re-export the profiles
    for gone in ("prefill_ms", "decode_step", "decode_step_ms", "ttft_ms", "tpot_ms", "e2e_ms",
                 "speculative_speedup", "rate_presets", "RatePreset", "get_model", "measure_this_computer"):
        assert not hasattr(L, gone), gone
    assert not set(L.__all__) & set(P.__all__)  # latency's names are its own
    import decodelab
    from decodelab import speculative
    assert decodelab.expected_speedup is L.expected_speedup
    assert not hasattr(speculative, "expected_speedup")
    with pytest.raises(TypeError, match="model"):
        L.agent_loop(3, 300, 2000.0, model=P.get_model("Llama-3-70B", "fp8"), hardware="H100")


def test_agent_rates_feed_agent_loop(llama70_fp8):
    sched = dict(initial_context_tokens=4000, context_growth_per_call=1000)
    loop = L.agent_loop(3, 300, 2000.0, **L.agent_rates(llama70_fp8, "H100", 3, 300, **sched).kwargs, **sched)
    # 299 decode steps per call at TPOT = mean step from context 4,001 to 4,299 (call 0)
    assert loop.decode_ms[0] == pytest.approx(299 * L.estimate_tpot_ms(llama70_fp8, "H100", 4000, 300), rel=1e-12)
    assert loop.prefill_ms[1] == pytest.approx(L.estimate_prefill_ms(llama70_fp8, "H100", 1000, past_tokens=4000))


def test_agent_loop_takes_per_call_arrays():
    tpot = np.array([10.0, 20.0, 30.0])
    r = L.agent_loop(3, 11, np.array([0.0, 100.0, 200.0]), decode_ms_per_token=tpot, prefill_tokens_per_s=1e3,
                     transfer_ms_per_call=np.array([1.0, 2.0, 3.0]), initial_context_tokens=500,
                     context_growth_per_call=100)
    np.testing.assert_array_equal(r.decode_ms, [100.0, 200.0, 300.0])
    np.testing.assert_array_equal(r.prefill_ms, [500.0, 100.0, 100.0])
    np.testing.assert_array_equal(r.call_ms, [601.0, 402.0, 603.0])
    with pytest.raises(ValueError, match=r"decode_ms_per_token=array\(2,\).*\(3,\)"):
        L.agent_loop(3, 11, 0.0, decode_ms_per_token=[1.0, 2.0], prefill_tokens_per_s=1e3)
    with pytest.raises(ValueError, match="prefill_tokens_per_s"):
        L.agent_loop(3, 11, 0.0, decode_ms_per_token=1.0, prefill_tokens_per_s=[1e3, 0.0, 1e3])


def test_agent_rates_per_call(llama70_fp8):
    rates = L.agent_rates(llama70_fp8, "H100", 3, 50, initial_context_tokens=8192, context_growth_per_call=1000,
                          decode_hardware="H200", link="NVLink")
    assert rates.decode_ms_per_token.shape == rates.prefill_tokens_per_s.shape == (3,)
    assert rates.decode_ms_per_token[2] == L.estimate_tpot_ms(llama70_fp8, "H200", 10192, 50)
    assert rates.prefill_tokens_per_s[1] == pytest.approx(
        1000 / L.estimate_prefill_ms(llama70_fp8, "H100", 1000, past_tokens=8192) * 1e3)
    assert rates.transfer_ms_per_call[0] == L.kv_transfer_ms(llama70_fp8, 8192, "NVLink")
    empty = L.agent_rates(llama70_fp8, "H100", 2, 10)  # nothing to prefill: infinitely fast, zero time
    assert np.all(np.isinf(empty.prefill_tokens_per_s))
    assert L.agent_loop(2, 10, 0.0, **empty.kwargs).totals["prefill"] == 0.0
    none = L.agent_rates(llama70_fp8, "H100", 0, 10, link="NVLink")  # a loop of no calls
    assert L.agent_loop(0, 10, 0.0, **none.kwargs).total_ms == 0.0


def test_speculative_formulas_defined_once_and_vectorised():
    assert L.expected_tokens_per_call(0.75, 7) == pytest.approx((1 - 0.75**8) / 0.25)
    assert round(L.expected_tokens_per_call(0.75, 7), 2) == 3.60
    alphas = np.array([0.0, 0.5, 0.75, 1.0])
    np.testing.assert_array_equal(L.expected_tokens_per_call(alphas, 4),
                                  [L.expected_tokens_per_call(float(a), 4) for a in alphas])
    np.testing.assert_allclose(L.expected_speedup(0.75, np.array([1, 7]), 0.02),
                               [1.75 / 1.02, (1 - 0.75**8) / 0.25 / 1.14])
    assert L.optimal_gamma(0.8, 0.02) == max(range(1, 17), key=lambda g: (L.expected_speedup(0.8, g, 0.02), -g))
    assert L.SpeculativeConfig(0.75, 7, 0.02).speedup == L.expected_speedup(0.75, 7, 0.02)
    with pytest.raises(ValueError, match="max_gamma"):
        L.optimal_gamma(0.5, 0.1, max_gamma=0)


# ------------------------------------------------------------------------------------------
# presets table, assumptions, error shape


def test_presets_table_has_a_source_per_row():
    import csv

    lines = [x for x in P._PRESETS_CSV.read_text(encoding="utf-8").splitlines() if not x.startswith("#")]
    rows = list(csv.DictReader(lines))
    assert {r["kind"] for r in rows} == {"hardware", "link", "model"} and len(rows) == 18
    for r in rows:
        assert r["source"].strip(), r["key"]
        if r["kind"] != "model":
            assert r["source"].startswith("facts/hardware.md"), r["key"]
    facts = (Path(__file__).resolve().parents[1] / "facts" / "hardware.md").read_text(encoding="utf-8")
    for row in ("H100 SXM", "H200", "B200 (HGX)", "Rubin", "Groq 3 LPU (LP30)", "AWS Trainium2", "AWS Trainium3"):
        assert f"| {row} |" in facts  # each cited row exists in the facts file


def test_unpublished_figures_are_labelled_assumptions():
    rubin = P.get_hardware("Rubin")
    # no source publishes a dense BF16 / FP8 figure for Rubin: ours is an assumption, and says so
    assert {"bf16", "fp16", "fp8"} <= rubin.assumed
    assert rubin.notes.startswith("가정(assumption)") and "공개되지 않았습니다" in rubin.notes
    assert (rubin.memory_bytes, rubin.bandwidth) == (288e9, 22e12)  # these are published
    assert P.get_hardware("H100").assumed == frozenset() and not P.get_hardware("H100").notes
    assert "bf16" in P.get_hardware("Groq3-LPU").assumed and "fp8" not in P.get_hardware("Groq3-LPU").assumed
    presets = {p.label: p for p in W.rate_presets()}
    assert "가정(assumption)" in presets["Rubin (루프라인)"].source
    assert "가정(assumption)" in presets["Rubin + Groq 3 LPX (NVIDIA 주장)"].source
    assert "가정" not in presets["H100 SXM (루프라인)"].source


@pytest.mark.parametrize("call, field", [
    (lambda m: L.estimate_decode_step_ms(m, "H100", "8192"), "context_tokens"),
    (lambda m: L.estimate_decode_step_ms(m, "H100", 100, batch=True), "batch"),
    (lambda m: L.estimate_prefill_ms(m, "H100", None), "prompt_tokens"),
    (lambda m: L.estimate_prefill_ms(m, "H100", 100, mfu="0.5"), "mfu"),
    (lambda m: L.agent_loop(3, 10, "2s", decode_ms_per_token=1.0, prefill_tokens_per_s=1.0), "tool_ms_per_call"),
    (lambda m: L.expected_speedup(0.5, True, 0.1), "gamma"),
    (lambda m: L.amdahl_speedup(None, 2.0), "fraction"),
])
def test_wrong_types_raise_type_error(call, field):
    with pytest.raises(TypeError, match=f"^{field}=.*: .*\\(허용: .*\\)$"):
        call(P.get_model("Llama-3-8B"))


def test_numpy_numbers_are_numbers_and_messages_have_one_shape(llama70_fp8):
    a = L.estimate_decode_step_ms(llama70_fp8, "H100", np.int64(8192), np.int32(1), n_chips=np.int64(1), mfu=np.float32(1.0))
    assert a == L.estimate_decode_step_ms(llama70_fp8, "H100", 8192)
    assert L.expected_speedup(np.float64(0.75), np.int64(7), np.float32(0.02)) == pytest.approx(3.157, rel=1e-3)
    with pytest.raises(ValueError) as e:
        L.estimate_decode_step_ms(llama70_fp8, "H100", 100, batch=0)
    assert str(e.value) == "batch=0: 배치 크기에 맞지 않는 값입니다 (허용: 1 이상의 정수 또는 그 배열)"
    with pytest.raises(ValueError) as e:
        P.get_hardware("H300")
    assert str(e.value).startswith("hardware='H300': ") and "(허용: H100, H200" in str(e.value)

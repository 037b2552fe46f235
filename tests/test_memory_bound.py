"""The full-size random model (decodelab.memory_bound): sizes counted by hand, seeded weights,
the memory check's Korean refusal, the bf16 flags, the derived bandwidth figures by hand, and
``decodelab bench memory`` run at a small size (its structure and byte counts, no timing)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch

from decodelab import memory_bound as mb

REPO = Path(__file__).resolve().parents[1]
TINY_PARAMS = 2048 * 256 + 2 * (2 * 256 * 256 + 2 * 256 * 128 + 3 * 256 * 704 + 2 * 256) + 256  # 2,000,128


def test_parameter_counts_by_hand_and_as_transformers_builds_them():
    # 400m: V h + L (2 h h + 2 h (4 x 64) + 3 h i + 2 h) + h, h = 2048, i = 5632, L = 8, V = 32,000
    assert mb.parameter_count(mb.llama_config("400m")) == 32000 * 2048 + 8 * (
        2 * 2048 * 2048 + 2 * 2048 * 256 + 3 * 2048 * 5632 + 2 * 2048) + 2048 == 417_892_352
    assert mb.parameter_count(mb.llama_config("tiny")) == TINY_PARAMS == 2_000_128
    from transformers import LlamaForCausalLM

    for size in mb.SIZES:  # transformers' own module tree on the meta device (no memory)
        with torch.device("meta"):
            model = LlamaForCausalLM(mb.llama_config(size))
        model.tie_weights()
        assert sum(p.numel() for p in model.parameters()) == mb.parameter_count(model.config), size


def test_random_model_is_seeded_tied_and_counts_its_bytes():
    a, b, c = mb.random_model("tiny"), mb.random_model("tiny"), mb.random_model("tiny", seed=1)
    wa, wc = a.model.layers[0].mlp.up_proj.weight, c.model.layers[0].mlp.up_proj.weight
    assert torch.equal(wa, b.model.layers[0].mlp.up_proj.weight) and not torch.equal(wa, wc)
    assert a.lm_head.weight is a.model.embed_tokens.weight
    assert torch.all(a.model.norm.weight == 1) and 0.015 < float(wa.detach().std()) < 0.025
    assert mb.weight_bytes(a) == 4 * TINY_PARAMS
    h = mb.random_model("tiny", dtype="bf16")
    assert h.dtype == torch.bfloat16 and mb.weight_bytes(h) == 2 * TINY_PARAMS
    assert torch.get_default_dtype() == torch.float32  # built in bf16, the default restored
    same = mb.random_model(a.config)  # a config: the same shape (the bundled target's, in notebook 02)
    assert mb.weight_bytes(same) == 4 * TINY_PARAMS and torch.equal(same.model.norm.weight, a.model.norm.weight)
    with pytest.raises(ValueError, match=r"size='7b': 알 수 없는 모델 크기.*'400m'"):
        mb.random_model("7b")
    with pytest.raises(ValueError, match="dtype='fp16': 지원하지 않는 정밀도"):
        mb.random_model("tiny", dtype="fp16")


def _meminfo(tmp_path, kib):
    f = tmp_path / "meminfo"
    f.write_text(f"MemTotal:       24000000 kB\nMemFree:         1000 kB\nMemAvailable:   {kib} kB\n")
    return f


def test_available_memory_reads_meminfo_then_psutil_then_sysconf(tmp_path, monkeypatch):
    import sys
    from types import SimpleNamespace

    no_cgroup = {"cgroup_root": tmp_path / "none", "proc_cgroup": tmp_path / "none"}  # not this machine's
    assert mb.available_memory(_meminfo(tmp_path, 2048), **no_cgroup)[0] == 2048 * 1024
    monkeypatch.setitem(sys.modules, "psutil", SimpleNamespace(virtual_memory=lambda: SimpleNamespace(available=123_456)))
    assert mb.available_memory(tmp_path / "missing", **no_cgroup) == (123_456, "psutil이 알려 준 사용 가능 메모리")
    monkeypatch.setitem(sys.modules, "psutil", None)  # not installed
    monkeypatch.setattr(mb.os, "sysconf", lambda name: {"SC_AVPHYS_PAGES": 10, "SC_PAGE_SIZE": 4096}[name])
    avail, where = mb.available_memory(tmp_path / "missing", **no_cgroup)
    assert (avail, where) == (40_960, "os.sysconf의 빈 페이지 수")


def _files(folder, **files):
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name.replace("_", ".", 1)).write_text(text)
    return folder


def test_the_cgroup_limit_wins_over_the_machine_in_v2_a_pod(tmp_path):
    """A Kubernetes pod with ``memory.limit: 1.5G`` (KubeSpawner: G = 2^30): its own cgroup namespace,
    so the limit is at the root. Left = 1.5 GiB - (600 MiB used - 100 MiB reclaimable page cache)."""
    root = _files(tmp_path / "cg", memory_max=str(1536 * 2**20), memory_current=str(600 * 2**20),
                  memory_stat=f"anon 400000000\ninactive_file {100 * 2**20}\nactive_file 5\n")
    proc = tmp_path / "cgroup"
    proc.write_text("0::/\n")
    left = 1536 * 2**20 - (600 - 100) * 2**20  # 1,086,324,736 bytes = 1036 MiB
    got, where = mb.cgroup_memory(root, proc)
    assert got == left and "cgroup v2" in where and "1.50 GiB" in where, where
    avail, where = mb.available_memory(_meminfo(tmp_path, 20 * 2**20), cgroup_root=root, proc_cgroup=proc)  # 20 GiB free
    assert avail == left == 1_086_324_736 and "cgroup v2" in where and "1.50 GiB" in where
    # the machine has less free than the cgroup allows: the machine's figure
    assert mb.available_memory(_meminfo(tmp_path, 512 * 1024), cgroup_root=root, proc_cgroup=proc)[0] == 512 * 2**20
    (root / "memory.max").write_text("max\n")  # no limit
    assert mb.cgroup_memory(root, proc)[0] is None
    assert mb.available_memory(_meminfo(tmp_path, 2048), cgroup_root=root, proc_cgroup=proc)[0] == 2048 * 1024


def test_a_parent_cgroups_limit_counts_and_v1_reads_its_own_files(tmp_path):
    # v2 on one server: the process in /class/student1 (no limit of its own), /class limited to
    # 2 GiB with 1.25 GiB used: 0.75 GiB left; the root's own files (none) do not count
    root = tmp_path / "cg"
    _files(root / "class", memory_max=str(2 * 2**30), memory_current=str(1280 * 2**20))
    _files(root / "class" / "student1", memory_max="max", memory_current=str(300 * 2**20))
    proc = tmp_path / "cgroup"
    proc.write_text("0::/class/student1\n")
    assert mb.cgroup_memory(root, proc)[0] == 2 * 2**30 - 1280 * 2**20 == 768 * 2**20
    (root / "class" / "student1" / "memory.max").write_text(str(512 * 2**20))  # its own, smaller: 512 - 300
    assert mb.cgroup_memory(root, proc)[0] == 212 * 2**20
    # v1: memory.limit_in_bytes - (usage - total_inactive_file); 2^63 rounded to a page = no limit
    v1 = tmp_path / "v1"
    _files(v1 / "memory", memory_limit_in_bytes="9223372036854771712", memory_usage_in_bytes="19317071872")
    _files(v1 / "memory" / "jupyter", memory_limit_in_bytes=str(2**30), memory_usage_in_bytes=str(384 * 2**20),
           memory_stat=f"cache 1\ntotal_inactive_file {128 * 2**20}\n")
    proc.write_text("12:pids:/\n4:memory:/jupyter\n0::/\n")
    avail, where = mb.cgroup_memory(v1, proc)
    assert avail == 2**30 - (384 - 128) * 2**20 == 768 * 2**20 and "cgroup v1" in where
    proc.write_text("4:memory:/\n")  # the root alone: no limit
    assert mb.cgroup_memory(v1, proc)[0] is None
    assert mb.cgroup_memory(tmp_path / "none", tmp_path / "missing")[0] is None  # nothing mounted: no limit


def test_the_notebooks_size_is_the_largest_that_fits(monkeypatch):
    # needs (fp32, weights + 256 MiB): 400m 1.807 GiB, 100m 0.708 GiB, tiny 0.257 GiB; 60% of what is available
    gib = 2**30
    monkeypatch.setattr(mb, "available_memory", lambda: (4 * gib, "시험"))  # 2.4 GiB usable
    size, why = mb.fitting_size("400m")
    assert size == "400m" and "'400m'(매개변수 418M개)를 씁니다" in why and "2.40 GiB" in why
    assert mb.fitting_size("1b")[0] == "400m"  # 1b needs 3.78 GiB
    monkeypatch.setattr(mb, "available_memory", lambda: (1.25 * gib, "시험 (cgroup 아님)"))  # 0.75 GiB usable
    size, why = mb.fitting_size("400m")
    assert size == "100m" and "메모리가 모자라 '400m' 대신 '100m'(매개변수 123M개)를 씁니다" in why and "1.81 GiB" in why
    assert "시험 (cgroup 아님)" in why and "시험용" not in why
    # a 1.5 GiB pod with the kernel's ~0.42 GiB in it: 1.08 GiB left; a cgroup's own: 85% = 0.918 GiB
    monkeypatch.setattr(mb, "available_memory", lambda: (1.08 * gib, "cgroup v2 메모리 한도 1.50 GiB 중 남은 몫"))
    size, why = mb.fitting_size("400m")
    assert size == "100m" and "1.08 GiB의 85% = 0.92 GiB" in why
    monkeypatch.setattr(mb, "available_memory", lambda: (1.08 * gib, "운영체제가 알려 준 사용 가능 메모리"))
    assert mb.fitting_size("400m")[0] == "tiny"  # the machine's: 60% = 0.648 GiB
    monkeypatch.setattr(mb, "available_memory", lambda: (1.0 * gib, "시험"))  # 0.6 GiB: only tiny
    size, why = mb.fitting_size("400m")
    assert size == "tiny" and "메모리 한계라는 것은 보여 주지 못합니다" in why
    monkeypatch.setattr(mb, "available_memory", lambda: (300 * 2**20, "시험"))  # 180 MiB: nothing
    with pytest.raises(MemoryError, match="가장 작은 모델\\('tiny', fp32\\)도"):
        mb.fitting_size("400m")
    monkeypatch.setattr(mb, "available_memory", lambda: (None, "알 수 없음"))
    assert mb.fitting_size("400m") == ("400m", "모델 크기 '400m': 알 수 없음")
    with pytest.raises(ValueError, match="알 수 없는 모델 크기"):
        mb.fitting_size("7b")


def test_a_model_that_does_not_fit_is_refused_in_korean_with_a_smaller_size(monkeypatch):
    # 2 GiB available, 60% usable = 1.29 GB: 400m fp32 needs 1.67 GB + 256 MiB; 100m fp32 (0.76 GB)
    # and 400m bf16 (1.10 GB) fit
    monkeypatch.setattr(mb, "available_memory", lambda: (2 * 2**30, "시험"))
    with pytest.raises(MemoryError) as e:
        mb.random_model("400m")
    msg = str(e.value)
    assert "size='400m'" in msg and "1.8 GiB가 필요한데" in msg and "2.0 GiB" in msg
    assert "size='100m'(매개변수 123M개)로 줄이세요" in msg and "dtype='bf16'" in msg
    assert "size='1b'" not in msg.split("허용")[0]
    monkeypatch.setattr(mb, "available_memory", lambda: (100 * 2**20, "시험"))  # nothing fits
    with pytest.raises(MemoryError, match="다른 프로그램을 닫아"):
        mb.random_model("tiny")
    assert mb.random_model("tiny", check_memory=False) is not None
    monkeypatch.setattr(mb, "available_memory", lambda: (None, "알 수 없음"))  # unknown: builds
    assert mb.random_model("tiny") is not None


@pytest.mark.parametrize("flags, fast", [("fpu avx2 avx512f avx512_bf16 avx512_vnni", True),
                                         ("fpu avx2 amx_bf16 amx_tile", True),
                                         ("fpu avx2 avx512f avx512_vnni", False)])
def test_bf16_support_reads_the_cpu_flags(tmp_path, flags, fast):
    f = tmp_path / "cpuinfo"
    f.write_text(f"processor\t: 0\nflags\t\t: {flags}\n")
    s = mb.bf16_support(f)
    assert s.fast is fast and ("fp32로 바꿔" in s.describe()) is (not fast)
    arm = tmp_path / "arm"
    arm.write_text("processor\t: 0\nFeatures\t: fp asimd bf16 i8mm\n")
    assert mb.bf16_support(arm).flags == ["bf16"]


def test_derived_figures_by_hand():
    # 1 GB of fp32 weights in 50 ms = 20 GB/s; probe 25 GB/s -> 0.8; k = 8 in 60 ms -> 1.2x;
    # 100 GFLOP/s / 25 GB/s = 4 FLOP/byte -> k at the ridge = 4 x 4 / 2 = 8
    s = mb.Bf16Support(True, ["avx512_bf16"], "AVX512", True, "test")
    r = mb.MemoryBoundResult("test", 250_000_000, 25e9, [1, 8], {"fp32": [50.0, 60.0]}, {"fp32": 10**9},
                             {"fp32": 100e9}, {"fp32": 0}, s, 1, 16, ["fp32"])
    assert r.achieved("fp32") == pytest.approx(20e9) and r.fraction("fp32") == pytest.approx(0.8)
    assert r.ratio("fp32", 8) == pytest.approx(1.2)
    assert r.ridge_point("fp32") == pytest.approx(4.0) and r.ridge_k("fp32") == pytest.approx(8.0)
    assert r.as_dict()["dtypes"]["fp32"]["ratio"] == pytest.approx([1.0, 1.2])


def test_time_passes_gives_one_time_per_k_and_checks_k():
    model = mb.random_model("tiny")
    ms = mb.time_passes(model, (1, 4), context=8, repeats=1, warmup=0)
    assert len(ms) == 2 and all(math.isfinite(v) and v > 0 for v in ms)  # no bound on time: a benchmark's job
    with pytest.raises(ValueError, match="ks=.*순전파당 토큰 수 목록"):
        mb.time_passes(model, (0, 4))
    with pytest.raises(ValueError, match="ks=.*1을 포함"):
        mb.measure_memory_bound("tiny", ks=(2, 4))


def test_time_passes_measures_the_ks_round_robin_with_medians(monkeypatch):
    """A burst of load must land on every k of a round, not on one k's block: passes go k = 1, 2, 4,
    1, 2, 4, ... (one untimed round first), each after the same cached context; each k's time is the
    median of its timed rounds. A fake clock: pass n after the prompt takes n ms, so the timed
    rounds are passes 4-12 and k = 1 takes 4, 7, 10 ms (median 7), k = 2 8, k = 4 9."""
    model = mb.random_model("tiny")
    seen, now = [], [0.0]
    forward = type(model).forward

    def recording(self, *args, **kwargs):
        seen.append((kwargs["input_ids"].shape[1], kwargs["cache"].get_seq_length()))
        now[0] += (len(seen) - 1) / 1e3
        return forward(self, *args, **kwargs)

    monkeypatch.setattr(type(model), "forward", recording)
    monkeypatch.setattr(mb.time, "perf_counter", lambda: now[0])
    ms = mb.time_passes(model, (1, 2, 4), context=8, repeats=3, warmup=1)
    assert seen == [(8, 0)] + [(k, 8) for k in (1, 2, 4)] * 4  # the prompt, then one warm-up and three timed rounds
    assert ms == pytest.approx([7.0, 8.0, 9.0])


def test_bench_memory_runs_at_a_small_size(tmp_path, capsys, monkeypatch):
    """``decodelab bench memory --size tiny``: the printed tables, and the JSON's structure; weight
    bytes are the parameters counted by hand x 4 or 2; times positive and finite (none asserted)."""
    from decodelab.tools.cli import main

    monkeypatch.chdir(REPO)
    out = tmp_path / "memory.json"
    code = main(["bench", "memory", "--size", "tiny", "--repeats", "1", "--ks", "1,2,8", "--json", str(out)])
    text = capsys.readouterr().out
    assert code == 0
    assert "read-bandwidth probe:" in text and "| fp32 | 8,000,512 |" in text and "| bf16 | 4,000,256 |" in text
    assert "goal 1, decode >= 0.75 of the probe" in text and "goal 2, a pass of 8 tokens" in text
    data = json.loads(out.read_text())
    assert data["size"] == "tiny" and data["n_params"] == TINY_PARAMS and data["ks"] == [1, 2, 8]
    assert set(data["dtypes"]) == {"fp32", "bf16"}
    for dtype, nbytes in (("fp32", 4), ("bf16", 2)):
        d = data["dtypes"][dtype]
        assert d["weight_bytes"] == nbytes * TINY_PARAMS
        assert len(d["ms"]) == len(d["ratio"]) == 3 and d["ratio"][0] == 1.0
        for key in ("step_ms", "achieved_bytes_per_s", "fraction_of_probe", "flops", "ridge_k"):
            assert math.isfinite(d[key]) and d[key] > 0, key
        assert all(math.isfinite(v) and v > 0 for v in d["ms"])
        assert d["achieved_bytes_per_s"] == pytest.approx(d["weight_bytes"] / (d["step_ms"] / 1e3))
    assert data["probe_bytes_per_s"] > 0


def test_bench_memory_refuses_a_bad_k_list_in_korean(capsys, monkeypatch):
    from decodelab.tools.cli import main

    monkeypatch.chdir(REPO)
    assert main(["bench", "memory", "--size", "tiny", "--ks", "2,4"]) == 2
    assert "1을 포함" in capsys.readouterr().err


def test_the_model_is_built_and_checked_in_the_widest_dtype_asked(monkeypatch):
    """With bf16 first and fp32 after, the random model is built (and its memory checked) in fp32:
    built in bf16 it would pass the check and then double its weights past the budget."""
    seen = []

    class Built(Exception):
        pass

    def fake(size, *, dtype, seed=0):
        seen.append(dtype)
        raise Built

    monkeypatch.setattr(mb, "random_model", fake)
    for dtypes, widest in ((("bf16", "fp32"), "fp32"), (("bf16",), "bf16")):
        with pytest.raises(Built):
            mb.measure_memory_bound("tiny", dtypes=dtypes, ks=(1,))
        assert seen[-1] == widest


def test_random_model_takes_the_config_of_a_non_llama_target():
    """Notebook 02 builds ``random_model(pair.target.config)``: with a Qwen2 pair (docs/models.md) that
    is a Qwen2Config, and the same shape (biases too) comes back with seeded random weights."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    cfg = Qwen2Config(vocab_size=300, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)
    m = mb.random_model(cfg, seed=3)
    ref = Qwen2ForCausalLM(cfg)
    assert type(m) is Qwen2ForCausalLM
    assert {n: p.shape for n, p in m.named_parameters()} == {n: p.shape for n, p in ref.named_parameters()}
    bias = m.model.layers[0].self_attn.q_proj.bias
    assert bias is not None and torch.equal(bias, torch.ones_like(bias))
    assert torch.equal(m.model.embed_tokens.weight, mb.random_model(cfg, seed=3).model.embed_tokens.weight)

"""The roofline on this computer: cache size from the OS, matrix sizing, the bytes/FLOPs accounting."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest

from decodelab import latency as lat
from decodelab.latency_measure import (DEFAULT_LLC_BYTES, MatmulRoofline, last_level_cache, matmul_profile,
                                       matmul_roofline_figure, matmul_size, measure_matmul_roofline)


def _cache(folder, index, level, kind, size):
    d = folder / f"index{index}"
    d.mkdir()
    (d / "level").write_text(f"{level}\n")
    (d / "type").write_text(f"{kind}\n")
    (d / "size").write_text(f"{size}\n")


def test_last_level_cache_reads_the_highest_level(tmp_path):
    _cache(tmp_path, 0, 1, "Data", "48K")
    _cache(tmp_path, 1, 1, "Instruction", "32K")
    _cache(tmp_path, 2, 2, "Unified", "2048K")
    _cache(tmp_path, 3, 3, "Unified", "32768K")
    size, where = last_level_cache(tmp_path)
    assert size == 32 * 2**20 and "L3" in where


def test_last_level_cache_without_l3_and_without_sysfs(tmp_path):
    _cache(tmp_path, 0, 1, "Data", "64K")
    _cache(tmp_path, 1, 2, "Unified", "4M")
    assert last_level_cache(tmp_path)[0] == 4 * 2**20
    size, where = last_level_cache(tmp_path / "missing")
    if size == DEFAULT_LLC_BYTES:  # Linux / other: the stated assumption (macOS asks sysctl)
        assert where.startswith("가정")


def test_matrix_is_sized_from_the_cache():
    assert matmul_size(32 * 2**20) == 4096                 # 4 x 4096^2 = 64 MiB = 2 x L3
    assert 4 * 4096**2 == 2 * 32 * 2**20
    assert matmul_size(2**20) == 768                        # sqrt(2 MiB / 4) = 724 -> next multiple of 256
    assert matmul_size(4 * 2**30) == 11520                  # capped at 512 MiB: 4 x 11520^2 = 530.8 MB
    assert 4 * 11520**2 <= 512 * 2**20 < 4 * 11776**2
    with pytest.raises(ValueError, match="llc_bytes"):
        matmul_size(0)


def test_roofline_core_counts_one_matrix_by_hand():
    r = lat.roofline(matmul_profile(1024), None, 1, 0, 0, 16)
    assert r.flops == 2 * 1024**2 * 16                     # 2 n^2 B
    assert r.bytes == 4 * 1024**2                           # fp32 weights, read once


def test_measured_bandwidth_ridge_and_prediction_by_hand():
    # n = 1024: 4 MiB of weights. 1 ms at B = 1 -> 4.194 GB/s; 64 vectors in 4 ms -> 33.55 GFLOP/s.
    r = MatmulRoofline(1024, 32 * 2**20, "test", [1, 4, 16, 64], [1.0, 1.0, 2.0, 4.0], [[1.0]] * 4)
    assert r.weight_bytes == 4_194_304
    assert r.bandwidth == pytest.approx(4.194304e9)
    assert r.peak_flops == pytest.approx(2 * 1024**2 * 64 / 4e-3)   # 33.55e9, the best of the four
    assert r.ridge_point == pytest.approx(8.0)                        # FLOP/byte
    assert r.ridge_batch == pytest.approx(16.0)                       # 2 B / 4 = 8 -> B = 16
    assert list(r.predicted_ms()) == pytest.approx([1.0, 1.0, 1.0, 4.0])
    assert r.ratio(64) == 4.0
    other = lat.Hardware("x", None, 2.097152e9, {"fp32": 2 * 1024**2 * 64 / 1e-3}, source="test")
    assert list(r.predicted_ms(other)) == pytest.approx([2.0, 2.0, 2.0, 2.0])   # 4 MiB / 2.1 GB/s, FLOPs < 1 ms


def test_a_small_real_sweep_and_its_figure():
    r = measure_matmul_roofline((1, 2, 4), n=256, repeats=2, warmup=0)
    assert r.n == 256 and r.batch_sizes == [1, 2, 4] and r.threads == 1
    assert len(r.ms) == 3 and all(len(t) == 2 for t in r.all_ms) and min(r.ms) > 0
    fig = matmul_roofline_figure(r, prediction=lat.Hardware("y", None, 1e10, {"fp32": 1e11}, source="test"))
    try:
        ax = fig.axes[0]
        assert [list(line.get_xdata()) for line in ax.lines[:3]] == [[1, 2, 4]] * 3
        assert list(ax.lines[0].get_ydata()) == r.ms
        assert list(ax.lines[2].get_ydata()) == pytest.approx([0.0262144] * 3)   # 262,144 B / 10 GB/s
    finally:
        plt.close(fig)


def test_bad_batch_sizes():
    with pytest.raises(ValueError, match="커지는 순서"):
        measure_matmul_roofline((4, 2), n=64)
    with pytest.raises(ValueError, match="batch_sizes"):
        measure_matmul_roofline((0, 2), n=64)

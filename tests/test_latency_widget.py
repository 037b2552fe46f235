"""The latency explorer redraws in place (one figure, no leaked matplotlib figures, nothing printed)
and shows the numbers decodelab.latency computes."""

from __future__ import annotations

import base64

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from decodelab import latency as lat  # noqa: E402
from decodelab.teach.widgets.latency import (
    LatencyExplorer,
    latency_explorer,
    plot_agent_loop,
    plot_layer_split,
    plot_measured_vs_roofline,
    plot_roofline,
)


@pytest.fixture()
def explorer():
    box = latency_explorer()
    return box.explorer


def _assert_one_png(ex: LatencyExplorer):
    outs = ex.output.outputs
    assert len(outs) == 1
    png = base64.b64decode(outs[0]["data"]["image/png"])
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def test_update_ten_times_leaves_one_figure(explorer, capsys):
    before = list(plt.get_fignums())
    n_collections = len(explorer.ax.collections)
    for i in range(10):
        explorer.update()
        explorer.depth.value = 20 + i  # the slider's own observer fires the handler too
    _assert_one_png(explorer)
    assert plt.get_fignums() == before  # no pyplot figure created, none leaked
    assert len(explorer.ax.collections) == n_collections == 4  # artists reused, not stacked
    assert not explorer.ax.patches and not explorer.ax.texts
    assert explorer.figure.axes == [explorer.ax]
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""  # nothing printed outside the widget


def test_totals_match_hand_computation(explorer):
    ex = explorer
    ex.preset.value = ex.CUSTOM
    ex.depth.value, ex.tokens.value, ex.tool_s.value = 10, 110, 1.0
    ex.decode_ms.value, ex.prefill_tps.value = 2.0, 1e4
    r = ex.result
    # prefill: (4,000 first prompt + 9 x 1,000 new tokens) / 10,000 tok/s = 1.3 s
    # decode: 10 calls x 109 steps x 2 ms = 2.18 s; tools: 10 x 1 s
    assert r.totals["prefill"] == pytest.approx(1300.0)
    assert r.totals["decode"] == pytest.approx(2180.0)
    assert r.totals["tool"] == pytest.approx(10_000.0)
    assert "13.5초" in ex.summary.value
    # +10 ms per token over 10 calls x 109 steps = +10.9 s
    assert "+11초" in ex.summary.value

    ex.speculative.value = True
    ex.alpha.value = 0.8
    # Leviathan et al. 2023's setting (facts/speculative.md): gamma 7, c ~0.02
    s = lat.expected_speedup(0.8, 7, 0.02)
    assert ex.result.totals["decode"] == pytest.approx(2180.0 / s)
    assert ex.result.totals["tool"] == pytest.approx(10_000.0)
    assert "γ=7" in ex.speculative.description and "c=0.02" in ex.speculative.description


def test_speculative_setting_is_cited(explorer):
    caption = explorer.widget.children[-1].value
    assert "γ = 7" in caption and "Leviathan" in caption and "facts/speculative.md" in caption
    assert "γ=5" not in caption and "γ = 5" not in caption


def test_presets_drive_sliders(explorer):
    ex = explorer
    h100 = next(i for i, p in enumerate(ex.presets) if "H100" in p.label)
    rubin = next(i for i, p in enumerate(ex.presets) if p.label.startswith("Rubin ("))
    ex.preset.value = rubin
    assert ex.decode_ms.value == pytest.approx(ex.presets[rubin].decode_ms_per_token, abs=0.1)
    assert ex.prefill_tps.value == pytest.approx(ex.presets[rubin].prefill_tokens_per_s, rel=0.01)
    ex.preset.value = h100
    slow = ex.result.total_ms
    assert ex.decode_ms.value == pytest.approx(21.86, abs=0.1)
    ex.preset.value = rubin
    assert ex.result.total_ms < slow  # faster chip, shorter task
    assert "Rubin" in ex.source.value
    assert "가정(assumption)" in ex.source.value  # Rubin's prefill uses FLOP/s no source publishes
    ex.preset.value = h100
    assert "가정" not in ex.source.value  # published figures only
    ex.decode_ms.value = 30.0  # moving a speed by hand leaves the preset
    assert ex.preset.value == ex.CUSTOM
    assert ex.result.tpot_ms[0] == pytest.approx(30.0)
    _assert_one_png(ex)


def test_static_figures():
    before = list(plt.get_fignums())
    r = lat.agent_loop(5, 50, 100.0, decode_ms_per_token=5.0, prefill_tokens_per_s=1e4,
                       initial_context_tokens=100, context_growth_per_call=10)
    fig = plot_agent_loop(r)
    assert "총" in fig.axes[0].get_title()
    plot_agent_loop(r, fig.axes[0])  # redraw on the same axes reuses the artists
    assert len(fig.axes[0].collections) == 4
    figs = [plot_roofline(), plot_layer_split(),
            plot_measured_vs_roofline([1, 2, 3], [1.0, 2.0, 3.0], [0.5, 1.0, 1.5], xlabel="x", title="t",
                                      fit=(0.1, 1.0))]
    assert all(f.axes for f in figs)
    assert figs[0].axes[0].get_xscale() == "log"
    for f in [fig, *figs]:  # Jupyter's inline backend closes them after showing them
        plt.close(f)
    assert plt.get_fignums() == before


def test_each_control_change_redraws_exactly_once(explorer, monkeypatch):
    ex = explorer
    calls = []
    monkeypatch.setattr(ex, "_png", lambda: calls.append(1) or "iVBORw0KGgo=")
    rubin = next(i for i, p in enumerate(ex.presets) if p.label.startswith("Rubin ("))
    ex.preset.value = rubin  # sets two sliders, then one redraw
    assert len(calls) == 1
    ex.decode_ms.value = 30.0  # leaves the preset (switches to "직접 설정"): still one redraw
    assert len(calls) == 2 and ex.preset.value == ex.CUSTOM
    ex.depth.value = ex.depth.value + 1
    assert len(calls) == 3

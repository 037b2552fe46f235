"""Views over :mod:`decodelab.latency`: the latency explorer widget and the course's latency figures.

* :func:`latency_explorer` — hardware preset, decode latency, prefill throughput, tool latency,
  agent-loop depth, tokens per call, speculative decoding on/off; a stacked bar per model call
  (prefill / decode / tool) with totals, redrawn IN PLACE: one reused matplotlib figure (not
  tracked by pyplot, so nothing leaks), rendered to one PNG that replaces the output's content.
* :func:`rate_presets` — the rows of its hardware dropdown (decode and prefill speed per preset,
  each with its source).
* :func:`plot_agent_loop`, :func:`plot_roofline`, :func:`plot_measured_vs_roofline`,
  :func:`plot_layer_split` — static figures for notebooks 02, 03 and 05. Made with
  ``decodelab.plots.new_figure`` (pyplot-tracked): in Jupyter the inline backend shows each at the
  end of its cell and closes it; elsewhere close them with ``plt.close(fig)``.

No logic lives here: every number comes from :mod:`decodelab.latency` (sources in its docstrings).
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ... import latency as lat
from ... import profiles
from ..._check import check as _check

__all__ = [
    "LatencyExplorer",
    "latency_explorer",
    "RatePreset",
    "rate_presets",
    "plot_agent_loop",
    "plot_roofline",
    "plot_measured_vs_roofline",
    "plot_layer_split",
    "ASSUMED_INITIAL_CONTEXT",
    "ASSUMED_GROWTH_PER_CALL",
    "SPECULATIVE_GAMMA",
    "SPECULATIVE_C",
]

#: The explorer's fixed assumptions (no published figure; the widget's caption says so).
ASSUMED_INITIAL_CONTEXT = 4000
ASSUMED_GROWTH_PER_CALL = 1000

#: The explorer's speculative-decoding setting: Leviathan et al. 2023 (arXiv 2211.17192) predicted
#: 3.2x and measured 3.4x at gamma = 7, alpha = 0.75, c ~ 0.02 (facts/speculative.md,
#: "Published speedups"). The widget's alpha slider starts at 0.75.
SPECULATIVE_GAMMA = 7
SPECULATIVE_C = 0.02

COLORS = {"prefill": "#4C72B0", "transfer": "#8172B2", "decode": "#DD8452", "tool": "#55A868"}
LABELS = {"prefill": "프리필", "transfer": "KV 전송", "decode": "디코드", "tool": "도구 호출"}


def _plain_log_ticks(*axes_) -> None:
    """Log-axis tick labels as plain text ("0.1", "10", "1000"), not mathtext "10^{-1}": mathtext
    would draw U+2212 MINUS SIGN, which the course font lacks (missing-glyph warning)."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    fmt = FuncFormatter(lambda v, _: f"{v:,.10g}")
    for axis in axes_:
        axis.set_major_formatter(fmt)
        axis.set_minor_formatter(NullFormatter())


def _figure(figsize=(7.0, 3.4), dpi=80, nrows=1, ncols=1, *, pyplot: bool = True, **kw):
    """A figure with the Hangul font (:func:`decodelab.plots.new_figure`).

    ``pyplot=True`` (static figures): pyplot tracks it, so Jupyter's inline backend shows it at the
    end of the cell and then closes it; outside Jupyter, close it yourself (``plt.close(fig)``).
    ``pyplot=False`` (the explorer's reused figure): untracked, nothing to close, never leaks.
    """
    from ...plots import new_figure

    return new_figure(nrows, ncols, pyplot=pyplot, figsize=figsize, dpi=dpi, **kw)


def _axes(ax, figsize):
    """``(fig, ax)``: the given axes and their figure, or a new 90-dpi figure of ``figsize`` inches."""
    if ax is None:
        return _figure(figsize=figsize, dpi=90)
    return ax.figure, ax


# --------------------------------------------------------------------------------------------
# static figures


def _bar_verts(x: np.ndarray, bottom: np.ndarray, height: np.ndarray, width: float) -> np.ndarray:
    """Rectangles as polygons, shape (n, 4, 2): one PolyCollection draws them all at once
    (hundreds of times faster to redraw than one ``Rectangle`` patch per bar)."""
    x0, x1 = x - width / 2, x + width / 2
    y0, y1 = bottom, bottom + height
    return np.stack([np.stack([x0, y0], -1), np.stack([x0, y1], -1),
                     np.stack([x1, y1], -1), np.stack([x1, y0], -1)], axis=1)


def _agent_artists(ax, legend: bool = True, transfer: bool = True, fontsize: float = 8):
    """The reusable artists of an agent-loop plot on ``ax`` (created on first use)."""
    arts = getattr(ax, "_decodelab_agent_artists", None)
    if arts is None:
        from matplotlib.collections import PolyCollection
        from matplotlib.patches import Patch
        from matplotlib.ticker import MaxNLocator

        ax.clear()
        # axis-aligned rectangles need no antialiasing (and drawing is faster without)
        arts = {k: ax.add_collection(PolyCollection(np.zeros((0, 4, 2)), facecolors=COLORS[k], linewidths=0,
                                                    antialiased=False))
                for k in COLORS}
        if legend:
            keys = [k for k in COLORS if transfer or k != "transfer"]
            ax.legend([Patch(color=COLORS[k]) for k in keys], [LABELS[k] for k in keys],
                      loc="upper left", fontsize=fontsize, ncol=4, frameon=False)
        ax.set_xlabel("모델 호출 번호", fontsize=fontsize + 1)
        ax.set_ylabel("시간 (초)", fontsize=fontsize + 1)
        ax.tick_params(labelsize=fontsize)
        # few tick labels: text layout is most of a redraw's cost
        ax.xaxis.set_major_locator(MaxNLocator(6, integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(4))
        ax.grid(True, axis="y", alpha=0.3)
        ax._decodelab_agent_artists = arts
    return arts


def plot_agent_loop(result: lat.AgentLoopResult, ax=None, *, title: str | None = None, legend: bool = True):
    """Stacked bars, one per model call: prefill, KV transfer, decode, tool (seconds).

    Redrawing on the same ``ax`` reuses its artists (four ``PolyCollection``s), so a slider move
    only replaces vertices: no new artists, no new figure. A new figure (``ax=None``) is drawn
    full notebook width (950 px) with 10-point labels.

    Args:
        result: from :func:`decodelab.latency.agent_loop`.
        ax: axes to draw on; ``None`` creates a new (pyplot-tracked) figure.
        title: default: the totals in seconds; ``""`` for none.
        legend: draw the colour legend (the explorer shows it as HTML instead, which is faster).

    Returns:
        The matplotlib ``Figure`` drawn on.
    """
    fontsize = 8
    if ax is None:
        fig, ax = _figure(figsize=(9.5, 4.0), dpi=100)
        fig.subplots_adjust(left=0.07, right=0.98, top=0.9, bottom=0.14)
        fontsize = 10
    fig = ax.figure
    arts = _agent_artists(ax, legend, transfer=bool(np.any(result.transfer_ms)), fontsize=fontsize)
    n = result.depth
    x = np.arange(1, n + 1, dtype=float)
    bottom = np.zeros(n)
    parts = {"prefill": result.prefill_ms, "transfer": result.transfer_ms, "decode": result.decode_ms,
             "tool": result.tool_ms}
    width = 0.8 if n <= 60 else 0.95
    for key, ms in parts.items():
        h = np.asarray(ms, dtype=float) / 1e3
        arts[key].set_verts(_bar_verts(x, bottom, h, width))
        bottom = bottom + h
    top = float(bottom.max()) if n else 0.0
    ax.set_xlim(0.4, max(n, 1) + 0.6)
    ax.set_ylim(0, max(top, 1e-3) * 1.3)
    t = result.totals
    ax.set_title(title if title is not None else (f"총 {t['total'] / 1e3:,.1f}초 = 프리필 {t['prefill'] / 1e3:,.1f} + "
                           f"디코드 {t['decode'] / 1e3:,.1f} + 도구 {t['tool'] / 1e3:,.1f}"
                           + (f" + KV 전송 {t['transfer'] / 1e3:,.1f}" if t["transfer"] else "") + " (초)"),
                 fontsize=fontsize + 2)
    return fig


def plot_roofline(hardware: Sequence[str | profiles.Hardware] = ("H100", "H200", "B200", "Trainium2"),
                  dtype: str = "bf16", *, model: profiles.ModelProfile | None = None,
                  batches: Sequence[int] = (1, 8, 64, 256), context_tokens: int = 0, ax=None):
    """Roofline: attainable FLOP/s against arithmetic intensity, one roof per hardware preset,
    with the decode step of ``model`` (default Llama-3-70B in ``dtype``) marked at several batch
    sizes. Ridge point = where the slanted (memory) roof meets the flat (compute) roof.

    Sources: chip figures of :func:`decodelab.profiles.get_hardware` (facts/hardware.md),
    intensity of :func:`decodelab.latency.arithmetic_intensity`.

    Returns:
        The matplotlib ``Figure``.
    """
    fig, ax = _axes(ax, figsize=(7.0, 4.2))
    m = model if model is not None else profiles.get_model("Llama-3-70B", dtype)
    x = np.logspace(-1, 4, 200)
    for i, name in enumerate(hardware):
        hw = profiles.get_hardware(name)
        peak = hw.flops_for(dtype)
        ax.loglog(x, np.minimum(peak, x * hw.bandwidth) / 1e12, color=f"C{i}", label=f"{hw.name}")
        ridge = peak / hw.bandwidth
        ax.plot([ridge], [peak / 1e12], "o", color=f"C{i}", ms=4)
        if i == 0:
            first = hw
    ai = np.atleast_1d(lat.arithmetic_intensity(m, context_tokens, np.asarray(batches)))  # one call, all batches
    attained = np.minimum(first.flops_for(dtype), ai * first.bandwidth) / 1e12
    ax.plot(ai, attained, "k^", ms=6, linestyle="none")
    for b, x, y in zip(batches, ai, attained):
        ax.annotate(f"배치 {b}", (x, y), textcoords="offset points", xytext=(4, -12), fontsize=8)
    _plain_log_ticks(ax.xaxis, ax.yaxis)
    ax.set_xlabel("산술 강도 (FLOP/byte)")
    ax.set_ylabel("도달 가능한 연산 성능 (TFLOP/s)")
    ax.set_title(f"루프라인: {m.name} {m.dtype.upper()} 디코드 단계 (▲, {first.name} 위)", fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(True, which="major", alpha=0.3)
    return fig


def plot_measured_vs_roofline(lengths, measured_ms, predicted_ms, *, xlabel: str, title: str,
                              fit: tuple[float, float] | None = None, ax=None):
    """Measured times (dots) beside the roofline prediction (line) against a token count.

    Args:
        lengths: token counts, shape (n,). measured_ms / predicted_ms: ms, shape (n,).
        fit: optional ``(overhead_ms, ms_per_token)`` of a straight-line fit, drawn dashed.

    Returns:
        The matplotlib ``Figure``.
    """
    fig, ax = _axes(ax, figsize=(6.0, 3.6))
    x = np.asarray(lengths, dtype=float)
    ax.plot(x, measured_ms, "o-", color="C3", label="측정 (이 컴퓨터)")
    ax.plot(x, predicted_ms, "s--", color="C0", label="루프라인 예측 (이 컴퓨터)")
    if fit is not None:
        a, b = fit
        ax.plot(x, a + b * x, ":", color="C2", label=f"직선 맞춤: {a:.2f} ms + {b:.3f} ms/토큰")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("ms")
    ax.set_ylim(bottom=0)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(True, alpha=0.3)
    return fig


def plot_layer_split(model: profiles.ModelProfile | None = None, context_tokens: int = 8192, *, ax=None):
    """Horizontal bars: one decode step of ``model`` (default Llama-3-70B FP8) on one H100, on
    Rubin alone, on Rubin + Groq 3 LPX split by layer (pipeline and ideal), next to NVIDIA's
    "approaching 1,000 tokens/s per user" claim (1 ms). Sources: :mod:`decodelab.latency`.

    Returns:
        The matplotlib ``Figure``.
    """
    fig, ax = _axes(ax, figsize=(10.0, 4.0))  # the notebook's full width
    m = model if model is not None else profiles.get_model("Llama-3-70B", "fp8")
    pipe = lat.layer_split_decode_ms(m, "Rubin", "Groq3-LPX", context_tokens)
    ideal = lat.layer_split_decode_ms(m, "Rubin", "Groq3-LPX", context_tokens, lpu_parallel="ideal")
    rows = [
        ("H100 1개 (루프라인)", lat.estimate_decode_step_ms(m, "H100", context_tokens)),
        ("Rubin 1개 (루프라인)", lat.estimate_decode_step_ms(m, "Rubin", context_tokens)),
        ("Rubin + LPX 층별 분할\n(LPU 파이프라인, 통신 0)", pipe["total_ms"]),
        ("Rubin + LPX 층별 분할\n(이상적 병렬, 통신 0)", ideal["total_ms"]),
        ("NVIDIA 주장\n(사용자당 ~1,000 tokens/s)", 1.0),
    ]
    y = np.arange(len(rows))[::-1]
    vals = [v for _, v in rows]
    ax.barh(y, vals, color=["C0", "C0", "C1", "C1", "C2"])
    ax.set_yticks(y, [r for r, _ in rows], fontsize=11)
    ax.tick_params(axis="x", labelsize=11)
    for yi, v in zip(y, vals):
        ax.annotate(f"{v:.2f} ms", (v, yi), textcoords="offset points", xytext=(4, -4), fontsize=11)
    ax.set_xscale("log")
    _plain_log_ticks(ax.xaxis)
    ax.set_xlabel("토큰 하나를 만드는 시간 (ms, 로그 눈금)", fontsize=12)
    ax.set_title(f"{m.name} {m.dtype.upper()}, 맥락 {context_tokens:,} 토큰, 배치 1", fontsize=12)
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------------------------
# the explorer widget


@dataclass(frozen=True)
class RatePreset:
    """One row of the explorer's hardware dropdown: label, decode_ms_per_token (TPOT, ms),
    prefill_tokens_per_s (None: keep the slider), source."""

    label: str
    decode_ms_per_token: float
    prefill_tokens_per_s: float | None
    source: str


def rate_presets(model: profiles.ModelProfile | None = None, context_tokens: int = 8192, *,
                 include_this_computer: bool = False) -> list[RatePreset]:
    """Decode and prefill speeds per hardware preset for ``model`` (default Llama-3-70B FP8).

    GPU / Trainium rows: the ideal roofline on ONE chip (:func:`decodelab.latency.estimate_decode_step`
    at ``context_tokens``, :func:`~decodelab.latency.estimate_prefill_ms` of a ``context_tokens``
    prompt); chips that cannot hold the model are skipped; a prefill from assumed FLOP/s says so in
    its source. Rows from published claims: "Rubin + Groq 3 LPX" 1.0 ms/token ("generation speeds
    approach 1,000 tokens per second per user", NVIDIA, facts/hardware.md; prefill: Rubin roofline)
    and "Groq LPU v1 (GroqCloud 2024)" ~300 tokens/s = 3.3 ms/token. ``include_this_computer`` adds
    the bundled target in fp32 measured here (context capped at 256).

    Raises:
        TypeError / ValueError: context_tokens not an integer >= 0.
    """
    m = model if model is not None else profiles.get_model("Llama-3-70B", "fp8")
    s = _check("context_tokens", context_tokens, "맥락 토큰 수", integer=True)

    def roof(hw, mm, ss):
        assumed = " [프리필은 가정(assumption)한 FLOP/s: 공개 수치 아님]" if mm.dtype in hw.assumed else ""
        return lat.estimate_decode_step_ms(mm, hw, ss), ss / lat.estimate_prefill_ms(mm, hw, ss) * 1e3, assumed

    out = []
    for name in ("H100", "H200", "B200", "Rubin", "Trainium2", "Trainium3"):
        hw = profiles.get_hardware(name)
        if not lat.estimate_decode_step(m, hw, s).fits:
            continue
        dec, pre, assumed = roof(hw, m, s)
        out.append(RatePreset(f"{hw.name} (루프라인)", dec, pre,
                              f"루프라인: {m.name} {m.dtype.upper()}, 맥락 {s} 토큰, 칩 1개; {hw.source}{assumed}"))
    _, rubin_pre, assumed = roof(profiles.get_hardware("Rubin"), m, s)
    out.append(RatePreset("Rubin + Groq 3 LPX (NVIDIA 주장)", 1.0, rubin_pre,
                          f"디코드: '사용자당 초당 약 1,000 토큰' 주장(facts/hardware.md); 프리필: Rubin 루프라인{assumed}"))
    out.append(RatePreset("Groq LPU v1 (GroqCloud 2024 공개 속도)", 1000.0 / 300.0, None,
                          "Llama-2-70B 약 300 tokens/s (facts/hardware.md, GroqCloud 2024)"))
    if include_this_computer:
        here, tm, short = profiles.measure_this_computer(), profiles.get_model("bundled-target", "fp32"), min(s, 256)
        dec, pre, _ = roof(here, tm, short)
        out.append(RatePreset("이 컴퓨터 + 번들 대상 모델 (루프라인)", dec, pre,
                              f"루프라인: 번들 대상 모델 FP32, 맥락 {short} 토큰; {here.source}"))
    return out


class LatencyExplorer:
    """The latency explorer: controls + one figure redrawn in place.

    Attributes:
        widget: the ``ipywidgets.VBox`` to display. preset, decode_ms, prefill_tps, tool_s, depth,
        tokens, speculative, alpha: the controls. output: the ``ipywidgets.Output`` holding
        exactly one PNG. summary: an ``HTML`` line with totals. figure: the reused figure.
        result: the last :class:`decodelab.latency.AgentLoopResult`.

    Call :meth:`update` to redraw (the sliders' observers do it).
    """

    CUSTOM = -1

    def __init__(self, model: profiles.ModelProfile | None = None, context_tokens: int = 8192,
                 include_this_computer: bool = False):
        import ipywidgets as W

        self.presets = rate_presets(model, context_tokens, include_this_computer=include_this_computer)
        first = self.presets[0]
        # sizes in em: on a slide the widget font grows (decodelab.teach.widgets.styles) and the labels with it
        style = {"description_width": "11.5em"}
        layout = W.Layout(width="40em")
        self.preset = W.Dropdown(
            options=[(p.label, i) for i, p in enumerate(self.presets)] + [("직접 설정", self.CUSTOM)],
            value=0, description="하드웨어 프리셋", style=style, layout=layout)
        self.decode_ms = W.FloatSlider(value=round(first.decode_ms_per_token, 2), min=0.5, max=60.0, step=0.1,
                                       description="디코드 지연 (ms/토큰)", style=style, layout=layout,
                                       continuous_update=False, readout_format=".1f")
        self.prefill_tps = W.FloatLogSlider(value=first.prefill_tokens_per_s or 1e4, base=10, min=2, max=6,
                                            step=0.05, description="프리필 처리량 (tokens/s)", style=style,
                                            layout=layout, continuous_update=False, readout_format=",.0f")
        self.tool_s = W.FloatSlider(value=2.0, min=0.0, max=10.0, step=0.1, description="도구 지연 (초/호출)",
                                    style=style, layout=layout, continuous_update=False, readout_format=".1f")
        self.depth = W.IntSlider(value=50, min=1, max=100, description="루프 깊이 (호출 수)", style=style,
                                 layout=layout, continuous_update=False)
        self.tokens = W.IntSlider(value=300, min=10, max=2000, step=10, description="호출당 출력 토큰",
                                  style=style, layout=layout, continuous_update=False)
        self.speculative = W.Checkbox(
            value=False, description=f"투기적 디코딩 (γ={SPECULATIVE_GAMMA}, c={SPECULATIVE_C:g})", indent=False)
        self.alpha = W.FloatSlider(value=0.75, min=0.0, max=0.95, step=0.05, description="수락 확률 α",
                                   style=style, layout=W.Layout(width="28em"), continuous_update=False)
        self.summary = W.HTML()
        self.source = W.HTML()
        self.output = W.Output(layout=W.Layout(min_height="340px", width="auto"))
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        # ~960 x 340 px: the notebook's full width; dpi 120 draws 8-pt labels at 10 pt of a 96-dpi screen
        self.figure, self.ax = _figure(figsize=(8.0, 2.85), dpi=120, pyplot=False)
        self.figure.subplots_adjust(left=0.08, right=0.99, top=0.96, bottom=0.18)
        # one Agg canvas kept for the widget's life: its renderer and text layouts are reused
        self._canvas = FigureCanvasAgg(self.figure)
        self.result: lat.AgentLoopResult | None = None
        self._busy = False
        caption = W.HTML(
            f"<div style='font-size:13px; line-height:1.45'>가정(출처 없음, 바꿔 보세요): 첫 맥락 {ASSUMED_INITIAL_CONTEXT:,} 토큰, 호출마다 맥락 "
            f"+{ASSUMED_GROWTH_PER_CALL:,} 토큰, 접두사 캐시 사용. 기본값 50회 × 300 토큰 × 도구 2초는 "
            "facts/hardware.md의 에이전트 예시입니다. 투기적 디코딩의 "
            f"γ = {SPECULATIVE_GAMMA}, c ≈ {SPECULATIVE_C:g}는 Leviathan et al. 2023이 α = 0.75에서 "
            "속도 향상을 예측 3.2배, 측정 3.4배로 보고한 설정입니다(facts/speculative.md).</div>")
        self.widget = W.VBox([
            self.preset, self.decode_ms, self.prefill_tps, self.tool_s, self.depth, self.tokens,
            W.HBox([self.speculative, self.alpha]), self.summary, self.output, self.source, caption])
        self.preset.observe(self._on_preset, names="value")
        for w in (self.decode_ms, self.prefill_tps):
            w.observe(self._on_rate, names="value")
        for w in (self.tool_s, self.depth, self.tokens, self.speculative, self.alpha):
            w.observe(self.update, names="value")
        self.update()

    # handlers ---------------------------------------------------------------------------------

    def _on_preset(self, change=None) -> None:
        i = self.preset.value
        if i == self.CUSTOM:
            return self.update()
        p = self.presets[i]
        self._busy = True
        try:
            self.decode_ms.value = min(max(p.decode_ms_per_token, self.decode_ms.min), self.decode_ms.max)
            if p.prefill_tokens_per_s is not None:
                self.prefill_tps.value = p.prefill_tokens_per_s
        finally:
            self._busy = False
        self.update()

    def _on_rate(self, change=None) -> None:
        if self._busy:
            return
        if self.preset.value != self.CUSTOM:  # the user moved a speed: it is no longer the preset
            self._busy = True
            try:
                self.preset.value = self.CUSTOM
            finally:
                self._busy = False
        self.update()

    def _png(self) -> str:
        """Draw the figure on its own Agg canvas and return it as base64 PNG (fast zlib level)."""
        from PIL import Image

        self._canvas.draw()
        w, h = self._canvas.get_width_height()
        img = Image.frombuffer("RGBA", (w, h), self._canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
        buf = io.BytesIO()
        img.save(buf, format="png", compress_level=1)
        return base64.b64encode(buf.getvalue()).decode("ascii")

    def compute(self) -> lat.AgentLoopResult:
        """The agent loop for the current control values (no drawing)."""
        spec = (lat.SpeculativeConfig(self.alpha.value, SPECULATIVE_GAMMA, SPECULATIVE_C)
                if self.speculative.value else None)
        return lat.agent_loop(
            self.depth.value, self.tokens.value, self.tool_s.value * 1e3,
            decode_ms_per_token=self.decode_ms.value, prefill_tokens_per_s=self.prefill_tps.value,
            initial_context_tokens=ASSUMED_INITIAL_CONTEXT, context_growth_per_call=ASSUMED_GROWTH_PER_CALL,
            speculative=spec)

    def update(self, change=None) -> None:
        """Recompute and redraw in place: the output ends with exactly one PNG, and no figure is
        created (the same untracked figure is cleared and drawn again)."""
        if self._busy:
            return
        try:
            r = self.result = self.compute()
        except ValueError as e:  # a student's impossible setting: say so inside the widget
            self.summary.value = f"<b style='color:#b00'>{e}</b>"
            return
        plot_agent_loop(r, self.ax, title="", legend=False)
        png = self._png()
        self.output.outputs = ({"output_type": "display_data", "metadata": {},
                                "data": {"image/png": png, "text/plain": "<에이전트 루프 그림>"}},)
        t = r.totals
        tpot = float(r.tpot_ms[0]) if r.depth else self.decode_ms.value
        plus10 = r.depth * (r.output_tokens - 1) * 10.0 / 1e3
        share = t["decode"] / t["total"] * 100 if t["total"] else 0.0
        legend = " ".join(
            f"<span style='color:{COLORS[k]}'>■</span> {LABELS[k]} {t[k] / 1e3:,.1f}초"
            for k in ("prefill", "decode", "tool") + (("transfer",) if t["transfer"] else ()))
        self.summary.value = (
            f"<b>총 {t['total'] / 1e3:,.1f}초</b> (= {t['total'] / 6e4:,.1f}분) = {legend}<br>"
            f"디코드 몫 {share:.0f}% · 실제 토큰당 디코드 {tpot:.2f} ms · "
            f"토큰당 10 ms가 늘면 +{plus10:,.0f}초")
        i = self.preset.value
        self.source.value = ("<div style='font-size:13px; line-height:1.45'>출처: "
                             + (self.presets[i].source if i != self.CUSTOM else "직접 설정한 값") + "</div>")


def latency_explorer(model: profiles.ModelProfile | None = None, context_tokens: int = 8192, *,
                     include_this_computer: bool = False):
    """The latency explorer widget (hardware preset dropdown + sliders + per-call stacked bars).

    Args:
        model: model whose roofline sets the hardware presets (default Llama-3-70B FP8).
        context_tokens: context length for the presets' decode and prefill rates.
        include_this_computer: add a preset measured on this computer (~0.5 s once).

    Returns:
        An ``ipywidgets.VBox``; its ``.explorer`` attribute is the :class:`LatencyExplorer`
        (``.explorer.update()`` redraws, ``.explorer.output`` holds the one figure).
    """
    ex = LatencyExplorer(model, context_tokens, include_this_computer)
    ex.widget.explorer = ex
    return ex.widget

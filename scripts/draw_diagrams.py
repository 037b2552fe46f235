"""Draw the course's mechanism diagrams into notebooks/figures/ (SVG, Korean labels, GLOSSARY.md terms).

One function per diagram; each returns a matplotlib Figure drawn with the bundled NanumGothic font
(``decodelab.plots.new_figure``). The SVGs are written reproducibly (no date, fixed hash salt,
text as paths so no font is needed to view them), so ``tests/test_diagrams.py`` can redraw them
and compare bytes. The notebooks embed them with relative links (``figures/NAME.svg``), which
work in JupyterLab, in the slides and in the installed package alike.

Run after changing a diagram:  ``python scripts/draw_diagrams.py`` (or ``--out DIR``, ``--check``).
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from matplotlib.patches import FancyArrowPatch, FancyBboxPatch  # noqa: E402

from decodelab import latency as lat  # noqa: E402
from decodelab.plots import new_figure  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "notebooks" / "figures"

# one colour per role, the same in every diagram
PREFILL = "#7c3aed"   # 프리필
DECODE = "#2563eb"    # 디코드 스텝
KV = "#ea580c"        # KV 캐시
TOOL = "#6b7280"      # 도구 호출, 버린 것
ACCEPT = "#16a34a"    # 수락
REJECT = "#dc2626"    # 거절
RECOVER = "#0891b2"   # 복구 토큰
BONUS = "#ca8a04"     # 보너스 토큰
INK = "#111827"
FS = 13               # body text size, points (the SVGs are shown about 1:1 in a 1000 px column)


def _canvas(width: float, height: float, xlim, ylim):
    fig, ax = new_figure(figsize=(width, height), pyplot=False)
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.axis("off")
    fig.subplots_adjust(left=0.01, right=0.99, top=0.99, bottom=0.01)
    return fig, ax


def _box(ax, x, y, w, h, text="", color=DECODE, *, fill=None, fs=FS, text_color=None, lw=1.5, ls="-", alpha=None):
    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0,rounding_size=0.08", linewidth=lw, linestyle=ls,
                                edgecolor=color, facecolor=fill if fill is not None else color + "33", alpha=alpha))
    if text:
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=fs, color=text_color or INK)


def _arrow(ax, x0, y0, x1, y1, color=INK, *, lw=1.5, style="-|>", ls="-"):
    ax.add_patch(FancyArrowPatch((x0, y0), (x1, y1), arrowstyle=style, mutation_scale=14, color=color, lw=lw,
                                 linestyle=ls, shrinkA=0, shrinkB=0))


def _bracket(ax, x0, x1, y, text, color=INK, fs=FS):
    """A horizontal span with end ticks and a label under it."""
    _arrow(ax, x0, y, x1, y, color, style="|-|")
    ax.text((x0 + x1) / 2, y - 0.3, text, ha="center", va="top", fontsize=fs, color=color)


def _time_axis(ax, x, y, text="요청 하나의 시간 축"):
    """A label with a drawn arrow after it (NanumGothic's arrow glyph is tiny)."""
    t = ax.text(x, y, text, fontsize=FS - 1, color=INK, va="center")
    width = 0.15 * len(text) + 0.2
    _arrow(ax, x + width, y, x + width + 0.6, y, INK, lw=1.2)
    return t


# --------------------------------------------------------------------------------------------
# 01: the two phases on a time axis


def timeline():
    """Prefill (all prompt tokens, one parallel forward pass) then decode steps (one token each); TTFT, TPOT."""
    fig, ax = _canvas(10, 3.4, (0, 10.2), (-1.55, 2.3))
    _time_axis(ax, 0.05, 2.05)
    prompt = ["프롬", "프트", "토큰", "들"]
    for i, t in enumerate(prompt):
        _box(ax, 0.1 + i * 0.62, 1.0, 0.56, 0.55, t, PREFILL, fs=11)
    _box(ax, 0.05, 0.1, 2.55, 0.7, "프리필: 순전파 한 번", PREFILL)
    for i in range(4):
        _arrow(ax, 0.38 + i * 0.62, 1.0, 0.38 + i * 0.62, 0.82, PREFILL, lw=1)
    x = 2.75
    out = ["첫", "토큰", "이", "나옵", "니다"]
    for i, t in enumerate(out):
        w = 1.25
        _box(ax, x, 0.1, w - 0.1, 0.7, "프리필이 냄" if i == 0 else f"디코드 스텝 {i}", DECODE if i else PREFILL,
             fs=11, fill="#ffffff" if i == 0 else None, ls="--" if i == 0 else "-")
        _box(ax, x + 0.3, 1.0, 0.6, 0.55, t, DECODE, fs=11)
        _arrow(ax, x + 0.6, 0.82, x + 0.6, 1.0, DECODE, lw=1)
        if i < len(out) - 1:
            _arrow(ax, x + 0.92, 1.27, x + w + 0.28, 0.6, DECODE, lw=1, ls=":")
        x += w
    ax.text(x + 0.05, 0.45, "…", fontsize=FS + 4, va="center")
    _bracket(ax, 0.05, 3.35, -0.2, "첫 토큰까지의 시간 (TTFT)", PREFILL)
    _bracket(ax, 3.35, 4.6, -0.95, "토큰당 출력 시간 (TPOT)", DECODE)
    ax.text(6.2, -0.55, "디코드 스텝마다 토큰 하나: 앞 토큰이 정해져야\n다음 스텝을 시작할 수 있어 차례로 진행됩니다",
            fontsize=12, color=INK, va="center")
    return fig


# --------------------------------------------------------------------------------------------
# 01: attention, one head and many (query, key, value; GQA)


def attention():
    """Top: one head, the newest position's query scored against the keys of itself and the
    positions before it; the weights (sum 1) mix the values. Bottom: query heads and KV heads per
    layer, the bundled target (one KV head per query head) beside Llama-3-8B (GQA), both read
    from their config files."""
    from decodelab import profiles

    fig, ax = _canvas(10, 6.1, (0, 10.2), (-0.75, 6.35))
    query, key, value = DECODE, KV, ACCEPT
    ax.text(0.05, 6.1, "① 헤드 하나: 가장 최근 위치의 쿼리가 자기와 앞 위치들의 키·값을 읽습니다", fontsize=FS, color=INK,
            va="center")
    tokens, weights = ["모든", "국민", "은", "법률"], ["0.10", "0.15", "0.25", "0.50"]
    x0, step = 1.25, 1.35
    ax.text(0.05, 5.35, "토큰 (위치)", fontsize=11, color=INK, va="center")
    ax.text(0.05, 4.45, "키 · 값", fontsize=11, color=INK, va="center")
    ax.text(0.05, 3.2, "가중치", fontsize=11, color=INK, va="center")
    for i, t in enumerate(tokens):
        x = x0 + i * step
        _box(ax, x, 5.1, 1.1, 0.5, f"{t} ({i})", INK, fill="#ffffff", fs=12)
        _arrow(ax, x + 0.55, 5.1, x + 0.55, 4.72, INK, lw=1)
        _box(ax, x, 4.2, 0.5, 0.5, "키", key, fs=11)
        _box(ax, x + 0.6, 4.2, 0.5, 0.5, "값", value, fs=11)
        _box(ax, x + 0.15, 2.95, 0.8, 0.5, weights[i], query, fill="#ffffff", fs=11)
    xn = x0 + len(tokens) * step
    _box(ax, xn, 5.1, 1.1, 0.5, "다음: 아직 없음", TOOL, fill="#ffffff", fs=10, ls="--")
    xq = xn + 0.1
    _box(ax, xq, 3.55, 0.9, 0.5, "쿼리", query, fs=11)
    xl = x0 + (len(tokens) - 1) * step
    _arrow(ax, xl + 1.1, 5.2, xq + 0.45, 4.07, query, lw=1)
    for i in range(len(tokens)):
        _arrow(ax, xq, 3.8, x0 + i * step + 0.55, 3.47, query, lw=1, ls=":")
    ax.text(xq + 1.15, 5.35, "위치 3의 토큰이 쿼리도 만듭니다", fontsize=11, color=query, va="center")
    ax.text(xq + 1.15, 4.45, "점수 = 쿼리 · 키 ÷ √(헤드 크기)\nsoftmax를 거쳐 가중치 (합 1)", fontsize=11, color=query,
            va="center", linespacing=1.5)
    ax.text(xq + 1.15, 3.45, "출력 = 가중치로 섞은 값\n0.10 × 값(0) + … + 0.50 × 값(3)", fontsize=11, color=value,
            va="center", linespacing=1.5)
    ax.text(xq + 1.15, 2.95, "(가중치는 예시)", fontsize=10, color=TOOL, va="center")

    # bottom: heads per layer, from the config files
    ax.text(0.05, 2.55, "② 한 층 안의 헤드들: 쿼리 헤드마다 따로 계산하고, 키·값 헤드(KV 헤드)를 몇 개가 함께 쓰는지는 모델이 정합니다",
            fontsize=12, color=INK, va="center")

    def heads(x, width, model, title):
        n_q, n_kv = model.n_q_heads, model.n_kv_heads
        group = n_q // n_kv
        wq = width / n_q
        wk = width / n_kv
        ax.text(x, 2.1, title, fontsize=12, color=INK, va="center")
        for h in range(n_q):
            _box(ax, x + h * wq + 0.02 * wq, 1.45, 0.86 * wq, 0.35, "", query, lw=1)
        for k in range(n_kv):
            kx = x + k * wk + 0.06 * wk
            _box(ax, kx, 0.45, 0.88 * wk, 0.35, "", key, lw=1)
            for h in range(k * group, (k + 1) * group):
                _arrow(ax, x + (h + 0.45) * wq, 1.45, kx + 0.44 * wk, 0.8, TOOL, lw=0.8, style="-")
        ax.text(x - 0.05, 1.62, "쿼리 헤드", fontsize=10, color=query, va="center", ha="right")
        ax.text(x - 0.05, 0.62, "KV 헤드", fontsize=10, color=key, va="center", ha="right")
        share = "쿼리 헤드마다 자기 KV 헤드 (GQA 아님)" if group == 1 else f"쿼리 헤드 {group}개가 KV 헤드 하나를 함께 씀 (GQA)"
        ax.text(x, 0.15, f"쿼리 헤드 {n_q}개 · KV 헤드 {n_kv}개\n{share}", fontsize=11, color=INK, va="center",
                linespacing=1.4)

    heads(0.9, 3.2, profiles.get_model("bundled-target"), "이 강좌의 대상 모델 (층마다)")
    heads(5.9, 4.2, profiles.get_model("Llama-3-8B"), "Llama-3-8B (층마다)")
    ax.text(5.1, -0.55, "KV 캐시에 저장하는 것은 KV 헤드의 키와 값입니다: KV 헤드가 적을수록 캐시가 작아집니다", fontsize=11, color=KV,
            va="center", ha="center")
    return fig


# --------------------------------------------------------------------------------------------
# 01: the KV cache grows one position per step


def kv_cache():
    """Rows = forward passes; cells = cached positions; one new cell per decode step."""
    fig, ax = _canvas(10, 3.6, (0, 10.2), (-0.6, 4.3))
    rows = [("프리필", 3, 3), ("디코드 스텝 1", 4, 1), ("디코드 스텝 2", 5, 1), ("디코드 스텝 3", 6, 1)]
    for r, (name, total, new) in enumerate(rows):
        y = 3.3 - r * 0.95
        ax.text(1.95, y + 0.3, name, ha="right", va="center", fontsize=FS, color=PREFILL if r == 0 else DECODE)
        for c in range(total):
            fresh = c >= total - new
            _box(ax, 2.1 + c * 0.75, y, 0.68, 0.6, f"위치 {c}", KV, fs=11,
                 fill=(PREFILL if r == 0 else DECODE) + "55" if fresh else "#f3f4f6", lw=1.5 if fresh else 1)
        ax.text(2.1 + total * 0.75 + 0.1, y + 0.3,
                "3개 위치를 한 번에 계산해 캐시에 넣음" if r == 0 else "새 위치 1개만 계산, 앞 위치는 캐시에서 읽음",
                va="center", fontsize=12, color=INK)
    _box(ax, 2.1, -0.5, 0.4, 0.3, "", KV, fill="#f3f4f6", lw=1)
    ax.text(2.6, -0.35, "캐시에서 읽는 키·값", va="center", fontsize=12)
    _box(ax, 5.0, -0.5, 0.4, 0.3, "", KV, fill=DECODE + "55")
    ax.text(5.5, -0.35, "이번 순전파에서 새로 계산해 KV 캐시에 더함", va="center", fontsize=12)
    return fig


# --------------------------------------------------------------------------------------------
# 02: the roofline


def roofline():
    """Attainable FLOP/s against arithmetic intensity on H100 (BF16), decode and prefill marked."""
    import numpy as np

    hw = lat.get_hardware("H100")
    peak, bw = hw.flops_for("bf16"), hw.bandwidth
    ridge = peak / bw
    fig, ax = new_figure(figsize=(10, 4.2), pyplot=False)
    x = np.logspace(-1, 4, 400)
    ax.plot(x, np.minimum(peak, bw * x) / 1e12, color=INK, lw=2.5)
    ax.fill_between(x[x <= ridge], 1e-3, (bw * x[x <= ridge]) / 1e12, color=DECODE, alpha=0.08)
    ax.fill_between(x[x >= ridge], 1e-3, peak / 1e12, color=PREFILL, alpha=0.08)
    ax.axvline(ridge, color=TOOL, ls=":", lw=1.5)
    ax.text(ridge * 1.08, 2.0, f"리지 포인트\n≈ {ridge:.0f} FLOP/byte", fontsize=12, color=TOOL, va="bottom")
    ax.text(0.13, 700, "메모리 한계\n(속도 = 대역폭 × 산술 강도)", fontsize=FS, color=DECODE, va="top")
    ax.text(900, 1500, "연산 한계 (최대 FLOP/s)", fontsize=FS, color=PREFILL, va="bottom", ha="center")
    for xi, label, color in ((1.0, "배치 1 디코드\n(≈ 1 FLOP/byte)", DECODE), (64.0, "배치 64 디코드", DECODE),
                             (2000.0, "긴 프롬프트의 프리필", PREFILL)):
        yi = min(peak, bw * xi) / 1e12
        ax.plot([xi], [yi], "o", color=color, ms=9)
        ax.annotate(label, (xi, yi), xytext=(8, -26 if xi < 1000 else -34), textcoords="offset points", fontsize=12,
                    color=color)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(0.3, 4000)
    ax.set_xlim(0.1, 1e4)
    ax.set_xticks([0.1, 1, 10, 100, 1000, 10000], ["0.1", "1", "10", "100", "1,000", "10,000"])
    ax.set_yticks([1, 10, 100, 1000], ["1", "10", "100", "1,000"])
    ax.minorticks_off()
    ax.set_xlabel("산술 강도 (FLOP/byte: 읽은 1바이트당 연산 수)", fontsize=FS)
    ax.set_ylabel("낼 수 있는 TFLOP/s", fontsize=FS)
    ax.set_title(f"루프라인: H100 밀집 BF16 {peak / 1e12:.0f} TFLOP/s, 메모리 대역폭 {bw / 1e12:.2f} TB/s", fontsize=FS)
    ax.tick_params(labelsize=11)
    ax.grid(alpha=0.25, which="both")
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------------------------
# 03: the agent loop


def agent_loop():
    """Model calls repeated: prefill (growing context), decode n tokens, tool call; the task's time adds up."""
    fig, ax = _canvas(10, 2.9, (0, 10.2), (-1.0, 2.2))
    x = 0.05
    for call in range(3):
        ax.text(x + 1.45, 1.75, f"모델 호출 {call + 1}", ha="center", fontsize=FS, color=INK)
        pw = 0.35 + 0.2 * call
        _box(ax, x, 0.6, pw, 0.8, "", PREFILL)
        ax.text(x + pw / 2, 0.35, "프리필", ha="center", va="top", fontsize=11, color=PREFILL)
        _box(ax, x + pw + 0.05, 0.6, 1.3, 0.8, "디코드 n 토큰", DECODE, fs=12)
        _box(ax, x + pw + 1.4, 0.6, 0.9, 0.8, "도구 호출", TOOL, fs=12)
        x += pw + 2.4
        if call < 2:
            _arrow(ax, x - 0.08, 1.0, x + 0.02, 1.0, INK, lw=1)
    ax.text(x + 0.05, 1.0, "… 수십 번", fontsize=FS, va="center")
    _bracket(ax, 0.05, x - 0.05, -0.35, "작업 하나의 시간 = 호출마다 (TTFT(≈프리필) + (n − 1) × TPOT + 도구 시간)의 합", INK, fs=12)
    return fig


# --------------------------------------------------------------------------------------------
# 04: one speculative round


def speculative_round():
    """Draft proposes gamma = 4 tokens; the target verifies them in one forward pass: accept, reject,
    discarded, recovered token; and a round where all are accepted and a bonus token follows."""
    fig, ax = _canvas(10.5, 5.0, (0, 10.8), (-0.5, 5.6))
    w = 1.05

    def row(y, title, marks):
        ax.text(0.05, y + 1.8, title, fontsize=FS, color=INK, va="center")
        ax.text(0.05, y + 0.95, "초안 모델", fontsize=12, color=DECODE, va="center")
        ax.text(0.05, y + 0.25, "대상 모델\n(검증: 순전파 한 번)", fontsize=11, color=PREFILL, va="center")
        for i, (tok, mark) in enumerate(marks):
            x = 2.0 + i * (w + 0.15)
            if tok:
                color = {"수락": ACCEPT, "거절": REJECT, "버림": TOOL}[mark]
                _box(ax, x, y + 0.7, w, 0.5, tok, DECODE, fs=12, alpha=0.45 if mark == "버림" else 1.0)
                ax.text(x + w / 2, y + 1.25, mark, ha="center", va="bottom", fontsize=11, color=color)
        return y

    # round A: the third draft token is rejected
    y = row(3.0, "라운드 ①: 초안 토큰 수 $\\gamma$ = 4, 세 번째에서 거절",
            [("국민", "수락"), ("은", "수락"), ("법률", "거절"), ("로", "버림")])
    _box(ax, 2.0, y, 4 * w + 0.45 + w, 0.5, "", PREFILL, fill=PREFILL + "14", lw=1)
    for i, (tok, kind) in enumerate([("국민", "같음"), ("은", "같음"), ("모두", "복구 토큰")]):
        x = 2.0 + i * (w + 0.15)
        _box(ax, x + 0.05, y + 0.05, w - 0.1, 0.4, tok, RECOVER if kind == "복구 토큰" else PREFILL, fs=11,
             fill=(RECOVER + "44") if kind == "복구 토큰" else "#ffffff")
    ax.text(2.0 + 2 * (w + 0.15) + w / 2, y - 0.08, "복구 토큰 (거절된 위치에 대상 모델이 내놓은 토큰)", ha="left",
            va="top", fontsize=11, color=RECOVER)
    ax.text(8.1, y + 0.95, "확정: 국민 · 은 · 모두\n(수락 2 + 복구 토큰 1 = 3개)\n네 번째 초안은 판정하지 않고 버림",
            fontsize=11, color=INK, va="center", linespacing=1.5)

    # round B: all accepted, bonus token
    y = row(0.2, "라운드 ②: 네 개 모두 수락, 보너스 토큰 하나 더",
            [("모든", "수락"), ("국민", "수락"), ("은", "수락"), ("법", "수락")])
    _box(ax, 2.0, y, 5 * (w + 0.15) - 0.1, 0.5, "", PREFILL, fill=PREFILL + "14", lw=1)
    for i, tok in enumerate(["모든", "국민", "은", "법", "앞에"]):
        x = 2.0 + i * (w + 0.15)
        bonus = i == 4
        _box(ax, x + 0.05, y + 0.05, w - 0.1, 0.4, tok, BONUS if bonus else PREFILL, fs=11,
             fill=(BONUS + "55") if bonus else "#ffffff")
    ax.text(2.0 + 4 * (w + 0.15) + w / 2, y - 0.12, "보너스 토큰", ha="center", va="top", fontsize=11, color=BONUS)

    ax.text(8.1, y + 0.95, "확정: 5개 ($\\gamma$ + 1)\n대상 모델은 두 라운드 모두\n한 번씩만 불림", fontsize=11, color=INK, linespacing=1.5,
            va="center")
    return fig


# --------------------------------------------------------------------------------------------
# 05: disaggregated serving


def disaggregated():
    """Prefill device builds the KV cache, sends it over a link, the decode device writes the answer.

    No time line: which device emits the first token (and so whether the transfer lands in TTFT) is
    what notebook 05's prediction 05-predict-disagg-ttft asks; the figure stands above it."""
    fig, ax = _canvas(10, 1.9, (0, 10.2), (0.95, 2.75))
    _box(ax, 0.1, 1.3, 1.9, 1.1, "요청\n(프롬프트 S 토큰)", INK, fill="#ffffff", fs=12)
    _arrow(ax, 2.05, 1.85, 2.45, 1.85)
    _box(ax, 2.5, 1.2, 2.3, 1.3, "프리필 장치\n연산 능력이 큰 GPU", PREFILL)
    _arrow(ax, 4.85, 1.85, 6.85, 1.85, KV, lw=2.5)
    ax.text(5.85, 2.0, "KV 캐시 전송", ha="center", va="bottom", fontsize=12, color=KV)
    ax.text(5.85, 1.7, "S × 토큰당 KV 바이트\n÷ 링크 대역폭", ha="center", va="top", fontsize=11, color=KV)
    _box(ax, 6.9, 1.2, 2.3, 1.3, "디코드 장치\n메모리 대역폭이 큰 칩", DECODE)
    _arrow(ax, 9.25, 1.85, 9.6, 1.85)
    ax.text(9.65, 1.85, "답", va="center", fontsize=FS)
    return fig


FIGURES = {
    "01_timeline.svg": timeline,
    "01_attention.svg": attention,
    "01_kv_cache.svg": kv_cache,
    "02_roofline.svg": roofline,
    "03_agent_loop.svg": agent_loop,
    "04_speculative_round.svg": speculative_round,
    "05_disaggregated.svg": disaggregated,
}


def render(name: str) -> bytes:
    """One diagram as SVG bytes, reproducibly (no date, fixed ids, text as paths)."""
    with matplotlib.rc_context({"svg.hashsalt": "decodelab", "svg.fonttype": "path"}):
        fig = FIGURES[name]()
        buf = io.BytesIO()
        fig.savefig(buf, format="svg", metadata={"Date": None})
    return buf.getvalue()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT, help="folder to write into (default notebooks/figures)")
    ap.add_argument("--check", action="store_true", help="only report files that differ from a fresh drawing")
    ap.add_argument("--png", action="store_true", help="also write PNG previews (not kept in the repo)")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    stale = []
    for name in FIGURES:
        data = render(name)
        path = args.out / name
        if args.check:
            if not path.is_file() or path.read_bytes() != data:
                stale.append(name)
            continue
        path.write_bytes(data)
        if args.png:
            fig = FIGURES[name]()
            fig.savefig(path.with_suffix(".png"), dpi=100)
        print(f"wrote {path}")
    if stale:
        print("out of date (run python scripts/draw_diagrams.py):", ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

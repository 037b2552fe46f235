"""Views for notebook 01 (the decode phase): tokens, a live token stream, KV cache on/off.

Views only: every number comes from :mod:`decodelab.decoding` / :mod:`decodelab.sampling`.
"""

from __future__ import annotations

import html
import time

import ipywidgets as W
import torch

from ... import decoding
from ...plots import byte_pieces, plot_label, show_whitespace
from ...sampling import SamplingConfig

_PALETTE = ["#dbeafe", "#fde68a", "#bbf7d0", "#fbcfe8", "#ddd6fe", "#fed7aa"]


def visible_html(text: str) -> str:
    """``text`` for an HTML widget: escaped, with whitespace made visible (space -> ␣, newline
    -> ⏎); the one helper every widget's token HTML uses. Never for figures (:func:`plot_label`)."""
    return html.escape(show_whitespace(text))


def tokens_html(tokenizer, text: str) -> str:
    """HTML showing how ``tokenizer`` splits ``text``: one coloured box per token, id below.

    Tokens that hold only part of a character's UTF-8 bytes are shown in grey as byte pieces,
    ``<0xEB>`` (:func:`byte_pieces`); spaces as ``␣``.
    """
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    boxes = []
    for i, tid in enumerate(ids):
        piece = tokenizer.decode([tid])
        partial = "\ufffd" in piece
        label = html.escape(byte_pieces(tokenizer, tid)) if partial else visible_html(piece)
        colour = "#e5e7eb" if partial else _PALETTE[i % len(_PALETTE)]
        boxes.append(
            f'<span style="display:inline-block;margin:2px;padding:2px 5px;border-radius:4px;'
            f'background:{colour};font-family:monospace;text-align:center">{label}'
            f'<br><small style="color:#555">{tid}</small></span>'
        )
    chars = len(text)
    return (
        f'<div style="line-height:2.2">{"".join(boxes)}</div>'
        f"<div><small>글자 {chars}개 → 토큰 {len(ids)}개 (토큰 하나에 평균 {chars / max(1, len(ids)):.2f}글자)</small></div>"
    )


def show_tokens(tokenizer, text: str) -> W.HTML:
    """An ``ipywidgets.HTML`` with :func:`tokens_html` (display it in a notebook)."""
    return W.HTML(tokens_html(tokenizer, text))


def candidates_html(step: decoding.Step) -> str:
    """A small table of a step's top candidates with probability bars."""
    rows = []
    for c in step.top:
        chosen = "font-weight:bold" if c.token_id == step.token_id else ""
        rows.append(
            f'<tr style="{chosen}"><td style="font-family:monospace">{visible_html(c.piece)}</td>'
            f'<td style="width:140px"><div style="background:#60a5fa;height:10px;width:{100 * c.prob:.1f}%"></div></td>'
            f"<td>{100 * c.prob:.1f}%</td></tr>"
        )
    return "<table>" + "".join(rows) + "</table>"


class DecodeExplorer(W.VBox):
    """Live decode-phase widget: tokens appear one at a time with their ms and top candidates.

    Controls: prompt, number of new tokens, temperature / top-k / top-p (sliders,
    ``continuous_update=False``: a release re-runs the generation), seed, KV cache on/off and a
    display delay that slows the animation down (it is not part of the measured ms).

    Args:
        model, tokenizer: e.g. ``decodelab.models.bundled().target`` and its tokenizer.
        prompt: the initial prompt.
        max_new_tokens: initial number of tokens to generate (slider range 1..120, widened to the
            value given when it is larger: it is honoured, never cut to 120).
        delay_ms: initial display delay per token in ms (0 = as fast as the model goes; slider
            range 0..300, widened likewise).

    Raises:
        TypeError / ValueError: (Korean) ``max_new_tokens`` not a whole number >= 1, or the prompt
            plus ``max_new_tokens`` beyond the model's context length (the message says how many
            fit); ``delay_ms`` not a whole number >= 0.
    """

    SLIDER_MAX = 120
    """The token slider's usual top; a larger ``max_new_tokens`` widens it."""

    def __init__(self, model, tokenizer, prompt: str = "대한민국은", max_new_tokens: int = 30, delay_ms: int = 60):
        from ..._check import check

        self.model, self.tokenizer = model, tokenizer
        max_new_tokens = check("max_new_tokens", max_new_tokens, "만들 토큰 수(max_new_tokens)", low=1, integer=True,
                               hint="예: 30")
        delay_ms = check("delay_ms", delay_ms, "표시 지연(ms)", integer=True, hint="0 = 지연 없음, 예: 60")
        if isinstance(prompt, str) and prompt.strip():  # the same budget rule as generate(): say now, not after the first run
            decoding.check_budget(model, len(decoding.format_prompt(tokenizer, prompt)), max_new_tokens)
        # "initial" sizes each description to its own text, so no label is cut ("온도(temperat…").
        style = {"description_width": "initial"}
        layout = W.Layout(width="460px")
        self.prompt = W.Text(value=prompt, description="프롬프트", style=style, layout=W.Layout(width="560px"))
        self.n = W.IntSlider(value=max_new_tokens, min=1, max=max(self.SLIDER_MAX, max_new_tokens), description="새 토큰 수", continuous_update=False, style=style, layout=layout)
        self.temperature = W.FloatSlider(value=0.0, min=0.0, max=2.0, step=0.05, description="온도(temperature)", continuous_update=False, style=style, layout=layout)
        self.top_k = W.IntSlider(value=0, min=0, max=200, description="top-k (0=끄기)", continuous_update=False, style=style, layout=layout)
        self.top_p = W.FloatSlider(value=1.0, min=0.05, max=1.0, step=0.05, description="top-p (1=끄기)", continuous_update=False, style=style, layout=layout)
        self.seed = W.BoundedIntText(value=0, min=0, max=2**31 - 1, description="seed(난수)", style=style, layout=W.Layout(width="220px"))
        self.use_cache = W.Checkbox(value=True, description="KV 캐시 사용")
        self.delay = W.IntSlider(value=delay_ms, min=0, max=max(300, delay_ms), step=10, description="표시 지연(ms)", continuous_update=False, style=style, layout=layout)
        self.button = W.Button(description="생성", button_style="primary", icon="play")
        self.tokens = W.HTML()
        self.top = W.HTML()
        self.status = W.HTML()
        self.result: decoding.GenerationResult | None = None
        self.button.on_click(lambda _: self.run())
        for w in (self.n, self.temperature, self.top_k, self.top_p, self.use_cache, self.seed):
            w.observe(lambda _change: self.run(), names="value")
        controls = W.VBox([self.prompt, W.HBox([W.VBox([self.n, self.temperature, self.top_k, self.top_p]),
                                                 W.VBox([self.delay, self.seed, self.use_cache, self.button])])])
        panel = W.HBox([W.VBox([W.HTML("<b>생성된 토큰</b> (마우스를 올리면 ms와 후보)"), self.tokens], layout=W.Layout(width="62%")),
                        W.VBox([W.HTML("<b>방금 고른 토큰의 후보 top-5</b>"), self.top], layout=W.Layout(width="36%"))])
        super().__init__([controls, self.status, panel])

    def settings(self) -> dict:
        """The current control values as keyword arguments of :func:`decodelab.generate`."""
        return dict(
            temperature=float(self.temperature.value),
            top_k=int(self.top_k.value) or None,
            top_p=float(self.top_p.value) if self.top_p.value < 1 else None,
            use_cache=bool(self.use_cache.value),
            seed=int(self.seed.value),
        )

    def run(self) -> decoding.GenerationResult | None:
        """Generate with the current settings, streaming tokens into the widget. Errors are shown
        in the widget in Korean (nothing is raised into the notebook)."""
        spans: list[str] = []
        delay = self.delay.value / 1000.0
        self.status.value = "<i>생성 중…</i>"

        def on_step(step: decoding.Step) -> None:
            tip = html.escape(f"#{step.index} 위치 {step.position} · {step.ms:.2f} ms · id {step.token_id}")
            colour = "#fef3c7" if step.index == 0 else "#e0f2fe"
            spans.append(f'<span title="{tip}" style="background:{colour};border-radius:3px;margin:1px;padding:0 2px;'
                         f'font-family:monospace">{visible_html(step.piece) or "▯"}</span>')
            self.tokens.value = '<div style="line-height:1.9">' + "".join(spans) + "</div>"
            self.top.value = candidates_html(step)
            if delay:
                time.sleep(delay)

        try:
            r = decoding.generate(self.model, self.tokenizer, self.prompt.value, int(self.n.value), on_step=on_step, **self.settings())
        except (ValueError, TypeError) as e:
            # the tokens of an earlier run are not this input's: clear them with the error
            self.tokens.value = ""
            self.top.value = ""
            self.result = None
            self.status.value = f'<span style="color:#b91c1c">입력 오류: {html.escape(str(e))}</span>'
            return None
        self.result = r
        self.status.value = (
            f"첫 토큰까지의 시간(TTFT) <b>{r.ttft_ms:.1f} ms</b> · 토큰당 출력 시간(TPOT) <b>{r.tpot_ms:.2f} ms</b>"
            f" · {r.tokens_per_s:.0f} tokens/s · 토큰 {len(r.token_ids)}개 · 종료: {r.stopped_by}"
            f" <small>(이 컴퓨터에서 측정, 표시 지연 제외)</small>"
        )
        return r


def decode_explorer(pair=None, **kwargs) -> DecodeExplorer:
    """A :class:`DecodeExplorer` on the course pair's target (``models.default_pair()``, or ``pair.target``), run once."""
    from ...models import default_pair

    pair = pair or default_pair()
    w = DecodeExplorer(pair.target, pair.tokenizer, **kwargs)
    w.run()
    return w


# ------------------------------------------------------------------ figures


def distribution_figure(logits: torch.Tensor, tokenizer, settings: list[dict], k: int = 8):
    """Bar charts of the next-token distribution under several sampling settings.

    Args:
        logits: shape ``(vocab,)``.
        settings: e.g. ``[dict(temperature=1.0), dict(temperature=0.5, top_k=5)]``
            (keyword arguments of :class:`~decodelab.sampling.SamplingConfig`).
        k: how many of the most likely raw tokens to show.

    Returns:
        a matplotlib Figure (one panel per setting).
    """
    from ...plots import new_figure

    idx = torch.topk(decoding.shown_probabilities(logits, SamplingConfig()), k).indices
    labels = [plot_label(tokenizer, int(i)) for i in idx]
    ncols = min(3, len(settings))
    nrows = -(-len(settings) // ncols)
    fig, axes = new_figure(nrows, ncols, figsize=(4.2 * ncols, 0.42 * k * nrows + 0.9 * nrows),
                           squeeze=False)
    flat = list(axes.flat)
    for ax, s in zip(flat, settings):
        cfg = SamplingConfig(**s)
        p = decoding.shown_probabilities(logits, cfg)[idx]
        # horizontal bars: the token labels read left to right, no rotation, most likely on top
        ax.barh(range(k), p.numpy(), color="#3b82f6")
        ax.set_yticks(range(k), labels, fontsize=12)
        ax.invert_yaxis()
        ax.set_xlim(0, 1.02)
        ax.tick_params(axis="x", labelsize=11)
        ax.set_title(_setting_title(s), fontsize=12)
    for ax in flat[len(settings):]:
        ax.set_visible(False)
    for ax in flat[: len(settings)]:
        ax.set_xlabel("확률", fontsize=11)
    fig.tight_layout()
    return fig


def _setting_title(setting: dict) -> str:
    names = {"temperature": "온도", "top_k": "top-k", "top_p": "top-p"}
    return ", ".join(f"{names.get(a, a)} {b}" for a, b in setting.items())


def kv_cache_figure(with_cache: decoding.GenerationResult, without_cache: decoding.GenerationResult):
    """Milliseconds per decode step against position, with and without the KV cache.

    Args:
        with_cache, without_cache: results of :func:`decodelab.generate` with ``use_cache`` True
            and False (same prompt and length).

    Returns:
        a matplotlib Figure.
    """
    from ...plots import new_figure

    fig, ax = new_figure(figsize=(10, 4.2))
    for r, label, colour in ((with_cache, "KV 캐시 사용", "#2563eb"), (without_cache, "KV 캐시 없음", "#dc2626")):
        steps = r.steps[1:]
        ax.plot([s.position for s in steps], [s.ms for s in steps], ".-", color=colour, label=label, lw=1)
    ax.set_xlabel("토큰 위치 (지금까지의 토큰 수)", fontsize=12)
    ax.set_ylabel("디코드 스텝 시간 (ms)", fontsize=12)
    ax.set_title("KV 캐시가 있으면 스텝마다 새 토큰 하나만 계산합니다 (이 컴퓨터에서 측정)", fontsize=13)
    ax.tick_params(labelsize=11)
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=11)
    fig.tight_layout()
    return fig

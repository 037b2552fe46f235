"""Views for notebook 04 (speculative decoding): rounds as coloured HTML, sliders, figures.

Views only: every number comes from :mod:`decodelab.speculative` and
:mod:`decodelab.speculative_experiments`.
"""

from __future__ import annotations

import html

import ipywidgets as W

from ... import speculative as spec
from ...latency import expected_speedup
from ...plots import plot_label
from ...speculative_experiments import GammaRow
from .decode import visible_html

#: colours of the four outcomes of a drafted token (+ the prefill token and plain steps)
COLOURS = {
    "accepted": ("#bbf7d0", "수락(accepted)"),
    "rejected": ("#fecaca", "거절(rejected)"),
    "recovered": ("#fed7aa", "복구 토큰(recovered)"),
    "bonus": ("#bfdbfe", "보너스(bonus)"),
    "plain": ("#e5e7eb", "대상 모델만(plain)"),
    "first": ("#fef3c7", "프리필의 첫 토큰"),
}


# table cells: the token chips wrap inside their cell (inline-block chips, normal white-space) and
# every cell keeps 10 px to its right, so a long row of chips never runs into the "수락" column
_TD = "padding:2px 10px 2px 4px;vertical-align:top"
_TD_NUM = _TD + ";text-align:right;white-space:nowrap"
_TD_TOKENS = _TD + ";text-align:left;white-space:normal;line-height:1.9"


def _chip(text: str, status: str, tip: str = "", *, raw: bool = False) -> str:
    colour = COLOURS[status][0]
    strike = "text-decoration:line-through;color:#7f1d1d;" if status == "rejected" else ""
    body = html.escape(text) if raw else (visible_html(text) or "▯")
    return (f'<span title="{html.escape(tip)}" style="background:{colour};{strike}border-radius:3px;margin:1px;'
            f'padding:0 3px;font-family:monospace;display:inline-block;white-space:pre">{body}</span>')


def legend_html() -> str:
    """The colour legend shared by the views (␣ = space, ⏎ = newline in token chips)."""
    chips = " ".join(_chip(label, key, raw=True) for key, (_, label) in COLOURS.items())
    return f"{chips} <small>(토큰 안의 ␣ 는 띄어쓰기, ⏎ 는 줄바꿈)</small>"


def round_pieces(result: spec.SpeculativeResult, tokenizer) -> list[dict]:
    """Round-by-round token texts for display (used by the notebook's HTML view).

    Returns one dict per round: ``{"round": i, "tokens": [(text, status), ...]}`` where status is
    ``"accepted"``, ``"rejected"`` (drafted but thrown away), ``"recovered"``, ``"bonus"``,
    ``"plain"``; texts are each token's own string (byte-level pieces decoded one by one).
    """
    out = []
    for i, r in enumerate(result.rounds, start=1):
        toks = [(t, "accepted" if j < r.accepted else "rejected") for j, t in enumerate(r.proposed)]
        if r.token is not None:
            toks.append((r.token, r.kind))
        out.append({"round": i, "tokens": [(tokenizer.decode([t]), s) for t, s in toks]})
    return out


def rounds_html(result: spec.SpeculativeResult, tokenizer, max_rounds: int | None = None) -> str:
    """An HTML table: one row per round with the drafted tokens coloured by outcome.

    Columns: round number, tokens (accepted / rejected / recovered / bonus), accepted count,
    draft ms and verification ms (measured on this computer).
    """
    rows = [f'<tr><td style="{_TD_NUM}">0</td><td style="{_TD_TOKENS}">{_chip(tokenizer.decode([result.token_ids[0]]), "first")}</td>'
            f'<td colspan="3" style="{_TD}"><small>프리필(대상 모델) · TTFT {result.ttft_ms:.1f} ms</small></td></tr>']
    shown = result.rounds if max_rounds is None else result.rounds[:max_rounds]
    for i, (r, info) in enumerate(zip(shown, round_pieces(result, tokenizer)), start=1):
        chips = "".join(_chip(text, status, f"{status}") for text, status in info["tokens"])
        rows.append(
            f'<tr><td style="{_TD_NUM}">{i}</td><td style="{_TD_TOKENS}">{chips}</td><td style="{_TD_NUM}">{r.accepted}/{len(r.proposed)}</td>'
            f'<td style="{_TD_NUM}">{r.draft_ms:.1f}</td><td style="{_TD_NUM}">{r.verify_ms:.1f}</td></tr>'
        )
    more = "" if len(shown) == len(result.rounds) else f"<div><small>… 나머지 {len(result.rounds) - len(shown)}라운드 생략</small></div>"
    return (
        f"<div>{legend_html()}</div>"
        '<table style="border-collapse:collapse;font-size:14px;table-layout:auto"><tr>'
        f'<th style="{_TD_NUM}">라운드</th><th style="{_TD_TOKENS}">토큰</th><th style="{_TD_NUM}">수락</th>'
        f'<th style="{_TD_NUM}">초안 ms</th><th style="{_TD_NUM}">검증 ms</th></tr>' + "".join(rows) + "</table>" + more
    )


def metrics_html(result: spec.SpeculativeResult, base_ms_per_token: float | None = None, *,
                 alpha: bool = True) -> str:
    """One line of vLLM-named metrics (and the speedup, if a target-only ms/token is given).

    ``alpha=False`` leaves out Leviathan's acceptance probability alpha (notebook 04 shows only the
    counters vLLM reports; notebook 04b asks the student to predict alpha against the rate first)."""
    per_pos = ", ".join(f"{a:.2f}" for a in result.per_position_acceptance_rate)
    speed = ""
    if base_ms_per_token:
        speed = f" · 대상 모델만 {base_ms_per_token:.2f} ms/토큰 → <b>{base_ms_per_token / result.ms_per_token:.2f}배</b>"
    shown_alpha = f"수락 확률 α <b>{result.alpha:.2f}</b> · " if alpha else ""
    return (
        f"수락률(acceptance rate) <b>{result.acceptance_rate:.2f}</b> · 평균 수락 길이(mean acceptance length) "
        f"<b>{result.mean_acceptance_length:.2f}</b> · {shown_alpha}"
        f"위치별 수락률 [{per_pos}] · 대상 모델 순전파 "
        f"{result.target_forward_calls}번 · 초안 모델 순전파 {result.draft_forward_calls}번 · "
        f"{result.ms_per_token:.2f} ms/토큰{speed}"
    )


class SpeculativeExplorer(W.VBox):
    """Sliders for gamma and temperature; a release re-runs a short speculative generation.

    Shows the rounds (:func:`rounds_html`), the output text, and the metrics. Target-only greedy
    ms/token is measured once at start for the speedup figure (greedy only).

    Args:
        target, draft, tokenizer: e.g. ``decodelab.models.bundled()``'s members.
        prompt: the prompt; max_new_tokens: tokens per run (keep it short: each release re-runs).
        seed: sampling seed (temperature > 0).
        speed_and_alpha: show the speedup over target-only decoding and alpha (``False`` in notebook 04,
            which comes before the predictions of notebook 04b on them: the counters only).
        gamma: the slider's start; max_gamma: its end (notebook 04 stops at 5: notebook 04b asks for
            the mean acceptance length at gamma 6 before measuring it).

    Raises:
        ValueError: (Korean) ``gamma`` outside 1..``max_gamma``.
    """

    def __init__(self, target, draft, tokenizer, prompt: str = "문서를 저장하려면", max_new_tokens: int = 24,
                 seed: int = 0, gamma: int = 4, speed_and_alpha: bool = True, max_gamma: int = 8):
        from ...decoding import generate

        if not 1 <= int(gamma) <= int(max_gamma):
            raise ValueError(f"gamma={gamma}, max_gamma={max_gamma}: 1 ≤ gamma ≤ max_gamma 가 되도록 고르세요.")

        self.target, self.draft, self.tokenizer = target, draft, tokenizer
        self.prompt, self.max_new_tokens, self.seed = prompt, max_new_tokens, seed
        self.speed_and_alpha = bool(speed_and_alpha)
        style = {"description_width": "11.5em"}   # em: grows with the slide's widget font
        self.gamma = W.IntSlider(value=gamma, min=1, max=int(max_gamma), description="초안 토큰 수 γ", continuous_update=False,
                                 style=style, layout=W.Layout(width="32em"))
        self.temperature = W.FloatSlider(value=0.0, min=0.0, max=1.5, step=0.1, description="온도(temperature)",
                                         continuous_update=False, style=style, layout=W.Layout(width="32em"))
        self.text = W.HTML()
        self.metrics = W.HTML()
        self.table = W.HTML()
        base = generate(target, tokenizer, prompt, max_new_tokens, top_candidates=0, stop_at_eos=False)
        self.base_ms_per_token = base.e2e_ms / len(base.token_ids)
        self.result: spec.SpeculativeResult | None = None
        for w in (self.gamma, self.temperature):
            w.observe(lambda _change: self.run(), names="value")
        super().__init__([W.HBox([self.gamma, self.temperature]), self.metrics, self.text, self.table])
        self.run()

    def run(self) -> spec.SpeculativeResult:
        """Re-run with the current slider values and refresh the view."""
        t = float(self.temperature.value)
        r = spec.speculative_generate(self.target, self.draft, self.tokenizer, self.prompt, self.max_new_tokens,
                                      num_speculative_tokens=int(self.gamma.value), temperature=t, seed=self.seed,
                                      stop_at_eos=False)
        self.result = r
        self.metrics.value = metrics_html(r, self.base_ms_per_token if t == 0 and self.speed_and_alpha else None,
                                          alpha=self.speed_and_alpha)
        self.text.value = (f"<div><b>출력</b>: <span style='font-family:monospace'>{html.escape(self.prompt)}"
                           f"<u>{html.escape(r.text)}</u></span></div>")
        self.table.value = rounds_html(r, self.tokenizer)
        return r


def speculative_explorer(pair=None, **kwargs) -> SpeculativeExplorer:
    """:class:`SpeculativeExplorer` over the course pair (``models.default_pair()``, or ``pair``)."""
    from ...models import default_pair

    pair = pair or default_pair()
    return SpeculativeExplorer(pair.target, pair.draft, pair.tokenizer, **kwargs)


# --------------------------------------------------------------------------------------------
# figures (matplotlib through decodelab.plots; pyplot-tracked: in Jupyter the inline backend shows
# each at the end of its cell and closes it; elsewhere close them with ``plt.close(fig)``)


def speedup_figure(rows: list[GammaRow], c: float, verify_cost: dict | None = None):
    """Measured speedup per gamma (bars) against the formula's prediction with the measured
    alpha (:attr:`~decodelab.speculative_experiments.GammaRow.alpha`, accepted / evaluated draft positions)
    and ``c`` (Leviathan et al. 2023, Thm 3.8), and, if ``verify_cost``
    (``{gamma: verification time / target step}``, from :func:`~decodelab.speculative_experiments.measure_costs`)
    is given, the same formula with the measured verification cost. Returns the figure."""
    from ...plots import new_figure

    fig, ax = new_figure(figsize=(7, 3.6))
    g = [r.gamma for r in rows]
    ax.bar(g, [r.speedup for r in rows], color="#60a5fa", label="측정 (이 컴퓨터)")
    ax.plot(g, [expected_speedup(r.alpha, r.gamma, c) for r in rows], "o-", color="#b45309",
            label=f"식의 예측 (측정한 α, c = {c:.3f}, 검증 비용 1)")
    if verify_cost:
        gs = [r for r in rows if r.gamma in verify_cost]
        ax.plot([r.gamma for r in gs], [expected_speedup(r.alpha, r.gamma, c, verify_cost=verify_cost[r.gamma])
                                        for r in gs], "s--", color="#7c3aed", label="같은 식 + 측정한 검증 비용")
    ax.axhline(1.0, color="#444", lw=0.8, ls="--")
    ax.set_xlabel("초안 토큰 수 γ")
    ax.set_ylabel("대상 모델만 쓸 때 대비 속도 (배)")
    ax.set_xticks(g)
    ax.legend(loc="best", fontsize=9)
    fig.tight_layout()
    return fig


def exactness_figure(exp: dict, tokenizer):
    """Histogram: the target's p, target-only samples and speculative samples over the most
    likely tokens (+ "나머지"), with the draft's q for contrast, drawn from the bins
    :func:`~decodelab.speculative_experiments.exactness_experiment` computed (``exp["top"]``,
    ``exp["binned"]``). Returns the figure."""
    from ...plots import new_figure

    n = int(exp["target_counts"].sum())
    b = exp["binned"]
    labels = [plot_label(tokenizer, int(i)) for i in exp["top"]] + ["나머지"]
    series = [
        ("대상 모델 p (정확한 값)", b["p"].tolist(), "#111827"),
        ("초안 모델 q", b["q"].tolist(), "#d1d5db"),
        (f"대상 모델만 샘플링 ({n}회)", b["target"].tolist(), "#60a5fa"),
        (f"투기적 샘플링 ({n}회)", b["spec"].tolist(), "#f59e0b"),
    ]
    fig, ax = new_figure(figsize=(8, 3.6))
    width = 0.2
    for j, (name, vals, colour) in enumerate(series):
        ax.bar([i + (j - 1.5) * width for i in range(len(labels))], vals, width, label=name, color=colour)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, fontsize=9)
    ax.set_ylabel("확률")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig

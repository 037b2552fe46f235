"""The KV-memory calculator: how many bytes a KV cache takes, with the formula shown.

:func:`kv_calculator` shows sliders for the KV heads, head size, layers, context length and batch,
a dropdown for the stored number format (bytes per value), and a line that writes the formula out
with the chosen numbers, per token and in total (bytes, GB and GiB). A model dropdown fills the
inputs from a published config.json (:mod:`decodelab.profiles`); moving any input makes it
"직접 설정".

No logic lives here: the bytes come from :func:`decodelab.latency.kv_cache_bytes` (the formula
and its source are in its docstring; it holds for MHA/GQA, not for DeepSeek's MLA, as the
caption says).
"""

from __future__ import annotations

from ... import latency as lat
from ... import profiles
from ..._check import check, fail

__all__ = ["FORMATS", "KVCalculator", "PRESET_MODELS", "kv_calculator"]

#: The number formats offered, as (label, bytes per value) (bytes: :data:`decodelab.profiles.DTYPE_BYTES`).
FORMATS = (("FP32 (4바이트)", "fp32"), ("BF16 / FP16 (2바이트)", "bf16"), ("FP8 (1바이트)", "fp8"))

#: The preset dropdown: (label, :func:`decodelab.profiles.get_model` name); published config.json
#: values (decodelab/assets/presets.csv) and the bundled target's own config.json.
PRESET_MODELS = (("이 강좌의 대상 모델", "bundled-target"), ("Llama-3-8B", "Llama-3-8B"),
                 ("Llama-3-70B", "Llama-3-70B"), ("Qwen3-32B", "Qwen3-32B"))

#: Context lengths of the context slider, in tokens.
CONTEXTS = (1, 128, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072)


class KVCalculator:
    """The calculator's controls and its result line.

    Attributes:
        widget: the ``ipywidgets.VBox`` to display. model, kv_heads, head_size, layers, dtype,
        context, batch: the controls. result: an ``HTML`` with the formula and the bytes.
        per_token, total: the last bytes computed (floats).
    """

    CUSTOM = "직접 설정"

    def __init__(self, model=None, *, context_tokens: int = 8192, batch: int = 1, dtype: str = "bf16"):
        import ipywidgets as W

        from ...attention import attention_shapes

        shapes = attention_shapes(model if model is not None else profiles.get_model("Llama-3-8B"))
        dtype = profiles.dtype_key(dtype)
        if dtype not in [k for _, k in FORMATS]:
            raise fail("dtype", dtype, "계산기가 고를 수 있는 형식이 아닙니다", ", ".join(k for _, k in FORMATS))
        context_tokens = check("context_tokens", context_tokens, "맥락(KV 캐시) 토큰 수", low=1, integer=True,
                               high=CONTEXTS[-1])
        context_tokens = min(CONTEXTS, key=lambda c: abs(c - context_tokens))
        batch = check("batch", batch, "배치 크기", low=1, high=256, integer=True)
        style = {"description_width": "9em"}
        layout = W.Layout(width="36em")
        self._shapes = {key: self._shape_of(profiles.get_model(key)) for _, key in PRESET_MODELS}
        here = (shapes.n_kv_heads, shapes.d_head, shapes.n_layers)
        start = next((key for key, s in self._shapes.items() if s == here), self.CUSTOM)
        self.model = W.Dropdown(options=list(PRESET_MODELS) + [(self.CUSTOM, self.CUSTOM)], value=start,
                                description="모델", style=style, layout=W.Layout(width="24em"))
        self.kv_heads = W.IntSlider(value=shapes.n_kv_heads, min=1, max=128, description="KV 헤드 수", style=style,
                                    layout=layout, continuous_update=False)
        self.head_size = W.IntSlider(value=shapes.d_head, min=8, max=512, step=8, description="헤드 크기",
                                     style=style, layout=layout, continuous_update=False)
        self.layers = W.IntSlider(value=shapes.n_layers, min=1, max=128, description="층 수", style=style,
                                  layout=layout, continuous_update=False)
        self.dtype = W.Dropdown(options=list(FORMATS), value=dtype, description="값의 형식", style=style,
                                layout=W.Layout(width="24em"))
        self.context = W.SelectionSlider(options=[(f"{c:,}", c) for c in CONTEXTS], value=context_tokens,
                                         description="맥락 (토큰)", style=style, layout=layout,
                                         continuous_update=False)
        self.batch = W.IntSlider(value=int(batch), min=1, max=256, description="배치 (요청 수)", style=style,
                                 layout=layout, continuous_update=False)
        self.result = W.HTML()
        caption = W.HTML(
            "<div style='font-size:13px; line-height:1.45'>식: 2(키와 값) × 층 수 × KV 헤드 수 × 헤드 크기 × 값 하나의 바이트"
            " × 맥락 토큰 × 배치. 곱하는 것은 쿼리 헤드 수가 아니라 KV 헤드 수입니다(GQA). 이 식은 멀티헤드 어텐션(MHA)과"
            " GQA의 것입니다. DeepSeek-V2·V3의 MLA(multi-head latent attention)는 키와 값 대신 압축한 잠재 벡터 하나를"
            " 토큰마다 저장하므로 이 식으로 세지 않습니다. 모델 프리셋의 값은 공개된 config.json에서 읽었습니다"
            " (facts/hardware.md \"Attention shapes\").</div>")
        self.per_token = self.total = 0.0
        self._filling = False
        self.widget = W.VBox([self.model, self.kv_heads, self.head_size, self.layers, self.dtype, self.context,
                              self.batch, self.result, caption])
        self.model.observe(self._on_model, names="value")
        for w in (self.kv_heads, self.head_size, self.layers):
            w.observe(self._on_shape, names="value")
        for w in (self.dtype, self.context, self.batch):
            w.observe(self.update, names="value")
        self.update()

    @staticmethod
    def _shape_of(m) -> tuple[int, int, int]:
        return m.n_kv_heads, m.d_head, m.n_layers

    def _on_model(self, change=None) -> None:
        name = self.model.value
        if name == self.CUSTOM:
            return
        self._filling = True
        try:
            self.kv_heads.value, self.head_size.value, self.layers.value = self._shapes[name]
        finally:
            self._filling = False
        self.update()

    def _on_shape(self, change=None) -> None:
        if self._filling:
            return
        name = self.model.value
        if name != self.CUSTOM and self._shapes[name] != (self.kv_heads.value, self.head_size.value, self.layers.value):
            self._filling = True
            try:
                self.model.value = self.CUSTOM
            finally:
                self._filling = False
        self.update()

    def update(self, change=None) -> None:
        """Recompute the bytes and rewrite the result line (the controls' observers call it)."""
        if self._filling:
            return
        L, H, D = self.layers.value, self.kv_heads.value, self.head_size.value
        b = profiles.DTYPE_BYTES[self.dtype.value]
        S, B = self.context.value, self.batch.value
        self.per_token = float(lat.kv_cache_bytes(L, H, D, b))
        self.total = float(lat.kv_cache_bytes(L, H, D, b, S, B))
        self.result.value = (
            "<div style='font-size:15px; line-height:1.6'>"
            f"토큰당: 2 × {L}층 × KV 헤드 {H}개 × 헤드 크기 {D} × {b:g}바이트 = <b>{self.per_token:,.0f} B</b>"
            f" = {_size(self.per_token)}<br>"
            f"전체: {self.per_token:,.0f} B × 맥락 {S:,} 토큰 × 배치 {B} = <b>{self.total:,.0f} B</b>"
            f" = {_size(self.total)}</div>")


def _size(nbytes: float) -> str:
    """``nbytes`` in the largest decimal unit it reaches, with the binary one beside it:
    ``"1.07 GB (1 GiB)"``, ``"7.86 MB (7.5 MiB)"``, ``"15.4 KB (15 KiB)"``."""
    for power, dec, binary in ((3, "GB", "GiB"), (2, "MB", "MiB"), (1, "KB", "KiB")):
        if nbytes >= 1000**power:
            return f"{nbytes / 1000**power:,.3g} {dec} ({nbytes / 1024**power:,.3g} {binary})"
    return f"{nbytes:,.0f} B"


def kv_calculator(model=None, *, context_tokens: int = 8192, batch: int = 1, dtype: str = "bf16"):
    """The KV-memory calculator widget.

    Args:
        model: where the first values come from: a transformers model or config, or a
            :class:`decodelab.profiles.ModelProfile` (default Llama-3-8B; read with
            :func:`decodelab.attention.attention_shapes`).
        context_tokens: the first context length (1 to 131,072; the nearest of :data:`CONTEXTS`).
        batch: the first batch size (1-256). dtype: the first number format (fp32, bf16, fp8).

    Raises:
        TypeError / ValueError: (Korean) a value outside those ranges, or a model without
            attention sizes.

    Returns:
        An ``ipywidgets.VBox``; its ``.calculator`` attribute is the :class:`KVCalculator`
        (``.calculator.per_token`` and ``.total`` hold the bytes shown).
    """
    calc = KVCalculator(model, context_tokens=context_tokens, batch=batch, dtype=dtype)
    calc.widget.calculator = calc
    return calc.widget

"""Attention, one head at a time: the query, key and value of each position, and the weights.

Notebook 01's primer ("어텐션: 쿼리, 키, 값") uses three things from here:

- :func:`attention_shapes`: the head counts and sizes a model's attention has (from its config):
  query heads, key/value (KV) heads, the head size and the group of query heads that share one
  KV head (grouped-query attention, GQA; Ainslie et al. 2023, arXiv 2305.13245).
- :func:`head_attention`: one head's queries, keys, values and attention weights for a prompt,
  computed step by step as Vaswani et al. (2017, "Attention Is All You Need", eq. 1) write it,
  ``softmax(Q K^T / sqrt(d_head)) V``, with the causal mask (a position sees only itself and the
  positions before it). ``tests/test_attention.py`` checks the weights against the ones
  transformers' own (eager) attention returns with ``output_attentions=True``.
- :func:`cached_kv`: the keys and values a KV cache holds for one layer (what the model keeps so
  that later tokens can read them again).

Its build-it task ("🛠️ 어텐션 헤드 하나를 직접", :func:`decodelab.teach.build.check_head_attention`)
uses two more: :func:`layer_inputs` (what one layer's attention starts from: the normalised layer
input ``x`` and the learned weights ``W_Q``, ``W_K``, ``W_V``, plus the rotary position embedding)
and :func:`model_attention` (the model's own keys, values and per-head outputs for a prompt, read
from its KV cache and its forward pass: what the student's attention is checked against).

Llama-family models only (the bundled pair, and any ``LlamaForCausalLM``-shaped model whose
layers have ``self_attn.q_proj``/``k_proj``/``v_proj`` and rotary position embeddings).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from ._check import check, fail

__all__ = ["AttentionShapes", "HeadAttention", "LayerInputs", "ModelAttention", "attention_figure", "attention_shapes",
           "cached_kv", "head_attention", "layer_inputs", "model_attention"]


@dataclass(frozen=True)
class AttentionShapes:
    """The sizes of a decoder's attention, per layer.

    Attributes:
        name: the model's name (its config's ``_name_or_path``, or the profile's name).
        n_layers: layers (each has its own attention).
        d_model: the hidden size (numbers per position entering a layer).
        n_q_heads: query heads per layer (``num_attention_heads``).
        n_kv_heads: key/value heads per layer (``num_key_value_heads``; equal to ``n_q_heads``
            without GQA).
        d_head: numbers in one head's query, key or value vector (``head_dim``).
    """

    name: str
    n_layers: int
    d_model: int
    n_q_heads: int
    n_kv_heads: int
    d_head: int

    @property
    def group(self) -> int:
        """Query heads that share one KV head: ``n_q_heads // n_kv_heads`` (1 = no sharing)."""
        return self.n_q_heads // self.n_kv_heads

    def kv_head_of(self, head: int) -> int:
        """The KV head that query head ``head`` reads (transformers' ``repeat_kv`` order: query
        heads ``0..group-1`` read KV head 0, the next ``group`` read KV head 1, ...)."""
        return head // self.group


def attention_shapes(model) -> AttentionShapes:
    """The attention sizes of ``model``.

    Args:
        model: a transformers model (its ``.config`` is read), a transformers config, or a
            :class:`decodelab.profiles.ModelProfile` (e.g. ``profiles.get_model("Llama-3-8B")``,
            built from the published config.json).

    Returns:
        :class:`AttentionShapes` (counts, and sizes in numbers per vector, not bytes).

    Raises:
        TypeError: ``model`` has no attention sizes (not a model, config or profile).
        ValueError: the query heads are not a whole multiple of the KV heads.
    """
    from .profiles import ModelProfile

    if isinstance(model, ModelProfile):
        shapes = AttentionShapes(model.name, model.n_layers, model.d_model, model.n_q_heads, model.n_kv_heads,
                                 model.d_head)
    else:
        cfg = getattr(model, "config", model)
        if not hasattr(cfg, "num_attention_heads") or not hasattr(cfg, "hidden_size"):
            raise fail("model", type(model).__name__, "어텐션 크기를 읽을 수 없습니다", "transformers 모델, 그 config, "
                       "또는 decodelab.profiles.get_model(...)의 결과", TypeError)
        n_q = int(cfg.num_attention_heads)
        n_kv = int(getattr(cfg, "num_key_value_heads", None) or n_q)
        d_head = int(getattr(cfg, "head_dim", None) or cfg.hidden_size // n_q)
        name = str(getattr(cfg, "_name_or_path", "") or getattr(cfg, "model_type", ""))
        shapes = AttentionShapes(Path(name).name if name else name,
                                 int(cfg.num_hidden_layers), int(cfg.hidden_size), n_q, n_kv, d_head)
    if shapes.n_q_heads % shapes.n_kv_heads:
        raise fail("num_key_value_heads", shapes.n_kv_heads, "쿼리 헤드 수가 KV 헤드 수의 배수가 아닙니다",
                   f"{shapes.n_q_heads}의 약수")
    return shapes


@dataclass
class HeadAttention:
    """One attention head of one layer, for every position of a prompt.

    Attributes:
        token_ids: the prompt's token ids (``S`` of them).
        layer, head: which layer and which query head (0-based).
        kv_head: the KV head this query head reads (= ``head`` without GQA).
        query, key, value: float32 tensors ``(S, d_head)``; row ``i`` belongs to position ``i``.
            Query and key are after the rotary position embedding (RoPE), as the model uses them.
        scores: float32 ``(S, S)``: ``query @ key.T / sqrt(d_head)``, ``-inf`` above the diagonal
            (a position does not see later positions).
        weights: float32 ``(S, S)``: the softmax of each row of ``scores``; row ``i`` is how much
            position ``i`` takes from each position ``j <= i``; every row sums to 1, zeros above
            the diagonal.
        output: float32 ``(S, d_head)``: ``weights @ value``, this head's output (before the
            layer's output projection ``o_proj`` mixes the heads).
    """

    token_ids: list[int]
    layer: int
    head: int
    kv_head: int
    query: torch.Tensor
    key: torch.Tensor
    value: torch.Tensor
    scores: torch.Tensor
    weights: torch.Tensor
    output: torch.Tensor


def _prompt_ids(model, tokenizer, prompt) -> torch.Tensor:
    """``prompt`` as a ``(1, S)`` LongTensor; token ids checked against the model's vocabulary
    (:func:`decodelab.decoding.token_ids_tensor`: Korean errors, not torch's ``IndexError``)."""
    from .decoding import token_ids_tensor

    if isinstance(prompt, str):
        if not prompt:
            raise fail("prompt", prompt, "빈 프롬프트입니다", "글자가 하나 이상인 문자열")
        prompt = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    ids = token_ids_tensor(model, prompt, "prompt").reshape(1, -1)
    if ids.shape[1] == 0:
        raise fail("prompt", prompt, "토큰이 하나도 없습니다", "토큰이 1개 이상인 프롬프트")
    return ids


@dataclass
class LayerInputs:
    """What one layer's attention starts from, for every position of a prompt (float32, CPU).

    Queries, keys and values are not stored here: they are computed from these, as
    ``Q = x @ W_Q``, ``K = x @ W_K``, ``V = x @ W_V`` (then, per head, a slice of ``d_head``
    columns; queries and keys rotated by :meth:`rope`). The weights are learned once and shared
    by every request; ``x`` (and so every query, key and value) belongs to this prompt.

    Attributes:
        token_ids: the prompt's ``S`` token ids. layer: the layer (0-based).
        x: ``(S, d_model)``: the layer's input (the hidden states after the layers before it),
            normalised by the layer's ``input_layernorm`` (RMSNorm), as the attention reads it.
        W_Q: ``(d_model, n_q_heads * d_head)``: the learned query weights (``q_proj.weight.T``);
            columns ``h * d_head .. (h + 1) * d_head - 1`` belong to query head ``h``.
        W_K, W_V: ``(d_model, n_kv_heads * d_head)``: the learned key and value weights, sliced the
            same way per KV head.
        n_q_heads, n_kv_heads, d_head: the sizes (:class:`AttentionShapes`).
        cos, sin: ``(S, d_head)``: the rotary position embedding's tables for positions ``0..S-1``.
    """

    token_ids: list[int]
    layer: int
    x: torch.Tensor
    W_Q: torch.Tensor
    W_K: torch.Tensor
    W_V: torch.Tensor
    n_q_heads: int
    n_kv_heads: int
    d_head: int
    cos: torch.Tensor
    sin: torch.Tensor

    @property
    def group(self) -> int:
        """Query heads per KV head (GQA): query head ``h`` reads KV head ``h // group``."""
        return self.n_q_heads // self.n_kv_heads

    def rope(self, t: torch.Tensor) -> torch.Tensor:
        """``t`` ``(S, d_head)`` (one head's queries or keys, row ``i`` = position ``i``) rotated by
        the rotary position embedding (RoPE; Su et al. 2021, arXiv 2104.09864), as the model
        does: ``t * cos + rotate_half(t) * sin`` (transformers' ``apply_rotary_pos_emb``). Values
        are not rotated. Raises ValueError (Korean) for another shape."""
        allowed = f"모양 {tuple(self.cos.shape)} = (위치 수, 헤드 크기)인 텐서: 헤드 하나의 쿼리나 키"
        if not isinstance(t, torch.Tensor):
            raise fail("rope(t)", type(t).__name__, "텐서가 아닙니다", allowed, TypeError)
        if tuple(t.shape) != tuple(self.cos.shape):
            raise fail("rope(t): t.shape", tuple(t.shape), "헤드 하나의 쿼리나 키의 모양이 아닙니다", allowed)
        from transformers.models.llama.modeling_llama import rotate_half

        return t * self.cos + rotate_half(t) * self.sin


def _llama_attention(model, layer: int):
    """``(decoder, block)`` of ``layer``; refuses attention this module does not compute (biases on
    the projections, Qwen3's per-head q_norm/k_norm), rather than give numbers the model does not."""
    decoder = model.model
    block = decoder.layers[layer]
    attn = block.self_attn
    if any(getattr(getattr(attn, n), "bias", None) is not None for n in ("q_proj", "k_proj", "v_proj")) or hasattr(
            attn, "q_norm"):
        raise fail("model", type(model).__name__, "쿼리·키·값 투영에 bias나 q_norm/k_norm이 있는 어텐션은 다루지 않습니다",
                   "Llama 계열 모델(attention_bias=False), 예: decodelab.load_models().target", TypeError)
    return decoder, block


def layer_inputs(model, tokenizer, prompt, *, layer: int = 0) -> LayerInputs:
    """The normalised input and the learned attention weights of ``layer`` for ``prompt``.

    One forward pass (no KV cache) gives the hidden states entering ``layer``; its
    ``input_layernorm`` normalises them; the weights are the layer's ``q_proj``, ``k_proj``,
    ``v_proj`` matrices transposed (so ``Q = x @ W_Q``, Vaswani et al. 2017, sec. 3.2.2, writes
    ``Q W_i^Q``); ``cos``/``sin`` come from the model's own rotary embedding.

    Args:
        model: a Llama-family transformers causal LM without projection biases.
        tokenizer: its tokenizer (used when ``prompt`` is a string).
        prompt: a string (tokenized without special tokens) or a sequence of ``S >= 1`` token ids.
        layer: ``0 <= layer < n_layers``.

    Returns:
        :class:`LayerInputs` (float32 tensors on the CPU, copies: changing them changes nothing
        in the model).

    Raises:
        ValueError: an empty prompt, a token id outside the vocabulary, ``layer`` out of range
            (Korean, with the range). TypeError: ``layer`` not an int; a model whose attention
            has projection biases or q/k norms.
    """
    shapes = attention_shapes(model)
    layer = check("layer", layer, "층 번호", integer=True, high=shapes.n_layers - 1,
                  hint=f"이 모델의 층은 0~{shapes.n_layers - 1}")
    ids = _prompt_ids(model, tokenizer, prompt)
    decoder, block = _llama_attention(model, layer)
    attn = block.self_attn
    with torch.inference_mode():
        out = model(input_ids=ids.to(model.device), use_cache=False, output_hidden_states=True, logits_to_keep=1)
        hidden = out.hidden_states[layer]                      # the input of this layer, (1, S, d_model)
        x = block.input_layernorm(hidden)[0]
        positions = torch.arange(ids.shape[1], device=hidden.device)[None]
        cos, sin = decoder.rotary_emb(hidden, positions)       # (1, S, d_head) each

    def f32(t):
        return t.detach().float().cpu().clone()

    return LayerInputs(ids[0].tolist(), layer, f32(x), f32(attn.q_proj.weight.T), f32(attn.k_proj.weight.T),
                       f32(attn.v_proj.weight.T), shapes.n_q_heads, shapes.n_kv_heads, shapes.d_head, f32(cos[0]),
                       f32(sin[0]))


def head_attention(model, tokenizer, prompt, *, layer: int = 0, head: int = 0) -> HeadAttention:
    """The queries, keys, values and attention weights of one head for ``prompt``.

    From :func:`layer_inputs`: ``Q = rope(x W_Q[:, head slice])``, ``K = rope(x W_K[:, KV head
    slice])``, ``V = x W_V[:, KV head slice]``; then
    ``weights = softmax(Q K^T / sqrt(d_head) + causal mask)`` (Vaswani et al. 2017, eq. 1) and
    ``output = weights V``. With GQA, query head ``h`` reads KV head ``h // group``
    (:meth:`AttentionShapes.kv_head_of`). One forward pass of the layers before ``layer``; no KV
    cache is kept.

    Args:
        model: a Llama-family transformers causal LM (e.g. ``decodelab.load_models().target``).
        tokenizer: its tokenizer (used when ``prompt`` is a string).
        prompt: a string (tokenized without special tokens) or a sequence of ``S >= 1`` token ids.
        layer: ``0 <= layer < n_layers``.
        head: a query head, ``0 <= head < n_q_heads``.

    Returns:
        :class:`HeadAttention` (float32 tensors on the CPU).

    Raises:
        ValueError: an empty prompt, a token id outside the model's vocabulary (negative, or ``>=``
            its rows), or ``layer``/``head`` out of range (Korean, with the range).
        TypeError: ``layer``/``head`` not an int; token ids that are not ints.
    """
    shapes = attention_shapes(model)
    head = check("head", head, "쿼리 헤드 번호", integer=True, high=shapes.n_q_heads - 1,
                 hint=f"이 모델의 쿼리 헤드는 0~{shapes.n_q_heads - 1}")
    inp = layer_inputs(model, tokenizer, prompt, layer=layer)
    d, kv = shapes.d_head, shapes.kv_head_of(head)
    q = inp.rope(inp.x @ inp.W_Q[:, head * d:(head + 1) * d])       # (S, d_head)
    k = inp.rope(inp.x @ inp.W_K[:, kv * d:(kv + 1) * d])
    v = inp.x @ inp.W_V[:, kv * d:(kv + 1) * d]
    n = len(inp.token_ids)
    scores = (q @ k.T) / d ** 0.5
    scores = scores.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return HeadAttention(inp.token_ids, inp.layer, head, kv, q, k, v, scores, weights, weights @ v)


@dataclass
class ModelAttention:
    """The model's own attention in one layer for a prompt, as it ran (the reference a hand-built
    head is checked against).

    Attributes:
        token_ids: the prompt's ``S`` token ids. layer: the layer.
        keys, values: ``(n_kv_heads, S, d_head)``: what the model's KV cache holds after prefill
            (keys after RoPE, values as projected).
        outputs: ``(n_q_heads, S, d_head)``: each query head's attention output, as the model's
            attention computed it (the input of ``o_proj``, split per head).
    """

    token_ids: list[int]
    layer: int
    keys: torch.Tensor
    values: torch.Tensor
    outputs: torch.Tensor


def model_attention(model, tokenizer, prompt, *, layer: int = 0) -> ModelAttention:
    """Run ``model`` on ``prompt`` once (a prefill with a KV cache, as :func:`decodelab.prefill` does) and
    read ``layer``'s keys and values from the cache and each head's output from the forward pass
    (a hook on the input of the layer's ``o_proj``, which concatenates the heads in order).

    Args and errors as :func:`layer_inputs`.

    Returns:
        :class:`ModelAttention` (float32 copies on the CPU).
    """
    from .decoding import forward, new_cache

    shapes = attention_shapes(model)
    layer = check("layer", layer, "층 번호", integer=True, high=shapes.n_layers - 1,
                  hint=f"이 모델의 층은 0~{shapes.n_layers - 1}")
    ids = _prompt_ids(model, tokenizer, prompt)
    _, block = _llama_attention(model, layer)
    seen: list[torch.Tensor] = []
    hook = block.self_attn.o_proj.register_forward_pre_hook(lambda module, args: seen.append(args[0].detach()))
    cache = new_cache(model)
    try:
        forward(model, ids, cache)             # a prefill (the ids were checked above, once)
    finally:
        hook.remove()
    keys, values = cached_kv(cache, layer)
    n = ids.shape[1]
    outputs = seen[0][0].reshape(n, shapes.n_q_heads, shapes.d_head).transpose(0, 1)
    return ModelAttention(ids[0].tolist(), layer, keys[0].float().cpu().clone(), values[0].float().cpu().clone(),
                          outputs.float().cpu().clone())


def cached_kv(cache, layer: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """The keys and values a KV cache holds for one layer.

    Args:
        cache: a ``transformers`` cache (``DecodeState.cache`` after :func:`decodelab.prefill`).
        layer: ``0 <= layer <`` the cache's layer count.

    Returns:
        ``(keys, values)``, each a tensor of shape ``(batch, n_kv_heads, positions, d_head)``
        (the cache's own tensors, not copies).

    Raises:
        ValueError: no cache (``None``), or ``layer`` out of range. TypeError: ``layer`` not an int.
    """
    if cache is None:
        raise fail("cache", None, "KV 캐시가 없습니다", "use_cache=True로 만든 DecodeState의 cache")
    layers = getattr(cache, "layers", None)
    if layers is None:
        raise fail("cache", type(cache).__name__, "층별 키·값을 읽을 수 없는 캐시입니다", "transformers DynamicCache",
                   TypeError)
    layer = check("layer", layer, "층 번호", integer=True, high=len(layers) - 1, hint=f"0~{len(layers) - 1}")
    return layers[layer].keys, layers[layer].values


def attention_figure(result: HeadAttention, tokenizer):
    """One head's attention weights as a grid: row = the position whose query asks, column = the
    position whose key answers; darker = larger weight (0 to 1), the weight written in each cell.

    Args:
        result: from :func:`head_attention`.
        tokenizer: to label the rows and columns with the tokens.

    Returns:
        a matplotlib Figure (pyplot-managed, shown inline by Jupyter).
    """
    from .plots import new_figure
    from .plots import plot_label

    w = result.weights.numpy()
    n = len(result.token_ids)
    labels = [f"{i}: {plot_label(tokenizer, t)}" for i, t in enumerate(result.token_ids)]
    fig, ax = new_figure(figsize=(min(10, 2.4 + 0.7 * n), min(7.5, 1.9 + 0.6 * n)))
    ax.imshow(w, cmap="Blues", vmin=0, vmax=1)
    for i in range(n):
        for j in range(n):
            if j <= i:
                ax.text(j, i, f"{w[i, j]:.2f}", ha="center", va="center", fontsize=10,
                        color="white" if w[i, j] > 0.6 else "#111827")
            else:
                ax.text(j, i, "·", ha="center", va="center", fontsize=10, color="#9ca3af")
    ax.set_xticks(range(n), labels, rotation=45, ha="right", fontsize=11)
    ax.set_yticks(range(n), labels, fontsize=11)
    ax.set_xlabel("키를 내는 위치 (앞 토큰들)", fontsize=12)
    ax.set_ylabel("쿼리를 내는 위치", fontsize=12)
    ax.set_title(f"층 {result.layer}, 헤드 {result.head}의 어텐션 가중치 (행마다 합 1)", fontsize=13)
    fig.tight_layout()
    return fig

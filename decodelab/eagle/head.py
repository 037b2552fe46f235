"""The EAGLE head: one Llama decoder layer that predicts the target's next feature, and its files.

``fc([e(x_{t+1}); f_t]) -> decoder layer -> f_hat_{t+1}`` (Li et al. 2024, arXiv 2401.15077); the
package docstring (:mod:`decodelab.eagle`) says what it is and how it differs from the paper.
"""

from __future__ import annotations

import json
import weakref
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from .._paths import MODELS_DIR

__all__ = ["EAGLE_DIR", "EagleHead", "has_head", "load_head", "new_head", "save_head"]

#: Where the bundled head lives (beside the bundled target and draft).
EAGLE_DIR = MODELS_DIR / "eagle"


def _fingerprint(target) -> list[float]:
    """Shape and two sums of the target's input embedding: identifies the target a head belongs to."""
    w = target.get_input_embeddings().weight.detach().double()
    return [float(w.shape[0]), float(w.shape[1]), round(float(w.sum()), 3), round(float(w.abs().sum()), 3)]


def _rope(theta: float, dim: int, n: int):
    inv = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
    fr = torch.arange(n, dtype=torch.float32)[:, None] * inv[None, :]
    emb = torch.cat([fr, fr], dim=-1)
    return emb.cos(), emb.sin()


def _rotate_half(x):
    a, b = x.chunk(2, dim=-1)
    return torch.cat([-b, a], dim=-1)


class _RMSNorm(nn.Module):
    def __init__(self, n: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
        self.eps = eps

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


class EagleHead(nn.Module):
    """``fc([e(x_{t+1}); f_t]) -> Llama decoder layer -> f_hat_{t+1}`` (shapes ``(B, T, hidden)``).

    The decoder layer is the Llama one (RMSNorm, RoPE attention, SiLU-gated MLP; transformers
    ``modeling_llama.py``) with the target's sizes. Embeddings and LM head are not part of the
    module: the caller passes embedded tokens and reads out with the target's LM head.

    Args:
        hidden, heads, kv_heads, ff: the target's sizes. eps, theta: its RMSNorm epsilon and RoPE base.
    """

    def __init__(self, hidden: int, heads: int, kv_heads: int, ff: int, eps: float = 1e-5, theta: float = 10000.0):
        super().__init__()
        self.hidden, self.heads, self.kv_heads, self.ff = hidden, heads, kv_heads, ff
        self.head_dim = hidden // heads
        self.eps, self.theta = eps, theta
        self.fc = nn.Linear(2 * hidden, hidden, bias=True)
        self.input_layernorm = _RMSNorm(hidden, eps)
        self.q_proj = nn.Linear(hidden, heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(heads * self.head_dim, hidden, bias=False)
        self.post_attention_layernorm = _RMSNorm(hidden, eps)
        self.gate_proj = nn.Linear(hidden, ff, bias=False)
        self.up_proj = nn.Linear(hidden, ff, bias=False)
        self.down_proj = nn.Linear(ff, hidden, bias=False)
        self._cos, self._sin = _rope(theta, self.head_dim, 0)

    def config(self) -> dict:
        return {"hidden": self.hidden, "heads": self.heads, "kv_heads": self.kv_heads, "ff": self.ff,
                "eps": self.eps, "theta": self.theta}

    def rope(self, positions: torch.Tensor):
        """cos, sin ``(..., head_dim)`` at integer ``positions``, on the device of ``positions``
        (the float32 tables grow on demand and move to the device they are used on)."""
        need = int(positions.max()) + 1
        if need > self._cos.shape[0]:
            self._cos, self._sin = _rope(self.theta, self.head_dim, max(need, 2 * self._cos.shape[0], 512))
        if self._cos.device != positions.device:
            self._cos, self._sin = self._cos.to(positions.device), self._sin.to(positions.device)
        return self._cos[positions], self._sin[positions]

    def forward(self, emb: torch.Tensor, feat: torch.Tensor, positions: torch.Tensor, mask: torch.Tensor | None = None,
                past: tuple[torch.Tensor, torch.Tensor] | None = None):
        """Predicted features ``(B, T, hidden)`` and this call's keys/values.

        Args:
            emb: embedded tokens ``x_{t+1}`` ``(B, T, hidden)``; feat: features ``f_t`` ``(B, T, hidden)``.
            positions: LongTensor ``(T,)`` RoPE positions of the T inputs.
            mask: bool ``(T, P + T)`` (True = attend) over the ``P`` past and T new keys;
                ``None`` = causal over the new ones (training, or a fresh context).
            past: keys/values ``(B, kv_heads, P, head_dim)`` to attend to before the new ones.

        Returns:
            ``(f_hat, (k, v))`` with ``k, v`` of the T new inputs ``(B, kv_heads, T, head_dim)``.
        """
        B, T, _ = emb.shape
        x = self.fc(torch.cat([emb, feat], dim=-1))
        h = self.input_layernorm(x)
        d = self.head_dim
        q = self.q_proj(h).view(B, T, self.heads, d).transpose(1, 2)
        k = self.k_proj(h).view(B, T, self.kv_heads, d).transpose(1, 2)
        v = self.v_proj(h).view(B, T, self.kv_heads, d).transpose(1, 2)
        cos, sin = self.rope(positions.to(q.device))
        q = q * cos + _rotate_half(q) * sin
        k = k * cos + _rotate_half(k) * sin
        kk, vv = (k, v) if past is None else (torch.cat([past[0], k], 2), torch.cat([past[1], v], 2))
        gqa = self.kv_heads != self.heads
        if mask is None and past is None:
            att = F.scaled_dot_product_attention(q, kk, vv, is_causal=T > 1, enable_gqa=gqa)
        else:
            if mask is None:
                P = kk.shape[2] - T
                mask = torch.ones(T, P + T, dtype=torch.bool, device=q.device).tril_(P)
            att = F.scaled_dot_product_attention(q, kk, vv, attn_mask=mask.to(q.device), enable_gqa=gqa)
        x = x + self.o_proj(att.transpose(1, 2).reshape(B, T, self.heads * d))
        h = self.post_attention_layernorm(x)
        x = x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))
        return x, (k, v)


def new_head(target) -> EagleHead:
    """A head with the target's sizes, its decoder layer copied from the target's last layer."""
    c = target.config
    head = EagleHead(c.hidden_size, c.num_attention_heads, c.num_key_value_heads or c.num_attention_heads,
                     c.intermediate_size, float(c.rms_norm_eps), float(c.rope_parameters["rope_theta"]))
    last = target.model.layers[-1]
    with torch.no_grad():
        for name in ("q_proj", "k_proj", "v_proj", "o_proj"):
            getattr(head, name).weight.copy_(getattr(last.self_attn, name).weight)
        for name in ("gate_proj", "up_proj", "down_proj"):
            getattr(head, name).weight.copy_(getattr(last.mlp, name).weight)
        head.input_layernorm.weight.copy_(last.input_layernorm.weight)
        head.post_attention_layernorm.weight.copy_(last.post_attention_layernorm.weight)
        H = c.hidden_size
        head.fc.weight.zero_()
        head.fc.weight[:, :H].copy_(torch.eye(H))  # start as "the embedding of the next token"
        head.fc.weight[:, H:].copy_(0.5 * torch.eye(H))  # plus half the feature
        head.fc.bias.zero_()
    return head.to(target.dtype)


# --------------------------------------------------------------------------------------------
# saving and loading


def save_head(head: EagleHead, target, folder: Path, log: dict | None = None) -> None:
    """Write ``config.json`` and ``model.safetensors`` (fp16) of ``head`` into ``folder``."""
    from safetensors.torch import save_file

    from .._atomic import atomic_write_bytes, atomic_write_text

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tensors = {k: v.detach().to(torch.float16).contiguous() for k, v in head.state_dict().items()}
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        save_file(tensors, str(Path(tmp) / "model.safetensors"), metadata={"format": "pt"})
        atomic_write_bytes(folder / "model.safetensors", (Path(tmp) / "model.safetensors").read_bytes())
    cfg = {"architecture": "EagleHead (EAGLE-1 style, one Llama decoder layer)", **head.config(),
           "target_fingerprint": _fingerprint(target)}
    atomic_write_text(folder / "config.json", json.dumps(cfg, indent=1))
    if log is not None:
        atomic_write_text(folder / "train_log.json", json.dumps(log, ensure_ascii=False, indent=1))


_LOADED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def has_head(target, folder: Path | str | None = None) -> bool:
    """Whether ``folder`` (default: the bundled head) holds a head trained for ``target``.

    The bundled head is trained for the bundled target only; with another pair
    (``DECODELAB_TARGET``) this is False and the ``"eagle"`` proposers are not available.
    """
    try:
        load_head(target, folder)
    except (FileNotFoundError, ValueError):
        return False
    return True


def load_head(target, folder: Path | str | None = None) -> EagleHead:
    """The head in ``folder`` (default: the bundled one) for ``target``, in the target's dtype,
    eval mode; loaded once per target object and folder (offline: local files only).

    Raises:
        FileNotFoundError: no head in ``folder``.
        ValueError: the head was trained for another target (fingerprint or sizes differ).
    """
    from safetensors.torch import load_file

    folder = Path(folder) if folder is not None else EAGLE_DIR
    key = str(folder.resolve())
    per_target = _LOADED.setdefault(target, {})
    if key in per_target:
        return per_target[key]
    if not (folder / "config.json").is_file():
        raise FileNotFoundError(f"{folder}: EAGLE 머리(config.json, model.safetensors)가 없습니다. "
                                f"decodelab train eagle --out {folder} 로 학습하세요")
    cfg = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    fp = cfg.pop("target_fingerprint", None)
    cfg.pop("architecture", None)
    mine = _fingerprint(target)
    if fp is None or any(abs(a - b) > 1e-2 * max(1.0, abs(b)) for a, b in zip(fp, mine)):
        raise ValueError(
            f"{folder}: 이 EAGLE 머리는 다른 대상 모델용으로 학습되었습니다 (허용: 번들 대상 모델, 또는 "
            f"decodelab train eagle 로 이 대상 모델에 맞게 학습한 머리)")
    head = EagleHead(**cfg)
    head.load_state_dict({k: v.float() for k, v in load_file(str(folder / "model.safetensors")).items()})
    head = head.to(device=target.device, dtype=target.dtype).eval()
    for p in head.parameters():
        p.requires_grad_(False)
    per_target[key] = head
    return head

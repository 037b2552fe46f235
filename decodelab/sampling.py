"""From logits to a next-token distribution: temperature, top-k, top-p, and sampling.

The order and the tie rules are those of Hugging Face transformers' logits warpers
(``TemperatureLogitsWarper`` -> ``TopKLogitsWarper`` -> ``TopPLogitsWarper``, in
``transformers/generation/logits_process.py``), which this module calls directly, so a
distribution here is exactly the one ``model.generate(do_sample=True, ...)`` samples from.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, fields

import torch

from ._check import check


_TINY = float(torch.finfo(torch.float32).tiny)


@dataclass(frozen=True)
class SamplingConfig:
    """Validated decoding settings.

    Attributes:
        temperature: >= 0. 0 means greedy (argmax); otherwise logits are divided by it. Below
            float32's smallest normal number (``torch.finfo(torch.float32).tiny``, 1.18e-38) the
            division overflows float32 for any logit, so such a temperature is its limit, greedy
            (:attr:`greedy`).
        top_k: ``None`` or ``0`` (off, stored as ``None``; the explorer's slider says "0=끄기") or an
            int >= 1: keep the k most likely tokens.
        top_p: ``None`` (off) or a float in (0, 1]: keep the smallest set of most likely tokens
            whose probability sums to at least ``top_p`` (nucleus sampling, Holtzman et al. 2020).

    A setting is given by keyword (``SamplingConfig(**dict(temperature=2.0))``) or by position, in
    the order above; an unknown name (``temp=2.0``) is refused with a Korean ``TypeError`` that names
    the allowed ones.

    Raises:
        TypeError: a setting of the wrong type, or an unknown setting name. ValueError: a setting
            outside its range.
    """

    temperature: float = 0.0
    top_k: int | None = None
    top_p: float | None = None

    def __init__(self, *args, **kwargs) -> None:
        names = [f.name for f in fields(self)]
        if len(args) > len(names):
            raise TypeError(f"SamplingConfig에는 설정이 {len(names)}개까지만 있습니다 ({', '.join(names)}): "
                            f"값 {len(args)}개를 받았습니다. 이름을 붙여 주세요 (예: dict(temperature=1.0, top_k=5)).")
        given = dict(zip(names, args))
        for key, value in kwargs.items():
            if key not in names:
                close = difflib.get_close_matches(str(key), names, n=1, cutoff=0.5)
                guess = f" '{close[0]}'을(를) 쓰려던 것인가요?" if close else ""
                raise TypeError(f"알 수 없는 설정 이름 '{key}'입니다.{guess} 쓸 수 있는 이름은 "
                                f"{', '.join(names)}입니다 (예: dict(temperature=2.0, top_k=50, top_p=0.9)).")
            if key in given:
                raise TypeError(f"설정 '{key}'을(를) 두 번 주었습니다: 한 번만 주세요.")
            given[key] = value
        for f in fields(self):
            object.__setattr__(self, f.name, given.get(f.name, f.default))
        self.__post_init__()

    def __post_init__(self) -> None:
        check("temperature", self.temperature, "온도(temperature)", hint="0 = 탐욕 디코딩, 보통 0.1~2")
        if self.top_k is not None:
            top_k = check("top_k", self.top_k, "top_k", integer=True, hint="0 또는 None = 끄기, 예: 50")
            object.__setattr__(self, "top_k", top_k or None)
        if self.top_p is not None:
            check("top_p", self.top_p, "top_p", strict=True, high=1, hint="None = 끄기")

    @property
    def greedy(self) -> bool:
        """True for argmax decoding: temperature 0, or below float32's range (see the class)."""
        return self.temperature < _TINY


def _warpers(cfg: SamplingConfig):
    from transformers.generation.logits_process import (
        LogitsProcessorList,
        TemperatureLogitsWarper,
        TopKLogitsWarper,
        TopPLogitsWarper,
    )

    procs = LogitsProcessorList()
    if cfg.temperature not in (0, 1):
        procs.append(TemperatureLogitsWarper(float(cfg.temperature)))
    if cfg.top_k is not None:
        procs.append(TopKLogitsWarper(top_k=int(cfg.top_k)))
    if cfg.top_p is not None and cfg.top_p < 1.0:
        procs.append(TopPLogitsWarper(top_p=float(cfg.top_p)))
    return procs


def warp_logits(logits: torch.Tensor, cfg: SamplingConfig) -> torch.Tensor:
    """Apply temperature, top-k and top-p to logits, as transformers does.

    Args:
        logits: float tensor of shape ``(vocab,)`` or ``(batch, vocab)``.
        cfg: the settings; with ``cfg.greedy`` the logits are returned unchanged.

    Returns:
        Tensor of the same shape; filtered entries are ``-inf``.
    """
    if cfg.greedy:
        return logits
    squeeze = logits.dim() == 1
    x = logits[None] if squeeze else logits
    x = _warpers(cfg)(None, x.float())
    return x[0] if squeeze else x


def probabilities(logits: torch.Tensor, cfg: SamplingConfig) -> torch.Tensor:
    """The next-token distribution that decoding with ``cfg`` samples from.

    Args:
        logits: shape ``(vocab,)`` or ``(batch, vocab)``.

    Returns:
        float32 probabilities of the same shape, summing to 1 along the last axis. For greedy
        settings this is a one-hot vector at the argmax (first index on ties, like ``torch.argmax``);
        so is a row whose logits / temperature overflowed float32 (a tiny temperature with large
        logits: the limit of the distribution as the temperature goes to 0).
    """
    if cfg.greedy:
        return _one_hot(logits)
    warped = warp_logits(logits, cfg)
    probs = torch.softmax(warped, dim=-1)
    overflow = torch.isposinf(warped).any(-1, keepdim=True)
    return torch.where(overflow, _one_hot(logits), probs) if bool(overflow.any()) else probs


def _one_hot(logits: torch.Tensor) -> torch.Tensor:
    out = torch.zeros_like(logits, dtype=torch.float32)
    return out.scatter_(-1, logits.argmax(-1, keepdim=True), 1.0)


def sample(probs: torch.Tensor, generator: torch.Generator | None = None) -> int:
    """Draw one token id from ``probs`` (shape ``(vocab,)``) with ``torch.multinomial``."""
    return int(torch.multinomial(probs, 1, generator=generator).item())


def choose(logits: torch.Tensor, cfg: SamplingConfig, generator: torch.Generator | None = None) -> int:
    """Pick the next token from ``logits`` (shape ``(vocab,)``): argmax if greedy, else a sample."""
    if cfg.greedy:
        return int(logits.argmax(-1).item())
    return sample(probabilities(logits, cfg), generator)


def make_generator(seed: int | None, device: torch.device | str = "cpu") -> torch.Generator | None:
    """A ``torch.Generator`` on ``device`` seeded with ``seed`` (``None`` -> ``None``: torch's
    global RNG). Sampling on a GPU needs the generator on the GPU.

    Raises:
        TypeError: ``seed`` is not an int. ValueError: ``seed`` is negative.
    """
    if seed is None:
        return None
    seed = check("seed", seed, "seed(난수의 시작값)", integer=True, high=2**63, hint="예: seed=0, None = 매번 다르게")
    g = torch.Generator(device=device)
    g.manual_seed(seed)
    return g

"""Loading the bundled target/draft pair, or any local Hugging Face causal-LM pair.

Nothing here touches the network: every load passes ``local_files_only=True``, so a path that
is not a local model folder fails at once with a clear error instead of a hub download or a hang.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Folder of the bundled models (``target/``, ``draft/``, ``tokenizer/``, ``MODEL_CARD.md``).
BUNDLED_DIR = Path(__file__).resolve().parent / "assets" / "models"
#: Environment variables that point the whole course at another local pair (see README).
ENV_TARGET, ENV_DRAFT = "DECODELAB_TARGET", "DECODELAB_DRAFT"


@dataclass
class ModelPair:
    """A target model, a draft model and their shared tokenizer.

    Attributes:
        target: the large model (``transformers`` causal LM, eval mode, float32 on CPU by default).
        draft: the small model proposing tokens for speculative decoding (same vocabulary).
        tokenizer: the tokenizer both models use.
        target_path / draft_path: the folders they were loaded from.
    """

    target: Any
    draft: Any
    tokenizer: Any
    target_path: Path
    draft_path: Path

    def __iter__(self):  # allows ``target, draft, tok = load_models()``
        return iter((self.target, self.draft, self.tokenizer))

    @property
    def is_bundled(self) -> bool:
        """True when both models are the ones shipped in ``decodelab/assets/models``."""
        return (self.target_path.resolve() == (BUNDLED_DIR / "target").resolve()
                and self.draft_path.resolve() == (BUNDLED_DIR / "draft").resolve())

    def describe(self) -> str:
        """One Korean line naming the pair and where it came from (notebooks print it)."""
        if self.is_bundled:
            return "모델 쌍: 번들 모델 (decodelab/assets/models, 인터넷 없이 동작)"
        return f"모델 쌍: 대상 모델 {self.target_path} / 초안 모델 {self.draft_path} (DECODELAB_TARGET·DECODELAB_DRAFT 또는 직접 지정)"


def _check_folder(path, role: str) -> Path:
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{role} 모델 경로는 글(str)이나 Path여야 합니다 (받은 것: {type(path).__name__}). / path must be str or Path")
    path = Path(path).expanduser()
    if not path.is_dir():
        raise FileNotFoundError(
            f"{role} 모델 폴더를 찾을 수 없습니다: {str(path)!r}. 로컬 폴더 경로(config.json과 가중치가 든 폴더)를 "
            f"주세요. decodelab은 허브에서 내려받지 않습니다. / {role} model folder not found: {str(path)!r}"
        )
    if not (path / "config.json").is_file():
        raise FileNotFoundError(
            f"{str(path)!r}에 config.json이 없습니다: Hugging Face 형식의 모델 폴더가 아닙니다. "
            f"(save_pretrained로 저장한 폴더를 주세요.) / no config.json in {str(path)!r}"
        )
    return path


def load_model(path: str | os.PathLike, *, dtype=None, role: str = "model"):
    """Load one causal LM from a local folder with ``AutoModelForCausalLM`` (offline, eval mode).

    Args:
        path: folder written by ``save_pretrained`` (config.json + weights).
        dtype: torch dtype for the weights in memory; default ``torch.float32`` (the bundled
            weights are stored as float16 on disk and upcast here).

    Raises:
        FileNotFoundError: the folder or its config.json is missing.
    """
    import torch
    from transformers import AutoModelForCausalLM

    from transformers.utils import logging as hf_logging

    folder = _check_folder(Path(path), role)
    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # no "Loading weights" bars in a student's notebook
    try:
        model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=dtype or torch.float32, local_files_only=True)
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()
    model.eval()
    return model


def load_tokenizer(path: str | os.PathLike):
    """Load the tokenizer saved in a local model folder with ``AutoTokenizer`` (offline).

    Raises:
        FileNotFoundError: the folder is missing.
    """
    from transformers import AutoTokenizer

    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise FileNotFoundError(f"토크나이저 폴더를 찾을 수 없습니다: {str(folder)!r} / tokenizer folder not found")
    return AutoTokenizer.from_pretrained(str(folder), local_files_only=True)


def vocab_size(model) -> int:
    """Number of rows of the model's output layer (the logits' last dimension)."""
    return int(model.get_output_embeddings().weight.shape[0])


def check_same_vocabulary(target, draft, tokenizer=None) -> None:
    """Raise ``ValueError`` unless target and draft produce logits over the same vocabulary.

    Speculative decoding compares p (target) and q (draft) token by token, so both must index
    the same vocabulary (Leviathan et al. 2023, Sec. 2).
    """
    vt, vd = vocab_size(target), vocab_size(draft)
    if vt != vd:
        raise ValueError(
            f"초안 모델과 대상 모델의 어휘(vocabulary) 크기가 다릅니다: target {vt}, draft {vd}. "
            f"투기적 디코딩에는 같은 토크나이저를 쓰는 모델 쌍이 필요합니다. / draft and target vocabularies differ"
        )
    if tokenizer is not None and len(tokenizer) > vt:
        raise ValueError(f"토크나이저 어휘({len(tokenizer)})가 모델 출력({vt})보다 큽니다. / tokenizer larger than model vocab")


def load_models(
    target: str | os.PathLike | None = None,
    draft: str | os.PathLike | None = None,
    *,
    dtype=None,
    threads: int | None = 1,
) -> ModelPair:
    """Load a target/draft pair and the tokenizer, offline.

    Args:
        target: local folder of the target model; ``None`` -> ``$DECODELAB_TARGET`` (and
            ``$DECODELAB_DRAFT``) when set and no ``draft`` is given, else the bundled target
            (``decodelab/assets/models/target``, see its ``MODEL_CARD.md``).
        draft: local folder of the draft model; ``None`` -> the bundled draft when ``target`` is
            also ``None``, else the target itself is reused as its own draft (acceptance 100%).
        dtype: torch dtype in memory (default float32).
        threads: torch intra-op threads to set (``torch.set_num_threads``) for this process;
            default 1. A tiny model's decode step is dominated by per-call overhead, and on a
            shared 2-core machine two threads waiting for each other made single steps 10-50x
            slower at random (measured here: a 4.5 ms step took 240 ms), which would make every
            timing in the course noise. ``None`` leaves torch's setting alone (use it for large
            models).

    Returns:
        :class:`ModelPair` (``.target``, ``.draft``, ``.tokenizer``). The tokenizer is the one
        saved with the target.

    Raises:
        FileNotFoundError: a path is not a local model folder (never falls back to a download).
        TypeError: a path is neither a str nor a ``PathLike``.
        ValueError: draft and target have different vocabulary sizes, or the draft folder holds
            a tokenizer whose token-to-id map differs from the target's; ``threads`` < 1.
    """
    if threads is not None:
        import torch

        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise ValueError(f"threads={threads!r}: 1 이상의 정수이거나 None이어야 합니다.")
        torch.set_num_threads(threads)
    if target is None and draft is None:
        target = os.environ.get(ENV_TARGET) or None
        draft = os.environ.get(ENV_DRAFT) or None
    if target is None:
        tpath = BUNDLED_DIR / "target"
        dpath = BUNDLED_DIR / "draft" if draft is None else _check_folder(draft, "초안(draft)")
    else:
        tpath = _check_folder(target, "대상(target)")
        dpath = _check_folder(draft, "초안(draft)") if draft is not None else tpath
    tpath = _check_folder(tpath, "대상(target)")
    dpath = _check_folder(dpath, "초안(draft)")
    t = load_model(tpath, dtype=dtype, role="대상(target)")
    d = t if dpath.resolve() == tpath.resolve() else load_model(dpath, dtype=dtype, role="초안(draft)")
    tok = load_tokenizer(tpath)
    check_same_vocabulary(t, d, tok)
    if d is not t and (dpath / "tokenizer_config.json").is_file() and dpath.resolve() != tpath.resolve():
        dtok = load_tokenizer(dpath)
        if dtok.get_vocab() != tok.get_vocab():
            raise ValueError(
                "초안 모델 폴더의 토크나이저가 대상 모델의 토크나이저와 다릅니다 (어휘 크기는 같아도 토큰 번호가 다름). "
                "투기적 디코딩에는 같은 토크나이저로 학습한 모델 쌍이 필요합니다. / draft and target tokenizers differ"
            )
    return ModelPair(target=t, draft=d, tokenizer=tok, target_path=tpath, draft_path=dpath)


_CACHE: dict = {}


def bundled() -> ModelPair:
    """The bundled pair, loaded once per process and shared (notebooks and widgets call this)."""
    if "pair" not in _CACHE:
        _CACHE["pair"] = load_models(BUNDLED_DIR / "target", BUNDLED_DIR / "draft")
    return _CACHE["pair"]

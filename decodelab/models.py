"""Loading the bundled target/draft pair, or any local Hugging Face causal-LM pair.

Nothing here touches the network: every load passes ``local_files_only=True``, so a path that
is not a local model folder fails at once with a clear error instead of a hub download or a hang.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._check import check, fail
from ._paths import MODELS_DIR
from ._torch import set_threads
from .profiles import dtype_key

#: Environment variables that point the whole course at another local pair (see docs/models.md).
ENV_TARGET, ENV_DRAFT = "DECODELAB_TARGET", "DECODELAB_DRAFT"


@dataclass
class ModelPair:
    """A target model, a draft model and their shared tokenizer.

    Attributes:
        target: the large model (``transformers`` causal LM, eval mode).
        draft: the small model proposing tokens for speculative decoding (same tokenizer; its
            output layer may have a different number of rows, see :attr:`shared_vocab_size`).
        tokenizer: the tokenizer both models use (the one saved with the target).
        target_path / draft_path: the folders they were loaded from.
        device: where both models live (``"cpu"``, ``"cuda"``, ``"mps"``...).
        dtype: their weights' torch dtype in memory.
    """

    target: Any
    draft: Any
    tokenizer: Any
    target_path: Path
    draft_path: Path
    device: str = "cpu"
    dtype: Any = None

    def __iter__(self):  # allows ``target, draft, tok = load_models()``
        return iter((self.target, self.draft, self.tokenizer))

    @property
    def is_bundled(self) -> bool:
        """True when both models are the ones shipped in ``decodelab/assets/models``."""
        return (self.target_path.resolve() == (MODELS_DIR / "target").resolve()
                and self.draft_path.resolve() == (MODELS_DIR / "draft").resolve())

    @property
    def shared_vocab_size(self) -> int:
        """Rows both output layers have: ``min(target rows, draft rows)`` (>= ``len(tokenizer)``).

        Real pairs pad their output layers differently (Qwen2.5-0.5B 151,936 rows, Qwen2.5-7B
        152,064, one tokenizer of 151,665 tokens); ids past ``len(tokenizer)`` are padding no
        text maps to. Speculative decoding compares p and q over these shared ids.
        """
        return min(output_rows(self.target), output_rows(self.draft))

    def describe(self) -> str:
        """One Korean line naming the pair and where it came from (notebooks print it)."""
        if self.is_bundled:
            return "모델 쌍: 번들 모델 (decodelab/assets/models, 인터넷 없이 동작)"
        where = f"{self.device}, {str(self.dtype).replace('torch.', '')}"
        return (f"모델 쌍: 대상 모델 {self.target_path} / 초안 모델 {self.draft_path} ({where}; "
                f"DECODELAB_TARGET·DECODELAB_DRAFT 또는 직접 지정)")


def check_folder(path, role: str) -> Path:
    """``path`` as a ``Path`` to a local Hugging Face model folder (one with ``config.json``);
    ``role`` names the model in the message (e.g. ``"대상(target)"``).

    Raises:
        TypeError: ``path`` is neither a str nor a ``PathLike``.
        FileNotFoundError: no such folder, or no ``config.json`` in it.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise fail("path", path, f"{role} 모델 경로는 글(str)이나 Path여야 합니다 (받은 것: {type(path).__name__})",
                   "로컬 모델 폴더의 경로 (str 또는 Path)", TypeError)
    path = Path(path).expanduser()
    if not path.is_dir():
        raise fail("path", str(path), f"{role} 모델 폴더를 찾을 수 없습니다 (decodelab은 허브에서 내려받지 않습니다)",
                   "config.json과 가중치가 든 로컬 폴더의 경로", FileNotFoundError)
    if not (path / "config.json").is_file():
        raise fail("path", str(path), "폴더에 config.json이 없습니다: Hugging Face 형식의 모델 폴더가 아닙니다",
                   "save_pretrained로 저장한 폴더", FileNotFoundError)
    return path


def resolve_device(device: str = "auto", *, bundled: bool = False) -> str:
    """The torch device name ``load_models`` will use.

    ``"auto"``: ``"cuda"`` when an NVIDIA GPU is visible, else ``"mps"`` (Apple GPU), else
    ``"cpu"``; for the bundled pair ``"auto"`` is always ``"cpu"`` (it is tiny, its per-call
    overhead dominates, and the course's texts and numbers describe it in fp32 on a CPU).

    Raises:
        TypeError: ``device`` is not a str.
        ValueError: an unknown name, or a GPU that this computer does not have.
    """
    import torch

    if not isinstance(device, str):
        raise fail("device", device, "장치(device)는 글(str)이어야 합니다", "auto, cpu, cuda, mps", TypeError)
    name = device.strip().lower()
    kind = name.split(":", 1)[0]
    if kind not in ("auto", "cpu", "cuda", "mps"):
        raise fail("device", device, "알 수 없는 장치입니다", "auto, cpu, cuda, cuda:N, mps")
    has_mps = getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available()
    if kind == "auto":
        if bundled:
            return "cpu"
        return "cuda" if torch.cuda.is_available() else "mps" if has_mps else "cpu"
    if kind == "cuda" and not torch.cuda.is_available():
        raise fail("device", device, "이 컴퓨터에서 CUDA GPU를 찾지 못했습니다", '"cpu" 또는 "auto"')
    if kind == "mps" and not has_mps:
        raise fail("device", device, "이 컴퓨터에서 Apple GPU(mps)를 찾지 못했습니다", '"cpu" 또는 "auto"')
    return name


#: torch names of the number formats weights can have in memory (keys: :func:`decodelab.profiles.dtype_key`)
_TORCH_DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}


def resolve_dtype(dtype, device: str):
    """The torch dtype the weights get in memory.

    ``None`` or ``"auto"``: float32 on CPU; bfloat16 on a CUDA GPU that supports it (Ampere and
    later), else float16; float16 on ``mps``. Strings ``"bf16"``/``"fp16"``/``"fp32"`` (or any
    name :func:`decodelab.profiles.dtype_key` knows for them) and torch dtypes are taken as given.

    Raises:
        TypeError: not None, a str or a ``torch.dtype``.
        ValueError: an unknown name, or a non-floating dtype.
    """
    import torch

    if dtype is None or (isinstance(dtype, str) and dtype.strip().lower() == "auto"):
        if device.startswith("cuda"):
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.float16 if device.startswith("mps") else torch.float32
    if isinstance(dtype, str):
        allowed = "auto, bf16, fp16, fp32 또는 torch dtype"
        try:
            name = _TORCH_DTYPES.get(dtype_key(dtype))
        except ValueError:
            name = None
        if name is None:
            raise fail("dtype", dtype, "알 수 없는 자료형이거나 메모리의 가중치에 쓸 수 없는 자료형입니다", allowed)
        return getattr(torch, name)
    if isinstance(dtype, torch.dtype):
        if not dtype.is_floating_point:
            raise fail("dtype", dtype, "가중치 자료형은 부동소수점이어야 합니다", "bf16, fp16, fp32")
        return dtype
    raise fail("dtype", dtype, "자료형(dtype)은 None, 글(str) 또는 torch.dtype이어야 합니다", "None, auto, bf16, fp16, fp32 또는 torch dtype",
               TypeError)


@functools.cache
def require_transformers() -> None:
    """Refuse a transformers release outside decodelab's own requirement (``pyproject.toml``, read
    from the installed package's metadata, so the range has one home). Releases before 5.24 do
    not know the ``cache=`` argument every forward pass here passes (they ignore it silently, and
    no KV cache would ever fill). Checked once per process; a source checkout that is not
    installed has no metadata, and nothing is checked.

    Raises:
        ImportError: (Korean) the installed transformers is outside the range; the message gives
            the pip command (for this Python) that fixes it.
    """
    import sys
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.version import Version

    try:
        wanted = [Requirement(r) for r in metadata.requires("decodelab") or []]
        have = metadata.version("transformers")
    except metadata.PackageNotFoundError:
        return
    for req in wanted:
        if req.name != "transformers" or (req.marker is not None and not req.marker.evaluate({"extra": ""})):
            continue  # another package, or an extra's line
        if not req.specifier.contains(have, prereleases=True):
            old = any(s.operator in (">=", ">") and Version(have) < Version(s.version) for s in req.specifier)
            why = " (그보다 낮은 버전은 KV 캐시 인자 cache=를 모릅니다)" if old else ""
            raise ImportError(f"설치된 transformers {have} 버전은 decodelab과 맞지 않습니다: 필요한 범위는 transformers{req.specifier}입니다{why}. "
                              f"고치려면: \"{sys.executable}\" -m pip install -U \"transformers{req.specifier}\"")


def load_model(path: str | os.PathLike, *, dtype=None, device: str = "cpu", role: str = "model"):
    """Load one causal LM from a local folder with ``AutoModelForCausalLM`` (offline, eval mode).

    Any architecture transformers knows as a causal LM loads (Llama, Qwen2, Mistral, Gemma,
    GPT-2, ...).

    Args:
        path: folder written by ``save_pretrained`` (config.json + weights).
        dtype: torch dtype for the weights in memory; ``None`` = ``torch.float32`` (the bundled
            weights are stored as float16 on disk and upcast here).
        device: torch device name to move the model to (already resolved, e.g. ``"cuda"``).

    Raises:
        FileNotFoundError: the folder, its config.json or its weights are missing.
        ValueError: the folder holds a model transformers cannot load as a causal LM.
        ImportError: the installed transformers is too old or too new (:func:`require_transformers`).
    """
    import torch
    from transformers import AutoModelForCausalLM
    from transformers.utils import logging as hf_logging

    require_transformers()

    folder = check_folder(Path(path), role)
    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # no "Loading weights" bars in a student's notebook
    try:
        model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=dtype or torch.float32, local_files_only=True)
    except OSError as exc:  # config.json without weights, or unreadable weight files
        raise fail("path", str(folder), f"{role} 모델 폴더에서 가중치를 읽지 못했습니다 ({exc})",
                   'model.safetensors(또는 pytorch_model.bin)까지 모두 내려받은 폴더 (docs/models.md "내 모델로 돌리기")',
                   FileNotFoundError) from exc
    except (ValueError, KeyError) as exc:
        raise fail("path", str(folder), f"{role} 모델 폴더를 인과 언어 모델(causal LM)로 읽지 못했습니다 ({exc})",
                   "AutoModelForCausalLM으로 읽히는 모델 (Llama, Qwen2, Mistral, Gemma, GPT-2 등)") from exc
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()
    if device != "cpu":
        model.to(device)
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
        raise fail("path", str(folder), "토크나이저 폴더를 찾을 수 없습니다", "토크나이저가 저장된 로컬 폴더",
                   FileNotFoundError)
    return AutoTokenizer.from_pretrained(str(folder), local_files_only=True)


def output_rows(model) -> int:
    """Number of rows of the model's output layer (the logits' last dimension)."""
    return int(model.get_output_embeddings().weight.shape[0])


def check_same_vocabulary(target, draft, tokenizer=None, draft_tokenizer=None) -> None:
    """Raise ``ValueError`` unless target and draft can share one vocabulary.

    Speculative decoding compares p (target) and q (draft) token by token, so both must index
    the same tokens (Leviathan et al. 2023, Sec. 2). Like transformers' assisted generation
    (``AssistantVocabTranslatorCache`` maps tokens by their strings), the pair is compared over
    the tokens the tokenizer knows: output layers of different sizes are fine (real pairs pad
    them differently) as long as every tokenizer id has a row in both; the rows past
    ``len(tokenizer)`` are padding.

    Args:
        target, draft: causal LMs.
        tokenizer: the target's tokenizer; without it the output layers must be equal.
        draft_tokenizer: the tokenizer saved with the draft, when there is one; its token -> id
            map must be the target's.

    Raises:
        ValueError: a tokenizer mismatch (different token -> id maps, or ids that one of the
            output layers has no row for).
    """
    vt, vd = output_rows(target), output_rows(draft)
    if tokenizer is None:
        if vt != vd:
            raise fail("draft", type(draft).__name__,
                       f"초안 모델과 대상 모델의 어휘(vocabulary) 크기가 다릅니다: target {vt}, draft {vd}",
                       "출력층 행 수가 같은 모델 쌍, 또는 tokenizer를 함께 주면 공통 어휘로 비교")
        return
    n = len(tokenizer)
    if n > min(vt, vd):
        who = "대상(target)" if vt < n else "초안(draft)"
        rows = min(vt, vd)
        added = sorted(i for i in getattr(tokenizer, "get_added_vocab", dict)().values() if i >= rows)
        if added:
            why = (f"토크나이저에 추가한 특수 토큰(added special tokens) {len(added)}개(번호 {added[0]}~{added[-1]})는 "
                   f"모델에 행이 없습니다")
            fix = "추가한 특수 토큰을 빼거나, model.resize_token_embeddings(len(tokenizer))로 행을 늘리고 학습한 모델"
        else:
            why = "이 토크나이저의 토큰 중 모델에 행이 없는 것이 있습니다: 다른 토크나이저로 학습한 모델입니다"
            fix = "같은 토크나이저로 학습한 모델 쌍 (예: Qwen2.5 0.5B + 1.5B)"
        raise fail("len(tokenizer)", n, f"토크나이저 어휘({n}개 토큰)가 {who} 모델의 출력층({rows}행)보다 큽니다: "
                   f"{why} (target {vt}행, draft {vd}행)", fix)
    if draft_tokenizer is not None and draft_tokenizer.get_vocab() != tokenizer.get_vocab():
        raise fail("draft_tokenizer", type(draft_tokenizer).__name__,
                   "초안 모델 폴더의 토크나이저가 대상 모델의 토크나이저와 다릅니다 (토큰 번호가 다름)",
                   "같은 토크나이저로 학습한 모델 쌍 (예: Qwen2.5 0.5B + 1.5B)")


def format_prompt(tokenizer, prompt) -> list[int]:
    """Token ids of ``prompt``: plain text as is, or chat messages through the chat template.

    Args:
        tokenizer: a transformers tokenizer.
        prompt: a non-empty str (tokenised without special tokens, so no BOS is added),
            or a non-empty list of messages ``[{"role": "user", "content": "..."}, ...]``
            (instruct models): rendered with the tokenizer's chat template and
            ``add_generation_prompt=True``, so the model answers as the assistant.

    Returns:
        list of int token ids (what :func:`decodelab.generate` and
        :func:`decodelab.speculative_generate` feed the model).

    Raises:
        TypeError: ``prompt`` is neither a str nor a list of messages; a message is not a dict
            with str ``role`` and ``content``.
        ValueError: empty text or message list, or chat messages for a tokenizer that has no
            chat template (base models: give plain text instead).
    """
    allowed = '한 글자 이상의 글(str) 또는 대화 메시지 목록, 예: "모든 국민은", [{"role": "user", "content": "안녕하세요"}]'
    if isinstance(prompt, str):
        if not prompt.strip():
            raise fail("prompt", prompt, "프롬프트가 비어 있습니다", allowed)
        return list(tokenizer(prompt, add_special_tokens=False)["input_ids"])
    if not isinstance(prompt, (list, tuple)):
        raise fail("prompt", prompt, f"프롬프트는 글(str)이거나 대화 메시지 목록이어야 합니다 (받은 것: {type(prompt).__name__})",
                   allowed, TypeError)
    if not prompt:
        raise fail("prompt", prompt, "대화 메시지 목록이 비어 있습니다", allowed)
    for i, m in enumerate(prompt):
        if not isinstance(m, dict) or not isinstance(m.get("role"), str) or not isinstance(m.get("content"), str):
            raise fail(f"prompt[{i}]", m, "메시지는 role과 content(글)를 가진 dict여야 합니다",
                       '{"role": "user", "content": "안녕하세요"}', TypeError)
    if not getattr(tokenizer, "chat_template", None):
        raise fail("prompt", prompt, "이 토크나이저에는 대화 템플릿(chat template)이 없습니다 (기본 모델)",
                   "글(str) 프롬프트, 또는 대화 템플릿이 있는 Instruct 모델")
    out = tokenizer.apply_chat_template(list(prompt), add_generation_prompt=True, tokenize=True)
    if hasattr(out, "keys"):  # transformers >= 5 returns a BatchEncoding by default
        out = out["input_ids"]
    return [int(t) for t in out]


def load_models(
    target: str | os.PathLike | None = None,
    draft: str | os.PathLike | None = None,
    *,
    device: str = "auto",
    dtype=None,
    threads: int | None | str = "auto",
) -> ModelPair:
    """Load a target/draft pair and the tokenizer, offline.

    Args:
        target: local folder of the target model; ``None`` -> ``$DECODELAB_TARGET`` (and
            ``$DECODELAB_DRAFT``) when set and no ``draft`` is given, else the bundled target
            (``decodelab/assets/models/target``, see its ``MODEL_CARD.md``).
        draft: local folder of the draft model; ``None`` -> the bundled draft when ``target`` is
            also ``None``, else the target itself is reused as its own draft (acceptance 100%).
        device: ``"auto"`` (default: CUDA GPU, else Apple GPU, else CPU; always CPU for the
            bundled pair), ``"cpu"``, ``"cuda"`` (or ``"cuda:N"``), ``"mps"``.
        dtype: weights in memory: ``None``/``"auto"`` (default: float32 on CPU, bfloat16 on a
            CUDA GPU that has it, else float16), ``"bf16"``, ``"fp16"``, ``"fp32"`` or a
            ``torch.dtype``. Greedy results equal transformers' ``generate`` on the same
            numerics; bf16/fp16 results may differ from fp32 ones where two logits are close.
        threads: torch intra-op threads for this process (``torch.set_num_threads``).
            ``"auto"`` (default): 1 for the bundled pair, torch's own setting otherwise.
            A tiny model's decode step is dominated by per-call overhead, and threads waiting for
            each other on a busy machine make its timings noise. ``None`` leaves torch's setting
            alone (right for large models).

    Returns:
        :class:`ModelPair` (``.target``, ``.draft``, ``.tokenizer``, ``.device``, ``.dtype``).
        The tokenizer is the one saved with the target.

    Raises:
        FileNotFoundError: a path is not a local model folder, or its weights are missing (never
            falls back to a download).
        TypeError: a path is neither a str nor a ``PathLike``; ``device``/``dtype`` of the
            wrong type.
        ValueError: a tokenizer mismatch (see :func:`check_same_vocabulary`: the draft folder's
            tokenizer maps tokens to other ids, or one output layer is smaller than the
            tokenizer); an unknown or absent device; an unknown dtype; ``threads`` < 1.
    """
    if not (threads is None or threads == "auto"):
        check("threads", threads, "torch 스레드 수", low=1, integer=True, hint='"auto" 또는 None')
    t_role, d_role = "대상(target)", "초안(draft)"
    if target is None and draft is None:
        target = os.environ.get(ENV_TARGET) or None
        draft = os.environ.get(ENV_DRAFT) or None
        # Name the environment variable in error messages: the student set it, not a path argument.
        if target is not None:
            t_role = f"환경 변수 {ENV_TARGET}에 적은 대상(target)"
        if draft is not None:
            d_role = f"환경 변수 {ENV_DRAFT}에 적은 초안(draft)"
    if target is None:
        tpath = MODELS_DIR / "target"
        dpath = MODELS_DIR / "draft" if draft is None else check_folder(draft, d_role)
    else:
        tpath = check_folder(target, t_role)
        dpath = check_folder(draft, d_role) if draft is not None else tpath
    tpath = check_folder(tpath, t_role)
    dpath = check_folder(dpath, d_role)
    is_bundled = tpath.resolve() == (MODELS_DIR / "target").resolve() and dpath.resolve() == (MODELS_DIR / "draft").resolve()
    dev = resolve_device(device, bundled=is_bundled)
    torch_dtype = resolve_dtype(dtype, dev)
    if threads == "auto":
        threads = 1 if is_bundled else None
    if threads is not None:
        set_threads(threads)
    t = load_model(tpath, dtype=torch_dtype, device=dev, role="대상(target)")
    same = dpath.resolve() == tpath.resolve()
    d = t if same else load_model(dpath, dtype=torch_dtype, device=dev, role="초안(draft)")
    tok = load_tokenizer(tpath)
    dtok = None
    if not same and any((dpath / f).is_file() for f in ("tokenizer.json", "tokenizer_config.json", "vocab.json")):
        dtok = load_tokenizer(dpath)
    check_same_vocabulary(t, d, tok, dtok)
    return ModelPair(target=t, draft=d, tokenizer=tok, target_path=tpath, draft_path=dpath, device=dev, dtype=torch_dtype)


_CACHE: dict = {}


def bundled() -> ModelPair:
    """The bundled pair, loaded once per process and shared (tests and :func:`default_pair`)."""
    if "pair" not in _CACHE:
        _CACHE["pair"] = load_models(MODELS_DIR / "target", MODELS_DIR / "draft")
    return _CACHE["pair"]


def default_pair() -> ModelPair:
    """The course's pair, loaded once per process: what ``load_models()`` with no arguments loads.

    Honours ``$DECODELAB_TARGET`` / ``$DECODELAB_DRAFT`` (read at each call: changing them
    loads the new pair once) and is the bundled pair otherwise. Widgets default to it.
    """
    key = (os.environ.get(ENV_TARGET) or None, os.environ.get(ENV_DRAFT) or None)
    if key == (None, None):
        return bundled()
    if _CACHE.get("default_key") != key:
        _CACHE["default"] = load_models()
        _CACHE["default_key"] = key
    return _CACHE["default"]

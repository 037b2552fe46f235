"""Reproducible training of the bundled target/draft model pair.

Run with ``decodelab train`` (or ``python -m decodelab.tools.train``). Needs the ``train`` extra
(``pip install "decodelab[train]"``; in a checkout of the repository ``pip install -e ".[train]"``),
``apt-get`` and ``dpkg-deb`` (Debian/Ubuntu) and ``pip`` reaching their registries; :func:`check_requirements` checks all of this before anything is downloaded.
The pair is written to ``./decodelab-models`` by default; ``--out decodelab/assets/models``
replaces the bundled pair (then rewrite its card with ``decodelab card --folder ... --write``).

Pipeline (every step seeded, losses logged to ``train_log.json`` beside the weights):

1. **Corpus** (:func:`obtain_corpus`): Korean text obtained from package registries, never from a
   model hub:

   - Debian ``libreoffice-help-ko`` (LibreOffice help, MPL-2.0): ~2,500 HTML pages;
   - Debian ``debian-faq-ko`` (The Debian FAQ in Korean, GPL-2+);
   - PyPI ``konlpy==0.6.0`` package data: the Korean constitution and ten bills (public-domain
     legal text, ``konlpy/data/corpus/kolaw`` and ``kobill``);
   - the ``*.txt`` files of the ``--seeds`` folder, when one is given (the bundled pair added two
     Korean articles this way).

   HTML is reduced to text with BeautifulSoup; lines with few Hangul syllables are dropped.
2. **Tokenizer** (:func:`train_tokenizer`): byte-level BPE (``tokenizers``), NFC-normalised.
3. **Target** (:func:`train_target`): a Llama-style causal LM trained with next-token cross-entropy.
4. **Draft** (:func:`distill_draft`): a much smaller Llama-style model distilled from the target by
   minimising KL(p_target || q_draft) over next-token distributions, so that speculative decoding
   accepts many draft tokens (Leviathan et al. 2023, arXiv 2211.17192: acceptance rate = 1 - TV(p, q)).

Weights are saved as fp16 safetensors (loaded back as fp32 by :func:`decodelab.load_models`).

A second stage, ``decodelab train eagle``, trains the EAGLE draft head of the bundled target by
self-distillation (no download; :mod:`decodelab.eagle`).
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import json
import math
import random
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import unicodedata
import zipfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .._atomic import atomic_write_bytes, atomic_write_text
from .._cli import ArgumentParser
from .._paths import MODELS_DIR

HANGUL = re.compile(r"[\uac00-\ud7a3]")

#: Where the bundled models live inside the package (kept as a name: tests and scripts use it).
ASSETS = MODELS_DIR
#: Default ``--out``: a new folder in the current directory (never the bundled models).
DEFAULT_OUT = Path("decodelab-models")
#: Debian packages of the corpus, downloaded with ``apt-get download``.
DEBIAN_PACKAGES = ("libreoffice-help-ko", "debian-faq-ko")

SOURCES = {
    "libreoffice-help-ko": "Debian package libreoffice-help-ko (LibreOffice help, MPL-2.0)",
    "debian-faq-ko": "Debian package debian-faq-ko (The Debian FAQ, Korean translation, GPL-2+)",
    "konlpy": "PyPI konlpy==0.6.0 package data kolaw/kobill (Korean constitution and bills, public domain)",
    "seeds": "Korean articles (*.txt) of the --seeds folder",
}


@dataclass
class ModelSize:
    """One Llama model of the pair: its shape and its AdamW schedule (``steps``, peak ``lr``)."""

    hidden: int
    layers: int
    heads: int
    kv_heads: int
    ff: int
    steps: int
    lr: float


@dataclass
class TrainConfig:
    """Hyper-parameters of the bundled pair. Changing any of them changes the bundled weights."""

    seed: int = 1234
    vocab_size: int = 4096
    context: int = 256
    # target: ~8.7 M parameters, 35 MB in fp32: above a typical 32 MB laptop last-level cache
    target: ModelSize = field(default_factory=lambda: ModelSize(320, 6, 5, 5, 864, steps=600, lr=2e-3))
    # draft: ~1 M parameters
    draft: ModelSize = field(default_factory=lambda: ModelSize(128, 2, 2, 2, 352, steps=400, lr=3e-3))
    batch_size: int = 8
    heldout_fraction: float = 0.05
    threads: int = 1
    extra: dict = field(default_factory=dict)

    def as_log(self) -> dict:
        """The config as ``train_log.json`` records it: flat, ``target_hidden``, ``draft_steps``..."""
        d = asdict(self)
        sizes = {f"{role}_{k}": v for role in ("target", "draft") for k, v in d.pop(role).items()}
        return {**d, **sizes}


# --------------------------------------------------------------------------------------------
# corpus


def _run(cmd: list[str], cwd: Path) -> None:
    print("$", " ".join(cmd), flush=True)
    subprocess.run(cmd, cwd=cwd, check=True)


def _debs_missing(workdir: Path) -> bool:
    """Whether ``apt-get download`` still has to fetch the Debian packages into ``workdir/debs``."""
    return any(not list((workdir / "debs").glob(f"{name}*.deb")) for name in DEBIAN_PACKAGES)


def _wheel_missing(workdir: Path) -> bool:
    """Whether ``pip download`` still has to fetch the konlpy wheel into ``workdir/wheels``."""
    return not list((workdir / "wheels").glob("konlpy-*.whl"))


def check_requirements(workdir: Path) -> list[str]:
    """What would stop :func:`obtain_corpus` in ``workdir``, found before anything is downloaded.

    Checks the ``train`` extra (beautifulsoup4, module ``bs4``), and only for the steps still to
    do in ``workdir`` (files already there are reused): ``apt-get`` to download the ``.deb``
    files, ``dpkg-deb`` to unpack them, ``pip`` to download the konlpy wheel.

    Returns:
        One Korean sentence per problem, each saying what to install or do; empty when ready.
    """
    problems = []
    if importlib.util.find_spec("bs4") is None:
        problems.append(
            "beautifulsoup4(bs4)가 설치되어 있지 않습니다. 학습용 추가 패키지를 설치하세요: "
            'pip install "decodelab[train]" (저장소를 내려받아 설치했다면 저장소 폴더에서 pip install -e ".[train]")'
        )
    debian = "데비안/우분투 계열 리눅스에서 실행하거나, 다른 컴퓨터에서 받은 파일을 --workdir 폴더에 넣어 두세요"
    if _debs_missing(workdir) and shutil.which("apt-get") is None:
        problems.append(
            f"apt-get 명령이 없어 말뭉치(corpus) 데비안 패키지({', '.join(DEBIAN_PACKAGES)})를 내려받을 수 "
            f"없습니다. {debian} ({workdir / 'debs'}/*.deb)."
        )
    if not (workdir / "root").exists() and shutil.which("dpkg-deb") is None:
        problems.append(
            f"dpkg-deb 명령이 없어 데비안 패키지(.deb)를 풀 수 없습니다. {debian} "
            f"(풀어 둔 파일: {workdir / 'root'}/)."
        )
    if _wheel_missing(workdir) and importlib.util.find_spec("pip") is None:
        problems.append(
            f"이 파이썬({sys.executable})에 pip가 없어 konlpy==0.6.0 을 내려받을 수 없습니다. "
            f"python -m ensurepip 로 pip를 설치하세요."
        )
    return problems


def download_failure_message(exc: subprocess.CalledProcessError, workdir: Path) -> str:
    """One Korean line for a failed corpus step of :func:`obtain_corpus`: what failed, what to do.

    ``exc.cmd`` is the command list given to :func:`_run` (``apt-get download``, ``dpkg-deb -x``
    or ``python -m pip download``).
    """
    cmd = [str(c) for c in exc.cmd] if isinstance(exc.cmd, (list, tuple)) else [str(exc.cmd)]
    shown = f"`{shlex.join(cmd)}` (종료 코드 {exc.returncode})"
    if Path(cmd[0]).name == "dpkg-deb":
        return (
            f"내려받은 데비안 패키지를 풀지 못했습니다: {shown}. 파일이 손상되었을 수 있으니 "
            f"{workdir / 'debs'} 폴더를 지우고 다시 실행하세요."
        )
    if "pip" in cmd:
        where = "PyPI(pip 저장소)"
    elif Path(cmd[0]).name == "apt-get":
        where = "데비안/우분투 apt 저장소(필요하면 먼저 sudo apt-get update)"
    else:
        where = "패키지 저장소"
    return (
        f"말뭉치(corpus) 내려받기에 실패했습니다: {shown}. 인터넷 연결과 {where}에 접속되는지 확인한 뒤 "
        f"다시 실행하세요 (이미 받은 파일은 --workdir {workdir} 에 남아 다시 쓰입니다)."
    )


def _html_text(path: str) -> str:
    from bs4 import BeautifulSoup

    with open(path, encoding="utf-8", errors="replace") as fh:
        soup = BeautifulSoup(fh.read(), "html.parser")
    for tag in soup(["script", "style", "header", "aside", "nav", "noscript"]):
        tag.decompose()
    area = soup.find(id="DisplayArea") or soup.body or soup
    return area.get_text("\n")


def _korean_lines(text: str, min_ratio: float = 0.3, min_hangul: int = 4) -> list[str]:
    out = []
    for line in text.splitlines():
        line = re.sub(r"\s+", " ", unicodedata.normalize("NFC", line)).strip()
        if not line:
            continue
        n = len(HANGUL.findall(line))
        if n >= min_hangul and n / max(1, len(line.replace(" ", ""))) >= min_ratio:
            out.append(line)
    return out


def obtain_corpus(workdir: Path, seeds_dir: Path | None = None) -> dict[str, list[str]]:
    """Download and extract the Korean corpus; return ``{source: [document, ...]}``.

    Documents are NFC-normalised strings (one HTML page, one law, one article each).

    Raises:
        subprocess.CalledProcessError: if ``apt-get download`` or ``pip download`` fails
            (no registry reachable) or ``dpkg-deb -x`` fails (a half-unpacked ``workdir/root``
            is removed, so the next run unpacks again); :func:`download_failure_message`
            turns it into a Korean line.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    debs = workdir / "debs"
    debs.mkdir(exist_ok=True)
    if _debs_missing(workdir):
        _run(["apt-get", "download", *DEBIAN_PACKAGES], cwd=debs)
    root = workdir / "root"
    if not root.exists():
        try:
            for deb in sorted(debs.glob("*.deb")):
                _run(["dpkg-deb", "-x", str(deb), str(root)], cwd=workdir)
        except subprocess.CalledProcessError:
            shutil.rmtree(root, ignore_errors=True)
            raise
    wheels = workdir / "wheels"
    if _wheel_missing(workdir):
        _run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(wheels),
              "konlpy==0.6.0"], cwd=workdir)

    docs: dict[str, list[str]] = {k: [] for k in SOURCES}
    for path in sorted(glob.glob(str(root / "usr/share/libreoffice/help/ko/**/*.html"), recursive=True)):
        lines = _korean_lines(_html_text(path))
        if lines:
            docs["libreoffice-help-ko"].append("\n".join(lines))
    for path in sorted(glob.glob(str(root / "usr/share/doc/debian/FAQ/ko/*.html"))):
        lines = _korean_lines(_html_text(path))
        if lines:
            docs["debian-faq-ko"].append("\n".join(lines))
    whl = sorted(wheels.glob("konlpy-*.whl"))[0]
    with zipfile.ZipFile(whl) as zf:
        for name in sorted(zf.namelist()):
            if re.search(r"data/corpus/(kolaw|kobill)/.*\.txt$", name):
                text = zf.read(name).decode("utf-8", errors="replace")
                lines = _korean_lines(text, min_ratio=0.2, min_hangul=2)
                docs["konlpy"].append("\n".join(lines))
    if seeds_dir is not None and seeds_dir.is_dir():
        for path in sorted(seeds_dir.glob("*.txt")):
            docs["seeds"].append("\n".join(_korean_lines(path.read_text(encoding="utf-8"), 0.2, 2)))
    return docs


# --------------------------------------------------------------------------------------------
# tokenizer


def train_tokenizer(texts: list[str], vocab_size: int, out_dir: Path):
    """Train an NFC-normalised byte-level BPE and save it as a transformers tokenizer.

    Special tokens: ``<s>`` (BOS, id 0), ``</s>`` (EOS, id 1), ``<pad>`` (id 2).
    Returns the ``PreTrainedTokenizerFast``.
    """
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=["<s>", "</s>", "<pad>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>",
        model_max_length=1 << 30,
    )
    _save_atomic(fast, out_dir)
    return fast


# --------------------------------------------------------------------------------------------
# models


def _llama_config(cfg: TrainConfig, kind: str, tokenizer):
    from transformers import LlamaConfig

    size: ModelSize = getattr(cfg, kind)
    return LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=size.hidden,
        intermediate_size=size.ff,
        num_hidden_layers=size.layers,
        num_attention_heads=size.heads,
        num_key_value_heads=size.kv_heads,
        max_position_embeddings=cfg.context * 2,
        rms_norm_eps=1e-5,
        rope_theta=10000.0,
        tie_word_embeddings=True,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )


def _batches(ids, cfg: TrainConfig, rng: random.Random):
    import torch

    n = len(ids) - cfg.context - 1
    while True:
        starts = [rng.randrange(n) for _ in range(cfg.batch_size)]
        x = torch.stack([ids[s : s + cfg.context] for s in starts])
        y = torch.stack([ids[s + 1 : s + cfg.context + 1] for s in starts])
        yield x, y


def _lr(step: int, total: int, peak: float, warmup: int = 50) -> float:
    if step < warmup:
        return peak * (step + 1) / warmup
    t = (step - warmup) / max(1, total - warmup)
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * t)))


def heldout_loss(model, ids, context: int, max_windows: int = 64) -> float:
    """Mean next-token cross-entropy (nats/token) on non-overlapping held-out windows."""
    import torch
    import torch.nn.functional as F

    model.eval()
    losses = []
    with torch.inference_mode():
        for k, s in enumerate(range(0, len(ids) - context - 1, context)):
            if k >= max_windows:
                break
            x = ids[s : s + context][None]
            y = ids[s + 1 : s + context + 1][None]
            logits = model(input_ids=x).logits
            losses.append(F.cross_entropy(logits[0], y[0]).item())
    return float(sum(losses) / max(1, len(losses)))


def _train_loop(model, cfg: TrainConfig, train_ids, *, name: str, steps: int, lr: float, weight_decay: float,
                seed: int, loss_fn, log: list):
    """AdamW (betas 0.9/0.95, grad-norm clip 1.0, :func:`_lr` schedule) over random windows.

    ``loss_fn(model, x, y) -> (loss, {metric: float})`` with x, y LongTensors
    ``(batch_size, context)``; each step's metrics are appended to ``log``.
    """
    import torch
    from tqdm import tqdm

    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay, betas=(0.9, 0.95))
    batches = _batches(train_ids, cfg, random.Random(seed))
    model.train()
    bar = tqdm(range(steps), desc=name, unit="step")
    for step in bar:
        for group in opt.param_groups:
            group["lr"] = _lr(step, steps, lr)
        x, y = next(batches)
        loss, metrics = loss_fn(model, x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        log.append({"model": name.split()[0], "step": step, **{k: round(v, 4) for k, v in metrics.items()}})
        bar.set_postfix({k: f"{v:.3f}" for k, v in metrics.items()})
    return model


def train_target(cfg: TrainConfig, tokenizer, train_ids, log: list):
    """Train the target with next-token cross-entropy for ``cfg.target.steps`` AdamW steps."""
    import torch
    import torch.nn.functional as F
    from transformers import LlamaForCausalLM

    def loss_fn(model, x, y):
        logits = model(input_ids=x).logits
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        return loss, {"loss": loss.item()}

    torch.manual_seed(cfg.seed)
    model = LlamaForCausalLM(_llama_config(cfg, "target", tokenizer))
    return _train_loop(model, cfg, train_ids, name="target", steps=cfg.target.steps, lr=cfg.target.lr,
                       weight_decay=0.1, seed=cfg.seed, loss_fn=loss_fn, log=log)


def distill_draft(cfg: TrainConfig, tokenizer, target, train_ids, log: list):
    """Distill the draft: minimise KL(p_target || q_draft) per position (+0.1 x cross-entropy)."""
    import torch
    import torch.nn.functional as F
    from transformers import LlamaForCausalLM

    def loss_fn(draft, x, y):
        with torch.inference_mode():
            p_logits = target(input_ids=x).logits
        p_log = F.log_softmax(p_logits.float(), -1).clone()
        q_logits = draft(input_ids=x).logits
        q_log = F.log_softmax(q_logits, -1)
        kl = F.kl_div(q_log.reshape(-1, q_log.shape[-1]), p_log.reshape(-1, p_log.shape[-1]),
                      log_target=True, reduction="batchmean")
        ce = F.cross_entropy(q_logits.reshape(-1, q_logits.shape[-1]), y.reshape(-1))
        return kl + 0.1 * ce, {"kl": kl.item(), "ce": ce.item()}

    torch.manual_seed(cfg.seed + 1)
    draft = LlamaForCausalLM(_llama_config(cfg, "draft", tokenizer))
    target.eval()
    return _train_loop(draft, cfg, train_ids, name="draft (distil)", steps=cfg.draft.steps, lr=cfg.draft.lr,
                       weight_decay=0.05, seed=cfg.seed + 1, loss_fn=loss_fn, log=log)


def _save_atomic(obj, out: Path) -> None:
    """``obj.save_pretrained`` into a temporary folder, then each file into ``out`` with the atomic
    writer: a crash mid-save never leaves a half-written weight or config file."""
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=f".{out.name}.") as tmp:
        obj.save_pretrained(tmp)
        for f in sorted(Path(tmp).rglob("*")):
            if f.is_file():
                (out / f.relative_to(tmp)).parent.mkdir(parents=True, exist_ok=True)
                atomic_write_bytes(out / f.relative_to(tmp), f.read_bytes())


def _save(model, out: Path) -> None:
    import torch

    _save_atomic(model.to(torch.float16), out)


def _steps(text: str) -> int:
    """argparse type for ``--target-steps`` / ``--draft-steps``: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: 학습 스텝 수는 1 이상의 정수여야 합니다")
    return value


def _parser() -> ArgumentParser:
    """The ``decodelab train`` argument parser (Korean help and errors; defaults from :class:`TrainConfig`)."""
    cfg = TrainConfig()
    ap = ArgumentParser(
        prog="decodelab train",
        description=(
            "대상 모델(target model)과 초안 모델(draft model) 쌍을 처음부터 다시 학습합니다. "
            "말뭉치(corpus)는 apt/pip 저장소에서 내려받습니다: beautifulsoup4(train 추가 패키지, "
            "bash course.sh 로 설치했다면 이미 있음)와 데비안/우분투의 apt-get, dpkg-deb 가 필요합니다. 기본 설정의 학습은 CPU 1스레드로 "
            "약 22분 걸렸습니다 (번들 모델의 train_log.json 기록)."
        ),
        epilog=(
            "번들 모델 쌍을 바꾸려면 (저장소 폴더에서): decodelab train --out decodelab/assets/models "
            "다음에 decodelab card --folder decodelab/assets/models --write. "
            "두 번째 단계 decodelab train eagle 은 대상 모델의 은닉 상태를 읽는 EAGLE 초안 머리를 "
            "내려받기 없이 학습합니다 (decodelab train eagle --help)"
        ),
    )
    ap.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, metavar="DIR",
        help=(
            "학습한 모델(target/, draft/, tokenizer/, train_log.json)을 저장할 폴더 "
            "(기본: 현재 폴더에 새로 만드는 ./decodelab-models; 번들 모델은 건드리지 않습니다). "
            "--out decodelab/assets/models 로 주면 번들 모델 쌍을 덮어써 바꿉니다. 그 뒤 "
            "decodelab card --folder decodelab/assets/models 로 모델 카드(MODEL_CARD.md)를 다시 쓰세요."
        ),
    )
    ap.add_argument(
        "--workdir", type=Path, default=Path(tempfile.gettempdir()) / "decodelab-corpus", metavar="DIR",
        help=(
            "내려받은 .deb/.whl 파일과 풀어 놓은 말뭉치를 두는 작업 폴더 (기본: %(default)s). "
            "이미 있는 파일은 다시 내려받지 않으므로, 인터넷이 없는 컴퓨터에서는 이 폴더를 미리 채워 두세요."
        ),
    )
    ap.add_argument(
        "--seeds", type=Path, default=None, metavar="DIR",
        help="말뭉치에 더할 한국어 원문 글(*.txt)이 든 폴더 (주지 않으면 더하지 않습니다). 번들 모델은 이런 글 두 편을 "
             "더해 학습했습니다 (train_log.json의 corpus.seeds)",
    )
    ap.add_argument(
        "--target-steps", type=_steps, default=None, metavar="N",
        help=(
            f"대상 모델의 학습 스텝 수 (AdamW, 기본 {cfg.target.steps}). "
            "바꾸면 번들 모델과 다른 모델이 나옵니다 (줄이면 빨리 끝나는 대신 품질이 떨어집니다)."
        ),
    )
    ap.add_argument(
        "--draft-steps", type=_steps, default=None, metavar="N",
        help=(
            f"초안 모델의 증류(distillation) 학습 스텝 수 (기본 {cfg.draft.steps}). "
            "바꾸면 번들 모델과 다른 모델이 나오고 수락률(acceptance rate)도 달라집니다."
        ),
    )
    return ap


def _argument_problems(args) -> list[str]:
    """Korean sentences for ``--out`` / ``--seeds`` values that would fail only after the download:
    an ``--out`` that is an existing file, a ``--seeds`` that is not a folder of ``*.txt`` files."""
    problems = []
    if args.out.exists() and not args.out.is_dir():
        problems.append(f"--out {args.out}: 이미 있는 파일입니다. 모델 쌍을 저장할 폴더(없으면 새로 만듦)를 주세요 "
                        "(기본: ./decodelab-models).")
    if args.seeds is not None and not args.seeds.is_dir():
        problems.append(f"--seeds {args.seeds}: 폴더가 없습니다. 말뭉치에 더할 글(*.txt)이 든 폴더를 주거나 이 옵션을 빼세요.")
    elif args.seeds is not None and not sorted(args.seeds.glob("*.txt")):
        problems.append(f"--seeds {args.seeds}: 이 폴더에 .txt 파일이 없습니다. 말뭉치에 더할 글(*.txt)이 든 폴더를 주세요.")
    return problems


def main(argv: list[str] | None = None) -> int:
    """Command line: ``decodelab train [--out DIR] [--workdir DIR] [--seeds DIR] [--target-steps N]
    [--draft-steps N]``; see ``decodelab train --help``.

    Returns:
        0 after the pair is saved in ``--out`` (default ``./decodelab-models``); 2, with one Korean
        line per problem on stderr, when ``--out`` is a file or ``--seeds`` is not a folder of
        ``*.txt`` (checked before any download), when a requirement is missing (:func:`check_requirements`,
        checked before any download) or a corpus download/unpack step fails
        (:func:`download_failure_message`).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["eagle"]:  # the second stage: the EAGLE draft head, self-distilled (decodelab.eagle)
        from ..eagle.train import main as eagle_main

        return eagle_main(argv[1:])
    args = _parser().parse_args(argv)
    problems = _argument_problems(args) + check_requirements(args.workdir)
    if problems:
        for problem in problems:
            print(f"decodelab train: {problem}", file=sys.stderr)
        return 2

    cfg = TrainConfig()
    if args.target_steps is not None:
        cfg.target.steps = args.target_steps
    if args.draft_steps is not None:
        cfg.draft.steps = args.draft_steps
    random.seed(cfg.seed)
    out = args.out
    print(f"학습한 모델을 {out.resolve()} 폴더에 저장합니다.", flush=True)
    t0 = time.time()
    try:
        docs = obtain_corpus(args.workdir, args.seeds)
    except subprocess.CalledProcessError as exc:
        print(f"decodelab train: {download_failure_message(exc, args.workdir)}", file=sys.stderr)
        return 2

    import torch

    from .._torch import set_threads

    set_threads(cfg.threads)
    stats = {k: {"documents": len(v), "characters": sum(map(len, v))} for k, v in docs.items()}
    print(json.dumps(stats, ensure_ascii=False), flush=True)
    all_docs = [(k, d) for k, v in docs.items() for d in v]
    rng = random.Random(cfg.seed)
    rng.shuffle(all_docs)
    n_held = max(1, int(len(all_docs) * cfg.heldout_fraction))
    held = [d for _, d in all_docs[:n_held]]
    train = [d for _, d in all_docs[n_held:]]

    (out / "tokenizer").mkdir(parents=True, exist_ok=True)
    tokenizer = train_tokenizer(train, cfg.vocab_size, out / "tokenizer")
    eos = tokenizer.eos_token_id

    def encode(texts):
        ids = []
        for t in texts:
            ids.extend(tokenizer(t)["input_ids"] + [eos])
        return torch.tensor(ids, dtype=torch.long)

    train_ids, held_ids = encode(train), encode(held)
    print(f"train tokens {len(train_ids):,}  held-out tokens {len(held_ids):,}", flush=True)
    log: list = []
    t1 = time.time()
    target = train_target(cfg, tokenizer, train_ids, log)
    t2 = time.time()
    draft = distill_draft(cfg, tokenizer, target, train_ids, log)
    t3 = time.time()
    result = {
        "config": cfg.as_log(),
        "corpus": {k: {**stats[k], "source": SOURCES[k]} for k in SOURCES},
        "train_tokens": len(train_ids),
        "heldout_tokens": len(held_ids),
        "heldout_loss_target": heldout_loss(target, held_ids, cfg.context),
        "heldout_loss_draft": heldout_loss(draft, held_ids, cfg.context),
        "parameters_target": sum(p.numel() for p in target.parameters()),
        "parameters_draft": sum(p.numel() for p in draft.parameters()),
        "seconds_corpus_and_tokenizer": round(t1 - t0, 1),
        "seconds_target": round(t2 - t1, 1),
        "seconds_draft": round(t3 - t2, 1),
        "torch": torch.__version__,
        "log": log,
    }
    _save(target, out / "target")
    _save(draft, out / "draft")
    for sub in ("target", "draft"):
        _save_atomic(tokenizer, out / sub)
    atomic_write_text(out / "train_log.json", json.dumps(result, ensure_ascii=False, indent=1))
    print(json.dumps({k: v for k, v in result.items() if k != "log"}, ensure_ascii=False, indent=1))
    print(_finished_message(out), flush=True)
    return 0


def _finished_message(out: Path) -> str:
    """Korean closing line: where the pair is and the next step (card, or how to load it)."""
    out = out.resolve()
    card = f"decodelab card --folder {out}"
    if out == ASSETS.resolve():
        return f"번들 모델 쌍을 새로 학습한 모델로 바꿨습니다. 모델 카드를 다시 쓰세요: {card}"
    return (
        f"학습한 모델 쌍을 {out} 에 저장했습니다 (번들 모델은 그대로입니다). 써 보려면: "
        f"decodelab.load_models(target=r'{out / 'target'}', draft=r'{out / 'draft'}'), 모델 카드: {card}"
    )


if __name__ == "__main__":
    raise SystemExit(main())

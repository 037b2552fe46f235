"""Reproducible training of the bundled target/draft model pair.

Run with ``decodelab train`` (or ``python -m decodelab.train``). Needs the ``train`` extra
(``pip install -e .[train]``), ``apt-get`` (Debian/Ubuntu) and ``pip`` reaching their registries.

Pipeline (every step seeded, losses logged to ``train_log.json`` beside the weights):

1. **Corpus** (:func:`obtain_corpus`): Korean text obtained from package registries, never from a
   model hub:

   - Debian ``libreoffice-help-ko`` (LibreOffice help, MPL-2.0): ~2,500 HTML pages;
   - Debian ``debian-faq-ko`` (The Debian FAQ in Korean, GPL-2+);
   - PyPI ``konlpy==0.6.0`` package data: the Korean constitution and ten bills (public-domain
     legal text, ``konlpy/data/corpus/kolaw`` and ``kobill``);
   - the course's two seed articles, when ``../shared/seeds`` is present.

   HTML is reduced to text with BeautifulSoup; lines with few Hangul syllables are dropped.
2. **Tokenizer** (:func:`train_tokenizer`): byte-level BPE (``tokenizers``), NFC-normalised.
3. **Target** (:func:`train_target`): a Llama-style causal LM trained with next-token cross-entropy.
4. **Draft** (:func:`distill_draft`): a much smaller Llama-style model distilled from the target by
   minimising KL(p_target || q_draft) over next-token distributions, so that speculative decoding
   accepts many draft tokens (Leviathan et al. 2023, arXiv 2211.17192: acceptance rate = 1 - TV(p, q)).

Weights are saved as fp16 safetensors (loaded back as fp32 by :func:`decodelab.load_models`).
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile
import time
import unicodedata
import zipfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

HANGUL = re.compile(r"[\uac00-\ud7a3]")

#: Where the bundled models live inside the package.
ASSETS = Path(__file__).resolve().parent / "assets" / "models"

SOURCES = {
    "libreoffice-help-ko": "Debian package libreoffice-help-ko (LibreOffice help, MPL-2.0)",
    "debian-faq-ko": "Debian package debian-faq-ko (The Debian FAQ, Korean translation, GPL-2+)",
    "konlpy": "PyPI konlpy==0.6.0 package data kolaw/kobill (Korean constitution and bills, public domain)",
    "seeds": "the course's two seed articles (../shared/seeds)",
}


@dataclass
class TrainConfig:
    """Hyper-parameters of the bundled pair. Changing any of them changes the bundled weights."""

    seed: int = 1234
    vocab_size: int = 4096
    context: int = 256
    # target: ~8.7 M parameters, 35 MB in fp32: above a typical 32 MB laptop last-level cache
    target_hidden: int = 320
    target_layers: int = 6
    target_heads: int = 5
    target_kv_heads: int = 5
    target_ff: int = 864
    target_steps: int = 600
    target_lr: float = 2e-3
    # draft: ~1 M parameters
    draft_hidden: int = 128
    draft_layers: int = 2
    draft_heads: int = 2
    draft_kv_heads: int = 2
    draft_ff: int = 352
    draft_steps: int = 400
    draft_lr: float = 3e-3
    batch_size: int = 8
    heldout_fraction: float = 0.05
    threads: int = 1
    extra: dict = field(default_factory=dict)


# --------------------------------------------------------------------------------------------
# corpus


def _run(cmd: list[str], cwd: Path) -> None:
    print("$", " ".join(cmd), flush=True)
    subprocess.run(cmd, cwd=cwd, check=True)


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
            (no registry reachable).
    """
    workdir.mkdir(parents=True, exist_ok=True)
    debs = workdir / "debs"
    debs.mkdir(exist_ok=True)
    if not list(debs.glob("libreoffice-help-ko*.deb")) or not list(debs.glob("debian-faq-ko*.deb")):
        _run(["apt-get", "download", "libreoffice-help-ko", "debian-faq-ko"], cwd=debs)
    root = workdir / "root"
    if not root.exists():
        for deb in sorted(debs.glob("*.deb")):
            _run(["dpkg-deb", "-x", str(deb), str(root)], cwd=workdir)
    wheels = workdir / "wheels"
    if not list(wheels.glob("konlpy-*.whl")):
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
    fast.save_pretrained(str(out_dir))
    return fast


# --------------------------------------------------------------------------------------------
# models


def _llama_config(cfg: TrainConfig, kind: str, tokenizer):
    from transformers import LlamaConfig

    g = lambda k: getattr(cfg, f"{kind}_{k}")  # noqa: E731
    return LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=g("hidden"),
        intermediate_size=g("ff"),
        num_hidden_layers=g("layers"),
        num_attention_heads=g("heads"),
        num_key_value_heads=g("kv_heads"),
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
    """Train the target with next-token cross-entropy for ``cfg.target_steps`` AdamW steps."""
    import torch
    import torch.nn.functional as F
    from transformers import LlamaForCausalLM

    def loss_fn(model, x, y):
        logits = model(input_ids=x).logits
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        return loss, {"loss": loss.item()}

    torch.manual_seed(cfg.seed)
    model = LlamaForCausalLM(_llama_config(cfg, "target", tokenizer))
    return _train_loop(model, cfg, train_ids, name="target", steps=cfg.target_steps, lr=cfg.target_lr,
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
    return _train_loop(draft, cfg, train_ids, name="draft (distil)", steps=cfg.draft_steps, lr=cfg.draft_lr,
                       weight_decay=0.05, seed=cfg.seed + 1, loss_fn=loss_fn, log=log)


def _save(model, out: Path) -> None:
    import torch

    model = model.to(torch.float16)
    model.save_pretrained(str(out), safe_serialization=True)


def main(argv: list[str] | None = None) -> int:
    """Command line: ``decodelab train [--out DIR] [--workdir DIR] [--quick]``."""
    ap = argparse.ArgumentParser(prog="decodelab train", description="번들 모델 쌍(대상/초안)을 다시 학습합니다.")
    ap.add_argument("--out", type=Path, default=ASSETS, help="output folder (default: the bundled assets)")
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "decodelab-corpus")
    ap.add_argument("--seeds", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "seeds")
    ap.add_argument("--target-steps", type=int, default=None)
    ap.add_argument("--draft-steps", type=int, default=None)
    args = ap.parse_args(argv)

    import torch

    cfg = TrainConfig()
    if args.target_steps is not None:
        cfg.target_steps = args.target_steps
    if args.draft_steps is not None:
        cfg.draft_steps = args.draft_steps
    torch.set_num_threads(cfg.threads)
    random.seed(cfg.seed)
    t0 = time.time()
    docs = obtain_corpus(args.workdir, args.seeds)
    stats = {k: {"documents": len(v), "characters": sum(map(len, v))} for k, v in docs.items()}
    print(json.dumps(stats, ensure_ascii=False), flush=True)
    all_docs = [(k, d) for k, v in docs.items() for d in v]
    rng = random.Random(cfg.seed)
    rng.shuffle(all_docs)
    n_held = max(1, int(len(all_docs) * cfg.heldout_fraction))
    held = [d for _, d in all_docs[:n_held]]
    train = [d for _, d in all_docs[n_held:]]

    out = args.out
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
        "config": asdict(cfg),
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
        tokenizer.save_pretrained(str(out / sub))
    (out / "train_log.json").write_text(json.dumps(result, ensure_ascii=False, indent=1), encoding="utf-8")
    print(json.dumps({k: v for k, v in result.items() if k != "log"}, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

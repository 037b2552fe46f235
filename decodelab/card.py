"""``decodelab card``: measure the bundled pair and write ``assets/models/MODEL_CARD.md``.

The card combines what training logged (``train_log.json``: corpus, steps, time, held-out loss)
with what is measured here: greedy acceptance rate of the draft against the target at
gamma = 1, 2, 4, 8 (Leviathan et al. 2023 / vLLM definitions) and three sample generations.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ._atomic import atomic_write_text
from ._cli import ArgumentParser
from ._paths import MODELS_DIR

CARD_PROMPTS = ["대한민국은 민주공화국이다.", "문서를 저장하려면", "표의 셀을 선택한 다음", "데비안 패키지는",
                "국회는 법률을", "이 대화 상자에서", "글꼴 크기를 바꾸려면", "모든 국민은"]


def acceptance_table(pair, gammas=(1, 2, 4, 8), tokens: int = 64) -> list[dict]:
    """Greedy acceptance rate, alpha, mean acceptance length and tokens per target call per
    gamma, pooled over :data:`CARD_PROMPTS` (``tokens`` new tokens each, EOS ignored), as measured
    by :func:`decodelab.speculative.speedup_sweep` (without the target-only timing runs).

    Returns one dict per gamma: ``gamma``, ``acceptance_rate``, ``alpha``,
    ``mean_acceptance_length``, ``tokens_per_target_call``.
    """
    from .speculative import speedup_sweep

    rows = speedup_sweep(pair.target, pair.draft, pair.tokenizer, CARD_PROMPTS, tokens, gammas, compare=False)
    return [{"gamma": r.gamma, "acceptance_rate": r.acceptance_rate, "alpha": r.alpha,
             "mean_acceptance_length": r.mean_acceptance_length, "tokens_per_target_call": r.tokens_per_target_call}
            for r in rows]


def write_card(folder: Path = MODELS_DIR) -> str:
    """Measure and write ``MODEL_CARD.md`` in ``folder``; return its text."""
    import torch

    from . import generate
    from .models import load_models
    from .latency import expected_tokens_per_call

    log = json.loads((folder / "train_log.json").read_text(encoding="utf-8"))
    pair = load_models(folder / "target", folder / "draft")
    cfg = log["config"]
    mb = lambda sub: (folder / sub / "model.safetensors").stat().st_size / 1e6  # noqa: E731
    corpus_rows = "\n".join(
        f"| {k} | {v['source']} | {v['documents']:,} | {v['characters']:,} |" for k, v in log["corpus"].items()
    )
    acc = acceptance_table(pair)
    acc_rows = "\n".join(
        f"| {r['gamma']} | {r['acceptance_rate']:.3f} | {r['alpha']:.3f} | {r['mean_acceptance_length']:.2f} | "
        f"{expected_tokens_per_call(r['alpha'], r['gamma']):.2f} | {r['tokens_per_target_call']:.2f} |"
        for r in acc
    )
    torch.manual_seed(0)
    samples = []
    for prompt in CARD_PROMPTS[:3]:
        g = generate(pair.target, pair.tokenizer, prompt, 40)
        s = generate(pair.target, pair.tokenizer, prompt, 40, temperature=0.8, top_p=0.9, seed=0)
        samples.append(f"- `{prompt}`\n  - greedy: {g.text.strip()!r}\n  - sampled (T=0.8, top-p 0.9, seed 0): {s.text.strip()!r}")
    pt, pd = log["parameters_target"], log["parameters_draft"]
    text = f"""# Model card: decodelab bundled target / draft pair

Two Llama-architecture causal language models (Hugging Face format, `LlamaForCausalLM`) sharing one
byte-level BPE tokenizer, trained from scratch on a small Korean corpus by
`decodelab train --out decodelab/assets/models`
(`decodelab/train.py`, seed {cfg['seed']}). They exist to make the course's decoding, timing and
speculative-decoding experiments real and offline. They are **tiny teaching models**: they write
Korean-looking text in the style of software help pages and legal text, and are not useful for
anything else. Weights are stored as float16 safetensors ({mb('target'):.1f} MB + {mb('draft'):.1f} MB)
and loaded as float32.

## Architecture

| | target | draft |
|---|---|---|
| parameters | {pt:,} ({pt / 1e6:.2f} M) | {pd:,} ({pd / 1e6:.2f} M) |
| layers | {cfg['target_layers']} | {cfg['draft_layers']} |
| hidden size | {cfg['target_hidden']} | {cfg['draft_hidden']} |
| attention heads / KV heads | {cfg['target_heads']} / {cfg['target_kv_heads']} | {cfg['draft_heads']} / {cfg['draft_kv_heads']} |
| MLP size | {cfg['target_ff']} | {cfg['draft_ff']} |
| vocabulary | {cfg['vocab_size']} (shared) | {cfg['vocab_size']} (shared) |
| context (max positions) | {2 * cfg['context']} (trained on {cfg['context']}) | {2 * cfg['context']} |
| tied input/output embeddings | yes | yes |
| fp32 weight bytes in memory | {pt * 4 / 1e6:.1f} MB | {pd * 4 / 1e6:.1f} MB |

The target's fp32 weights ({pt * 4 / 1e6:.1f} MB) exceed a typical 32 MB laptop last-level cache, so its decode
step must stream weights from DRAM there. (The course's CI machines report a 300 MiB L3, which holds it.)

## Training data

Obtained by the training script itself from package registries, never from a model hub:

| key | source and licence | documents | characters (after filtering) |
|---|---|---|---|
{corpus_rows}

HTML reduced to text with BeautifulSoup; only lines with >= 30% Hangul kept (20% for the legal and
seed texts). {log['train_tokens']:,} training tokens, {log['heldout_tokens']:,} held-out tokens (5% of documents,
chosen by the seed).

## Training

- Tokenizer: byte-level BPE (`tokenizers`), NFC normaliser, {cfg['vocab_size']} entries incl. `<s>`, `</s>`, `<pad>`.
- Target: next-token cross-entropy, AdamW (lr {cfg['target_lr']}, cosine to 10%, 50 warm-up steps, weight decay 0.1),
  batch {cfg['batch_size']} x {cfg['context']} tokens, {cfg['target_steps']} steps, {log['seconds_target'] / 60:.1f} min ({cfg['threads']} torch thread on a shared 2-core machine).
- Draft: distilled from the target: KL(p_target || q_draft) + 0.1 x cross-entropy, AdamW (lr {cfg['draft_lr']}),
  {cfg['draft_steps']} steps, {log['seconds_draft'] / 60:.1f} min.
- torch {log['torch']}. Per-step losses are in `train_log.json`.

## Evaluation (held-out, nats/token)

| model | held-out cross-entropy | perplexity |
|---|---|---|
| target | {log['heldout_loss_target']:.3f} | {2.718281828 ** log['heldout_loss_target']:.1f} |
| draft | {log['heldout_loss_draft']:.3f} | {2.718281828 ** log['heldout_loss_draft']:.1f} |

## Greedy acceptance of the draft against the target

`speculative_generate(..., temperature=0)` over {len(CARD_PROMPTS)} prompts x 64 tokens. Acceptance rate =
accepted / drafted tokens; mean acceptance length = 1 + accepted / drafts (vLLM's definitions). Alpha =
accepted / evaluated draft positions (a round whose first rejection is at position k evaluated k + 1 of
them), Leviathan et al.'s per-token acceptance probability; E[len] = (1 - alpha^(gamma+1)) / (1 - alpha)
is their prediction of the mean acceptance length from it.

| gamma | acceptance rate | alpha | mean acceptance length | E[len] from alpha | tokens per target call |
|---|---|---|---|---|---|
{acc_rows}

## Sample generations

{chr(10).join(samples)}

## Limits

Trained on under a million tokens of help-page and legal Korean: text is locally fluent, globally
incoherent, and often repeats. No safety tuning; it knows no facts worth quoting. Regenerate this card with
`decodelab card` after retraining.
"""
    atomic_write_text(folder / "MODEL_CARD.md", text)  # a failed run never leaves half a card
    return text


#: What a folder made by ``decodelab train`` holds (what :func:`write_card` reads).
TRAIN_FILES = ("train_log.json", "target/config.json", "target/model.safetensors", "draft/config.json",
               "draft/model.safetensors")


def check_train_folder(folder: Path) -> Path:
    """``folder`` if it is a model-pair folder made by ``decodelab train`` (:data:`TRAIN_FILES`).

    Raises:
        FileNotFoundError: (Korean) ``folder`` is missing, is a file, or lacks one of the files.
    """
    folder = Path(folder)
    if not folder.is_dir():
        what = "파일입니다" if folder.exists() else "없습니다"
        raise FileNotFoundError(f"--folder {folder}: 폴더가 {what}. `decodelab train`이 만든 모델 쌍 폴더를 주세요 "
                                f"(기본: 번들 모델 {MODELS_DIR}).")
    missing = [f for f in TRAIN_FILES if not (folder / f).is_file()]
    if missing:
        raise FileNotFoundError(f"--folder {folder}: `decodelab train`이 만든 모델 쌍 폴더가 아닙니다 "
                                f"(없는 파일: {', '.join(missing)}). 모델 카드는 학습 기록(train_log.json)과 "
                                "target/, draft/ 모델로 만듭니다.")
    return folder


def main(argv: list[str] | None = None) -> int:
    """``decodelab card [--folder DIR]``: re-measure and rewrite the model card.

    Returns:
        0 written; 2 (Korean message on stderr) when ``--folder`` is not a folder made by
        ``decodelab train`` (:func:`check_train_folder`) or for bad arguments.
    """
    ap = ArgumentParser(prog="decodelab card", description="모델 쌍 폴더의 MODEL_CARD.md를 측정해 다시 씁니다.")
    ap.add_argument("--folder", type=Path, default=MODELS_DIR, metavar="DIR",
                    help="`decodelab train`이 만든 모델 쌍 폴더 (train_log.json, target/, draft/; 기본: 번들 모델)")
    args = ap.parse_args(argv)
    try:
        folder = check_train_folder(args.folder)
    except FileNotFoundError as e:
        print(f"decodelab card: 오류: {e}", file=sys.stderr)
        return 2
    print(write_card(folder))
    return 0

"""``decodelab card``: measure the bundled pair (or a trained folder) and print its model card;
``--write`` rewrites ``assets/models/MODEL_CARD.md`` (or the folder's).

The card combines what training logged (``train_log.json``: corpus, steps, time, held-out loss)
with what is measured here: greedy acceptance rate of the draft against the target at
gamma = 1, 2, 4, 8 (Leviathan et al. 2023 / vLLM definitions) and three sample generations.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .._atomic import atomic_write_text
from .._cli import ArgumentParser
from .._paths import MODELS_DIR

CARD_PROMPTS = ["대한민국은 민주공화국이다.", "문서를 저장하려면", "표의 셀을 선택한 다음", "데비안 패키지는",
                "국회는 법률을", "이 대화 상자에서", "글꼴 크기를 바꾸려면", "모든 국민은"]


def acceptance_table(pair, gammas=(1, 2, 4, 8), tokens: int = 64) -> list[dict]:
    """Greedy acceptance rate, alpha, mean acceptance length and tokens per target call per
    gamma, pooled over :data:`CARD_PROMPTS` (``tokens`` new tokens each, EOS ignored), as measured
    by :func:`decodelab.speculative_experiments.speedup_sweep` (without the target-only timing runs).

    Returns one dict per gamma: ``gamma``, ``acceptance_rate``, ``alpha``,
    ``mean_acceptance_length``, ``tokens_per_target_call``.
    """
    from ..speculative_experiments import speedup_sweep

    rows = speedup_sweep(pair.target, pair.draft, pair.tokenizer, CARD_PROMPTS, tokens, gammas, compare=False)
    return [{"gamma": r.gamma, "acceptance_rate": r.acceptance_rate, "alpha": r.alpha,
             "mean_acceptance_length": r.mean_acceptance_length, "tokens_per_target_call": r.tokens_per_target_call}
            for r in rows]


def eagle_section(pair, folder: Path, *, reps: int = 3, tokens: int = 64) -> str:
    """The model card's EAGLE head section: size, training, greedy acceptance per position of
    the head as a chain (gamma 6) and with its tree, and the measured speedup of every proposer
    (:func:`decodelab.teach.compare.compare_proposers`, ``reps`` repetitions over 4 of
    :data:`CARD_PROMPTS`, median), with the machine's load average."""
    import os

    from ..teach.compare import compare_proposers, default_methods
    from ..eagle import DEFAULT_TREE, EagleProposer, load_head
    from ..speculative_experiments import speedup_sweep

    head = load_head(pair.target, folder / "eagle")
    log = json.loads((folder / "eagle" / "train_log.json").read_text(encoding="utf-8"))
    cfg = log["config"]
    n = sum(p.numel() for p in head.parameters())
    mb = (folder / "eagle" / "model.safetensors").stat().st_size / 1e6
    acc_rows = []
    for name, prop, g in (("head, chain", EagleProposer(pair.target, None, head), 6),
                          ("head + tree", EagleProposer(pair.target, DEFAULT_TREE, head), DEFAULT_TREE.depth)):
        (r,) = speedup_sweep(pair.target, prop, pair.tokenizer, CARD_PROMPTS, tokens, [g], compare=False)
        per = " / ".join(f"{x:.2f}" for x in r.stats.per_position_acceptance_rate)
        acc_rows.append(f"| {name} | {g} | {r.alpha:.3f} | {r.mean_acceptance_length:.2f} | {per} |")
    (d,) = speedup_sweep(pair.target, pair.draft, pair.tokenizer, CARD_PROMPTS, tokens, [6], compare=False)
    per = " / ".join(f"{x:.2f}" for x in d.stats.per_position_acceptance_rate)
    acc_rows.append(f"| draft model (for comparison) | 6 | {d.alpha:.3f} | {d.mean_acceptance_length:.2f} | {per} |")
    load0 = os.getloadavg()[0]
    rows = compare_proposers(pair.target, pair.tokenizer, default_methods(pair), CARD_PROMPTS[:4], tokens, reps=reps)
    load1 = os.getloadavg()[0]
    speed_rows = "\n".join(
        f"| {x.name} | {x.gamma} | {x.nodes} | {x.alpha:.3f} | {x.mean_acceptance_length:.2f} | {x.c:.3f} | "
        f"{x.verify_cost:.2f} | {x.predicted:.2f}x | {x.speedup:.2f}x ({min(x.speedups):.2f}-{max(x.speedups):.2f}) |"
        for x in rows)
    h = log["heldout"]
    return f"""## EAGLE draft head (`eagle/`)

A feature-level draft head for the target (`decodelab/eagle/`, EAGLE-1 style: `fc([embedding(x_t+1); f_t])`, one
Llama decoder layer with the target's sizes, read out through the target's own LM head). {n:,} parameters
({n / 1e6:.2f} M), stored as float16 ({mb:.1f} MB); embeddings and LM head are the target's. Trained by
`decodelab train eagle` by self-distillation, with no download: {cfg['sequences']} texts of {cfg['length']} tokens
sampled from the target after BOS (temperatures {', '.join(str(t) for t in cfg['temperatures'])}; 0 = greedy after
{cfg['sampled_start']} sampled tokens), the target's last hidden states on them, then {cfg['steps']} AdamW steps
(batch {cfg['batch']}, lr {cfg['lr']}) on smooth-L1 feature regression + KL to the target's distribution, plus the
same losses on a second, unrolled step that reads the head's own predicted features; {log['seconds_data'] / 60:.1f} min
of data generation and {log['seconds_train'] / 60:.1f} min of training on a shared 2-core machine
({cfg['threads']} torch thread). Held-out texts: top-1 agreement with the target {h['top1']:.3f}
(unrolled step {h['top1_unrolled']:.3f}), KL {h['kl']:.3f} nats.

Greedy acceptance over {len(CARD_PROMPTS)} prompts x {tokens} tokens (alpha per depth for the tree: some candidate
accepted), acceptance per draft position = accepted / drafts that reached it:

| drafter | gamma (depth) | alpha | mean acceptance length | acceptance per position |
|---|---|---|---|---|
{chr(10).join(acc_rows)}

Measured speedup over target-only greedy decoding (`decodelab.teach.compare.compare_proposers`, 4 prompts x {tokens}
tokens, {reps} repetitions, median and range; load average {load0:.1f} before, {load1:.1f} after, on the machine that
wrote this card). Predicted = Leviathan et al. with the measured alpha, c and verification cost. Greedy outputs
were identical to target-only decoding in every run.

| method | gamma | drafted tokens | alpha | mean acceptance length | c | verification cost | predicted | measured |
|---|---|---|---|---|---|---|---|---|
{speed_rows}

"""


def write_card(folder: Path = MODELS_DIR, *, write: bool = True) -> str:
    """Measure and (when ``write``) write ``MODEL_CARD.md`` in ``folder``; return its text."""
    import torch

    from .. import generate
    from ..models import load_models
    from ..latency import expected_tokens_per_call

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
(`decodelab/tools/train.py`, seed {cfg['seed']}). They exist to make the course's decoding, timing and
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

{eagle_section(pair, folder) if (folder / "eagle" / "config.json").is_file() else ""}## Sample generations

{chr(10).join(samples)}

## Limits

Trained on under a million tokens of help-page and legal Korean: text is locally fluent, globally
incoherent, and often repeats. No safety tuning; it knows no facts worth quoting. Regenerate this card with
`decodelab card --write` after retraining.
"""
    if write:
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
    """``decodelab card [--folder DIR] [--write]``: re-measure the model card and print it; with
    ``--write`` also rewrite ``DIR/MODEL_CARD.md`` (the bundled pair's card is a file of the package:
    it changes only when asked, after retraining).

    Returns:
        0 measured (and written); 2 (Korean message on stderr) when ``--folder`` is not a folder made
        by ``decodelab train`` (:func:`check_train_folder`) or for bad arguments.
    """
    ap = ArgumentParser(prog="decodelab card",
                        description="모델 쌍 폴더의 모델 카드(MODEL_CARD.md)를 이 컴퓨터에서 다시 측정해 보여 줍니다 "
                                    "(--write 를 주면 그 파일에 씁니다).")
    ap.add_argument("--folder", type=Path, default=MODELS_DIR, metavar="DIR",
                    help="`decodelab train`이 만든 모델 쌍 폴더 (train_log.json, target/, draft/; 기본: 번들 모델)")
    ap.add_argument("--write", action="store_true",
                    help="측정한 카드를 DIR/MODEL_CARD.md에 씁니다 (번들 모델이면 패키지의 파일이 바뀝니다: 다시 학습한 뒤에만)")
    args = ap.parse_args(argv)
    try:
        folder = check_train_folder(args.folder)
    except FileNotFoundError as e:
        print(f"decodelab card: 오류: {e}", file=sys.stderr)
        return 2
    print(write_card(folder, write=args.write))
    where = folder / "MODEL_CARD.md"
    print(f"decodelab card: {where}에 썼습니다." if args.write else
          f"decodelab card: 화면에만 보였습니다 ({where}는 그대로). 파일에 쓰려면 --write 를 붙이세요.", file=sys.stderr)
    return 0

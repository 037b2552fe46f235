"""The build-it-yourself exercises (decodelab.teach.build): each check fails on the notebook's scaffold
(read from the notebook's MyST source) and on near-miss solutions, and passes on a reference
solution kept here; the definitions ask for a full score."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest
import torch
import yaml

import decodelab
from decodelab.teach import build
from decodelab import latency as lat
from decodelab import profiles
from decodelab.rejection import acceptance_probabilities

REPO = Path(__file__).resolve().parents[1]
MARK = "# 🛠️ 직접 구현하세요"


def _scaffold(notebook: str, name: str) -> dict:
    """Execute the notebook's scaffold cell that defines ``name``; return its namespace."""
    text = (REPO / "notebooks" / "src" / notebook).read_text(encoding="utf-8")
    cells = [m.group(1) for m in re.finditer(r"```\{code-cell\}\n(?:---\n.*?\n---\n)?(.*?)```", text, re.S)]
    (cell,) = [c for c in cells if c.lstrip().startswith(MARK) and f"def {name}(" in c]
    ns = {"torch": torch, "decodelab": decodelab, "build": build, "lat": lat}
    exec(cell, ns)
    return ns


def _task(notebook: str, task_id: str) -> dict:
    data = yaml.safe_load((REPO / "quizzes" / "exercises" / f"{notebook}.yaml").read_text(encoding="utf-8"))
    (task,) = [t for t in data["tasks"] if t["id"] == task_id]
    return task


@pytest.mark.parametrize("notebook, task_id, source, call", [
    ("04", "04-task-build-greedy-loop", "04_speculative_decoding.md", "build.check_greedy_loop(my_greedy_speculative"),
    ("04", "04-task-build-accept-rule", "04_speculative_decoding.md", "build.check_accept_rule(my_accept_rule)"),
    ("02", "02-task-build-roofline", "02_prefill_vs_decode.md", "build.check_roofline(my_decode_step_ms)"),
])
def test_each_definition_asks_for_every_case_and_the_notebook_checks_it(notebook, task_id, source, call):
    assert _task(notebook, task_id)["check"] == {"op": "==", "value": 1.0}
    text = (REPO / "notebooks" / "src" / source).read_text(encoding="utf-8")
    assert call in text and f'ex.check("{task_id}", score)' in text
    assert text.count("<summary>힌트") >= 2  # hints, folded


# --------------------------------------------------------------------------------------------
# (c) the roofline


def ref_decode_step_ms(model, hw, context_tokens, batch):
    S, B = context_tokens, batch
    kv = 2 * model.n_layers * model.n_kv_heads * model.d_head * model.kv_bytes_per_value
    nbytes = model.weight_bytes + B * S * kv
    flops = 2 * model.n_params * B + 4 * B * model.n_layers * S * model.attn_width
    return max(nbytes / hw.bandwidth, flops / hw.flops_for(model.dtype)) * 1e3


def test_roofline_check_fails_on_the_scaffold_and_passes_on_the_reference(capsys):
    scaffold = _scaffold("02_prefill_vs_decode.md", "my_decode_step_ms")["my_decode_step_ms"]
    assert build.check_roofline(scaffold) == 0.0
    out = capsys.readouterr().out
    assert "아직 채우지 않은 TODO가 있습니다" in out and "8개 경우 중 0개" in out
    assert build.check_roofline(ref_decode_step_ms) == 1.0
    assert "8개 경우 중 8개" in capsys.readouterr().out


def test_roofline_check_catches_near_misses(capsys):
    def memory_only(model, hw, s, b):
        return (model.weight_bytes + b * s * lat.kv_bytes_per_token(model)) / hw.bandwidth * 1e3

    def in_seconds(model, hw, s, b):
        return ref_decode_step_ms(model, hw, s, b) / 1e3

    score = build.check_roofline(memory_only)
    n_compute = sum(lat.estimate_decode_step(profiles.get_model(n, d), h, s, b).bound == "compute"
                    for n, d, h, s, b in build.ROOFLINE_CASES)
    assert n_compute >= 2 and score == pytest.approx(1 - n_compute / len(build.ROOFLINE_CASES))
    assert "메모리 시간만 셌습니다" in capsys.readouterr().out
    assert build.check_roofline(in_seconds) == 0.0


def test_the_reference_roofline_reproduces_the_worked_example():
    # facts/hardware.md: Llama-3-70B FP8 on one H100, 8k context: (70.6 + 2.7) GB / 3.35 TB/s ~ 22 ms
    m = profiles.get_model("Llama-3-70B", "fp8")
    assert ref_decode_step_ms(m, profiles.get_hardware("H100"), 8192, 1) == pytest.approx(21.86, abs=0.01)


# --------------------------------------------------------------------------------------------
# (b) the accept / reject rule


def ref_accept_rule(p, q, drafts, u):
    for i, d in enumerate(drafts):
        a = min(1.0, float(p[i, d]) / float(q[i, d]))
        if not float(u[i]) < a:
            r = (p[i] - q[i]).clamp(min=0)
            return i, (r / r.sum() if float(r.sum()) > 0 else p[i])
    return len(drafts), p[len(drafts)]


def test_accept_rule_check_fails_on_the_scaffold_and_passes_on_the_reference(capsys):
    scaffold = _scaffold("04_speculative_decoding.md", "my_accept_rule")["my_accept_rule"]
    assert build.check_accept_rule(scaffold) == 0.0
    assert "200개 경우 중 0개" in capsys.readouterr().out
    assert build.check_accept_rule(ref_accept_rule) == 1.0


def test_accept_rule_check_catches_near_misses():
    def no_normalising(p, q, drafts, u):  # the residual left unnormalised
        k, dist = ref_accept_rule(p, q, drafts, u)
        return k, ((p[k] - q[k]).clamp(min=0) if k < len(drafts) else dist)

    def softmax_residual(p, q, drafts, u):  # a past transformers bug (facts/speculative.md)
        k, dist = ref_accept_rule(p, q, drafts, u)
        return k, (torch.softmax(p[k] - q[k], -1) if k < len(drafts) else dist)

    def p_over_q_unclamped_reversed(p, q, drafts, u):  # q / p instead of p / q
        for i, d in enumerate(drafts):
            if not float(u[i]) < min(1.0, float(q[i, d]) / max(float(p[i, d]), 1e-30)):
                r = (p[i] - q[i]).clamp(min=0)
                return i, (r / r.sum() if float(r.sum()) > 0 else p[i])
        return len(drafts), p[len(drafts)]

    def no_zero_guard(p, q, drafts, u):  # NaN where q == p and float rounding rejects
        for i, d in enumerate(drafts):
            if not float(u[i]) < min(1.0, float(p[i, d]) / float(q[i, d])):
                r = (p[i] - q[i]).clamp(min=0)
                return i, r / r.sum()
        return len(drafts), p[len(drafts)]

    for wrong in (no_normalising, softmax_residual, p_over_q_unclamped_reversed):
        assert build.check_accept_rule(wrong) < 0.9, wrong.__name__
    # q == p with a forced rejection (u = 1): the residual is all zeros, the library uses p
    p = torch.tensor([[0.5, 0.5], [0.2, 0.8]])
    case = [(p, p[:1].clone(), [0], torch.tensor([1.0]))]
    assert build.check_accept_rule(ref_accept_rule, case) == 1.0
    assert build.check_accept_rule(no_zero_guard, case) == 0.0


def test_the_rule_cases_exercise_every_branch():
    cases = build.random_rule_cases()
    ks = [build._library_rule(*c)[0] for c in cases]
    assert {0, 1, 2, 3} <= set(ks)  # rejections at every position and fully accepted rounds
    assert any(torch.equal(q, p[:3]) for p, q, _, _ in cases)
    # the library's rule with the same uniforms is verify_step's: same k on every case
    for p, q, drafts, u in cases[:20]:
        a = acceptance_probabilities(p, q, torch.tensor(drafts))
        rejected = (u >= a).nonzero()
        k = len(drafts) if rejected.numel() == 0 else int(rejected[0, 0])
        assert build._library_rule(p, q, drafts, u)[0] == k


# --------------------------------------------------------------------------------------------
# (a) the greedy draft-verify loop


def ref_greedy_speculative(target, draft, prompt_ids, max_new_tokens, gamma, *, shift=0, rollback=True):
    """The reference greedy draft-verify loop (the signature :func:`build.check_greedy_loop` calls).

    The keywords make the near misses the check must catch: ``shift=1`` compares draft ``i`` with
    the target's choice at ``i + 1``; ``rollback=False`` keeps the rejected drafts in the cache."""
    state = decodelab.prefill(target, torch.tensor([prompt_ids]))
    out = [int(state.logits.argmax())]
    while len(out) < max_new_tokens:
        ids = prompt_ids + out
        d = decodelab.prefill(draft, torch.tensor([ids]))
        drafted = []
        for _ in range(gamma):
            t = int(d.logits.argmax())
            drafted.append(t)
            d = decodelab.decode_step(draft, d, t)
        logits, state = build.verify_pass(target, state, [ids[-1]] + drafted)
        best = logits.argmax(-1).tolist() + [0] * shift
        k = 0
        while k < gamma and drafted[k] == best[k + shift]:
            k += 1
        emitted = drafted[:k] + [best[k]]
        if rollback:
            state = build.rollback(state, len(ids) - 1 + len(emitted))
        out += emitted
    return out[:max_new_tokens]


def test_greedy_loop_check_fails_on_the_scaffold_and_passes_on_the_reference(pair, capsys):
    scaffold = _scaffold("04_speculative_decoding.md", "my_greedy_speculative")["my_greedy_speculative"]
    assert build.check_greedy_loop(scaffold, pair.target, pair.draft, pair.tokenizer) == 0.0
    out = capsys.readouterr().out
    assert "아직 구현하지 않은 부분이 있습니다" in out and "6개 경우 중 0개" in out
    assert build.check_greedy_loop(ref_greedy_speculative, pair.target, pair.draft, pair.tokenizer) == 1.0


def test_greedy_loop_check_catches_a_loop_that_keeps_rejected_drafts(pair, capsys):
    no_rollback = functools.partial(ref_greedy_speculative, rollback=False)
    shifted = functools.partial(ref_greedy_speculative, shift=1)
    kw = dict(prompts=build.LOOP_PROMPTS[:2], max_new_tokens=16, gammas=(3,))
    assert build.check_greedy_loop(no_rollback, pair.target, pair.draft, pair.tokenizer, **kw) < 1.0
    assert "다릅니다" in capsys.readouterr().out
    assert build.check_greedy_loop(shifted, pair.target, pair.draft, pair.tokenizer, **kw) < 1.0


def test_verify_pass_and_rollback(pair):
    ids = pair.tokenizer("문서를 저장하려면", add_special_tokens=False)["input_ids"]
    state = decodelab.prefill(pair.target, torch.tensor([ids]))
    block = [int(state.logits.argmax()), 5, 9]
    logits, new = build.verify_pass(pair.target, state, block)
    assert logits.shape == (3, state.logits.shape[0]) and new.position == len(ids) + 3
    # row 0 = what one decode step after the first token gives
    one = decodelab.decode_step(pair.target, decodelab.prefill(pair.target, torch.tensor([ids])), block[0])
    assert torch.allclose(logits[0], one.logits, atol=1e-4)
    back = build.rollback(new, len(ids) + 1)
    assert back.position == len(ids) + 1 and back.cache.get_seq_length() == len(ids) + 1
    with pytest.raises(ValueError, match="이미 자랐습니다"):
        build.verify_pass(pair.target, state, [1])  # the old state: its cache grew
    with pytest.raises(ValueError, match="검증할 토큰이 없습니다"):
        build.verify_pass(pair.target, back, [])
    with pytest.raises(ValueError, match="위치밖에 없습니다"):
        build.rollback(back, back.position + 1)


# --------------------------------------------------------------------------------------------
# End-of-notebook problems: 3-5 per notebook 01-05 (and 04b), answered in the lecturer guide and, folded
# ("풀이 보기", a <details> block under each problem), in the notebook (issue 32: a student alone checks
# their own answer after trying)


@pytest.mark.parametrize("nb", ["01", "02", "03", "04", "04b", "05"])
def test_end_of_notebook_problems_have_answers_in_the_lecturer_guide(nb):
    (source,) = (REPO / "notebooks" / "src").glob(f"{nb}_*.md")
    text = source.read_text(encoding="utf-8")
    assert "## 더 생각해 볼 문제" in text
    section = text.split("## 더 생각해 볼 문제", 1)[1].split("\n## ", 1)[0]
    problems = re.findall(r"^(\d)\. \*\*(.+?)\*\*", section, re.M)
    assert 3 <= len(problems) <= 5 and [int(n) for n, _ in problems] == list(range(1, len(problems) + 1))
    guide = (REPO / "lecturer" / f"{nb}.md").read_text(encoding="utf-8")
    answers = guide.split("## 노트북 끝 \"더 생각해 볼 문제\"의 풀이", 1)[1].split("\n## ", 1)[0]
    answered = re.findall(r"^(\d)\. \*\*(.+?)\*\*", answers, re.M)
    assert [n for n, _ in answered] == [n for n, _ in problems]  # one answer per problem, same order
    # each problem's worked answer is folded right under it: closed until the student opens it
    folds = re.findall(r"<details>\s*<summary>(.+?)</summary>", section)
    assert len(folds) == len(problems) and all("풀이" in f for f in folds), folds
    assert "<details open" not in section


@pytest.mark.parametrize("source", sorted((REPO / "notebooks" / "src").glob("0*.md")), ids=lambda p: p.name)
def test_every_reveal_holds_its_cell_until_the_prediction(source):
    # Run All safe: each prediction's measuring cell starts with ex.hold, so its printed lines stay hidden
    text = source.read_text(encoding="utf-8")
    revealed = set(re.findall(r'ex\.reveal\("([^"]+)"', text))
    held = set(re.findall(r'ex\.hold\("([^"]+)"', text))
    assert revealed <= held, f"{source.name}: ex.reveal without ex.hold: {sorted(revealed - held)}"

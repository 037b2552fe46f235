"""Exam release: no answer key or explanation can be read from what students get."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest
import yaml

from decodelab.gradebook import grade_folder
from decodelab.quiz import (
    AnswerStore,
    QuizError,
    build_release,
    load_public,
    load_quizzes,
    normalize_text,
)
from decodelab.quiz.cli import release_main
from decodelab.quiz.submission import make_submission
from decodelab.quiz.loading import public_question, release_ids

REPO = Path(__file__).resolve().parents[1]
PUBLIC_KEYS = {"id", "kind", "prompt", "points", "choices", "items", "unit"}


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    out = tmp_path_factory.mktemp("exam") / "release"
    res = build_release(out)
    return res


def _release_text(res) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(res.out_dir.rglob("*")) if p.is_file())


def _variants(secret: str) -> set[str]:
    """The forms in which a secret could be smuggled: as is, folded, JSON-escaped, base64."""
    forms = {secret, secret.strip()}
    out = set()
    for f in forms:
        if not f:
            continue
        out.add(f)
        out.add(json.dumps(f)[1:-1])  # \\uXXXX escapes
        b = f.encode("utf-8")
        for enc in (base64.b64encode(b), base64.urlsafe_b64encode(b)):
            s = enc.decode().rstrip("=")
            if len(s) >= 8:
                out.add(s[: len(s) - len(s) % 4] or s)
    return out


def test_release_files_and_structure(release):
    names = sorted(p.name for p in release.out_dir.iterdir())
    assert names == ["01.yaml", "02.yaml", "03.yaml", "04.yaml", "05.yaml", "07.yaml", "README.md", "release.json"]
    manifest = json.loads((release.out_dir / "release.json").read_text(encoding="utf-8"))
    assert manifest["quiz_set"] == release.quiz_set == f"exam-{release.release_id}"
    keyed = load_quizzes()
    assert manifest["question_ids"] == [q.id for q in keyed]
    for nb in ["01", "02", "03", "04", "05"]:
        doc = yaml.safe_load((release.out_dir / f"{nb}.yaml").read_text(encoding="utf-8"))
        assert set(doc) == {"release", "notebook", "title", "questions"}
        for q in doc["questions"]:
            assert set(q) <= PUBLIC_KEYS, (q["id"], set(q) - PUBLIC_KEYS)
            for c in q.get("choices", []):
                assert set(c) == {"id", "text"}, q["id"]


def test_release_contains_no_answer_or_explanation(release):
    text = _release_text(release)
    folded_release = normalize_text(text)
    keyed = load_quizzes()
    public_text = normalize_text("\n".join(json.dumps(public_question(q).model_dump(), ensure_ascii=False) for q in keyed))
    checked = 0
    for q in keyed:
        secrets = [q.explanation]
        if q.kind in ("single", "multiple"):
            secrets += [c.explanation for c in q.choices if c.explanation]
        if q.kind == "short":
            # an answer that happens to be an ordinary word of some other public prompt cannot be hidden
            # (e.g. "GPU"); every other accepted form must not appear anywhere
            secrets += [s for s in [q.answer, *q.accepted] if normalize_text(s) not in public_text]
            secrets += [k for group in q.concepts for k in group if len(k) >= 4 and normalize_text(k) not in public_text]
            secrets += [m.explanation for m in q.misconceptions]
        for s in secrets:
            for form in _variants(s):
                assert form not in text, (q.id, form)
            if len(normalize_text(s)) >= 6:
                assert normalize_text(s) not in folded_release, (q.id, s)
            checked += 1
    assert checked >= 270  # not vacuous: every explanation of every question was looked for


def test_release_entries_do_not_reveal_their_own_key(release):
    docs = {nb: yaml.safe_load((release.out_dir / f"{nb}.yaml").read_text(encoding="utf-8")) for nb in "01 02 03 04 05 07".split()}
    entries = {q["id"]: q for d in docs.values() for q in d["questions"]}
    for q in load_quizzes():
        entry = entries[q.id]
        raw = json.dumps(entry, ensure_ascii=False)
        if q.kind == "numeric":
            for form in {f"{q.answer:g}", f"{q.answer}", f"{q.answer:,g}"}:
                assert not re.search(rf"(?<![\d.]){re.escape(form)}(?![\d])", raw), (q.id, form)
        if q.kind == "ordering":
            shown = [i["id"] for i in entry["items"]]
            # opaque ids (6 upper-case hex digits), listed sorted by them, texts all there
            assert all(re.fullmatch(r"[0-9A-F]{6}", i) for i in shown) and shown == sorted(shown), q.id
            assert sorted(i["text"] for i in entry["items"]) == sorted(i.text for i in q.items)
            assert not set(shown) & {i.id for i in q.items}
        if q.kind in ("single", "multiple"):
            ids = [c["id"] for c in entry["choices"]]
            assert all(re.fullmatch(r"[0-9a-f]{6}", i) for i in ids) and ids == sorted(ids), q.id
            assert sorted(c["text"] for c in entry["choices"]) == sorted(c.text for c in q.choices)
        assert "answer" not in entry and "explanation" not in raw


def test_question_ids_do_not_reveal_their_own_answer():
    """Ids are kept in the release, so an id must never hold (a folded form of) its own answer."""
    from decodelab.quiz.normalize import strip_korean_ending

    checked = 0
    for q in load_quizzes():
        folded_id = normalize_text(q.id)  # "01-gpu-processor" -> "01gpuprocessor"
        name_parts = q.id.split("-")[1:]
        if q.kind == "short":
            for form in [q.answer, *q.accepted]:
                for f in {normalize_text(form), strip_korean_ending(normalize_text(form))}:
                    assert f not in folded_id, (q.id, form)
                    checked += 1
        elif q.kind == "numeric":
            for form in {f"{q.answer:g}", f"{q.answer:g}".replace(".", "")}:
                assert not re.search(rf"(?<!\d){re.escape(form)}(?!\d)", "-".join(name_parts)), (q.id, form)
        elif q.kind in ("single", "multiple"):
            ids = [q.answer] if q.kind == "single" else q.answer
            assert not any(a in name_parts for a in ids), q.id  # e.g. "05-check-b" would give away b
            assert "".join(sorted(ids)) not in name_parts, q.id
        else:  # ordering
            assert "".join(q.answer).lower() not in folded_id, q.id
    assert checked >= 25  # 5 short questions, every accepted form


def test_release_loads_as_exam_but_not_as_key(release):
    view = load_public(release.out_dir, "04")
    assert view.exam and view.keys == {} and view.quiz_set == release.quiz_set
    assert [q.id for q in view.questions] == [q.id for q in load_quizzes(notebook="04")]
    with pytest.raises(QuizError, match="정답이 없습니다"):
        load_quizzes(release.out_dir)


def test_exam_answers_are_graded_with_the_lecturers_key(release, tmp_path):
    store = AnswerStore(release.quiz_set, tmp_path / "answers")
    store.save("02-tpot-calc", "50 ms")
    store.save("04-round-order", ["E", "C", "A", "D", "B"])
    store.save("05-check-3", "a")
    subs = tmp_path / "subs"
    subs.mkdir()
    store.export("s-001", subs)
    book = grade_folder(subs)
    (row,) = book.rows
    assert row.quiz_set == release.quiz_set
    assert row.scores["02-tpot-calc"] == 1.0 and row.scores["04-round-order"] == 1.0
    assert row.scores["05-check-3"] == 0.0 and row.total == 2.0


def test_release_refuses_dangerous_targets(tmp_path, release):
    with pytest.raises(ValueError, match="겹칩니다"):
        build_release(REPO / "quizzes")
    with pytest.raises(ValueError, match="겹칩니다"):
        build_release(REPO / "quizzes" / "exam")
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("내 파일", encoding="utf-8")
    with pytest.raises(ValueError, match="비어 있지 않고"):
        build_release(busy)
    assert (busy / "notes.txt").read_text(encoding="utf-8") == "내 파일"
    # a previous release is replaced in place, with the same id for the same quizzes
    again = build_release(release.out_dir)
    assert again.release_id == release.release_id


def test_cli_release(tmp_path, capsys):
    assert release_main([str(tmp_path / "r")]) == 0
    assert "연습 배포본" in capsys.readouterr().out
    assert (tmp_path / "r" / "05.yaml").is_file()
    assert release_main([str(REPO / "quizzes")]) == 2
    assert "겹칩니다" in capsys.readouterr().err


def test_quiz_main_dispatch_and_decodelab_command(tmp_path, capsys):
    from decodelab.quiz.cli import quiz_main

    assert quiz_main(["release", str(tmp_path / "r1")]) == 0
    assert quiz_main([]) == 2 and quiz_main(["nope"]) == 2
    assert "알 수 없는 하위 명령" in capsys.readouterr().err
    from decodelab.cli import main  # the lead's dispatcher: `decodelab quiz release`, `decodelab grade`

    assert main(["quiz", "release", str(tmp_path / "r2")]) == 0
    assert (tmp_path / "r2" / "release.json").is_file()
    subs = tmp_path / "subs"
    subs.mkdir()
    assert main(["grade", str(subs), "-o", str(tmp_path / "gb.csv")]) == 2  # no submission files: nothing written
    assert "제출 파일이 없습니다" in capsys.readouterr().err and not (tmp_path / "gb.csv").exists()
    (subs / "a.json").write_text(json.dumps(make_submission("alice", {"01-greedy": "a"})), encoding="utf-8")
    assert main(["grade", str(subs), "-o", str(tmp_path / "gb.csv")]) == 0
    assert (tmp_path / "gb.csv").read_text(encoding="utf-8-sig").startswith("student_id,quiz_set,file,shuffle_key,01-")


def test_release_into_a_place_that_cannot_hold_a_folder_says_what_to_change(tmp_path, capsys):
    blocker = tmp_path / "notes.txt"
    blocker.write_text("x", encoding="utf-8")
    targets = [blocker / "exam"] + ([Path("/proc/x")] if Path("/proc/self").exists() else [])
    for target in targets:
        assert release_main([str(target)]) == 2
        err = capsys.readouterr().err
        assert "Errno" not in err and "No such file" not in err and "Not a directory" not in err
        assert "배포 폴더" in err and "만들 수 없습니다" in err and "다른 폴더" in err
        with pytest.raises(OSError, match="만들 수 없습니다"):
            build_release(target)


# ------------------------------------------------------------------------------------------------
# No structural hints: blind guessing scores chance on a release
# ------------------------------------------------------------------------------------------------

from itertools import combinations  # noqa: E402
from math import factorial, sqrt  # noqa: E402

from decodelab.quiz import score_response, student_view  # noqa: E402
from decodelab.gradebook import _map_release  # noqa: E402

N_STUDENTS = 500


@pytest.fixture(scope="module")
def salt():
    from decodelab.quiz.release import release_salt

    return release_salt(load_quizzes())


def _multiple_chance(q, k: int) -> tuple[float, float]:
    """Mean and variance of the score of k options picked uniformly at random (exact)."""
    ids = [c.id for c in q.choices]
    scores = [score_response(q, list(s)) for s in combinations(ids, k)]
    m = sum(scores) / len(scores)
    return m, sum((s - m) ** 2 for s in scores) / len(scores)


def _blind_rules(release):
    """(rule name, kind, chance mean, chance sd, per-student?, answer function) for each blind rule."""
    return [
        ("첫 번째로 보이는 선택지", "single", True, lambda pq, shown: shown[0]),
        ("마지막으로 보이는 선택지", "single", True, lambda pq, shown: shown[-1]),
        ("id 정렬 첫 번째", "single", False, lambda pq, shown: sorted(c.id for c in pq.choices)[0]),
        ("파일의 첫 번째", "single", False, lambda pq, shown: pq.choices[0].id),
        ("보이는 처음 둘", "multiple", True, lambda pq, shown: shown[:2]),
        ("id 정렬 처음 둘", "multiple", False, lambda pq, shown: sorted(c.id for c in pq.choices)[:2]),
        ("보이는 처음 셋", "multiple", True, lambda pq, shown: shown[:3]),
        ("보이는 순서 그대로", "ordering", True, lambda pq, shown: shown),
        ("id 정렬 순서", "ordering", False, lambda pq, shown: sorted(i.id for i in pq.items)),
        ("파일 순서", "ordering", False, lambda pq, shown: [i.id for i in pq.items]),
    ]


def test_blind_guessing_scores_no_more_than_chance_on_a_release(release, salt, capsys):
    public = {q.id: q for q in load_public(release.out_dir).questions}
    keys = {q.id: q for q in load_quizzes()}
    report = []
    for name, kind, per_student, rule in _blind_rules(release):
        qs = [keys[i] for i, pq in public.items() if pq.kind == kind]
        assert qs, kind
        # chance: the expected score (and its variance) of a uniformly random answer of the same form
        means, variances = [], []
        for q in qs:
            if kind == "single":
                p = 1 / len(q.choices)
                means.append(p), variances.append(p * (1 - p))
            elif kind == "multiple":
                k = 3 if "셋" in name else 2
                m, v = _multiple_chance(q, k)
                means.append(m), variances.append(v)
            else:
                p = 1 / factorial(len(q.items))
                means.append(p), variances.append(p * (1 - p))
        chance = sum(means)
        students = range(N_STUDENTS) if per_student else range(1)
        totals = []
        for s in students:
            total = 0.0
            for q in qs:
                pq = public[q.id]
                shown = [oid for _, oid, _ in student_view(pq, f"student-{s:04d}")]
                answer, ok = _map_release(q, rule(pq, shown), salt)  # what the grader does with release ids
                assert ok
                total += score_response(q, answer)
            totals.append(total)
        mean = sum(totals) / len(totals)
        sd_one = sqrt(sum(variances))  # sd of one student's total under pure chance
        # per-student rules: the class average converges to chance; a rule on the release file is one
        # draw for everyone, so it may sit above the mean only by chance-level noise
        # (the release's salt keeps the rules on the file within a point of chance, see release_salt)
        bound = chance + (3 * sd_one / sqrt(len(totals)) if per_student else 1.0)
        report.append(f"{kind:8s} {name}: {mean:.2f} / {len(qs)} (우연 {chance:.2f}, 상한 {bound:.2f})")
        assert mean <= bound, (name, mean, chance, bound)
    with capsys.disabled():
        print("\n" + "\n".join(report))


def test_blind_rules_would_beat_chance_with_the_file_ids(release, salt):
    """The same test machinery detects hints: graded with the quiz file's own ids and order (no shuffle,
    no opaque ids), 'sort the ids' answers every ordering question whose key is alphabetical."""
    keys = [q for q in load_quizzes() if q.kind == "ordering"]
    sorted_right = sum(score_response(q, sorted(i.id for i in q.items)) for q in keys)
    public = {q.id: q for q in load_public(release.out_dir).questions}
    on_release = 0.0
    for q in keys:
        answer, _ = _map_release(q, sorted(i.id for i in public[q.id].items), salt)
        on_release += score_response(q, answer)
    assert on_release <= sorted_right
    if sorted_right:  # today's keys: alphabetical; the release hides it
        assert on_release < sorted_right


def test_the_release_salt_balances_the_rules_on_the_file(salt):
    from decodelab.quiz.release import fixed_rule_scores

    qs = load_quizzes()
    for rule, (score, chance) in fixed_rule_scores(qs, salt).items():
        assert abs(score - chance) <= 1.0, (rule, score, chance)
    # without balancing, one fixed draw of ids can sit far from chance: the search is not vacuous
    spread = [max(abs(sc - ch) for sc, ch in fixed_rule_scores(qs, str(n)).values()) for n in range(2000, 2040)]
    assert max(spread) > 1.0


def test_exam_widget_answers_with_opaque_ids_are_graded_right(release, salt, tmp_path):
    from decodelab.quiz import quiz_widget

    w = quiz_widget("all", quizzes_dir=release.out_dir, answers_dir=tmp_path / "answers", student_id="s-77")
    keys = {q.id: q for q in load_quizzes()}
    back = {}
    for qid, v in w.views.items():
        q = keys[qid]
        if q.kind not in ("single", "multiple", "ordering"):
            continue
        ids = release_ids(q, salt)
        back[qid] = {o: k for k, o in ids.items()}
        if q.kind == "single":
            v.set_response(ids[q.answer])
        elif q.kind == "multiple":
            v.set_response([ids[a] for a in q.answer])
        else:
            v.set_response([ids[a] for a in q.answer])
        v.submit()
        assert "저장했습니다" in v.feedback.value
        # labels are positional, never the release ids
        assert set(v.labels.values()) <= set("12345678") | set("가나다라마바사아")
    subs = tmp_path / "subs"
    subs.mkdir()
    path = w.export(out_dir=subs)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["shuffle_key"] == "s-77"
    assert all(isinstance(a, (str, list)) for a in data["answers"].values())
    one = next(iter(back))
    assert data["answers"][one] != keys[one].answer  # stored as opaque ids ...
    book = grade_folder(subs)
    (row,) = book.rows
    assert all(row.scores[q] == keys[q].points for q in back), {q: row.scores[q] for q in back}  # ... graded right
    assert row.answers[one] == keys[one].answer  # mapped back for the lecturer
    assert book.warnings == []
    # grading a selection needs every keyed question for the mapping (the CLI passes them)
    sel = [q for q in load_quizzes() if q.notebook == "04"]
    good = grade_folder(subs, sel, key_questions=load_quizzes())
    assert all(good.rows[0].scores[q.id] == q.points for q in sel if q.id in back)
    bad = grade_folder(subs, sel)
    assert any(bad.rows[0].scores[q.id] is None for q in sel if q.id in back)  # review, never a silent 0
    assert any("퀴즈 파일 전체로" in str(p) for p in bad.warnings)


def test_lecturer_reproduces_what_an_exam_student_saw(release, tmp_path, capsys):
    from decodelab.quiz import quiz_widget
    from decodelab.quiz.cli import quiz_main

    w = quiz_widget("01", quizzes_dir=release.out_dir, answers_dir=tmp_path / "answers", student_id="s-9")
    v = w.views["01-greedy"]
    assert quiz_main(["view", "01-greedy", "s-9", "--release", str(release.out_dir)]) == 0
    lines = capsys.readouterr().out.splitlines()[1:]
    from decodelab.quiz.release import release_salt

    ids = release_ids(next(q for q in load_quizzes() if q.id == "01-greedy"), release_salt(load_quizzes()))
    back = {o: k for k, o in ids.items()}
    assert [ln.split("]")[0].strip() for ln in lines] == [f"{v.labels[o]}. [{back[o]}" for o in v.order]

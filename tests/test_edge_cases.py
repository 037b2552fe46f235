"""Regression tests for edge cases that crashed or misled: answers store and exercise widgets,
the command-line tools' argument errors (Korean, exit 2) and their clear failures."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import quizzes_with_exercises

from decodelab.assess import exercises as ex
from decodelab.assess.quiz import AnswerStore, read_submission

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture()
def quizzes(tmp_path, monkeypatch) -> Path:
    return quizzes_with_exercises(tmp_path, monkeypatch)


def _corrupt(qid: str) -> Path:
    store = AnswerStore("course")
    store.dir.mkdir(parents=True, exist_ok=True)
    path = store.dir / f"{qid}.json"
    path.write_text('{"question_id": "' + qid + '", "resp', encoding="utf-8")  # cut off mid-write
    return path


@pytest.mark.parametrize("view, qid", [(ex.WrittenView, "01-written-decode-definition"),
                                       (ex.PredictView, "01-predict-kv-step")])
def test_a_widget_shows_its_own_corrupt_record(quizzes, view, qid):
    path = _corrupt(qid)
    w = view(qid)
    assert f"문항 {qid}: 저장된 답을 읽을 수 없습니다" in w.feedback.value and "잘렸거나 손상" in w.feedback.value
    assert path.read_text(encoding="utf-8").endswith('"resp')  # left on disk, not deleted


def test_the_export_reports_corrupt_records(quizzes, tmp_path):
    _corrupt("01-written-decode-definition")
    store = AnswerStore("course")
    store.save("01-decode-definition", "c")
    out = store.export("s001", tmp_path)
    assert "01-written-decode-definition" in store.left_out
    assert "제출 파일에서 뺐습니다" in store.left_out["01-written-decode-definition"]
    sub = read_submission(out)
    assert "01-decode-definition" in sub.answers and "01-written-decode-definition" not in sub.exercises


@pytest.mark.parametrize("text, says", [("토큰을\ud800 하나씩", "짝 없는 서로게이트 U+D800"),
                                        ("토큰을\x00 하나씩", "NUL 문자")])
def test_a_written_answer_with_a_lone_surrogate_or_a_nul_is_refused_in_korean(quizzes, text, says):
    w = ex.WrittenView("01-written-decode-definition")
    w.text.value = text
    w.button.click()
    assert says in w.feedback.value and "저장하지 않았습니다" in w.feedback.value
    assert AnswerStore("course").get("01-written-decode-definition") is None
    with pytest.raises(ValueError, match=says.split()[0]):
        AnswerStore("course").save("01-decode-definition", ["a", text])


def test_save_enforces_the_size_the_store_reads_back(tmp_path):
    store = AnswerStore("course", tmp_path)
    with pytest.raises(ValueError, match="너무 깁니다.*65,536바이트"):
        store.save("01-check-1", "가" * 100_000)
    assert not (store.dir / "01-check-1.json").exists()
    store.save("01-check-1", "가" * 20_000)  # 60 KB of UTF-8: under the limit, and it reads back
    assert store.get("01-check-1")["response"] == "가" * 20_000 and store.problems == []


# ------------------------------------------------------------------ command-line tools

class Ran:
    def __init__(self, code, out, err):
        self.returncode, self.stdout, self.stderr = code, out, err


@pytest.fixture()
def cli(capsys, monkeypatch):
    """Run ``decodelab ARGS`` in this process (as the console script does); returns its code and output."""
    from decodelab.tools.cli import main

    def run(*argv, cwd=None, env=None):
        if cwd is not None:
            monkeypatch.chdir(cwd)
        for k, v in (env or {}).items():
            monkeypatch.setenv(k, v)
        capsys.readouterr()
        try:
            code = main(list(argv))
        except SystemExit as exc:
            code = exc.code
        out = capsys.readouterr()
        return Ran(code, out.out, out.err)

    return run


@pytest.mark.parametrize("argv, korean", [
    (["grade"], "필수 인자가 빠졌습니다"),
    (["grade", "x", "--lms", "moodle"], "알 수 없는 인자"),
    (["grade", "x", "--max-bytes", "many"], "대신 정수 값을 주세요"),
    (["quiz"], "하위 명령이 빠졌습니다"),
    (["quiz", "publish"], "알 수 없는 하위 명령 'publish'"),
    (["quiz", "view"], "필수 인자가 빠졌습니다"),
    (["card", "--bogus"], "알 수 없는 인자입니다"),
    (["lab", "--port", "x"], "대신 정수 값을 주세요"),
    (["bench", "decode", "--tokens", "0"], "1 이상의 정수"),
    (["bench", "decode", "--repeats", "0"], "1 이상의 정수"),
    (["lab", "--no-browser=1"], "옵션 --no-browser은(는) 값을 받지 않습니다: =1 없이 --no-browser만 쓰세요"),
    (["measure", "--json=yes"], "옵션 --json은(는) 값을 받지 않습니다"),
    (["grade", "--help=x"], "값을 받지 않습니다: =x 없이 --help만 쓰세요"),
])
def test_argument_errors_are_korean_with_exit_2(cli, argv, korean):
    proc = cli(*argv, cwd=REPO)
    assert proc.returncode == 2, proc.stderr
    assert korean in proc.stderr and "사용법:" in proc.stderr
    for english in ("the following arguments", "invalid choice", "invalid int", "unrecognized", "usage:", "Traceback",
                    "ignored explicit", "expected"):
        assert english not in proc.stderr


@pytest.mark.parametrize("argv", [[], ["--help"], ["classroom"]])
def test_the_command_lists_are_korean(cli, argv):
    import re

    proc = cli(*argv, cwd=REPO)
    assert proc.returncode == 0 and proc.stdout.startswith("사용법: decodelab")
    lines = proc.stdout.splitlines()
    assert lines[2] == "명령:" and lines[-1].startswith("각 명령의 옵션: decodelab") and lines[-1].endswith("<명령> --help")
    assert not {"usage", "command", "commands", "options"} & set(re.findall(r"[a-z]+", proc.stdout)), proc.stdout


def _options(p):
    p.add_argument("--tokens", type=int)
    p.add_argument("--pair", nargs=2)
    p.add_argument("--names", nargs="+")
    p.add_argument("--verbose", action="store_true")
    p.add_argument("--verify", action="store_true")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--cpu", action="store_true")
    which.add_argument("--gpu", action="store_true")
    sub = p.add_subparsers(dest="command")
    sub.add_parser("run")


@pytest.mark.parametrize("argv, korean", [
    (["--cpu", "--gpu"], "인자 --gpu은(는) --cpu와(과) 함께 쓸 수 없습니다"),
    ([], "다음 인자 중 하나가 필요합니다: --cpu --gpu"),
    (["--cpu", "--pair", "a"], "인자 --pair에 값이 2개 필요합니다"),
    (["--cpu", "--names"], "인자 --names에 값이 하나 이상 필요합니다"),
    (["--cpu", "--tokens"], "인자 --tokens에 값이 하나 필요합니다"),
    (["--cpu", "--tokens", "many"], "인자 --tokens: 'many' 대신 정수 값을 주세요"),
    (["--cpu", "--ver"], "옵션 --ver이(가) 여럿과 맞습니다: --verbose, --verify"),
    (["--cpu", "--verbose=no"], "옵션 --verbose은(는) 값을 받지 않습니다: =no 없이 --verbose만 쓰세요"),
    (["--cpu", "walk"], "인자 command: 'walk'은(는) 고를 수 있는 값이 아닙니다 (가능한 값: 'run')"),
    (["--cpu", "run", "extra"], "알 수 없는 인자입니다: extra"),
])
def test_every_argparse_usage_error_is_korean(argv, korean, capsys):
    """Each argparse error a user can cause, through the project's parser: Korean, and no English
    word left but the options' and values' own names."""
    import re

    from decodelab._cli import ArgumentParser

    p = ArgumentParser(prog="decodelab test")
    _options(p)
    with pytest.raises(SystemExit) as e:
        p.parse_args(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err == f"decodelab test: 오류: {korean}"
    names = {"cpu", "gpu", "pair", "names", "tokens", "ver", "verbose", "verify", "command", "run",  # options
             "many", "no", "walk", "extra"}  # the values given
    assert set(re.findall(r"[A-Za-z]+", err.split("오류:", 1)[1])) <= names, err


def test_bench_decode_help_explains_every_option(cli):
    proc = cli("bench", "decode", "--help", cwd=REPO)
    assert proc.returncode == 0 and "decodelab bench decode" in proc.stdout and "bench_decode.py" not in proc.stdout
    assert "--tokens N   프롬프트마다" in proc.stdout and "--repeats N  프롬프트" in proc.stdout


@pytest.mark.slow  # 4-11 s here
@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_bench_cuda_runs_its_table(cli, device):
    """``bench cuda`` in a small configuration: every check of its table passes on the CPU (CI has
    no GPU, so this keeps the script from rotting) and, on a machine with a GPU, on the GPU. Without
    a GPU ``--device cuda`` is refused in Korean."""
    import torch

    if device == "cuda" and not torch.cuda.is_available():
        proc = cli("bench", "cuda", cwd=REPO)
        assert proc.returncode == 2 and "CUDA GPU가 없습니다" in proc.stderr and "--device cpu" in proc.stderr
        return
    proc = cli("bench", "cuda", "--device", device, "--prompts", "2", "--tokens", "8", "--reps", "1",
               "--dtypes", "float32", cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert "decodelab vs transformers generate: 2/2 prompts identical" in proc.stdout
    rows = [line.split() for line in proc.stdout.splitlines() if line.startswith(("draft model", "n-gram", "EAGLE head"))]
    assert len(rows) == 4 and all("2/2" in r for r in rows), proc.stdout
    assert "same tokens twice: draft model yes, n-gram yes, EAGLE head yes, EAGLE head + tree yes" in proc.stdout
    assert "batched greedy (B=2, left-padded) vs batch-1 greedy: 2/2 prompts identical" in proc.stdout
    proc = cli("bench", "cuda", "--dtypes", "int8", cwd=REPO)
    assert proc.returncode == 2 and "모르는 자료형" in proc.stderr and "Traceback" not in proc.stderr


def test_bench_outside_a_checkout_says_it_needs_the_checkout(cli, tmp_path):
    proc = cli("bench", "decode", cwd=tmp_path, env={"DECODELAB_BENCHMARKS": ""})
    assert proc.returncode == 2 and "저장소의 benchmarks/" in proc.stderr and "Traceback" not in proc.stderr


def test_quiz_view_with_a_missing_quiz_folder_names_the_option(cli, tmp_path):
    proc = cli("quiz", "view", "01-greedy", "s1", "--quizzes", str(tmp_path / "nosuch"))
    assert proc.returncode == 2
    assert "--quizzes" in proc.stderr and "nosuch" in proc.stderr
    assert "인자 path" not in proc.stderr and "install" not in proc.stderr


def test_grade_on_a_file_that_is_not_json_says_so_in_korean(cli, tmp_path):
    (tmp_path / "subs").mkdir()
    (tmp_path / "subs" / "decodelab-course-s1.json").write_text("이건 JSON이 아닙니다", encoding="utf-8")
    proc = cli("grade", str(tmp_path / "subs"), "-o", str(tmp_path / "book.csv"))
    assert "Expecting value" not in proc.stderr + proc.stdout and "JSON" in proc.stderr
    plain = tmp_path / "notes.txt"
    plain.write_text("x", encoding="utf-8")
    proc = cli("grade", str(plain), "-o", str(tmp_path / "book2.csv"))
    assert proc.returncode == 2 and "폴더" in proc.stderr and "Traceback" not in proc.stderr


def test_train_out_a_file_fails_before_any_download(tmp_path, monkeypatch, capsys):
    from decodelab.tools import train

    monkeypatch.setattr(train, "obtain_corpus", lambda *a: pytest.fail("downloaded before checking --out"))
    monkeypatch.setattr(train, "check_requirements", lambda workdir: [])
    readme = tmp_path / "README.md"
    readme.write_text("x", encoding="utf-8")
    assert train.main(["--out", str(readme), "--workdir", str(tmp_path / "w")]) == 2
    err = capsys.readouterr().err
    assert "--out" in err and "이미 있는 파일" in err and readme.read_text(encoding="utf-8") == "x"
    assert train.main(["--seeds", str(tmp_path / "nosuch"), "--workdir", str(tmp_path / "w")]) == 2
    assert "--seeds" in capsys.readouterr().err


def test_train_seeds_is_an_explicit_option():
    from decodelab.tools import train

    assert train._parser().parse_args([]).seeds is None


@pytest.mark.parametrize("make, says", [(lambda p: p, "폴더가 없습니다"),
                                        (lambda p: p.write_text("x") and p, "폴더가 파일입니다"),
                                        (lambda p: p.mkdir() or p, "`decodelab train`이 만든 모델 쌍 폴더가 아닙니다")])
def test_card_folder_not_made_by_train_is_a_clear_error(tmp_path, capsys, make, says):
    from decodelab.tools import card

    folder = make(tmp_path / "m")
    assert card.main(["--folder", str(folder)]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err
    assert card.check_train_folder(card.MODELS_DIR) == card.MODELS_DIR


def test_card_only_shows_the_card_unless_asked_to_write(tmp_path, capsys, monkeypatch):
    """``decodelab card`` measures and prints; the bundled pair's MODEL_CARD.md (a file of the
    package) is rewritten only with ``--write``."""
    from decodelab.tools import card

    calls = []
    monkeypatch.setattr(card, "write_card", lambda folder, *, write: calls.append((folder, write)) or "# 카드")
    assert card.main([]) == 0
    out = capsys.readouterr()
    assert calls == [(card.MODELS_DIR, False)] and "# 카드" in out.out and "--write" in out.err
    assert card.main(["--write"]) == 0
    assert calls[-1] == (card.MODELS_DIR, True) and "썼습니다" in capsys.readouterr().err


def test_top_level_help_does_not_call_lab_a_lecturer_command():
    from decodelab.tools.cli import COMMANDS

    assert "강의자용" not in COMMANDS["lab"][1] and "강의자" not in COMMANDS["lab"][1]


# ------------------------------------------------------------------ README promises what the commands do

def _readme(name: str = "README.md") -> str:
    return " ".join((REPO / name).read_text(encoding="utf-8").split())


def test_the_contributors_guide_says_how_to_enable_the_browser_test_the_plain_command_skips():
    assert "(CONTRIBUTING.md)" in _readme()  # the README sends set-up questions there
    text = _readme("CONTRIBUTING.md")
    assert "DECODELAB_INSTALL_SYSTEM=1 bash course.sh test" in text and "DECODELAB_CHROMIUM" in text
    assert "브라우저 테스트를 **건너뜁니다**" in text
    assert "(단위 테스트, 모든 노트북의 nbval, 실제 브라우저 테스트)" not in text


def test_the_tools_page_gives_measured_notebook_times_and_the_right_train_and_card_wording():
    text = _readme("docs/tools.md")
    assert "04가 가장 길어 약 1분" not in text and "decodelab bench course" in text
    assert "pip install -e .[train]" not in text and "beautifulsoup4" in text
    assert "card --folder 폴더" not in text and "decodelab train이 만든 폴더" in text

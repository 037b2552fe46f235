"""The training script's offline parts: corpus filtering, tokenizer, schedule, bundled files, and
the command line's checks and error messages (subprocess, shutil.which and importlib are faked:
nothing is downloaded)."""

from __future__ import annotations

import json
import math
import subprocess
import unicodedata
from pathlib import Path

import pytest

from decodelab.tools import train
from decodelab._paths import MODELS_DIR as BUNDLED_DIR


def test_korean_lines_keeps_hangul_lines_and_drops_english_markup():
    text = "Click OK to continue\n  문서를   저장하려면  파일 - 저장을 선택합니다.  \nvar x = 1;\n가나\n"
    assert train._korean_lines(text) == ["문서를 저장하려면 파일 - 저장을 선택합니다."]


def test_korean_lines_normalises_to_nfc():
    nfd = unicodedata.normalize("NFD", "국회는 법률을 제정한다.")
    (line,) = train._korean_lines(nfd)
    assert line == "국회는 법률을 제정한다." and unicodedata.is_normalized("NFC", line)


def test_tokenizer_is_nfc_normalised_and_round_trips(tmp_path):
    texts = ["국회는 법률을 제정한다.", "모든 국민은 법 앞에 평등하다.", "문서를 저장하려면 저장을 누릅니다."] * 20
    tok = train.train_tokenizer(texts, 300, tmp_path)
    s = "국회는 법률을 저장한다."
    ids = tok(s, add_special_tokens=False)["input_ids"]
    assert tok.decode(ids) == s
    assert tok(unicodedata.normalize("NFD", s), add_special_tokens=False)["input_ids"] == ids
    assert tok.convert_tokens_to_ids(["<s>", "</s>", "<pad>"]) == [0, 1, 2]


def test_learning_rate_schedule_warmup_then_cosine_to_ten_percent():
    assert train._lr(0, 100, 1.0, warmup=10) == pytest.approx(0.1)
    assert train._lr(9, 100, 1.0, warmup=10) == pytest.approx(1.0)
    assert train._lr(10, 100, 1.0, warmup=10) == pytest.approx(1.0)
    mid = 10 + 45
    assert train._lr(mid, 100, 1.0, warmup=10) == pytest.approx(0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * 0.5)))
    assert train._lr(100, 100, 1.0, warmup=10) == pytest.approx(0.1)


def test_bundled_files_match_the_training_log_and_the_size_budget():
    log = json.loads((BUNDLED_DIR / "train_log.json").read_text(encoding="utf-8"))
    total = sum((BUNDLED_DIR / m / "model.safetensors").stat().st_size for m in ("target", "draft"))
    assert total <= 40e6  # issue 2: all weights in the repo <= 40 MB
    for m in ("target", "draft"):
        cfg = json.loads((BUNDLED_DIR / m / "config.json").read_text())
        assert cfg["dtype"] == "float16"
        assert cfg["hidden_size"] == log["config"][f"{m}_hidden"]
        assert cfg["num_hidden_layers"] == log["config"][f"{m}_layers"]
    assert log["parameters_target"] * 4 > 32e6  # fp32 weights exceed a 32 MB last-level cache
    assert (BUNDLED_DIR / "MODEL_CARD.md").is_file()


# ------------------------------------------------------------------------------------------
# command line: requirement checks, download failures, the --out default (nothing downloaded)


@pytest.fixture
def tools_present(monkeypatch):
    """bs4, pip, apt-get and dpkg-deb all 'installed', whatever this machine has."""
    monkeypatch.setattr(train.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(train.importlib.util, "find_spec", lambda name: object())


@pytest.fixture
def no_subprocess(monkeypatch):
    """Fail the test if anything is run (downloaded or unpacked)."""

    def forbidden(cmd, **kwargs):
        raise AssertionError(f"ran {cmd}")

    monkeypatch.setattr(train.subprocess, "run", forbidden)


def _filled_workdir(tmp_path: Path, *, root: bool = True, wheel: bool = True) -> Path:
    """A --workdir where the .deb files (and optionally their unpacked root and the wheel) exist."""
    work = tmp_path / "work"
    (work / "debs").mkdir(parents=True)
    for name in train.DEBIAN_PACKAGES:
        (work / "debs" / f"{name}_1.0_all.deb").write_bytes(b"")
    if root:
        (work / "root").mkdir()
    if wheel:
        (work / "wheels").mkdir()
        (work / "wheels" / "konlpy-0.6.0-py2.py3-none-any.whl").write_bytes(b"")
    return work


def _fail_with(monkeypatch, returncode: int, calls: list):
    def run(cmd, **kwargs):
        calls.append(cmd)
        raise subprocess.CalledProcessError(returncode, cmd)

    monkeypatch.setattr(train.subprocess, "run", run)


def test_offline_apt_download_is_one_korean_line_and_exit_2(tmp_path, monkeypatch, capsys, tools_present):
    calls: list = []
    _fail_with(monkeypatch, 100, calls)
    out = tmp_path / "out"
    assert train.main(["--workdir", str(tmp_path / "work"), "--out", str(out)]) == 2
    assert calls == [["apt-get", "download", "libreoffice-help-ko", "debian-faq-ko"]]
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0]
    assert err[0].startswith("decodelab train: 말뭉치(corpus) 내려받기에 실패했습니다: ")
    assert "`apt-get download libreoffice-help-ko debian-faq-ko` (종료 코드 100)" in err[0]
    assert "apt 저장소" in err[0] and f"--workdir {tmp_path / 'work'}" in err[0]
    assert not out.exists()  # nothing written when the corpus is missing


def test_offline_pip_download_names_pypi(tmp_path, monkeypatch, capsys, tools_present):
    work = _filled_workdir(tmp_path, wheel=False)
    calls: list = []
    _fail_with(monkeypatch, 1, calls)
    assert train.main(["--workdir", str(work), "--out", str(tmp_path / "out")]) == 2
    assert len(calls) == 1 and calls[0][1:4] == ["-m", "pip", "download"] and calls[0][-1] == "konlpy==0.6.0"
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "pip download" in line and "(종료 코드 1)" in line and "PyPI(pip 저장소)" in line


def test_failed_unpack_removes_half_unpacked_root(tmp_path, monkeypatch, capsys, tools_present):
    work = _filled_workdir(tmp_path, root=False)
    calls: list = []

    def run(cmd, **kwargs):
        calls.append(cmd)
        Path(cmd[3]).mkdir(exist_ok=True)  # dpkg-deb created the root before failing
        raise subprocess.CalledProcessError(2, cmd)

    monkeypatch.setattr(train.subprocess, "run", run)
    assert train.main(["--workdir", str(work), "--out", str(tmp_path / "out")]) == 2
    assert calls[0][:2] == ["dpkg-deb", "-x"]
    assert not (work / "root").exists()  # the next run unpacks again instead of using a partial root
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "데비안 패키지를 풀지 못했습니다" in line and str(work / "debs") in line


def test_missing_bs4_and_apt_tools_are_reported_before_any_download(tmp_path, monkeypatch, capsys, no_subprocess):
    monkeypatch.setattr(train.shutil, "which", lambda name: None)
    monkeypatch.setattr(train.importlib.util, "find_spec", lambda name: None if name == "bs4" else object())
    work = tmp_path / "work"
    assert train.main(["--workdir", str(work), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3
    assert "beautifulsoup4" in err[0] and 'pip install "decodelab[train]"' in err[0]  # the installed package
    assert '저장소 폴더에서 pip install -e ".[train]"' in err[0]  # a checkout
    assert err[1].startswith("decodelab train: apt-get 명령이 없어") and "libreoffice-help-ko" in err[1]
    assert err[2].startswith("decodelab train: dpkg-deb 명령이 없어")
    assert not work.exists()


def test_requirements_only_for_steps_still_to_do(tmp_path, monkeypatch):
    monkeypatch.setattr(train.shutil, "which", lambda name: None)
    monkeypatch.setattr(train.importlib.util, "find_spec", lambda name: None if name == "pip" else object())
    # everything already downloaded and unpacked: no apt-get, dpkg-deb or pip needed
    assert train.check_requirements(_filled_workdir(tmp_path / "a")) == []
    # debs present but not unpacked, wheel missing: dpkg-deb and pip needed, apt-get not
    problems = train.check_requirements(_filled_workdir(tmp_path / "b", root=False, wheel=False))
    assert len(problems) == 2
    assert problems[0].startswith("dpkg-deb 명령이 없어")
    assert "pip가 없어 konlpy==0.6.0" in problems[1] and "ensurepip" in problems[1]


def test_out_defaults_to_a_new_folder_in_the_current_directory(tmp_path, monkeypatch, capsys):
    args = train._parser().parse_args([])
    assert args.out == Path("decodelab-models") and not args.out.is_absolute()

    class Stop(Exception):
        pass

    seen = {}

    def fake_tokenizer(texts, vocab_size, out_dir):
        seen["out_dir"] = out_dir
        raise Stop

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(train, "check_requirements", lambda workdir: [])
    corpus = {k: ["국회는 법률을 제정한다."] * 3 for k in train.SOURCES}
    monkeypatch.setattr(train, "obtain_corpus", lambda workdir, seeds: corpus)
    monkeypatch.setattr(train, "train_tokenizer", fake_tokenizer)
    monkeypatch.setattr("torch.set_num_threads", lambda n: None)  # keep this test process's threads
    with pytest.raises(Stop):
        train.main(["--workdir", str(tmp_path / "work")])
    assert Path.cwd() / seen["out_dir"] == tmp_path / "decodelab-models" / "tokenizer"
    assert f"{tmp_path / 'decodelab-models'} 폴더에 저장합니다" in capsys.readouterr().out


def test_help_is_korean_and_explains_replacing_the_bundled_pair(capsys):
    with pytest.raises(SystemExit) as info:
        train.main(["--help"])
    assert info.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--out decodelab/assets/models" in text and "decodelab card --folder decodelab/assets/models" in text
    assert "./decodelab-models" in text
    for option, korean in [("--workdir", "작업 폴더"), ("--seeds", "원문 글"), ("--target-steps", "대상 모델의 학습 스텝 수"),
                           ("--draft-steps", "초안 모델의 증류")]:
        assert option in text and korean in text
    assert "--quick" not in text and "--quick" not in (train.main.__doc__ or "")
    with pytest.raises(SystemExit):
        train.main(["--draft-steps", "0"])
    assert "1 이상의 정수" in capsys.readouterr().err


def test_finished_message_points_to_the_card_command(tmp_path):
    assert train._finished_message(train.ASSETS).endswith(f"decodelab card --folder {train.ASSETS.resolve()}")
    msg = train._finished_message(tmp_path / "m")
    assert "번들 모델은 그대로" in msg and f"target=r'{tmp_path / 'm' / 'target'}'" in msg


def test_saves_go_through_the_atomic_writer(tmp_path, monkeypatch):
    """Every file train.py writes for a saved model or tokenizer goes through _atomic's writer
    (never a half-written file in the output folder), and the saved folder loads back."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    import decodelab.tools.train as T

    written = []
    real = T.atomic_write_bytes
    monkeypatch.setattr(T, "atomic_write_bytes", lambda path, data: written.append(path.name) or real(path, data))
    model = LlamaForCausalLM(LlamaConfig(vocab_size=16, hidden_size=8, intermediate_size=16, num_hidden_layers=1,
                                         num_attention_heads=2, num_key_value_heads=2)).eval()
    T._save(model, tmp_path / "m")
    assert {"config.json", "model.safetensors"} <= set(written)
    assert sorted(p.name for p in (tmp_path / "m").iterdir()) == sorted(written)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # the temporary folder is gone
    want = model.model.embed_tokens.weight.detach().half().float()  # _save stores float16
    again = LlamaForCausalLM.from_pretrained(tmp_path / "m")
    assert torch.equal(again.model.embed_tokens.weight.float(), want)

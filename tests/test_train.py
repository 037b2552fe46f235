"""The training script's offline parts: corpus filtering, tokenizer, schedule, bundled files."""

from __future__ import annotations

import json
import math
import unicodedata

import pytest

from decodelab import train
from decodelab.models import BUNDLED_DIR


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

"""Loading any local causal-LM pair: architectures, padded output layers, device/dtype, chat prompts.

Every model here is created with random weights and saved to a temporary folder (no downloads);
all of them use the bundled tokenizer (4,096 tokens), so a pair "shares a tokenizer" exactly as
Qwen2.5-0.5B and Qwen2.5-7B do, including output layers padded to different sizes.
"""

from __future__ import annotations

import os

import pytest
import torch

import decodelab
from decodelab import models as M
from decodelab._paths import MODELS_DIR

TOKENS = 4096  # len(bundled tokenizer)


def _config(arch: str, vocab: int):
    import transformers as tf

    ids = dict(bos_token_id=0, eos_token_id=1, pad_token_id=2, vocab_size=vocab)
    small = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, max_position_embeddings=256)
    if arch == "llama":
        return tf.LlamaConfig(**small, **ids), tf.LlamaForCausalLM
    if arch == "qwen2":
        return tf.Qwen2Config(**small, **ids), tf.Qwen2ForCausalLM
    if arch == "mistral":
        return tf.MistralConfig(**small, sliding_window=None, **ids), tf.MistralForCausalLM
    if arch == "gemma":
        return tf.GemmaConfig(**small, head_dim=8, **ids), tf.GemmaForCausalLM
    if arch == "gpt2":
        return tf.GPT2Config(n_embd=32, n_layer=2, n_head=4, n_positions=256, **ids), tf.GPT2LMHeadModel
    raise AssertionError(arch)


def make_model(folder, arch: str, vocab: int = TOKENS, seed: int = 0, tokenizer=None):
    """Save a random-weight ``arch`` model with ``vocab`` output rows (and the tokenizer) to ``folder``.

    Rows past the tokenizer's 4,096 tokens are padding, zeroed like the never-trained rows of a
    real padded output layer, so no text needs an id the tokenizer does not have.
    """
    cfg, cls = _config(arch, vocab)
    torch.manual_seed(seed)
    model = cls(cfg).eval()
    with torch.no_grad():
        for p in model.parameters():  # larger random weights: logits far apart, argmax well defined
            p.mul_(4.0) if p.dim() > 1 else None
        model.get_output_embeddings().weight[TOKENS:] = 0.0
    model.save_pretrained(folder)
    if tokenizer is not None:
        tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def tok():
    return M.load_tokenizer(MODELS_DIR / "target")


ARCHS = ["llama", "qwen2", "mistral", "gemma", "gpt2"]


def _hf_greedy(model, ids, n):
    with torch.inference_mode():
        out = model.generate(torch.tensor([ids]), max_new_tokens=n, do_sample=False,
                             attention_mask=torch.ones(1, len(ids), dtype=torch.long))
    return out[0, len(ids):].tolist()


@pytest.mark.parametrize("arch", ARCHS)
def test_every_architecture_loads_and_greedy_equals_transformers_generate(arch, tok, tmp_path):
    # output layers padded to different sizes (4,160 and 4,128 rows) over one tokenizer; the
    # draft has only as many rows as it needs, like Qwen2.5-0.5B next to Qwen2.5-7B. (For
    # qwen2, transformers' Qwen2Tokenizer adds "<|endoftext|>" as token 4,096: it fits both.)
    make_model(tmp_path / "t", arch, vocab=4160, seed=1, tokenizer=tok)
    make_model(tmp_path / "d", arch, vocab=4128, seed=2, tokenizer=tok)
    pair = decodelab.load_models(tmp_path / "t", tmp_path / "d", device="cpu")
    assert type(pair.target).__name__ == type(pair.draft).__name__
    assert (M.output_rows(pair.target), M.output_rows(pair.draft), pair.shared_vocab_size) == (4160, 4128, 4128)
    assert pair.dtype == torch.float32 and pair.device == "cpu" and not pair.is_bundled
    assert str(tmp_path / "t") in pair.describe() and "float32" in pair.describe()
    ids = M.format_prompt(pair.tokenizer, "모든 국민은")
    for model in (pair.target, pair.draft):
        r = decodelab.generate(model, pair.tokenizer, "모든 국민은", 12, top_candidates=0)
        expected = _hf_greedy(model, ids, 12)
        assert r.token_ids == expected
        assert len(r.token_ids) >= 1
    # greedy speculative decoding over the padded pair == target greedy == transformers' generate
    target_greedy = _hf_greedy(pair.target, ids, 12)
    s = decodelab.speculative_generate(pair.target, pair.draft, pair.tokenizer, "모든 국민은", 12, num_speculative_tokens=3)
    assert s.token_ids == target_greedy


@pytest.mark.parametrize("tarch,darch", [("qwen2", "llama"), ("gemma", "gpt2")])
def test_mixed_architectures_share_a_tokenizer(tarch, darch, tok, tmp_path):
    make_model(tmp_path / "t", tarch, vocab=4224, seed=3, tokenizer=tok)
    make_model(tmp_path / "d", darch, vocab=4160, seed=4)  # no tokenizer saved with the draft
    pair = decodelab.load_models(tmp_path / "t", tmp_path / "d")
    assert pair.shared_vocab_size == 4160
    assert pair.target.config.model_type != pair.draft.config.model_type
    ids = M.format_prompt(pair.tokenizer, "국회는 법률을")
    s = decodelab.speculative_generate(pair.target, pair.draft, pair.tokenizer, "국회는 법률을", 10, num_speculative_tokens=2)
    assert s.token_ids == _hf_greedy(pair.target, ids, 10)


def test_tokenizer_larger_than_an_output_layer_is_a_real_mismatch(tok, tmp_path):
    make_model(tmp_path / "t", "llama", vocab=4160, tokenizer=tok)
    make_model(tmp_path / "d", "qwen2", vocab=4000)  # 96 of the tokenizer's ids have no row
    with pytest.raises(ValueError, match=r"토크나이저 어휘\(4096개 토큰\)가 초안\(draft\) 모델의 출력층\(4000행\)"):
        decodelab.load_models(tmp_path / "t", tmp_path / "d")
    make_model(tmp_path / "t2", "llama", vocab=4000, tokenizer=tok)
    with pytest.raises(ValueError, match=r"대상\(target\) 모델"):
        decodelab.load_models(tmp_path / "t2")


def test_draft_tokenizer_with_other_ids_is_rejected_even_with_padding(tok, tmp_path):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {f"t{i}": i for i in range(TOKENS)}
    tk = Tokenizer(models.WordLevel(vocab=vocab, unk_token="t0"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    make_model(tmp_path / "t", "llama", vocab=4160, tokenizer=tok)
    make_model(tmp_path / "d", "llama", vocab=4096, tokenizer=PreTrainedTokenizerFast(tokenizer_object=tk))
    with pytest.raises(ValueError, match="토크나이저가 대상 모델의 토크나이저와 다릅니다"):
        decodelab.load_models(tmp_path / "t", tmp_path / "d")


def test_check_same_vocabulary_without_a_tokenizer_needs_equal_layers(tok, tmp_path):
    a = M.load_model(make_model(tmp_path / "a", "llama", vocab=4160))
    b = M.load_model(make_model(tmp_path / "b", "llama", vocab=4096))
    with pytest.raises(ValueError, match="target 4160, draft 4096"):
        M.check_same_vocabulary(a, b)
    M.check_same_vocabulary(a, b, tok)  # over the tokenizer's 4,096 tokens: fine


def test_not_a_causal_lm_is_a_clear_error(tmp_path):
    from transformers import ViTConfig, ViTModel  # an image encoder: no causal-LM head exists

    ViTModel(ViTConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
                       image_size=32, patch_size=16)).save_pretrained(tmp_path / "vit")
    with pytest.raises(ValueError, match="인과 언어 모델"):
        decodelab.load_models(tmp_path / "vit")


def test_config_without_weights_is_a_clear_error(tmp_path):
    cfg, _ = _config("llama", TOKENS)
    cfg.save_pretrained(tmp_path / "half")  # config.json only: a download that stopped early
    with pytest.raises(FileNotFoundError, match="가중치를 읽지 못했습니다"):
        decodelab.load_models(tmp_path / "half")


def test_device_and_dtype_choices():
    assert M.resolve_device("auto", bundled=True) == "cpu"
    assert M.resolve_device("CPU") == "cpu"
    expected_auto = "cuda" if torch.cuda.is_available() else (
        "mps" if torch.backends.mps.is_available() else "cpu")
    assert M.resolve_device("auto") == expected_auto
    assert M.resolve_dtype(None, "cpu") is torch.float32
    assert M.resolve_dtype("auto", "mps") is torch.float16
    assert M.resolve_dtype("bf16", "cpu") is torch.bfloat16
    assert M.resolve_dtype("fp16", "cpu") is torch.float16
    assert M.resolve_dtype(torch.float64, "cpu") is torch.float64
    with pytest.raises(ValueError, match="허용: auto, bf16"):
        M.resolve_dtype("int8", "cpu")
    with pytest.raises(ValueError, match="부동소수점"):
        M.resolve_dtype(torch.int8, "cpu")
    with pytest.raises(TypeError):
        M.resolve_dtype(16, "cpu")
    with pytest.raises(ValueError, match="허용: auto, cpu, cuda"):
        M.resolve_device("tpu")
    with pytest.raises(TypeError):
        M.resolve_device(0)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA GPU를 찾지 못했습니다"):
            M.resolve_device("cuda")
        with pytest.raises(ValueError, match="CUDA GPU를 찾지 못했습니다"):
            decodelab.load_models(device="cuda")


def test_a_transformers_release_outside_the_requirement_is_refused_with_the_pip_command(monkeypatch):
    """transformers 5.17 (seen on a GPU machine) ignores the ``cache=`` argument: no KV cache ever
    fills. The range comes from the installed package's metadata (pyproject.toml)."""
    from importlib import metadata

    real = metadata.version
    monkeypatch.setattr(metadata, "version", lambda name: "5.17.0" if name == "transformers" else real(name))
    M.require_transformers.cache_clear()
    try:
        with pytest.raises(ImportError, match=r'transformers 5\.17\.0 버전.*cache=.*-m pip install -U "transformers<6,>=5\.24"'):
            decodelab.load_models()
    finally:
        monkeypatch.undo()
        M.require_transformers.cache_clear()
    M.require_transformers()  # the installed release is inside the range
    monkeypatch.setattr(metadata, "version", lambda name: "6.0.0" if name == "transformers" else real(name))
    M.require_transformers.cache_clear()
    try:
        with pytest.raises(ImportError, match=r"transformers 6\.0\.0 버전") as caught:
            M.require_transformers()
        assert "cache=" not in str(caught.value)  # too new: the reason for the lower bound does not apply
    finally:
        monkeypatch.undo()
        M.require_transformers.cache_clear()


def test_bf16_on_cpu_loads_and_matches_transformers_in_the_same_numerics(tok, tmp_path):
    make_model(tmp_path / "t", "qwen2", vocab=4160, tokenizer=tok)
    pair = decodelab.load_models(tmp_path / "t", dtype="bf16", device="cpu")
    assert pair.target.dtype == torch.bfloat16 and pair.draft is pair.target
    ids = M.format_prompt(tok, "국회는 법률을")
    r = decodelab.generate(pair.target, tok, "국회는 법률을", 8, top_candidates=0)
    assert r.token_ids == _hf_greedy(pair.target, ids, 8)


CHAT_TEMPLATE = ("{% for m in messages %}<s>{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
                 "{% if add_generation_prompt %}<s>assistant:{% endif %}")


def test_format_prompt_text_and_chat_messages(tok, tmp_path):
    assert M.format_prompt(tok, "모든 국민은") == tok("모든 국민은", add_special_tokens=False)["input_ids"]
    with pytest.raises(ValueError, match="대화 템플릿"):
        M.format_prompt(tok, [{"role": "user", "content": "안녕"}])  # the bundled tokenizer has none
    tok.save_pretrained(tmp_path / "chat")
    from transformers import AutoTokenizer

    chat = AutoTokenizer.from_pretrained(tmp_path / "chat")
    chat.chat_template = CHAT_TEMPLATE
    msgs = [{"role": "system", "content": "짧게 답하세요."}, {"role": "user", "content": "모든 국민은"}]
    ids = M.format_prompt(chat, msgs)
    rendered = "<s>system: 짧게 답하세요.\n<s>user: 모든 국민은\n<s>assistant:"
    assert ids == chat(rendered, add_special_tokens=False)["input_ids"]
    assert ids[0] == chat.bos_token_id
    for bad, pattern in [("  ", "비어"), ([], "비어")]:
        with pytest.raises(ValueError, match=pattern):
            M.format_prompt(chat, bad)
    for bad, pattern in [([{"role": "user"}], r"prompt\[0\]"), (42, "대화 메시지 목록"),
                         ([{"role": "user", "content": 3}], "content")]:
        with pytest.raises(TypeError, match=pattern):
            M.format_prompt(chat, bad)


def test_environment_switch_and_default_pair(tok, tmp_path, monkeypatch):
    make_model(tmp_path / "t", "mistral", vocab=4160, tokenizer=tok)
    make_model(tmp_path / "d", "llama", vocab=4096, tokenizer=tok)
    monkeypatch.setenv(M.ENV_TARGET, str(tmp_path / "t"))
    monkeypatch.setenv(M.ENV_DRAFT, str(tmp_path / "d"))
    p1 = M.default_pair()
    assert p1.target.config.model_type == "mistral" and p1.draft.config.model_type == "llama"
    assert M.default_pair() is p1  # cached
    assert not p1.is_bundled and "DECODELAB_TARGET" in p1.describe()
    monkeypatch.delenv(M.ENV_TARGET)
    monkeypatch.delenv(M.ENV_DRAFT)
    assert M.default_pair() is M.bundled() and M.bundled().is_bundled
    assert M.bundled().describe().startswith("모델 쌍: 번들 모델")
    monkeypatch.setenv(M.ENV_TARGET, str(tmp_path / "missing"))
    with pytest.raises(FileNotFoundError, match="찾을 수 없습니다"):
        M.default_pair()


def test_threads_auto_sets_one_thread_only_for_the_bundled_pair(tok, tmp_path):
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        make_model(tmp_path / "t", "gpt2", vocab=4096, tokenizer=tok)
        decodelab.load_models(tmp_path / "t")
        assert torch.get_num_threads() == 2
        decodelab.load_models()
        assert torch.get_num_threads() == 1
        with pytest.raises(ValueError, match="threads"):
            decodelab.load_models(threads=0)
    finally:
        torch.set_num_threads(before)


# ------------------------------------------------------------------ the switch reaches the notebooks

REPO = MODELS_DIR.parents[2]


#: the notebooks run on a random-weight pair below: the decode phase, speculative decoding, its speedup
SWITCHED_NOTEBOOKS = ["01_decode_phase.ipynb", "04_speculative_decoding.ipynb", "04b_speculative_speedup.ipynb"]


@pytest.mark.slow
@pytest.mark.notebooks
def test_environment_switch_reaches_the_notebooks(tok, tmp_path, monkeypatch):
    """Run whole notebooks (as nbval does) with DECODELAB_TARGET/DRAFT set to a random-weight pair.

    The three share one kernel (starting one costs about 4 CPU-s here, mostly importing torch and
    transformers), each run starting with ``%reset -f``: a name the notebook uses before defining
    it still fails, as in a fresh kernel."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    make_model(tmp_path / "t", "llama", vocab=4160, seed=5, tokenizer=tok)
    make_model(tmp_path / "d", "llama", vocab=4128, seed=6, tokenizer=tok)
    monkeypatch.setenv(M.ENV_TARGET, str(tmp_path / "t"))
    monkeypatch.setenv(M.ENV_DRAFT, str(tmp_path / "d"))
    monkeypatch.setenv("DECODELAB_ANSWERS_DIR", str(tmp_path / "answers"))  # never the student's folder
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    notebooks = []
    for name in SWITCHED_NOTEBOOKS:
        nb = nbformat.read(REPO / "notebooks" / name, as_version=4)
        assert any("describe()" in c.source for c in nb.cells if c.cell_type == "code"), \
            f"{name} must print pair.describe() (contract: load_models() + print(pair.describe()))"
        nb.cells.insert(0, nbformat.v4.new_code_cell("%reset -f"))
        notebooks.append((name, nb))
    client = nbclient.NotebookClient(notebooks[0][1], timeout=120, kernel_name="python3",
                                     resources={"metadata": {"path": str(REPO / "notebooks")}})
    # No stand-in for the Output widget's front end (nbval has none either): with it (nbclient
    # 0.11, ipykernel 7.4) a cell that starts with ex.hold(), an Output widget capturing the cell,
    # sometimes waits the whole cell timeout before the next cell runs when the CPU is busy
    del client.comm_open_handlers["jupyter.widget"]
    with client.setup_kernel():
        for name, nb in notebooks:
            client.nb = nb
            client.reset_execution_trackers()
            for index, cell in enumerate(nb.cells):
                if cell.cell_type != "code":
                    continue
                try:
                    client.execute_cell(cell, index)
                except nbclient.exceptions.CellExecutionError as exc:
                    pytest.fail(f"{name}, cell {index} on the random pair:\n{exc}")
            printed = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
            assert f"대상 모델 {tmp_path / 't'}" in printed and f"초안 모델 {tmp_path / 'd'}" in printed, name
            assert "번들 모델" not in printed.split("모델 쌍:", 1)[1].splitlines()[0], name


def test_draft_with_a_smaller_output_layer_but_the_same_weights_is_always_accepted(tok, tmp_path):
    # the draft is the target with its padded output rows cut off (4,160 -> 4,128): same text
    # predictions, so every draft token must be accepted, and the output is the target's greedy
    make_model(tmp_path / "t", "qwen2", vocab=4160, seed=7, tokenizer=tok)
    cfg, cls = _config("qwen2", 4128)
    target = M.load_model(tmp_path / "t")
    draft = cls(cfg).eval()
    state = {k: (v[:4128] if v.shape[:1] == (4160,) else v) for k, v in target.state_dict().items()}
    draft.load_state_dict(state)
    draft.save_pretrained(tmp_path / "d")
    pair = decodelab.load_models(tmp_path / "t", tmp_path / "d")
    assert (M.output_rows(pair.target), M.output_rows(pair.draft)) == (4160, 4128)
    s = decodelab.speculative_generate(pair.target, pair.draft, pair.tokenizer, "모든 국민은", 12, num_speculative_tokens=4)
    assert s.token_ids == _hf_greedy(pair.target, M.format_prompt(tok, "모든 국민은"), 12)
    assert s.acceptance_rate == 1.0 and s.num_draft_tokens > 0

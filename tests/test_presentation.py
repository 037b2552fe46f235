"""What students see: byte pieces, the one space marker, the CSS the widgets carry."""

from __future__ import annotations

from decodelab.plots import SPACE, byte_pieces, plot_label
from decodelab.teach.widgets.decode import tokens_html


def _ids(tok, text):
    return tok(text, add_special_tokens=False)["input_ids"]


def test_partial_tokens_show_as_byte_pieces(pair):
    tok = pair.tokenizer
    ids = _ids(tok, "똠")                                   # U+B620 = EB 98 A0 in UTF-8, unseen by this model
    assert [byte_pieces(tok, i) for i in ids] == ["<0xEB>", "<0x98>", "<0xA0>"]
    assert [plot_label(tok, i) for i in ids] == ["<0xEB>", "<0x98>", "<0xA0>"]
    html = tokens_html(tok, "똠방각하 😀")
    assert "&lt;0xF0&gt;" in html and "&lt;0x9F&gt;" in html    # 😀 = F0 9F 98 80
    for letter in "ëĺłðŁĢ":                                   # the byte alphabet never reaches the page
        assert letter not in html


def test_one_space_marker(pair):
    tok = pair.tokenizer
    html = tokens_html(tok, "국회는 법률을 제정한다.")
    assert SPACE == "␣" and SPACE in html and "·" not in html
    spaces = [i for i in _ids(tok, "하 😀") if tok.decode([i]) == " "]
    assert spaces and all(plot_label(tok, i) == SPACE for i in spaces)


def test_every_notebook_carries_the_course_styles():
    import json
    from pathlib import Path

    import yaml

    from decodelab.teach.widgets.styles import DECK_BODY_PX, METADATA_KEY, NOTEBOOK_STYLES

    assert DECK_BODY_PX >= 20                                       # projector-sized deck text
    assert NOTEBOOK_STYLES[".jp-Cell.jp-deck-mod-onscreen"]["--jp-content-font-size1"] == "20px"
    root = Path(__file__).resolve().parents[1] / "notebooks"
    for ipynb in sorted(root.glob("*.ipynb")):
        meta = json.loads(ipynb.read_text(encoding="utf-8"))["metadata"]
        assert meta.get(METADATA_KEY, {}).get("styles") == NOTEBOOK_STYLES, ipynb.name
        src = (root / "src" / f"{ipynb.stem}.md").read_text(encoding="utf-8")
        header = yaml.safe_load(src.split("\n---\n", 1)[0].removeprefix("---\n"))
        assert header[METADATA_KEY]["styles"] == NOTEBOOK_STYLES, f"{ipynb.stem}.md"   # the one source
        assert METADATA_KEY in header["jupytext"]["notebook_metadata_filter"]


"""What a student wrote or printed reaches the lecturer's formgrader page as text, never as script
(decodelab.classroom.markup): rendered here with nbgrader's own formgrade template, as formgrader
renders an autograded notebook."""

from __future__ import annotations

from html.parser import HTMLParser

import nbformat
import pytest

pytest.importorskip("nbgrader")

from nbconvert.exporters import HTMLExporter  # noqa: E402
from nbgrader.server_extensions.formgrader import handlers  # noqa: E402
from traitlets.config import Config  # noqa: E402
from traitlets.config.loader import PyFileConfigLoader  # noqa: E402

from decodelab.classroom.markup import NeutralizeMarkup, neutral_markdown  # noqa: E402
from decodelab.classroom.student import ANSWER_MIME  # noqa: E402

class _Active(HTMLParser):
    """The elements of a page that would run the attacks' script: an ``on*`` attribute holding one, a link or
    source with a script scheme, a ``<script>`` holding one of the attacks (``alert(`` / ``fetch(``),
    an ``<svg>``. The formgrade template's own scripts hold neither."""

    def __init__(self):
        super().__init__()
        self.found, self._in_script = [], False

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            v = (value or "").strip().lower()
            payload = "alert(" in v or "fetch(" in v  # the template's own handlers (toggle_name...) hold neither
            scheme = name in ("href", "src") and v.startswith(("javascript:", "vbscript:", "data:text"))
            if (name.startswith("on") and payload) or scheme:
                self.found.append(f"<{tag} {name}={value!r}>")
        if tag == "svg":
            self.found.append("<svg>")
        self._in_script = tag == "script"

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        if self._in_script and ("alert(" in data or "fetch(" in data):
            self.found.append(f"<script>{data[:40]}")


def _active(html: str) -> list[str]:
    parser = _Active()
    parser.feed(html)
    return parser.found


def _meta(grade_id, *, solution=False, locked=False, grade=False):
    meta = {"grade": grade, "solution": solution, "locked": locked, "grade_id": grade_id, "schema_version": 3}
    return {"nbgrader": {**meta, "points": 2.0} if grade else meta}


PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
#: the attacks of issue 44 and earlier ones: markup a student wrote, outputs their code printed
ANSWER = ('KV 캐시 <img src=x onerror="fetch(\'/api/terminals\',{method:\'POST\'})"> '
          "[보기](javascript:alert(1)) [링크](  JaVaScRiPt:alert(2)) <svg onload=alert(3)>\n\n"
          "[e](java&#115;cript:alert(5)) [f](&#106;avascript:alert(6)) "
          '<a href="&#x6A;avascript&colon;alert(7)">g</a> $\\href{javascript:alert(8)}{h}$ **굵게**\n\n'
          "[r]: vbscript:msgbox(4)\n")


def _submission():
    md, code, out = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell, nbformat.v4.new_output
    nb = nbformat.v4.new_notebook(cells=[
        md("## 문항 1 <b>강좌의 글</b>", metadata=_meta("q1-prompt", locked=True)),
        md(ANSWER, metadata=_meta("q1-answer", solution=True, grade=True)),
        md("<script>alert(5)</script> 학생이 더한 칸 ![x](data:text/html;base64,PHNjcmlwdD4=) "
           "[d](data:text/html,<script>alert(9)</script>) <iframe src=\"data:text/html,<script>alert(10)</script>\">"),
        code("show()", metadata=_meta("q2-answer", solution=True), outputs=[
            out("display_data", data={"text/html": "<script>alert(6)</script><b>표</b>", "text/plain": "<HTML object>"}),
            out("display_data", data={"image/svg+xml": "<svg onload=alert(7)><script>alert(7)</script></svg>"}),
            out("display_data", data={"application/javascript": "alert(8)", "text/plain": "js"}),
            out("display_data", data={ANSWER_MIME: {"id": "q2", "value": 3}}),
            out("stream", name="stdout", text="<b>printed</b>\n"),
            # issue 44: an image whose metadata width is an unquoted attribute in the template
            out("display_data", data={"image/png": PNG},
                metadata={"image/png": {"width": "1 onload=alert(document.domain) x", "height": 40}}),
            out("display_data", data={"image/png": PNG}, metadata={"width": "1 onload=alert(11) x"}),
            out("display_data", data={"image/jpeg": 'x" onerror="alert(12)'}),
        ]),
        nbformat.v4.new_raw_cell("<img src=x onerror=alert(15)>"),
    ], metadata={"title": "<img src=x onerror=alert(16)>", "kernelspec": {"name": "python3", "display_name": "x"}})
    nb.cells[3].outputs += [  # nested mime bundles: a bundle where a string belongs (not valid nbformat)
        nbformat.from_dict({"output_type": "display_data", "metadata": {}, "data": {
            "text/html": {"text/html": "<img src=x onerror=alert(13)>"}, "text/plain": "nested"}}),
        nbformat.from_dict({"output_type": "execute_result", "metadata": {}, "execution_count": 1, "data": {
            "text/plain": {"text/html": "<img src=x onerror=alert(14)>"}}}),
    ]
    return nb


def _formgrade_html(nb) -> str:
    c = Config()
    c.HTMLExporter.template_name = "formgrade"
    c.HTMLExporter.extra_template_basedirs = [handlers.template_path]
    resources = {"assignment_id": "exam-02", "notebook_id": "exam-02", "submission_id": "s", "index": 0, "total": 1,
                 "base_url": "/services/formgrader", "student": "mallory", "last_name": "", "first_name": "",
                 "notebook_path": "autograded/mallory/exam-02/exam-02.ipynb"}
    html, _ = HTMLExporter(config=c).from_notebook_node(nb, resources=resources)
    return html


def test_formgrader_renders_a_raw_submission_with_active_content():
    """The attack is real: nbgrader's template passes a student's markdown and outputs through, and
    writes an image's width unquoted."""
    found = _active(_formgrade_html(_submission()))
    assert any("onerror" in f for f in found) and any("alert(6)" in f for f in found), found
    assert "<img onload='alert(document.domain)'>" in found  # the width payload of issue 44
    assert any("href='javascript:alert(6)'" in f for f in found), found  # an entity-encoded scheme


def test_the_autograded_copy_renders_without_script_in_formgrader():
    nb = _submission()
    NeutralizeMarkup().preprocess(nb, {})
    html = _formgrade_html(nb)
    assert _active(html) == []
    assert "<iframe" not in html and "<svg" not in html and "<script>alert" not in html
    assert "width=1 onload" not in html and "width=120" not in html
    # the lecturer still reads the answer: its text and markup, each link as text with its target
    assert "KV 캐시" in html and "<strong>굵게</strong>" in html and "<b>강좌의 글</b>" in html
    assert "e (<code>javascript:alert(5)</code>)" in html and "f (<code>javascript:alert(6)</code>)" in html
    assert 'class="tex2jax_ignore"' in html  # MathJax leaves the student's TeX (\\href) alone
    assert "&lt;HTML object&gt;" not in html and "<b>표</b>" in html  # text/html cleaned, not dropped
    assert "&lt;b&gt;printed&lt;/b&gt;" in html  # streams stay text
    outputs = nb.cells[3].outputs
    assert [sorted(o.get("data", {})) for o in outputs if o.output_type != "stream"] == [
        ["text/html", "text/plain"], ["text/plain"], [ANSWER_MIME], ["image/png"], ["image/png"], ["text/plain"]]
    assert outputs[4].metadata == {"image/png": {"height": 40}}  # only a numeric size is kept
    assert outputs[5].metadata == {}


def test_markup_is_cleaned_after_character_references_are_decoded():
    for source in ("[e](java&#115;cript:alert(5))", "[f](&#106;avascript:alert(6))",
                   '<a href="java&#x09;script:alert(1)">x</a>', '<a href="&#x6A;avascript&colon;alert(7)">g</a>',
                   "[x](data:text/html;base64,PHNjcmlwdD4=)", "<img src=x onerror=alert(1)>"):
        out = neutral_markdown(source)
        assert "href=" not in out and "onerror" not in out and "src=" not in out, (source, out)


def test_neutral_markdown_keeps_ordinary_text_and_pasted_images():
    out = neutral_markdown("[vLLM](https://docs.vllm.ai) a < b & **c**\n\n- 하나\n- 둘")
    assert out.startswith('<div class="tex2jax_ignore">') and "\n" not in out
    assert "vLLM (<code>https://docs.vllm.ai</code>) a &lt; b &amp; <strong>c</strong>" in out
    assert "<li>하나</li>" in out
    out = neutral_markdown("![그림](attachment:a.png)", {"a.png": {"image/png": PNG, "image/svg+xml": "<svg/>"}})
    assert f'src="data:image/png;base64,{PNG}"' in out  # the pasted PNG, never its SVG twin
    assert neutral_markdown("```\nx\n\n<b>\n```").count("&#10;") >= 2  # one HTML block, blank lines kept


def test_a_released_cell_left_as_it_was_stays_as_released():
    """nbgrader's checksum (put back from the gradebook) vouches for the course's own text: an
    unanswered written answer keeps its stub, so nbgrader still scores it 0 ("No response")."""
    from nbgrader.utils import compute_checksum, determine_grade

    stub = nbformat.v4.new_markdown_cell("여기에 답을 쓰세요. $x$", metadata=_meta("w", solution=True, grade=True))
    stub.metadata.nbgrader["checksum"] = compute_checksum(stub)
    changed = nbformat.v4.new_markdown_cell("<img src=x onerror=alert(1)>", metadata=_meta("w2", solution=True, grade=True))
    changed.metadata.nbgrader["checksum"] = compute_checksum(stub)
    nb = nbformat.v4.new_notebook(cells=[stub, changed])
    NeutralizeMarkup().preprocess(nb, {})
    assert nb.cells[0].source == "여기에 답을 쓰세요. $x$" and determine_grade(nb.cells[0]) == (0, 2.0)
    assert "onerror" not in nb.cells[1].source


def test_the_course_config_runs_it_right_after_the_sandboxed_kernel(tmp_path):
    from decodelab.classroom.assignments import NBGRADER_CONFIG

    path = tmp_path / "nbgrader_config.py"
    path.write_text(NBGRADER_CONFIG.format(course_id="c", code_stub="", text_stub=""), encoding="utf-8")
    steps = PyFileConfigLoader(path.name, path=str(tmp_path)).load_config().Autograde.autograde_preprocessors
    names = [s if isinstance(s, str) else s.__name__ for s in steps]
    i = names.index("decodelab.classroom.sandbox.SandboxedExecute")
    assert names[i + 1] == "decodelab.classroom.markup.NeutralizeMarkup"
    assert names.index("decodelab.classroom.review.GradeAnswers") > i + 1

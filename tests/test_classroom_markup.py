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


def _submission():
    md, code, out = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell, nbformat.v4.new_output
    return nbformat.v4.new_notebook(cells=[
        md("## 문항 1 <b>강좌의 글</b>", metadata=_meta("q1-prompt", locked=True)),
        md('KV 캐시 <img src=x onerror="fetch(\'/api/terminals\',{method:\'POST\'})"> '
           "[보기](javascript:alert(1)) [링크](  JaVaScRiPt:alert(2)) <svg onload=alert(3)>\n\n"
           "[r]: vbscript:msgbox(4)\n",
           metadata=_meta("q1-answer", solution=True, grade=True)),
        md("<script>alert(5)</script> 학생이 더한 칸 ![x](data:text/html;base64,PHNjcmlwdD4=)"),
        code("show()", metadata=_meta("q2-answer", solution=True), outputs=[
            out("display_data", data={"text/html": "<script>alert(6)</script>", "text/plain": "<HTML object>"}),
            out("display_data", data={"image/svg+xml": "<svg onload=alert(7)></svg>"}),
            out("display_data", data={"application/javascript": "alert(8)", "text/plain": "js"}),
            out("display_data", data={ANSWER_MIME: {"id": "q2", "value": 3}}),
            out("stream", name="stdout", text="<b>printed</b>\n"),
        ]),
    ])


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
    """The attack is real: nbgrader's template passes a student's markdown and outputs through."""
    found = _active(_formgrade_html(_submission()))
    assert any("onerror" in f for f in found) and any("alert(6)" in f for f in found), found


def test_the_autograded_copy_renders_as_text_in_formgrader():
    nb = _submission()
    NeutralizeMarkup().preprocess(nb, {})
    html = _formgrade_html(nb)
    assert _active(html) == []
    assert "&lt;img src=x onerror" in html  # the lecturer reads what the student typed
    assert "<b>강좌의 글</b>" in html  # the course's locked text keeps its markup
    assert "&lt;HTML object&gt;" in html and "&lt;b&gt;printed&lt;/b&gt;" in html  # text/plain and streams stay
    outputs = nb.cells[3].outputs
    assert [o.get("data", {}) for o in outputs if o.output_type == "display_data"] == [
        {"text/plain": "<HTML object>"}, {"text/plain": "js"}, {ANSWER_MIME: {"id": "q2", "value": 3}}]


def test_neutral_markdown_keeps_ordinary_links_and_text():
    assert neutral_markdown("[vLLM](https://docs.vllm.ai) a < b") == "[vLLM](https://docs.vllm.ai) a &lt; b"
    assert neutral_markdown("[x](data:image/png;base64,AAAA)") == "[x](#)"


def test_the_course_config_runs_it_right_after_the_sandboxed_kernel(tmp_path):
    from decodelab.classroom.assignments import NBGRADER_CONFIG

    path = tmp_path / "nbgrader_config.py"
    path.write_text(NBGRADER_CONFIG.format(course_id="c", code_stub="", text_stub=""), encoding="utf-8")
    steps = PyFileConfigLoader(path.name, path=str(tmp_path)).load_config().Autograde.autograde_preprocessors
    names = [s if isinstance(s, str) else s.__name__ for s in steps]
    i = names.index("decodelab.classroom.sandbox.SandboxedExecute")
    assert names[i + 1] == "decodelab.classroom.markup.NeutralizeMarkup"
    assert names.index("decodelab.classroom.review.GradeAnswers") > i + 1

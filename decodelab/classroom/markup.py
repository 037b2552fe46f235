"""nbgrader autograde step: what a student wrote or printed reaches the lecturer's pages without script.

formgrader (and the feedback nbgrader generates) renders a submission with nbconvert's HTML
exporter and nbgrader's ``formgrade`` template: a markdown cell's source goes through
``markdown2html`` without any cleaning, ``text/html`` outputs are written as they are, and an image
output's ``width`` / ``height`` metadata is written as an *unquoted* attribute
(``width={{ width }}``: ``"1 onload=alert(document.domain) x"`` becomes an ``onload`` handler).
Script there runs in the lecturer's grading page with the lecturer's session (formgrader's API
changes grades; its contents API lists the course folder). So, in the autograded copy (formgrader
renders ``autograded/<student>/<assignment>/<notebook>.ipynb``, never the submitted one), right after
the student's notebook has run in the sandbox:

- every **markdown cell** is rendered to HTML with nbconvert's own renderer (the one formgrader
  uses, attachments resolved) and that HTML is cleaned by the sanitizer below; the cell's source
  becomes the cleaned HTML on one line inside ``<div class="tex2jax_ignore">`` (one HTML block, so
  the template's second markdown pass leaves it as it is, and MathJax does not read the student's
  TeX: ``\\href{javascript:...}`` would be a link). A cell whose source nbgrader's checksum (put
  back from the gradebook) vouches for is the course's own text and stays as released;
- every **code cell's outputs** keep only inert, well-typed data: ``text/plain`` (a string),
  PNG/JPEG/GIF images whose data is base64, ``text/html`` cleaned by the sanitizer, and the answer
  record of :mod:`decodelab.classroom.student` (never rendered); SVG, JavaScript, markdown, LaTeX,
  widget views and anything nested where a string belongs are dropped. Output **metadata** keeps
  only a numeric ``width`` / ``height`` per image type; streams and errors keep their text as text;
- **cell metadata** keeps only nbgrader's, and only with plain values (the template writes the
  ``grade_id`` into attributes); **notebook metadata** keeps the kernel's name and language;
  attachments are dropped once resolved.

The sanitizer is nh3 (Python binding of the Rust crate ammonia), not nbconvert's
``SanitizeHTML`` preprocessor: ``SanitizeHTML`` is built on bleach, which its maintainers
deprecated in January 2023, while nh3/ammonia are maintained and parse with html5ever (the HTML
standard's algorithm, as the browser does). ammonia decodes character references before it checks
a URL's scheme, so ``java&#115;cript:`` and ``&#106;avascript:`` are the ``javascript:`` they
are. On top of its defaults: no link to follow (a markdown link is shown as its text and its
target, ``e (javascript:alert(5))``; an ``<a>`` keeps only an in-page ``#`` anchor): even an
``https://`` link to the hub's own address opens a page there in the lecturer's tab (a student's
server's files; a student's files in formgrader are served sandboxed, :mod:`.exchange`); images
only as ``data:image/png|jpeg|gif`` (pasted attachments; no request leaves the lecturer's page);
``width`` / ``height`` only as numbers.

The scores do not depend on any of this (:mod:`.review` reads the answer records).
"""

from __future__ import annotations

import html
import re

import nh3
from nbformat import from_dict
from nbgrader.preprocessors import NbGraderPreprocessor
from nbgrader.utils import compute_checksum

from .student import ANSWER_MIME

__all__ = ["NeutralizeMarkup", "SAFE_MIMES", "clean_html", "clean_output", "neutral_markdown"]

#: output data kept in the autograded copy (``text/html`` only after :func:`clean_html`)
SAFE_MIMES = frozenset({"text/plain", "text/html", "image/png", "image/jpeg", "image/gif", ANSWER_MIME})
IMAGE_MIMES = ("image/png", "image/jpeg", "image/gif")

_BASE64 = re.compile(r"[A-Za-z0-9+/=\s]*")
_DATA_IMAGE = re.compile(r"data:image/(?:png|jpeg|gif);base64,[A-Za-z0-9+/=]+", re.IGNORECASE)
_NUMBER = re.compile(r"\d{1,5}(?:\.\d{1,3})?")
_PLAIN = re.compile(r"[\w.\-]*")  # a grade_id, checksum or cell type: no quote, space or bracket
#: the wrapper of cleaned HTML: MathJax (loaded by the formgrade page) skips this class
WRAP = '<div class="tex2jax_ignore">{}</div>'


def _size(value):
    """``value`` as a number of pixels (0 to 99999), or None when it is anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)) and 0 <= value < 100000:
        return value
    if isinstance(value, str) and _NUMBER.fullmatch(value.strip()):
        number = float(value)
        return int(number) if number.is_integer() else number
    return None


def _attribute(tag: str, name: str, value: str):
    """nh3's attribute filter: sees each attribute after character references are decoded and
    after ammonia's own URL-scheme check; returns the value to keep or None to drop it."""
    if name == "href":  # an in-page anchor only (markdown links are rendered as text)
        return value if value.strip().startswith("#") else None
    if name == "src":
        return value if tag == "img" and _DATA_IMAGE.fullmatch(value.strip()) else None
    if name in ("width", "height"):
        size = _size(value)
        return None if size is None else str(size)
    if name == "cite":  # a URL attribute of <q>/<blockquote>/<del>/<ins>: nothing to follow
        return None
    return value


def clean_html(html: str) -> str:
    """``html`` (a fragment) with nothing that runs script or loads anything: nh3 with the rules of
    the module docstring, on one line (newlines as ``&#10;``), inside ``<div class="tex2jax_ignore">``."""
    clean = nh3.clean(html, url_schemes={"http", "https", "mailto", "data"}, attribute_filter=_attribute,
                      strip_comments=True)
    return WRAP.format(clean.replace("\r", "&#13;").replace("\n", "&#10;"))


def _markdown_html(source: str, attachments: dict | None) -> str:
    """``source`` rendered as formgrader renders a markdown cell (nbconvert's renderer, attachments
    resolved); text with every ``<`` and ``&`` escaped when it cannot be rendered (a missing attachment)."""
    from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

    class Renderer(IPythonRenderer):
        def link(self, text, url, title=None):  # no link to follow: the text and its target as text
            return f"{text} (<code>{html.escape(url)}</code>)"

    try:
        renderer = Renderer(escape=False, attachments=attachments or {}, exclude_anchor_links=True)
        return MarkdownWithMath(renderer=renderer).render(source)
    except Exception:  # noqa: BLE001 - any renderer failure: show the characters
        return "<pre>" + source.replace("&", "&amp;").replace("<", "&lt;") + "</pre>"


def neutral_markdown(source: str, attachments: dict | None = None) -> str:
    """A markdown cell's ``source`` as cleaned HTML that renders the same through markdown again:
    ``<div class="tex2jax_ignore">...</div>`` on one line (see :func:`clean_html`)."""
    images = {name: {k: v for k, v in (data or {}).items() if k in IMAGE_MIMES and isinstance(v, str)}
              for name, data in (attachments or {}).items() if isinstance(data, dict)}
    return clean_html(_markdown_html(source, images))


def _text(value) -> str | None:
    """A text field of an output (a string or a list of strings), or None when it is anything else."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "".join(value)
    return None


def clean_output(out) -> dict | None:
    """One output of a code cell with only inert, well-typed content; None to drop it."""
    kind = out.get("output_type")
    if kind == "stream":
        text = _text(out.get("text"))
        return None if text is None else {"output_type": "stream", "name": "stderr" if out.get("name") == "stderr"
                                          else "stdout", "text": text}
    if kind == "error":
        trace = out.get("traceback")
        return {"output_type": "error", "ename": str(out.get("ename", "")), "evalue": str(out.get("evalue", "")),
                "traceback": [str(t) for t in trace] if isinstance(trace, list) else []}
    if kind not in ("display_data", "execute_result"):
        return None
    data, meta = {}, {}
    raw = out.get("data") if isinstance(out.get("data"), dict) else {}
    for mime, value in raw.items():
        if mime in IMAGE_MIMES:
            text = _text(value)
            if text is not None and _BASE64.fullmatch(text):
                data[mime] = text
                sizes = out.get("metadata", {}).get(mime) if isinstance(out.get("metadata"), dict) else None
                kept = {k: _size(sizes.get(k)) for k in ("width", "height")} if isinstance(sizes, dict) else {}
                if any(v is not None for v in kept.values()):
                    meta[mime] = {k: v for k, v in kept.items() if v is not None}
        elif mime == "text/plain":
            text = _text(value)
            if text is not None:
                data[mime] = text
        elif mime == "text/html":
            text = _text(value)
            if text is not None:
                data[mime] = clean_html(text)
        elif mime == ANSWER_MIME:
            data[mime] = value  # read by .review, never rendered (not in nbconvert's display priority)
    if not data:
        return None
    cleaned = {"output_type": kind, "data": data, "metadata": meta}
    if kind == "execute_result":
        count = out.get("execution_count")
        cleaned["execution_count"] = count if isinstance(count, int) and not isinstance(count, bool) else None
    return cleaned


def _nbgrader_meta(meta):
    """nbgrader's cell metadata when every value is plain (bool, number, None, or a word); else None."""
    if not isinstance(meta, dict):
        return None
    for value in meta.values():
        if isinstance(value, str):
            if not _PLAIN.fullmatch(value):
                return None
        elif value is not None and not isinstance(value, (bool, int, float)):
            return None
    return dict(meta)


def _vouched(cell) -> bool:
    """Whether ``cell``'s source is the course's own: nbgrader's checksum, which ``OverwriteCells``
    puts back from the gradebook for every cell the release made (it drops a ``grade_id`` the
    gradebook does not know), matches the cell as it is. A released cell left unchanged (a locked
    prompt, a written answer never written: nbgrader scores that 0, "No response") keeps its
    markdown; any cell a student changed or added is cleaned."""
    meta = cell.get("metadata", {}).get("nbgrader") or {}
    if not meta.get("checksum") or not meta.get("grade_id"):
        return False
    try:
        return compute_checksum(cell) == meta["checksum"]
    except (KeyError, TypeError, ValueError):
        return False


class NeutralizeMarkup(NbGraderPreprocessor):
    """Student markup cleaned by nh3, outputs and metadata reduced to inert data (module docstring)."""

    def preprocess(self, nb, resources):
        kernel = nb.metadata.get("kernelspec") if isinstance(nb.metadata.get("kernelspec"), dict) else {}
        keep = {}
        if _PLAIN.fullmatch(str(kernel.get("name", ""))) and kernel.get("name"):
            keep["kernelspec"] = {"name": kernel["name"], "display_name": "Python 3 (ipykernel)", "language": "python"}
        keep["language_info"] = {"name": "python"}
        nb.metadata = from_dict(keep)
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, index):
        grader = _nbgrader_meta(cell.get("metadata", {}).get("nbgrader"))
        cell["metadata"] = from_dict({"nbgrader": grader} if grader is not None else {})
        if cell.cell_type == "markdown" and _vouched(cell):  # the course's own text, as released
            if cell.get("attachments"):  # not covered by the checksum: only images stay
                cell["attachments"] = from_dict({
                    name: {k: v for k, v in data.items() if k in IMAGE_MIMES and isinstance(v, str) and _BASE64.fullmatch(v)}
                    for name, data in cell["attachments"].items() if isinstance(data, dict)})
            return cell, resources
        if cell.cell_type == "markdown":
            cell.source = neutral_markdown(cell.source, cell.get("attachments"))
        elif cell.cell_type == "code":
            cell.outputs = [from_dict(o) for o in (clean_output(out) for out in cell.get("outputs", [])) if o is not None]
            if not (isinstance(cell.get("execution_count"), int) and not isinstance(cell.get("execution_count"), bool)):
                cell["execution_count"] = None
        elif cell.cell_type == "raw":  # the template writes a raw cell into the page as it is
            cell.source = clean_html("<pre>" + cell.source.replace("&", "&amp;").replace("<", "&lt;") + "</pre>")
        cell.pop("attachments", None)  # resolved into the cleaned HTML (only PNG/JPEG/GIF)
        return cell, resources

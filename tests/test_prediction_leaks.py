"""No prediction is answered on screen before the student commits it (issue 32, deliver 1; issue 43,
deliver 3: the run-based half).

A prediction (``ex.predict(ID)``, ``quizzes/exercises/NN.yaml``) is the course's signature exercise:
its measured value stays hidden (``ex.hold`` / ``ex.reveal``) until the student commits a guess, and its
explanation (``why``) is part of what is revealed. So nothing a student can read before pressing
'예측 확정' may state or imply the answer. What a student can read then, for each prediction:

- every markdown cell and every code cell's source from the top of the notebook down to the cell
  with ``ex.reveal(ID, ...)``, and what the exercise widgets of those cells show: every prediction's
  and written exercise's prompt (the prediction's own included), and the revealed ``why`` of each
  prediction above it;
- the markdown cells right under the reveal cell, down to the next code cell (they stand on the
  same screen as the hidden result: "= 400초입니다" under it gives the answer away). A folded
  ``<details>`` block counts as visible: opening it is as easy as reading it;
- what those code cells print when the notebook runs (:func:`executed`: each notebook is executed
  once per test session with nbclient, its widgets' state kept): stream, ``text/plain``,
  ``text/html`` and ``text/markdown`` outputs, and every widget's text (labels, values, defaults,
  options), except what is hidden at that moment: an output held by ``ex.hold`` for this prediction,
  and anything whose layout says ``display: none``. Output held for another prediction counts as
  visible (the student commits that one first); the prediction's own question widget does not
  count (its options are the question);
- what the cells after the reveal that use its held result print or draw (:func:`reshown_after_reveal`:
  down to the next prediction, a code cell that reads a name a held cell bound, ``res`` of
  ``res = measure(...)``): in a Run All they run before the student commits, so their output is on
  screen then unless it is held too (``ex.hold`` at their top). A figure in such a cell right under
  the reveal (no markdown between) counts as a leak by itself: its text cannot be read, and it
  redraws the held result on the same screen;
- the earlier part of the same lesson (notebook 04 for 04b: its sources and what it printed), unless
  the prediction is labelled as reasoning from what that part taught (``reasoned``: its prompt says
  so, and the earlier part is the material to reason with);
- ``GLOSSARY.md``: it defines terms; it never answers a prediction.

The answer of each prediction is written down in :data:`ANSWERS` (the definitions hold no accepted
value: a measured value is whatever the student's machine gives). A leak is any of:

- a number inside an accepted range followed by one of its units ("400초", "~22 ms", "8 위치"), or, for
  answers distinctive enough (``bare``), the number alone ("= 400");
- a premise one division away from the answer (``premises``: "KV 8.05 GB" when the question is
  8.05 GB ÷ 450 GB/s);
- a key phrase that states the result (regular expressions, matched on whitespace-folded text), or
  a printed pattern that shows it or a value one division away (``shown``: a rounds table before
  "which is larger, α or the rate?"; "호출 한 번 4.00 초" before "how many calls fit in 600 s?");
- for a choice with a fixed key, the keyed option's text;
- a sentence of the prediction's ``why`` (14 characters or more in a row, whitespace removed);
- for a choice, a reveal that passes the key as a literal (``ex.reveal(ID, "b")``).

Every code cell between ``ex.predict(ID)`` and ``ex.reveal(ID, ...)`` must also start with ``ex.hold``
(:func:`unheld_cells`, without running anything). A new prediction needs an entry in
:data:`ANSWERS` (the test says so); the run-based test covers it without further code.
"""

from __future__ import annotations

import ast
import html
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from decodelab.assess import exercises as ex

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))
WHY_RUN = 14
"""A run of this many characters (whitespace removed) of a prediction's ``why`` may not be visible."""


@dataclass(frozen=True)
class Num:
    """Numbers in ``[lo, hi]`` followed by one of ``units`` are the answer (``bare``: also the number alone)."""

    lo: float
    hi: float
    units: tuple[str, ...]
    bare: bool = False


@dataclass(frozen=True)
class Answer:
    numbers: tuple[Num, ...] = ()
    phrases: tuple[str, ...] = ()  # regular expressions on whitespace-folded text
    key: str | None = None  # a choice's fixed key (its option text may not be visible)
    note: str = ""
    premises: tuple[Num, ...] = ()  # values one division away from the answer (leaks like ``numbers``)
    shown: tuple[str, ...] = ()  # regular expressions on whitespace-folded text that show the result
    reasoned: bool = False  # labelled as reasoning from what the lesson taught: its earlier part is the material


REASONED_LABEL = r"\((정의로 따져 보는|모형의 가정으로 따져 보는|복습: )"
"""How the prompt of a ``reasoned`` prediction starts: it says that the answer follows from what the
lesson gave (definitions, a model's assumption, an earlier notebook), not from a measurement."""

MEASURED = "measured on the student's machine: no fixed value, only the phrases that state the result"

ANSWERS: dict[str, Answer] = {
    "01-predict-kv-numbers": Answer(numbers=(Num(640, 640, ("개",), bare=True),), phrases=(r"2×5×64", r"2\*5\*64")),
    "01-predict-cache-length": Answer(numbers=(Num(8, 8, ("위치", "개 위치")),), phrases=(r"2\+6=8",)),
    "01-predict-greedy-seeds": Answer(key="a", phrases=(r"seed와상관없이", r"seed가쓰이지않", r"seed를쓰지않",
                                                        r"답이(늘|언제나)?하나", r"세번모두같")),
    "01-predict-kv-step": Answer(phrases=(r"배수가생각보다작",), note=MEASURED),
    "02-predict-tpot-70b": Answer(numbers=(Num(21, 23, ("ms", "밀리초")), Num(43, 48, ("tok/s", "토큰", "tokens/s"))),
                                  phrases=(r"메모리에서읽는데22",),
                                  premises=(Num(172, 189, ("초", "s")),)),  # 8,192 tokens decoded one by one: 8,192 x the step
    "02-predict-batch-throughput": Answer(phrases=(r"16배에는?못미",), note=MEASURED,
                                          shown=(r"B=16:요청하나의TPOT\d",)),  # 16 ÷ this = the throughput ratio
    "02-predict-batch-tpot": Answer(phrases=(r"TPOT[는가은이]?줄지않", r"TPOT[는가은이]?(오히려|같거나)?늘",
                                             r"TPOT[는가은이]?길어", r"배치16의TPOT는배치1의"),
                                    shown=(r"B=16:처리량\d",),  # 16 ÷ the throughput ratio = the TPOT ratio
                                    note="measured on this machine (the Llama-3-8B table's flat step time on an H100 is the "
                                         "premise the question sets against it): no fixed key; the throughput result, one "
                                         "division away, is held until this one is committed (ex.hold(..., until=))"),
    "02-predict-pass-k8": Answer(phrases=(r"(8개|k=8).{0,30}(거의그대로|거의같|거의늘지않)", r"검증이?거의공짜"), note=MEASURED),
    "03-predict-loop-50": Answer(numbers=(Num(380, 420, ("초", "s")), Num(380, 420, (), bare=True))),
    "03-predict-speedup-20x": Answer(numbers=(Num(3.0, 4.0, ("배", "x")), Num(110, 120, ("초", "s"))),
                                     phrases=(r"4배가까이",)),
    "03-predict-calls-in-10min": Answer(numbers=(Num(140, 160, ("번", "회")),),
                                        phrases=(r"호출수가6배",),
                                        # 600 s ÷ the time of one call ("호출 한 번 4.00 초")
                                        shown=(r"호출(한번|하나|당|마다)[^\d]{0,12}(3\.9\d*|4(\.0\d*)?)초",)),
    "04-predict-alpha-vs-rate": Answer(key="a", reasoned=True, phrases=(r"수락률[은이]?α보다작", r"α[가는]?수락률보다크"),
                                       # a rounds table (each round's accepted count out of γ), or the
                                       # accepted and proposed drafts printed together ("num_draft_tokens = 37")
                                       shown=(r"라운드토큰수락", r"num_draft_tokens=\d+")),
    "04-predict-length-gamma6": Answer(phrases=(r"γ\+1보다훨씬천천히",), note=MEASURED),
    "04-predict-speedup-gamma4": Answer(phrases=(r"속도향상은토큰수만으로정해지지않",), note=MEASURED),
    "04-predict-eagle-tree": Answer(phrases=(r"트리가(10%넘게|30%넘게)?(더)?빨[랐라]",),
                                    note="measured tree ÷ chain, within 10% counts as the same: no fixed key"),
    "05-predict-lpu-count": Answer(numbers=(Num(141, 143, ("개", "장")), Num(141, 143, (), bare=True))),
    "05-predict-kv-transfer-8k": Answer(numbers=(Num(17, 19, ("ms", "밀리초")),),
                                        premises=(Num(7.95, 8.15, ("GB",)),)),  # three requests' KV, then ÷ 450 GB/s
    "05-predict-disagg-ttft": Answer(key="c", reasoned=True, phrases=(r"TTFT[가는]?프리필\+KV전송", r"TTFT=프리필\+KV전송",
                                                       r"전송시간만큼(TTFT가)?늘")),
    "07-predict-server-tpot": Answer(numbers=(Num(0.25, 1.9, ("배",)),), phrases=(r"0\.[37][~∼–-]1\.9",),
                                     note="the measured ratio: 0.3-1.9x in the lecturer's runs (lecturer/07.md)"),
    "07-predict-concurrency": Answer(key="b", reasoned=True, phrases=(r"TPOT[,·]?(TTFT\))?도늘", r"TPOT도늘")),
}

# A unit word only counts as that unit when it does not start a longer word ("배치", "초안", "번째").
_NOT_UNIT_TAIL = {"배": "치경열포분터정송제", "초": "안기과당", "번": "째호역", "개": "념요발선", "장": "치점면"}
_NUMBER = re.compile(r"(?<![\d.,\w])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?")


def _fold(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _unit_after(text: str, end: int, units: tuple[str, ...]) -> bool:
    rest = text[end:end + 20].lstrip()
    for u in units:
        if rest.startswith(u):
            tail = rest[len(u):len(u) + 1]
            if tail and (tail in _NOT_UNIT_TAIL.get(u, "") or (u.isascii() and tail.isascii() and tail.isalnum())):
                continue
            return True
    return False


def _bare_after(text: str, end: int) -> bool:
    """A number stands alone: not followed by a decimal part, a letter word, or a unit."""
    rest = text[end:end + 3]
    if rest[:1].isascii() and rest[:1].isalnum():
        return False
    stripped = rest.lstrip()
    if stripped[:1].isalpha() and stripped[:1].isascii():
        return False  # "400 Gb/s"
    if rest[:1] and not rest[:1].isascii() and rest[:1].isalpha():
        return rest[:1] in "이가을를은는의에와과도로"  # "400이", "400을"; "400초" counts only through its unit
    return True


def number_leaks(text: str, num: Num) -> list[str]:
    """The places in ``text`` that write a value of ``num``'s range (with a unit, or bare)."""
    found = []
    for m in _NUMBER.finditer(text):
        value = float((m.group(1) + (m.group(2) or "")).replace(",", ""))
        if not num.lo <= value <= num.hi:
            continue
        if (num.units and _unit_after(text, m.end(), num.units)) or (num.bare and _bare_after(text, m.end())):
            found.append(text[max(0, m.start() - 30):m.end() + 12].replace("\n", " "))
    return found


# --------------------------------------------------------------------------------------------
# What a student sees before a prediction's reveal
# --------------------------------------------------------------------------------------------


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


_CALL = re.compile(r"\bex\.(predict|reveal)\(\s*[\"']([0-9]{2}-[a-z0-9-]+)[\"']")


@dataclass
class Visible:
    """The text a student can read before committing prediction ``pid`` of ``notebook``."""

    notebook: str
    pid: str
    cells: list[tuple[int, str, str]] = field(default_factory=list)  # (cell index, kind, text)
    reveal_source: str = ""
    after: list[int] = field(default_factory=list)  # code cells after the reveal that use its held result
    under: list[int] = field(default_factory=list)  # those of them right under the reveal (no markdown between)


def _names(source: str) -> tuple[set[str], set[str], set[str]]:
    """(names a cell binds by assignment, every name it binds (loop and comprehension variables
    too), names it reads) from its Python source (IPython magics and shell lines left out)."""
    code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set(), set(), set()
    bound, loops, read = set(), set(), set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.comprehension)):
            loops |= {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            targets = [node.optional_vars]
        for t in targets:
            bound |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            read.add(node.id)
    return bound, bound | loops, read


def reshown_after_reveal(cells: list[dict], predict_at: int, reveal_at: int) -> tuple[list[int], list[int]]:
    """The code cells after the reveal (down to the next ``ex.predict``) that read a name the cells
    from the prediction to the reveal bound (the held result: ``res``, ``rows``), and do not bind it
    themselves: in a Run All they run before the commit and show that result again; and those of
    them right under the reveal cell (no markdown cell between: the same screen as the hidden value)."""
    held: set[str] = set()
    for j in range(predict_at + 1, reveal_at + 1):
        if cells[j]["cell_type"] == "code":
            held |= _names(_source(cells[j]))[0]
    out, under, adjacent = [], [], True
    for j in range(reveal_at + 1, len(cells)):
        if cells[j]["cell_type"] != "code":
            adjacent = False
            continue
        src = _source(cells[j])
        if re.search(r"\bex\.predict\(", src):
            break
        _, bound, read = _names(src)
        if (read - bound) & held:
            out.append(j)
            if adjacent:
                under.append(j)
    return out, under


_WIDGET = re.compile(r"\bex\.(predict|reveal|written)\(\s*[\"']([0-9]{2}[a-z]?-[a-z0-9-]+)[\"']")


def _widget_texts(source: str, *, before_reveal: bool) -> list[str]:
    """What the exercise widgets of a code cell show a student: each prediction's and written
    exercise's prompt; with ``before_reveal`` (a cell above the prediction being checked) also the
    ``why`` of each prediction it reveals (opened once that earlier prediction was committed)."""
    every = ex.load_exercises()
    out = []
    for kind, eid in _WIDGET.findall(source):
        item = every.get(eid)
        if item is None:
            continue
        if kind in ("predict", "written"):
            out.append(item.prompt)
        elif before_reveal and isinstance(item, ex.Prediction):
            out.append(item.why)
    return out


def visible_before_reveal(path: Path) -> list[Visible]:
    """One :class:`Visible` per ``ex.predict`` of the notebook at ``path``.

    Raises:
        AssertionError: a prediction without a later ``ex.reveal`` of the same id.
    """
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    out = []
    for i, cell in enumerate(cells):
        if cell["cell_type"] != "code":
            continue
        for kind, pid in _CALL.findall(_source(cell)):
            if kind != "predict":
                continue
            reveals = [j for j in range(i, len(cells)) if cells[j]["cell_type"] == "code"
                       and (("reveal", pid) in _CALL.findall(_source(cells[j])))]
            assert reveals, f"{path.name}: ex.predict({pid!r}) in cell {i} has no ex.reveal({pid!r}) below it"
            r = reveals[0]
            end = r + 1
            while end < len(cells) and cells[end]["cell_type"] != "code":
                end += 1
            after, under = reshown_after_reveal(cells, i, r)
            vis = Visible(path.name, pid, reveal_source=_source(cells[r]), after=after, under=under)
            for j in range(end):
                if cells[j]["cell_type"] in ("markdown", "code"):
                    vis.cells.append((j, cells[j]["cell_type"], _source(cells[j])))
                if cells[j]["cell_type"] == "code":  # what the exercise widgets of this cell show
                    vis.cells += [(j, "widget", text) for text in _widget_texts(_source(cells[j]), before_reveal=j < i)]
            out.append(vis)
    return out


def leaks(vis: Visible, answer: Answer, pred: ex.Prediction) -> list[str]:
    """Every place where ``vis`` states the answer of ``pred`` (empty: no leak)."""
    found = []
    why = _fold(pred.why)
    whys = {why[k:k + WHY_RUN] for k in range(0, max(1, len(why) - WHY_RUN + 1))} if len(why) >= WHY_RUN else set()
    keyed = None
    if answer.key is not None and pred.choices:
        keyed = _fold(next(c.text for c in pred.choices if c.id == answer.key))
    for j, kind, text in vis.cells:
        if re.search(r"\bex\.predict\(", text) and kind == "code" and not re.search(r"\bex\.(hold|reveal)\(", text):
            text = re.sub(r"ex\.predict\([^)]*\)", "", text)  # the widget call itself says nothing
        where = f"{vis.notebook} cell {j} ({kind})"
        for num in answer.numbers:
            found += [f"{where}: number {snip!r}" for snip in number_leaks(text, num)]
        for num in answer.premises:
            found += [f"{where}: a value one division away from the answer {snip!r}" for snip in number_leaks(text, num)]
        folded = _fold(text)
        for pat in answer.phrases + answer.shown:
            for m in re.finditer(pat, folded):
                found.append(f"{where}: phrase {folded[max(0, m.start() - 25):m.end() + 15]!r}")
        if keyed and len(keyed) >= 6 and keyed in folded:
            found.append(f"{where}: the keyed option's text {keyed!r}")
        hits = sorted({w for w in whys if w in folded}) if kind != "glossary" else []  # it glosses the same terms
        if hits:
            found.append(f"{where}: a sentence of the revealed explanation (why): {hits[0]!r}")
        if kind == UNDER and text == FIGURE:
            found.append(f"{where}: a figure of the held result, on screen before the commit (start the cell with "
                         f"ex.hold({vis.pid!r}))")
    if pred.kind == "choice":
        lit = re.search(rf"ex\.reveal\(\s*[\"']{re.escape(vis.pid)}[\"']\s*,\s*[\"']([a-h])[\"']\s*\)", vis.reveal_source)
        if lit:
            found.append(f"{vis.notebook}: ex.reveal({vis.pid!r}, {lit.group(1)!r}) shows the key in its source")
    return found


# --------------------------------------------------------------------------------------------
# What the notebook prints when it runs
# --------------------------------------------------------------------------------------------

_EXECUTED: dict[Path, dict] = {}
FIGURE = "\x00figure"
"""What :meth:`Screen.output_texts` gives for an image output (a figure: no text to read)."""
AFTER = "output after the reveal"
"""The kind of what a cell of :attr:`Visible.after` shows (its text is checked like any output)."""
UNDER = "output right under the reveal"
"""The kind of what a cell of :attr:`Visible.under` shows: a figure there redraws the hidden value
on the same screen, so it is a leak by itself (a figure further down, after the lesson's text
went on, is not read: its text cannot be checked)."""
GLOSSARY = ROOT / "GLOSSARY.md"
_WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
_WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


REUSE_ENV = "DECODELAB_EXECUTED_NOTEBOOKS"
"""A folder of notebooks already executed with their widgets' state (nbclient, or a JupyterLab run
saved with its widget state): one whose cells' sources are those of this checkout's notebook is
read instead of running the notebook again, and a notebook this session runs is saved there."""


def executed(path: Path) -> dict:
    """The notebook at ``path`` (a JSON dict) executed top to bottom, once per test session
    (or read from :data:`REUSE_ENV`): nbclient with this interpreter's kernel and this checkout's ``decodelab`` first on its path,
    matplotlib's inline backend as a student's kernel has it (figures are outputs),
    the widgets' state kept in its metadata (what the front end would draw).

    Raises:
        nbclient.exceptions.CellExecutionError: a cell failed (the notebook must run cleanly).
    """
    path = Path(path)
    if path not in _EXECUTED and os.environ.get(REUSE_ENV):
        saved = Path(os.environ[REUSE_ENV]) / path.name
        if saved.is_file():
            nb = json.loads(saved.read_text(encoding="utf-8"))
            now = json.loads(path.read_text(encoding="utf-8"))
            if [_source(c) for c in nb["cells"]] == [_source(c) for c in now["cells"]]:
                _EXECUTED[path] = nb
    if path not in _EXECUTED:
        import nbformat
        from nbclient import NotebookClient

        nb = nbformat.read(path, as_version=4)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p))
        env.pop("MPLBACKEND", None)  # the student's kernel draws figures (inline backend): the tests' Agg would hide them
        client = NotebookClient(nb, timeout=300, kernel_name="python3", store_widget_state=True,
                                resources={"metadata": {"path": str(path.parent)}})
        client.execute(env=env)
        _EXECUTED[path] = json.loads(nbformat.writes(nb))
        if os.environ.get(REUSE_ENV):  # kept for the next session (read back while the sources stay the same)
            Path(os.environ[REUSE_ENV]).mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, Path(os.environ[REUSE_ENV]) / path.name)
    return _EXECUTED[path]


def _strip_html(text: str) -> str:
    text = re.sub(r"(?is)<(style|script)[^>]*>.*?</\1>", " ", text)
    return html.unescape(re.sub(r"<[^>]+>", " ", text))


def _joined(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


class Screen:
    """What the outputs of an executed notebook show (``nb``: :func:`executed`'s dict) while the
    prediction ``pid`` is still uncommitted."""

    def __init__(self, nb: dict, pid: str | None):
        self.state = nb.get("metadata", {}).get("widgets", {}).get(_WIDGET_STATE, {}).get("state", {})
        self.pid = pid

    def output_texts(self, output: dict) -> list[str]:
        kind = output.get("output_type")
        if kind == "stream":
            return [_joined(output.get("text", ""))]
        if kind == "error":
            return [f"{output.get('ename', '')}: {output.get('evalue', '')}"]
        data = output.get("data", {})
        if _WIDGET_VIEW in data:
            return self.widget_texts(data[_WIDGET_VIEW].get("model_id", ""))
        if any(k.startswith("image/") for k in data):
            return [FIGURE]
        if "text/html" in data:
            return [_strip_html(_joined(data["text/html"]))]
        if "text/markdown" in data:
            return [_joined(data["text/markdown"])]
        if "text/plain" in data:
            return [_joined(data["text/plain"])]
        return []

    def _hidden(self, st: dict) -> bool:
        layout = self.state.get(str(st.get("layout", "")).removeprefix("IPY_MODEL_"), {}).get("state", {})
        return layout.get("display") == "none"

    def widget_texts(self, model_id: str, *, held_for: tuple[str, ...] = ()) -> list[str]:
        """The text of the widget ``model_id`` and its children: descriptions, string values
        (HTML and labels with their tags removed), number values with their description (a
        slider's default), placeholders, tooltips and options, and the outputs of ``Output``
        widgets. Skipped: the prediction's own question, the output held for it, and what is
        not displayed (except the held output of another prediction: it opens when the student
        commits that one, unless it is held until this one is committed too: ``ex.hold(..., until=)``).
        ``held_for``: the predictions whose commits open the result widget this one is in."""
        model = self.state.get(model_id)
        if model is None:
            return []
        st = model.get("state", {})
        classes = st.get("_dom_classes", []) or []
        if self.pid is not None and f"decodelab-exercise-{self.pid}" in classes:
            return []
        opened_by = tuple(c.split("-", 2)[2] for c in classes
                          if c.startswith(("decodelab-result-", "decodelab-until-")))
        if self._hidden(st) and not (held_for and self.pid not in held_for):
            return []
        out = []
        desc = st.get("description") or ""
        value = st.get("value")
        if isinstance(value, str):
            out.append(f"{desc} {_strip_html(value)}".strip())
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out.append(f"{desc} {value}")
        elif desc:
            out.append(desc)
        for key in ("placeholder", "tooltip", "readout_format"):
            if isinstance(st.get(key), str) and st[key].strip() and key != "readout_format":
                out.append(st[key])
        if isinstance(st.get("_options_labels"), list):
            out.append(" / ".join(map(str, st["_options_labels"])))
        for o in st.get("outputs", []) or []:
            out += self.output_texts(o)
        for child in st.get("children", []) or []:
            out += self.widget_texts(str(child).removeprefix("IPY_MODEL_"), held_for=opened_by or held_for)
        return out

    def cell_texts(self, cell: dict) -> list[str]:
        return [t for o in cell.get("outputs", []) for t in self.output_texts(o) if t.strip()]


def _lesson(path: Path) -> str:
    return re.match(r"\d+", path.name).group(0)  # "04b_speculative_speedup.ipynb" -> "04"


def printed_before_reveal(path: Path, vis: Visible, *, earlier_part: bool = True) -> list[tuple[int, str, str]]:
    """What the executed notebook at ``path`` shows above ``vis``'s reveal (cells ``vis`` covers) and in
    the cells after it that show its held result again (``vis.after``, kind :data:`AFTER`),
    what the earlier part of the same lesson shows (notebook 04 for 04b: sources and outputs), and
    ``GLOSSARY.md``, as (cell index, kind, text); kinds: ``output``, ``NN_name source`` / ``NN_name
    output`` (the earlier part; left out with ``earlier_part=False``: a prediction labelled as
    reasoning from what that part taught), ``glossary``."""
    nb = executed(path)
    screen = Screen(nb, vis.pid)
    cells = nb["cells"]
    out = []
    for j in sorted({j for j, _, _ in vis.cells}):
        if cells[j]["cell_type"] == "code":
            out += [(j, "output", t) for t in screen.cell_texts(cells[j])]
    for j in vis.after:
        out += [(j, UNDER if j in vis.under else AFTER, t) for t in screen.cell_texts(cells[j])]
    for earlier in NOTEBOOKS if earlier_part else ():
        if _lesson(earlier) == _lesson(path) and earlier.name < path.name:
            enb = executed(earlier)
            every = Screen(enb, None)
            for j, cell in enumerate(enb["cells"]):
                out.append((j, f"{earlier.stem} source", _source(cell)))
                out += [(j, f"{earlier.stem} output", t) for t in every.cell_texts(cell)]
    out.append((-1, "glossary", GLOSSARY.read_text(encoding="utf-8")))
    return out


# --------------------------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------------------------

PREDICTIONS = {k: v for k, v in ex.load_exercises().items() if isinstance(v, ex.Prediction)}


def _notebook_id(path: Path) -> str:
    return path.name.split("_", 1)[0]  # "04b_speculative_speedup.ipynb" -> "04b"


def _params():
    out = []
    for path in NOTEBOOKS:
        nb = _notebook_id(path)
        out.append(pytest.param(path, id=nb))
    return out


@pytest.mark.slow  # runs each notebook once (nbclient): 30-60 s a notebook on 2 cores
@pytest.mark.notebooks
@pytest.mark.parametrize("path", _params())
def test_nothing_printed_or_shown_answers_a_prediction_before_its_reveal(path):
    """The run-based half: what the notebook prints and its widgets show (defaults included), the
    earlier part of its lesson and the glossary, checked against each prediction's answer."""
    problems = []
    for vis in visible_before_reveal(path):
        pred, answer = PREDICTIONS.get(vis.pid), ANSWERS.get(vis.pid)
        if pred is None or answer is None:
            continue  # reported by the source test
        shown = Visible(vis.notebook, vis.pid, cells=printed_before_reveal(path, vis, earlier_part=not answer.reasoned))
        problems += [f"{vis.pid}: {p}" for p in leaks(shown, answer, pred)]
    assert not problems, "the answer is on screen before the prediction is committed:\n" + "\n".join(problems)


@pytest.mark.parametrize("path", _params())
def test_no_prediction_is_answered_before_its_reveal(path):
    problems = []
    for vis in visible_before_reveal(path):
        pred = PREDICTIONS.get(vis.pid)
        if pred is None:
            problems.append(f"{path.name}: ex.predict({vis.pid!r}) is not a prediction of quizzes/exercises/")
            continue
        answer = ANSWERS.get(vis.pid)
        if answer is None:
            problems.append(f"{vis.pid}: add its answer to ANSWERS in tests/test_prediction_leaks.py "
                            "(accepted range and units, key phrases, or the choice key)")
            continue
        problems += [f"{vis.pid}: {p}" for p in leaks(vis, answer, pred)]
    assert not problems, "the answer is on screen before the prediction is committed:\n" + "\n".join(problems)


def test_every_prediction_is_asked_in_a_notebook_and_has_an_answer():
    """A prediction's id names the notebook it was written for; it may be asked in another one
    (04's predictions moved to 04b keep their ids), so the check is over the whole course."""
    asked = {vis.pid for path in NOTEBOOKS for vis in visible_before_reveal(path)}
    assert sorted(set(PREDICTIONS) - asked) == [], "predictions of quizzes/exercises/ never asked with ex.predict"
    assert sorted(set(PREDICTIONS) - set(ANSWERS)) == [], "add these predictions' answers to ANSWERS"
    assert sorted(set(ANSWERS) - set(PREDICTIONS)) == [], "ANSWERS lists predictions that no longer exist: remove them"
    for pid in sorted(set(ANSWERS) & set(PREDICTIONS)):
        key = ANSWERS[pid].key
        assert key is None or key in [c.id for c in PREDICTIONS[pid].choices or []], (pid, key)
        if ANSWERS[pid].reasoned:  # a reasoning or recall check says so where the student reads it
            assert re.match(REASONED_LABEL, PREDICTIONS[pid].prompt), (pid, PREDICTIONS[pid].prompt[:40])


# --- the checker itself: each of these must find the leak (a checker that finds nothing proves nothing)


def _fake(cells: list[tuple[str, str]], pid: str) -> Visible:
    return Visible("x.ipynb", pid, cells=[(i, k, t) for i, (k, t) in enumerate(cells)],
                   reveal_source=next((t for k, t in cells if "ex.reveal" in t), ""))


@pytest.mark.parametrize("text, hit", [
    ('print("[facts/hardware.md \'Agent loops\': 50번 × 300 토큰 + 도구 2초 → 초당 50 토큰에서 400초]")', True),
    ("손으로 하면 50 × (300 ÷ 50 + 2) = 400초입니다.", True),
    ("손으로 하면 모두 = 400 입니다.", True),
    ("399초가 나옵니다", True),
    ("호출 50번, 호출마다 출력 300 토큰, 도구 2초, 400 Gb/s 링크", False),
    ("초당 50 토큰(토큰당 20 ms)이면 작업 전체는 몇 초일까요?", False),
])
def test_the_checker_finds_a_number_written_with_or_without_its_unit(text, hit):
    found = leaks(_fake([("markdown", text)], "03-predict-loop-50"), ANSWERS["03-predict-loop-50"],
                  PREDICTIONS["03-predict-loop-50"])
    assert bool(found) is hit, found


@pytest.mark.parametrize("text, hit", [
    ("작업 전체가 빨라지는 정도는 4배 가까이입니다.", True),
    ("작업 전체는 4배 가까이 빨라집니다.", True),
    ("→ 3.5배", True),
    ("디코드는 20배 빨라졌습니다", False),
    ("배치 4개에서", False),
])
def test_the_checker_reads_times_and_not_batch(text, hit):
    found = leaks(_fake([("markdown", text)], "03-predict-speedup-20x"), ANSWERS["03-predict-speedup-20x"],
                  PREDICTIONS["03-predict-speedup-20x"])
    assert bool(found) is hit, found


def test_the_checker_finds_a_key_phrase_a_keyed_option_a_why_sentence_and_a_literal_key():
    pid = "05-predict-disagg-ttft"
    pred, answer = PREDICTIONS[pid], ANSWERS[pid]
    assert leaks(_fake([("markdown", "이 모형에서는 TTFT가 프리필 + KV 전송이라 늘어납니다.")], pid), answer, pred)
    assert leaks(_fake([("markdown", pred.why[:40])], pid), answer, pred)
    assert leaks(_fake([("code", f'ex.reveal("{pid}", "c")')], pid), answer, pred)
    assert not leaks(_fake([("markdown", "TTFT가 어떤 시간들의 합인지 적어 본 뒤 예측하세요."),
                            ("code", f'ex.reveal("{pid}", longer if d.ttft_ms > d.prefill_ms else shorter)')], pid),
                     answer, pred)
    seeds = "01-predict-greedy-seeds"
    keyed = next(c.text for c in PREDICTIONS[seeds].choices if c.id == "a")
    assert leaks(_fake([("markdown", f"정답: {keyed}")], seeds), ANSWERS[seeds], PREDICTIONS[seeds])


def test_the_region_ends_after_the_markdown_under_the_reveal(tmp_path):
    pid = "03-predict-loop-50"
    nb = {"cells": [
        {"cell_type": "markdown", "source": "몇 초일까요?"},
        {"cell_type": "code", "source": f'ex.predict("{pid}")'},
        {"cell_type": "code", "source": f'ex.hold("{pid}")\nex.reveal("{pid}", t)'},
        {"cell_type": "markdown", "source": "= 400초입니다."},
        {"cell_type": "code", "source": "x = 1"},
        {"cell_type": "markdown", "source": "앞에서 본 400초를 다시 봅니다."},
    ]}
    path = tmp_path / "03_x.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    (vis,) = visible_before_reveal(path)
    assert [j for j, kind, _ in vis.cells if kind != "widget"] == [0, 1, 2, 3]
    assert [(j, t) for j, kind, t in vis.cells if kind == "widget"] == [(1, PREDICTIONS[pid].prompt)]
    assert len(leaks(vis, ANSWERS[pid], PREDICTIONS[pid])) == 1


def test_the_widgets_prompts_and_earlier_whys_are_part_of_what_is_visible():
    loop, speed = PREDICTIONS["03-predict-loop-50"], PREDICTIONS["03-predict-speedup-20x"]
    assert _widget_texts('ex.predict("03-predict-loop-50")', before_reveal=False) == [loop.prompt]
    src = 'ex.hold("03-predict-loop-50")\nex.reveal("03-predict-loop-50", t)'
    assert _widget_texts(src, before_reveal=True) == [loop.why]
    assert _widget_texts(src, before_reveal=False) == []  # its own why opens only at its reveal
    # an earlier why that stated the next answer ("3.5배") would be caught
    vis = _fake([("widget", loop.why + " 디코드를 20배 빠르게 하면 3.5배입니다.")], "03-predict-speedup-20x")
    assert leaks(vis, ANSWERS["03-predict-speedup-20x"], speed)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_notebook_id)
def test_what_cells_print_between_a_prediction_and_its_reveal_is_held(path):
    """The printed-output half of the rule, without running the notebook: every code cell from the
    one after ``ex.predict(ID)`` down to ``ex.reveal(ID, ...)`` either starts with ``ex.hold(...)`` (its
    output stays hidden until a prediction opens it) or only asks predictions, so nothing it prints
    is on screen before the commit."""
    assert unheld_cells(path) == []


def unheld_cells(path: Path) -> list[str]:
    """The code cells between a prediction and its reveal that print on screen before the commit."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    open_cells = []
    for i, cell in enumerate(cells):
        for kind, pid in _CALL.findall(_source(cell)) if cell["cell_type"] == "code" else []:
            if kind != "predict":
                continue
            r = next(j for j in range(i, len(cells)) if ("reveal", pid) in _CALL.findall(_source(cells[j])))
            for j in range(i + 1, r + 1):
                src = _source(cells[j]).strip()
                if cells[j]["cell_type"] != "code" or src.startswith("ex.hold("):
                    continue
                if all(not line.strip() or line.strip().startswith("ex.predict(") for line in src.splitlines()):
                    continue
                open_cells.append(f"{pid}: cell {j} prints before the commit: {src[:60]!r}")
    return open_cells


def test_a_measuring_cell_without_hold_is_found(tmp_path):
    pid = "03-predict-loop-50"
    nb = {"cells": [{"cell_type": "code", "source": f'ex.predict("{pid}")'},
                    {"cell_type": "code", "source": "t = 399\nprint(t)"},
                    {"cell_type": "code", "source": f'ex.hold("{pid}")\nex.reveal("{pid}", t)'}]}
    path = tmp_path / "03_x.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    assert len(unheld_cells(path)) == 1


def _model(name: str, **state) -> dict:
    return {"model_name": name, "model_module": "@jupyter-widgets/controls", "state": state}


def test_the_screen_reads_outputs_and_widget_defaults_and_skips_what_is_hidden():
    """What :class:`Screen` counts as visible while prediction P is uncommitted: printed text, HTML
    without its tags, a slider's default, another prediction's held output (opened by that commit);
    not P's own held output, not one held until P is committed too, not P's own question, nothing
    whose layout is ``display: none``."""
    hidden, shown = {"display": "none"}, {}
    state = {
        "Lh": {"model_name": "LayoutModel", "state": hidden}, "Ls": {"model_name": "LayoutModel", "state": shown},
        "held_p": _model("OutputModel", layout="IPY_MODEL_Lh", outputs=[{"output_type": "stream", "text": "P의 값 400초"}]),
        "own": _model("VBoxModel", _dom_classes=["decodelab-result-P"], layout="IPY_MODEL_Ls",
                      children=["IPY_MODEL_notice", "IPY_MODEL_held_p"]),
        "notice": _model("HTMLModel", value="<b>🔒 결과를 숨겨 두었습니다</b>", layout="IPY_MODEL_Ls"),
        "held_q": _model("OutputModel", layout="IPY_MODEL_Lh", outputs=[{"output_type": "stream", "text": "Q의 값 7"}]),
        "other": _model("VBoxModel", _dom_classes=["decodelab-result-Q"], layout="IPY_MODEL_Ls", children=["IPY_MODEL_held_q"]),
        "held_j": _model("OutputModel", layout="IPY_MODEL_Lh", outputs=[{"output_type": "stream", "text": "함께 9"}]),
        "joint": _model("VBoxModel", _dom_classes=["decodelab-result-Q", "decodelab-until-P"], layout="IPY_MODEL_Ls",
                        children=["IPY_MODEL_held_j"]),
        "radio": _model("RadioButtonsModel", _options_labels=["a. 열쇠 보기"], layout="IPY_MODEL_Ls"),
        "ask": _model("VBoxModel", _dom_classes=["decodelab-exercise-P"], layout="IPY_MODEL_Ls", children=["IPY_MODEL_radio"]),
        "slider": _model("IntSliderModel", description="γ", value=6, layout="IPY_MODEL_Ls"),
        "folded": _model("HTMLModel", value="접힌 글", layout="IPY_MODEL_Lh"),
    }
    nb = {"metadata": {"widgets": {_WIDGET_STATE: {"state": state}}}}
    screen = Screen(nb, "P")
    assert screen.widget_texts("own") == ["🔒 결과를 숨겨 두었습니다"]
    assert screen.widget_texts("other") == ["Q의 값 7"]
    assert screen.widget_texts("joint") == []
    assert Screen(nb, "R").widget_texts("joint") == ["함께 9"]
    assert screen.widget_texts("ask") == [] and Screen(nb, "R").widget_texts("ask") == ["a. 열쇠 보기"]
    assert screen.widget_texts("slider") == ["γ 6"] and screen.widget_texts("folded") == []
    cell = {"outputs": [{"output_type": "stream", "text": ["KV ", "10.70 GB\n"]},
                        {"output_type": "display_data", "data": {"text/html": "<style>x{}</style><td>라운드</td><td>토큰</td>",
                                                                 "text/plain": "<HTML>"}},
                        {"output_type": "display_data", "data": {_WIDGET_VIEW: {"model_id": "other"}}}]}
    assert [" ".join(t.split()) for t in screen.cell_texts(cell)] == ["KV 10.70 GB", "라운드 토큰", "Q의 값 7"]


def test_the_checker_finds_a_premise_one_division_away_and_a_shown_pattern():
    kv = "05-predict-kv-transfer-8k"
    assert leaks(_fake([("output", "요청 3개 × 8k 토큰의 KV 8.05 GB")], kv), ANSWERS[kv], PREDICTIONS[kv])
    assert not leaks(_fake([("output", "8k 토큰의 KV 2.68 GB")], kv), ANSWERS[kv], PREDICTIONS[kv])
    calls = "03-predict-calls-in-10min"
    assert leaks(_fake([("output", "Rubin+LPX 주장 1 ms : 호출 한 번 4.00 초")], calls), ANSWERS[calls], PREDICTIONS[calls])
    assert not leaks(_fake([("output", "총 430.9초 = 프리필 4.1초")], calls), ANSWERS[calls], PREDICTIONS[calls])
    alpha = "04-predict-alpha-vs-rate"
    table = "라운드  토큰  수락  초안 ms  검증 ms   1  을  4/4"
    assert leaks(_fake([("output", table)], alpha), ANSWERS[alpha], PREDICTIONS[alpha])
    assert leaks(_fake([("glossary", "첫 거절 뒤의 초안은 버려지므로 수락률은 α보다 작게 나옵니다.")], alpha),
                 ANSWERS[alpha], PREDICTIONS[alpha])


def test_cells_after_the_reveal_that_show_the_held_result_are_found(tmp_path):
    """A figure of the held result under the reveal (no text to read) is a leak unless held; a
    premise printed there one multiplication away (8,192 x the step time) is found too."""
    pid = "02-predict-pass-k8"
    nb = {"cells": [
        {"cell_type": "code", "source": f'ex.predict("{pid}")'},
        {"cell_type": "code", "source": f'ex.hold("{pid}")\nres = mb.measure()\nfor d in res.dtypes:\n    x = d\nex.reveal("{pid}", "a")'},
        {"cell_type": "code", "source": "fig = mb.pass_time_figure(res)"},
        {"cell_type": "markdown", "source": "읽는 법"},
        {"cell_type": "code", "source": "print([d for d in (1, 2)])"},  # its own d (a loop variable above)
        {"cell_type": "code", "source": "%matplotlib inline\nprint(res.probe)"},  # a magic line left out
        {"cell_type": "code", "source": 'ex.predict("02-predict-batch-tpot")'},
        {"cell_type": "code", "source": "print(res)"},               # past the next prediction
        {"cell_type": "code", "source": 'ex.hold("02-predict-batch-tpot")\nex.reveal("02-predict-batch-tpot", "a")'},
    ]}
    path = tmp_path / "02_x.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    vis = next(v for v in visible_before_reveal(path) if v.pid == pid)
    assert vis.after == [2, 5] and vis.under == [2]
    figure = Visible(vis.notebook, pid, cells=[(2, UNDER, FIGURE)])
    assert leaks(figure, ANSWERS[pid], PREDICTIONS[pid])
    for kind in ("output", AFTER):  # above the reveal (held or not: the hold test), or further down
        assert not leaks(Visible(vis.notebook, pid, cells=[(2, kind, FIGURE)]), ANSWERS[pid], PREDICTIONS[pid])
    screen = Screen({"metadata": {}}, pid)
    assert screen.cell_texts({"outputs": [{"output_type": "display_data",
                                           "data": {"image/png": "iVBOR", "text/plain": "<Figure size 1045x462>"}}]}) == [FIGURE]
    tpot = "02-predict-tpot-70b"
    said = _fake([(AFTER, "같은 토큰 8,192개를 디코드로 하나씩 만들면: 약 179 초")], tpot)
    assert leaks(said, ANSWERS[tpot], PREDICTIONS[tpot])

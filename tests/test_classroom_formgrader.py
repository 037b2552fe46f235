"""The lecturer's grading page runs no student script (issue 44, item 1), in a real Chromium.

A course made by ``write_course``; exam-02 generated; two collected submissions (what ``nbgrader
collect`` leaves in ``submitted/``): alice's, untouched, and mallory's, full of the attacks: her
written answer holds ``<img onerror>``, ``[e](java&#115;cript:alert(5))``, ``[f](&#106;avascript:alert(6))``,
an inline SVG, ``data:`` links and MathJax's ``\\href``; a cell she added prints, from her kernel, an
image whose metadata ``width`` is ``"1 onload=alert(document.domain) x"`` (formgrader's template
writes it unquoted), another whose width runs a script that sets every grade of exam-02 to full
marks through formgrader's API with the lecturer's session, an SVG with a script, HTML with
``data:`` URLs, markdown with HTML in it, and a nested mime bundle. Both are autograded for real
(``decodelab classroom autograde``: the kernel in bubblewrap as the grader account). The lecturer
grades alice's written answer, then opens formgrader (nbgrader's own server extension on a Jupyter
server, token login: the lecturer's session) in headless Chromium at each submission and clicks
every link in it. No dialog may open and no grade may change; the page must show mallory's answer
(so the check is not vacuous) from the autograded copy while ``submitted/`` still holds the attacks.

formgrader runs here on this test's Python, not as the hub's service: the hub's services and the
students' servers run on a Python an unprivileged user can execute (tests/hubkit.py), on this
machine Debian's 3.11.2, where soupsieve 4.1 cannot compile the selector ``img:not([alt])`` that
nbconvert's HTML exporter applies to every page (SelectorSyntaxError: formgrader answers 500 for
every submission). The page, the template, the cookie session and the API are formgrader's own;
the server's options are the grader service's (``FORMGRADER_ARGS``).

mallory also leaves ``evil.html`` and ``evil.svg`` (a script that marks its page and sets every grade
to full marks through formgrader's API) and ``plot.png`` next to her notebook; collect and autograde
copy them along and formgrader serves them at ``/formgrader/submissions/<id>/<file>``, its own
origin. The lecturer opens them there: no script runs (CSP ``sandbox``, ``nosniff``), the PNG still
loads in the submission page.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import secrets
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest

pytest.importorskip("nbgrader")
pytest.importorskip("nh3")
from nbgrader.api import Gradebook  # noqa: E402
from nbgrader.apps import NbGraderAPI  # noqa: E402
from traitlets.config.loader import PyFileConfigLoader  # noqa: E402

import browserkit  # noqa: E402
from decodelab.classroom.assignments import write_course  # noqa: E402
from decodelab.classroom.cli import autograde_command  # noqa: E402
from decodelab.classroom.exchange import FORMGRADER_ARGS  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.classroom, pytest.mark.xdist_group("classroom_formgrader")]

ROOT = Path(__file__).resolve().parents[1]
A = "exam-02"
WRITTEN = "02-w-batching"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
#: with the lecturer's session: every grade of exam-02 to full marks through formgrader's API
GRADE_JS = ("(async()=>{const m=document.cookie.match(/_xsrf=([^;]+)/);"
            "const h={'X-XSRFToken':m?decodeURIComponent(m[1]):'','Content-Type':'application/json'};"
            "const p=location.pathname,b=p.slice(0,p.lastIndexOf('/formgrader/submissions/'))+'/formgrader/api/';"
            "const subs=await(await fetch(b+'submitted_notebooks/exam-02/exam-02')).json();"
            "for(const s of subs){const gs=await(await fetch(b+'grades?submission_id='+s.id)).json();"
            "for(const g of gs){await fetch(b+'grade/'+g.id,{method:'PUT',headers:h,"
            "body:JSON.stringify({manual_score:g.max_score,extra_credit:0})})}}"
            "window.alert('grades')})()")
EVAL = "eval(atob('" + base64.b64encode(GRADE_JS.encode()).decode() + "'))"
ANSWER = (f'배치가 커지면 <img src=x onerror="{GRADE_JS}"> 가중치를 함께 읽습니다. '
          "[e](java&#115;cript:alert(5)) [f](&#106;avascript:alert(6)) "
          '<svg onload=alert(20)><script>alert(21)</script></svg> [d](data:text/html,<script>alert(22)</script>) '
          '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgyMyk8L3NjcmlwdD4=">d2</a> '
          "$\\href{javascript:alert(24)}{수식}$")
ATTACK_CELL = f"""\
from IPython.display import publish_display_data
PNG = {PNG!r}
publish_display_data({{"image/png": PNG}}, metadata={{"image/png": {{"width": "1 onload=alert(document.domain) x"}}}})
publish_display_data({{"image/png": PNG}}, metadata={{"image/png": {{"width": "1 onload={EVAL} x"}}}})
publish_display_data({{"image/png": PNG}}, metadata={{"image/png": {{"width": 120, "height": "1 onerror=alert(30)"}}}})
publish_display_data({{"image/svg+xml": "<svg xmlns='http://www.w3.org/2000/svg' onload='alert(31)'><script>alert(32)</script></svg>"}})
publish_display_data({{"text/html": "<iframe src=\\"data:text/html,<script>alert(33)</script>\\"></iframe>"
                                    "<a href=\\"data:text/html,<script>alert(34)</script>\\">d3</a><b>표</b>"}})
publish_display_data({{"text/markdown": "<img src=x onerror=alert(35)> [m](&#106;avascript:alert(36))", "text/plain": "md"}})
publish_display_data({{"application/json": {{"text/html": "<img src=x onerror=alert(37)>"}},
                       "text/html": "<object data=\\"data:text/html,<script>alert(38)</script>\\"></object>",
                       "text/plain": "nested"}})
class Bundle:
    def _repr_mimebundle_(self, include=None, exclude=None):
        return ({{"image/png": PNG, "text/html": "<img src=x onerror=alert(39)>"}},
                {{"image/png": {{"width": "1 onload=alert(40) x"}}}})
display(Bundle())
"""
#: files mallory leaves next to her notebook, opened by the lecturer from formgrader's own address
#: (``/formgrader/submissions/<id>/<file>``): each marks the page it runs in and sets every grade of
#: exam-02 to full marks through formgrader's API with the lecturer's session
MARK = "document.documentElement.setAttribute('data-ran','1');"
FILES = {
    "evil.html": f"<!doctype html><title>evil</title><p>학생 파일</p><script>{MARK}{GRADE_JS}</script>",
    "evil.svg": ("<svg xmlns='http://www.w3.org/2000/svg' width='10' height='10'>"
                 f"<script><![CDATA[{MARK}{GRADE_JS}]]></script></svg>"),
}


def _server(course: Path, base: Path):
    """nbgrader's formgrader (its server extension) on a Jupyter server in the course folder, with the
    grader service's options (``FORMGRADER_ARGS``: decodelab's extension too), token login:
    (url, token, process, log)."""
    token = secrets.token_hex(16)
    runtime, log = base / "runtime", base / "formgrader.log"
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(runtime), "JUPYTER_CONFIG_DIR": str(base / "jconfig")}
    cmd = [sys.executable, "-m", "jupyter_server", "--no-browser", "--allow-root", "--ServerApp.ip=127.0.0.1",
           "--ServerApp.port=0", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
           f"--ServerApp.root_dir={course}", *FORMGRADER_ARGS]
    with open(log, "wb") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env, cwd=course)
    port = browserkit._bound_port(runtime, proc, time.monotonic() + 120, log)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(f"{url}/formgrader/api/status?token={token}", timeout=10) as r:
                if r.status == 200:
                    break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.terminate()
                pytest.fail("formgrader did not start:\n" + log.read_text(errors="replace")[-3000:])
            time.sleep(0.5)
    return url, token, proc, log


def _grades(course: Path) -> dict:
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        return {(s.id, g.name): (g.auto_score, g.manual_score, g.extra_credit, g.needs_manual_grade)
                for s in gb.students for sub in [gb.find_submission(A, s.id)] for nb in sub.notebooks
                for g in nb.grades}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    from test_classroom_sandbox import sandbox_or_skip

    sandbox_or_skip()
    reason = browserkit.browser_missing()
    if reason:
        browserkit._unavailable(reason)
    base = tmp_path_factory.mktemp("formgrader")
    course = base / "course"
    mp = pytest.MonkeyPatch()
    mp.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")  # nbgrader runs alembic
    mp.setenv("PYTHONPATH", f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")  # kernels import this decodelab
    mp.setenv("HOME", str(base / "home"))
    mp.setenv("DECODELAB_ANSWERS_DIR", str(base / "answers"))
    mp.setenv("NBGRADER_EXCHANGE_ROOT", str(base / "exchange"))
    mp.delenv("JUPYTERHUB_USER", raising=False)
    try:
        (base / "home").mkdir()
        write_course(course)
        api = NbGraderAPI(config=PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config())
        r = api.generate_assignment(A)
        assert r["success"], r["log"] + str(r.get("error"))
        release = nbformat.read(course / "release" / A / f"{A}.ipynb", as_version=4)
        for sid in ("alice", "mallory"):
            nb = nbformat.from_dict(json.loads(json.dumps(release)))
            if sid == "mallory":
                cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == WRITTEN)
                cell.source = ANSWER
                nb.cells.insert(2, nbformat.v4.new_code_cell(ATTACK_CELL))
                nb.cells.insert(3, nbformat.v4.new_markdown_cell(
                    "학생이 더한 칸: [g](JAVA&#x53;CRIPT:alert(41)) <iframe src=\"data:text/html,<script>alert(42)</script>\">"))
            folder = course / "submitted" / sid / A
            folder.mkdir(parents=True)
            nbformat.write(nb, folder / f"{A}.ipynb")
            if sid == "mallory":  # files next to her notebook: collect and autograde copy them along
                for name, text in FILES.items():
                    (folder / name).write_text(text, encoding="utf-8")
                (folder / "plot.png").write_bytes(base64.b64decode(PNG))
            (folder / "timestamp.txt").write_text("2026-12-07 01:00:00.000000 UTC")
        for sid in ("alice", "mallory"):
            assert autograde_command([str(course), A, f"--student={sid}"]) == 0
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
            g = gb.find_grade(WRITTEN, A, A, "alice")
            g.manual_score, g.needs_manual_grade = 1.0, False  # the lecturer's decision the attack goes after
            gb.db.commit()
            ids = {s: gb.find_submission_notebook(A, A, s).id for s in ("alice", "mallory")}
        yield {"course": course, "base": base, "ids": ids}
    finally:
        mp.undo()


def test_the_attacks_are_in_the_submission_and_the_autograded_copy_is_clean(graded):
    course = graded["course"]
    submitted = (course / "submitted" / "mallory" / A / f"{A}.ipynb").read_text(encoding="utf-8")
    assert "java&#115;cript:alert(5)" in submitted and "onerror" in submitted
    autograded = nbformat.read(course / "autograded" / "mallory" / A / f"{A}.ipynb", as_version=4)
    outputs = [o for c in autograded.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    # the kernel really printed the attacks (they reached the autograded copy, cleaned)
    sizes = [o.metadata.get("image/png") for o in outputs if "image/png" in o.get("data", {})]
    assert sizes == [None, None, {"width": 120}, None], sizes
    assert not any(k in o.get("data", {}) for o in outputs for k in ("image/svg+xml", "text/markdown", "application/json"))


@contextlib.contextmanager
def _lecturer_page(graded):
    """Formgrader on the course of ``graded`` (:func:`_server`) and, in Chromium, a page holding the
    lecturer's session (cookie); yields ``(page, url, dialogs)``, ``dialogs`` collecting the
    message of every dialog a script opened (each dismissed). Stops both."""
    from playwright.sync_api import sync_playwright

    url, token, proc, log = _server(graded["course"], graded["base"])
    dialogs: list[str] = []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=browserkit.CHROMIUM, headless=True,
                                         args=browserkit.CHROMIUM_ARGS)
            try:
                page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
                page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
                page.goto(f"{url}/formgrader?token={token}")  # the lecturer's session (cookie)
                yield page, url, dialogs
            finally:
                browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_formgrader_runs_no_student_script_and_no_grade_changes(graded):
    course = graded["course"]
    before = _grades(course)
    assert before[("alice", WRITTEN)][1] == 1.0 and before[("mallory", WRITTEN)][1] is None
    shown = {}
    with _lecturer_page(graded) as (page, url, dialogs):
        for sid in ("mallory", "alice"):
            page.goto(f"{url}/formgrader/submissions/{graded['ids'][sid]}/?index=0")
            page.wait_for_load_state("networkidle")
            page.wait_for_timeout(1500)  # onload / onerror handlers, and any fetch they start
            shown[sid] = page.inner_text("body")
            shown[f"{sid}-img120"] = page.locator('img[width="120"]').count()
            links = page.locator(".text_cell_render a, .output_area a, .rendered_html a")
            for i in range(links.count()):
                try:
                    links.nth(i).click(timeout=2000, force=True)
                except Exception:  # noqa: BLE001 - a link that cannot be clicked runs nothing either
                    pass
                page.wait_for_timeout(300)
                if f"/submissions/{graded['ids'][sid]}" not in page.url:
                    page.goto(f"{url}/formgrader/submissions/{graded['ids'][sid]}/?index=0")
            page.wait_for_timeout(1000)
    after = _grades(course)
    changed = {k: (before[k], after.get(k)) for k in before if after.get(k) != before[k]}
    assert (dialogs, changed) == ([], {}), f"dialogs fired in formgrader: {dialogs}; grades changed: {changed}"
    # the page showed mallory's answer from the autograded copy (not a blank or error page)
    assert "배치가 커지면" in shown["mallory"] and "e (javascript:alert(5))" in shown["mallory"], shown["mallory"][:2000]
    assert "f (javascript:alert(6))" in shown["mallory"] and shown["mallory-img120"] == 1


def test_formgrader_serves_a_students_files_sandboxed(graded):
    """mallory's HTML and SVG files, opened by the lecturer at formgrader's own address (where the
    lecturer's session is valid), run no script: no marker, no dialog, no grade change; their
    responses carry the CSP ``sandbox`` and ``nosniff``. Her PNG still loads in the submission page
    (an image the page itself fetches from that route), whose own scripts are not sandboxed."""
    course = graded["course"]
    folder = course / "autograded" / "mallory" / A
    assert all((folder / name).read_text(encoding="utf-8") == text for name, text in FILES.items())
    before = _grades(course)
    seen = {}
    with _lecturer_page(graded) as (page, url, dialogs):
        files = f"{url}/formgrader/submissions/{graded['ids']['mallory']}"
        for name in (*FILES, "plot.png"):
            response = page.goto(f"{files}/{name}")
            page.wait_for_timeout(1500)  # the script's fetches, had it run
            seen[name] = (response.status, response.headers.get("content-type"),
                          response.headers.get("content-security-policy", ""),
                          response.headers.get("x-content-type-options"),
                          page.evaluate("document.documentElement.getAttribute('data-ran')"))
        response = page.goto(f"{files}/?index=0")
        page.wait_for_load_state("networkidle")
        seen["page"] = response.headers.get("content-security-policy", "")
        seen["png"] = page.evaluate("""() => new Promise(done => {
            const img = new Image();
            img.onload = () => done(img.naturalWidth); img.onerror = () => done(-1);
            img.src = 'plot.png'; document.body.append(img); })""")
        seen["scripts"] = page.evaluate("typeof window.jQuery")  # formgrader's own page scripts ran
    after = _grades(course)
    changed = {k: (before[k], after.get(k)) for k in before if after.get(k) != before[k]}
    assert (dialogs, changed) == ([], {}), f"a student's file ran script: dialogs {dialogs}; grades changed: {changed}"
    for name, kind in (("evil.html", "text/html"), ("evil.svg", "image/svg+xml"), ("plot.png", "image/png")):
        status, ctype, csp, nosniff, ran = seen[name]
        directives = [d.strip() for d in csp.split(";")]
        assert (status, ctype.split(";")[0], "sandbox" in directives, nosniff, ran) == (200, kind, True, "nosniff", None), \
            (name, seen[name])
    assert "sandbox" not in seen["page"] and seen["scripts"] == "function", seen
    assert seen["png"] == 1, seen


def test_the_hubs_formgrader_service_has_the_options_tested_here(tmp_path):
    """The grader service the hub starts (``hub_services``) runs jupyterhub-singleuser with
    ``FORMGRADER_ARGS``, the options the formgrader server of this module runs with."""
    from decodelab.classroom.exchange import FORMGRADER, hub_services

    course = tmp_path / "course"
    course.mkdir()
    got = hub_services(course, python=sys.executable, lecturer="prof", grader_user=None)
    command = next(s for s in got["services"] if s["name"] == FORMGRADER)["command"]
    assert command[:4] == [sys.executable, "-m", "jupyterhub.singleuser", f"--ServerApp.root_dir={course.resolve()}"]
    assert command[4:4 + len(FORMGRADER_ARGS)] == list(FORMGRADER_ARGS), command
    assert "--ServerApp.jpserver_extensions=decodelab.classroom.exchange=True" in FORMGRADER_ARGS

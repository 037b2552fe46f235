"""nbgrader's side of the authenticated exchange: ngshare-exchange 0.5.3 with decodelab's adapters.

Imported by nbgrader through the ``nbgrader_config.py`` files :mod:`decodelab.classroom.exchange`
writes (the course's, for the lecturer; each student's, written by the hub at every spawn). It
needs ``ngshare-exchange`` (installed without its dependencies by ``scripts/install_hub.sh``: its
metadata pins ``jupyter-core<4.11.2``, which nbgrader 0.9 and JupyterLab 4 cannot use; the code runs
with jupyter-core 5, checked by tests/test_classroom_exchange.py).

What the adapters change in ngshare-exchange 0.5.3:

- **collect** keeps nbgrader's own ``ExchangeCollect.before_duedate`` option (nbgrader's file
  exchange has it, ngshare-exchange ignores it and always takes the newest submission): with it,
  each student's newest submission *at or before* the assignment's due date (the gradebook's) is
  collected, and every newer, late one is reported as a warning, never taken silently. Without an
  on-time submission the newest one is collected (and graded late). The submission is downloaded by
  its server timestamp, so the copy and its ``timestamp.txt`` always match.
- **timestamp.txt**: a ``timestamp.txt`` the student put into the submitted folder (or a folder of
  that name) is dropped; the collected one is always ngshare's (the time the server received the
  submission, UTC).
- **collect writes each file under the submission** (``ExchangeCollect.do_copy``): 0.5.3 looked for
  a file's folder in the current folder, so a student's ``source/x`` made collect, run in the course
  folder, stop for every student after; a file that cannot be written is now left out with a
  warning and collect goes on.
- **release** creates the course in ngshare first (the grader token is ngshare's admin), and
  **release** and **submit** fail with a non-zero exit when ngshare refuses (0.5.3 logs the error
  and exits 0, so a student could believe a failed submission went in).
- ngshare-exchange reads ``$USER`` when it is imported (only for the student's local cache
  folder name); a process without it (a service, a test) has it, the login name of its uid, for
  that import only (the environment is left as it was).
"""

from __future__ import annotations

import base64
import getpass
import math
import os
from pathlib import PurePosixPath

from .pins import require  # noqa: E402

require("ngshare-exchange")  # the adapters below rewrite 0.5.3's methods (lecturer/patches.md)
_NO_USER = "USER" not in os.environ
if _NO_USER:  # ngshare-exchange reads $USER while it is imported: given for that moment only
    os.environ["USER"] = getpass.getuser()
try:
    import ngshare_exchange  # noqa: E402
finally:
    if _NO_USER:
        del os.environ["USER"]
from nbgrader.plugins import LateSubmissionPlugin  # noqa: E402
from nbgrader.utils import parse_utc  # noqa: E402
from traitlets import Float  # noqa: E402

from ngshare_exchange import (  # noqa: E402,F401 (re-exported for nbgrader's ExchangeFactory)
    Exchange,
    ExchangeFetchAssignment,
    ExchangeFetchFeedback,
    ExchangeList,
    ExchangeReleaseFeedback,
)

__all__ = ["Exchange", "ExchangeCollect", "ExchangeFetchAssignment", "ExchangeFetchFeedback", "ExchangeList",
           "ExchangeReleaseAssignment", "ExchangeReleaseFeedback", "ExchangeSubmit", "LatePenalty", "configure"]

TIMESTAMP_FILE = "timestamp.txt"


class ExchangeCollect(ngshare_exchange.ExchangeCollect):
    """ngshare-exchange's collect with nbgrader's ``before_duedate`` (see the module docstring)."""

    def do_copy(self, src, dest):
        """Write one downloaded submission (ngshare's ``[{"path", "content"}]``, content base64) under ``dest``.

        0.5.3's ``decode_dir`` looks for a file's folder in the current folder instead of ``dest`` (the
        lecturer runs collect in the course folder, so a student's ``source/x`` was opened in a folder
        never made) and stops at the first file it cannot write, which ends collect for every student
        after that one. Here a file that cannot be written (a file and a folder of one name, a path
        that is absolute or has ``..``, which ngshare refuses at submit) is left out with a Korean
        warning naming it (escaped: the student chose the name), and collect goes on."""
        from .._atomic import os_reason
        from .._cli import printable

        for f in src:
            path = f["path"]
            parts = PurePosixPath(path).parts
            if not parts or PurePosixPath(path).is_absolute() or ".." in parts:
                self.log.warning("%s: 제출물 밖을 가리키는 파일 이름 %s은(는) 쓰지 않았습니다", printable(dest), printable(path))
                continue
            target = os.path.join(dest, *parts)
            try:
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with open(target, "wb") as out:
                    out.write(base64.b64decode(f["content"]))
            except (OSError, ValueError) as e:  # ValueError: binascii.Error, content that is not base64
                why = os_reason(e) if isinstance(e, OSError) else "base64가 아닌 내용"
                self.log.warning("%s: 제출물의 파일 %s을(를) 쓰지 못해 뺐습니다 (%s); 다른 파일과 다른 학생은 계속 걷습니다",
                                 printable(dest), printable(path), why)

    def _due(self):
        from nbgrader.api import Gradebook, MissingEntry

        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
            try:
                return gb.find_assignment(self.coursedir.assignment_id).duedate
            except MissingEntry:
                return None

    def init_src(self):
        if self.coursedir.course_id == "":
            self.fail("No course id specified. Re-run with --course flag.")
        response = self.ngshare_api_get(f"/submissions/{self.coursedir.course_id}/{self.coursedir.assignment_id}")
        if response is None:
            self.fail("Failed to list submissions (is the hub and its ngshare service running?).")
        records = [{"student_id": x["student_id"], "timestamp": parse_utc(x["timestamp"]), "raw": x["timestamp"]}
                   for x in response["submissions"]]
        wanted = self.coursedir.student_id
        if wanted and wanted != "*":
            records = [r for r in records if r["student_id"] == wanted]
        due = self._due()
        self.src_records = []
        for student in sorted({r["student_id"] for r in records}):
            mine = sorted((r for r in records if r["student_id"] == student), key=lambda r: r["timestamp"], reverse=True)
            chosen = mine[0]
            if due is not None and self.before_duedate:
                on_time = [r for r in mine if r["timestamp"] <= due]
                if on_time:
                    chosen = on_time[0]
                    for late in mine:
                        if late["timestamp"] > due:
                            self.log.warning(
                                "Late resubmission of %s by %s at %s (due %s) NOT collected: the on-time submission "
                                "of %s is kept (ExchangeCollect.before_duedate).", self.coursedir.assignment_id,
                                student, late["raw"], due, chosen["raw"])
            self.src_records.append(chosen)

    def _get_submission(self, course_id, assignment_id, student_id, raw_timestamp=None):
        params = {"timestamp": raw_timestamp} if raw_timestamp else None
        response = self.ngshare_api_get(f"/submission/{course_id}/{assignment_id}/{student_id}", params)
        if response is None:
            self.log.error("An error occurred downloading a submission.")
            return None
        timestamp = response["timestamp"]
        # never the student's own timestamp.txt, nor a folder of that name that would keep ngshare's out
        # (read as do_copy writes it: "./timestamp.txt" is the same file)
        files = [f for f in response["files"] if PurePosixPath(f["path"]).parts[:1] != (TIMESTAMP_FILE,)]
        files.append({"path": TIMESTAMP_FILE, "content": base64.encodebytes(timestamp.encode()).decode()})
        return {"timestamp": timestamp, "files": files}

    def copy_files(self):
        import shutil

        if not self.src_records:
            self.log.warning('No submissions of "%s" for course "%s" to collect', self.coursedir.assignment_id,
                             self.coursedir.course_id)
        for rec in self.src_records:
            student_id = rec["student_id"]
            dest = self.coursedir.format_path(self.coursedir.submitted_directory, student_id,
                                              self.coursedir.assignment_id)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            if os.path.isdir(dest):
                existing = self.coursedir.get_existing_timestamp(dest)
                newer = self.update and (existing is None or rec["timestamp"] > existing)
                other = self.before_duedate and existing != rec["timestamp"]
                if not (newer or other):
                    self.log.info("Submission already collected: %s %s", student_id, self.coursedir.assignment_id)
                    continue
                self.log.info("Updating submission: %s %s", student_id, self.coursedir.assignment_id)
                shutil.rmtree(dest)
            else:
                self.log.info("Collecting submission: %s %s", student_id, self.coursedir.assignment_id)
            sub = self._get_submission(self.coursedir.course_id, self.coursedir.assignment_id, student_id, rec["raw"])
            if sub is not None:
                self.do_copy(sub["files"], dest)


class ExchangeSubmit(ngshare_exchange.ExchangeSubmit):
    """ngshare-exchange's submit, failing (exit code 1) when ngshare did not take the submission."""

    def copy_files(self):
        self.timestamp = None
        super().copy_files()
        if self.timestamp is None:
            self.fail(f"{self.coursedir.assignment_id}을(를) 제출하지 못했습니다 (ngshare가 받지 않음, 위 오류를 보세요): "
                      "다시 제출하고, 또 안 되면 강의자에게 알리세요.")


class ExchangeReleaseAssignment(ngshare_exchange.ExchangeReleaseAssignment):
    """ngshare-exchange's release: creates the course in ngshare when missing; fails loudly."""

    def init_dest(self):
        super().init_dest()
        import requests

        course = self.coursedir.course_id
        headers = {"Authorization": "token " + os.environ.get("JUPYTERHUB_API_TOKEN", "")}
        try:
            known = requests.get(self.ngshare_url + "/courses", headers=headers, timeout=30).json()
        except (OSError, ValueError) as e:
            self.fail(f"ngshare({self.ngshare_url})에 닿지 않습니다 ({e}): 허브가 돌고 있는지 확인하세요.")
        if not known.get("success"):
            self.fail(f"ngshare가 강좌 목록을 거절했습니다 ({known.get('message')}): 강좌 폴더에서 root로, "
                      "또는 formgrader 서비스에서 실행하세요.")
        if course not in known.get("courses", []):
            made = requests.post(self.ngshare_url + self.encode_url(f"/course/{course}"), headers=headers,
                                 timeout=30).json()
            if not made.get("success"):
                self.fail(f"ngshare에 강좌 {course}을(를) 만들지 못했습니다: {made.get('message')}")

    def assignment_exists(self):
        if self.ngshare_api_get(f"/assignments/{self.coursedir.course_id}") is None:
            self.fail(f"ngshare에서 강좌 {self.coursedir.course_id}의 과제 목록을 읽지 못했습니다 (위 오류).")
        return super().assignment_exists()

    def copy_files(self):
        data = None
        if not self.assignment_exists():
            data = self.ngshare_api_post(self.dest_path, self.encode_dir(self.src_path))
            if data is None:
                self.fail(f"{self.coursedir.assignment_id}을(를) ngshare에 배포하지 못했습니다 (위 오류).")
            self.log.info("Successfully released %s", self.coursedir.assignment_id)


class LatePenalty(LateSubmissionPlugin):
    """Late penalty: ``percent_per_day`` of the notebook's score for each started day (24 h) late,
    at most the whole score. 100 (the default) is nbgrader's ``zero`` method.

    Returns the penalty in points (nbgrader subtracts it), None when not late."""

    percent_per_day = Float(100.0, help="percent of the score taken per started day late (0-100)").tag(config=True)

    def late_submission_penalty(self, student_id: str, score: float, total_seconds_late: float):
        if total_seconds_late <= 0:
            return None
        days = math.ceil(total_seconds_late / 86400)
        return min(score, score * self.percent_per_day / 100.0 * days)


def configure(c, ngshare_url: str) -> None:
    """Point nbgrader config ``c`` at ngshare (``ngshare_url``: the service's URL, ending with
    ``/services/ngshare``) with the adapters above."""
    f = c.ExchangeFactory
    f.exchange = "decodelab.classroom.exchange_plugin.Exchange"
    f.fetch_assignment = "decodelab.classroom.exchange_plugin.ExchangeFetchAssignment"
    f.fetch_feedback = "decodelab.classroom.exchange_plugin.ExchangeFetchFeedback"
    f.release_assignment = "decodelab.classroom.exchange_plugin.ExchangeReleaseAssignment"
    f.release_feedback = "decodelab.classroom.exchange_plugin.ExchangeReleaseFeedback"
    f.list = "decodelab.classroom.exchange_plugin.ExchangeList"
    f.submit = "decodelab.classroom.exchange_plugin.ExchangeSubmit"
    f.collect = "decodelab.classroom.exchange_plugin.ExchangeCollect"
    c.Exchange._ngshare_url = ngshare_url

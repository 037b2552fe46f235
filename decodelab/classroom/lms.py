"""LMS grade files from nbgrader's gradebook, as nbgrader's own export plugin.

Two ways to run the same code (:class:`LmsExport`, an ``nbgrader.plugins.ExportPlugin``):

- ``decodelab classroom export DIR --lms canvas|moodle -o FILE [--roster CSV]`` (:func:`export`);
- in the course folder, ``nbgrader export --exporter=decodelab.classroom.lms.LmsExport --to=FILE
  --LmsExport.lms=moodle [--LmsExport.roster=CSV]``.

What it writes, per student and assignment (columns in due-date order, no total column: the LMS
sums the columns itself):

- ``exam-NN``: the **final grade** = the points given (nbgrader's score: each graded cell's manual
  score where the lecturer gave one, else its automatic score) minus the late penalty, never below
  0. The penalty is recomputed here from the gradebook with the course's late policy
  (``c.AssignLatePenalties.plugin_class`` of ``nbgrader_config.py``, e.g.
  :class:`decodelab.classroom.exchange_plugin.LatePenalty`), with nbgrader's
  ``AssignLatePenalties`` semantics: per notebook, ``late_submission_penalty(student, notebook
  score, seconds late)`` clamped to [0, notebook score]. So points given after autograde (a
  written answer graded in formgrader) are penalised too; the penalty autograde stored is not used.
- ``exam-NN 늦은 제출 감점``: the penalty in points, or why ``exam-NN`` is empty: ``검토 대기``
  (items awaiting the lecturer's grade), ``자동 채점 실패`` (the last autograde of the collected
  submission failed or did not finish: no autograded notebook, or one made from another submission;
  the gradebook may still hold an older score, which is never exported), ``제출 없음``.
  Canvas: its "Points Possible" is ``(read only)``; on import choose "ignore" for these columns.
  Moodle: map them to "ignore" (or to the item's feedback).
- A graded cell the student deleted scores 0 for its item (set by :mod:`.review` at autograde,
  which records it in the autograded notebook); the export names it as a warning.

File formats:

- **Canvas** (Gradebook > Import): the first columns ``Student, ID, SIS User ID, SIS Login ID,
  Section`` identify the student (Canvas matches on ``ID``, else the SIS ids); the row ``Points
  Possible`` gives each column's maximum. An empty cell leaves Canvas's grade as it is.
- **Moodle** (Grades > Import > CSV file): ``username``, ``idnumber``, then the columns; a row whose
  user Moodle does not know stops the whole import, so such students are left out of the file.

Students are matched by their hub / LTI ids: nbgrader's student id is the JupyterHub user name
(the LMS login with the LTI authenticator) and ``lms_user_id`` (nbgrader's LMS id field) the LMS's
own user id. With a roster (the LMS's own student list as CSV: Canvas's gradebook export, or a
Moodle participants export with ``username`` / ``idnumber`` columns; headers matched without
regard to case) a student the LMS does not know is reported and skipped. Roster values and ids
are compared after Unicode NFKC normalisation and case folding (``MinJi`` is ``minji``; a name in
NFD is the same name in NFC).
"""

from __future__ import annotations

import csv
import io
import json
import os
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.coursedir import CourseDirectory
from nbgrader.plugins.export import ExportPlugin
from nbgrader.preprocessors import AssignLatePenalties
from traitlets import Enum, Unicode

from .._atomic import atomic_write_text
from .course import read_csv
from .practice import PRACTICE

__all__ = ["ExportReport", "LmsExport", "export", "final_grade", "same_id"]

#: the penalty/status column of an assignment
PENALTY_COLUMN = "{} 늦은 제출 감점"
REVIEW, FAILED, MISSING = "검토 대기", "자동 채점 실패", "제출 없음"
#: the key :class:`decodelab.classroom.review.GradeAnswers` writes into the autograded notebook's metadata
GRADED_KEY = "decodelab"


def same_id(value: str | None) -> str:
    """``value`` as compared with another id: stripped, NFKC-normalised and case-folded (Unicode's
    NFKC_Casefold: NFKC of the case fold of NFKC)."""
    text = unicodedata.normalize("NFKC", (value or "").strip())
    return unicodedata.normalize("NFKC", text.casefold())


@dataclass
class ExportReport:
    """What the export wrote and what it left out (student ids; (student, assignment) keys)."""

    written: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    pending: dict[tuple[str, str], int] = field(default_factory=dict)  # -> items awaiting review
    failed: dict[tuple[str, str], str] = field(default_factory=dict)  # -> why the autograde is not usable
    missing: list[tuple[str, str]] = field(default_factory=list)  # without a submission
    penalties: dict[tuple[str, str], float] = field(default_factory=dict)  # late penalty in points (> 0)
    missing_cells: dict[tuple[str, str], list[str]] = field(default_factory=dict)  # deleted grade cells: 0 points

    def lines(self) -> list[str]:
        out = [f"내보낸 학생: {len(self.written)}명"]
        if self.unknown:
            out.append(f"LMS 명단에 없어 뺀 학생 {len(self.unknown)}명: {', '.join(self.unknown)}")
        for (s, a), n in sorted(self.pending.items()):
            out.append(f"검토 대기: {s} {a} ({n}문항, formgrader에서 채점하면 점수가 들어갑니다; 지금은 빈칸)")
        for (s, a), why in sorted(self.failed.items()):
            out.append(f"자동 채점 실패: {s} {a} ({why}; 성적부의 예전 점수는 내보내지 않고 빈칸: "
                       f"decodelab classroom autograde로 다시 채점하세요)")
        for (s, a), cells in sorted(self.missing_cells.items()):
            out.append(f"경고: {s} {a}에 채점 칸이 없어 그 문항은 0점입니다 ({', '.join(cells)})")
        for (s, a), p in sorted(self.penalties.items()):
            out.append(f"늦은 제출 감점: {s} {a} -{p:g}점")
        for s, a in self.missing:
            out.append(f"제출 없음: {s} {a} (빈칸)")
        return out


#: the roster columns read, by their case-folded header (Moodle's participants export writes
#: ``Username``, its grade import ``username``; Canvas writes ``SIS Login ID``)
ROSTER_COLUMNS = {name.casefold(): name for name in
                  ("Student", "ID", "SIS User ID", "SIS Login ID", "Section", "username", "idnumber")}
#: the columns that identify a student (at least one must be in the roster)
ID_COLUMNS = ("ID", "SIS User ID", "SIS Login ID", "username", "idnumber")


def _roster(path: Path | None) -> list[dict[str, str]] | None:
    """The rows of the LMS roster ``path`` with its headers matched without regard to case or
    surrounding spaces (``Username``, ``USERNAME`` and ``username`` are the same column).

    Raises:
        ValueError: (Korean) no column that identifies a student (names the headers found).
    """
    if path is None:
        return None
    header, raw = read_csv(path, "LMS 명단(--roster)")

    def canon(key: str | None) -> str:
        key = (key or "").strip()
        return ROSTER_COLUMNS.get(key.casefold(), key)

    if not any(canon(h) in ID_COLUMNS for h in header):
        raise ValueError(f"LMS 명단(--roster) {path}: 학생을 알아볼 열이 없습니다 (찾은 열: {', '.join(header) or '없음'}): "
                         f"{', '.join(ID_COLUMNS)} 중 하나가 있는 명단을 주세요 (Moodle은 username, Canvas는 SIS Login ID).")
    rows = [{canon(k): (v or "").strip() if isinstance(v, str) else "" for k, v in r.items()} for r in raw]
    return [r for r in rows if "Points Possible" not in r.get("Student", "")]


def _match(roster: list[dict[str, str]] | None, student) -> dict[str, str] | None:
    """The roster row of ``student`` (nbgrader Student): LTI id against ID / idnumber, hub id
    against SIS Login ID / username / SIS User ID, each compared by :func:`same_id`. Without a
    roster: a row from nbgrader's own fields."""
    lti = (student.lms_user_id or "").strip()
    if roster is None:
        name = " ".join(x for x in (student.first_name, student.last_name) if x) or student.id
        return {"Student": name, "ID": lti, "SIS User ID": "", "SIS Login ID": student.id, "Section": "",
                "username": student.id, "idnumber": lti}
    lti_key, hub_key = same_id(lti), same_id(student.id)
    for r in roster:
        if lti_key and lti_key in (same_id(r.get("ID")), same_id(r.get("idnumber"))):
            return r
        if hub_key in (same_id(r.get("SIS Login ID")), same_id(r.get("username")), same_id(r.get("SIS User ID"))):
            return r
    return None


def final_grade(sub, plugin) -> tuple[float, float]:
    """(final grade, late penalty) in points of nbgrader submission ``sub`` under the late-policy
    ``plugin`` (an ``nbgrader.plugins.LateSubmissionPlugin``), with nbgrader's AssignLatePenalties
    rule per notebook: penalty = ``plugin.late_submission_penalty(student, notebook.score,
    sub.total_seconds_late)`` (None: 0) clamped to [0, notebook.score]; final = max(0, sum of
    notebook.score - penalty)."""
    late = sub.total_seconds_late or 0
    total = penalty = 0.0
    for nb in sub.notebooks:
        score = float(nb.score or 0.0)
        p = plugin.late_submission_penalty(sub.student.id, score, late) if late > 0 else None
        p = min(max(float(p or 0.0), 0.0), max(score, 0.0))
        total += score
        penalty += p
    return max(total - penalty, 0.0), penalty


class LmsExport(ExportPlugin):
    """nbgrader export plugin writing a Canvas or Moodle grade file (see the module docstring).

    ``to``: the file (default ``<lms>.csv``); ``lms``: ``canvas`` or ``moodle``; ``roster``: the
    LMS's student list (CSV) or empty. After :meth:`export`, ``report`` holds the
    :class:`ExportReport` (also logged, one warning per line).

    Raises (from :meth:`export`):
        ValueError: (Korean) a ``roster`` that is missing, a folder, in neither UTF-8 nor CP949, or
            without an id column.
    """

    lms = Enum(["canvas", "moodle"], default_value="canvas", help="canvas 또는 moodle").tag(config=True)
    roster = Unicode("", help="LMS의 학생 명단 CSV (Canvas 성적부 내보내기, Moodle 참여자 목록)").tag(config=True)

    def _late_plugin(self):
        """The course's late policy: the plugin ``AssignLatePenalties`` would use at autograde."""
        step = AssignLatePenalties(config=self.config)
        step.init_plugin()
        return step.plugin_inst

    def _autograde_problem(self, coursedir: CourseDirectory, sub) -> str | None:
        """Why ``sub``'s autograded notebooks cannot be trusted for its score, or None: a notebook
        missing from ``autograded/`` (nbgrader removes it when autograde fails), one graded from
        another submission than the gradebook's, or a collected submission newer than the graded one."""
        student, assignment = sub.student.id, sub.assignment.name
        folder = Path(coursedir.format_path(coursedir.autograded_directory, student, assignment))
        for nb in sub.notebooks:
            path = folder / f"{nb.name}.ipynb"
            try:
                meta = json.loads(path.read_text(encoding="utf-8")).get("metadata", {}).get(GRADED_KEY, {})
            except (OSError, ValueError):
                return f"{path.name}의 채점본이 없음"
            graded = meta.get("submission") if isinstance(meta, dict) else None
            if graded is not None and graded != str(sub.timestamp):
                return f"{path.name}의 채점본이 다른 제출({graded})에서 나옴"
            cells = meta.get("missing_cells") if isinstance(meta, dict) else None
            if cells:
                self.report.missing_cells[(student, assignment)] = [str(c) for c in cells]
        submitted = coursedir.format_path(coursedir.submitted_directory, student, assignment)
        stamp = coursedir.get_existing_timestamp(submitted)
        if stamp is not None and sub.timestamp is not None and stamp != sub.timestamp:
            return f"걷은 제출({stamp:%Y-%m-%d %H:%M:%S} UTC)이 채점된 제출과 다름"
        return None

    def export(self, gradebook: Gradebook) -> None:
        self.report = report = ExportReport()
        rows = _roster(Path(self.roster) if self.roster else None)
        coursedir = CourseDirectory(config=self.config)
        plugin = self._late_plugin()
        wanted_a = {str(a) for a in self.assignment}
        wanted_s = {str(s) for s in self.student}
        # the practice answers' assignment is never a grade (.practice)
        assignments = sorted((a for a in gradebook.assignments
                              if a.name != PRACTICE and (not wanted_a or a.name in wanted_a)),
                             key=lambda a: (a.duedate is None, a.duedate or 0, a.name))
        table = []
        for st in sorted(gradebook.students, key=lambda s: s.id):
            if wanted_s and st.id not in wanted_s:
                continue
            who = _match(rows, st)
            if who is None:
                report.unknown.append(st.id)
                continue
            cells = []
            for a in assignments:
                try:
                    sub = gradebook.find_submission(a.name, st.id)
                except MissingEntry:
                    report.missing.append((st.id, a.name))
                    cells += ["", MISSING]
                    continue
                problem = self._autograde_problem(coursedir, sub)
                pending = sum(1 for nb in sub.notebooks for g in nb.grades
                              if g.needs_manual_grade and g.manual_score is None)
                if problem:
                    report.failed[(st.id, a.name)] = problem
                    cells += ["", FAILED]
                elif pending:
                    report.pending[(st.id, a.name)] = pending
                    cells += ["", REVIEW]
                else:
                    final, penalty = final_grade(sub, plugin)
                    if penalty > 0:
                        report.penalties[(st.id, a.name)] = penalty
                    cells += [f"{final:g}", f"{penalty:g}"]
            table.append((who, cells))
            report.written.append(st.id)
        header = [x for a in assignments for x in (a.name, PENALTY_COLUMN.format(a.name))]
        maxima = [x for a in assignments for x in (f"{a.max_score:g}", "(read only)")]
        dest = self.to or f"{self.lms}.csv"
        buf = io.StringIO(newline="")
        w = csv.writer(buf)
        if self.lms == "canvas":
            w.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", *header])
            w.writerow(["    Points Possible", "", "", "", "", *maxima])
            for who, cells in table:
                w.writerow([who.get("Student", ""), who.get("ID", ""), who.get("SIS User ID", ""),
                            who.get("SIS Login ID", ""), who.get("Section", ""), *cells])
        else:
            w.writerow(["username", "idnumber", *header])
            for who, cells in table:
                w.writerow([who.get("username") or who.get("SIS Login ID", ""),
                            who.get("idnumber") or who.get("ID", ""), *cells])
        atomic_write_text(dest, buf.getvalue())  # an export that fails halfway leaves no half a grade file
        for line in report.lines():
            self.log.warning("%s", line)


def export(course_dir: str | Path, lms: str, out: str | Path, *, roster: str | Path | None = None,
           db_url: str | None = None) -> ExportReport:
    """Write ``out`` for ``lms`` ("canvas" or "moodle") from the course's gradebook with
    :class:`LmsExport`, under the course's ``nbgrader_config.py`` (its late policy).

    Raises:
        ValueError: (Korean) an unknown ``lms``; a ``roster`` that is missing, a folder, or in
            neither UTF-8 nor CP949. FileNotFoundError: no gradebook (``gradebook.db``).
    """
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    if lms not in ("canvas", "moodle"):
        raise ValueError(f"lms={lms!r}: canvas 또는 moodle을 고르세요")
    _roster(Path(roster) if roster else None)  # a bad roster: its ValueError first
    course_dir = Path(course_dir).resolve()
    if db_url is None:
        db = course_dir / "gradebook.db"
        if not db.is_file():
            raise FileNotFoundError(f"{db}: nbgrader 성적부가 없습니다 (nbgrader autograde를 먼저 하세요)")
        db_url = f"sqlite:///{db}"
    config = Config()
    if (course_dir / "nbgrader_config.py").is_file():
        config.merge(PyFileConfigLoader("nbgrader_config.py", path=str(course_dir)).load_config())
    config.CourseDirectory.root = str(course_dir)
    plugin = LmsExport(config=config, lms=lms, to=os.fspath(out), roster=os.fspath(roster) if roster else "")
    course_id = config.CourseDirectory.get("course_id")
    with (Gradebook(db_url, course_id) if isinstance(course_id, str) and course_id else Gradebook(db_url)) as gb:
        plugin.export(gb)
    return plugin.report

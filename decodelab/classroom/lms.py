"""LMS grade files from nbgrader's gradebook: ``decodelab classroom export DIR --lms canvas|moodle -o FILE``.

One column per assignment (``exam-02``, ...) and no total column: the LMS sums the columns itself
(a total beside them would be counted twice). What each system's CSV import expects:

- **Canvas** (Gradebook > Import): the first columns ``Student, ID, SIS User ID, SIS Login ID,
  Section`` identify the student (Canvas matches on ``ID``, else the SIS ids), then one column per
  assignment; the row ``Points Possible`` under the header gives each column's maximum. An empty
  cell leaves Canvas's grade as it is.
- **Moodle** (Grades > Import > CSV file): one column identifies the user (mapped on import,
  "Identify user by": ``username`` or ``idnumber``), one column per grade item; a row whose user
  Moodle does not know stops the whole import, so such students are left out of the file.

Students are matched by their hub / LTI ids: nbgrader's student id is the JupyterHub user name
(the LMS login with the LTI authenticator) and ``lms_user_id`` (nbgrader's LMS id field) the LMS's
own user id. With ``--roster`` (the LMS's own student list as CSV: Canvas's gradebook export, or a
Moodle participants export with ``username`` / ``idnumber`` columns, headers matched without regard
to case: Moodle writes ``Username``) a student the LMS does not
know is reported and skipped. A grade still waiting for the lecturer's review (formgrader) leaves
the cell empty and is reported: never counted as 0 silently. A missing submission is reported too.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

from .course import read_csv

__all__ = ["ExportReport", "export"]


@dataclass
class ExportReport:
    """What :func:`export` wrote and what it left out (student ids)."""

    written: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    pending: dict[tuple[str, str], int] = field(default_factory=dict)  # (student, assignment) -> review items
    missing: list[tuple[str, str]] = field(default_factory=list)  # (student, assignment) without a submission

    def lines(self) -> list[str]:
        out = [f"내보낸 학생: {len(self.written)}명"]
        if self.unknown:
            out.append(f"LMS 명단에 없어 뺀 학생 {len(self.unknown)}명: {', '.join(self.unknown)}")
        for (s, a), n in sorted(self.pending.items()):
            out.append(f"검토 대기: {s} {a} ({n}문항, formgrader에서 채점하면 점수가 들어갑니다; 지금은 빈칸)")
        for s, a in self.missing:
            out.append(f"제출 없음: {s} {a} (빈칸)")
        return out


#: the roster columns export reads, by their case-folded header (Moodle's participants export
#: writes ``Username``, its grade import ``username``; Canvas writes ``SIS Login ID``)
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
    return [r for r in rows if r.get("Student", "") != "Points Possible" and "Points Possible" not in r.get("Student", "")]


def _match(roster: list[dict[str, str]] | None, student) -> dict[str, str] | None:
    """The roster row of ``student`` (nbgrader Student): LTI id against ID / idnumber, hub id
    against SIS Login ID / username / SIS User ID. Without a roster: a row from nbgrader's own fields."""
    lti = (student.lms_user_id or "").strip()
    if roster is None:
        name = " ".join(x for x in (student.first_name, student.last_name) if x) or student.id
        return {"Student": name, "ID": lti, "SIS User ID": "", "SIS Login ID": student.id, "Section": "",
                "username": student.id, "idnumber": lti}
    for r in roster:
        if lti and lti in (r.get("ID"), r.get("idnumber")):
            return r
        if student.id in (r.get("SIS Login ID"), r.get("username"), r.get("SIS User ID")):
            return r
    return None


def export(course_dir: str | Path, lms: str, out: str | Path, *, roster: str | Path | None = None,
           db_url: str | None = None) -> ExportReport:
    """Write ``out`` for ``lms`` ("canvas" or "moodle") from the course's nbgrader gradebook.

    Raises:
        ValueError: (Korean) an unknown ``lms``; a ``roster`` that is missing, a folder, or in
            neither UTF-8 nor CP949. FileNotFoundError: no gradebook (``gradebook.db``).
    """
    from nbgrader.api import Gradebook, MissingEntry

    if lms not in ("canvas", "moodle"):
        raise ValueError(f"lms={lms!r}: canvas 또는 moodle을 고르세요")
    rows = _roster(Path(roster) if roster else None)
    course_dir = Path(course_dir)
    if db_url is None:
        db = course_dir / "gradebook.db"
        if not db.is_file():
            raise FileNotFoundError(f"{db}: nbgrader 성적부가 없습니다 (nbgrader autograde를 먼저 하세요)")
        db_url = f"sqlite:///{db}"
    report = ExportReport()
    with Gradebook(db_url) as gb:
        assignments = sorted(gb.assignments, key=lambda a: (a.duedate is None, a.duedate or 0, a.name))
        names = [a.name for a in assignments]
        table = []
        for st in sorted(gb.students, key=lambda s: s.id):
            who = _match(rows, st)
            if who is None:
                report.unknown.append(st.id)
                continue
            cells = []
            for a in assignments:
                try:
                    sub = gb.find_submission(a.name, st.id)
                except MissingEntry:
                    report.missing.append((st.id, a.name))
                    cells.append("")
                    continue
                pending = sum(1 for nb in sub.notebooks for g in nb.grades
                              if g.needs_manual_grade and g.manual_score is None)
                if pending:
                    report.pending[(st.id, a.name)] = pending
                    cells.append("")
                else:
                    cells.append(f"{sub.score:g}")
            table.append((who, cells))
            report.written.append(st.id)
        maxima = [f"{a.max_score:g}" for a in assignments]
    with open(out, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        if lms == "canvas":
            w.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", *names])
            w.writerow(["    Points Possible", "", "", "", "", *maxima])
            for who, cells in table:
                w.writerow([who.get("Student", ""), who.get("ID", ""), who.get("SIS User ID", ""),
                            who.get("SIS Login ID", ""), who.get("Section", ""), *cells])
        else:
            w.writerow(["username", "idnumber", *names])
            for who, cells in table:
                w.writerow([who.get("username") or who.get("SIS Login ID", ""), who.get("idnumber") or who.get("ID", ""),
                            *cells])
    return report

"""``decodelab classroom``: set up and run the course for a class.

Every subcommand's command-line side (arguments, Korean messages, exit codes) is here; the work
is done by the module named beside it:

- ``init DIR``: writes the course directory (hub files by :mod:`.hub`, nbgrader files by
  :mod:`.assignments`, due dates and the late policy by :mod:`.exchange`).
- ``hub DIR --port P``: a thin wrapper over ``jupyterhub -f DIR/jupyterhub_config.py``.
- ``variant DIR ITEM STUDENT`` / ``variant DIR --list``: a student's numbers and answer of a
  parametric exam item (:mod:`.bank`).
- ``autograde DIR ASSIGNMENT``: nbgrader's autograde with students' code in the sandbox of
  :mod:`.sandbox` (refused, in Korean, where it would run as root unsandboxed).
- ``practice DIR -o report.csv``: the practice report of the practice answers collected through
  nbgrader (``nbgrader collect practice``; :mod:`.practice`, then :mod:`decodelab.assess.report`);
  ``practice --homes /home -o report.csv``: the same from the students' homes on one server.
- ``export DIR --lms canvas|moodle -o FILE``: LMS grade file from nbgrader's gradebook: the final
  grade under the course's late policy (:mod:`.lms`, the one Canvas/Moodle writer, nbgrader's
  ExportPlugin ``LmsExport``: ``nbgrader export --exporter=decodelab.classroom.lms.LmsExport`` is the same).

Each command imports its modules only when it runs (``decodelab classroom --help`` needs no
JupyterHub or nbgrader). The course folder's basics they share (config name, user-name rule, CSV
and roster reading) are in the leaf :mod:`.course`.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from ..tools.cli import dispatch

#: subcommand -> (module:function taking argv and returning an exit code, Korean help)
SUBCOMMANDS = {
    "init": ("decodelab.classroom.cli:init_command", "강좌 폴더를 만듭니다 (jupyterhub_config.py, nbgrader_config.py, 과제)"),
    "hub": ("decodelab.classroom.cli:hub_command", "JupyterHub를 띄웁니다: jupyterhub -f DIR/jupyterhub_config.py"),
    "variant": ("decodelab.classroom.cli:variant_command", "학생별 문항의 수치와 정답을 봅니다 (강의자용)"),
    "autograde": ("decodelab.classroom.cli:autograde_command",
                  "제출물을 채점합니다: 학생 코드는 격리된 권한 없는 계정으로, 점수는 강의자 쪽에서 (root로 격리 없이는 거부)"),
    "export": ("decodelab.classroom.cli:export_command", "nbgrader 성적을 LMS(Canvas/Moodle) 파일로 내보냅니다"),
    "practice": ("decodelab.classroom.cli:practice_command",
                 "nbgrader로 걷은 연습 답(과제 practice)이나 학생 홈의 제출 파일(--homes)로 연습 보고서 CSV를 만듭니다 "
                 "(성적이 아님)"),
}


#: ``python -c`` code that runs module ``sys.argv[1]`` as ``python -m`` would, without the current
#: folder on ``sys.path``. ``python -m`` puts it first, and the hub and autograde run (as root) in
#: the course folder, where the grader account may add files: a ``grp.py`` or ``nbgrader.py`` there
#: would be imported by root.
RUN_MODULE = ("import runpy, sys; del sys.path[0]; mod = sys.argv.pop(1); "
              "runpy.run_module(mod, run_name='__main__', alter_sys=True)")


def main(argv: list[str] | None = None) -> int:
    """Run one ``decodelab classroom`` subcommand; returns its exit code (2 for an unknown one)."""
    return dispatch("decodelab classroom", SUBCOMMANDS, list(sys.argv[1:] if argv is None else argv))


def init_command(argv: list[str]) -> int:
    """``decodelab classroom init DIR``: write the course directory; returns 0 (2 for bad options)."""
    from .._cli import ArgumentParser
    from .._atomic import os_reason
    from .course import CONFIG_NAME, check_names, read_roster
    from .hub import (ADMIN_PASSWORD_ENV, DEMO_BANNER, DEMO_USER, PASSWORD_ENV, check_python, course_notebooks_dir,
                      write_config)

    p = ArgumentParser(prog="decodelab classroom init",
                       description="JupyterHub 강좌 폴더를 만듭니다 (jupyterhub_config.py, notebooks/, nbgrader).")
    p.add_argument("dir", type=Path, help="만들 강좌 폴더")
    p.add_argument("--demo-users", default=None,
                   help="데모 모드: 쉼표로 나눈 학생 이름 (예: alice,bob,carol). 비밀번호는 $DECODELAB_HUB_PASSWORD")
    p.add_argument("--roster", type=Path, default=None, help="수업 모드: username 열이 있는 명단 CSV (이 이름만 가입)")
    p.add_argument("--lecturer", default="lecturer", help="강의자(관리자) 이름 (기본: lecturer)")
    p.add_argument("--python", default=sys.executable,
                   help="학생 서버를 돌릴 Python (decodelab이 설치된 환경; 기본: 지금 Python)")
    p.add_argument("--notebooks-dir", type=Path, default=None, help="강좌 노트북 폴더 (기본: 설치된 decodelab의 노트북)")
    p.add_argument("--idle-timeout", type=int, default=3600, help="이 초만큼 쓰지 않은 학생 서버를 멈춥니다 (기본 3600)")
    p.add_argument("--force", action="store_true", help="이미 있는 jupyterhub_config.py를 덮어씁니다")
    p.add_argument("--due", action="append", default=[], metavar="[exam-NN=]'YYYY-MM-DD HH:MM'",
                   help="마감 시각 (한국 시간; 과제 이름 없이 주면 모든 과제). 여러 번 줄 수 있습니다. 기본: 마감 없음")
    p.add_argument("--late-penalty", type=float, default=100.0, metavar="PERCENT",
                   help="늦은 제출의 감점: 늦은 하루(24시간)마다 점수의 몇 %%를 뺄지 (기본 100: 늦으면 0점; 0: 감점 없음)")
    from .sandbox import DEFAULT_LIMITS

    grade = {"memory": ("memory_mb", "MiB", "학생 한 명의 채점 실행(커널과 그것이 띄운 모든 프로세스) 전체의 메모리"),
             "processes": ("processes", "N", "그 실행의 프로세스와 스레드 수"),
             "tmp": ("tmp_mb", "MiB", "격리 환경 /tmp의 크기 (메모리 한도 안에 듦)"),
             "cell-time": ("cell_s", "SECONDS", "칸 하나의 시간"),
             "notebook-time": ("notebook_s", "SECONDS", "노트북 전체의 시간 (넘으면 남은 칸은 0점)")}
    for flag, (key, unit, text) in grade.items():
        p.add_argument(f"--grade-{flag}", type=int, default=DEFAULT_LIMITS[key], metavar=unit, dest=f"grade_{key}",
                       help=f"채점 한도: {text} (기본 {DEFAULT_LIMITS[key]}; lecturer/grading.md)")
    args = p.parse_args(argv)
    try:
        from .sandbox import course_config_block as limits_block

        limits_text = limits_block(**{key: getattr(args, f"grade_{key}") for key, _, _ in grade.values()})
        demo = check_names([n.strip() for n in args.demo_users.split(",")], "--demo-users") if args.demo_users else None
        roster = read_roster(args.roster) if args.roster else None
        check_names([args.lecturer], "--lecturer")
        if demo and roster:
            raise ValueError("--demo-users와 --roster는 함께 쓸 수 없습니다: 하나만 고르세요.")
        if args.lecturer in (demo or []) + (roster or []):
            raise ValueError(f"강의자 이름 {args.lecturer!r}이(가) 학생 명단에도 있습니다: --lecturer를 다른 이름으로 정하세요.")
        check_python(args.python)
        if args.idle_timeout < 60:
            raise ValueError("--idle-timeout은 60초 이상이어야 합니다.")
        if not 0 <= args.late_penalty <= 100:
            raise ValueError(f"--late-penalty {args.late_penalty:g}: 0에서 100 사이의 퍼센트로 주세요.")
        src = args.notebooks_dir.resolve() if args.notebooks_dir else course_notebooks_dir()
        notebooks = sorted(src.glob("[0-9][0-9]*_*.ipynb"))
        if not notebooks:
            raise ValueError(f"노트북 폴더 {src}에 NN_*.ipynb가 없습니다: --notebooks-dir를 확인하세요.")
    except (ValueError, FileNotFoundError, OSError) as e:
        print(f"decodelab classroom init: {e}", file=sys.stderr)
        return 2
    course = args.dir.resolve()
    if course.exists() and not course.is_dir():
        print(f"decodelab classroom init: {course}은(는) 폴더가 아니라 파일이라 강좌 폴더를 만들 수 없습니다: "
              "다른 폴더 경로를 주세요.", file=sys.stderr)
        return 2
    if (course / CONFIG_NAME).exists() and not args.force:
        print(f"decodelab classroom init: {course / CONFIG_NAME}이(가) 이미 있습니다: 덮어쓰려면 --force를 붙이세요.",
              file=sys.stderr)
        return 2
    try:
        from ..tools.lab import unpair

        (course / "notebooks").mkdir(parents=True, exist_ok=True)
        for nb in notebooks:
            shutil.copyfile(nb, course / "notebooks" / nb.name)
            unpair(course / "notebooks" / nb.name)  # students' copies are never jupytext-paired
        # no student's server may read the course directory (nbgrader sources, gradebook, the hub's
        # database and cookie secret): it is the hub's only; the hook copies notebooks as root
        course.chmod(0o700)
        path = write_config(course, demo_users=demo, lecturer=args.lecturer, python=args.python,
                            roster=roster, idle_timeout=args.idle_timeout)
    except OSError as e:
        print(f"decodelab classroom init: 강좌 폴더 {course}을(를) 만들 수 없습니다 "
              f"({os_reason(e, path=True)}): 쓸 수 있는 다른 폴더 경로를 주세요.", file=sys.stderr)
        return 2
    from . import assignments

    try:
        assignments.write_course(course)
    except assignments.ExamError as e:
        print(f"decodelab classroom init: 허브 설정은 만들었지만 nbgrader 과제는 만들지 못했습니다: {e}", file=sys.stderr)
        return 2
    from . import exchange
    from .practice import PRACTICE

    try:  # who and when: ngshare's exchange, due dates in the gradebook, the late policy
        dues = exchange.due_options(args.due, sorted(p.name for p in (course / "source").iterdir()
                                                     if p.name != PRACTICE))  # practice: never late
        with open(course / "nbgrader_config.py", "a", encoding="utf-8") as fh:
            fh.write(exchange.course_config_block(args.late_penalty))
            fh.write(limits_text)
        exchange.set_due_dates(course, dues)
    except ValueError as e:
        print(f"decodelab classroom init: {e}", file=sys.stderr)
        return 2
    for name, when in sorted(dues.items()):
        print(f"[decodelab] {name} 마감: {when:%Y-%m-%d %H:%M} UTC")
    print(f"[decodelab] 늦은 제출: 하루마다 {args.late_penalty:g}% 감점" + (" (늦으면 0점)" if args.late_penalty >= 100 else "")
          + "; 마감 뒤 다시 낸 것은 마감 전 제출을 바꾸지 않습니다" + ("" if dues else " (마감 없음: --due로 정하세요)"))
    print(f"[decodelab] 강좌 폴더를 만들었습니다: {course} ({path.name}, 노트북 {len(notebooks)}개)")
    if demo:
        print(DEMO_BANNER)
        print(f"[decodelab] 시작 (root로, 학생 서버는 {DEMO_USER} 사용자로 돕니다): sudo env "
              f"{PASSWORD_ENV}=<학생 비밀번호, 8자 이상> {ADMIN_PASSWORD_ENV}=<강의자 비밀번호, 32자 이상> "
              f"PATH=$PATH decodelab classroom hub {course}")
    else:
        approval = ("명단의 이름은 가입하는 즉시 승인되고 명단 밖의 이름은 로그인할 수 없습니다" if roster else
                    "학생이 가입하면 강의자가 /hub/authorize 에서 한 명씩 승인합니다")
        print(f"[decodelab] 시작 (root로): decodelab classroom hub {course} (127.0.0.1에서만 받음: 학생에게는 HTTPS "
              f"리버스 프록시로 여세요, lecturer/classroom.md). 강의자 {args.lecturer!r}이(가) 먼저 /hub/signup 에서 "
              f"가입합니다(바로 승인됨). {approval}.")
    return 0



def hub_command(argv: list[str]) -> int:
    """``decodelab classroom hub DIR [--port P] [jupyterhub options]``: run JupyterHub on the course
    directory (in DIR, so relative paths of the config resolve there). On POSIX this process becomes
    ``jupyterhub`` (exec), so stopping it stops the hub, its proxy and the students' servers; elsewhere
    returns jupyterhub's exit code. Returns 2 (before starting anything) for a ``--port`` outside
    1-65535, without the config or without configurable-http-proxy."""
    from .._cli import ArgumentParser
    from .course import CONFIG_NAME

    p = ArgumentParser(prog="decodelab classroom hub",
                       description="jupyterhub -f DIR/jupyterhub_config.py 를 실행합니다 (나머지 옵션은 jupyterhub에 그대로).")
    p.add_argument("dir", type=Path, help="decodelab classroom init으로 만든 강좌 폴더")
    p.add_argument("--port", type=int, default=None, help="허브가 받을 포트 (기본: 설정 파일의 8000)")
    p.add_argument("--ip", default=None,
                   help="허브가 받을 주소 (기본: 127.0.0.1만. 0.0.0.0이면 모든 네트워크에서: HTTPS 리버스 프록시 뒤에서만)")
    args, rest = p.parse_known_args(argv)
    if args.port is not None:
        from ..tools.lab import _check_port

        try:
            _check_port(args.port)
        except (TypeError, ValueError) as e:
            print(f"decodelab classroom hub: {e}", file=sys.stderr)
            return 2
    config = args.dir.resolve() / CONFIG_NAME
    if not config.is_file():
        print(f"decodelab classroom hub: {config}이(가) 없습니다: 먼저 'decodelab classroom init {args.dir}'를 실행하세요.",
              file=sys.stderr)
        return 2
    if shutil.which("configurable-http-proxy") is None and not any("ConfigurableHTTPProxy.command" in a for a in rest):
        print("decodelab classroom hub: configurable-http-proxy가 없습니다: 'bash scripts/install_hub.sh'로 "
              "설치하세요 (npm install -g configurable-http-proxy).", file=sys.stderr)
        return 2
    cmd = [sys.executable, "-c", RUN_MODULE, "jupyterhub", "-f", str(config)]
    if args.port is not None:
        cmd.append(f"--port={args.port}")
    if args.ip is not None:
        cmd.append(f"--ip={args.ip}")
        if args.ip not in ("127.0.0.1", "localhost", "::1"):
            print(f"[decodelab] 허브가 {args.ip}에서 평문 HTTP로 받습니다: 학생에게는 이 포트를 막고 HTTPS 리버스 "
                  "프록시(nginx, Caddy: lecturer/classroom.md)로만 여세요.", file=sys.stderr)
    cmd += rest
    os.chdir(config.parent)
    # A hub started with `&` from a script (a shell without job control) inherits SIGINT as
    # ignored, and so would every process it starts. JupyterHub stops a managed service (the idle
    # culler) with SIGINT and waits Spawner.interrupt_timeout (10 s) before SIGTERM, so each stop
    # of the hub would stall there. The default disposition survives exec; Python then turns
    # SIGINT into KeyboardInterrupt in jupyterhub and in its children. So Ctrl-C in that script's
    # terminal (its whole process group) stops the hub too; run it with setsid to keep it apart.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    if os.name == "posix":  # become jupyterhub: its signals (Ctrl-C, SIGTERM) stop the hub and the servers
        sys.stdout.flush()
        sys.stderr.flush()
        os.execv(sys.executable, cmd)
    return subprocess.call(cmd)



def variant_command(argv: list[str]) -> int:
    """``decodelab classroom variant DIR ITEM STUDENT`` (a student's numbers and answer) or ``DIR --list``.

    Returns 2 for a STUDENT that breaks the hub's user-name rule (no silent lower-casing: the
    message says what to type); warns on stderr when the course records its students (demo users
    or roster) and STUDENT is not among them."""
    from .._cli import ArgumentParser
    from .bank import ExamError, load_bank, variant
    from .course import check_username, course_students

    ap = ArgumentParser(prog="decodelab classroom variant",
                        description="학생별 수치 문항: 그 학생의 수치와 정답 (강의자용)")
    ap.add_argument("dir", type=Path, help="강좌 폴더 (decodelab classroom init DIR)")
    ap.add_argument("item", nargs="?", help="문항 id (--list로 목록)")
    ap.add_argument("student", nargs="?", help="학생 id (nbgrader / JupyterHub 사용자 이름)")
    ap.add_argument("--list", action="store_true", help="학생별 수치 문항 id를 한 줄에 하나씩")
    a = ap.parse_args(argv)
    try:
        bank = load_bank(a.dir / "exam")
    except ExamError as e:
        print(e, file=sys.stderr)
        return 2
    if a.list:
        print("\n".join(bank.parametric))
        return 0
    if not (a.item and a.student):
        ap.error("ITEM과 STUDENT를 함께 주세요 (또는 --list)")
    try:
        check_username(a.student, "STUDENT")
        values, q = variant(bank, a.item, a.student)
    except ValueError as e:
        print(f"decodelab classroom variant: {e}", file=sys.stderr)
        return 2
    except KeyError as e:
        print(e.args[0], file=sys.stderr)
        return 2
    known = course_students(a.dir)
    if known is not None and a.student not in known:
        print(f"decodelab classroom variant: 경고: {a.student!r}은(는) 이 강좌의 학생 명단에 없습니다 "
              f"(명단: {', '.join(sorted(known)[:10])}{' …' if len(known) > 10 else ''}): 이름을 확인하세요.",
              file=sys.stderr)
    print(f"문항 {a.item}, 학생 {a.student}")
    for k, v in values.items():
        print(f"  {k} = {v}")
    print(f"문제: {q.prompt}")
    print(f"정답: {q.answer:.6g} {q.unit} (허용 오차 ±{q.tolerance:.3g} {q.unit})".rstrip())
    return 0



def autograde_command(argv: list[str]) -> int:
    """``decodelab classroom autograde DIR ASSIGNMENT [--student ID] [--force]``: nbgrader's
    autograde in the course folder ``DIR`` (its ``nbgrader_config.py``: the kernel in the sandbox,
    grading with the bank afterwards), after checking that the sandbox starts here.

    Returns nbgrader's exit code; 2 (Korean message) when ``DIR`` is not a course folder or the
    sandbox cannot run students' code safely (root without bubblewrap...)."""
    from .._cli import ArgumentParser
    from .sandbox import SandboxError, probe

    ap = ArgumentParser(prog="decodelab classroom autograde",
                        description="제출물을 채점합니다: 학생 노트북은 격리된 권한 없는 계정으로 실행하고, 점수는 강의자 쪽에서 매깁니다")
    ap.add_argument("dir", type=Path, help="강좌 폴더 (decodelab classroom init DIR)")
    ap.add_argument("assignment", help="과제 이름 (예: exam-02)")
    ap.add_argument("--student", help="이 학생 하나만 (nbgrader 학생 id)")
    ap.add_argument("--force", action="store_true", help="이미 채점한 제출물도 다시 채점 (강의자의 수동 점수는 남습니다)")
    a = ap.parse_args(argv)
    if not (a.dir / "nbgrader_config.py").is_file():
        print(f"decodelab classroom autograde: {a.dir}에 nbgrader_config.py가 없습니다 "
              "(decodelab classroom init DIR로 만든 강좌 폴더를 주세요)", file=sys.stderr)
        return 2
    try:
        seen = probe()
    except SandboxError as e:
        print(f"decodelab classroom autograde: {e}", file=sys.stderr)
        return 2
    who = {"account": f"채점 계정(uid {seen['uid']})", "userns": f"이 사용자(uid {seen['uid']}), bubblewrap 격리",
           "off": f"이 사용자(uid {seen['uid']}), 격리 없음"}[seen["mode"]]
    print(f"학생 코드는 {who}로 실행합니다: 강좌 폴더, 성적부, 문항 은행은 보이지 않습니다.", flush=True)
    cmd = [sys.executable, "-c", RUN_MODULE, "nbgrader", "autograde", a.assignment]
    if a.student:
        cmd.append(f"--student={a.student}")
    if a.force:
        cmd.append("--force")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.call(cmd, cwd=a.dir, env=env)



def export_command(argv: list[str]) -> int:
    """``decodelab classroom export DIR --lms canvas|moodle -o FILE [--roster CSV]``; prints the report (stderr)."""
    from .._cli import ArgumentParser
    from .lms import export

    ap = ArgumentParser(prog="decodelab classroom export",
                        description="nbgrader 성적부를 LMS(Canvas/Moodle) 가져오기 파일로 씁니다")
    ap.add_argument("dir", type=Path, help="강좌 폴더 (gradebook.db가 있는 곳)")
    ap.add_argument("--lms", required=True, choices=["canvas", "moodle"])
    ap.add_argument("-o", "--output", required=True, type=Path, help="쓸 CSV 파일")
    ap.add_argument("--roster", type=Path, help="LMS의 학생 명단 CSV (Canvas 성적부 내보내기, Moodle 참여자 목록)")
    a = ap.parse_args(argv)
    try:
        report = export(a.dir, a.lms, a.output, roster=a.roster)
    except (ValueError, FileNotFoundError) as e:
        print(e, file=sys.stderr)
        return 2
    print("\n".join(report.lines()), file=sys.stderr)
    print(a.output)
    if a.roster is not None and report.unknown and not report.written:
        print(f"decodelab classroom export: LMS 명단 {a.roster}에서 성적부의 학생을 한 명도 찾지 못했습니다: 명단의 "
              "username / SIS Login ID 열이 허브의 사용자 이름과 같은지 확인하세요.", file=sys.stderr)
        return 1
    return 0


def practice_command(argv: list[str]) -> int:
    """``decodelab classroom practice DIR [-o report.csv]`` (or ``--homes HOMES`` instead of ``DIR``):
    copy each student's own practice file into ``<report>-files/`` beside the report and write the
    practice report of that folder (``decodelab grade``). From ``DIR/submitted/<student>/practice/``
    (``nbgrader collect practice``, :func:`.practice.gather`), or on one server from each home
    ``HOMES/<u>/`` (:func:`.practice.gather_homes`, lecturer/classroom.md §3).

    Returns ``decodelab grade``'s exit code, or 1 when it was 0 but a file was left out (each named
    on stderr with the reason); 2 (Korean message) when there was nothing to report."""
    from .._cli import ArgumentParser, printable
    from ..assess.report import main as grade_main
    from .practice import PRACTICE, gather, gather_homes

    ap = ArgumentParser(prog="decodelab classroom practice",
                        description=f"nbgrader collect {PRACTICE} 로 걷은 연습 답(또는 서버 한 대에서 학생 홈의 제출 파일)으로 "
                                    "연습 보고서를 만듭니다 (성적이 아님)")
    ap.add_argument("dir", type=Path, nargs="?", help="강좌 폴더 (decodelab classroom init DIR)")
    ap.add_argument("--homes", type=Path, help="강좌 폴더 대신 학생 홈들이 든 폴더 (서버 한 대, 보통 /home): "
                                               "홈마다 그 주인 이름의 제출 파일만 가져옵니다")
    ap.add_argument("-o", "--output", type=Path, default=Path("report.csv"), help="연습 보고서 CSV (기본 report.csv)")
    a = ap.parse_args(argv)
    if a.dir is None and a.homes is None:
        ap.error("강좌 폴더(DIR)를 주세요 (서버 한 대에서 학생 홈으로 모으려면 DIR 대신 --homes /home)")
    if a.dir is not None and a.homes is not None:
        ap.error("강좌 폴더(DIR)와 --homes 중 하나만 주세요")
    if a.dir is not None and not a.dir.is_dir():
        print(f"decodelab classroom practice: 강좌 폴더 {a.dir}이(가) 없습니다: decodelab classroom init DIR로 만든 "
              "강좌 폴더를 주세요.", file=sys.stderr)
        return 2
    files = a.output.with_name(f"{a.output.stem}-files")
    try:
        got = gather(a.dir, files) if a.homes is None else gather_homes(a.homes, files)
    except NotADirectoryError as e:
        print(f"decodelab classroom practice: {e}", file=sys.stderr)
        return 2
    for path, why in got.refused:
        print(f"decodelab classroom practice: 뺌: {printable(str(path))}: {printable(why)}", file=sys.stderr)
    if not got.copied:
        hint = (f"학생들이 노트북에서 제출 파일을 내보냈는지 확인하세요 ({a.homes}/<이름>/decodelab-course-<이름>.json)"
                if a.homes is not None else
                f"학생들이 {PRACTICE} 과제를 냈는지, nbgrader collect {PRACTICE} 를 실행했는지 확인하세요 ({a.dir / 'submitted'})")
        print(f"decodelab classroom practice: 보고서에 넣을 연습 답이 없습니다: {hint}.", file=sys.stderr)
        return 2
    print(f"{len(got.copied)}명의 연습 답 -> {files}", file=sys.stderr)
    rc = grade_main([str(files), "-o", str(a.output)])
    return 1 if rc == 0 and got.refused else rc

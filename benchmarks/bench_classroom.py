"""A class on one server: load and fault figures of the course on a real JupyterHub (demo mode).

For each N (default 1, 5, 10) a fresh course directory and hub on loopback; N demo students log
in over HTTP and request their servers at the same moment (one thread each); each, once its
server is ready, opens a kernel on its own copy of notebook 01 (the Jupyter server's sessions API)
and runs notebook 01's first model cell (the one that loads the bundled target/draft pair) over the
kernel websocket. Measured:

- ``last_done_s``: from the spawn requests until the last student's cell has run;
- per student server (the single-user server plus its kernel, found by ``JUPYTERHUB_USER`` in
  the process environment): RSS and USS (memory only that server uses) in MiB, after the cell;
- total: the sum of USS plus the RSS of the hub, proxy and culler, and the drop of the machine's
  ``MemAvailable`` from before the hub started to then (noisy on a shared machine);
- the machine's load average before and after (the servers share the CPUs with everything else).

Then the fault check (on a one-student hub): the student answers two quiz questions through the
quiz widget's own API in the kernel and has typed a third without submitting; the student's
server is killed (SIGKILL of its process group, as an out-of-memory kill would) and started again
through the hub; in a new kernel the answers store and a new quiz widget must show both submitted
answers unchanged (the unsubmitted one is lost by design: nothing is saved before 제출).

Nothing here asserts a time; the exit status is 1 only when something fails (a server that does
not start, a cell error, an answer lost). Needs node + configurable-http-proxy
(``bash scripts/install_hub.sh``) and root or a Linux user that may read its own processes'
environment (psutil).

Usage:
    python benchmarks/bench_classroom.py                 # N = 1, 5, 10 and the fault check
    python benchmarks/bench_classroom.py --n 1 5 --json out.json --no-fault
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import secrets
import signal
import statistics
import sys
import tempfile
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # tests/hubkit.py
import hubkit  # noqa: E402

NOTEBOOK = "01_decode_phase.ipynb"
MIB = 1024 * 1024


def first_model_cell() -> str:
    """Notebook 01's first code cell that loads the bundled pair."""
    for code in hubkit.notebook_code_cells(hubkit.REPO / "notebooks" / NOTEBOOK):
        if "load" in code and "decodelab" in code:
            return code
    raise RuntimeError(f"no model-loading cell in {NOTEBOOK}")


def server_processes(user: str, hub_pid: int) -> list[psutil.Process]:
    """The single-user server of ``user`` under the hub ``hub_pid`` and its kernels (``JUPYTERHUB_USER``
    in their environment)."""
    out = []
    for p in psutil.Process(hub_pid).children(recursive=True):
        try:
            if p.environ().get("JUPYTERHUB_USER") == user:
                out.append(p)
        except (psutil.AccessDenied, psutil.NoSuchProcess, psutil.ZombieProcess):
            continue
    return out


def memory_of(user: str, hub_pid: int) -> tuple[float, float]:
    rss = uss = 0.0
    for p in server_processes(user, hub_pid):
        try:
            info = p.memory_full_info()
        except (psutil.AccessDenied, psutil.NoSuchProcess):
            continue
        rss += info.rss
        uss += info.uss
    return rss / MIB, uss / MIB


def password_pair() -> tuple[str, str]:
    return "bench-" + secrets.token_hex(6), "bench-admin-" + secrets.token_hex(16)


def run_load(n: int, cell: str, root: Path) -> dict:
    names = [f"s{k:02d}" for k in range(1, n + 1)]
    course = root / f"n{n}" / "course"
    hubkit.init_course(course, names)
    pw, admin_pw = password_pair()
    avail_before = psutil.virtual_memory().available / MIB
    load_before = os.getloadavg()
    hub = hubkit.start_hub(course, pw, admin_pw)
    result: dict = {"n": n, "errors": []}
    try:
        students = [hubkit.Student(hub, name) for name in names]
        for s in students:
            s.login(pw)
        done: dict[str, float] = {}
        ready: dict[str, float] = {}
        barrier = threading.Barrier(n)
        t0 = [0.0]

        def one(s: hubkit.Student) -> None:
            try:
                barrier.wait()
                if not t0[0]:
                    t0[0] = time.perf_counter()
                s.spawn()
                s.wait_ready()
                ready[s.name] = time.perf_counter()
                token = s.token()
                kernel = hubkit.start_kernel(hub, s.name, token, NOTEBOOK)
                out = hubkit.run_code(hub, s.name, token, kernel, cell)
                if out["status"] != "ok":
                    raise RuntimeError(out["error"])
                done[s.name] = time.perf_counter()
            except Exception as e:  # noqa: BLE001 - reported, the exit status says it
                result["errors"].append(f"{s.name}: {type(e).__name__}: {str(e)[:400]}")

        threads = [threading.Thread(target=one, args=(s,)) for s in students]
        start = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        start = t0[0] or start
        mem = {name: memory_of(name, hub.proc.pid) for name in names}
        servers = {p.pid for name in names for p in server_processes(name, hub.proc.pid)}
        hub_tree = [psutil.Process(hub.proc.pid), *psutil.Process(hub.proc.pid).children(recursive=True)]
        hub_rss = sum(p.memory_info().rss for p in hub_tree if p.pid not in servers) / MIB
        avail_after = psutil.virtual_memory().available / MIB
        result.update(
            last_ready_s=round(max(ready.values()) - start, 1) if ready else None,
            last_done_s=round(max(done.values()) - start, 1) if done else None,
            median_done_s=round(statistics.median(v - start for v in done.values()), 1) if done else None,
            done=len(done),
            rss_mib_per_server=round(statistics.mean(r for r, _ in mem.values()), 0),
            uss_mib_per_server=round(statistics.mean(u for _, u in mem.values()), 0),
            uss_mib_total=round(sum(u for _, u in mem.values()), 0),
            hub_proxy_culler_rss_mib=round(hub_rss, 0),
            mem_available_drop_mib=round(avail_before - avail_after, 0),
            load_before=[round(x, 2) for x in load_before],
            load_after=[round(x, 2) for x in os.getloadavg()],
        )
    finally:
        hub.stop()
    return result


QUIZ_ANSWER = """
from decodelab.assess.quiz import quiz_widget
w = quiz_widget("01")
ids = list(w.views)
first, second, third = ids[0], ids[1], ids[2]
v = w.views[first]; v.set_response(v.order[0]); v.submit()
v = w.views[second]; v.set_response("한 토큰씩" if v.q.kind == "short" else v.order[0]); v.submit()
w.views[third].set_response(w.views[third].order[0] if w.views[third].order else "3")   # typed, not submitted
import json
print(json.dumps({"ids": [first, second, third], "saved": {q: w.store.get(q)["response"] for q in (first, second)}}))
"""

QUIZ_CHECK = """
import json
from decodelab.assess.quiz import quiz_widget
w = quiz_widget("01")
recs = w.store.load()
print(json.dumps({q: {"response": r["response"], "student": r.get("student")} for q, r in recs.items()}
                 | {"_restored": [q for q, v in w.views.items() if v.saved]}))
"""


def run_fault(root: Path) -> dict:
    course = root / "fault" / "course"
    hubkit.init_course(course, ["s01"])
    pw, admin_pw = password_pair()
    hub = hubkit.start_hub(course, pw, admin_pw)
    try:
        s = hubkit.Student(hub, "s01")
        s.login(pw)
        s.spawn()
        s.wait_ready()
        token = s.token()
        kernel = hubkit.start_kernel(hub, "s01", token, NOTEBOOK)
        out = hubkit.run_code(hub, "s01", token, kernel, QUIZ_ANSWER)
        if out["status"] != "ok":
            raise RuntimeError(out["error"])
        given = json.loads(out["stdout"].strip().splitlines()[-1])
        procs = server_processes("s01", hub.proc.pid)
        groups = {os.getpgid(p.pid) for p in procs}
        for g in groups:
            os.killpg(g, signal.SIGKILL)
        killed = len(procs)
        t_kill = time.perf_counter()
        # the hub sees the dead server at its next poll or when asked to stop it; then start again
        while True:
            r = s.hub_api("DELETE", "/users/s01/server")
            if r.status_code in (204, 400):
                break
            time.sleep(1)
        while (s.hub_api("GET", "/users/s01").json().get("servers") or {}).get(""):
            time.sleep(0.5)
        s.spawn()
        s.wait_ready()
        back_s = time.perf_counter() - t_kill
        kernel = hubkit.start_kernel(hub, "s01", token, NOTEBOOK)
        out = hubkit.run_code(hub, "s01", token, kernel, QUIZ_CHECK)
        if out["status"] != "ok":
            raise RuntimeError(out["error"])
        after = json.loads(out["stdout"].strip().splitlines()[-1])
        kept = {q: after.get(q, {}).get("response") for q in given["saved"]}
        ok = kept == given["saved"] and all(after[q]["student"] == "s01" for q in given["saved"])
        ok = ok and set(given["saved"]) <= set(after["_restored"])
        return {"processes_killed": killed, "answers_given": len(given["saved"]), "answers_after_restart": sum(
            1 for q in given["saved"] if kept[q] == given["saved"][q]), "unsubmitted_kept": given["ids"][2] in after,
            "restart_s": round(back_s, 1), "survived": ok}
    finally:
        hub.stop()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, nargs="+", default=[1, 5, 10], help="numbers of students (default 1 5 10)")
    p.add_argument("--no-fault", action="store_true", help="skip the kill-and-restart check")
    p.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = p.parse_args(argv)
    missing = hubkit.missing_parts()
    if missing:
        print("bench_classroom: missing " + ", ".join(missing), file=sys.stderr)
        return 1
    cell = first_model_cell()
    machine = {"date": datetime.now(timezone.utc).isoformat(timespec="minutes"), "cpus": os.cpu_count(),
               "mem_total_gib": round(psutil.virtual_memory().total / 1024**3, 1), "platform": platform.platform()}
    print(f"machine: {machine}")
    results = {"machine": machine, "load": [], "fault": None}
    failed = False
    with tempfile.TemporaryDirectory(prefix="bench-classroom-") as tmp:
        for n in args.n:
            r = run_load(n, cell, Path(tmp))
            results["load"].append(r)
            failed |= bool(r["errors"])
            print(f"N={n:>3}: last server ready {r['last_ready_s']} s, last cell done {r['last_done_s']} s "
                  f"(median {r['median_done_s']} s, {r['done']}/{n} done); per server RSS {r['rss_mib_per_server']:.0f} MiB, "
                  f"USS {r['uss_mib_per_server']:.0f} MiB; total USS {r['uss_mib_total']:.0f} MiB + hub/proxy/culler RSS "
                  f"{r['hub_proxy_culler_rss_mib']:.0f} MiB, MemAvailable drop "
                  f"{r['mem_available_drop_mib']:.0f} MiB; load {r['load_before']} -> {r['load_after']}")
            for e in r["errors"]:
                print("   error:", e)
        if not args.no_fault:
            f = run_fault(Path(tmp))
            results["fault"] = f
            failed |= not f["survived"]
            print(f"fault: killed {f['processes_killed']} processes mid-quiz; {f['answers_after_restart']}/"
                  f"{f['answers_given']} submitted answers there after the restart ({f['restart_s']} s); "
                  f"unsubmitted answer kept: {f['unsubmitted_kept']}; survived: {f['survived']}")
    base = next((r for r in results["load"] if r["n"] == min(args.n) and r["last_done_s"]), None)
    for r in results["load"]:
        if base and r["last_done_s"] and r is not base:
            r["slowdown_vs_n%d" % base["n"]] = round(r["last_done_s"] / base["last_done_s"], 2)
            print(f"N={r['n']} vs N={base['n']}: last cell done {r['slowdown_vs_n%d' % base['n']]:.2f}x later")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, ensure_ascii=False), encoding="utf-8")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

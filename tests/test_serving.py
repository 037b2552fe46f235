"""decodelab.serving against a real ``transformers serve`` on loopback, broken servers, and /metrics.

Only loopback addresses are used. The real server is started by the fixture on the bundled target
(offline) and stopped at the end; the broken servers are small socket servers in threads.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from decodelab import serving as S
from decodelab._paths import MODELS_DIR as BUNDLED_DIR

pytestmark = pytest.mark.xdist_group("transformers_serve")  # its tests share the module's server

HOST = "127.0.0.1"
TARGET = str(BUNDLED_DIR / "target")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    pytest.importorskip("fastapi", reason="transformers serve needs the transformers[serving] extra")
    srv = S.start_transformers_serve(TARGET, continuous_batching=True)
    try:
        yield srv.url
    finally:
        srv.stop()
        assert not srv.running


def _process(code: str, cwd=None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code], cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def test_wait_until_ready_returns_on_the_first_200(tmp_path):
    port = _free_port()
    proc = _process(f"import http.server as h; h.test(h.SimpleHTTPRequestHandler, port={port}, bind={HOST!r})", tmp_path)
    try:
        assert S.wait_until_ready(f"http://{HOST}:{port}/", proc, 60, poll_s=0.05) is None
        assert proc.poll() is None  # left running
    finally:
        proc.kill()
        proc.wait()


def test_wait_until_ready_names_the_exit_code_or_the_time_waited():
    url = f"http://{HOST}:{_free_port()}/health"  # nothing listens there
    proc = _process("raise SystemExit(3)")
    with pytest.raises(S.ServingError, match=r"^내 서버: 시작하자마자 끝났습니다 \(종료 코드 3\)"):
        S.wait_until_ready(url, proc, 60, what="내 서버", poll_s=0.05)
    proc = _process("import time; time.sleep(60)")
    try:
        with pytest.raises(S.ServingError, match=r"0\.2초 안에 준비되지 않았습니다 .*/health"):
            S.wait_until_ready(url, proc, 0.2, poll_s=0.05)
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.wait()


def test_local_server_only_on_loopback(tmp_path):
    with pytest.raises(ValueError, match="이 컴퓨터 안에서만"):
        S.start_transformers_serve(host="0.0.0.0")
    with pytest.raises(FileNotFoundError):
        S.start_transformers_serve(tmp_path / "missing")


# A stand-in for the `transformers` command: `serve FOLDER --host H --port P ...` binds P the way
# uvicorn does (after start-up) and answers /health, or prints uvicorn's message and exits 1 when P
# is taken.
FAKE_SERVE = """#!{python}
import http.server, sys
port = int(sys.argv[sys.argv.index("--port") + 1])
class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b"ok")
try:
    httpd = http.server.HTTPServer(("127.0.0.1", port), Health)
except OSError as e:
    print(f"ERROR:    [Errno {{e.errno}}] error while attempting to bind on address ('127.0.0.1', {{port}}): address already in use")
    sys.exit(1)
httpd.serve_forever()
"""


@pytest.fixture
def fake_serve(tmp_path, monkeypatch):
    pytest.importorskip("fastapi", reason="start_transformers_serve checks for the transformers[serving] extra")
    cli = tmp_path / "transformers"
    cli.write_text(FAKE_SERVE.format(python=sys.executable), encoding="utf-8")
    cli.chmod(0o755)
    monkeypatch.setattr(S, "_transformers_cli", lambda: str(cli))
    taken = socket.socket()
    taken.bind((HOST, 0))  # bound, not listening: a bind there fails, a connection is refused at once
    yield taken.getsockname()[1]
    taken.close()


def test_a_port_taken_before_the_server_binds_it_means_another_free_port(fake_serve, monkeypatch):
    """Seen in a parallel test run: the free port was taken in the seconds before `transformers
    serve` bound it ("address already in use"), and notebook 07 failed at its first cell."""
    free = _free_port()
    ports = iter([fake_serve, free])
    monkeypatch.setattr(S, "_free_port", lambda host: next(ports))
    with S.start_transformers_serve(TARGET) as srv:
        assert srv.url == f"http://{HOST}:{free}" and srv.running


def test_a_taken_port_is_named_with_what_to_change(fake_serve, monkeypatch):
    with pytest.raises(S.ServingError, match=rf"포트 {fake_serve}을\(를\) 이미 다른 프로그램이 쓰고 있습니다: 다른 port를 주거나"):
        S.start_transformers_serve(TARGET, port=fake_serve)
    monkeypatch.setattr(S, "_free_port", lambda host: fake_serve)  # every free port is taken in time
    with pytest.raises(S.ServingError, match=rf"빈 포트를 {S._PORT_TRIES}번 골랐지만"):
        S.start_transformers_serve(TARGET)


# ------------------------------------------------------------------ the real server

@pytest.mark.slow  # starts the module's server (about 14 s here, mostly waiting)
def test_one_request_has_vllm_timings_and_exactly_max_tokens(server):
    assert S.server_model(server) == TARGET
    r = S.measure_request(server, "모든 국민은", max_tokens=8)
    assert r.tokens_from_usage and r.output_tokens == 8 and r.finish_reason == "length"
    assert r.ttft_ms > 0 and r.e2e_ms > r.ttft_ms
    assert all(g >= 0 for g in r.itl_ms)
    # vLLM: E2E is the last chunk's time, so TTFT + all gaps == E2E; TPOT = (E2E - TTFT) / (n - 1)
    assert r.ttft_ms + sum(r.itl_ms) == pytest.approx(r.e2e_ms, rel=1e-9)
    assert r.tpot_ms == pytest.approx((r.e2e_ms - r.ttft_ms) / 7)
    assert r.text.strip()
    # the same greedy text as decodelab.generate on the bundled target (server = same weights)
    again = S.measure_request(server, "모든 국민은", max_tokens=8)
    assert again.text == r.text


def test_sweep_rows_and_the_command_line(server, capsys):
    rows, spec = S.sweep(server, concurrency=[1, 2], max_tokens=6, requests_per_level=2)
    assert spec is None  # transformers serve has no vLLM speculative-decoding counters
    assert [(row.concurrency, row.requests, row.output_tokens) for row in rows] == [(1, 2, 12), (2, 2, 12)]
    for row in rows:
        assert row.output_tokens_per_s == pytest.approx(row.output_tokens / row.duration_s)
        assert row.median_ttft_ms > 0 and row.mean_tpot_ms > 0 and len(row.results) == 2
        assert row.mean_tpot_ms == pytest.approx(sum(r.tpot_ms for r in row.results) / 2)
    code = S.main(["--endpoint", server + "/v1", "--concurrency", "1,2", "--max-tokens", "4", "--requests", "2", "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert [row["concurrency"] for row in out["rows"]] == [1, 2]
    assert all(req["output_tokens"] == 4 and req["ttft_ms"] > 0 for row in out["rows"] for req in row["results"])
    assert S.main(["--endpoint", server, "--concurrency", "1", "--max-tokens", "3", "--requests", "1"]) == 0
    text = capsys.readouterr().out
    assert "TTFT" in text and "처리량(tokens/s)" in text


def test_wrong_model_name_is_a_clear_error(server):
    with pytest.raises(S.ServingError, match="HTTP 400"):
        S.measure_request(server, "모든 국민은", model="no-such-model", max_tokens=2)


# ------------------------------------------------------------------ broken servers

class _RawServer:
    """A one-shot TCP server in a thread that answers every connection with ``script(conn)``."""

    def __init__(self, script):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((HOST, 0))
        self.sock.listen(8)
        self.url = f"http://{HOST}:{self.sock.getsockname()[1]}"
        self.script = script
        self.stop = threading.Event()
        threading.Thread(target=self._loop, daemon=True).start()

    def _loop(self):
        self.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn):
        try:
            data = b""
            while b"\r\n\r\n" not in data:  # read the whole request before answering
                data += conn.recv(65536)
            head, body = data.split(b"\r\n\r\n", 1)
            length = int(next((ln.split(b":")[1] for ln in head.split(b"\r\n") if ln.lower().startswith(b"content-length")), 0))
            while len(body) < length:
                body += conn.recv(65536)
            self.script(conn, self.stop)
        except OSError:
            pass
        finally:
            conn.close()

    def close(self):
        self.stop.set()
        self.sock.close()


def _chunk(payload: str) -> bytes:
    data = payload.encode()
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def _sse(text: str) -> str:
    return "data: " + json.dumps({"id": "x", "object": "text_completion", "created": 0, "model": "m",
                                  "choices": [{"index": 0, "text": text, "finish_reason": None}]}) + "\n\n"


HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"


def _drop(conn, stop):  # two tokens, then the connection is cut without the closing chunk
    conn.sendall(HEAD + _chunk(_sse("가")) + _chunk(_sse("나")))


def _stall(conn, stop):  # one token, then silence with the connection open
    conn.sendall(HEAD + _chunk(_sse("가")))
    stop.wait(30)


def _close_early(conn, stop):  # no chunked framing: the body ends when the connection closes
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
                 + _sse("가").encode())


def _bounded(fn, limit_s=25.0):
    """Run ``fn`` in a thread; fail if it is still running after ``limit_s`` (a hang, not a timing)."""
    box = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            box["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(limit_s)
    assert not t.is_alive(), "the client hung instead of failing within its timeouts"
    return box


@pytest.mark.parametrize("script,pattern", [
    (_drop, "연결을 끊었습니다"),
    (_stall, "제한 시간"),
    (_close_early, "끝 표시"),
])
def test_broken_streams_give_a_korean_error_and_no_hang(script, pattern):
    srv = _RawServer(script)
    try:
        box = _bounded(lambda: S.measure_request(srv.url, "모든 국민은", model="m", max_tokens=8, timeout_s=1.5))
    finally:
        srv.close()
    assert isinstance(box.get("error"), S.ServingError), box
    assert pattern in str(box["error"])


def _not_json(conn, stop):  # a chunk that is not JSON
    conn.sendall(HEAD + _chunk(_sse("가")) + _chunk("data: {not json\n\n"))
    stop.wait(0.5)


def _choices_dict(conn, stop):  # "choices" is an object, not a list
    conn.sendall(HEAD + _chunk('data: {"id": "x", "object": "text_completion", "created": 0, "model": "m", '
                               '"choices": {"a": 1}}\n\n'))
    stop.wait(0.5)


def _keepalive(conn, stop):  # one token, then only SSE comments, each well within the read timeout
    conn.sendall(HEAD + _chunk(_sse("가")))
    while not stop.wait(0.3):
        conn.sendall(_chunk(": keepalive\n\n"))


def _status(code):
    def script(conn, stop):
        body = json.dumps({"error": {"message": "boom", "type": "x"}}).encode()
        conn.sendall(f"HTTP/1.1 {code} X\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
                     f"Connection: close\r\n\r\n".encode() + body)
    return script


@pytest.mark.parametrize("script,pattern", [
    (_not_json, "스트림 조각이 JSON이 아닙니다"),
    (_choices_dict, "OpenAI 형식과 다릅니다"),
    (_status(500), "서버 내부 오류"),
    (_status(429), "--concurrency"),
])
def test_server_faults_are_korean_errors_and_exit_1(script, pattern, capsys):
    srv = _RawServer(script)
    try:
        box = _bounded(lambda: S.measure_request(srv.url, "모든 국민은", model="m", max_tokens=8, timeout_s=3))
        assert S.main(["--endpoint", srv.url, "--model", "m", "--concurrency", "1", "--requests", "1",
                       "--timeout", "3"]) == 1
    finally:
        srv.close()
    assert isinstance(box.get("error"), S.ServingError), box
    assert pattern in str(box["error"]) and "max_tokens를 확인" not in str(box["error"])
    err = capsys.readouterr().err
    assert pattern in err and "Traceback" not in err and "KeyError" not in err


def test_timeout_bounds_the_whole_request_not_each_read():
    srv = _RawServer(_keepalive)
    t0 = time.monotonic()
    try:
        box = _bounded(lambda: S.measure_request(srv.url, "모든 국민은", model="m", max_tokens=8, timeout_s=1.5))
    finally:
        srv.close()
    assert isinstance(box.get("error"), S.ServingError), box
    assert "제한 시간 1.5초 안에 끝나지 않았습니다" in str(box["error"]) and "스트림이 멈춤" not in str(box["error"])
    assert time.monotonic() - t0 < 20  # a hang guard (keep-alives would hold a per-read timeout forever)


@pytest.mark.parametrize("library", ["httpx", "httpx2"])
def test_a_full_accept_queue_is_not_called_a_stalled_stream(library):
    """openai 3.x raises through httpx2, openai 1.x through httpx: both libraries' errors are named."""
    http = pytest.importorskip(library)
    err = S._wrap(http.ConnectTimeout("timed out"), "http://127.0.0.1:9")
    assert "연결을 받지 않았습니다" in str(err) and "스트림이 멈춤" not in str(err)
    err = S._wrap(http.RemoteProtocolError("peer closed connection"), "http://127.0.0.1:9")
    assert "연결을 끊었습니다" in str(err)
    assert issubclass(http.ReadError, S._errors())


def test_the_client_takes_the_timeout_of_the_http_library_openai_is_built_on():
    """A client with the connect and the overall timeout set (httpx2 2.17 refuses httpx's Timeout)."""
    client = S._client("http://127.0.0.1:9", 7.5, None)
    assert (client.timeout.read, client.timeout.connect) == (7.5, min(S.CONNECT_TIMEOUT_S, 7.5))
    assert client.max_retries == 0


def test_nothing_listening_is_a_connection_error():
    port = _free_port()
    box = _bounded(lambda: S.measure_request(f"http://{HOST}:{port}", "모든 국민은", model="m", timeout_s=2))
    assert isinstance(box.get("error"), S.ServingError) and "연결하지 못했습니다" in str(box["error"])
    assert S.main(["--endpoint", f"http://{HOST}:{port}", "--model", "m", "--concurrency", "1", "--timeout", "2"]) == 1


def test_bad_options_are_value_errors(capsys):
    for bad in (dict(max_tokens=0), dict(timeout_s=0), dict(timeout_s=float("inf"))):
        with pytest.raises(ValueError, match=r"=.*: .* \(허용: "):
            S.measure_request("http://127.0.0.1:1", "x", model="m", **bad)
    for bad in (dict(max_tokens=True), dict(max_tokens="8"), dict(timeout_s="5")):  # wrong types
        with pytest.raises(TypeError):
            S.measure_request("http://127.0.0.1:1", "x", model="m", **bad)
    with pytest.raises(ValueError, match="1,2,4,8"):
        S.sweep("http://127.0.0.1:1", concurrency="1,a")
    with pytest.raises(ValueError, match="동시 요청 수"):
        S.sweep("http://127.0.0.1:1", concurrency=[0])
    with pytest.raises(ValueError, match="http://"):
        S.base_url("127.0.0.1:8000")
    with pytest.raises(TypeError):
        S.base_url(8000)
    assert S.main(["--endpoint", "ftp://x", "--concurrency", "1"]) == 2
    assert "http://" in capsys.readouterr().err
    assert S.base_url("http://127.0.0.1:8000") == "http://127.0.0.1:8000/v1"
    assert S.base_url("http://127.0.0.1:8000/v1/") == "http://127.0.0.1:8000/v1"
    assert S.base_url("http://h:1/v1/chat/completions") == "http://h:1/v1"


# ------------------------------------------------------------------ vLLM's /metrics

# vLLM's Prometheus exposition (prometheus_client text format, counters named in
# vllm/v1/spec_decode/metrics.py), two engines, num_speculative_tokens = 3.
VLLM_METRICS = """\
# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="Qwen/Qwen2.5-7B-Instruct"} 0.0
# HELP vllm:spec_decode_num_drafts_total Number of spec decoding drafts.
# TYPE vllm:spec_decode_num_drafts_total counter
vllm:spec_decode_num_drafts_total{engine="0",model_name="Qwen/Qwen2.5-7B-Instruct"} 60.0
vllm:spec_decode_num_drafts_total{engine="1",model_name="Qwen/Qwen2.5-7B-Instruct"} 40.0
# HELP vllm:spec_decode_num_drafts_created Number of spec decoding drafts.
# TYPE vllm:spec_decode_num_drafts_created gauge
vllm:spec_decode_num_drafts_created{engine="0",model_name="Qwen/Qwen2.5-7B-Instruct"} 1.7e+09
# HELP vllm:spec_decode_num_draft_tokens_total Number of draft tokens.
# TYPE vllm:spec_decode_num_draft_tokens_total counter
vllm:spec_decode_num_draft_tokens_total{engine="0",model_name="Qwen/Qwen2.5-7B-Instruct"} 180.0
vllm:spec_decode_num_draft_tokens_total{engine="1",model_name="Qwen/Qwen2.5-7B-Instruct"} 120.0
# HELP vllm:spec_decode_num_accepted_tokens_total Number of accepted tokens.
# TYPE vllm:spec_decode_num_accepted_tokens_total counter
vllm:spec_decode_num_accepted_tokens_total{engine="0",model_name="Qwen/Qwen2.5-7B-Instruct"} 120.0
vllm:spec_decode_num_accepted_tokens_total{engine="1",model_name="Qwen/Qwen2.5-7B-Instruct"} 60.0
# HELP vllm:spec_decode_num_accepted_tokens_per_pos_total Accepted tokens per draft position.
# TYPE vllm:spec_decode_num_accepted_tokens_per_pos_total counter
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="Qwen/Qwen2.5-7B-Instruct",position="0"} 50.0
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="Qwen/Qwen2.5-7B-Instruct",position="1"} 40.0
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="Qwen/Qwen2.5-7B-Instruct",position="2"} 30.0
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="1",model_name="Qwen/Qwen2.5-7B-Instruct",position="0"} 30.0
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="1",model_name="Qwen/Qwen2.5-7B-Instruct",position="1"} 20.0
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="1",model_name="Qwen/Qwen2.5-7B-Instruct",position="2"} 10.0
"""


def test_parse_vllm_spec_decode_counters():
    s = S.parse_spec_decode_metrics(VLLM_METRICS)
    assert (s.num_drafts, s.num_draft_tokens, s.num_accepted_tokens) == (100.0, 300.0, 180.0)
    assert s.accepted_per_position == [80.0, 60.0, 40.0]
    assert s.acceptance_rate == pytest.approx(0.6)          # 180 / 300
    assert s.mean_acceptance_length == pytest.approx(2.8)   # 1 + 180 / 100
    assert s.per_position_acceptance == pytest.approx([0.8, 0.6, 0.4])
    # the per-position counts add up to the accepted tokens (vLLM counts both per draft)
    assert sum(s.accepted_per_position) == s.num_accepted_tokens
    assert S.parse_spec_decode_metrics("# TYPE up gauge\nup 1\n") is None
    with pytest.raises(ValueError, match="Prometheus"):
        S.parse_spec_decode_metrics("vllm:spec_decode_num_drafts_total{engine= 1 2 3\n")
    d = s - S.SpecDecodeStats(50.0, 150.0, 100.0, [40.0, 35.0, 25.0])
    assert (d.acceptance_rate, d.mean_acceptance_length) == (pytest.approx(80 / 150), pytest.approx(2.6))  # 1 + 80 / 50
    assert S.SpecDecodeStats(0, 0, 0, []).acceptance_rate is None


class _FakeVLLM(BaseHTTPRequestHandler):
    """A minimal OpenAI-compatible server with vLLM's counters, each request adding 2 drafts."""

    drafts = 0

    def log_message(self, *args):
        pass

    def _send(self, body: bytes, ctype: str):
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/v1/models":
            self._send(json.dumps({"object": "list", "data": [{"id": "fake", "object": "model", "created": 0,
                                                               "owned_by": "t"}]}).encode(), "application/json")
        elif self.path == "/metrics":
            n = type(self).drafts
            text = (f"# TYPE vllm:spec_decode_num_drafts_total counter\nvllm:spec_decode_num_drafts_total{{engine=\"0\"}} {n}\n"
                    f"# TYPE vllm:spec_decode_num_draft_tokens_total counter\nvllm:spec_decode_num_draft_tokens_total{{engine=\"0\"}} {3 * n}\n"
                    f"# TYPE vllm:spec_decode_num_accepted_tokens_total counter\nvllm:spec_decode_num_accepted_tokens_total{{engine=\"0\"}} {2 * n}\n")
            self._send(text.encode(), "text/plain; version=0.0.4")
        else:
            self.send_error(404)

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).drafts += 2
        n = body["max_tokens"]
        events = [_sse(f"t{i}") for i in range(n - 1)]
        last = {"id": "x", "object": "text_completion", "created": 0, "model": "fake",
                "choices": [{"index": 0, "text": "끝", "finish_reason": "length"}]}
        usage = {"id": "x", "object": "text_completion", "created": 0, "model": "fake", "choices": [],
                 "usage": {"completion_tokens": n, "prompt_tokens": 3, "total_tokens": n + 3}}
        events += ["data: " + json.dumps(last) + "\n\n", "data: " + json.dumps(usage) + "\n\n", "data: [DONE]\n\n"]
        self._send("".join(events).encode(), "text/event-stream")


def test_sweep_reports_acceptance_from_the_servers_counters():
    _FakeVLLM.drafts = 7  # counters already running before the sweep: only the change counts
    httpd = ThreadingHTTPServer((HOST, 0), _FakeVLLM)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://{HOST}:{httpd.server_address[1]}"
    try:
        rows, spec = S.sweep(url, concurrency=[1, 2], max_tokens=5, requests_per_level=2, warmup=False)
    finally:
        httpd.shutdown()
        httpd.server_close()
    # 4 requests x 2 drafts; 3 draft tokens and 2 accepted per draft
    assert (spec.num_drafts, spec.num_draft_tokens, spec.num_accepted_tokens) == (8, 24, 16)
    assert spec.acceptance_rate == pytest.approx(2 / 3) and spec.mean_acceptance_length == pytest.approx(3.0)
    assert [r.output_tokens for row in rows for r in row.results] == [5, 5, 5, 5]
    # the usage chunk carries no choice: 5 chunks with a choice -> 4 gaps, as vLLM counts them
    assert all(len(r.itl_ms) == 4 and r.tokens_from_usage for row in rows for r in row.results)


def test_measure_is_a_decodelab_command(capsys):
    from decodelab.tools import cli

    assert cli.main(["--help"]) == 0
    assert "measure" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        cli.main(["measure", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "--endpoint" in out and "--concurrency" in out and "--json" in out
    assert "이 도움말을 보여 주고 끝냅니다" in out and "옵션:" in out
    assert "show this help" not in out and "options:" not in out


@pytest.mark.parametrize("argv, message", [
    ([], "--endpoint가 필요합니다"),
    (["--endpoint", "x", "--max-tokens", "abc"], "옵션 --max-tokens: 숫자를 주세요"),
    (["--endpoint", "x", "--concurrency"], "옵션 --concurrency: 옵션 뒤에 값을 하나 주세요"),
])
def test_measure_usage_errors_are_korean(argv, message, capsys):
    from decodelab.serving import main

    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert message in err and err.startswith("사용법: decodelab measure")

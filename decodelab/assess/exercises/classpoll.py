"""The student's side of the class poll: a committed prediction also goes to the course's JupyterHub
service ``decodelab-polls`` (:mod:`decodelab.classroom.polls`), so the lecturer sees the room's
answers before the reveal.

Only on a hub: a kernel whose environment holds ``JUPYTERHUB_API_TOKEN`` (the server's token, set
by JupyterHub) and ``DECODELAB_POLLS_URL`` (the service's loopback URL, set by the course's
``jupyterhub_config.py``). Elsewhere (a student alone, ``decodelab lab``) :func:`hub_endpoint` is
None and nothing is sent. Who answered is decided by the service from the token (it asks the hub
whose token it is); the request carries only the item and the value, never a name.

Standard library only (``urllib``): :mod:`decodelab.assess` imports no classroom code and the
library does not depend on an HTTP client. The same :func:`request` serves the lecturer's widget
(:mod:`decodelab.classroom.polls_view`).
"""

from __future__ import annotations

import json
import os
import threading
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any, Callable

__all__ = ["POLLS_URL_ENV", "PollUnavailable", "SendResult", "hub_endpoint", "request", "send_in_background",
           "send_prediction"]

#: the service's URL in the kernel's environment (``http://127.0.0.1:PORT/services/decodelab-polls``)
POLLS_URL_ENV = "DECODELAB_POLLS_URL"
#: seconds one request may take before the student's side gives up (the local answer is saved before)
SEND_TIMEOUT_S = 3.0


class PollUnavailable(RuntimeError):
    """The service could not be reached or did not answer in time (a Korean message)."""


@dataclass(frozen=True)
class SendResult:
    """What the service answered to one prediction: ``status`` (HTTP code) and its JSON ``body``
    (``{"item", "student", "value", "answered_at"}`` on 200; ``{"error": Korean text}`` otherwise)."""

    status: int
    body: dict

    @property
    def ok(self) -> bool:
        return self.status == 200



class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is answered as the HTTP error it is: never followed with the hub token."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: ARG002
        return None


#: the hub token goes to the poll's own address only: no proxy from ``http_proxy``/``HTTP_PROXY``
#: (urllib would send the ``Authorization`` header there, in clear text) and no redirect
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect)


def hub_endpoint(environ: dict | None = None) -> tuple[str, str] | None:
    """``(service_url, token)`` when this kernel runs on the course's hub, else None.

    Both ``$DECODELAB_POLLS_URL`` and ``$JUPYTERHUB_API_TOKEN`` must be set (and the URL must be
    http(s)); ``$JUPYTERHUB_USER`` is not read: the service takes the name from the hub.
    """
    env = os.environ if environ is None else environ
    url, token = env.get(POLLS_URL_ENV, "").strip(), env.get("JUPYTERHUB_API_TOKEN", "").strip()
    if not url or not token or urllib.parse.urlsplit(url).scheme not in ("http", "https"):
        return None
    return url.rstrip("/"), token


def request(method: str, path: str, body: dict | None = None, *, endpoint: tuple[str, str] | None = None,
            timeout_s: float = SEND_TIMEOUT_S) -> SendResult:
    """One call to the service: ``method`` ``{url}/api/{path}`` with the hub token in the
    ``Authorization`` header and ``body`` as JSON.

    Args:
        endpoint: ``(url, token)``; default :func:`hub_endpoint` (raises PollUnavailable without one).
        timeout_s: seconds for connecting and for the answer.

    Returns:
        the status and the JSON answer (HTTP errors too: 400/403/409 come back as a result).

    Raises:
        PollUnavailable: (Korean) no hub, no connection, a timeout, or an answer that is not JSON.
    """
    endpoint = endpoint or hub_endpoint()
    if endpoint is None:
        raise PollUnavailable("JupyterHub 강좌 서버에서만 쓸 수 있습니다 (이 커널에는 허브 토큰이나 수업 서버 주소가 없습니다).")
    url, token = endpoint
    data = None if body is None else json.dumps(body).encode("utf-8")
    req = urllib.request.Request(f"{url}/api/{path.lstrip('/')}", data=data, method=method.upper(),
                                 headers={"Authorization": f"token {token}", "Content-Type": "application/json",
                                          "Accept": "application/json"})
    try:
        with _OPENER.open(req, timeout=timeout_s) as r:  # http(s) only (hub_endpoint)
            status, raw = r.status, r.read()
    except urllib.error.HTTPError as e:
        status, raw = e.code, e.read()
    except (OSError, ValueError) as e:  # URLError, timeouts, refused connections, a bad URL
        raise PollUnavailable(f"수업 서버에 닿지 못했습니다 ({getattr(e, 'reason', e)}).") from None
    try:
        answer = json.loads(raw or b"{}")
    except ValueError:
        raise PollUnavailable(f"수업 서버의 답을 읽지 못했습니다 (HTTP {status}).") from None
    return SendResult(status, answer if isinstance(answer, dict) else {"data": answer})


def send_prediction(exercise_id: str, value: Any, *, endpoint: tuple[str, str] | None = None,
                    timeout_s: float = SEND_TIMEOUT_S) -> SendResult | None:
    """Send a committed prediction (a float or a choice id) for item ``exercise_id``.

    Returns None (and sends nothing) without a hub (:func:`hub_endpoint`), else the service's answer.

    Raises:
        PollUnavailable: the service could not be reached (the caller's local answer is already saved).
    """
    endpoint = endpoint or hub_endpoint()
    if endpoint is None:
        return None
    return request("POST", f"answers/{urllib.parse.quote(exercise_id, safe='')}", {"value": value},
                   endpoint=endpoint, timeout_s=timeout_s)


def failure_note(result: SendResult | None, error: Exception | None) -> str | None:
    """The quiet Korean line a student sees when the class poll did not take the prediction
    (None when it did, or when there is no hub)."""
    saved = "내 예측은 이 컴퓨터에 그대로 저장되어 있습니다."
    if error is not None:
        return f"수업 집계에 예측을 보내지 못했습니다: {error} {saved}"
    if result is None or result.ok:
        return None
    if result.status == 409:
        return f"강의자가 이 질문의 집계를 마감해서 수업 집계에는 들어가지 않았습니다. {saved}"
    why = result.body.get("error") or f"HTTP {result.status}"
    return f"수업 집계에 예측이 들어가지 않았습니다 ({why}). {saved}"


def send_in_background(exercise_id: str, value: Any, on_done: Callable[[SendResult | None, Exception | None], None]
                       | None = None) -> threading.Thread | None:
    """:func:`send_prediction` in a daemon thread (the caller never waits for the network); then
    ``on_done(result, error)`` in that thread. Returns the started thread, or None without a hub."""
    endpoint = hub_endpoint()
    if endpoint is None:
        return None

    def run() -> None:
        result, error = None, None
        try:
            result = send_prediction(exercise_id, value, endpoint=endpoint)
        except PollUnavailable as e:
            error = e
        if on_done is not None:
            try:
                on_done(result, error)
            except Exception:  # noqa: BLE001 - a display problem never reaches the student as a traceback
                pass

    thread = threading.Thread(target=run, name=f"decodelab-poll-{exercise_id}", daemon=True)
    thread.start()
    return thread

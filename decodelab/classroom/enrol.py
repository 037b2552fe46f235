"""Each student enrolled in ngshare's course when their server starts: one home for both hubs.

ngshare (nbgrader's exchange, :mod:`.ngshare_service`) lets a hub user fetch and submit only in a
course that lists them as a student, and only ngshare's admins may make a course or, in a course
made without instructors, enrol anyone. ngshare's admins are names (``--admins=``), and ngshare
takes a token's name from the hub (``GET /hub/api/user``): a hub *service*'s token is known by the
service's name, so an API-token-only service named in ``--admins=`` is an admin no one can log in
as. :func:`pre_spawn_hook` wraps a spawner's hook so that, at every spawn, that token makes the
course (made on first use) and enrols the user starting a server (``POST /course/<course>`` then
``POST /student/<course>/<name>``). ngshare's answers and network failures are logged, never
raised: a failed enrolment never stops a student's server (nbgrader's fetch and submit then fail,
and the log says why).

Two hubs use it, so it imports the standard library and tornado (JupyterHub's own dependency)
only, never decodelab:

- **one server**: :func:`decodelab.classroom.exchange.pre_spawn_hook` calls :func:`enrol` with the
  grader service's token (``formgrader``, ngshare's admin there);
- **Zero to JupyterHub** (classroom/config.yaml): the chart's hub image has no decodelab; this file
  is mounted beside the chart's ``jupyterhub_config.py`` (``--set-file
  hub.extraFiles.decodelab-enrol.stringData=decodelab/classroom/enrol.py``, importable there as
  ``decodelab_enrol``), and ``hub.extraConfig`` wraps the spawner's hook with :func:`pre_spawn_hook`
  and the token the chart made for the service ``decodelab-enrol`` (ngshare's admin in
  classroom/k8s/ngshare.yaml). The sign-up form refuses that name (``decodelab-*``:
  decodelab/classroom/auth.py), and config-lti.yaml blocks it.
"""

from __future__ import annotations

import inspect
import json
from typing import Callable
from urllib.parse import quote, urlencode

__all__ = ["enrol", "pre_spawn_hook"]

#: seconds one request to ngshare may take (a spawn waits at most twice this for enrolment)
TIMEOUT_S = 30


async def post(url: str, token: str, log, **fields: str) -> bool:
    """POST ``fields`` (form-encoded) to ngshare's ``url`` with the hub API ``token``.

    Returns:
        True when ngshare answers ``success``; False otherwise, logged with ``log.error`` (except
        HTTP 409, "already exists": an existing course, or an instructor enrolled as a student).
    """
    from tornado.httpclient import AsyncHTTPClient, HTTPClientError

    try:
        r = await AsyncHTTPClient().fetch(url, method="POST", body=urlencode(fields),
                                          headers={"Authorization": f"token {token}",
                                                   "Content-Type": "application/x-www-form-urlencoded"},
                                          raise_error=False, request_timeout=TIMEOUT_S)
    except (OSError, HTTPClientError) as e:
        log.error("decodelab: ngshare %s: %s", url, e)
        return False
    try:
        answer = json.loads(r.body or b"{}")
    except ValueError:
        log.error("decodelab: ngshare %s answered %s", url, r.code)
        return False
    if not answer.get("success") and r.code != 409:
        log.error("decodelab: ngshare %s answered %s: %s", url, r.code, answer.get("message"))
    return bool(answer.get("success"))


async def enrol(ngshare_url: str, token: str, course_id: str, name: str, log) -> bool:
    """Make ngshare's course ``course_id`` when missing and enrol hub user ``name`` in it as a student.

    Args:
        ngshare_url: ngshare's API root, e.g. ``http://ngshare:8080/services/ngshare``.
        token: a hub API token whose owner is one of ngshare's ``--admins``.
        log: a logger (the spawner's); failures go to ``log.error``.

    Returns:
        True when ``name`` is enrolled (also when they were before); False, logged, otherwise.
    """
    course = quote(course_id, safe="")
    await post(f"{ngshare_url}/course/{course}", token, log)  # False once it exists
    # ngshare 0.6 refuses an enrolment without these three fields (HTTP 400); the hub knows none
    ok = await post(f"{ngshare_url}/student/{course}/{quote(name, safe='')}", token, log,
                    first_name="", last_name="", email="")
    if not ok:
        log.error("decodelab: %s is not enrolled in ngshare's course %s: fetch and submit will fail", name, course_id)
    return ok


def pre_spawn_hook(inner: Callable | None, ngshare_url: str, token: str, course_id: str = "decodelab") -> Callable:
    """A spawner ``pre_spawn_hook`` that runs ``inner`` (sync or async; None for none), then
    :func:`enrol`\\ s the spawning user (``spawner.user.name``) in ``course_id``; its failures are
    logged (``spawner.log``), never raised."""

    async def hook(spawner) -> None:
        if inner is not None:
            result = inner(spawner)
            if inspect.isawaitable(result):
                await result
        await enrol(ngshare_url, token, course_id, spawner.user.name, spawner.log)

    return hook

"""The class poll: the course's JupyterHub service ``decodelab-polls`` that collects the students'
committed predictions (``ex.predict``), so the lecturer can show the room's answers before the
reveal (peer instruction: ask, show the distribution, discuss, reveal; lecturer/classroom.md).

``python -m decodelab.classroom.polls --db STATE/polls.sqlite`` is the ``command`` of the service
that ``decodelab classroom init`` registers (:func:`hub_services`, both modes). It runs as the
hub's user (root), listens on the loopback host of its service URL only, and authenticates every
request with JupyterHub's own :class:`jupyterhub.services.auth.HubAuth`: the token in the
``Authorization`` header is sent to the hub, and the hub's answer names the user. No cookie is
accepted (so no other site can make a student's browser post), no name is read from a request.
On Zero to JupyterHub the same command runs in its own pod (classroom/k8s/class-poll.yaml) with
``--listen-all`` (every interface of the pod; :func:`listen_address`), registered in
classroom/config.yaml as a URL-only service.

API (under ``/services/decodelab-polls/api/``, JSON):

=========================================  ==========  =============================================
``POST answers/ITEM`` ``{"value": v}``     any user    the caller's answer (the latest one counts);
                                                       400 bad value or extra fields, 404 unknown
                                                       item, 409 the item is closed
``GET answers/ITEM``                       any user    the caller's own answer (404 without one)
``GET items``                              lecturer    every item with answers or a state
``GET items/ITEM[?names=1]``               lecturer    state, count, the values (numbers sorted,
                                                       choices counted), the revealed value; names
                                                       only with ``names=1``
``POST items/ITEM/open|close|reset``       lecturer    reset deletes the item's answers and reveal
``POST items/ITEM/reveal`` ``{"value"}``   lecturer    record the measured value (and close)
=========================================  ==========  =============================================

The lecturer is a hub admin (``c.Authenticator.admin_users``: the course's lecturer) or a member
of the hub group :data:`INSTRUCTOR_GROUP`; the service asks the hub with its own token (scopes
``read:users:name`` and ``read:users:groups``). An item is open until the lecturer closes it.

Data: SQLite through SQLAlchemy in ``STATE/polls.sqlite`` (the course's ``state/``, mode 0700,
root's), the file mode 0600, WAL journal with ``synchronous=FULL``; each answer is one
``BEGIN IMMEDIATE`` transaction (read the item's state, upsert the answer) committed before the
service replies, so an answer the student was told is in survives a restart of the hub.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

__all__ = ["INSTRUCTOR_GROUP", "PORT", "PORT_ENV", "SERVICE", "ItemClosed", "PollStore", "hub_services", "listen_address", "main",
           "make_app"]

SERVICE = "decodelab-polls"
#: the service's loopback port (``$DECODELAB_POLLS_PORT`` of the hub overrides it: tests, two courses)
PORT = 10103
PORT_ENV = "DECODELAB_POLLS_PORT"
#: hub group whose members may read and steer the poll besides the admins (teaching assistants)
INSTRUCTOR_GROUP = "instructors"
#: the scope a token needs to reach the service (the students' server tokens get it, see hub_services)
ACCESS_SCOPE = f"access:services!service={SERVICE}"
#: seconds the service keeps a user's lecturer status before asking the hub again
LECTURER_CACHE_S = 10.0
#: seconds the service keeps the hub's answer about a token (JupyterHub's ``HubAuth.cache_max_age``,
#: 300 by default): a token the hub revoked is still accepted for at most this long
#: (lecturer/class-poll.md). Kept at 60 s: it only lets that token's own user post or read their own
#: answer (a lecturer's rights are asked of the hub again every :data:`LECTURER_CACHE_S`), while a
#: shorter window sends the class's repeated posts back to the hub (the load figures of
#: lecturer/class-poll.md were measured with 60 s).
TOKEN_CACHE_S = 60
#: the largest number an answer may be (in either sign): larger is no prediction of the course
MAX_NUMBER = 1e12
#: the largest request body the service reads (bytes)
MAX_BODY_BYTES = 16 * 1024


# ------------------------------------------------------------------------------ the hub's configuration


def hub_services(course: str | os.PathLike, *, python: str = sys.executable) -> dict:
    """The hub's part of the poll, for ``jupyterhub_config.py`` (:data:`HUB_BLOCK`).

    Args:
        course: the course folder; the database is ``state/polls.sqlite``.
        python: the Python the service runs on, as the hub's user (default: the hub's).

    Returns:
        ``{"services", "roles", "server_token_scopes", "environment", "url"}``: the service entry,
        the roles (the service may read users' admin flag and groups; every user's role ``user``
        gets :data:`ACCESS_SCOPE`), the students' server token scopes (JupyterHub's ``server`` role
        plus :data:`ACCESS_SCOPE`), the kernels' environment (``DECODELAB_POLLS_URL``) and the URL.
    """
    state = Path(course).resolve() / "state"
    port = int(os.environ.get(PORT_ENV) or PORT)
    url = f"http://127.0.0.1:{port}/services/{SERVICE}"
    service = {
        "name": SERVICE,
        "url": f"http://127.0.0.1:{port}",
        "command": [python, "-m", "decodelab.classroom.polls", f"--db={state / 'polls.sqlite'}"],
        "cwd": str(state),  # root's (0700): never the course folder, where the grader account may add modules
        "oauth_no_confirm": True,
    }
    roles = [
        {"name": SERVICE, "services": [SERVICE], "scopes": ["read:users:name", "read:users:groups"]},
        # JupyterHub's default role of every user ('self'), plus sending to the poll
        {"name": "user", "scopes": ["self", ACCESS_SCOPE]},
    ]
    return {"services": [service], "roles": roles, "url": url,
            "server_token_scopes": ["users:activity!user", "access:servers!server", ACCESS_SCOPE],
            "environment": {"DECODELAB_POLLS_URL": url}}


HUB_BLOCK = '''
# ---- the class poll: students' committed predictions, the lecturer's live distribution
# (decodelab/classroom/polls.py; lecturer/classroom.md)
from decodelab.classroom import polls as decodelab_polls

POLLS = decodelab_polls.hub_services(COURSE)
c.JupyterHub.services += POLLS["services"]
c.JupyterHub.load_roles += POLLS["roles"]
c.Spawner.server_token_scopes = POLLS["server_token_scopes"]
c.Spawner.environment.update(POLLS["environment"])
'''


def hub_config_block() -> str:
    """The part of ``jupyterhub_config.py`` that :func:`decodelab.classroom.hub.write_config`
    appends (after ``c.JupyterHub.services``, ``load_roles`` and ``Spawner.environment`` are set)."""
    return HUB_BLOCK


# ------------------------------------------------------------------------------ the data


class ItemClosed(Exception):
    """The lecturer closed this item: no answer is taken."""


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _models():
    """The declarative base and the two tables (built on first use: the hub's config imports this
    module without SQLAlchemy's cost)."""
    from sqlalchemy import Column, DateTime, String, Text
    from sqlalchemy.orm import declarative_base

    Base = declarative_base()

    class Item(Base):
        """An item the lecturer acted on (absent: open, no reveal)."""

        __tablename__ = "items"
        item_id = Column(String(80), primary_key=True)
        state = Column(String(8), nullable=False, default="open")  # open | closed
        revealed = Column(Text, nullable=True)  # JSON of the measured value
        changed_at = Column(DateTime(timezone=True), nullable=False)

    class Answer(Base):
        """One student's latest answer to one item (time from the server's clock, UTC)."""

        __tablename__ = "answers"
        item_id = Column(String(80), primary_key=True)
        student = Column(String(255), primary_key=True)
        value = Column(Text, nullable=False)  # JSON: a float or a choice id
        answered_at = Column(DateTime(timezone=True), nullable=False)

    return Base, Item, Answer


class PollStore:
    """The poll's SQLite database (SQLAlchemy 2): one row per (item, student), items' states.

    Args:
        path: the database file, created mode 0600 if missing (its folder must exist).

    Every write is one ``BEGIN IMMEDIATE`` transaction (SQLite's write lock taken at the start, so
    a read-then-write never races another writer), WAL journal, ``synchronous=FULL`` (a committed
    answer is on disk before the call returns), ``busy_timeout`` 10 s.
    """

    def __init__(self, path: str | os.PathLike):
        from sqlalchemy import create_engine, event

        self.path = Path(path)
        if not self.path.exists():
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        os.chmod(self.path, 0o600)
        self.Base, self.Item, self.Answer = _models()
        self.engine = create_engine(f"sqlite:///{self.path}", connect_args={"timeout": 10})

        @event.listens_for(self.engine, "connect")
        def _connect(dbapi_conn, _record):
            dbapi_conn.isolation_level = None  # SQLAlchemy emits BEGIN itself (below)
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=FULL")
            cur.execute("PRAGMA busy_timeout=10000")
            cur.close()

        @event.listens_for(self.engine, "begin")
        def _begin(conn):
            conn.exec_driver_sql("BEGIN IMMEDIATE")

        self.Base.metadata.create_all(self.engine)

    def _session(self):
        from sqlalchemy.orm import Session

        return Session(self.engine, expire_on_commit=False)

    def answer(self, item_id: str, student: str, value: Any) -> dict:
        """Store ``student``'s answer (replacing an earlier one); returns the stored record.

        Raises:
            ItemClosed: the item is closed.
        """
        from sqlalchemy.dialects.sqlite import insert

        when = _now()
        with self._session() as s, s.begin():
            item = s.get(self.Item, item_id)
            if item is not None and item.state != "open":
                raise ItemClosed(item_id)
            stmt = insert(self.Answer).values(item_id=item_id, student=student, value=json.dumps(value),
                                              answered_at=when)
            s.execute(stmt.on_conflict_do_update(index_elements=["item_id", "student"],
                                                 set_={"value": stmt.excluded.value,
                                                       "answered_at": stmt.excluded.answered_at}))
        return {"item": item_id, "student": student, "value": value, "answered_at": when.isoformat()}

    def mine(self, item_id: str, student: str) -> dict | None:
        with self._session() as s:
            row = s.get(self.Answer, (item_id, student))
            if row is None:
                return None
            # SQLite keeps no time zone: the stored time is UTC (_now), said so as the POST's answer does
            when = row.answered_at if row.answered_at.tzinfo else row.answered_at.replace(tzinfo=timezone.utc)
            return {"item": item_id, "student": student, "value": json.loads(row.value),
                    "answered_at": when.isoformat()}

    def answers(self, item_id: str) -> dict[str, Any]:
        """``{student: value}`` of an item."""
        from sqlalchemy import select

        with self._session() as s:
            rows = s.execute(select(self.Answer.student, self.Answer.value).where(self.Answer.item_id == item_id))
            return {name: json.loads(v) for name, v in rows}

    def item(self, item_id: str) -> dict:
        """``{"item", "state", "revealed"}`` (``open`` and None for an item never acted on)."""
        with self._session() as s:
            row = s.get(self.Item, item_id)
            return {"item": item_id, "state": row.state if row else "open",
                    "revealed": json.loads(row.revealed) if row and row.revealed is not None else None}

    def items(self) -> list[dict]:
        """Every item with answers or a state: ``[{"item", "state", "count", "revealed"}]`` by id."""
        from sqlalchemy import func, select

        with self._session() as s:
            counts = dict(s.execute(select(self.Answer.item_id, func.count()).group_by(self.Answer.item_id)).all())
            states = {r.item_id: r for r in s.scalars(select(self.Item))}
        out = []
        for item_id in sorted(set(counts) | set(states)):
            r = states.get(item_id)
            out.append({"item": item_id, "state": r.state if r else "open", "count": counts.get(item_id, 0),
                        "revealed": json.loads(r.revealed) if r and r.revealed is not None else None})
        return out

    def _set(self, item_id: str, **fields: Any) -> dict:
        with self._session() as s, s.begin():
            row = s.get(self.Item, item_id)
            if row is None:
                row = self.Item(item_id=item_id, state="open", revealed=None, changed_at=_now())
                s.add(row)
            for k, v in fields.items():
                setattr(row, k, v)
            row.changed_at = _now()
        return self.item(item_id)

    def set_state(self, item_id: str, state: str) -> dict:
        if state not in ("open", "closed"):
            raise ValueError(f"state={state!r}: open 또는 closed")
        return self._set(item_id, state=state)

    def reveal(self, item_id: str, value: Any) -> dict:
        """Record the measured value and close the item (an answer after the reveal tells nothing)."""
        return self._set(item_id, state="closed", revealed=json.dumps(value))

    def reset(self, item_id: str) -> dict:
        """Delete the item's answers and reveal; the item is open again."""
        from sqlalchemy import delete

        with self._session() as s, s.begin():
            s.execute(delete(self.Answer).where(self.Answer.item_id == item_id))
            row = s.get(self.Item, item_id)
            if row is not None:
                s.delete(row)
        return self.item(item_id)


# ------------------------------------------------------------------------------ values


def _shown(value: Any) -> str:
    """``value`` for an error message: its repr when it is a short scalar, else its type's name (a list
    nested 5000 deep has no repr, a 400-digit number is no help)."""
    if isinstance(value, (bool, int, float, str, type(None))):
        text = repr(value)
        if len(text) <= 40:
            return text
    return type(value).__name__


def check_value(item_id: str, value: Any, quizzes_dir: str | os.PathLike | None = None) -> tuple[Any, Any]:
    """The stored form of an answer to prediction ``item_id`` and the prediction's definition.

    Returns:
        ``(value, prediction)``: a finite float of at most :data:`MAX_NUMBER` in size for ``kind: number``
        (not a bool), one of the choice ids for ``kind: choice``.

    Raises:
        KeyError: (Korean) not a prediction id of the course's exercises.
        ValueError: (Korean) not a finite number of at most :data:`MAX_NUMBER` (an int too large for a
            float included) / not a choice id.
    """
    from ..assess.exercises import Prediction, get_exercise

    try:
        ex = get_exercise(item_id, quizzes_dir)
    except KeyError:
        raise KeyError(f"예측 문항 {item_id!r}이(가) 강좌에 없습니다.") from None
    if not isinstance(ex, Prediction):
        raise KeyError(f"{item_id!r}은(는) 예측 문항이 아닙니다.")
    if ex.kind == "number":
        try:  # an int of 400 digits is no float (OverflowError)
            number = None if isinstance(value, bool) or not isinstance(value, (int, float)) else float(value)
        except OverflowError:
            number = None
        if number is None or not math.isfinite(number) or abs(number) > MAX_NUMBER:
            raise ValueError(f"value={_shown(value)}: 절댓값이 {MAX_NUMBER:g} 이하인 유한한 숫자여야 합니다.")
        return number, ex
    ids = [c.id for c in ex.choices or []]
    if not isinstance(value, str) or value not in ids:
        raise ValueError(f"value={_shown(value)}: 선택지 id {ids} 중 하나여야 합니다.")
    return value, ex


def summary(item_id: str, answers: dict[str, Any], state: dict, *, names: bool,
            quizzes_dir: str | os.PathLike | None = None) -> dict:
    """What the lecturer's view gets: ``{"item", "kind", "unit", "prompt", "choices", "state",
    "revealed", "count", "values" (numbers, sorted) or "counts" (choice id -> n, every choice),
    "names" ({student: value}, only when ``names``)}``."""
    from ..assess.exercises import get_exercise

    ex = get_exercise(item_id, quizzes_dir)
    out = {**state, "kind": ex.kind, "unit": ex.unit, "prompt": ex.prompt, "count": len(answers),
           "choices": [{"id": c.id, "text": c.text} for c in ex.choices or []]}
    if ex.kind == "number":
        out["values"] = sorted(float(v) for v in answers.values())
    else:
        out["counts"] = {c["id"]: 0 for c in out["choices"]}
        for v in answers.values():
            out["counts"][v] = out["counts"].get(v, 0) + 1
    if names:
        out["names"] = dict(sorted(answers.items()))
    return out


# ------------------------------------------------------------------------------ the web service


def make_app(store: PollStore, *, prefix: str, hub_api_url: str, api_token: str, quizzes_dir=None):
    """The tornado application of the service (handlers under ``{prefix}api/``)."""
    from tornado import web
    from tornado.httpclient import AsyncHTTPClient
    from jupyterhub.services.auth import HubAuth, HubAuthenticated, UserNotAllowed

    # token in the Authorization header only: no cookie, no ?token= (it would land in logs)
    auth = HubAuth(api_url=hub_api_url, api_token=api_token, allow_token_in_url=False, cache_max_age=TOKEN_CACHE_S,
                   access_scopes={ACCESS_SCOPE})
    lecturers: dict[str, tuple[float, bool]] = {}

    class Handler(HubAuthenticated, web.RequestHandler):
        hub_auth = auth

        def check_xsrf_cookie(self):  # token-authenticated only: XSRF concerns cookies, which are not used
            return None

        async def prepare(self):
            model = await self.hub_auth.get_user(self, sync=False)
            try:
                self._hub_auth_user_cache = self.check_hub_user(model) if model else None
            except UserNotAllowed:
                raise web.HTTPError(403, "이 토큰으로는 수업 집계에 접근할 수 없습니다.") from None
            if self._hub_auth_user_cache is None:
                raise web.HTTPError(401, "JupyterHub 토큰이 필요합니다 (Authorization: token ...).")
            if self._hub_auth_user_cache.get("kind", "user") != "user":
                raise web.HTTPError(403, "학생이나 강의자의 토큰만 받습니다.")

        @property
        def user_name(self) -> str:
            return self.current_user["name"]

        def write_error(self, status_code: int, **kwargs) -> None:
            exc = kwargs.get("exc_info", (None, None, None))[1]
            message = getattr(exc, "log_message", None) or self._reason
            self.set_header("Content-Type", "application/json; charset=utf-8")
            self.finish(json.dumps({"error": message}, ensure_ascii=False))

        def send(self, data: Any) -> None:
            self.set_header("Content-Type", "application/json; charset=utf-8")
            self.set_header("Cache-Control", "no-store")
            self.finish(json.dumps(data, ensure_ascii=False))

        def body(self, allowed: set[str]) -> dict:
            try:  # RecursionError: thousands of nested brackets; ValueError also for an int of > 4300 digits
                data = json.loads(self.request.body or b"{}")
            except (ValueError, RecursionError):
                raise web.HTTPError(400, "본문이 JSON이 아니거나 너무 깊게 중첩되어 있습니다.") from None
            if not isinstance(data, dict):
                raise web.HTTPError(400, "본문은 JSON 객체여야 합니다.")
            extra = sorted(set(data) - allowed)
            if extra:  # a name in the body (student, user...) is refused, never used
                raise web.HTTPError(400, f"받지 않는 필드: {', '.join(extra)} (누가 보냈는지는 토큰으로 정합니다).")
            return data

        def checked(self, item_id: str, value: Any) -> Any:
            try:
                return check_value(item_id, value, quizzes_dir)[0]
            except KeyError as e:
                raise web.HTTPError(404, e.args[0]) from None
            except (ValueError, OverflowError, RecursionError) as e:
                raise web.HTTPError(400, str(e) if isinstance(e, ValueError) else "값을 읽을 수 없습니다.") from None

        async def require_lecturer(self) -> None:
            name = self.user_name
            hit = lecturers.get(name)
            if hit is None or time.monotonic() - hit[0] > LECTURER_CACHE_S:
                from urllib.parse import quote

                r = await AsyncHTTPClient().fetch(f"{hub_api_url}/users/{quote(name, safe='')}", raise_error=False,
                                                  headers={"Authorization": f"token {api_token}"},
                                                  request_timeout=10)
                if r.code != 200:
                    raise web.HTTPError(503 if r.code >= 500 else 403, "허브에서 강의자인지 확인하지 못했습니다.")
                model = json.loads(r.body)
                ok = bool(model.get("admin")) or INSTRUCTOR_GROUP in (model.get("groups") or [])
                lecturers[name] = hit = (time.monotonic(), ok)
            if not hit[1]:
                raise web.HTTPError(403, "강의자(허브 관리자나 instructors 그룹)만 쓸 수 있습니다.")

    class Answers(Handler):
        async def post(self, item_id: str):
            value = self.checked(item_id, self.body({"value"}).get("value"))
            try:
                self.send(store.answer(item_id, self.user_name, value))
            except ItemClosed:
                raise web.HTTPError(409, "강의자가 이 질문을 마감했습니다.") from None

        async def get(self, item_id: str):
            rec = store.mine(item_id, self.user_name)
            if rec is None:
                raise web.HTTPError(404, "이 질문에 보낸 예측이 없습니다.")
            self.send(rec)

    class Items(Handler):
        async def get(self):
            await self.require_lecturer()
            self.send({"items": store.items()})

    class ItemView(Handler):
        async def get(self, item_id: str):
            await self.require_lecturer()
            self.checked_item(item_id)
            names = self.get_argument("names", "0") in ("1", "true", "yes")
            self.send(summary(item_id, store.answers(item_id), store.item(item_id), names=names,
                              quizzes_dir=quizzes_dir))

        def checked_item(self, item_id: str) -> None:
            from ..assess.exercises import Prediction, get_exercise

            try:
                ok = isinstance(get_exercise(item_id, quizzes_dir), Prediction)
            except KeyError:
                ok = False
            if not ok:
                raise web.HTTPError(404, f"예측 문항 {item_id!r}이(가) 강좌에 없습니다.")

    class ItemAction(ItemView):
        async def get(self, item_id: str, action: str):
            raise web.HTTPError(405)

        async def post(self, item_id: str, action: str):
            await self.require_lecturer()
            self.checked_item(item_id)
            if action == "reveal":
                value = self.checked(item_id, self.body({"value"}).get("value"))
                store.reveal(item_id, value)
            elif action == "reset":
                store.reset(item_id)
            else:
                store.set_state(item_id, "open" if action == "open" else "closed")
            self.send(summary(item_id, store.answers(item_id), store.item(item_id), names=False,
                              quizzes_dir=quizzes_dir))

    class Root(Handler):
        async def get(self):
            self.send({"service": SERVICE, "user": self.user_name})

    import re

    item = r"([0-9]{2}[a-z0-9-]*)"
    prefix = re.escape(prefix)
    return web.Application([
        (rf"{prefix}api/?", Root),
        (rf"{prefix}api/answers/{item}", Answers),
        (rf"{prefix}api/items", Items),
        (rf"{prefix}api/items/{item}", ItemView),
        (rf"{prefix}api/items/{item}/(open|close|reset|reveal)", ItemAction),
    ])


#: the hosts a service URL may name without ``--listen-all`` (one server: loopback only)
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
#: the hosts ``--listen-all`` adds: every interface (a Kubernetes pod, classroom/k8s/class-poll.yaml)
ALL_INTERFACES = ("0.0.0.0", "::")


def listen_address(service_url: str, *, listen_all: bool = False) -> tuple[str, int]:
    """``(host, port)`` the service listens on, from its ``JUPYTERHUB_SERVICE_URL``.

    Args:
        service_url: ``http://HOST:PORT`` (no port: :data:`PORT`, no host: 127.0.0.1).
        listen_all: also accept ``0.0.0.0``/``::`` (every interface): the pod of
            classroom/k8s/class-poll.yaml, reached through its Kubernetes Service, whose network
            policy decides who may connect. Without it (one server) only :data:`LOOPBACK_HOSTS`.

    Raises:
        SystemExit: (Korean) any other host: a loopback or (with ``--listen-all``) the wildcard
            address only, never one interface's address.
    """
    from urllib.parse import urlsplit

    url = urlsplit(service_url)
    host = url.hostname or "127.0.0.1"
    if host in LOOPBACK_HOSTS or (listen_all and host in ALL_INTERFACES):
        return host, url.port or PORT
    if host in ALL_INTERFACES:
        raise SystemExit(f"[decodelab] {SERVICE}는 루프백 주소에서만 받습니다 (받은 주소: {host}). "
                         "Kubernetes 파드처럼 모든 인터페이스에서 받아야 하면 --listen-all 을 붙이세요.")
    raise SystemExit(f"[decodelab] {SERVICE}는 루프백 주소"
                     f"{'나 0.0.0.0(--listen-all)' if listen_all else ''}에서만 받습니다 (받은 주소: {host}).")


def main(argv: list[str] | None = None) -> None:
    """Run the service (JupyterHub starts it with its environment: ``JUPYTERHUB_SERVICE_URL``,
    ``JUPYTERHUB_SERVICE_PREFIX``, ``JUPYTERHUB_API_URL``, ``JUPYTERHUB_API_TOKEN``).

    One server: the hub starts it on a loopback URL (:func:`hub_services`). In a Kubernetes pod
    (classroom/k8s/class-poll.yaml) it runs with ``--listen-all`` and the URL ``http://0.0.0.0:8080``;
    without the flag a non-loopback URL is refused (:func:`listen_address`) before anything opens.
    """
    import asyncio

    p = argparse.ArgumentParser(prog="python -m decodelab.classroom.polls")
    p.add_argument("--db", type=Path, required=True, help="the SQLite file (created mode 0600)")
    p.add_argument("--listen-all", action="store_true",
                   help="accept the service URL's host 0.0.0.0 (every interface: a Kubernetes pod); "
                        "without it only a loopback host")
    args = p.parse_args(argv)
    host, port = listen_address(os.environ.get("JUPYTERHUB_SERVICE_URL", f"http://127.0.0.1:{PORT}"),
                                listen_all=args.listen_all)
    prefix = os.environ.get("JUPYTERHUB_SERVICE_PREFIX", f"/services/{SERVICE}/")
    store = PollStore(args.db)
    app = make_app(store, prefix=prefix, hub_api_url=os.environ["JUPYTERHUB_API_URL"].rstrip("/"),
                   api_token=os.environ["JUPYTERHUB_API_TOKEN"])

    async def serve() -> None:
        # an answer is a few bytes: a bigger body is refused before it is read into memory
        app.listen(port, host, xheaders=False, max_body_size=MAX_BODY_BYTES)
        print(f"[decodelab] {SERVICE}: {host}:{port}{prefix} ({args.db})", flush=True)
        await asyncio.Event().wait()

    asyncio.run(serve())


if __name__ == "__main__":
    main()

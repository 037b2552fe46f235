"""NativeAuthenticator for the class mode, working with JupyterHub 6.

``jupyterhub-nativeauthenticator`` 1.3.0 (its latest release, 2024-09) is the sign-up-with-approval
authenticator of the JupyterHub project, but its login page fails on JupyterHub 6.1: the handler
still calls ``self.statsd`` (gone from JupyterHub's handlers: every login is an HTTP 500) and its
``_render`` does not take the ``sync`` argument JupyterHub 6 passes when it renders a login error.
:class:`NativeAuthenticator` here is the same authenticator (same options: configure it as
``c.NativeAuthenticator.*``) with only its login handler adapted; sign-up, the lecturer's
``/hub/authorize`` page and password changes are the original handlers.
``tests/test_classroom_hub_native.py`` (without a roster) and ``tests/test_classroom_exchange.py``
(with one) drive the real hub with it.

Two rules of the course on top of the original:

- **One spelling per name**: :meth:`NativeAuthenticator.normalize_username` turns every name (at
  sign-up, login, approval) into Unicode NFC and case-folds it, so the NFC and NFD spellings of one
  Hangul name (macOS and some input methods send NFD) and ``Minji``/``minji`` are one account
  (JupyterHub's own rule only lower-cases, which left them two accounts that look identical).
- **Names a system user can have**: a student's hub name becomes the name of their system user,
  so sign-up accepts only :data:`USERNAME` (:data:`decodelab.classroom.course.USERNAME`: a lower-case letter first,
  then lower-case letters, digits, ``_``, ``-``; at most 32) and says so in Korean otherwise
  (``김민지`` signed up and got ``/home/김민지`` before), and never a reserved name
  (:func:`reserved_name`: ``decodelab-*``, ``formgrader``, ``ngshare``, ``root``, ``nobody`` and every
  existing system account), at sign-up and at login (``decodelab-grader`` signed up before the first
  autograde and became the sandbox's account).
- **Every name in a URL in one spelling**: the lecturer's pages that take a name in the URL
  (``/hub/authorize/<name>``, ``/hub/discard/<name>``, ``/hub/change-password/<name>``) normalise
  it as above first, and an unknown name is HTTP 404 (an NFD spelling was HTTP 500).
- **Approval without a roster works**: JupyterHub 5+ lets nobody in unless ``allowed_users`` or
  ``allow_all`` is set; :meth:`NativeAuthenticator.check_allowed` lets in the admins (the
  lecturer), the roster's names when there is a roster (``allowed_users``; then the roster alone
  decides, approval or not), and otherwise every account the lecturer approved at
  ``/hub/authorize``.
"""

from __future__ import annotations

import re
import unicodedata
from importlib import metadata

#: the versions the adaptations below were written for (decodelab/classroom/pins.py holds the same
#: pins, tests/test_classroom_pins.py keeps them equal: this module runs alone in the Kubernetes
#: chart's hub image, without decodelab, so it cannot import them)
#: JupyterHub 5.5 is the one the pinned Zero to JupyterHub chart (4.4.0) ships, 6 the one-server hub's
PINS = {"jupyterhub": ("5.5.*", "6.*"), "jupyterhub-nativeauthenticator": ("1.3.*",)}


def _require(dist: str, versions: tuple[str, ...]) -> None:
    """Stop (ImportError, Korean) unless ``dist``'s installed version is one of ``versions``
    (``"6.*"``: every 6 release)."""
    try:
        have = metadata.version(dist)
    except metadata.PackageNotFoundError:
        have = None
    if have is None or not any(have.startswith(v[:-1]) if v.endswith(".*") else have == v for v in versions):
        want = ", ".join(versions)
        raise ImportError(f"decodelab의 decodelab/classroom/auth.py는 {dist} {want}에 맞춰 고친 패치인데, 설치된 "
                          f"{dist}는 {have or '없음'}입니다: {want} 버전을 설치하거나 패치를 새 버전에 맞게 고치세요 "
                          "(lecturer/patches.md).")


for _dist, _versions in PINS.items():  # LoginHandler absorbs JupyterHub 5.5's and 6's handlers; they are 1.3's
    _require(_dist, _versions)

from nativeauthenticator import NativeAuthenticator as _Native  # noqa: E402
from nativeauthenticator import handlers as _handlers  # noqa: E402

#: the course's user-name rule (decodelab.classroom.course.USERNAME; tests/test_classroom_pins.py
#: keeps the two equal): a system user's name
USERNAME = re.compile(r"[a-z][a-z0-9_-]{0,31}")
#: names no student may have (copies of decodelab.classroom.accounts', kept equal by
#: tests/test_classroom_pins.py): the course's service accounts, the hub services, the machine's own
RESERVED_NAMES = frozenset({"root", "nobody", "formgrader", "ngshare"})
RESERVED_PREFIX = "decodelab-"


def reserved_name(name: str) -> bool:
    """decodelab.classroom.accounts.reserved_name: one of :data:`RESERVED_NAMES`, a name starting with
    :data:`RESERVED_PREFIX`, or an existing system account of this machine (uid below ``UID_MIN`` of
    /etc/login.defs, default 1000, or ``nobody``, 65534)."""
    import pwd

    if name in RESERVED_NAMES or name.startswith(RESERVED_PREFIX):
        return True
    try:
        uid = pwd.getpwnam(name).pw_uid
    except (KeyError, ValueError):
        return False
    try:
        with open("/etc/login.defs", encoding="utf-8", errors="replace") as fh:
            m = re.search(r"^\s*UID_MIN\s+(\d+)", fh.read(), re.M)
    except OSError:
        m = None
    return uid < (int(m[1]) if m else 1000) or uid == 65534

__all__ = ["NativeAuthenticator", "normalize_name"]


def normalize_name(name: str) -> str:
    """``name`` in Unicode NFC, case-folded (then NFC again: folding can leave a decomposed form).

    ``"\u1100\u1175\u11b7"`` (NFD of "김") -> ``"김"``; ``"Minji"`` -> ``"minji"``; ``"Straße"`` ->
    ``"strasse"``. Unicode Standard Annex #15 (normalization forms) and section 5.18 (case folding).
    """
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", name).casefold())


class _NoStats:
    """Stands for the statsd client: JupyterHub 6 handlers have none, JupyterHub 5.5 (the Zero to
    JupyterHub chart's hub) calls ``incr``/``timing`` on it and reads a stopped timer's ``ms`` at every
    login. Records nothing."""

    #: a stopped timer's duration in milliseconds (statsd's ``Timer.ms``): nothing is timed
    ms = 0.0

    def timer(self, _name: str) -> "_NoStats":
        return self

    def incr(self, _name: str, count: int = 1, rate: float = 1) -> None:
        return None

    def decr(self, _name: str, count: int = 1, rate: float = 1) -> None:
        return None

    def timing(self, _name: str, _delta, rate: float = 1) -> None:
        return None

    def gauge(self, _name: str, _value, rate: float = 1, delta: bool = False) -> None:
        return None

    def start(self) -> "_NoStats":
        return self

    def stop(self, send: bool = True) -> None:
        return None


class LoginHandler(_handlers.LoginHandler):
    """nativeauthenticator's ``/hub/login``, with the two JupyterHub 6 changes absorbed."""

    statsd = _NoStats()

    def _render(self, login_error=None, username=None, **_jupyterhub6_kwargs):
        return super()._render(login_error=login_error, username=username)


class SignUpHandler(_handlers.SignUpHandler):
    """nativeauthenticator's ``/hub/signup`` that says in Korean why a name is refused."""

    _name: str = ""

    async def post(self):
        self._name = normalize_name(self.get_body_argument("username", "", strip=False))
        return await super().post()

    def get_result_message(self, user, *args, **kwargs):
        if user is None and self._name and USERNAME.fullmatch(self._name) and reserved_name(self._name):
            return "alert-danger", (f"가입: {self._name!r}은(는) 강좌의 서비스 계정이나 이 서버의 시스템 계정 이름이라 "
                                    "학생 이름으로 쓸 수 없습니다 (decodelab-으로 시작하는 이름, formgrader, ngshare, root, "
                                    "nobody 등): 다른 이름으로 가입하세요.")
        if user is None and self._name and not USERNAME.fullmatch(self._name):
            return "alert-danger", (f"가입: {self._name!r}은(는) 쓸 수 없는 사용자 이름입니다: 영어 소문자로 시작하고 "
                                    "영어 소문자·숫자·_·-만 쓴 32자 이하의 이름을 쓰세요 (이 이름이 서버의 시스템 사용자 "
                                    "이름이 되므로 한글은 쓸 수 없습니다).")
        return super().get_result_message(user, *args, **kwargs)


class _NameInURL:
    """A lecturer's handler whose URL ends in a user name: the name in :func:`normalize_name`'s
    spelling, and HTTP 404 (never 500) for a name nativeauthenticator does not know (asked only of
    an admin: the scope check comes first, so no one else learns which names exist)."""

    async def prepare(self):
        await super().prepare()
        self.path_args = [normalize_name(a) for a in self.path_args]

    def _known(self, name: str) -> None:
        if self.authenticator.get_user(name) is None:
            raise _handlers.web.HTTPError(404)


class ToggleAuthorizationHandler(_NameInURL, _handlers.ToggleAuthorizationHandler):
    """``/hub/authorize/<name>``, any spelling of the name."""

    @_handlers.admin_users_scope
    async def get(self, slug):
        self._known(slug)
        return await super().get(slug)


class DiscardHandler(_NameInURL, _handlers.DiscardHandler):
    """``/hub/discard/<name>``, any spelling of the name."""

    @_handlers.admin_users_scope
    async def get(self, user_name):
        self._known(user_name)
        return await super().get(user_name)


class ChangePasswordAdminHandler(_NameInURL, _handlers.ChangePasswordAdminHandler):
    """``/hub/change-password/<name>``, any spelling of the name."""

    @_handlers.admin_users_scope
    async def get(self, user_name):
        self._known(user_name)
        return await super().get(user_name)

    @_handlers.admin_users_scope
    async def post(self, user_name):
        self._known(user_name)
        return await super().post(user_name)


_OURS = {_handlers.LoginHandler: LoginHandler, _handlers.SignUpHandler: SignUpHandler,
         _handlers.ToggleAuthorizationHandler: ToggleAuthorizationHandler, _handlers.DiscardHandler: DiscardHandler,
         _handlers.ChangePasswordAdminHandler: ChangePasswordAdminHandler}


class NativeAuthenticator(_Native):
    """``nativeauthenticator.NativeAuthenticator`` whose ``/hub/login`` works on JupyterHub 6."""

    def normalize_username(self, username: str) -> str:
        """:func:`normalize_name`, then JupyterHub's ``username_map`` (as the base class does)."""
        username = normalize_name(username)
        return self.username_map.get(username, username)

    def check_allowed(self, username: str, authentication=None) -> bool:
        """Whether the (normalized) ``username`` may log in: an admin (the lecturer); with a roster
        (``allowed_users``) a name on it; without one, an account approved at ``/hub/authorize``
        (``allow_all`` still lets everyone in, as in JupyterHub)."""
        if self.allow_all or username in self.admin_users:
            return True
        if self.allowed_users:
            return username in self.allowed_users
        info = self.get_user(username)
        return bool(info is not None and info.is_authorized)

    def validate_username(self, username: str) -> bool:
        """nativeauthenticator's rule and the course's (:data:`~decodelab.classroom.course.USERNAME`,
        never a :func:`reserved_name`): the name becomes a system user's."""
        return bool(USERNAME.fullmatch(username)) and not reserved_name(username) and super().validate_username(username)

    def check_blocked_users(self, username: str, authentication=None) -> bool:
        """JupyterHub's ``blocked_users``, and every :func:`reserved_name` (a login under such a name,
        also one approved or listed by mistake, is refused: it would become that account)."""
        if reserved_name(username):
            return False
        return super().check_blocked_users(username, authentication)

    def get_handlers(self, app):
        return [(path, _OURS.get(handler, handler)) for path, handler in super().get_handlers(app)]

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
- **Approval without a roster works**: JupyterHub 5+ lets nobody in unless ``allowed_users`` or
  ``allow_all`` is set; :meth:`NativeAuthenticator.check_allowed` lets in the admins (the
  lecturer), the roster's names when there is a roster (``allowed_users``; then the roster alone
  decides, approval or not), and otherwise every account the lecturer approved at
  ``/hub/authorize``.
"""

from __future__ import annotations

import unicodedata

from nativeauthenticator import NativeAuthenticator as _Native
from nativeauthenticator import handlers as _handlers

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

    def get_handlers(self, app):
        return [(path, LoginHandler if handler is _handlers.LoginHandler else handler)
                for path, handler in super().get_handlers(app)]

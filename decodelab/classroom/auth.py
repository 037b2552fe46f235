"""NativeAuthenticator for the class mode, working with JupyterHub 6.

``jupyterhub-nativeauthenticator`` 1.3.0 (its latest release, 2024-09) is the sign-up-with-approval
authenticator of the JupyterHub project, but its login page fails on JupyterHub 6.1: the handler
still calls ``self.statsd`` (gone from JupyterHub's handlers: every login is an HTTP 500) and its
``_render`` does not take the ``sync`` argument JupyterHub 6 passes when it renders a login error.
:class:`NativeAuthenticator` here is the same authenticator (same options: configure it as
``c.NativeAuthenticator.*``) with only its login handler adapted; sign-up, the lecturer's
``/hub/authorize`` page and password changes are the original handlers.
``tests/test_classroom_hub_native.py`` drives the real hub with it.
"""

from __future__ import annotations

from nativeauthenticator import NativeAuthenticator as _Native
from nativeauthenticator import handlers as _handlers

__all__ = ["NativeAuthenticator"]


class _NoStats:
    """Stands for the statsd client JupyterHub handlers no longer have: a timer that records nothing."""

    def timer(self, _name: str) -> "_NoStats":
        return self

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

    def get_handlers(self, app):
        return [(path, LoginHandler if handler is _handlers.LoginHandler else handler)
                for path, handler in super().get_handlers(app)]

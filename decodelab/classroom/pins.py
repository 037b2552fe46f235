"""The third-party packages the classroom patches, and the versions each patch was written for.

Each patched package is checked when the module holding its patch is imported (:func:`require`):
a version other than the one the patch was written for stops with a Korean error naming the
package, the installed version and the one expected, instead of a patch that quietly no longer
fits (a private method renamed, an argument added). lecturer/patches.md is the same table for
people, with each upstream issue; ``tests/test_classroom_pins.py`` keeps the two in step.

A leaf: it imports nothing of decodelab.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import metadata

__all__ = ["PATCHES", "Patch", "PatchedVersionError", "require"]


class PatchedVersionError(ImportError):
    """An installed package is not the version decodelab's patch of it was written for (Korean message)."""


@dataclass(frozen=True)
class Patch:
    """One patched package: its distribution name, the versions the patch fits (``"0.9.*"`` is
    every 0.9 release), where the patch is, what it changes, and the upstream issue."""

    dist: str
    versions: tuple[str, ...]
    where: str
    what: str
    upstream: str

    def fits(self, version: str) -> bool:
        return any(version == v or (v.endswith(".*") and version.startswith(v[:-1])) for v in self.versions)


PATCHES: dict[str, Patch] = {p.dist: p for p in (
    Patch("ngshare-exchange", ("0.5.3",), "decodelab/classroom/exchange_plugin.py",
          "collect의 before_duedate, 학생이 넣은 timestamp.txt 버리기, 실패한 release/submit의 종료 코드; "
          "비공개 메서드 _get_submission과 비공개 속성 _ngshare_url을 씀",
          "올라온 이슈를 찾지 못함 (https://github.com/LibreTexts/ngshare-exchange/issues; 0.5.3 뒤 릴리스 없음)"),
    Patch("ngshare", ("0.6.0",), "decodelab/classroom/ngshare_service.py",
          "SQLAlchemy 2에서 사라진 cascade_backrefs를 이벤트 리스너로 되살림, 127.0.0.1에서만 받기",
          "올라온 이슈를 찾지 못함 (https://github.com/LibreTexts/ngshare/issues; 0.6.0 뒤 릴리스 없음)"),
    Patch("SQLAlchemy", ("2.0.*", "2.1.*"), "decodelab/classroom/ngshare_service.py",
          "ngshare의 관계에 붙이는 append/set 이벤트 리스너 (SQLAlchemy 2.0·2.1의 이벤트 API)",
          "https://docs.sqlalchemy.org/en/20/changelog/migration_20.html#cascade-backrefs-behavior-deprecated-for-removal-in-2-0"),
    Patch("nbgrader", ("0.9.*",), "decodelab/classroom/checksums.py",
          "읽기 전용 칸의 검사합 경고를 배포본 기준으로: 비공개 함수 ClearHiddenTests._remove_hidden_test_region을 씀",
          "https://github.com/jupyter/nbgrader/issues/1961"),
    Patch("jupyterhub", ("5.5.*", "6.*"), "decodelab/classroom/auth.py",
          "nativeauthenticator의 로그인 처리기가 JupyterHub 6의 render 인자(sync)와 사라진 statsd에서 깨지지 않게 "
          "(5.5: Zero to JupyterHub 4.4.0의 허브)",
          "올라온 이슈를 찾지 못함 (https://github.com/jupyterhub/nativeauthenticator/issues)"),
    Patch("jupyterhub-nativeauthenticator", ("1.3.*",), "decodelab/classroom/auth.py",
          "로그인 처리기를 바꿔 끼움, 주소 속 이름을 NFC로, 가입 이름 규칙",
          "올라온 이슈를 찾지 못함 (https://github.com/jupyterhub/nativeauthenticator/issues)"),
)}


def _installed(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def require(dist: str) -> str:
    """The installed version of ``dist`` (a key of :data:`PATCHES`) when it is one the patch was
    written for.

    Raises:
        PatchedVersionError: (Korean) it is another version (names the package, the installed and
            the expected versions, the patch's file and what to do); an ImportError, so an import of
            the patched module fails where it starts.
    """
    patch = PATCHES[dist]
    have = _installed(dist)
    if have is not None and patch.fits(have):
        return have
    want = " 또는 ".join(patch.versions)
    pin = next((v for v in patch.versions if not v.endswith(".*")), None)
    how = (f"'pip install --no-deps {dist}=={pin}'로 맞추거나" if pin else f"{want} 버전을 설치하거나")
    raise PatchedVersionError(
        f"decodelab의 {patch.where}는 {dist} {want}에 맞춰 고친 패치인데, 설치된 {dist}는 "
        f"{have or '없음'}입니다: {how} 패치를 새 버전에 맞게 고친 뒤 decodelab/classroom/pins.py의 버전을 바꾸세요 "
        "(lecturer/patches.md).")

"""Hangul in plots: the bundled NanumGothic draws Korean text and negative ticks with no warning."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import warnings

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib import font_manager  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from decodelab import plots  # noqa: E402

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(autouse=True)
def _korean_font():
    with matplotlib.rc_context():
        plots.setup_korean_font()
        yield


def test_bundled_font_and_licence_are_shipped():
    assert plots.FONT_PATH.is_file()
    assert plots.FONT_PATH.stat().st_size > 1_000_000  # whole font, not a stub
    licence = plots.FONT_LICENSE_PATH.read_text(encoding="utf-8")
    assert "SIL OPEN FONT LICENSE" in licence.upper()


def test_font_character_map():
    # Hangul syllables, the ASCII hyphen-minus and Greek letters used in the course are present;
    # U+2212 MINUS SIGN is not, which is why axes.unicode_minus must be off.
    assert plots.font_has_char("가힣디코드토큰")
    assert plots.font_has_char("-")
    assert plots.font_has_char("αγ")
    assert not plots.font_has_char("\N{MINUS SIGN}")
    with pytest.raises(FileNotFoundError, match="글꼴 파일"):
        plots.font_has_char("가", path=plots.FONT_DIR / "no-such-font.ttf")


def test_rcparams_after_setup():
    rc = matplotlib.rcParams
    assert rc["font.sans-serif"][:2] == ["NanumGothic", "DejaVu Sans"]
    assert rc["font.family"] == ["sans-serif", "DejaVu Sans"]
    assert rc["axes.unicode_minus"] is False
    found = font_manager.findfont(font_manager.FontProperties(family=["sans-serif"]), fallback_to_default=False)
    assert found == str(plots.FONT_PATH)
    # registering twice does not add a second entry
    plots.setup_korean_font()
    entries = [f for f in font_manager.fontManager.ttflist if f.fname == str(plots.FONT_PATH)]
    assert len(entries) == 1
    assert entries[0].name == "NanumGothic"


def test_import_alone_registers_the_font():
    code = (
        "import warnings, matplotlib; matplotlib.use('Agg'); warnings.simplefilter('error');"
        "import decodelab.plots;"
        "from matplotlib import rcParams as r;"
        "print(r['font.sans-serif'][0], r['axes.unicode_minus'])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["NanumGothic", "False"]


def _korean_figure(fig, ax):
    x = np.arange(-5, 6)
    ax.plot(x, x**2 - 10)
    ax.set_title("디코드 단계: 토큰당 출력 시간 (TPOT)")
    ax.set_xlabel("토큰 위치 γ")
    ax.set_ylabel("지연 차이 (ms)")
    ax.text(-4, 5, "초안 모델 ≈ 대상 모델")
    return fig


def test_korean_figure_with_negative_ticks_saves_without_glyph_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Glyph ... missing from font(s)" is a UserWarning
        fig, ax = plots.new_figure(figsize=(4, 3))
        try:
            _korean_figure(fig, ax)
            buf = io.BytesIO()
            fig.savefig(buf, format="png", dpi=60)
            labels = [t.get_text() for t in ax.get_yticklabels()]
        finally:
            matplotlib.pyplot.close(fig)
    assert buf.getvalue().startswith(PNG_SIGNATURE)
    negative = [t for t in labels if t.startswith(("-", "\N{MINUS SIGN}"))]
    assert negative, labels
    assert all(t.startswith("-") for t in negative)  # ASCII hyphen-minus, which the font has


def test_missing_font_would_be_caught():
    # Control: the same figure in a font without Hangul must fail under warnings-as-errors,
    # so the test above really detects missing glyphs.
    with matplotlib.rc_context({"font.family": ["DejaVu Sans"]}), warnings.catch_warnings():
        warnings.simplefilter("error")
        fig = Figure(figsize=(4, 3))
        _korean_figure(fig, fig.subplots())
        with pytest.raises(UserWarning, match="missing from font"):
            fig.savefig(io.BytesIO(), format="png", dpi=60)


def _render_text(text: str) -> np.ndarray:
    fig = Figure(figsize=(1, 1), dpi=50)
    fig.text(0.1, 0.3, text, fontsize=30)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[..., 0].copy()


def test_hangul_glyphs_are_distinct_not_boxes():
    # A missing glyph is drawn as the same empty box for every character; real glyphs differ.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ga, na, blank = _render_text("가"), _render_text("나"), _render_text("")
    assert (ga < 128).sum() > 20  # ink was drawn
    assert not np.array_equal(ga, na)
    assert not np.array_equal(ga, blank)


def test_new_figure_without_pyplot():
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    fig, axes = plots.new_figure(1, 2, pyplot=False, figsize=(4, 2), sharey=True)
    assert isinstance(fig, Figure)
    assert axes.shape == (2,)
    assert plt.get_fignums() == before  # pyplot does not track it, nothing to close
    assert fig.get_size_inches().tolist() == [4.0, 2.0]


def test_import_decodelab_alone_makes_students_plots_korean():
    # A student's own figure after a bare `import decodelab`: Korean title, negative ticks, saved
    # with warnings as errors (a missing glyph is a UserWarning), and torch was never imported.
    # `import decodelab` itself does not import matplotlib: the font is registered right after the
    # student's own `import matplotlib` (decodelab._FontAfterMatplotlib).
    code = (
        "import sys, warnings, io;"
        "import decodelab;"
        "print('matplotlib' in sys.modules);"
        "import matplotlib; matplotlib.use('Agg');"
        "import matplotlib.pyplot as plt;"
        "warnings.simplefilter('error');"
        "fig, ax = plt.subplots(); ax.plot([-3, -1, 2], [-2, 0, 1]); ax.set_title('내 그림: 음수 눈금');"
        "fig.savefig(io.BytesIO(), format='png', dpi=50);"
        "ticks = [t.get_text() for t in ax.get_yticklabels()];"
        "print(any(t.startswith('-') for t in ticks), 'torch' in sys.modules, 'transformers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True", "False", "False"]


@pytest.mark.parametrize("first", ["import matplotlib.pyplot as plt", "from decodelab import plots",
                                   "import matplotlib.font_manager",
                                   # a library asking whether matplotlib is installed imports nothing
                                   "import importlib.util; importlib.util.find_spec('matplotlib')",
                                   # the package imported again (%autoreload): still one hook
                                   "import importlib; importlib.reload(decodelab); importlib.reload(decodelab)",
                                   "del sys.modules['decodelab']; import decodelab"])
def test_the_font_is_registered_whichever_import_brings_matplotlib(first):
    # the post-import hook runs once, after matplotlib itself, whatever imported it, and leaves
    # sys.meta_path
    code = (
        "import sys, decodelab;"
        f"{first};"
        "import matplotlib;"
        "print(matplotlib.rcParams['font.sans-serif'][0], matplotlib.rcParams['axes.unicode_minus'],"
        " any(type(f).__name__ == '_FontAfterMatplotlib' for f in sys.meta_path))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "MPLBACKEND": "Agg"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["NanumGothic", "False", "False"]


def test_matplotlib_imported_before_decodelab_gets_the_font_at_once():
    before = subprocess.run([sys.executable, "-c", "import matplotlib, decodelab; print(matplotlib.rcParams['font.sans-serif'][0])"],
                            capture_output=True, text=True, env={**os.environ, "MPLBACKEND": "Agg"})
    assert before.stdout.split() == ["NanumGothic"], before.stderr


def test_a_font_that_cannot_be_registered_never_breaks_matplotlib():
    # the hook runs inside matplotlib's own import: its error is a warning, matplotlib stays usable
    code = (
        "import warnings, decodelab\n"
        "decodelab._register_font = lambda: 1 / 0\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    import matplotlib.pyplot as plt\n"
        "fig, ax = plt.subplots(); ax.plot([1, 2])\n"
        "mine = [str(w.message) for w in caught if '한글 글꼴' in str(w.message)]\n"
        "print(len(mine), 'ZeroDivisionError' in mine[0])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "MPLBACKEND": "Agg"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1", "True"], out.stdout + out.stderr


def test_the_decodelab_commands_never_import_matplotlib():
    # a command that draws nothing (the hub's spawn hook, `decodelab quiz`, nbgrader's steps)
    # does not pay for matplotlib (about 0.3 s of CPU per process here)
    code = "import sys, runpy; sys.argv = ['decodelab', 'quiz', '--help']\ntry:\n    runpy.run_module('decodelab', run_name='__main__')\nexcept SystemExit:\n    pass\nprint('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip().splitlines()[-1] == "False", out.stdout + out.stderr


def test_without_the_package_the_same_plot_warns():
    # Control for the test above: the same plot without `import decodelab` draws missing glyphs.
    code = (
        "import warnings, io, matplotlib; matplotlib.use('Agg');"
        "matplotlib.rcParams['font.family'] = ['DejaVu Sans'];"
        "import matplotlib.pyplot as plt; warnings.simplefilter('error');"
        "fig, ax = plt.subplots(); ax.set_title('내 그림: 음수 눈금');"
        "fig.savefig(io.BytesIO(), format='png', dpi=50)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode != 0 and "missing from font" in out.stderr


def test_distribution_figure_labels_are_plain_text_and_readable(pair):
    # The end-of-sequence token must read as itself in a figure (matplotlib draws text literally,
    # so HTML escaping would show "&lt;/s&gt;"), labels are horizontal and at least 10 pt.
    import torch

    from decodelab.teach.widgets.decode import distribution_figure

    tok = pair.tokenizer
    eos = tok.eos_token_id
    logits = torch.zeros(len(tok))
    logits[eos] = 5.0
    fig = distribution_figure(logits, tok, [dict(temperature=1.0), dict(temperature=0.5, top_k=5)], k=4)
    try:
        ax = fig.axes[0]
        labels = [t.get_text() for t in ax.get_yticklabels()]
        assert labels[0] == tok.decode([eos]) and "&" not in "".join(labels)
        for t in ax.get_yticklabels() + ax.get_xticklabels():
            assert t.get_rotation() == 0 and t.get_fontsize() >= 10
        assert ax.title.get_fontsize() >= 10
    finally:
        matplotlib.pyplot.close(fig)


def test_decode_explorer_descriptions_are_not_cut(pair):
    from decodelab.teach.widgets.decode import DecodeExplorer

    w = DecodeExplorer(pair.target, pair.tokenizer, max_new_tokens=2)
    for control in (w.n, w.temperature, w.top_k, w.top_p, w.seed, w.delay):
        assert control.style.description_width == "initial", control.description


def test_a_missing_font_says_how_to_reinstall_an_installed_package(monkeypatch, tmp_path):
    monkeypatch.setattr(plots, "FONT_PATH", tmp_path / "NanumGothic.ttf")
    with pytest.raises(FileNotFoundError) as e:
        plots.setup_korean_font()
    assert "pip install --force-reinstall --no-deps decodelab" in str(e.value)
    assert "저장소 폴더에서 pip install -e ." in str(e.value) and str(tmp_path) in str(e.value)

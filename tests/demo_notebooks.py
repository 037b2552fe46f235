"""Small notebooks that exercise the browser harness itself (written by tests/browserkit.py, checked by tests/test_browser.py).

``good``: Korean markdown, an IntSlider observed by an Output that redraws ONE matplotlib figure
with a Korean title and negative ticks (the course's widget pattern). Everything must pass.

``broken``: one of each failure the browser test must report: a widget whose front-end model
does not exist ("Error displaying widget"), a warning on stderr, a slider that changes nothing,
and an exception. If the harness finds fewer problems than these, the harness is broken.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}

GOOD_CELLS = [
    new_markdown_cell("# 디코드 단계 시험용 노트북\n\n슬라이더를 움직이면 그래프 제목의 토큰 수가 바뀝니다. 한글: 가나다라마바사"),
    new_code_cell(
        "import ipywidgets as widgets\n"
        "import matplotlib.pyplot as plt\n"
        "import numpy as np\n"
        "from IPython.display import display\n"
        "from decodelab.plots import new_figure\n"
    ),
    new_code_cell(
        "slider = widgets.IntSlider(value=3, min=1, max=8, description='토큰 수', continuous_update=False)\n"
        "out = widgets.Output()\n"
        "\n"
        "def draw(n):\n"
        "    with out:\n"
        "        out.clear_output(wait=True)\n"
        "        fig, ax = new_figure(figsize=(5, 3))\n"
        "        x = np.arange(-n, n + 1)\n"
        "        ax.plot(x, x ** 2 - n, marker='o')\n"
        "        ax.set_title(f'토큰 {n}개: 지연 차이 (ms)')\n"
        "        ax.set_xlabel('토큰 위치')\n"
        "        plt.show()\n"
        "\n"
        "slider.observe(lambda change: draw(change['new']), names='value')\n"
        "draw(slider.value)\n"
        "display(widgets.VBox([slider, out]))\n"
    ),
    new_markdown_cell("## 핵심 정리\n\n디코드 단계는 토큰을 하나씩 만듭니다."),
]

BROKEN_CELLS = [
    new_markdown_cell("# 고장 난 노트북 (하네스 점검용)"),
    new_code_cell(
        "import warnings, ipywidgets as widgets\n"
        "from traitlets import Unicode\n"
        "class Ghost(widgets.DOMWidget):\n"
        "    _model_module = Unicode('decodelab-no-such-module').tag(sync=True)\n"
        "    _view_module = Unicode('decodelab-no-such-module').tag(sync=True)\n"
        "    _model_name = Unicode('GhostModel').tag(sync=True)\n"
        "    _view_name = Unicode('GhostView').tag(sync=True)\n"
        "Ghost()\n"
    ),
    new_code_cell("warnings.warn('하네스 점검용 경고')\n"),
    new_code_cell("widgets.IntSlider(value=2, min=0, max=5, description='아무것도 안 함')\n"),
    new_code_cell("raise ValueError('하네스 점검용 오류')\n"),
    new_code_cell("print('not reached')\n"),
]

#: what the harness reports for the broken notebook; a widget problem brings a "diagnosis" with it
#: (the widget models, the kernel connection and the browser console: browserkit._diagnose)
EXPECTED_BROKEN_KINDS = {"widget-error", "stderr", "slider-no-effect", "error", "not-executed", "diagnosis"}


def write(folder: Path, kind: str) -> Path:
    """Write the ``kind`` ("good" or "broken") demo notebook into ``folder``; return its path."""
    cells = {"good": GOOD_CELLS, "broken": BROKEN_CELLS}[kind]
    nb = new_notebook(cells=cells, metadata={"kernelspec": KERNELSPEC, "language_info": {"name": "python"}})
    path = Path(folder) / f"demo_{kind}.ipynb"
    nbformat.write(nb, path)
    return path

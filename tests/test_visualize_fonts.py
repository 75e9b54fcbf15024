"""`toolkit visualize` labels in any script: a font that has the characters, or one note naming the script and a font package.

The fonts "installed" are matplotlib's own (the same on every machine), so that no test depends on
which fonts the machine has: none of them has CJK or Devanagari glyphs; DejaVu Sans has Arabic.
"""

import warnings
from pathlib import Path

import pytest
import torch

pytest.importorskip("matplotlib")

import matplotlib

from toolkit.visualization import fonts
from toolkit.visualization.command import save_png
from toolkit.visualization.heatmaps import heatmap_figure

BUNDLED = Path(matplotlib.get_data_path(), "fonts", "ttf")
FILES = {
    "DejaVu Sans": "DejaVuSans.ttf",
    "DejaVu Serif": "DejaVuSerif.ttf",
    "STIXGeneral": "STIXGeneral.ttf",
    "cmr10": "cmr10.ttf",
    "Last Resort High-Efficiency": "LastResortHE-Regular.ttf",  # a box for everything: never a fallback
}
CHINESE, ARABIC, DEVANAGARI = "中文", "سلام", "नमस्ते"


@pytest.fixture(autouse=True)
def bundled_fonts_only(monkeypatch):
    monkeypatch.setattr(fonts, "installed_fonts", lambda: {family: str(BUNDLED / file) for family, file in FILES.items()})


def draw(labels: list[str], default_family: str, tmp_path: Path) -> tuple[list[str], list[str], object]:
    """Notes and warnings of a heatmap over *labels* made and saved as ``toolkit visualize`` does, and the figure."""
    notes = []
    with matplotlib.rc_context({"font.family": [default_family]}), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with fonts.covering_fonts(labels, notes.append):
            figure = heatmap_figure([("head 0", torch.rand(len(labels), len(labels)))], labels, labels, "self-attention", "queries", "keys")
            save_png(figure, tmp_path / "attention.png")
    return notes, [str(warning.message) for warning in caught], figure


def test_characters_no_font_has_get_one_note_per_script_and_no_glyph_warnings(tmp_path):
    notes, caught, _ = draw([CHINESE, ARABIC, DEVANAGARI, "word", CHINESE + "!"], "DejaVu Sans", tmp_path)
    assert not [message for message in caught if "Glyph" in message]
    assert len(notes) == 2, notes  # Arabic is DejaVu Sans's own
    cjk, devanagari = notes
    assert "CJK characters" in cjk and "apt-get install fonts-noto-cjk" in cjk and matplotlib.get_cachedir() in cjk
    assert "DEVANAGARI characters" in devanagari and "apt-get install fonts-noto-core" in devanagari
    assert (tmp_path / "attention.png").stat().st_size > 0


def test_a_font_that_has_the_characters_is_fallen_back_on(tmp_path):
    notes, caught, figure = draw([ARABIC, "word"], "DejaVu Serif", tmp_path)  # DejaVu Serif has no Arabic
    assert notes == [] and not [message for message in caught if "Glyph" in message]
    label = figure.axes[0].get_yticklabels()[0]
    assert label.get_text() == ARABIC and label.get_fontfamily() == ["DejaVu Serif", "DejaVu Sans"]


def test_fallbacks_are_the_fewest_fonts_and_never_the_placeholder():
    with matplotlib.rc_context({"font.family": ["cmr10"]}):  # ASCII letters only
        assert fonts.fallback_families(["abc", "Ωμέγα"]) == (["DejaVu Sans"], "")
        assert fonts.fallback_families([CHINESE + " x"]) == ([], "中文")
        assert fonts.fallback_families(["abc"]) == ([], "")


def test_a_script_is_unicodes_name_for_it():
    assert [fonts.script(char) for char in "中ना ب😀"] == ["CJK", "DEVANAGARI", "DEVANAGARI", "SPACE", "ARABIC", "GRINNING FACE"]

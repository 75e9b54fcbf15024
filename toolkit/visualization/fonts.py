"""Fonts for labels in any script: matplotlib's default font has no CJK or Indic glyphs, and warns once per glyph.

:func:`covering_fonts` falls back on the installed fonts that have the characters the default font
lacks (matplotlib tries a list of families in turn); characters that no installed font has are named
once per script, with a font package to install, instead of matplotlib's warning for every glyph.
"""

import unicodedata
import warnings
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import cache

import matplotlib
from matplotlib import font_manager

GLYPH_WARNING = r"Glyph \d+ .* missing from font"
PLACEHOLDERS = ("Last Resort",)  # matplotlib's own last fallback: a box for every character, so it covers nothing
CJK = ("CJK", "HIRAGANA", "KATAKANA", "HANGUL", "BOPOMOFO", "IDEOGRAPHIC", "FULLWIDTH", "HALFWIDTH")


@contextmanager
def covering_fonts(texts: Iterable[str], note: Callable[[str], None]) -> Iterator[None]:
    """Figures made and saved inside draw *texts* with fonts that have their characters, or say once which are missing."""
    families, missing = fallback_families(texts)
    for message in missing_font_notes(missing):
        note(message)
    with matplotlib.rc_context({"font.family": [*matplotlib.rcParams["font.family"], *families]}), warnings.catch_warnings():
        warnings.filterwarnings("ignore", GLYPH_WARNING, UserWarning)  # said above, once per script
        yield


def fallback_families(texts: Iterable[str]) -> tuple[list[str], str]:
    """The installed families that have the characters of *texts* the default font lacks, the most useful first; and the characters none has."""
    wanted = {ord(char) for text in texts for char in text if char.isprintable() and not char.isspace()}
    for family in matplotlib.rcParams["font.family"]:
        wanted -= charmap(font_manager.findfont(font_manager.FontProperties(family=[family])))
    candidates = {family: path for family, path in installed_fonts().items() if not family.startswith(PLACEHOLDERS)}
    families = []
    while wanted and candidates:
        best = max(sorted(candidates), key=lambda family: len(wanted & charmap(candidates[family])))
        if not wanted & charmap(candidates[best]):
            break
        families.append(best)
        wanted -= charmap(candidates.pop(best))
    return families, "".join(sorted(map(chr, wanted)))


def installed_fonts() -> dict[str, str]:
    """Every font family matplotlib knows -> the file of its face nearest to regular."""
    files = {}
    for entry in sorted(font_manager.fontManager.ttflist, key=irregularity, reverse=True):  # the most regular face last wins
        files[entry.name] = entry.fname
    return files


def irregularity(entry: font_manager.FontEntry) -> tuple[bool, int, str]:
    weight = entry.weight if isinstance(entry.weight, int) else font_manager.weight_dict.get(entry.weight, 400)
    return entry.style != "normal", abs(weight - 400), entry.fname


@cache
def charmap(path: str) -> frozenset[int]:
    """The code points the font file *path* has glyphs for (none if FreeType cannot read it)."""
    try:
        return frozenset(font_manager.get_font(path).get_charmap())
    except (OSError, RuntimeError):
        return frozenset()


def missing_font_notes(characters: str) -> list[str]:
    """One note per script of *characters* (Unicode's name for it, e.g. ``DEVANAGARI``), with a font package that has it."""
    return [
        f"no installed font has {name} characters, so they are drawn as boxes: install a font with them "
        f"(Debian, Ubuntu: apt-get install {'fonts-noto-cjk' if name.split()[0] in CJK else 'fonts-noto-core'}), "
        f"then delete matplotlib's font cache in {matplotlib.get_cachedir()} so that it finds the font"
        for name in sorted({script(char) for char in characters})
    ]


def script(char: str) -> str:
    """The script of a letter, mark or digit as Unicode names it (``CJK``, ``ARABIC``); a symbol's whole name."""
    name = unicodedata.name(char, f"U+{ord(char):04X}")
    return name.split()[0] if unicodedata.category(char)[0] in "LMN" else name

"""How every message tells the user to install an optional dependency: one form, so that they agree.

``pip install "parsing-toolkit[EXTRA]"`` works from PyPI and in an editable checkout alike (pip keeps
the installed toolkit and adds the extra's packages), and installs the versions setup.cfg pins.
"""

DISTRIBUTION = "parsing-toolkit"
# setup.cfg's [options.extras_require]; tests/test_extras.py keeps the two in step
EXTRAS = ("test", "viz", "spacy", "transformers", "ud-anchors", "geo", "serve", "scale", "browser", "lint", "docs")


def install_hint(*extras: str) -> str:
    """``pip install "parsing-toolkit[viz]"`` for ``install_hint("viz")``; a name that is not an extra is a bug."""
    unknown = [extra for extra in extras if extra not in EXTRAS]
    if unknown or not extras:
        raise ValueError(f"not extras of {DISTRIBUTION}: {unknown or 'none given'} (its extras: {', '.join(EXTRAS)})")
    return f'pip install "{DISTRIBUTION}[{",".join(extras)}]"'

"""MkDocs hook (mkdocs.yml's ``hooks``): docs/changelog.md shows CHANGELOG.md at the repository root.

The changelog stays where Keep a Changelog puts it. Its links are written from the repository
root: those into ``docs/`` are made relative to the docs folder, and those to other files of the
repository (which the site does not hold) become the path in code, so that the strict build
never fails on a changelog entry.
"""

import re
from pathlib import Path

OUTSIDE_DOCS = re.compile(r"\[([^\]]+)\]\((?!https?://|mailto:|#|docs/)([^)\s]+)\)")


def on_page_markdown(markdown, page, config, files):  # MkDocs passes every argument by name
    if page.file.src_uri != "changelog.md":
        return markdown
    text = (Path(config["config_file_path"]).parent / "CHANGELOG.md").read_text(encoding="utf-8")
    return OUTSIDE_DOCS.sub(r"\1 (`\2`)", text.replace("](docs/", "]("))

"""The README and the documentation site's sources (docs/, mkdocs.yml): text checks only.

`mkdocs build --strict` (in .ci/run) checks every link, anchor and API reference of the site;
.ci/readme_examples runs the README's examples. These checks need neither MkDocs nor a network.
"""

import re

from tests.conftest import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")


def fenced_blocks(text: str) -> list[tuple[str, str]]:
    """(info string, body) of every top-level fenced block, in order."""
    return re.findall(r"^```(\w*)\n(.*?)^```$", text, flags=re.MULTILINE | re.DOTALL)


def test_the_readme_is_short():
    assert len(README.splitlines()) <= 300, "move detail to docs/, keep the README at most 300 lines"


def test_the_readme_examples_use_the_quickstart_archive():
    blocks = fenced_blocks(README)
    bash = [body for kind, body in blocks if kind == "bash"]
    assert bash[0].startswith("pip install torch==2.13.0 && pip install -e . && toolkit train")
    assert bash[1].startswith('pip install torch==2.13.0 && pip install -e ".[test]" && pytest')
    examples = [(kind, body) for kind, body in blocks if kind in ("bash", "python")][2:]  # what .ci/readme_examples runs
    assert "jsonnet_configs/ud_ewt_quickstart.jsonnet" in examples[0][1]
    assert (REPO / "jsonnet_configs" / "ud_ewt_quickstart.jsonnet").is_file()
    for needed in ("toolkit predict", "toolkit serve", "load_predictor", "toolkit_parser"):
        assert any(needed in body and "runs/ewt_quickstart/model.tar.gz" in body for _, body in examples), needed


def test_the_readme_links_resolve():
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README):
        if not re.match(r"https?://", target):
            assert (REPO / target).exists(), f"README.md links to {target}, which does not exist"


def test_no_internal_issue_numbers():
    texts = {"README.md": README, **{str(path.relative_to(REPO)): path.read_text(encoding="utf-8") for path in (REPO / "docs").rglob("*.md")}}
    for name, text in texts.items():
        assert not re.search(r"\bissues? #?\d+", text, flags=re.IGNORECASE), f"{name} cites an issue number, which means nothing outside this repository"


def test_every_page_is_in_the_site_navigation():
    config = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    listed = set(re.findall(r":\s*([\w/]+\.md)\s*$", config, flags=re.MULTILINE))
    pages = {str(path.relative_to(REPO / "docs")) for path in (REPO / "docs").rglob("*.md")}
    assert pages <= listed, f"pages missing from mkdocs.yml's nav: {sorted(pages - listed)}"


def test_the_docs_extra_installs_the_site_builder():
    setup = (REPO / "setup.cfg").read_text(encoding="utf-8")
    assert re.search(r"^docs =\n    mkdocs>=1\.6\n    mkdocs-material>=9\.5\n    mkdocstrings\[python\]>=0\.26$", setup, flags=re.MULTILINE)

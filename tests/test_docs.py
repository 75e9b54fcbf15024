"""The README and the documentation site's sources (docs/, mkdocs.yml): text checks only.

`mkdocs build --strict` (in .ci/run) checks every link, anchor and API reference of the site;
.ci/doc_examples.py runs the examples of the README and of every page. These checks need neither
MkDocs nor a network.
"""

import importlib.util
import re
import sys

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
    assert bash[0].startswith('pip install torch==2.13.0 && pip install -e ".[geo,serve]" && toolkit train')
    assert bash[1].startswith('pip install torch==2.13.0 && pip install -e ".[test]" && pytest')
    examples = [(kind, body) for kind, body in blocks if kind in ("bash", "python")][2:]  # what .ci/doc_examples.py runs of it
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


# ------------------------------------------------------------------ the examples CI runs


def doc_examples():
    """The module .ci/doc_examples.py (the runner CI uses), imported from its file."""
    if "doc_examples" not in sys.modules:
        spec = importlib.util.spec_from_file_location("doc_examples", REPO / ".ci" / "doc_examples.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["doc_examples"] = module
        spec.loader.exec_module(module)
    return sys.modules["doc_examples"]


def test_every_block_of_every_page_is_run_or_shown_on_purpose():
    """Each fenced block of the README and docs/ is run by the runner, a file it writes or checks, or in a
    shown-only language; no block without a language, no server used before it answers. A new page is
    covered by itself: the runner takes every page under docs/.
    """
    runner = doc_examples()
    pages = runner.pages()
    assert set(pages[1:]) == set((REPO / "docs").rglob("*.md")) and pages[0] == REPO / "README.md"
    blocks = [block for page in pages for block in runner.read_blocks(page)]  # a BlockError names the page and line
    for block in blocks:
        if block.language in ("bash", "python") and not block.title:
            assert block.action in ("bash", "python", "ci"), block.where
        else:
            assert block.action in ("shown", "write", "excerpt") and (block.title or block.language in runner.SHOWN), block.where
    ran = [block for block in blocks if block.action in ("bash", "python") and not block.page.startswith("README")]
    assert len(ran) >= 20 and {"docs/getting_started.md", "docs/tree_codec_guide.md", "docs/plugin_guide.md"} <= {block.page for block in ran}


def test_the_getting_started_server_is_waited_for():
    """The reported case: `toolkit serve ... &` then curl at once was refused; the page now polls /health first."""
    page = (REPO / "docs" / "getting_started.md").read_text(encoding="utf-8")
    served = next(body for kind, body in fenced_blocks(page) if kind == "bash" and "toolkit serve" in body)
    assert served.index("/health") < served.index("/predict")

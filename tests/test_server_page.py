"""`toolkit serve`'s page in a real, headless Chromium (Playwright driving Debian's /usr/bin/chromium).

Skipped where Playwright or Chromium is missing, except with ``REQUIRE_BROWSER=1``, which ``.ci/run``
sets once it has installed both.
"""

import os
import shutil
from pathlib import Path

import pytest

from toolkit.serving.launch import start_server

CHROMIUM = os.environ.get("CHROMIUM", shutil.which("chromium") or "/usr/bin/chromium")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def needs(ready: bool, why: str) -> None:
    if not ready:
        if os.environ.get("REQUIRE_BROWSER") == "1":
            pytest.fail(f"REQUIRE_BROWSER=1, and the browser test cannot run: {why}")
        pytest.skip(why)


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        needs(False, 'Playwright is not installed: pip install -e ".[browser]"')
    needs(Path(CHROMIUM).exists(), f"no Chromium at {CHROMIUM} (Debian: apt-get install chromium)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield browser
        browser.close()


def parse_on_page(browser, url: str, sentence: str, screenshot: Path):
    page = browser.new_page(viewport={"width": 1100, "height": 700})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(url)
    page.wait_for_function("!document.getElementById('model').textContent.startsWith('loading')")
    page.fill("#sentence", sentence)
    page.press("#sentence", "Enter")
    page.wait_for_function("document.getElementById('json').textContent || document.getElementById('error').textContent")
    page.screenshot(path=str(screenshot), full_page=True)
    return page, errors


def test_the_page_draws_an_amr_graph(browser, amr_archive, tmp_path):
    server = start_server(amr_archive, "--device", "cpu", threads=1)
    url = server.url
    try:
        page, errors = parse_on_page(browser, url, "The little prince saw a <b>rose</b> .", tmp_path / "amr.png")
        assert errors == [] and page.text_content("#error") == ""
        assert page.get_attribute("#picture", "data-kind") == "amr"
        assert page.locator("#picture svg g.top").count() == 1  # the graph's top concept, drawn
        assert page.locator("#picture svg rect").count() >= 1
        assert page.locator("#picture b").count() == 0  # the user's markup is text, not markup
        assert '"graph"' in page.text_content("#json")
        assert "grammar amr" in page.text_content("#model")
        page.fill("#sentence", "   ")
        page.click("#parse")
        page.wait_for_function("document.getElementById('error').textContent")
        assert page.text_content("#error").startswith("422: ")  # a bad input is reported on the page
        assert page.locator("#picture svg").count() == 0
    finally:
        server.stop()


def test_the_page_draws_a_dependency_tree(browser, dependency_archive, tmp_path):
    server = start_server(dependency_archive, "--device", "cpu", threads=1)
    url = server.url
    try:
        page, errors = parse_on_page(browser, url, "The cat sat on the mat .", tmp_path / "dependency.png")
        assert errors == [] and page.text_content("#error") == ""
        try:
            import spacy  # noqa: F401
        except ImportError:
            assert "spaCy is not installed" in page.text_content("#note")
            return
        assert page.get_attribute("#picture", "data-kind") == "dependency"
        words = page.locator("#picture svg .displacy-word").all_text_contents()
        assert words == ["The", "cat", "sat", "on", "the", "mat", "."]
        assert page.locator("#picture svg .displacy-arc").count() == 6  # every word but the root has an arc
    finally:
        server.stop()

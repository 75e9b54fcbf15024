"""`toolkit serve`'s page in a real, headless Chromium (Playwright driving Debian's /usr/bin/chromium).

Skipped where Playwright or Chromium is missing, except with ``REQUIRE_BROWSER=1``, which ``.ci/run``
sets once it has installed both.
"""

import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.waiting import GENEROUS
from toolkit.serving.launch import free_port, start_command, start_server

REPO = Path(__file__).resolve().parents[1]

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
    page.set_default_timeout(GENEROUS * 1000)  # not Playwright's 30 s: a busy machine may take longer to load a page and decode
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("dialog", lambda dialog: (errors.append(f"a dialog opened: {dialog.message}"), dialog.dismiss()))
    page.goto(url)
    page.wait_for_function("!document.getElementById('model').textContent.startsWith('loading')")
    ask(page, sentence)
    page.screenshot(path=str(screenshot), full_page=True)
    return page, errors


def ask(page, sentence: str) -> None:
    page.fill("#sentence", sentence)
    page.press("#sentence", "Enter")
    page.wait_for_function("document.getElementById('json').textContent || document.getElementById('error').textContent")


def test_the_page_draws_an_amr_graph(browser, amr_archive, tmp_path):
    server = start_server(amr_archive, "--device", "cpu", threads=1, timeout=GENEROUS)
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
        assert page.text_content("#title") == "Parse a sentence"  # a parser of sentences keeps its words
        assert page.locator("#answer").is_hidden() and page.text_content("#answer").strip() == ""  # no executor, no answer line
        page.fill("#sentence", "   ")
        page.click("#parse")
        page.wait_for_function("document.getElementById('error').textContent")
        assert page.text_content("#error").startswith("422: ")  # a bad input is reported on the page
        assert page.locator("#picture svg").count() == 0
    finally:
        server.stop()


def test_the_page_draws_a_dependency_tree(browser, dependency_archive, tmp_path):
    server = start_server(dependency_archive, "--device", "cpu", threads=1, timeout=GENEROUS)
    url = server.url
    try:
        page, errors = parse_on_page(browser, url, "The cat sat on the mat .", tmp_path / "dependency.png")
        assert errors == [] and page.text_content("#error") == ""
        assert page.locator("#answer").is_hidden() and page.text_content("#answer").strip() == ""
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


# A server whose predictor answers as a GEO semantic parser with a Geobase executor does (tests/test_server.py's stub).
ANSWERING = r"""
import sys
sys.path.insert(0, sys.argv[1])
import uvicorn
from tests.test_server import AnsweringPredictor
from toolkit.serving.app import create_app
from toolkit.serving.batcher import Batcher

predictor = AnsweringPredictor()
info = {"archive": "geo.tar.gz", "predictor": "semantic_parser", "grammar": "anonymized", "model": "encoder_decoder", "metrics": {}}
uvicorn.run(create_app(predictor, Batcher(predictor.predict_batch), info), host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
"""


def test_the_page_shows_the_answer_under_the_tree(browser, tmp_path):
    port = free_port()
    server = start_command([sys.executable, "-c", ANSWERING, str(REPO), str(port)], port, threads=1, timeout=GENEROUS)
    try:
        page, errors = parse_on_page(browser, server.url, "What is the capital of Texas?", tmp_path / "answer.png")
        assert errors == [] and page.text_content("#error") == ""
        assert page.text_content("#title") == "Ask a question" and "question" in page.get_attribute("#sentence", "placeholder")  # a semantic parser's page
        assert page.text_content("#parse") == "Ask"
        assert page.get_attribute("#picture", "data-kind") == "tree"
        assert "_capital" in page.locator("#picture svg").all_text_contents()[0]
        assert page.locator("#answer").is_visible() and page.inner_text("#answer") == "Answer: austin"
        assert page.get_attribute("#answer", "data-ok") == "true"
        # under the tree: the answer line starts below the picture's bottom
        picture, answer = page.locator("#picture").bounding_box(), page.locator("#answer").bounding_box()
        assert answer["y"] >= picture["y"] + picture["height"] > picture["y"]

        ask(page, "What rivers run through New York?")
        assert page.inner_text("#answer") == "Answer: allegheny, delaware, hudson"
        assert "'new york'" in page.locator("#picture svg").all_text_contents()[0]

        ask(page, "A slow one")
        assert page.inner_text("#answer") == "No answer: the query ran past one of the executor's limits on time or Prolog calls"
        assert page.get_attribute("#answer", "data-ok") == "false"

        ask(page, "Who is the president?")  # an abstention: its own label and look, neither the green answer nor the red failure
        assert page.inner_text("#answer") == "Cannot answer: the question asks for a person, and Geobase holds nothing of that kind"
        assert page.get_attribute("#answer", "data-ok") == "false" and page.get_attribute("#answer", "data-abstained") == "true"
        looks = page.evaluate("(() => { const s = getComputedStyle(document.getElementById('answer')); return [s.borderLeftColor, s.backgroundColor]; })()")
        ask(page, "A slow one")
        assert page.get_attribute("#answer", "data-abstained") is None  # the last answer's look is gone
        failed = page.evaluate("(() => { const s = getComputedStyle(document.getElementById('answer')); return [s.borderLeftColor, s.backgroundColor]; })()")
        ask(page, "What is the capital of Texas?")
        answered = page.evaluate("(() => { const s = getComputedStyle(document.getElementById('answer')); return [s.borderLeftColor, s.backgroundColor]; })()")
        assert looks != failed and looks != answered and failed != answered

        ask(page, "hostile")  # answers and labels are drawn as text: no element, no script from them
        assert page.inner_text("#answer") == "Answer: <img src=x onerror=alert(1)>, &amp;"
        assert page.locator("#answer img, #picture img, #picture b").count() == 0

        page.fill("#sentence", "   ")
        page.click("#parse")
        page.wait_for_function("document.getElementById('error').textContent")
        assert page.locator("#answer").is_hidden() and page.text_content("#answer").strip() == ""  # the last answer is gone
        page.wait_for_timeout(200)  # time for an onerror to fire, had the markup been read as markup
        assert errors == []
    finally:
        server.stop()

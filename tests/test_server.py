"""`toolkit serve`: the batcher, the API's answers and errors, a clean SIGTERM, and the drawings.

No test here depends on how fast the machine is: the batcher's decoder is held by a gate, so what
queues behind a decode is decided by the order of events on the one event loop, never by a clock,
and the real server is waited on for events, with ``GENEROUS`` deadlines only a hang reaches.
"""

import asyncio
import json
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import ClassVar

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from tests.waiting import GENEROUS, wait_for
from toolkit.serving.batcher import Batcher, DecodingFailed, Overloaded
from toolkit.serving.launch import start_server

# ------------------------------------------------------------------ the batcher, with a fake decoder


class RecordingDecoder:
    """Upper-cases its inputs, records each batch, fails on "boom", and can be held back by a gate."""

    def __init__(self):
        self.batches: list[list[str]] = []
        self.gate = threading.Event()
        self.gate.set()

    def __call__(self, texts: list[str]) -> list[dict]:
        assert self.gate.wait(GENEROUS), "the gate was never opened"
        self.batches.append(list(texts))
        if "boom" in texts:
            raise RuntimeError("the model fell over")
        return [{"text": text.upper()} for text in texts]


@pytest.fixture
def decoder():
    decoder = RecordingDecoder()
    yield decoder
    decoder.gate.set()  # a test that failed with its gate closed leaves no decode waiting


def test_requests_that_arrive_together_are_decoded_together(decoder):
    async def scenario():
        batcher = Batcher(decoder, batch_size=64)
        await batcher.start()
        decoder.gate.clear()  # the first request's decode blocks, so the next five queue behind it
        first = asyncio.create_task(batcher.submit(["a"]))
        await asyncio.sleep(0.05)
        rest = [asyncio.create_task(batcher.submit([f"b{i}", f"c{i}"])) for i in range(5)]
        await asyncio.sleep(0.05)
        decoder.gate.set()
        results = [await first] + [await task for task in rest]
        await batcher.stop()
        return results, batcher.stats

    results, stats = asyncio.run(scenario())
    assert decoder.batches == [["a"], [f"{x}{i}" for i in range(5) for x in "bc"]]
    assert results[0] == [{"text": "A"}]
    assert results[1:] == [[{"text": f"B{i}"}, {"text": f"C{i}"}] for i in range(5)]  # each request gets its own, in order
    assert (stats.requests, stats.inputs, stats.batches, stats.largest) == (6, 11, 2, 10)


def test_batch_size_caps_what_is_taken_at_once(decoder):
    async def scenario():
        batcher = Batcher(decoder, batch_size=3)
        await batcher.start()
        decoder.gate.clear()
        tasks = [asyncio.create_task(batcher.submit([str(i)])) for i in range(7)]
        await asyncio.sleep(0.05)
        decoder.gate.set()
        await asyncio.gather(*tasks)
        await batcher.stop()

    asyncio.run(scenario())
    assert decoder.batches == [["0", "1", "2"], ["3", "4", "5"], ["6"]]


def test_a_failing_request_fails_alone(decoder):
    async def scenario():
        batcher = Batcher(decoder)
        await batcher.start()
        decoder.gate.clear()
        tasks = [asyncio.create_task(batcher.submit(texts)) for texts in (["x"], ["y"], ["boom"], ["z"])]
        await asyncio.sleep(0.05)
        decoder.gate.set()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        after = await batcher.submit(["w"])  # and the batcher goes on
        await batcher.stop()
        return results, after

    results, after = asyncio.run(scenario())
    assert results[0] == [{"text": "X"}] and results[1] == [{"text": "Y"}] and results[3] == [{"text": "Z"}]
    assert isinstance(results[2], DecodingFailed) and "the model fell over" in str(results[2])
    assert after == [{"text": "W"}]
    assert decoder.batches[:5] == [["x", "y", "boom", "z"], ["x"], ["y"], ["boom"], ["z"]]  # together, then one by one


def test_stop_answers_every_accepted_request_and_then_refuses(decoder):
    async def scenario():
        batcher = Batcher(decoder, batch_size=2)
        await batcher.start()
        decoder.gate.clear()
        tasks = [asyncio.create_task(batcher.submit([str(i)])) for i in range(9)]
        await asyncio.sleep(0.05)
        stopping = asyncio.create_task(batcher.stop())
        await asyncio.sleep(0.05)
        decoder.gate.set()
        await stopping
        with pytest.raises(Overloaded, match="shutting down"):
            await batcher.submit(["late"])
        return await asyncio.gather(*tasks)

    results = asyncio.run(scenario())
    assert results == [[{"text": str(i)}] for i in range(9)]


def test_a_full_queue_is_refused(decoder):
    async def scenario():
        batcher = Batcher(decoder, max_queue=4)
        await batcher.start()
        decoder.gate.clear()
        held = asyncio.create_task(batcher.submit(["a", "b", "c"]))
        await asyncio.sleep(0.05)  # taken into a batch: no longer waiting
        queued = asyncio.create_task(batcher.submit(["d", "e", "f", "g"]))
        await asyncio.sleep(0.01)
        with pytest.raises(Overloaded, match="4 inputs are waiting"):
            await batcher.submit(["h"])
        decoder.gate.set()
        await asyncio.gather(held, queued)
        await batcher.stop()

    asyncio.run(scenario())


# ------------------------------------------------------------------ the app, in-process


@pytest.fixture(scope="module")
def dependency_predictor(dependency_archive):
    from toolkit import load_predictor

    return load_predictor(dependency_archive, device="cpu")


@pytest.fixture
def client(dependency_predictor, dependency_archive):
    pytest.importorskip("httpx2")  # starlette's test client
    from starlette.testclient import TestClient

    from toolkit.serving.app import create_app
    from toolkit.serving.server import describe

    batcher = Batcher(dependency_predictor.predict_batch, batch_size=8)
    app = create_app(dependency_predictor, batcher, describe(dependency_archive, dependency_predictor, "dependency"), max_body=4096, max_inputs=5)
    with TestClient(app, raise_server_exceptions=False) as client:
        client.batcher = batcher
        yield client


def test_predict_answers_what_the_predictor_answers(client, dependency_predictor):
    sentences = ["The cat sat on the mat .", "Dogs bark", "It rained all day ."]
    expected = [dependency_predictor.predict(sentence) for sentence in sentences]
    one = client.post("/predict", json={"input": sentences[0]})
    assert one.status_code == 200 and one.json() == expected[0]
    many = client.post("/predict", json={"inputs": sentences})
    assert many.status_code == 200 and many.json() == {"outputs": expected}
    tokens = client.post("/predict", json={"input": {"tokens": ["Dogs", "bark"]}})  # an object, as a JSON input line
    assert tokens.json()["tokens"] == ["Dogs", "bark"]


@pytest.mark.parametrize(
    "body, status, message",
    [
        (b"not json", 400, "the body is not JSON"),
        (b"[1, 2]", 400, "must be a JSON object"),
        (b'{"sentence": "x"}', 400, 'needs "input"'),
        (b'{"input": 3}', 400, "input must be a string or a JSON object, not int"),
        (b'{"inputs": "x"}', 400, '"inputs" must be a list'),
        (b'{"inputs": ["a", 7]}', 400, "inputs[1] must be"),
        (b'{"inputs": ["a", "b", "c", "d", "e", "f"]}', 413, "6 inputs, more than the 5"),
        (b'{"input": "' + b"x " * 3000 + b'"}', 413, "more than the 4,096"),
        (b'{"input": "   "}', 422, "empty input line"),
        (b'{"input": "' + b"w " * 600 + b'"}', 422, "longer than this model can parse"),
        (b'{"input": "\xff\xfe"}', 400, "not JSON"),
    ],
)
def test_bad_requests_get_a_4xx_that_says_why(client, body, status, message):
    response = client.post("/predict", content=body, headers={"content-type": "application/json"})
    assert response.status_code == status
    assert message in response.json()["error"]


def test_a_rejected_input_in_a_batch_is_an_error_record_at_its_place(client):
    outputs = client.post("/predict", json={"inputs": ["Dogs bark", "", "Cats sleep"]}).json()["outputs"]
    assert [output.get("tokens") for output in outputs] == [["Dogs", "bark"], None, ["Cats", "sleep"]]
    assert outputs[1] == {"error": "empty input line", "input": ""}


def test_a_failure_in_one_prediction_is_a_500_for_that_request_alone(client, monkeypatch):
    original = client.batcher.decode

    def fragile(texts):
        if any("explode" in text for text in texts):
            raise IndexError("a bug in the decoder")
        return original(texts)

    monkeypatch.setattr(client.batcher, "decode", fragile)
    response = client.post("/predict", json={"input": "explode now"})
    assert response.status_code == 500 and "IndexError: a bug in the decoder" in response.json()["error"]
    assert client.post("/predict", json={"input": "Dogs bark"}).status_code == 200
    assert client.get("/health").json()["status"] == "ok"


def test_unknown_paths_and_methods_are_json_errors(client):
    assert client.get("/nowhere").status_code == 404 and "error" in client.get("/nowhere").json()
    assert client.get("/predict").status_code == 405


def test_info_and_health_describe_the_model(client, dependency_archive):
    info = client.get("/info").json()
    assert info["archive"] == str(dependency_archive) and info["predictor"] == "dependency"
    assert info["grammar"] == "arc_standard" and info["model"] == "encoder_decoder"
    assert "test_las" in info["metrics"] and info["plugins"] == [] and info["batching"]["batch_size"] == 8
    assert client.get("/health").json() == {"status": "ok", "waiting": 0}
    page = client.get("/")
    assert page.status_code == 200 and '<form id="form">' in page.text


def test_draw_returns_the_prediction_and_a_picture_or_says_what_is_missing(client):
    body = client.post("/draw", json={"input": "Dogs bark"}).json()
    assert body["output"]["tokens"] == ["Dogs", "bark"]
    assert "answer" not in body  # a dependency parser has no executor: no answer line on the page
    try:
        import spacy  # noqa: F401
    except ImportError:
        assert body["svg"] is None and "spaCy is not installed" in body["note"]
    else:
        assert body["kind"] == "dependency" and body["svg"].startswith("<svg") and ">Dogs<" in body["svg"]


# ------------------------------------------------------------------ a semantic parser's answers, under its tree

CAPITAL = "_answer ( A , ( _capital ( A ) , _loc ( A , B ) , _const ( B , _stateid ( texas ) ) ) )"
RIVERS = "_answer ( A , ( _river ( A ) , _traverse ( A , B ) , _const ( B , _stateid ( ' new york ' ) ) ) )"


class AnsweringPredictor:
    """What a semantic parser with a Geobase executor writes, without a model: each question's form and answer."""

    ANSWERS: ClassVar[dict[str, dict]] = {
        "capital": {"logical_form": CAPITAL, "answer": ["austin"]},
        "rivers": {"logical_form": RIVERS, "answer": ["allegheny", "delaware", "hudson"]},
        "nothing": {"logical_form": "_answer ( A , _const ( A , _cityid ( e0 , _ ) ) )", "answer": []},
        "slow": {"logical_form": "_answer ( A , _loop ( A ) )", "answer_error": "timeout"},
        "broken": {"logical_form": "_answer ( A", "answer_error": "error"},
        "hostile": {"logical_form": "_answer ( A , _const ( A , '<b>x</b>' ) )", "answer": ["<img src=x onerror=alert(1)>", "&amp;"]},
        "president": {
            "logical_form": "_answer ( A , _largest ( B , ( _state ( A ) , _population ( A , B ) ) ) )",
            "answer_error": "the question asks for a person, and Geobase holds nothing of that kind",
            "abstained": True,
        },
    }

    def predict_batch(self, texts: list[str]) -> list[dict]:
        outputs = []
        for text in texts:
            if not text.strip():
                outputs.append({"error": "empty input line", "input": text})
                continue
            key = next((key for key in self.ANSWERS if key in text.lower()), "nothing")
            outputs.append({"question": text.lower(), **self.ANSWERS[key]})
        return outputs


@pytest.fixture
def answering_client():
    pytest.importorskip("httpx2")
    from starlette.testclient import TestClient

    from toolkit.serving.app import create_app

    predictor = AnsweringPredictor()
    info = {"archive": "stub.tar.gz", "predictor": "semantic_parser", "grammar": "anonymized", "model": "encoder_decoder", "metrics": {}}
    with TestClient(create_app(predictor, Batcher(predictor.predict_batch), info), raise_server_exceptions=False) as client:
        yield client


@pytest.mark.parametrize(
    "question, ok, text",
    [
        ("What is the capital of Texas?", True, "austin"),
        ("What rivers run through New York?", True, "allegheny, delaware, hudson"),
        ("Where is nothing?", True, "none (the query ran and found nothing)"),
        ("A slow one", False, "the query ran past one of the executor's limits on time or Prolog calls"),
        ("Something broken", False, "the query could not run (it is malformed, names an unknown predicate, or failed while running)"),
        ("Who is the president?", False, "the question asks for a person, and Geobase holds nothing of that kind"),
    ],
)
def test_draw_gives_the_answer_line_the_page_shows_under_the_tree(answering_client, question, ok, text):
    body = answering_client.post("/draw", json={"input": question}).json()
    assert body["answer"]["ok"] is ok and body["answer"]["text"] == text
    abstained = "president" in question.lower()  # the parser declined to guess: neither an answer nor a failure
    assert body["answer"]["label"] == ("Answer" if ok else "Cannot answer" if abstained else "No answer")
    assert body["answer"].get("abstained", False) is abstained
    assert ("answer" in body["output"]) is ok and ("answer_error" in body["output"]) is not ok  # the record is the predictor's, as /predict gives it
    assert body["output"] == answering_client.post("/predict", json={"input": question}).json()


def test_a_prolog_query_is_drawn_as_its_term_tree(answering_client):
    body = answering_client.post("/draw", json={"input": "What is the capital of Texas?"}).json()
    assert body["kind"] == "tree"
    labels = [part.split("<")[0] for part in body["svg"].split('text-anchor="middle">')[1:]]
    # brackets that only group are no node; the conjunction is one "," node over its three goals
    assert labels == ["_answer", "A", ",", "_capital", "A", "_loc", "A", "B", "_const", "B", "_stateid", "texas"]
    rivers = answering_client.post("/draw", json={"input": "Which rivers?"}).json()
    assert rivers["kind"] == "tree" and ">&#x27;new york&#x27;<" in rivers["svg"]  # a quoted name of two words is one leaf
    broken = answering_client.post("/draw", json={"input": "Something broken"}).json()
    assert broken["svg"] is None and broken["note"].startswith("this output cannot be drawn: it is not a Prolog term")
    assert broken["answer"]["label"] == "No answer"  # the answer line comes with or without a picture


def test_answers_are_text_for_the_page_never_markup(answering_client):
    body = answering_client.post("/draw", json={"input": "hostile"}).json()
    assert body["answer"]["text"] == "<img src=x onerror=alert(1)>, &amp;"  # as the database gave it: the page writes it as text
    assert "<b>" not in body["svg"] and "&lt;b&gt;" in body["svg"]
    page = answering_client.get("/").text
    assert 'id="answer" role="status" hidden' in page and 'answer-text").textContent = body.answer.text' in page
    assert "innerHTML = body.answer" not in page


def test_logical_forms_in_either_notation_and_long_answer_lists():
    from toolkit.serving.drawing import MOST_ANSWERS, answer_line, logical_form_tree

    assert str(logical_form_tree("( lambda $0 e ( state:t $0 ) )")) == "( lambda $0 e ( state:t $0 ) )"
    assert str(logical_form_tree("job ( ANS ) , \\+ ( a ( X ) ; b )")) == "( , ( job ANS ) ( \\+ ( ; ( a X ) b ) ) )"
    assert str(logical_form_tree("austin")) == "austin"
    for text, why in (("hello , world", "the expression already ended"), ("( a b", "not an s-expression"), ("f ( ' new york )", "not a Prolog term")):
        with pytest.raises(ValueError, match=why):
            logical_form_tree(text)
    many = answer_line({"answer": [str(number) for number in range(MOST_ANSWERS + 5)]})
    assert many["count"] == MOST_ANSWERS + 5 and many["text"].endswith(f"{MOST_ANSWERS - 1} … and 5 more (see the JSON)")
    assert answer_line({"answer": ["10"]})["text"] == "10" and answer_line({"tokens": ["a"], "heads": [0]}) is None
    no_swipl = "executing needs SWI-Prolog (swipl), which is not installed"
    assert answer_line({"answer_error": no_swipl}) == {"ok": False, "label": "No answer", "text": no_swipl}
    detailed = answer_line({"answer_error": "error: Unknown procedure: _capitol/1"})["text"]
    assert detailed.startswith("the query could not run (") and detailed.endswith("): Unknown procedure: _capitol/1")


def test_a_geo_parser_with_an_executor_answers_under_its_tree(geo_raw_archive):
    """The real thing: a trained archive, its predictor's executor, and the line /draw adds (two epochs: the form may be wrong)."""
    pytest.importorskip("httpx2")
    from starlette.testclient import TestClient

    from toolkit import load_predictor
    from toolkit.serving.app import create_app
    from toolkit.serving.drawing import FAILURES
    from toolkit.serving.server import describe

    predictor = load_predictor(geo_raw_archive, device="cpu")
    app = create_app(predictor, Batcher(predictor.predict_batch), describe(geo_raw_archive, predictor, "semantic_parser"))
    with TestClient(app, raise_server_exceptions=False) as client:
        body = client.post("/draw", json={"input": "What is the capital of Texas?"}).json()
    output, answer = body["output"], body["answer"]
    assert output["question"] == "What is the capital of Texas?" and output["logical_form"]  # as asked
    if "answer" in output:
        assert answer == {
            "ok": True,
            "label": "Answer",
            "text": ", ".join(output["answer"]) or "none (the query ran and found nothing)",
            "count": len(output["answer"]),
        }
    else:
        code = output["answer_error"].split(":")[0]
        assert answer["ok"] is False and answer["label"] == "No answer" and answer["text"].startswith(FAILURES.get(code, output["answer_error"]))
    assert body["kind"] == "tree" or body["note"].startswith("this output cannot be drawn")


# ------------------------------------------------------------------ the pictures


def test_amr_picture_draws_concepts_constants_and_reentrancies():
    from toolkit.visualization.svg import amr_svg

    svg = amr_svg('(w / want-01 :ARG0 (b / boy :name (n / name :op1 "<Bob>")) :ARG1 (g / go-02 :ARG0 b) :polarity -)')
    assert svg.count('<g class="node top">') == 1 and '<g class="node top"><rect' in svg and ">want-01<" in svg
    assert svg.count('class="node constant"') == 2  # "<Bob>" and -
    assert "&quot;&lt;Bob&gt;&quot;" in svg and "<Bob>" not in svg  # escaped
    assert svg.count('class="edge reentrant"') == 1  # go-02 :ARG0 b, back to the boy
    assert svg.count("<line") == 5  # want->boy, boy->name, name->"Bob", want->go, want->-
    for role in (":ARG0", ":name", ":op1", ":ARG1", ":polarity"):
        assert f">{role}<" in svg
    with pytest.raises(ValueError, match="not a PENMAN graph"):
        amr_svg("(w / want-01 :ARG0")


def test_tree_and_tag_pictures():
    from toolkit.visualization.svg import tags_svg, tree_svg
    from tree_codecs.tree import parse_lisp

    svg = tree_svg(parse_lisp("( lambda $0 e ( state:t $0 ) )"))
    labels = [part.split("<")[0] for part in svg.split('text-anchor="middle">')[1:]]
    assert labels == ["lambda", "$0", "e", "state:t", "$0"] and svg.count("<line") == 4
    tags = tags_svg(["The", "<i>"], ["DET", "X"])
    assert ">The<" in tags and ">DET<" in tags and "&lt;i&gt;" in tags and "<i>" not in tags


# ------------------------------------------------------------------ the real server, in a process


def post(url: str, body: dict) -> tuple[int, dict]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=GENEROUS) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_sigterm_finishes_every_accepted_request_then_exits(dependency_archive):
    server = start_server(dependency_archive, "--batch-size", "8", "--beam-size", "5", "--device", "cpu", threads=1, timeout=GENEROUS)
    process, url = server.process, server.url
    long = " ".join(["the old dog saw a cat near the house"] * 3)
    bodies = [{"inputs": [f"{long} {i} {j}" for j in range(8)]} for i in range(12)]
    try:
        with ThreadPoolExecutor(len(bodies)) as pool:
            futures = [pool.submit(post, f"{url}/predict", body) for body in bodies]

            def queued() -> bool:  # requests queued behind a decode, or (were decoding ever that fast) all answered
                waiting = json.loads(urllib.request.urlopen(f"{url}/health", timeout=GENEROUS).read())["waiting"]
                return waiting > 0 or all(future.done() for future in futures)

            wait_for(queued, "requests queued behind a decode")
            assert not all(future.done() for future in futures), "every request was answered before one was seen waiting"
            process.send_signal(signal.SIGTERM)
            results = [future.result() for future in futures]
        code = process.wait(timeout=GENEROUS)
    finally:
        if process.poll() is None:
            process.kill()
    log = server.output()
    # uvicorn re-raises the signal once shut down, so the exit is SIGTERM's, as process managers expect
    assert code == -signal.SIGTERM and "Application shutdown complete" in log, log
    assert [status for status, _ in results] == [200] * len(bodies), log
    for (_, answer), body in zip(results, bodies):  # each answer is its own request's, in order
        assert [output["tokens"][-2:] for output in answer["outputs"]] == [text.split()[-2:] for text in body["inputs"]]
    with pytest.raises(OSError):
        urllib.request.urlopen(f"{url}/health", timeout=2)


def test_serve_without_an_archive_is_one_error_line(tmp_path):
    result = subprocess.run([sys.executable, "-m", "toolkit", "serve", str(tmp_path / "missing.tar.gz")], capture_output=True, text=True, timeout=GENEROUS)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1].startswith("error: archive not found")
    assert "Traceback" not in result.stderr

"""`toolkit serve` under load on loopback: throughput and latency, with and without batching.

Starts ``toolkit serve ARCHIVE`` on 127.0.0.1 twice in a row, once with ``--batch-size`` (requests
that arrive together are decoded together) and once with ``--batch-size 1`` (one request at a time),
and sends each the same load: ``--clients`` threads, each with its own keep-alive connection,
posting ``--requests`` single sentences one after another (EWT test sentences, or the questions of a
GEO file with ``--questions``). Prints, per server, requests/s, p50 and p99 latency, the batches it
decoded, and the ratio of the two throughputs; then checks that every request was answered with 200
and its own sentence's tokens (nothing lost, nothing swapped).

    python benchmarks/serve_load.py --archive runs/ewt/model.tar.gz [--clients 16] [--requests 400]
        [--batch-size 64] [--threads 1] [--questions FILE] [-- any further `toolkit serve` options]

Bounded in count (``--requests`` in all) and in time (``--timeout`` per request).
"""

import argparse
import http.client
import json
import statistics
import threading
import time
import urllib.request
from pathlib import Path

from toolkit.params import data_root
from toolkit.serving.launch import start_server


def client(port: int, sentences: list[str], timeout: float, results: list) -> None:
    """Post each sentence in turn on one keep-alive connection; append (sentence, status, body, seconds)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    for sentence in sentences:
        start = time.perf_counter()
        try:
            connection.request("POST", "/predict", json.dumps({"input": sentence}), {"content-type": "application/json"})
            response = connection.getresponse()
            status, body = response.status, json.loads(response.read())
        except OSError as error:
            status, body = 0, {"error": repr(error)}
            connection.close()
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        results.append((sentence, status, body, time.perf_counter() - start))
    connection.close()


def load(port: int, sentences: list[str], clients: int, timeout: float) -> tuple[list, float]:
    shares = [sentences[i::clients] for i in range(clients)]
    results: list = []
    threads = [threading.Thread(target=client, args=(port, share, timeout, results)) for share in shares]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results, time.perf_counter() - start


def answers(sentence: str, body: dict) -> bool:
    """Whether *body* is the parse of *sentence*: its tokens spell the sentence (a question, case aside)."""
    spelled = "".join(sentence.split())
    if "tokens" in body:
        return "".join(body["tokens"]) == spelled
    if "question" in body:
        return "".join(body["question"].split()).lower() == spelled.lower()
    return "error" not in body


def percentile(values: list[float], share: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[round(share * 100) - 1] if len(values) > 1 else values[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--archive", required=True)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--requests", type=int, default=400, help="requests in all, per server")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1, help="torch threads of the server")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds one request may take")
    parser.add_argument("--questions", default=None, help="a question<TAB>logical form file to take sentences from")
    parser.add_argument("serve_options", nargs="*", help="after --: further `toolkit serve` options")
    args = parser.parse_args()

    if args.questions:
        pool = [line.split("\t")[0] for line in Path(args.questions).read_text(encoding="utf-8").splitlines() if line.strip()]
    else:
        conllu = Path(data_root()) / "ud-english-ewt" / "en_ewt-ud-test.conllu"
        pool = [line.removeprefix("# text = ").strip() for line in conllu.read_text(encoding="utf-8").splitlines() if line.startswith("# text = ")]
        pool = [sentence for sentence in pool if len(sentence.split()) <= 40]
    sentences = [pool[i % len(pool)] for i in range(args.requests)]
    print(f"{args.archive}: {args.requests} requests from {args.clients} clients, torch threads {args.threads}, loopback only")
    print(f"{'server':<22} {'requests/s':>10} {'p50 ms':>8} {'p99 ms':>8} {'batches':>8} {'largest':>8} {'lost':>5}")
    rows = {}
    for label, batch_size in ((f"batching ({args.batch_size})", args.batch_size), ("one at a time", 1)):
        server = start_server(args.archive, "--batch-size", str(batch_size), *args.serve_options, threads=args.threads)
        try:
            results, seconds = load(server.port, sentences, args.clients, args.timeout)
            stats = json.loads(urllib.request.urlopen(f"{server.url}/info", timeout=10).read())["batching"]
        finally:
            server.stop()
        latencies = [result[3] * 1000 for result in results]
        lost = [result for result in results if result[1] != 200 or not answers(result[0], result[2])]
        rows[label] = len(results) / seconds
        print(
            f"{label:<22} {len(results) / seconds:>10.2f} {percentile(latencies, 0.5):>8.0f} {percentile(latencies, 0.99):>8.0f} "
            f"{stats['batches']:>8} {stats['largest']:>8} {len(lost) + args.requests - len(results):>5}"
        )
        for sentence, status, body, _ in lost[:3]:
            print(f"  lost: {status} {body} for {sentence!r}")
    first, second = rows.values()
    print(f"batching / one at a time: {first / second:.2f}x requests/s")


if __name__ == "__main__":
    main()

"""What a distributed engine costs before it parses anything: a local instance with 2 workers, from its
import to 2 tasks run, then its processes, their memory and their CPU while idle.

The figures behind docs/corpus_prediction.md's choice of Dask over Ray. Run it in an environment
holding the engine (Ray is no dependency of the toolkit: give it a scratch environment of its own,
with psutil beside it):

    python benchmarks/engine_startup.py dask
    python benchmarks/engine_startup.py ray
"""

import os
import sys
import time

import psutil


def square(x: int) -> int:
    return x * x


def start_dask():
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True)
    client = Client(cluster)
    assert client.gather([client.submit(square, i) for i in range(2)]) == [0, 1]
    return lambda: (client.close(), cluster.close())


def start_ray():
    import ray

    ray.init(num_cpus=2, include_dashboard=False)
    remote = ray.remote(square)
    assert ray.get([remote.remote(i) for i in range(2)]) == [0, 1]
    return ray.shutdown


def engine_processes() -> list[psutil.Process]:
    """This process's children, and for Ray the daemons it started (named after it)."""
    me = psutil.Process()
    found = {process.pid: process for process in me.children(recursive=True)}
    for process in psutil.process_iter(["cmdline"]):
        if process.pid != me.pid and "ray" in " ".join(process.info["cmdline"] or []):
            found[process.pid] = process
    return [me, *found.values()]


def main() -> None:
    engine = sys.argv[1] if len(sys.argv) > 1 else "dask"
    began = time.perf_counter()
    stop = {"dask": start_dask, "ray": start_ray}[engine]()
    started = time.perf_counter() - began
    time.sleep(3)
    processes = engine_processes()
    rss = sum(process.memory_info().rss for process in processes) / 2**20
    before = sum(sum(process.cpu_times()[:2]) for process in processes)
    time.sleep(10)
    idle = sum(sum(process.cpu_times()[:2]) for process in processes if process.is_running()) - before
    print(
        f"{engine}: started and ran 2 tasks in {started:.2f} s; {len(processes)} processes, {rss:.0f} MiB; {idle:.2f} CPU-seconds per 10 s idle ({os.cpu_count()} cores)"
    )
    stop()


if __name__ == "__main__":
    main()

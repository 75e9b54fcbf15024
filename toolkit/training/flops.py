"""Model FLOPs utilisation (MFU): the share of the machine's matmul peak that training reaches.

``measure_peak_flops`` times ``torch.matmul`` of two square matrices on this machine (CPU or CUDA)
at the current torch thread count; ``model_flops_utilization`` divides the usual training FLOPs
estimate, 6 x parameters x tokens/s, by such a peak::

    peak = measure_peak_flops(torch.float32)
    mfu = model_flops_utilization(sum(p.numel() for p in model.parameters()), tokens_per_second, peak)
"""

import time

import torch

__all__ = ["measure_peak_flops", "model_flops_utilization"]


def measure_peak_flops(
    dtype: torch.dtype = torch.float32, size: int = 2048, seconds: float = 1.0, device: str | torch.device = "cpu", again: bool = False
) -> float:
    """The FLOP/s of ``torch.matmul`` of two *size* x *size* matrices of *dtype* on *device*.

    One warm-up product, then products repeated for about *seconds* (at least one), counting
    2 * size**3 FLOPs each; the peak is the fastest of up to five windows (as many as fit in
    *seconds*), since other work on a shared machine only ever slows a window down. Runs at the current ``torch.get_num_threads()`` on the
    CPU and synchronises on CUDA. The result is cached per (device, dtype, size, thread count), so a
    process measures each once; *again* measures anew and keeps the higher figure.
    """
    device = torch.device(device)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    key = (device, dtype, size, torch.get_num_threads())
    if key not in _PEAKS or again:
        _PEAKS[key] = max(_PEAKS.get(key, 0.0), _measure(device, dtype, size, seconds))
    return _PEAKS[key]


_PEAKS: dict[tuple[torch.device, torch.dtype, int, int], float] = {}  # (device, dtype, size, threads) -> FLOP/s


def _measure(device: torch.device, dtype: torch.dtype, size: int, seconds: float) -> float:
    generator = torch.Generator().manual_seed(0)
    a = torch.randn(size, size, generator=generator).to(device=device, dtype=dtype)
    b = torch.randn(size, size, generator=generator).to(device=device, dtype=dtype)

    def synchronize() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    torch.matmul(a, b)  # warm-up: kernel selection, allocations
    synchronize()
    best, deadline = 0.0, time.perf_counter() + seconds
    for _ in range(_WINDOWS):
        products, start = 0, time.perf_counter()
        while True:
            torch.matmul(a, b)
            products += 1
            if products % 4 == 0 or device.type != "cuda":  # on CUDA, sync only now and then: launches are async
                synchronize()
                elapsed = time.perf_counter() - start
                if elapsed >= seconds / _WINDOWS:
                    break
        best = max(best, 2 * size**3 * products / elapsed)
        if time.perf_counter() >= deadline:  # a slow product (bf16 on some CPUs) fills the budget alone
            break
    return best


_WINDOWS = 5


def model_flops_utilization(parameters: int, tokens_per_second: float, peak: float) -> float:
    """6 x *parameters* x *tokens_per_second* / *peak* (FLOP/s): the usual training approximation.

    2 FLOPs per parameter per token forward and 4 backward, as in nanoGPT and PaLM, leaving out
    attention's own FLOPs. It counts every parameter for every token, which overestimates an
    encoder-decoder: its encoder parameters see only the source tokens and its decoder parameters
    only the target tokens (and embedding lookups are no matrix products at all). Kept as the plain
    formula, so that numbers compare with those published elsewhere.
    """
    return 6 * parameters * tokens_per_second / peak

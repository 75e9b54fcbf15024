"""The trainer's side of modules that cache what a frozen part computes: when they may keep validation sentences, and the time filling took."""

import contextlib

import torch


@contextlib.contextmanager
def caching_in_eval(model: torch.nn.Module):
    """Let modules that cache what a frozen part computes (``cache_in_eval``) keep the validation set too.

    Validation sentences recur every epoch, like training ones; prediction inputs do not, so the
    flag is on only here.
    """
    caching = [module for module in model.modules() if hasattr(module, "cache_in_eval")]
    for module in caching:
        module.cache_in_eval = True
    try:
        yield
    finally:
        for module in caching:
            module.cache_in_eval = False


def cache_fill_seconds(model: torch.nn.Module) -> float:
    """The seconds the model's caching modules have spent so far computing what they keep (``cache_fill_seconds``)."""
    return sum(getattr(module, "cache_fill_seconds", 0.0) for module in model.modules())

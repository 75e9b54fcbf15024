"""Mixed precision as CUDA runs it, on the CPU: under CUDA's autocast ``scaled_dot_product_attention``
returns bf16 while the residual stream stays float32, which CPU autocast does not do. An index put
casts nothing, so the packed encoder failed on the GPU alone ("Index put requires the source and
destination dtypes match"), at the first validation of every bf16 or fp16 run (seen on an H100,
2026-11-26). Here the kernel is made to answer as CUDA's does.
"""

import pytest
import torch
import torch.nn.functional as F

from toolkit.modules.encoders.transformer import TransformerEncoder
from toolkit.modules.transformer_settings import TransformerSettings


@pytest.fixture
def cuda_like_attention(monkeypatch):
    """``F.scaled_dot_product_attention`` answering in bf16, as it does under CUDA's autocast."""
    kernel = F.scaled_dot_product_attention
    monkeypatch.setattr(F, "scaled_dot_product_attention", lambda *args, **kwargs: kernel(*args, **kwargs).to(torch.bfloat16))


def test_the_packed_encoder_runs_under_cuda_like_autocast(cuda_like_attention):
    torch.manual_seed(0)
    encoder = TransformerEncoder(16, TransformerSettings(2, 2, 32)).eval()
    embedded = torch.randn(3, 5, 16)
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0], [1, 0, 0, 0, 0]], dtype=torch.bool)  # padding: the packed path
    with torch.no_grad():
        full = encoder(embedded, mask)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            mixed = encoder(embedded, mask)
    assert mixed.shape == full.shape and torch.isfinite(mixed).all()
    assert torch.allclose(mixed.float()[mask], full[mask], atol=0.1), "bf16 states stray from the float32 ones"
    assert (mixed[~mask] == 0).all(), "padding states stay zero"

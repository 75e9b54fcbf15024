"""The PhraseTransformer's n-gram BiLSTM (Eq. 7-12), computed for every window of every sequence at once.

Each position's phrase is a BiLSTM read over the n vectors ending there (zeros before the first),
its forward and backward final hidden states summed. Running ``nn.LSTM`` on the windows would
project every vector n times (once per window that holds it) and pay the fused kernel's cost on
its worst shape, tens of thousands of rows of a few steps. Here instead:

- every position's input-to-gate product is computed once, for both directions, by one matrix
  product over the sequence padded with n - 1 zero vectors (``W_ih 0 + b = b`` before the start);
  step t of the window ending at k reads position ``k - n + 1 + t`` of it forwards and
  ``k - t`` backwards, so a step's inputs are two shifted slices of the same tensor;
- both directions advance together, one batched matrix product per step, the first step skipping
  it (its hidden state is zero);
- the recurrence is a ``torch.autograd.Function`` whose backward is written out, so that autograd
  records no slices, chunks or stacks: they cost more than the arithmetic on these shapes;
- the gate rows are reordered to (i, f, o, g) and g's rows doubled, so one sigmoid serves all
  four gates (``tanh z = 2 sigmoid(2z) - 1``; tanh is several times slower than sigmoid on a CPU);
- with ``compile``, each step's pointwise work, forwards and backwards, is one loop fused by
  ``torch.compile`` (:class:`CellKernels`), which falls back to eager where compiling fails.

The parameters are an ``nn.LSTM``'s, so checkpoints stay the same. Inputs are dropped out per
position (``phrase_dropout``), before the projection that all windows share.
"""

import logging

import torch
import torch.nn.functional as F
from torch import nn

from toolkit.modules.dropout import Dropout

logger = logging.getLogger(__name__)


class NgramLSTM(nn.Module):
    """Eq. 7-12: a BiLSTM reads each n-gram; its forward and backward final hidden states are summed."""

    def __init__(self, n: int, dim: int, dropout: float = 0.0, compile: bool = False):
        super().__init__()
        self.n = n
        self.kernels = CellKernels(compile) if compile else EAGER
        self.dropout = Dropout(dropout)
        self.lstm = nn.LSTM(dim, dim, batch_first=True, bidirectional=True)
        order = torch.cat((torch.arange(2 * dim), torch.arange(3 * dim, 4 * dim), torch.arange(2 * dim, 3 * dim)))  # i f g o -> i f o g
        scale = torch.ones(4 * dim).index_fill_(0, torch.arange(3 * dim, 4 * dim), 2.0)
        self.register_buffer("order", order, persistent=False)
        self.register_buffer("scale", scale, persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(..., S, d) -> (..., S, d); every n-gram of every sequence is one row of one batch."""
        n, length, dim = self.n, x.size(-2), x.size(-1)
        input_weights, bias, hidden_weights = self.gate_weights()
        padded = F.pad(self.dropout(x.reshape(-1, length, dim)), (0, 0, n - 1, 0))
        projected = F.linear(padded, input_weights, bias)  # (R, n - 1 + S, 8d): forward gates, then backward
        return NgramRecurrence.apply(projected, hidden_weights, n, self.kernels).view(x.shape)

    def gate_weights(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``W_ih`` (8d, d) and bias (8d) of both directions, and ``W_hh`` as (2, d, 4d), in (i, f, o, 2g) order."""
        lstm = self.lstm

        def rows(weight: torch.Tensor) -> torch.Tensor:
            return weight[self.order] * (self.scale if weight.dim() == 1 else self.scale[:, None])

        input_weights = torch.cat((rows(lstm.weight_ih_l0), rows(lstm.weight_ih_l0_reverse)))
        bias = torch.cat((rows(lstm.bias_ih_l0 + lstm.bias_hh_l0), rows(lstm.bias_ih_l0_reverse + lstm.bias_hh_l0_reverse)))
        hidden_weights = torch.stack((rows(lstm.weight_hh_l0), rows(lstm.weight_hh_l0_reverse))).transpose(1, 2)
        return input_weights, bias, hidden_weights


def cell_forward(gates: torch.Tensor, previous_cell: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """A step's pointwise part: pre-activations (i, f, o, 2g) and the previous cell -> sigmoids, g, cell, tanh(cell), hidden."""
    sigmoids = torch.sigmoid(gates)
    i, f, o, g = sigmoids.chunk(4, dim=-1)
    g = 2 * g - 1
    cell = f * previous_cell + i * g
    tanh_cell = 2 * torch.sigmoid(2 * cell) - 1
    return sigmoids, g, cell, tanh_cell, o * tanh_cell


def cell_backward(
    grad_hidden: torch.Tensor, grad_cell: torch.Tensor, sigmoids: torch.Tensor, g: torch.Tensor, tanh_cell: torch.Tensor, previous_cell: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`cell_forward` backwards: the gradients of the pre-activations and of the previous cell."""
    i, f, o, _ = sigmoids.chunk(4, dim=-1)
    grad_c = grad_cell + grad_hidden * o * (1 - tanh_cell * tanh_cell)
    grad_sigmoids = torch.cat((grad_c * g, grad_c * previous_cell, grad_hidden * tanh_cell, 2 * grad_c * i), dim=-1)  # g = 2 sigmoid - 1
    return grad_sigmoids * sigmoids * (1 - sigmoids), grad_c * f


class CellKernels:
    """The pointwise step functions, eager, or fused by ``torch.compile`` (one loop for each instead of a dozen).

    Compiling happens at the first call. Where it fails (no C++ compiler, an unsupported platform
    or Python), the eager functions are used from then on, after one warning.
    """

    def __init__(self, compile: bool = False):
        self.compile = compile
        self.forward, self.backward = cell_forward, cell_backward
        if compile:
            self.forward, self.backward = self._compiled(cell_forward), self._compiled(cell_backward)

    def _compiled(self, function):
        compiled = None

        def run(*args):
            nonlocal compiled
            if self.compile:
                try:
                    compiled = compiled or torch.compile(function, dynamic=True, fullgraph=True)
                    return compiled(*args)
                except Exception as error:  # noqa: BLE001 - whatever torch.compile cannot do here, eager can
                    self.compile = False
                    logger.warning("phrase heads: torch.compile failed here (%s), so they run eagerly", " ".join(str(error).split())[:300])
            return function(*args)

        return run


EAGER = CellKernels()


class NgramRecurrence(torch.autograd.Function):
    """n LSTM steps over every window, both directions at once, with a hand-written backward.

    Forward: ``projected`` (R, n - 1 + S, 8d), ``hidden_weights`` (2, d, 4d) -> the summed final
    hidden states (R, S, d). Computed in the weights' dtype (fp32 under autocast).
    """

    @staticmethod
    def forward(ctx, projected: torch.Tensor, hidden_weights: torch.Tensor, n: int, kernels: CellKernels = EAGER) -> torch.Tensor:
        rows, length, dim = projected.size(0), projected.size(1) - n + 1, hidden_weights.size(1)
        with torch.autocast(projected.device.type, enabled=False):
            source = projected.to(hidden_weights.dtype)
            hidden = None
            cell = source.new_zeros(2, rows * length, dim)
            saved = []
            for t in range(n):
                gates = source.new_empty(2, rows, length, 4 * dim)
                gates[0] = source[:, t : t + length, : 4 * dim]
                gates[1] = source[:, n - 1 - t : n - 1 - t + length, 4 * dim :]
                gates = gates.view(2, rows * length, 4 * dim)
                if hidden is not None:  # the first step's hidden state is zero
                    gates.baddbmm_(hidden, hidden_weights)
                sigmoids, g, next_cell, tanh_cell, next_hidden = kernels.forward(gates, cell)
                saved += [sigmoids, g, tanh_cell, cell, source.new_empty(0) if hidden is None else hidden]
                cell, hidden = next_cell, next_hidden
        ctx.n, ctx.dtype, ctx.kernels = n, projected.dtype, kernels
        ctx.save_for_backward(hidden_weights, *saved)
        return (hidden[0] + hidden[1]).view(rows, length, dim).to(projected.dtype)

    @staticmethod
    def backward(ctx, grad_output: torch.Tensor):
        n, kernels = ctx.n, ctx.kernels
        hidden_weights, *saved = ctx.saved_tensors
        dim = hidden_weights.size(1)
        rows, length = grad_output.size(0), grad_output.size(1)
        grad_hidden = grad_output.to(hidden_weights.dtype).reshape(1, rows * length, dim).expand(2, -1, -1)
        grad_cell = torch.zeros_like(grad_hidden)
        grad_projected = grad_output.new_zeros(rows, n - 1 + length, 8 * dim, dtype=hidden_weights.dtype)
        grad_weights = torch.zeros_like(hidden_weights)
        for t in reversed(range(n)):
            sigmoids, g, tanh_cell, previous_cell, previous_hidden = saved[5 * t : 5 * t + 5]
            grad_gates, grad_cell = kernels.backward(grad_hidden, grad_cell, sigmoids, g, tanh_cell, previous_cell)
            if t > 0:
                grad_weights.baddbmm_(previous_hidden.transpose(1, 2), grad_gates)
                grad_hidden = torch.bmm(grad_gates, hidden_weights.transpose(1, 2))
            both = grad_gates.view(2, rows, length, 4 * dim)
            grad_projected[:, t : t + length, : 4 * dim] += both[0]
            grad_projected[:, n - 1 - t : n - 1 - t + length, 4 * dim :] += both[1]
        return grad_projected.to(ctx.dtype), grad_weights, None, None

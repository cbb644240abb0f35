"""The softmax shared by both LM directions: exact, or sampled with a log-uniform proposal."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import torch

from elmo_experiments.errors import DataError


def log_uniform_probabilities(size: int) -> torch.Tensor:
    """P(k) = log((k + 2) / (k + 1)) / log(size + 1): Zipf-like over frequency-sorted ids."""
    k = torch.arange(size, dtype=torch.float64)
    return (torch.log1p(1.0 / (k + 1.0)) / math.log(size + 1.0)).float()  # (size,)


class MaskedLogSumExp(torch.autograd.Function):
    """``lse = masked_logsumexp(logits, hits)``: log sum_s exp(logits[:, s]) over the columns
    that ``hits`` leaves unmasked, in at least fp32, for logits (n, S) -> (n,).

    The sampled softmax's largest tensors are its (n, S) logits; autograd's
    cast -> masked_fill -> logsumexp records seven passes over them forward and backward, this
    makes five and one: the exponentials it keeps are the backward pass's softmax numerators,
    and the gradient comes back in the logits' own dtype (bf16 under autocast).
    """

    @staticmethod
    def forward(ctx: Any, logits: torch.Tensor, hits: torch.Tensor) -> torch.Tensor:
        wide = torch.promote_types(logits.dtype, torch.float32)
        x = logits.to(wide, copy=True).masked_fill_(hits, float("-inf"))  # (n, S)
        top = x.amax(dim=1, keepdim=True)  # (n, 1)
        top.masked_fill_(top == float("-inf"), 0.0)  # a row of hits only: its sum is 0
        total = x.sub_(top).exp_().sum(dim=1, keepdim=True)  # (n, 1)
        ctx.save_for_backward(x, total)
        ctx.dtype = logits.dtype
        return (top + total.log()).squeeze(1)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        x, total = ctx.saved_tensors
        out = torch.empty(x.shape, dtype=ctx.dtype, device=x.device)
        # total >= 1 where a column is unmasked (its largest term is exp(0)); a row of hits only
        # (x all 0) gets a zero gradient
        torch.mul(x, grad[:, None] / total.clamp_min(1.0), out=out)  # softmax(logits) * grad
        return out, None


class SharedSoftmax(torch.nn.Module):
    """``logits = h W^T + b`` over the softmax vocabulary (frequency-sorted ids)."""

    def __init__(self, vocab_size: int, input_dim: int, num_samples: int = 0) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.empty(vocab_size, input_dim))
        self.bias = torch.nn.Parameter(torch.zeros(vocab_size))
        torch.nn.init.normal_(self.weight, std=1.0 / math.sqrt(input_dim))
        self.num_samples = num_samples
        self.register_buffer("proposal", log_uniform_probabilities(vocab_size), persistent=False)

    def full_nll(self, hidden: torch.Tensor, targets: torch.Tensor,
                 rows: int = 2048) -> torch.Tensor:
        """Exact negative log-likelihood per row: hidden (n, d), targets (n,) -> (n,); the
        logits are made ``rows`` rows at a time, which bounds their memory."""
        return torch.cat([
            torch.nn.functional.cross_entropy(torch.addmm(self.bias, h, self.weight.t()), t,
                                              reduction="none")  # logits (rows, V)
            for h, t in zip(hidden.split(rows), targets.split(rows), strict=True)])

    def sampled_nll(self, hidden: torch.Tensor, targets: torch.Tensor,
                    generator: torch.Generator | None = None) -> torch.Tensor:
        """Sampled-softmax loss per row (Jean et al. 2015), samples drawn with replacement.

        Each sampled logit is corrected by ``-log(S * P(k))``, so ``sum_s exp(corrected
        logit_s)`` (accidental hits masked) is an unbiased estimate of the partition function
        without the true class; the true class enters exactly, uncorrected, so the denominator
        estimates the full partition function and the loss tends to the exact NLL as S grows.
        """
        samples = torch.multinomial(self.proposal, self.num_samples, replacement=True,
                                    generator=generator)  # (S,)
        n = targets.shape[0]
        ids = torch.cat([targets, samples])  # one gather (and one scatter back) for both
        rows, biases = self.weight[ids], self.bias[ids]  # (n + S, d), (n + S,)
        correction = torch.log(self.num_samples * self.proposal[samples])  # (S,)
        true_logits = (hidden * rows[:n]).sum(dim=1) + biases[:n]  # (n,)
        sampled = torch.addmm(biases[n:] - correction, hidden, rows[n:].t())  # (n, S)
        hits = samples[None, :] == targets[:, None]  # accidental hits of the true class
        log_sampled = MaskedLogSumExp.apply(sampled, hits)  # (n,), fp32 under bf16 autocast
        true_logits = true_logits.to(log_sampled.dtype)
        # -log softmax of [true, sampled] at the true class, without concatenating them
        return torch.logaddexp(true_logits, log_sampled) - true_logits

    def load_hdf5(self, path: Path) -> None:
        """Copy ``softmax/W`` and ``softmax/b`` of an exported ``softmax.hdf5`` in (float16
        upcast); a missing or mis-shaped dataset is a one-line error."""
        import h5py

        try:
            handle = h5py.File(path, "r")
        except OSError as error:  # truncated, not HDF5, unreadable: name the file
            raise DataError(f"{path}: not a readable HDF5 softmax file "
                            f"({str(error).splitlines()[0]})") from None
        with handle, torch.no_grad():
            for name, parameter in (("W", self.weight), ("b", self.bias)):
                if f"softmax/{name}" not in handle:
                    raise DataError(f"{path}: missing dataset softmax/{name}")
                value = torch.from_numpy(handle[f"softmax/{name}"][...]).float()
                if value.shape != parameter.shape:
                    raise DataError(f"{path}: softmax/{name} has shape {tuple(value.shape)}, "
                                    f"expected {tuple(parameter.shape)}")
                parameter.copy_(value)

    def forward(self, hidden: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        if self.training and 0 < self.num_samples < self.weight.shape[0]:
            return self.sampled_nll(hidden, targets)
        return self.full_nll(hidden, targets)

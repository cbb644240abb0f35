"""The shared softmax: the log-uniform proposal, the sampled estimator, train/eval modes."""

from __future__ import annotations

import math

import pytest
import torch

from elmo_experiments.bilm.pretraining.softmax import SharedSoftmax, log_uniform_probabilities

V, D = 40, 6


def make_softmax(num_samples: int, seed: int = 0) -> SharedSoftmax:
    softmax = SharedSoftmax(V, D, num_samples).double()
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        softmax.weight.normal_(0.0, 0.3, generator=generator)
        softmax.bias.normal_(0.0, 0.5, generator=generator)
    return softmax


def inputs(seed: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    hidden = torch.randn(5, D, generator=generator, dtype=torch.float64)
    targets = torch.tensor([0, 1, 7, 20, 39])  # frequent to rare
    return hidden, targets


def all_logits(softmax: SharedSoftmax, hidden: torch.Tensor) -> torch.Tensor:
    return hidden @ softmax.weight.t() + softmax.bias  # (n, V)


@pytest.mark.parametrize("size", [1, 2, 10, 793, 50000])
def test_log_uniform_sums_to_one_and_decreases(size: int) -> None:
    p = log_uniform_probabilities(size)
    assert p.shape == (size,)
    assert float(p.double().sum()) == pytest.approx(1.0, abs=1e-5)
    assert bool((p > 0).all())
    if size > 1:
        assert bool((p[1:] < p[:-1]).all())
    # P(k) = log((k + 2) / (k + 1)) / log(size + 1)
    assert float(p[0]) == pytest.approx(math.log(2) / math.log(size + 1), rel=1e-6)


def test_full_nll_is_cross_entropy() -> None:
    softmax = make_softmax(0)
    hidden, targets = inputs()
    expected = -torch.log_softmax(all_logits(softmax, hidden), dim=1)[range(5), targets]
    torch.testing.assert_close(softmax.full_nll(hidden, targets), expected)


def test_sampled_nll_is_the_corrected_sampled_softmax() -> None:
    """Recomputed from the same draws: hits masked, sampled logits minus log(S P(k))."""
    softmax = make_softmax(12)
    hidden, targets = inputs()
    loss = softmax.sampled_nll(hidden, targets, torch.Generator().manual_seed(5))
    samples = torch.multinomial(softmax.proposal, 12, replacement=True,
                                generator=torch.Generator().manual_seed(5))
    logits = all_logits(softmax, hidden).detach()
    true = logits[range(5), targets]
    expected = []
    for row in range(5):
        terms = [math.exp(float(true[row]))]
        for s in samples.tolist():
            if s != int(targets[row]):
                terms.append(math.exp(float(logits[row, s])) / (12 * float(softmax.proposal[s])))
        expected.append(-float(true[row]) + math.log(sum(terms)))
    torch.testing.assert_close(loss, torch.tensor(expected, dtype=torch.float64))
    hit = set(samples.tolist()) & set(targets.tolist())
    assert hit and hit != set(samples.tolist()), "the draws should include accidental hits"


def test_partition_function_estimate_is_unbiased() -> None:
    """E[exp(l_t) + sum_s exp(corrected logit_s), hits masked] = Z over all classes.

    exp(sampled_nll + l_t) is exactly that sum, so this checks the module's correction term and
    its hit masking together: the masked hits remove, in expectation, exactly the true class's
    share exp(l_t), which the uncorrected true logit puts back.
    """
    softmax = make_softmax(16)
    hidden, targets = inputs()
    logits = all_logits(softmax, hidden).detach()
    partition = logits.exp().sum(dim=1)  # (n,)
    true = logits[range(5), targets]
    generator = torch.Generator().manual_seed(11)
    draws = 3000
    with torch.no_grad():
        estimates = torch.stack([
            torch.exp(softmax.sampled_nll(hidden, targets, generator) + true)
            for _ in range(draws)])  # (draws, n)
    mean = estimates.mean(dim=0)
    stderr = estimates.std(dim=0) / math.sqrt(draws)
    assert bool(((mean - partition).abs() < 4 * stderr + 1e-9).all()), (mean, partition, stderr)
    torch.testing.assert_close(mean, partition, rtol=0.03, atol=0)


def test_corrected_sample_sum_is_unbiased_when_no_hit_is_possible() -> None:
    """Masking out of the picture: a proposal that never draws the target (the last class).

    Then exp(sampled_nll + l_t) - exp(l_t) is the plain sum_s exp(l_s - log(S P(s))) of the
    module's correction, and its mean over draws is the partition function of the other classes.
    """
    softmax = make_softmax(16)
    proposal = torch.cat([log_uniform_probabilities(V - 1), torch.zeros(1)]).double()
    softmax.proposal = proposal
    hidden, _ = inputs()
    targets = torch.full((5,), V - 1)
    logits = all_logits(softmax, hidden).detach()
    true = logits[:, V - 1]
    generator = torch.Generator().manual_seed(3)
    with torch.no_grad():
        sums = torch.stack([
            torch.exp(softmax.sampled_nll(hidden, targets, generator) + true) - true.exp()
            for _ in range(3000)])  # (draws, n)
    torch.testing.assert_close(sums.mean(dim=0), logits[:, : V - 1].exp().sum(dim=1),
                               rtol=0.03, atol=0)


def test_sampled_loss_approaches_full_loss_as_samples_grow() -> None:
    hidden, targets = inputs()
    full = make_softmax(0).full_nll(hidden, targets).detach()
    gaps = []
    for num_samples in (8, 64, 2048):
        softmax = make_softmax(num_samples)
        generator = torch.Generator().manual_seed(num_samples)
        with torch.no_grad():
            mean = torch.stack([softmax.sampled_nll(hidden, targets, generator)
                                for _ in range(200)]).mean(dim=0)
        gaps.append(float((mean - full).abs().max()))
    assert gaps[-1] < 0.02, gaps
    assert gaps[-1] < gaps[0], gaps


def test_training_samples_and_evaluation_is_exact() -> None:
    softmax = make_softmax(8)
    hidden, targets = inputs()
    full = softmax.full_nll(hidden, targets)
    softmax.train()
    torch.manual_seed(0)
    first = softmax(hidden, targets)
    second = softmax(hidden, targets)
    assert not torch.allclose(first, full)
    assert not torch.equal(first, second), "sampled losses are random"
    softmax.eval()
    torch.testing.assert_close(softmax(hidden, targets), full, rtol=0, atol=0)
    # no sampling when it would not save anything, or when disabled
    for num_samples in (0, V, V + 5):
        softmax.num_samples = num_samples
        softmax.train()
        torch.testing.assert_close(softmax(hidden, targets), full, rtol=0, atol=0)


def test_sampled_gradient_reaches_only_true_and_sampled_rows() -> None:
    softmax = make_softmax(4)
    hidden, targets = inputs()
    samples = torch.multinomial(softmax.proposal, 4, replacement=True,
                                generator=torch.Generator().manual_seed(9))
    softmax.sampled_nll(hidden, targets, torch.Generator().manual_seed(9)).sum().backward()
    touched = set(torch.nonzero(softmax.weight.grad.abs().sum(dim=1)).flatten().tolist())
    assert touched <= set(samples.tolist()) | set(targets.tolist())
    assert set(targets.tolist()) <= touched


def test_proposal_is_a_float_buffer_not_saved() -> None:
    softmax = SharedSoftmax(V, D, 8)
    assert "proposal" not in softmax.state_dict()
    torch.testing.assert_close(softmax.proposal, log_uniform_probabilities(V))


def test_masked_logsumexp_matches_autograd_and_gradcheck() -> None:
    from elmo_experiments.bilm.pretraining.softmax import MaskedLogSumExp

    generator = torch.Generator().manual_seed(3)
    logits = torch.randn(4, 7, generator=generator, dtype=torch.float64, requires_grad=True)
    hits = torch.zeros(4, 7, dtype=torch.bool)
    hits[0, 2] = hits[2, 5] = hits[2, 6] = True
    hits[3] = True  # every sample a hit: the sum is empty, log 0
    value = MaskedLogSumExp.apply(logits, hits)
    reference = torch.logsumexp(logits.masked_fill(hits, float("-inf")), dim=1)
    torch.testing.assert_close(value, reference)
    assert value[3] == float("-inf")
    upstream = torch.tensor([0.5, -1.0, 2.0, 0.0], dtype=torch.float64)
    (grad,) = torch.autograd.grad(value, logits, upstream)
    soft = torch.softmax(logits[:3].masked_fill(hits[:3], float("-inf")), dim=1)
    torch.testing.assert_close(grad[:3], soft * upstream[:3, None])  # hand-derived
    assert bool((grad[hits] == 0).all())
    torch.autograd.gradcheck(lambda x: MaskedLogSumExp.apply(x, hits)[:3], (logits,))


def test_masked_logsumexp_sums_bf16_logits_in_fp32_and_returns_bf16_gradients() -> None:
    from elmo_experiments.bilm.pretraining.softmax import MaskedLogSumExp

    logits = torch.randn(3, 5, generator=torch.Generator().manual_seed(4))
    low = logits.bfloat16().requires_grad_()
    hits = torch.zeros(3, 5, dtype=torch.bool)
    value = MaskedLogSumExp.apply(low, hits)
    assert value.dtype == torch.float32
    torch.testing.assert_close(value, torch.logsumexp(low.detach().float(), dim=1))
    value.sum().backward()
    assert low.grad.dtype == torch.bfloat16
    torch.testing.assert_close(low.grad.float(), torch.softmax(low.detach().float(), dim=1),
                               atol=4e-3, rtol=1e-2)

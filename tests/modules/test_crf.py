"""Tests for the linear-chain CRF against brute-force enumeration of tag sequences."""

from __future__ import annotations

import itertools
import math

import pytest
import torch

from elmo_experiments.modules.crf import ConditionalRandomField

# BIO over two labels: O=0, B-A=1, I-A=2, B-B=3, I-B=4; START=5, END=6.
NUM_BIO = 5
BIO_ALLOWED = [
    (i, j)
    for i in [*range(NUM_BIO), NUM_BIO]
    for j in [*range(NUM_BIO), NUM_BIO + 1]
    if not (j == 2 and i not in (1, 2))
    and not (j == 4 and i not in (3, 4))
    and not (i == NUM_BIO and j == NUM_BIO + 1)
]
# An arbitrary constraint set that also restricts END: forbids 0->0, 1->2, START->2, 1->END.
SMALL_TAGS = 3
SMALL_FORBIDDEN = {(0, 0), (1, 2), (3, 2), (1, 4)}
SMALL_ALLOWED = [
    (i, j)
    for i in range(SMALL_TAGS + 1)
    for j in [*range(SMALL_TAGS), SMALL_TAGS + 1]
    if (i, j) not in SMALL_FORBIDDEN
]


def make_crf(num_tags: int, constraints, include_start_end: bool, seed: int = 0):
    torch.manual_seed(seed)
    crf = ConditionalRandomField(num_tags, constraints, include_start_end).double()
    with torch.no_grad():  # make transition scores large enough to matter
        crf.transitions.mul_(3.0)
    return crf


def is_valid(path: tuple[int, ...], num_tags: int, constraints) -> bool:
    if constraints is None:
        return True
    allowed = set(constraints)
    full = (num_tags, *path, num_tags + 1)
    return all((a, b) in allowed for a, b in itertools.pairwise(full))


def path_score(crf: ConditionalRandomField, logits: torch.Tensor, path) -> float:
    """Score of one path computed directly from the raw parameters (logits: (seq, tags))."""
    score = sum(logits[i, t].item() for i, t in enumerate(path))
    score += sum(crf.transitions[a, b].item() for a, b in itertools.pairwise(path))
    if crf.include_start_end_transitions:
        score += crf.start_transitions[path[0]].item() + crf.end_transitions[path[-1]].item()
    return score


def brute_force(crf, logits, length, constraints) -> dict[tuple[int, ...], float]:
    """All valid paths of the given length mapped to their scores."""
    n = crf.num_tags
    return {
        path: path_score(crf, logits[:length], path)
        for path in itertools.product(range(n), repeat=length)
        if is_valid(path, n, constraints)
    }


def log_sum_exp(values) -> float:
    values = list(values)
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))


def prefix_mask(lengths: list[int], seq_len: int) -> torch.Tensor:
    return torch.arange(seq_len).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)


CASES = [
    pytest.param(4, None, id="unconstrained"),
    pytest.param(NUM_BIO, BIO_ALLOWED, id="bio"),
    pytest.param(SMALL_TAGS, SMALL_ALLOWED, id="small-with-end"),
]


@pytest.mark.parametrize("include_start_end", [True, False])
@pytest.mark.parametrize(("num_tags", "constraints"), CASES)
def test_log_partition_and_likelihood_match_brute_force(num_tags, constraints, include_start_end):
    crf = make_crf(num_tags, constraints, include_start_end)
    lengths = [4, 1, 3, 2]
    torch.manual_seed(1)
    logits = torch.randn(len(lengths), 4, num_tags, dtype=torch.float64) * 2
    mask = prefix_mask(lengths, 4)
    tags = torch.randint(num_tags, (len(lengths), 4))
    gen = torch.Generator().manual_seed(2)
    expected_total = 0.0
    for b, length in enumerate(lengths):
        paths = brute_force(crf, logits[b], length, constraints)
        log_z = log_sum_exp(paths.values())
        # Gold tags: a random valid path, so the brute-force likelihood is defined.
        valid = sorted(paths)
        gold = valid[torch.randint(len(valid), (1,), generator=gen).item()]
        tags[b, :length] = torch.tensor(gold)
        expected_total += paths[gold] - log_z

        trans, start, end = crf._potentials(-1e4)
        got_z = crf._log_partition(logits[b : b + 1], mask[b : b + 1], trans, start, end)
        assert got_z.item() == pytest.approx(log_z, abs=1e-5)
        got = crf(logits[b : b + 1], tags[b : b + 1], mask[b : b + 1])
        assert got.item() == pytest.approx(paths[gold] - log_z, abs=1e-5)
    assert crf(logits, tags, mask).item() == pytest.approx(expected_total, abs=1e-5)


@pytest.mark.parametrize("include_start_end", [True, False])
@pytest.mark.parametrize(("num_tags", "constraints"), CASES)
def test_probabilities_sum_to_one(num_tags, constraints, include_start_end):
    crf = make_crf(num_tags, constraints, include_start_end, seed=3)
    length = 3
    logits = torch.randn(1, length, num_tags, dtype=torch.float64)
    mask = torch.ones(1, length, dtype=torch.bool)
    total_valid, total_invalid = 0.0, 0.0
    for path in itertools.product(range(num_tags), repeat=length):
        prob = crf(logits, torch.tensor([path]), mask).exp().item()
        if is_valid(path, num_tags, constraints):
            total_valid += prob
        else:
            total_invalid += prob
    assert total_valid == pytest.approx(1.0, abs=1e-6)
    assert total_invalid == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("include_start_end", [True, False])
@pytest.mark.parametrize(("num_tags", "constraints"), CASES)
def test_viterbi_matches_brute_force(num_tags, constraints, include_start_end, seed):
    crf = make_crf(num_tags, constraints, include_start_end, seed=seed)
    lengths = [2, 4, 1, 3]
    logits = torch.randn(len(lengths), 4, num_tags, dtype=torch.float64) * 2
    results = crf.viterbi_tags(logits, prefix_mask(lengths, 4))
    assert len(results) == len(lengths)
    for b, (length, (path, score)) in enumerate(zip(lengths, results, strict=True)):
        paths = brute_force(crf, logits[b], length, constraints)
        best = max(paths, key=paths.__getitem__)
        assert tuple(path) == best
        assert score == pytest.approx(paths[best], abs=1e-6)


def test_viterbi_single_step_sequences():
    crf = make_crf(SMALL_TAGS, SMALL_ALLOWED, True)
    logits = torch.randn(3, 1, SMALL_TAGS, dtype=torch.float64)
    results = crf.viterbi_tags(logits, torch.ones(3, 1, dtype=torch.bool))
    for b, (path, score) in enumerate(results):
        paths = brute_force(crf, logits[b], 1, SMALL_ALLOWED)
        best = max(paths, key=paths.__getitem__)
        assert tuple(path) == best
        assert score == pytest.approx(paths[best], abs=1e-6)


@pytest.mark.parametrize(
    ("num_tags", "constraints", "favoured"),
    [(NUM_BIO, BIO_ALLOWED, [2, 4]), (SMALL_TAGS, SMALL_ALLOWED, [0, 2])],
)
def test_viterbi_never_outputs_forbidden_transitions(num_tags, constraints, favoured):
    crf = make_crf(num_tags, constraints, True)
    torch.manual_seed(4)
    lengths = [6, 1, 5, 3, 2]
    logits = torch.randn(len(lengths), 6, num_tags)
    logits[:, :, favoured] += 1e3  # strongly favour tags whose transitions are restricted
    with torch.no_grad():  # and make the learned transitions favour forbidden moves
        crf.transitions.fill_(50.0)
        crf.start_transitions.fill_(50.0)
        crf.end_transitions.fill_(50.0)
    results = crf.viterbi_tags(logits, prefix_mask(lengths, 6))
    for length, (path, score) in zip(lengths, results, strict=True):
        assert len(path) == length
        assert is_valid(tuple(path), num_tags, constraints), path
        assert math.isfinite(score)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_gradients_are_finite_with_constraints(dtype):
    crf = make_crf(NUM_BIO, BIO_ALLOWED, True).to(dtype)
    lengths = [5, 2, 1]
    logits = (torch.randn(3, 5, NUM_BIO, dtype=dtype) * 10).requires_grad_()
    # Gold paths deliberately contain forbidden transitions (O -> I-A, START -> I-B).
    tags = torch.tensor([[0, 2, 2, 0, 1], [4, 3, 0, 0, 0], [2, 0, 0, 0, 0]])
    loglik = crf(logits, tags, prefix_mask(lengths, 5))
    assert torch.isfinite(loglik)
    (-loglik).backward()
    for grad in [logits.grad, crf.transitions.grad, crf.start_transitions.grad]:
        assert grad is not None and torch.isfinite(grad).all()
    assert torch.isfinite(crf.end_transitions.grad).all()


@pytest.mark.parametrize(("num_tags", "constraints"), CASES)
def test_padding_does_not_change_results(num_tags, constraints):
    crf = make_crf(num_tags, constraints, True)
    torch.manual_seed(5)
    lengths = [3, 1, 2]
    logits = torch.randn(3, 3, num_tags, dtype=torch.float64)
    tags = torch.randint(num_tags, (3, 3))
    mask = prefix_mask(lengths, 3)
    padded_logits = torch.cat([logits, 1e3 * torch.randn(3, 4, num_tags).double()], dim=1)
    padded_tags = torch.cat([tags, torch.randint(num_tags, (3, 4))], dim=1)
    padded_tags.masked_fill_(~prefix_mask(lengths, 7), -1)  # padding value must not matter
    padded_mask = prefix_mask(lengths, 7)

    base = crf(logits, tags.masked_fill(~mask, 0), mask)
    padded = crf(padded_logits, padded_tags, padded_mask)
    assert padded.item() == pytest.approx(base.item(), abs=1e-8)

    for (p1, s1), (p2, s2) in zip(
        crf.viterbi_tags(padded_logits, padded_mask), crf.viterbi_tags(logits, mask), strict=True
    ):
        assert p1 == p2
        assert s1 == pytest.approx(s2, abs=1e-8)


def test_batch_sum_equals_individual_sums_and_is_differentiable():
    crf = make_crf(4, None, True)
    lengths = [4, 2, 3]
    logits = torch.randn(3, 4, 4, dtype=torch.float64, requires_grad=True)
    tags = torch.randint(4, (3, 4))
    mask = prefix_mask(lengths, 4)
    total = crf(logits, tags, mask)
    parts = sum(crf(logits[b : b + 1], tags[b : b + 1], mask[b : b + 1]) for b in range(3))
    assert total.item() == pytest.approx(parts.item(), abs=1e-8)
    assert total.dim() == 0
    total.backward()
    assert torch.isfinite(logits.grad).all()
    assert (logits.grad[~mask] == 0).all()  # padded positions get no gradient


def test_without_start_end_transitions_has_no_such_parameters():
    crf = ConditionalRandomField(3, include_start_end_transitions=False)
    assert crf.start_transitions is None and crf.end_transitions is None
    assert {name for name, _ in crf.named_parameters()} == {"transitions"}


@pytest.mark.parametrize("include_start_end", [True, False])
@pytest.mark.parametrize(("num_tags", "constraints"), CASES)
def test_span_probabilities_match_brute_force(num_tags, constraints, include_start_end):
    crf = make_crf(num_tags, constraints, include_start_end, seed=4)
    length = 4
    torch.manual_seed(5)
    logits = torch.randn(length, num_tags, dtype=torch.float64) * 2
    paths = brute_force(crf, logits, length, constraints)
    log_z = log_sum_exp(paths.values())
    best = max(paths, key=paths.__getitem__)
    spans = [(0, list(best[:2])), (1, list(best[1:4])), (3, [best[3]]), (2, list(best[2:4]))]
    got = crf.span_probabilities(logits, spans)
    for (first, ids), probability in zip(spans, got, strict=True):
        agreeing = [s for p, s in paths.items() if list(p[first: first + len(ids)]) == ids]
        assert probability == pytest.approx(math.exp(log_sum_exp(agreeing) - log_z), abs=1e-9)
    assert crf.span_probabilities(logits, []) == []

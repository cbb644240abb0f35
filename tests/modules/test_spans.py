"""Span enumeration and pruning against brute force."""

from __future__ import annotations

import random

import torch

from elmo_experiments.modules.indexing import gather_rows
from elmo_experiments.modules.spans import enumerate_spans, prune_spans


def test_enumeration_is_every_within_sentence_span_up_to_the_width():
    rng = random.Random(0)
    for _ in range(30):
        documents = []
        for _ in range(rng.randint(1, 3)):
            sentence_lengths = [rng.randint(1, 6) for _ in range(rng.randint(1, 4))]
            documents.append([s for s, n in enumerate(sentence_lengths) for _ in range(n)])
        width = rng.randint(1, 4)
        tokens = max(len(d) for d in documents)
        ids = torch.tensor([d + [-1] * (tokens - len(d)) for d in documents])
        spans, mask = enumerate_spans(ids, torch.tensor([len(d) for d in documents]), width)
        for row, sentence in enumerate(documents):
            expected = [(i, j) for i in range(len(sentence)) for j in range(len(sentence))
                        if i <= j < i + width and sentence[i] == sentence[j]]
            got = [tuple(s) for s in spans[row][mask[row]].tolist()]
            assert got == expected


def test_pruning_keeps_the_best_in_document_order():
    rng = random.Random(1)
    for _ in range(50):
        n = rng.randint(1, 12)
        scores = torch.tensor([[float(rng.randint(-3, 3)) for _ in range(n)]])
        valid = [rng.random() < 0.8 for _ in range(n)]
        valid[0] = True
        keep = rng.randint(1, sum(valid))
        indices, kept = prune_spans(scores, torch.tensor([valid]), torch.tensor([keep]))
        ranked = sorted((i for i in range(n) if valid[i]), key=lambda i: (-scores[0, i], i))
        assert indices[0][kept[0]].tolist() == sorted(ranked[:keep])


def test_gather_rows_equals_gather_with_an_expanded_index_and_its_gradient():


    torch.manual_seed(3)
    values = torch.randn(2, 6, 4, requires_grad=True)
    positions = torch.tensor([[[0, 5], [5, 5], [2, 1]], [[3, 3], [0, 4], [1, 1]]])  # (2, 3, 2)
    ours = gather_rows(values, positions)
    expected = values.gather(1, positions.reshape(2, -1, 1).expand(-1, -1, 4)).reshape(2, 3, 2, 4)
    assert torch.equal(ours, expected)
    weights = torch.randn(ours.shape)
    (grad,) = torch.autograd.grad((ours * weights).sum(), values)
    (expected_grad,) = torch.autograd.grad((expected * weights).sum(), values)
    torch.testing.assert_close(grad, expected_grad, rtol=0, atol=1e-6)

"""The shared Viterbi under BIO constraints against brute force over every tag sequence."""

from __future__ import annotations

import itertools

import torch

from elmo_experiments.data.tag_schemes import allowed_transitions
from elmo_experiments.modules.viterbi import constraint_potentials, viterbi_decode

LABELS = ["O", "B-A0", "I-A0", "B-V", "I-V", "B-C-A0", "I-C-A0"]


def valid_bio(tags: tuple[str, ...]) -> bool:
    previous = "O"
    for tag in tags:
        if tag.startswith("I-") and previous[2:] != tag[2:]:
            return False
        previous = tag
    return True


def test_constrained_viterbi_is_the_best_valid_bio_sequence():
    generator = torch.Generator().manual_seed(0)
    potentials = constraint_potentials(
        len(LABELS), allowed_transitions("BIO", dict(enumerate(LABELS))))
    lengths = [1, 2, 3, 4, 4]
    logits = torch.randn(len(lengths), 4, len(LABELS), generator=generator).log_softmax(-1)
    mask = torch.arange(4)[None, :] < torch.tensor(lengths)[:, None]
    decoded = viterbi_decode(logits, mask, *potentials)
    for row, n in enumerate(lengths):
        best = max((s for s in itertools.product(range(len(LABELS)), repeat=n)
                    if valid_bio(tuple(LABELS[i] for i in s))),
                   key=lambda s, row=row: sum(logits[row, t, i].item() for t, i in enumerate(s)))
        path, score = decoded[row]
        assert tuple(path) == best, row
        assert abs(score - sum(logits[row, t, i].item() for t, i in enumerate(best))) < 1e-5
        assert not LABELS[path[0]].startswith("I-")  # never opens inside an argument


def test_without_constraints_each_token_takes_its_best_tag():
    n = len(LABELS)
    everything = [(i, j) for i in range(n + 1) for j in range(n + 2)]
    logits = torch.randn(2, 5, n, generator=torch.Generator().manual_seed(1))
    mask = torch.ones(2, 5, dtype=torch.bool)
    decoded = viterbi_decode(logits, mask, *constraint_potentials(n, everything))
    assert [p for p, _ in decoded] == logits.argmax(-1).tolist()

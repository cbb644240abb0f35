"""State modes of a frozen biLM: stateless and warm are per-sentence; stateful carries state."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from elmo_experiments.bilm.bidirectional_lm import BidirectionalLM
from elmo_experiments.bilm.characters import batch_to_ids
from elmo_experiments.bilm.state import STATE_MODES, BilmRunner
from elmo_experiments.bilm.weights import load_bilm

A = ["The", "quick", "brown", "fox", "jumps", "over", "the", "lazy", "dog", "."]
B = ["Prices", "rose", "sharply", "in", "March", "."]
C = ["Hello"]
ATOL = 1e-5


@pytest.fixture(scope="module")
def bilm(tiny_bilm_dir: Path) -> BidirectionalLM:
    return load_bilm(tiny_bilm_dir / "options.json", tiny_bilm_dir / "weights.hdf5")


def run(runner: BilmRunner, sentences: list[list[str]]) -> list[torch.Tensor]:
    with torch.no_grad():
        layers, _ = runner(batch_to_ids(sentences))
    return layers


def rows(layers: list[torch.Tensor], row: int, length: int) -> torch.Tensor:
    return torch.stack([layer[row, :length] for layer in layers])  # (L+1, length, 2P)


def assert_close(a: torch.Tensor, b: torch.Tensor) -> None:
    torch.testing.assert_close(a, b, atol=ATOL, rtol=0)


def max_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).abs().max())


@pytest.mark.parametrize("mode", ["stateless", "warm"])
def test_sentence_vectors_ignore_batch_companions_and_order(bilm, mode: str) -> None:
    runner = BilmRunner(bilm, mode)
    alone = rows(run(runner, [A]), 0, len(A))
    first = rows(run(runner, [A, B, C]), 0, len(A))
    last = rows(run(runner, [C, B, A]), 2, len(A))
    middle = rows(run(runner, [B, A]), 1, len(A))
    short = rows(run(runner, [C, A]), 0, len(C))
    for other in (first, last, middle):
        assert_close(other, alone)
    assert_close(short, rows(run(runner, [C]), 0, len(C)))


@pytest.mark.parametrize("mode", ["stateless", "warm"])
def test_repeated_calls_give_the_same_vectors(bilm, mode: str) -> None:
    runner = BilmRunner(bilm, mode)
    before = run(runner, [A, B])
    run(runner, [C, C, C])
    after = run(runner, [A, B])
    for x, y in zip(before, after, strict=True):
        assert torch.equal(x, y)


def test_warm_is_deterministic_across_runners(bilm) -> None:
    one = run(BilmRunner(bilm, "warm"), [A, B])
    two = run(BilmRunner(bilm, "warm"), [A, B])
    for x, y in zip(one, two, strict=True):
        assert torch.equal(x, y)


def test_warm_differs_from_stateless_above_the_token_layer(bilm) -> None:
    warm = run(BilmRunner(bilm, "warm"), [A])
    cold = run(BilmRunner(bilm, "stateless"), [A])
    assert torch.equal(warm[0], cold[0])  # the token layer has no state
    for layer in (1, 2):
        assert max_diff(warm[layer], cold[layer]) > 1e-3


def test_warm_state_is_the_mean_final_state_of_the_warmup(bilm) -> None:
    warmup = ["a b c", "the cat sat on the mat", "one"]
    runner = BilmRunner(bilm, "warm", warmup)
    with torch.no_grad():
        _, _, finals = bilm(batch_to_ids([line.split() for line in warmup]))
        expected, _, _ = bilm(batch_to_ids([A]),
                              [(h.mean(0, keepdim=True), c.mean(0, keepdim=True))
                               for h, c in finals])
    got = run(runner, [A])
    for x, y in zip(got, expected, strict=True):
        assert_close(x, y)


def test_warmup_text_changes_the_vectors_and_the_key(bilm) -> None:
    default = BilmRunner(bilm, "warm")
    other = BilmRunner(bilm, "warm", ["Something else entirely ."])
    assert default.state_key().startswith("warm:") and other.state_key().startswith("warm:")
    assert default.state_key() != other.state_key()
    assert default.state_key() == BilmRunner(bilm, "warm").state_key()
    assert max_diff(run(default, [A])[-1], run(other, [A])[-1]) > 1e-4
    assert BilmRunner(bilm, "stateless").state_key() == "stateless"
    assert BilmRunner(bilm, "stateful").state_key() == "stateful"


def test_stateful_first_batch_is_stateless_then_state_is_carried(bilm) -> None:
    stateful = BilmRunner(bilm, "stateful")
    stateless = BilmRunner(bilm, "stateless")
    first = run(stateful, [A, B])
    for x, y in zip(first, run(stateless, [A, B]), strict=True):
        assert torch.equal(x, y)
    second = run(stateful, [A, B])
    reference = run(stateless, [A, B])
    assert torch.equal(second[0], reference[0])
    assert max_diff(second[-1], reference[-1]) > 1e-3


def test_stateful_state_is_the_final_state_row_by_row(bilm) -> None:
    runner = BilmRunner(bilm, "stateful")
    run(runner, [A, B, C])
    got = run(runner, [B, C])  # smaller batch: rows 0 and 1 continue rows 0 and 1
    third = run(runner, [C, A, B])  # row 2 still holds the state of the first batch's row 2
    with torch.no_grad():
        _, _, finals1 = bilm(batch_to_ids([A, B, C]))
        expected, _, finals2 = bilm(batch_to_ids([B, C]), [(h[:2], c[:2]) for h, c in finals1])
        carried = [(torch.cat([h2, h1[2:]]), torch.cat([c2, c1[2:]]))
                   for (h1, c1), (h2, c2) in zip(finals1, finals2, strict=True)]
        expected_third, _, _ = bilm(batch_to_ids([C, A, B]), carried)
    for x, y in zip(got, expected, strict=True):
        assert_close(x, y)
    for x, y in zip(third, expected_third, strict=True):
        assert_close(x, y)


def test_stateful_larger_batch_starts_new_rows_at_zero(bilm) -> None:
    runner = BilmRunner(bilm, "stateful")
    run(runner, [A])
    got = run(runner, [B, C])
    with torch.no_grad():
        _, _, finals = bilm(batch_to_ids([A]))
        initial = [(torch.cat([h, torch.zeros_like(h)]), torch.cat([c, torch.zeros_like(c)]))
                   for h, c in finals]
        expected, _, _ = bilm(batch_to_ids([B, C]), initial)
        fresh = run(BilmRunner(bilm, "stateless"), [C])
    for x, y in zip(got, expected, strict=True):
        assert_close(x, y)
    assert_close(rows(got, 1, len(C)), rows(fresh, 0, len(C)))


def test_reset_state(bilm) -> None:
    runner = BilmRunner(bilm, "stateful")
    first = run(runner, [A, B])
    run(runner, [B, A])
    runner.reset_state()
    again = run(runner, [A, B])
    for x, y in zip(first, again, strict=True):
        assert torch.equal(x, y)


def test_reset_state_recomputes_the_warm_state(bilm) -> None:
    runner = BilmRunner(bilm, "warm")
    before = run(runner, [A])
    runner.warmup = ["completely different text here"]
    assert torch.equal(run(runner, [A])[-1], before[-1])  # the warm state is remembered
    runner.reset_state()
    assert max_diff(run(runner, [A])[-1], before[-1]) > 1e-4


def test_padding_rows_are_zero_in_every_mode(bilm) -> None:
    for mode in STATE_MODES:
        runner = BilmRunner(bilm, mode)
        layers = run(runner, [A, C])
        for layer in layers:
            assert not layer[1, len(C):].any(), mode


def test_unknown_mode(bilm) -> None:
    with pytest.raises(ValueError, match=r"state mode 'sticky' is not one of"):
        BilmRunner(bilm, "sticky")

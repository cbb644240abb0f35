"""reverse_padded, the stacked BiLSTM's padding invariance, and variational dropout."""

from __future__ import annotations

import pytest
import torch

from elmo_experiments.config.validate import Validator
from elmo_experiments.modules.dropout import VariationalDropout
from elmo_experiments.modules.encoders import StackedLstm, reverse_padded


def mask_for(lengths: list[int], seq: int) -> torch.Tensor:
    return torch.arange(seq)[None, :] < torch.tensor(lengths)[:, None]


# ----------------------------------------------------------------- reverse_padded


def test_reverse_padded_reverses_within_each_length() -> None:
    inputs = torch.arange(1, 13, dtype=torch.float).reshape(3, 4, 1)
    lengths = torch.tensor([4, 2, 0])
    out = reverse_padded(inputs, lengths)
    assert out[..., 0].tolist() == [[4, 3, 2, 1], [6, 5, 7, 8], [9, 10, 11, 12]]


def test_reverse_padded_matches_flip_per_sequence_and_is_an_involution() -> None:
    torch.manual_seed(0)
    inputs = torch.randn(5, 7, 3)
    lengths = torch.tensor([7, 1, 4, 0, 6])
    out = reverse_padded(inputs, lengths)
    for b, length in enumerate(lengths.tolist()):
        torch.testing.assert_close(out[b, :length], inputs[b, :length].flip(0))
        torch.testing.assert_close(out[b, length:], inputs[b, length:])
    torch.testing.assert_close(reverse_padded(out, lengths), inputs)


# ----------------------------------------------------------------- StackedLstm


def run_alone(encoder: StackedLstm, sequence: torch.Tensor) -> torch.Tensor:
    length = sequence.shape[0]
    return encoder(sequence[None], torch.ones(1, length, dtype=torch.bool))[0]


@pytest.mark.parametrize("bidirectional", [True, False])
def test_lstm_output_is_padding_invariant(bidirectional: bool) -> None:
    torch.manual_seed(0)
    encoder = StackedLstm(6, [5, 3], bidirectional=bidirectional, input_dropout=0.5).eval()
    lengths = [7, 3, 1, 5]
    inputs = torch.randn(4, 7, 6) * 3  # padding positions hold garbage on purpose
    mask = mask_for(lengths, 7)
    with torch.no_grad():
        out = encoder(inputs, mask)
        assert out.shape == (4, 7, 6 if bidirectional else 3)
        assert encoder.output_dim == out.shape[2]
        for b, length in enumerate(lengths):
            alone = run_alone(encoder, inputs[b, :length])
            torch.testing.assert_close(out[b, :length], alone, rtol=1e-5, atol=1e-6)
            assert out[b, length:].eq(0).all()


def test_backward_direction_reads_the_sequence_right_to_left() -> None:
    torch.manual_seed(0)
    encoder = StackedLstm(4, [3], bidirectional=True).eval()
    sequence = torch.randn(6, 4)
    changed = sequence.clone()
    changed[5] += 1.0  # change only the last token
    with torch.no_grad():
        before, after = run_alone(encoder, sequence), run_alone(encoder, changed)
    # forward half: positions before the change are unaffected; backward half: all affected
    torch.testing.assert_close(before[:5, :3], after[:5, :3])
    assert (before[:, 3:] - after[:, 3:]).abs().sum(dim=1).gt(0).all()


def test_first_layer_backward_states_match_a_reversed_lstm() -> None:
    torch.manual_seed(0)
    encoder = StackedLstm(4, [3], bidirectional=True).eval()
    sequence = torch.randn(5, 4)
    with torch.no_grad():
        out = run_alone(encoder, sequence)
        forward_states, _ = encoder.forward_layers[0](sequence[None])
        backward_states, _ = encoder.backward_layers[0](sequence.flip(0)[None])
    torch.testing.assert_close(out[:, :3], forward_states[0])
    torch.testing.assert_close(out[:, 3:], backward_states[0].flip(0))


def test_lstm_with_an_empty_sequence_in_the_batch() -> None:
    torch.manual_seed(0)
    encoder = StackedLstm(3, [2]).eval()
    inputs = torch.randn(2, 4, 3)
    with torch.no_grad():
        out = encoder(inputs, mask_for([4, 0], 4))
    assert out[1].eq(0).all()
    assert torch.isfinite(out).all()


def test_lstm_training_mode_uses_dropout() -> None:
    torch.manual_seed(0)
    encoder = StackedLstm(8, [4], input_dropout=0.5)
    inputs = torch.randn(2, 5, 8)
    mask = mask_for([5, 3], 5)
    first, second = encoder(inputs, mask), encoder(inputs, mask)
    assert not torch.equal(first, second)
    assert first[1, 3:].eq(0).all()
    encoder.eval()
    torch.testing.assert_close(encoder(inputs, mask), encoder(inputs, mask))


def test_lstm_from_the_registry() -> None:
    validator = Validator()
    spec = validator.component({"type": "lstm", "hidden_sizes": [7, 3]},
                               "seq2seq_encoder", "encoder")
    assert validator.problems == []
    encoder = spec.build(input_dim=5)
    assert encoder.output_dim == 6
    assert [layer.hidden_size for layer in encoder.forward_layers] == [7, 3]
    assert [layer.input_size for layer in encoder.backward_layers] == [5, 14]


# ----------------------------------------------------------------- VariationalDropout


def test_dropout_mask_is_shared_over_time() -> None:
    torch.manual_seed(0)
    dropout = VariationalDropout(0.4)
    out = dropout(torch.ones(8, 10, 32))
    assert torch.equal(out, out[:, :1].expand_as(out))
    values = out.unique().tolist()
    assert len(values) == 2
    assert values == [0.0, pytest.approx(1 / 0.6)]
    # masks differ between sequences of the batch
    assert not torch.equal(out[0], out[1])


def test_dropout_is_identity_in_eval_and_with_p_zero() -> None:
    inputs = torch.randn(3, 4, 5)
    dropout = VariationalDropout(0.5).eval()
    assert dropout(inputs) is inputs
    assert VariationalDropout(0.0)(inputs) is inputs


def test_dropout_preserves_the_expected_value() -> None:
    torch.manual_seed(0)
    dropout = VariationalDropout(0.3)
    inputs = torch.full((400, 3, 250), 2.0)
    out = dropout(inputs)
    assert out.mean().item() == pytest.approx(2.0, rel=0.02)
    kept = (out[:, 0] != 0).float().mean().item()
    assert kept == pytest.approx(0.7, abs=0.01)

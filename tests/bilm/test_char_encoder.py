"""CharacterEncoder: the trimmed, de-duplicated convolutions equal a plain conv1d over all 50
character positions, values and gradients."""

from __future__ import annotations

import torch

from elmo_experiments.bilm.char_encoder import CharacterEncoder
from elmo_experiments.bilm.characters import batch_to_ids
from elmo_experiments.bilm.options import BilmOptions

OPTIONS = BilmOptions(cell_dim=8, projection_dim=6, filters=((1, 4), (2, 3), (5, 5)),
                      n_highway=1, char_embedding_dim=4)


def _reference(encoder: CharacterEncoder, ids: torch.Tensor) -> torch.Tensor:
    """Every token on its own, every position, conv1d: the architecture as defined."""
    chars = torch.nn.functional.embedding(ids, encoder.char_embedding).transpose(1, 2)
    pooled = [torch.nn.functional.conv1d(chars, w, b).amax(dim=2)
              for w, b in zip(encoder.conv_weights, encoder.conv_biases, strict=True)]
    x = torch.relu(torch.cat(pooled, dim=1))
    f = encoder.num_filters
    for weight, bias in zip(encoder.highway_weights, encoder.highway_biases, strict=True):
        both = x @ weight + bias
        gate = torch.sigmoid(both[:, :f])
        x = gate * torch.relu(both[:, f:]) + (1 - gate) * x
    return x @ encoder.projection_weight + encoder.projection_bias


def test_trimmed_convolutions_equal_the_full_definition() -> None:
    encoder = CharacterEncoder(OPTIONS).double()
    encoder.reset_parameters(torch.Generator().manual_seed(0))
    with torch.no_grad():  # a padding embedding that wins some maxima, and biases that matter
        encoder.char_embedding[261].fill_(2.0)
        for bias in encoder.conv_biases:
            bias.normal_(generator=torch.Generator().manual_seed(1))
    words = ["a", "the", "the", "extraordinarily", "I", "x" * 48, "the", "café", "ab"]
    ids = batch_to_ids([words])[0]  # (tokens, 50), with repeats and a 50-character token
    weights = torch.randn(len(words), OPTIONS.projection_dim, dtype=torch.float64)
    results = []
    for run in (encoder._encode, lambda i: _reference(encoder, i)):
        encoder.zero_grad()
        out = run(ids)
        (out * weights).sum().backward()
        results.append([out, *(p.grad.clone() for p in encoder.parameters())])
    for trimmed, reference in zip(*results, strict=True):
        torch.testing.assert_close(trimmed, reference, atol=1e-12, rtol=1e-12)
    assert results[0][1][261].abs().sum() > 0  # the padding windows did win some maxima

"""The scalar mix γ · Σ s_j h_j against a numpy brute force, in every mode, with layer norm."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from elmo_experiments.modules.embedders.scalar_mix import MIX_MODES, ScalarMix, masked_layer_norm

NUM_LAYERS, BATCH, SEQ, DIM = 3, 3, 5, 4
LENGTHS = [5, 2, 0]  # a full row, a short row, an empty row


def make_inputs(seed: int = 0) -> tuple[list[torch.Tensor], torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    layers = [torch.randn(BATCH, SEQ, DIM, generator=generator) * (j + 1) + j
              for j in range(NUM_LAYERS)]
    mask = torch.arange(SEQ)[None, :] < torch.tensor(LENGTHS)[:, None]
    return layers, mask


def brute_force(layers: list[torch.Tensor], mask: torch.Tensor, s: np.ndarray, gamma: float,
                layer_norm: bool) -> np.ndarray:
    """Float64, entry by entry: statistics over the unmasked entries of each layer."""
    keep = mask.numpy()
    total = np.zeros((BATCH, SEQ, DIM))
    for j, layer in enumerate(layers):
        h = layer.numpy().astype(np.float64)
        if layer_norm:
            values = [h[b, t, d] for b in range(BATCH) for t in range(SEQ) for d in range(DIM)
                      if keep[b, t]]
            mean = sum(values) / len(values)
            variance = sum((v - mean) ** 2 for v in values) / len(values)
            h = (h - mean) / np.sqrt(variance + 1e-13)
        total += s[j] * h
    return gamma * total


def softmax(w: np.ndarray) -> np.ndarray:
    e = np.exp(w - w.max())
    return e / e.sum()


W = np.array([0.3, -1.0, 2.0])
CASES = {
    "learned": ({"mode": "learned"}, softmax(W)),
    "last": ({"mode": "last"}, np.array([0.0, 0.0, 1.0])),
    "layer0": ({"mode": "layer", "layer": 0}, np.array([1.0, 0.0, 0.0])),
    "layer1": ({"mode": "layer", "layer": 1}, np.array([0.0, 1.0, 0.0])),
    "average": ({"mode": "average"}, np.full(3, 1 / 3)),
    "fixed": ({"mode": "fixed", "weights": [1.0, 2.0, 1.0]}, np.array([0.25, 0.5, 0.25])),
    "fixed_zero": ({"mode": "fixed", "weights": [0, 0, 3]}, np.array([0.0, 0.0, 1.0])),
}


@pytest.mark.parametrize("layer_norm", [False, True], ids=["plain", "layer_norm"])
@pytest.mark.parametrize("case", list(CASES))
def test_matches_brute_force(case: str, layer_norm: bool) -> None:
    config, s = CASES[case]
    mix = ScalarMix(NUM_LAYERS, layer_norm=layer_norm, **config)
    gamma = 1.7
    with torch.no_grad():
        if mix.mode == "learned":
            mix.scalar_parameters.copy_(torch.tensor(W))
        mix.gamma.fill_(gamma)
    layers, mask = make_inputs()
    got = mix(layers, mask)
    assert got.shape == (BATCH, SEQ, DIM)
    np.testing.assert_allclose(mix.normalized_weights().detach().numpy(), s, atol=1e-6)
    expected = brute_force(layers, mask, s, gamma, layer_norm)
    np.testing.assert_allclose(got.detach().numpy(), expected, rtol=1e-5, atol=1e-5)


def test_learned_starts_as_the_plain_average() -> None:
    mix = ScalarMix(NUM_LAYERS)
    assert mix.mode == "learned"
    np.testing.assert_allclose(mix.normalized_weights().detach().numpy(), np.full(3, 1 / 3))
    assert mix.gamma.item() == 1.0
    layers, mask = make_inputs()
    torch.testing.assert_close(mix(layers, mask), sum(layers) / 3)


def test_masked_layer_norm_statistics() -> None:
    layers, mask = make_inputs(seed=4)
    normed = masked_layer_norm(layers[2], mask)
    kept = normed[mask]  # (tokens, dim)
    assert abs(float(kept.mean())) < 1e-5
    assert abs(float(kept.var(unbiased=False)) - 1.0) < 1e-4


def test_masked_entries_do_not_change_the_statistics() -> None:
    layers, mask = make_inputs(seed=5)
    changed = [layer.clone() for layer in layers]
    for layer in changed:
        layer[~mask] = 1000.0
    mix = ScalarMix(NUM_LAYERS, layer_norm=True)
    torch.testing.assert_close(mix(changed, mask)[mask], mix(layers, mask)[mask])


def test_penalty_is_lambda_times_squared_norm() -> None:
    mix = ScalarMix(NUM_LAYERS, l2=0.1)
    with torch.no_grad():
        mix.scalar_parameters.copy_(torch.tensor(W))
    penalty = mix.penalty()
    assert penalty is not None
    assert penalty.item() == pytest.approx(0.1 * float((W**2).sum()), rel=1e-6)
    penalty.backward()
    np.testing.assert_allclose(mix.scalar_parameters.grad.numpy(), 2 * 0.1 * W, rtol=1e-6)


def test_no_penalty_without_lambda_or_outside_learned_mode() -> None:
    assert ScalarMix(NUM_LAYERS).penalty() is None
    assert ScalarMix(NUM_LAYERS, mode="average", l2=0.1).penalty() is None
    assert ScalarMix(NUM_LAYERS, mode="last", l2=1.0).penalty() is None


def test_gradients_reach_w_and_gamma_in_learned_mode() -> None:
    mix = ScalarMix(NUM_LAYERS, layer_norm=True)
    layers, mask = make_inputs()
    layers = [layer.requires_grad_() for layer in layers]
    (mix(layers, mask) * torch.linspace(-1, 2, DIM)).sum().backward()
    assert mix.scalar_parameters.grad is not None and mix.scalar_parameters.grad.abs().sum() > 0
    assert mix.gamma.grad is not None and mix.gamma.grad.abs().sum() > 0
    assert all(layer.grad is not None for layer in layers)


@pytest.mark.parametrize("case", [c for c in CASES if c != "learned"])
def test_mixing_weights_are_frozen_outside_learned_mode(case: str) -> None:
    config, _ = CASES[case]
    mix = ScalarMix(NUM_LAYERS, **config)
    assert not mix.scalar_parameters.requires_grad
    layers, mask = make_inputs()
    layers = [layer.requires_grad_() for layer in layers]
    mix(layers, mask).sum().backward()
    assert mix.scalar_parameters.grad is None
    assert "scalar_parameters" not in {n for n, p in mix.named_parameters() if p.requires_grad}
    # Fixed mixing weights freeze γ too (docs/paper.md §3); the one-layer modes keep it learned
    # (Peters et al. 2018, supplement A.2: without γ the last-only variant trains badly).
    assert mix.gamma.requires_grad == (config["mode"] in ("last", "layer"))


def test_trainable_gamma_true_learns_gamma_with_fixed_weights() -> None:
    mix = ScalarMix(NUM_LAYERS, mode="average", trainable_gamma=True)
    layers, mask = make_inputs()
    mix(layers, mask).sum().backward()
    assert mix.gamma.grad is not None and mix.gamma.grad.abs().sum() > 0


@pytest.mark.parametrize("mode", ["learned", "last"])
def test_trainable_gamma_false_freezes_gamma(mode: str) -> None:
    mix = ScalarMix(NUM_LAYERS, mode=mode, trainable_gamma=False)
    layers, mask = make_inputs()
    layers = [layer.requires_grad_() for layer in layers]
    mix(layers, mask).sum().backward()
    assert mix.gamma.grad is None and not mix.gamma.requires_grad


def test_fixed_weights_are_a_buffer_saved_with_the_model() -> None:
    mix = ScalarMix(NUM_LAYERS, mode="fixed", weights=[1.0, 2.0, 1.0])
    state = mix.state_dict()
    assert torch.equal(state["fixed_weights"], torch.tensor([0.25, 0.5, 0.25]))


@pytest.mark.parametrize(("kwargs", "pattern"), [
    ({"mode": "sum"}, r"mix mode 'sum' is not one of"),
    ({"mode": "layer"}, r"mix layer None is not in 0\.\.2"),
    ({"mode": "layer", "layer": 3}, r"mix layer 3 is not in 0\.\.2"),
    ({"mode": "layer", "layer": -1}, r"mix layer -1 is not in 0\.\.2"),
    ({"mode": "fixed"}, r"mix weights must be 3 non-negative numbers"),
    ({"mode": "fixed", "weights": [1.0, 1.0]}, r"mix weights must be 3"),
    ({"mode": "fixed", "weights": [1.0, -1.0, 1.0]}, r"mix weights must be 3"),
    ({"mode": "fixed", "weights": [0.0, 0.0, 0.0]}, r"mix weights must be 3"),
])
def test_invalid_configs(kwargs: dict, pattern: str) -> None:
    with pytest.raises(ValueError, match=pattern):
        ScalarMix(NUM_LAYERS, **kwargs)


def test_wrong_number_of_layers() -> None:
    layers, mask = make_inputs()
    with pytest.raises(ValueError, match=r"expected 3 layers, got 2"):
        ScalarMix(NUM_LAYERS)(layers[:2], mask)


def test_every_mode_is_covered() -> None:
    assert {config["mode"] for config, _ in CASES.values()} == set(MIX_MODES)

"""The joint LM objective (Peters et al. 2018, section 3.1) against a brute-force log-likelihood.

The reference is computed here without the model's target shifting or masking: every forward
prediction runs the biLM on the prefix ``<S> t_1 .. t_k`` alone and every backward prediction on
the suffix ``t_k .. t_N </S>`` alone, then takes the log softmax over the whole vocabulary with
the shared softmax weights.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from elmo_experiments.bilm.characters import BOS_IDS, EOS_IDS, batch_to_ids, sentence_to_ids
from elmo_experiments.bilm.options import BilmOptions
from elmo_experiments.bilm.pretraining.lm_data import SoftmaxVocabulary
from elmo_experiments.bilm.pretraining.lm_model import BilmLanguageModel
from elmo_experiments.metrics.metric import compute_all

OPTIONS = BilmOptions(cell_dim=8, projection_dim=4, filters=((1, 4), (2, 4)), n_highway=1,
                      char_embedding_dim=4)
VOCAB = SoftmaxVocabulary(["<S>", "</S>", "<UNK>", "the", "cat", "sat", "on", "mat", "a",
                           "dog", "ran", "."])
SENTENCES = [["the", "cat", "sat", "on", "the", "mat", "."],
             ["a", "dog", "ran"],
             ["the", "zebra", "sat", "."],  # "zebra" is out of the softmax vocabulary
             ["dog"]]
BOS, EOS, UNK = 0, 1, 2


def make_model(seed: int = 3, num_samples: int = 0) -> BilmLanguageModel:
    model = BilmLanguageModel(OPTIONS, len(VOCAB), dropout=0.0, num_samples=num_samples,
                              seed=seed).double()
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():  # the softmax init draws from the global RNG: fix it here
        model.softmax.weight.normal_(0.0, 0.5, generator=generator)
        model.softmax.bias.copy_(torch.linspace(-0.5, 0.5, len(VOCAB), dtype=torch.float64))
    return model


def softmax_ids(tokens: list[str]) -> list[int]:
    return [VOCAB.index.get(t, UNK) for t in tokens]


def make_batch(sentences: list[list[str]]) -> dict[str, torch.Tensor]:
    """What ``LmLoader.collate`` produces: char ids, softmax targets (0 at padding), mask."""
    chars = batch_to_ids(sentences)
    mask = (chars > 0).any(dim=2)
    targets = torch.zeros(mask.shape, dtype=torch.long)
    for row, tokens in enumerate(sentences):
        targets[row, : len(tokens)] = torch.tensor(softmax_ids(tokens))
    return {"char_ids": chars, "targets": targets, "mask": mask}


def log_probs(model: BilmLanguageModel, hidden: torch.Tensor) -> torch.Tensor:
    """Log softmax over the full vocabulary with the shared softmax: (d,) -> (V,)."""
    logits = hidden @ model.softmax.weight.t() + model.softmax.bias
    return torch.log_softmax(logits, dim=-1)


def encode_alone(model: BilmLanguageModel, char_rows: np.ndarray):  # type: ignore[no-untyped-def]
    """The biLM on one sequence (boundary ids included as given), batch of one."""
    ids = torch.from_numpy(np.ascontiguousarray(char_rows))[None]  # (1, n, 50)
    return model.bilm.encode(ids, torch.tensor([ids.shape[1]]))


def brute_force_nll(model: BilmLanguageModel, tokens: list[str]) -> tuple[list[float],
                                                                          list[float]]:
    """Per-prediction forward and backward NLLs of one sentence, N + 1 each.

    Forward: -log p(t_k | <S> t_1..t_{k-1}) for t_1..t_N, </S>.
    Backward: -log p(t_k | t_{k+1}..t_N </S>) for <S>, t_1..t_N.
    """
    full = np.concatenate([BOS_IDS[None], sentence_to_ids(tokens), EOS_IDS[None]])  # (N + 2, 50)
    ids = [BOS, *softmax_ids(tokens), EOS]
    n = len(tokens)
    forward, backward = [], []
    with torch.no_grad():
        for k in range(1, n + 2):  # predict full[k] from full[:k]
            hidden = encode_alone(model, full[:k]).forward[-1][0, -1]
            forward.append(-float(log_probs(model, hidden)[ids[k]]))
        for k in range(0, n + 1):  # predict full[k] from full[k + 1:]
            hidden = encode_alone(model, full[k + 1 :]).backward[-1][0, 0]
            backward.append(-float(log_probs(model, hidden)[ids[k]]))
    return forward, backward


@pytest.fixture(scope="module")
def model() -> BilmLanguageModel:
    return make_model().eval()


@pytest.fixture(scope="module")
def reference(model: BilmLanguageModel) -> list[tuple[list[float], list[float]]]:
    return [brute_force_nll(model, s) for s in SENTENCES]


def test_lm_targets_shift_and_boundaries() -> None:
    targets = torch.tensor([[5, 6, 7], [8, 9, 0]])
    mask = torch.tensor([[True, True, True], [True, True, False]])
    forward, backward, valid = BilmLanguageModel.lm_targets(targets, mask)
    assert forward.tolist() == [[5, 6, 7, EOS], [8, 9, EOS, 0]]
    assert backward.tolist() == [[BOS, 5, 6, 7], [BOS, 8, 9, 0]]
    assert valid.tolist() == [[True] * 4, [True, True, True, False]]


@pytest.mark.parametrize("index", range(len(SENTENCES)))
def test_single_sentence_loss_is_brute_force_mean_nll(model, reference, index) -> None:
    forward, backward = reference[index]
    assert len(forward) == len(backward) == len(SENTENCES[index]) + 1
    expected = sum(forward) / len(forward) + sum(backward) / len(backward)
    with torch.no_grad():
        loss = model(**make_batch([SENTENCES[index]]))["loss"]
    assert loss.dtype == torch.float64
    assert float(loss) == pytest.approx(expected, rel=1e-9, abs=1e-9)


def test_padded_batch_is_the_token_weighted_mean_of_sentences(model, reference) -> None:
    """Loss = mean over all predictions of the batch, per direction; padding contributes 0."""
    with torch.no_grad():
        batch_loss = float(model(**make_batch(SENTENCES))["loss"])
        alone = [float(model(**make_batch([s]))["loss"]) for s in SENTENCES]
    weights = [len(s) + 1 for s in SENTENCES]
    weighted = sum(w * loss for w, loss in zip(weights, alone, strict=True)) / sum(weights)
    assert batch_loss == pytest.approx(weighted, rel=1e-9)
    forward = [x for f, _ in reference for x in f]
    backward = [x for _, b in reference for x in b]
    expected = sum(forward) / len(forward) + sum(backward) / len(backward)
    assert batch_loss == pytest.approx(expected, rel=1e-9)
    # the plain mean of per-sentence losses differs (different lengths): weighting matters
    assert abs(batch_loss - sum(alone) / len(alone)) > 1e-6


def test_padding_rows_and_columns_do_not_change_the_loss(model) -> None:
    """A sentence padded to a longer width scores exactly as on its own."""
    short = SENTENCES[1]
    with torch.no_grad():
        alone = float(model(**make_batch([short]))["loss"])
        padded_batch = make_batch([short, SENTENCES[0]])
        # keep only the short (padded) row
        row = {k: v[:1] for k, v in padded_batch.items()}
        padded = float(model(**row)["loss"])
    assert row["mask"].shape[1] > len(short)
    assert padded == pytest.approx(alone, rel=1e-12)


def test_perplexities_are_exp_of_mean_nll_per_direction(reference) -> None:
    model = make_model().eval()
    compute_all(model.metrics, reset=True)
    assert compute_all(model.metrics) == {}  # nothing scored yet
    with torch.no_grad():  # two batches accumulate over predictions, not over batches
        model(**make_batch(SENTENCES[:2]))
        model(**make_batch(SENTENCES[2:]))
    forward = [x for f, _ in reference for x in f]
    backward = [x for _, b in reference for x in b]
    metrics = compute_all(model.metrics, reset=True)
    expected_f = math.exp(sum(forward) / len(forward))
    expected_b = math.exp(sum(backward) / len(backward))
    assert metrics["perplexity_forward"] == pytest.approx(expected_f, rel=1e-9)
    assert metrics["perplexity_backward"] == pytest.approx(expected_b, rel=1e-9)
    assert metrics["perplexity"] == pytest.approx((expected_f + expected_b) / 2, rel=1e-9)
    assert compute_all(model.metrics) == {}  # reset


def test_sampled_training_batches_do_not_count_in_perplexity() -> None:
    model = make_model(num_samples=4).train()
    compute_all(model.metrics, reset=True)
    model(**make_batch(SENTENCES))["loss"].backward()
    assert compute_all(model.metrics) == {}
    model.eval()
    with torch.no_grad():
        model(**make_batch(SENTENCES))
    assert compute_all(model.metrics)["perplexity"] > 1.0


def test_gradients_reach_every_part() -> None:
    model = make_model().train()
    model(**make_batch(SENTENCES))["loss"].backward()
    missing = [name for name, p in model.named_parameters()
               if p.grad is None or not bool(p.grad.abs().sum() > 0)]
    assert missing == []
    names = {name.split(".")[1] if name.startswith("bilm.") else name.split(".")[0]
             for name, _ in model.named_parameters()}
    assert {"char_encoder", "forward_layers", "backward_layers", "softmax"} <= names
    assert len([n for n, _ in model.named_parameters() if ".forward_layers." in n]) == \
        4 * OPTIONS.n_layers


def test_gradient_matches_finite_difference_of_brute_force() -> None:
    """The autograd gradient of the loss wrt a softmax weight is the brute-force one."""
    model = make_model().eval()
    sentences = SENTENCES[1:3]

    def brute(m: BilmLanguageModel) -> float:
        values = [brute_force_nll(m, s) for s in sentences]
        forward = [x for f, _ in values for x in f]
        backward = [x for _, b in values for x in b]
        return sum(forward) / len(forward) + sum(backward) / len(backward)

    model.zero_grad()
    model(**make_batch(sentences))["loss"].backward()
    analytic = float(model.softmax.weight.grad[VOCAB.index["dog"], 1])
    eps = 1e-6
    with torch.no_grad():
        model.softmax.weight[VOCAB.index["dog"], 1] += eps
        up = brute(model)
        model.softmax.weight[VOCAB.index["dog"], 1] -= 2 * eps
        down = brute(model)
    assert analytic == pytest.approx((up - down) / (2 * eps), rel=1e-5, abs=1e-8)


def captured_hidden(model: BilmLanguageModel, sentence: list[str]
                    ) -> tuple[torch.Tensor, torch.Tensor]:
    """The rows the model feeds to the softmax: forward then backward, (N + 1, P) each."""
    seen: list[torch.Tensor] = []
    handle = model.softmax.register_forward_hook(lambda _m, args, _o: seen.append(args[0]))
    try:
        with torch.no_grad():
            model(**make_batch([sentence]))
    finally:
        handle.remove()
    (rows,) = seen  # one call: the forward rows, then the backward rows
    return rows.chunk(2)


@pytest.mark.parametrize("position", [0, 2, 4])
def test_forward_cannot_see_later_and_backward_cannot_see_earlier_tokens(model, position
                                                                          ) -> None:
    sentence = SENTENCES[0]
    changed = list(sentence)
    changed[position] = "dog" if sentence[position] != "dog" else "cat"
    forward, backward = captured_hidden(model, sentence)
    forward2, backward2 = captured_hidden(model, changed)
    # forward row r is the state after <S> t_1..t_r (predicting t_{r+1}); t_{position+1} changed
    cut = position + 1
    torch.testing.assert_close(forward2[:cut], forward[:cut], rtol=0, atol=1e-12)
    assert (forward2[cut:] - forward[cut:]).abs().amax(dim=1).min() > 1e-8
    # backward row r is the state on t_{r+1}..t_N </S> (predicting t_r)
    torch.testing.assert_close(backward2[cut:], backward[cut:], rtol=0, atol=1e-12)
    assert (backward2[:cut] - backward[:cut]).abs().amax(dim=1).min() > 1e-8


def test_float32_model_agrees_with_float64_reference(reference) -> None:
    model32 = make_model().float().eval()
    forward = [x for f, _ in reference for x in f]
    backward = [x for _, b in reference for x in b]
    expected = sum(forward) / len(forward) + sum(backward) / len(backward)
    with torch.no_grad():
        loss = float(model32(**make_batch(SENTENCES))["loss"])
    assert loss == pytest.approx(expected, abs=1e-5)

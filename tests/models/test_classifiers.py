"""BCN (SST-5) and ESIM (SNLI): fitting a batch, ELMo placements, predictions (the shared model
checks are in test_model_checks.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from elmo_experiments import testing as model_checks
from elmo_experiments.config.loader import PROJECT_ROOT, load_config
from elmo_experiments.metrics.metric import compute_all
from elmo_experiments.predict import evaluate_file, predict_lines
from elmo_experiments.run import train
from elmo_experiments.testing import make_batch

CONFIGS = ["sst5_baseline", "sst5", "snli_baseline", "snli"]
SMALL = ["trainer.num_epochs=2", "dataset_reader.min_phrase_length=6"]


def overrides(name: str) -> list[str]:
    return SMALL if name.startswith("sst5") else SMALL[:1]


@pytest.fixture
def cpu_env(monkeypatch: pytest.MonkeyPatch, tiny_bilm_dir: Path) -> None:
    monkeypatch.delenv("ELMO_DATA_DIR", raising=False)
    monkeypatch.setenv("ELMO_WEIGHTS", str(tiny_bilm_dir))
    monkeypatch.setenv("ELMO_SIZE", "cpu")


def assemble(name: str, extra: list[str] | None = None) -> tuple[Any, Any, Any, list[dict]]:
    return model_checks.assemble(name, [*overrides(name), *(extra or [])])


def assert_mixes_learn(mixes: torch.nn.ModuleList) -> None:
    """After a backward pass, every trainable parameter of every mix has a non-zero gradient."""
    for mix in mixes:
        gradients = [p.grad for p in mix.parameters() if p.requires_grad]
        assert gradients and all(g is not None and g.abs().sum() > 0 for g in gradients)


NO_DROPOUT = {
    "sst5": ["model.embedding_dropout=0", "model.pre_encode_dropout=0",
             "model.integrator_dropout=0", "model.output_dropout=0"],
    "snli": ["model.dropout=0", "model.attention_dropout=0", "model.encoder.input_dropout=0",
             "model.inference_encoder.input_dropout=0"],
}


@pytest.mark.parametrize("name", CONFIGS)
def test_a_few_steps_fit_a_batch(name: str, cpu_env: None) -> None:
    task = name.split("_")[0]
    elmo = [] if name.endswith("baseline") else ["model.token_embedders.elmo.dropout=0"]
    reader, vocab, model, instances = assemble(name, NO_DROPOUT[task] + elmo)
    batch = make_batch(reader, vocab, instances[:16])
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(50):
        optimizer.zero_grad()
        loss = model(**batch.arguments())["loss"]
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0], losses
    model.eval()
    assert compute_all(model.metrics, reset=True)["accuracy"] > 0
    model(**batch.arguments())
    assert compute_all(model.metrics)["accuracy"] >= 75.0


def test_esim_output_elmo_is_used_and_learns(cpu_env: None) -> None:
    _, _, input_only, _ = assemble("snli", ['model.token_embedders.elmo.mixes=[{"l2": 0.001}]'])
    reader, vocab, both, instances = assemble("snli")
    extra = both.projection.layers[0].in_features - input_only.projection.layers[0].in_features
    assert extra == 4 * both.embedder.embedders["elmo"].output_dim  # [a; b; a-b; a*b]
    both(**make_batch(reader, vocab, instances[:4]).arguments())["loss"].backward()
    assert_mixes_learn(both.embedder.embedders["elmo"].mixes)


def test_bcn_output_elmo_widens_the_pools_and_learns(cpu_env: None) -> None:
    _, _, input_only, _ = assemble("sst5", ['model.token_embedders.elmo.mixes=[{}]'])
    reader, vocab, both, instances = assemble("sst5")
    width = both.embedder.embedders["elmo"].output_dim
    assert both.output_layer.layers[0].in_features == \
        input_only.output_layer.layers[0].in_features + 4 * width
    both(**make_batch(reader, vocab, instances[:4]).arguments())["loss"].backward()
    assert_mixes_learn(both.embedder.embedders["elmo"].mixes)


def test_esim_weight_penalty_covers_the_task_matrices_only(cpu_env: None) -> None:
    _, _, model, _ = assemble("snli")
    parameters = dict(model.named_parameters())
    matrices = [
        *(f"{encoder}.forward_layers.0.weight_{kind}_l0" for encoder in
          ("encoder", "inference_encoder") for kind in ("ih", "hh")),
        *(f"{encoder}.backward_layers.0.weight_{kind}_l0" for encoder in
          ("encoder", "inference_encoder") for kind in ("ih", "hh")),
        "projection.layers.0.weight", "output_layer.layers.0.weight", "classifier.weight",
    ]
    expected = sum(float(parameters[name].detach().pow(2).sum()) for name in matrices)
    assert model.penalty().item() == pytest.approx(1e-4 * expected, rel=1e-5)
    with torch.no_grad():  # the embedders (word vectors, ELMo mixes) are not part of it
        for name, parameter in parameters.items():
            if name.startswith("embedder."):
                parameter.mul_(3.0)
    assert model.penalty().item() == pytest.approx(1e-4 * expected, rel=1e-5)
    _, _, baseline, _ = assemble("snli_baseline")
    assert baseline.penalty() is None


@pytest.mark.parametrize("name", ["sst5", "snli"])
def test_a_trained_run_reloads_to_the_same_metrics_and_predicts(
        name: str, cpu_env: None, tmp_path: Path) -> None:
    path = PROJECT_ROOT / "experiments" / f"{name}.jsonnet"
    metrics = train(path, tmp_path / "run", overrides=overrides(name))
    test_file = load_config(path)["test_data_path"]
    again = evaluate_file(tmp_path / "run", test_file)
    assert again["accuracy"] == metrics["test_accuracy"]
    assert again["loss"] == pytest.approx(metrics["test_loss"], rel=1e-6)
    records = list(predict_lines(tmp_path / "run", test_file))
    labels = {"sst5": {"0", "1", "2", "3", "4"},
              "snli": {"entailment", "contradiction", "neutral"}}[name]
    assert records and all(set(r["probabilities"]) == labels for r in records)
    for record in records:
        probabilities = record["probabilities"]
        assert sum(probabilities.values()) == pytest.approx(1.0, abs=1e-5)
        assert record["label"] == max(probabilities, key=probabilities.get)


@pytest.mark.parametrize("name", ["sst5", "snli"])
def test_elmo_at_the_output_only(name: str, cpu_env: None) -> None:
    """at_input: false keeps ELMo out of the input; its one mix joins at the output and learns."""
    output_only = ["model.token_embedders.elmo.at_input=false",
                   'model.token_embedders.elmo.mixes=[{"l2": 0.001}]']
    _, _, baseline, _ = assemble(f"{name}_baseline")
    _, _, both, _ = assemble(name)
    reader, vocab, model, instances = assemble(name, output_only)
    elmo = model.embedder.embedders["elmo"]
    assert model.embedder.output_dim == baseline.embedder.output_dim  # nothing added at the input
    assert model.embedder.extra_dim() == elmo.representation_dim == \
        both.embedder.embedders["elmo"].output_dim
    model(**make_batch(reader, vocab, instances[:4]).arguments())["loss"].backward()
    assert_mixes_learn(elmo.mixes)

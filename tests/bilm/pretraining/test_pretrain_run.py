"""``elmo-exp pretrain`` end to end on the embedded sample: metrics, export, resume, init-from."""

from __future__ import annotations

import json
import os
import re
import runpy
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import pytest
import torch

from elmo_experiments.bilm.characters import batch_to_ids
from elmo_experiments.bilm.pretraining.lm_data import SoftmaxVocabulary
from elmo_experiments.bilm.pretraining.lm_model import BilmLanguageModel
from elmo_experiments.bilm.pretraining.run import (
    carried_over,
    export_run,
    init_from,
    pretrain,
    validate_pretrain,
)
from elmo_experiments.bilm.weights import load_bilm
from elmo_experiments.config.loader import load_config
from elmo_experiments.config.validate import Validator
from elmo_experiments.errors import ConfigError, RunDirError, TrainingStopped
from elmo_experiments.training.run_dir import load_checkpoint

ROOT = Path(__file__).resolve().parents[3]
TINY = str(ROOT / "experiments" / "bilm" / "tiny.jsonnet")
SHORT = ["data_loader.batches_per_epoch=5", "trainer.progress_bar=false"]
SENTENCES = [["The", "cat", "sat", "on", "the", "mat", "."], ["Hello", "world"], ["One"]]


def run(directory: Path, epochs: int, **kwargs: Any) -> dict[str, Any]:
    return pretrain(TINY, directory, overrides=[*SHORT, f"trainer.num_epochs={epochs}"],
                    **kwargs)


def epoch_record(run_dir: Path, epoch: int) -> dict[str, Any]:
    return json.loads((run_dir / f"metrics_epoch_{epoch}.json").read_text())


def trained_model(run_dir: Path, weights: str = "best.pt") -> BilmLanguageModel:
    """A fresh model from the run's saved config, with the checkpoint's weights."""
    values = validate_pretrain(json.loads((run_dir / "config.json").read_text()), "config.json")
    vocab = SoftmaxVocabulary.load(run_dir / "vocab.txt")
    model = values["model"].build(vocab_size=len(vocab), seed=0)
    model.load_state_dict(load_checkpoint(run_dir / weights)["model"])
    return model.eval()


def bilm_outputs(bilm: torch.nn.Module) -> list[torch.Tensor]:
    with torch.no_grad():
        layers, _, _ = bilm.eval()(batch_to_ids(SENTENCES))
    return layers


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """straight: 2 epochs; resumed: 1 epoch then --recover to 2; tuned: 1 epoch from straight."""
    root = tmp_path_factory.mktemp("pretrain")
    paths = {name: root / name for name in ("straight", "resumed", "tuned")}
    run(paths["straight"], 2)
    run(paths["resumed"], 1)
    (paths["resumed"] / "metrics_after_first_call.json").write_text(
        (paths["resumed"] / "metrics.json").read_text())
    # the second half of "resumed" and "tuned" go through the command line's flags
    cli(["pretrain", TINY, "-s", str(paths["resumed"]), "--recover",
         *[arg for o in [*SHORT, "trainer.num_epochs=2"] for arg in ("-o", o)]])
    cli(["pretrain", TINY, "-s", str(paths["tuned"]), "--init-from",
         str(paths["straight"] / "bilm"),
         *[arg for o in [*SHORT, "trainer.num_epochs=1"] for arg in ("-o", o)]])
    return paths


def cli(args: list[str]) -> None:
    """``elmo-exp ARGS`` in this process (no interpreter start-up)."""
    from elmo_experiments.cli import main

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "argv", ["elmo-exp", *args])
        main()  # returns on success; exits on error


def test_metrics_report_perplexities_and_the_corpus(runs) -> None:
    metrics = json.loads((runs["straight"] / "metrics.json").read_text())
    assert metrics["epochs_completed"] == 2
    assert metrics["best_epoch"] in (1, 2)
    assert re.fullmatch(r"[0-9a-f]{40}(-dirty)?|elmo-experiments \S+", metrics["code"])
    for prefix in ("best_validation", "sample_heldout"):
        for suffix in ("perplexity", "perplexity_forward", "perplexity_backward", "loss"):
            assert np.isfinite(metrics[f"{prefix}_{suffix}"])
        forward, backward = (metrics[f"{prefix}_perplexity_forward"],
                             metrics[f"{prefix}_perplexity_backward"])
        assert metrics[f"{prefix}_perplexity"] == pytest.approx((forward + backward) / 2)
        assert 1.0 < forward < 200 and 1.0 < backward < 200  # below uniform over the vocab
    best = epoch_record(runs["straight"], metrics["best_epoch"])
    assert metrics["best_validation_perplexity"] == best["validation_perplexity"]
    assert metrics["embedded_sample"] is True  # the tiny config trains on the embedded sample
    corpus = metrics["corpus"]
    assert set(corpus["tokens"]) == {"train", "heldout", "sample_heldout"}
    assert all(n > 0 for n in corpus["tokens"].values())
    assert corpus == json.loads((runs["straight"] / "corpus" / "summary.json").read_text())
    # training batches are sampled: no training perplexity, but a loss
    assert "training_perplexity" not in best and best["training_loss"] > 0
    assert best["training_tokens_per_s"] > 0


def test_export_round_trip_gives_the_trained_bilm(runs) -> None:
    export = runs["straight"] / "bilm"
    model = trained_model(runs["straight"])
    loaded = load_bilm(export / "options.json", export / "weights.hdf5")
    assert loaded.options == model.bilm.options
    for ours, theirs in zip(bilm_outputs(model.bilm), bilm_outputs(loaded), strict=True):
        torch.testing.assert_close(theirs, ours, rtol=0, atol=1e-6)
    with h5py.File(export / "softmax.hdf5", "r") as handle:
        np.testing.assert_array_equal(handle["softmax/W"][...],
                                      model.softmax.weight.detach().numpy())
        np.testing.assert_array_equal(handle["softmax/b"][...],
                                      model.softmax.bias.detach().numpy())
    words = (export / "vocab.txt").read_text(encoding="utf-8").split("\n")
    assert words[:3] == ["<S>", "</S>", "<UNK>"] and words[-1] == ""
    assert words[:-1] == SoftmaxVocabulary.load(runs["straight"] / "vocab.txt").words
    assert len(words) - 1 == model.softmax.weight.shape[0]


def test_the_export_is_the_best_epoch_not_the_last(runs) -> None:
    best = load_checkpoint(runs["straight"] / "best.pt")
    metrics = json.loads((runs["straight"] / "metrics.json").read_text())
    assert best["epoch"] == metrics["best_epoch"]
    loaded = load_bilm(runs["straight"] / "bilm" / "options.json",
                       runs["straight"] / "bilm" / "weights.hdf5")
    weight = best["model"]["bilm.forward_layers.0.projection"]
    torch.testing.assert_close(loaded.forward_layers[0].projection, weight, rtol=0, atol=0)


def test_exported_bilm_works_in_the_elmo_token_embedder(runs) -> None:
    validator = Validator()
    spec = validator.component({"type": "elmo", "weights": str(runs["straight"] / "bilm"),
                                "dropout": 0.0}, "token_embedder", "elmo")
    assert validator.problems == []
    embedder = spec.build().eval()
    ids = batch_to_ids(SENTENCES)
    with torch.no_grad():
        output = embedder(ids).input
    assert output.shape == (3, 7, 32)  # 2 x projection_dim 16
    # the initial mix is the plain average of the 3 layers (gamma 1)
    layers = bilm_outputs(trained_model(runs["straight"]).bilm)
    torch.testing.assert_close(output, torch.stack(layers).mean(dim=0), rtol=0, atol=1e-5)
    assert output[2, 1:].abs().sum() == 0  # padding


def test_recover_extends_a_run_exactly(runs) -> None:
    first = json.loads((runs["resumed"] / "metrics_after_first_call.json").read_text())
    assert first["epochs_completed"] == 1
    for epoch in (1, 2):
        straight, resumed = epoch_record(runs["straight"], epoch), epoch_record(runs["resumed"],
                                                                                epoch)
        for key in ("validation_perplexity", "validation_perplexity_forward",
                    "validation_perplexity_backward", "validation_loss", "training_loss"):
            assert resumed[key] == straight[key], (epoch, key)
    metrics = json.loads((runs["resumed"] / "metrics.json").read_text())
    expected = json.loads((runs["straight"] / "metrics.json").read_text())
    assert metrics["epochs_completed"] == 2
    for key in ("best_epoch", "best_validation_perplexity", "sample_heldout_perplexity"):
        assert metrics[key] == expected[key]
    config = json.loads((runs["resumed"] / "config.json").read_text())
    assert config["trainer"]["num_epochs"] == 2  # the saved config records the extension
    with h5py.File(runs["straight"] / "bilm" / "weights.hdf5", "r") as a, \
            h5py.File(runs["resumed"] / "bilm" / "weights.hdf5", "r") as b:
        names: list[str] = []
        a.visit(lambda name: names.append(name) if isinstance(a[name], h5py.Dataset) else None)
        assert names
        for name in names:
            np.testing.assert_array_equal(a[name][...], b[name][...], err_msg=name)


def test_recover_refuses_other_changes(runs) -> None:
    with pytest.raises(RunDirError, match=r"model\.cell_dim"):
        pretrain(TINY, runs["resumed"], recover=True,
                 overrides=[*SHORT, "trainer.num_epochs=2", "model.cell_dim=32"])


def test_init_from_starts_from_the_exported_weights(runs) -> None:
    tuned = epoch_record(runs["tuned"], 1)
    fresh = epoch_record(runs["resumed"], 1)  # the same config from a fresh start
    assert tuned["validation_loss"] < fresh["validation_loss"]
    assert tuned["validation_perplexity"] < fresh["validation_perplexity"]
    # and it is better than where the source run stopped only by what one more epoch gives
    source = json.loads((runs["straight"] / "metrics.json").read_text())
    assert tuned["validation_perplexity"] < source["best_validation_perplexity"] * 1.1


def test_init_from_copies_bilm_and_softmax_when_the_vocabulary_matches(runs) -> None:
    export = runs["straight"] / "bilm"
    source = trained_model(runs["straight"])
    vocab = SoftmaxVocabulary.load(export / "vocab.txt")
    model = trained_model(runs["straight"])
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.zero_()
    parts = carried_over(vocab, export / "weights.hdf5")
    assert parts == ["char_cnn", "lstm", "softmax"]
    init_from(model, export / "weights.hdf5", parts)
    for (name, ours), theirs in zip(model.state_dict().items(), source.state_dict().values(),
                                    strict=True):
        torch.testing.assert_close(ours, theirs, rtol=0, atol=1e-6, msg=name)
    # another vocabulary: the biLM is copied, the softmax is left alone
    other = SoftmaxVocabulary([*vocab.words[:-1], "something_else"])
    model2 = trained_model(runs["straight"])
    with torch.no_grad():
        model2.softmax.weight.fill_(0.25)
    parts = carried_over(other, export / "weights.hdf5")
    assert parts == ["char_cnn", "lstm"]
    init_from(model2, export / "weights.hdf5", parts)
    assert bool((model2.softmax.weight == 0.25).all())
    torch.testing.assert_close(model2.bilm.char_encoder.projection_weight,
                               source.bilm.char_encoder.projection_weight)


def test_a_diverged_run_stops_on_its_infinite_perplexity(tmp_path: Path) -> None:
    """lr=1e6: the losses stay finite but the mean NLL is beyond a float's exponent; the
    perplexity is inf and the run stops as it does on a NaN (no OverflowError)."""
    with pytest.raises(TrainingStopped) as info:
        pretrain(TINY, tmp_path / "run", overrides=[*SHORT, "trainer.num_epochs=1",
                                                    "trainer.optimizer.lr=1e6"])
    assert str(info.value) == (f"{tmp_path / 'run'}: epoch 1 batch 5: validation perplexity is "
                               f"inf; training stopped (no epoch finished, so there is no "
                               f"checkpoint). Lower the learning rate")  # skipping would
    # not help a validation figure: no skip advice (9e8fc53)


def test_export_bilm_command(runs, tmp_path: Path) -> None:
    out = tmp_path / "exported"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    result = subprocess.run([sys.executable, "-m", "elmo_experiments", "export-bilm",
                             str(runs["resumed"]), str(out), "--weights", "last.pt"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["SHA256SUMS", "options.json",
                                                     "softmax.hdf5", "vocab.txt",
                                                     "weights.hdf5"]
    listed = [line.split("  ")[1] for line in (out / "SHA256SUMS").read_text().splitlines()]
    assert listed == ["options.json", "softmax.hdf5", "vocab.txt", "weights.hdf5"]
    loaded = load_bilm(out / "options.json", out / "weights.hdf5")
    last = trained_model(runs["resumed"], "last.pt")
    for ours, theirs in zip(bilm_outputs(last.bilm), bilm_outputs(loaded), strict=True):
        torch.testing.assert_close(theirs, ours, rtol=0, atol=1e-6)
    assert (out / "vocab.txt").read_text() == (runs["resumed"] / "vocab.txt").read_text()


def test_export_run_needs_a_run_directory(tmp_path: Path) -> None:
    with pytest.raises(RunDirError, match="not a run directory"):
        export_run(tmp_path, tmp_path / "out")


def test_a_model_other_than_bilm_lm_is_a_one_line_config_error(tmp_path: Path, monkeypatch,
                                                                 capsys) -> None:
    config = load_config(TINY)
    config["model"] = load_config(str(ROOT / "experiments" / "ner_baseline.jsonnet"))["model"]
    path = tmp_path / "not_a_bilm.json"
    path.write_text(json.dumps(config))
    with pytest.raises(ConfigError) as error:
        pretrain(path, tmp_path / "run")
    assert str(error.value) == f"{path}: model.type: pretraining needs bilm_lm, not crf_tagger"
    assert not (tmp_path / "run").exists()
    from elmo_experiments.cli import main

    monkeypatch.setattr(sys, "argv", ["elmo-exp", "pretrain", str(path), "-s",
                                      str(tmp_path / "run")])
    with pytest.raises(SystemExit) as exit_info:
        main()
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert err == f"error: {path}: model.type: pretraining needs bilm_lm, not crf_tagger\n"


@pytest.mark.parametrize("names", [["heldout"], ["train"], ["counts"], ["ptb", "ptb"],
                                   ["a/b"]])
def test_evaluation_sets_need_their_own_names(names: list[str]) -> None:
    """An evaluation set named like a prepared split would silently replace that split."""
    config = load_config(TINY)
    source = config["corpus"]["evaluation"][0]
    config["corpus"]["evaluation"] = [{**source, "name": name} for name in names]
    with pytest.raises(ConfigError) as error:
        validate_pretrain(config, "tiny.jsonnet")
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith(f"tiny.jsonnet: corpus.evaluation.{len(names) - 1}.name: ")
    config["corpus"]["evaluation"] = [{**source, "name": "ptb_test"}, {**source, "name": "wsj"}]
    validate_pretrain(config, "tiny.jsonnet")


def test_fine_tuning_on_task_text_keeps_the_softmax_vocabulary(runs, tmp_path: Path,
                                                                monkeypatch) -> None:
    """--init-from on another corpus (NER text, labels ignored) adopts the biLM's vocabulary,
    so its softmax carries over (Peters et al. 2018, supplement A.1)."""
    monkeypatch.delenv("ELMO_DATA_DIR", raising=False)
    export = runs["straight"] / "bilm"
    tuned = tmp_path / "tuned_on_ner"
    config = ROOT / "experiments" / "bilm" / "tiny.jsonnet"
    sample = ROOT / "reproduction" / "ner" / "sample"
    overrides = [*SHORT, "trainer.num_epochs=1",
                 f'corpus.train=[{{"path": "{sample / "train.txt"}", "format": "conll"}}]',
                 f'corpus.evaluation=[{{"name": "ner_dev", "path": "{sample / "dev.txt"}", '
                 '"format": "conll"}]', "corpus.heldout_every=5"]
    metrics = pretrain(config, tuned, overrides=overrides, init_dir=str(export))
    assert (tuned / "vocab.txt").read_text() == (export / "vocab.txt").read_text()
    assert metrics["ner_dev_perplexity"] > 0
    assert "Lindqvist" in (tuned / "corpus" / "types.txt").read_text()  # read the NER tokens


def test_perplexity_command_reproduces_the_run(runs, capsys) -> None:
    """``elmo-exp perplexity`` on the exported biLM gives the run's own figures: on a text
    file (the evaluation set) and on a prepared corpus split (heldout, model selection)."""
    from elmo_experiments.bilm.pretraining.perplexity import perplexity

    metrics = json.loads((runs["straight"] / "metrics.json").read_text())
    bilm = str(runs["straight"] / "bilm")
    text = perplexity(bilm, str(ROOT / "reproduction/bilm/sample/heldout.txt"), "tokenized",
                      max_sentence_length=100, progress=False)
    assert text["tokens"] == metrics["corpus"]["tokens"]["sample_heldout"]
    for key in ("perplexity", "perplexity_forward", "perplexity_backward"):
        assert text[key] == pytest.approx(metrics[f"sample_heldout_{key}"], rel=1e-5)
    heldout = perplexity(bilm, str(runs["straight"] / "corpus"), split="heldout",
                         progress=False)
    assert heldout["perplexity"] == pytest.approx(metrics["best_validation_perplexity"],
                                                  rel=1e-5)
    cli(["perplexity", bilm, str(ROOT / "reproduction/bilm/sample/heldout.txt"), "--format",
         "tokenized", "--max-sentence-length", "100"])
    assert f"average {text['perplexity']:.2f}" in capsys.readouterr().out


def test_float16_export_keeps_perplexity_within_1e3(runs, tmp_path: Path) -> None:
    from elmo_experiments.bilm.pretraining.perplexity import perplexity

    half = export_run(runs["straight"], tmp_path / "half", float16=True)
    with h5py.File(half / "weights.hdf5", "r") as handle:
        assert handle["char_embed"].dtype == np.float16
    full = perplexity(str(runs["straight"] / "bilm"), str(runs["straight"] / "corpus"),
                      progress=False)
    low = perplexity(str(half), str(runs["straight"] / "corpus"), progress=False)
    assert low["perplexity"] == pytest.approx(full["perplexity"], rel=1e-3)


def test_perplexity_needs_the_softmax(tiny_bilm_dir: Path, tmp_path: Path) -> None:
    from elmo_experiments.bilm.pretraining.perplexity import perplexity
    from elmo_experiments.errors import DataError

    text = tmp_path / "t.txt"
    text.write_text("a b c\n")
    with pytest.raises(DataError, match=r"no softmax\.hdf5"):
        perplexity(str(tiny_bilm_dir), str(text), "tokenized", progress=False)


def test_force_keeps_the_old_run_when_the_corpus_cannot_be_read(runs, tmp_path: Path) -> None:
    """--force wipes a run only once the new corpus is prepared: a missing corpus file leaves
    the old run whole, and no staging folder behind."""
    import shutil

    from elmo_experiments.errors import DataError

    old = tmp_path / "old"
    shutil.copytree(runs["straight"], old)
    before = sorted(p.name for p in old.iterdir())
    missing = '{"corpus": {"train": [{"path": "/no/such/corpus.txt"}]}}'
    with pytest.raises(DataError, match="no corpus files found"):
        pretrain(TINY, old, overrides=[*SHORT, missing], force=True)
    assert sorted(p.name for p in old.iterdir()) == before
    assert [p.name for p in tmp_path.iterdir()] == ["old"]


def test_ship_script_exports_a_checked_biLM_with_its_card(runs, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """``reproduction/bilm/ship.py``: float16 files, SHA256SUMS, and a card whose figures are the
    run's own; the shipped name then resolves and loads like any biLM."""
    from task_scripts import load_script

    from elmo_experiments.bilm import pretrained
    from elmo_experiments.bilm.pretraining.perplexity import perplexity

    ship = load_script(ROOT / "reproduction/bilm/ship.py", "ship_bilm")
    monkeypatch.setattr(sys, "argv", ["ship.py", str(runs["straight"]), "--name", "demo",
                                      "--out", str(tmp_path), "--pins", str(tmp_path / "pins.py")])
    ship.main()
    out = tmp_path / "demo"
    assert {p.name for p in out.iterdir()} == {"options.json", "weights.hdf5", "softmax.hdf5",
                                               "vocab.txt", "training.json", "MODEL_CARD.md",
                                               "SHA256SUMS"}
    with h5py.File(out / "weights.hdf5", "r") as handle:
        assert handle["char_embed"].dtype == np.float16
    record = json.loads((out / "training.json").read_text())
    assert str(runs["straight"]) not in (out / "training.json").read_text()  # no machine paths
    metrics = json.loads((runs["straight"] / "metrics.json").read_text())
    assert [r["epoch"] for r in record["curve"]] == [1, 2]
    assert record["perplexity"]["heldout"]["float32"]["perplexity"] == pytest.approx(
        metrics["best_validation_perplexity"], rel=1e-5)
    stored = perplexity(str(out), str(runs["straight"] / "corpus"), split="sample_heldout",
                        progress=False)
    assert stored == record["perplexity"]["sample_heldout"]["float16"]
    card = (out / "MODEL_CARD.md").read_text()
    assert f"**{stored['perplexity']:.2f}**" in card
    pins = runpy.run_path(str(tmp_path / "pins.py"))["SHIPPED_SHA256"]
    assert pins == {**pretrained.SHIPPED_SHA256, "demo": pretrained.folder_digests(out)}
    monkeypatch.setattr(pretrained, "SHIPPED_ROOT", tmp_path)
    monkeypatch.setattr(pretrained, "SHIPPED_SHA256", pins)  # as the package would pin it
    assert pretrained.resolve_weights("demo") == (out / "options.json", out / "weights.hdf5")
    layers = bilm_outputs(load_bilm(*pretrained.resolve_weights("demo")))
    reference = bilm_outputs(trained_model(runs["straight"]).bilm)
    for ours, theirs in zip(layers, reference, strict=True):  # float16 storage, float32 maths
        assert torch.allclose(ours, theirs, atol=2e-2 * theirs.abs().max().item())


def test_fine_tuning_config_takes_the_shipped_biLM_architecture(tmp_path: Path,
                                                                monkeypatch) -> None:
    """experiments/bilm/finetune_ner.jsonnet names no architecture: --init-from gutenberg (a
    shipped name) gives it, with the weights and the softmax over its own vocabulary."""
    from elmo_experiments.bilm.pretrained import shipped
    from elmo_experiments.bilm.weights import weights_digest

    monkeypatch.delenv("ELMO_DATA_DIR", raising=False)
    monkeypatch.delenv("ELMO_VECTORS_DIR", raising=False)
    gutenberg = shipped()["gutenberg"]
    config = ROOT / "experiments" / "bilm" / "finetune_ner.jsonnet"
    tuned = tmp_path / "tuned"
    metrics = pretrain(config, tuned, init_dir="gutenberg",
                       overrides=["data_loader.max_eval_sentences=8"])
    assert metrics["init_from"]["carried_over"] == ["char_cnn", "lstm", "softmax"]
    assert metrics["init_from"]["sha1"] == weights_digest(gutenberg / "options.json",
                                                          gutenberg / "weights.hdf5")
    saved = json.loads((tuned / "config.json").read_text())["model"]
    assert (saved["cell_dim"], saved["projection_dim"], saved["n_highway"]) == (1024, 256, 1)
    assert (tuned / "bilm" / "vocab.txt").read_text() == (gutenberg / "vocab.txt").read_text()
    assert json.loads((tuned / "bilm" / "options.json").read_text()) == json.loads(
        (gutenberg / "options.json").read_text())
    with pytest.raises(ConfigError, match=r"model\.cell_dim: 512 differs from the --init-from"):
        pretrain(config, tmp_path / "other", init_dir="gutenberg",
                 overrides=["model.cell_dim=512"])
    assert not (tmp_path / "other").exists()


def test_force_refuses_what_no_run_writes(runs, tmp_path: Path) -> None:
    import shutil

    old = tmp_path / "old"
    shutil.copytree(runs["straight"], old)
    (old / "notes.txt").write_text("mine")
    before = sorted(p.name for p in old.iterdir())
    with pytest.raises(RunDirError) as error:
        run(old, 1, force=True)
    assert str(error.value).startswith(f"{old}: holds 'notes.txt', which no run writes; "
                                       f"--force deletes only a run's own files")
    assert sorted(p.name for p in old.iterdir()) == before


@pytest.mark.slow  # two pretraining starts in subprocesses
def test_a_start_killed_while_preparing_the_corpus_leaves_nothing_behind(tmp_path: Path
                                                                       ) -> None:
    """The corpus is staged inside the (locked) run directory; the next start clears what a
    killed one left there, and the folders earlier versions staged beside it."""
    run_dir = tmp_path / "bilm"
    legacy = tmp_path / ".bilm.corpus.ab12cd34"  # where earlier versions staged it
    legacy.mkdir()
    (legacy / "train.npy").write_bytes(b"half")
    args = ["-m", "elmo_experiments", "pretrain", TINY, "-s", str(run_dir),
            *[arg for o in [*SHORT, "trainer.num_epochs=1"] for arg in ("-o", o)]]
    environment = {k: v for k, v in os.environ.items() if k != "ELMO_DATA_DIR"}
    killed = subprocess.run([sys.executable, *args], capture_output=True, text=True,
                            env={**environment, "ELMO_FAULT_AT": "corpus:prepared"},
                            timeout=600)
    assert killed.returncode == -9, killed.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["bilm"]  # nothing staged beside it
    assert any(re.fullmatch(r"\.corpus\.\w{8}", p.name) for p in run_dir.iterdir())
    again = subprocess.run([sys.executable, *args], capture_output=True, text=True,
                           env=environment, timeout=600)
    assert again.returncode == 0, again.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["bilm"]
    assert not [p.name for p in run_dir.iterdir() if p.name.startswith(".")]
    assert (run_dir / "corpus" / "train.npy").is_file()


def test_init_from_a_released_layout_without_softmax_gets_a_new_one(tmp_path: Path,
                                                                     monkeypatch) -> None:
    """A released biLM has options.json and weights.hdf5 only: its character CNN and LSTMs
    carry over, and the softmax is new, over the corpus's own vocabulary."""
    from elmo_experiments.bilm.options import BilmOptions
    from elmo_experiments.bilm.weights import write_random_weights

    monkeypatch.delenv("ELMO_DATA_DIR", raising=False)
    released = write_random_weights(tmp_path / "released", BilmOptions(
        cell_dim=32, projection_dim=8, filters=((1, 4), (2, 8)), n_highway=1,
        char_embedding_dim=4), seed=3)
    assert sorted(p.name for p in released.iterdir()) == ["options.json", "weights.hdf5"]
    config = ROOT / "experiments" / "bilm" / "finetune_ner.jsonnet"
    tuned = tmp_path / "tuned"
    metrics = pretrain(config, tuned, init_dir=str(released),
                       overrides=["data_loader.max_eval_sentences=8", "model.num_samples=16"])
    assert metrics["init_from"]["carried_over"] == ["char_cnn", "lstm"]
    words = (tuned / "bilm" / "vocab.txt").read_text().split("\n")
    assert "Lindqvist" in words  # the new softmax's words are the NER sample's
    assert json.loads((tuned / "bilm" / "options.json").read_text())["lstm"]["dim"] == 32


def test_init_from_a_truncated_softmax_names_the_file(runs, tmp_path: Path) -> None:
    from elmo_experiments.errors import DataError

    export = tmp_path / "bilm"
    shutil.copytree(runs["straight"] / "bilm", export)
    softmax = export / "softmax.hdf5"
    softmax.write_bytes(softmax.read_bytes()[: softmax.stat().st_size // 2])
    model = trained_model(runs["straight"])
    with pytest.raises(DataError) as info:
        init_from(model, export / "weights.hdf5", ["char_cnn", "lstm", "softmax"])
    message = str(info.value)
    assert message.startswith(f"{softmax}: not a readable HDF5 softmax file (")
    assert "\n" not in message

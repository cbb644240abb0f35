"""``elmo-exp pretrain CONFIG -s DIR --dry-run``: what a pretraining run will cost, before it runs.

The corpus is read exactly as the run would read it (``load_or_prepare``: into a temporary
folder, or into ``corpus.prepared_dir`` when the config names one, which the run then reuses),
the softmax vocabulary built with the run's caps (``SoftmaxVocabulary.from_corpus``), and a
few real optimizer steps and evaluation batches, spread over the epoch, are timed on a throwaway
model on the run's device; nothing is saved and the run directory is never touched. Batches
differ in size, so the time per batch is the timed batches' seconds per padded token times the
epoch's mean padded tokens per batch. The estimate of an epoch is its steps times that time per
step plus the validation batches times the time per evaluation batch (what a run's
``epoch_durations_s`` counts). ``feasibility.check_settings`` (which real runs call too) makes
a softmax that cannot fit in memory, or a token cap per batch below the corpus's longest
sentence, a one-line error before anything is built.
"""

from __future__ import annotations

import os
import resource
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch

from elmo_experiments.bilm.pretrained import resolve_weights
from elmo_experiments.bilm.pretraining.corpus import (
    PreparedCorpus,
    check_heldout,
    load_or_prepare,
)
from elmo_experiments.bilm.pretraining.feasibility import GIB, check_settings
from elmo_experiments.bilm.pretraining.lm_data import (
    UNK,
    VOCAB_FILE,
    LmLoader,
    SoftmaxVocabulary,
    sentence_spans,
)
from elmo_experiments.config.loader import load_config
from elmo_experiments.config.paths import absolute_paths
from elmo_experiments.data.batching import Batch
from elmo_experiments.devices import trainer_device
from elmo_experiments.precision import cpu_name


def device_name(device: torch.device) -> str:
    """The GPU's name, or the CPU's with the number of cores this process may use."""
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return f"{cpu_name()} ({len(os.sched_getaffinity(0))} cores, {torch.get_num_threads()} " \
        "torch threads)"


def _read_corpus(settings: dict[str, Any], scratch: Path) -> PreparedCorpus:
    """The corpus of ``prepared_dir`` (prepared there first if it holds none, as the run
    would: the run then reuses it); without one, the corpus prepared in ``scratch``."""
    evaluation = {e["name"]: e for e in settings["evaluation"]}
    return load_or_prepare(settings["train"], evaluation,
                           settings["prepared_dir"] or scratch, settings["heldout_every"],
                           settings["max_sentence_length"])


def corpus_figures(corpus: PreparedCorpus, vocab: SoftmaxVocabulary, cap: int
                   ) -> dict[str, Any]:
    """Tokens, sentences, types, the vocabulary's coverage of the training text and the OOV
    rate of the held-out text, and the sentences cut at the cap."""
    spans = sentence_spans(corpus.ids("train"))
    lengths = spans[:, 1] - spans[:, 0]
    tokens = int(lengths.sum())
    covered = int(corpus.counts[vocab.type_map(corpus.types) != vocab.index[UNK]].sum())
    heldout = np.asarray(corpus.ids("heldout"))
    heldout = heldout[heldout >= 0]
    oov = float((vocab.type_map(corpus.types)[heldout] == vocab.index[UNK]).mean()) \
        if len(heldout) else None
    return {"train_tokens": tokens, "train_sentences": len(spans),
            "heldout_tokens": len(heldout),
            "types": int((np.asarray(corpus.counts) > 0).sum()),  # the training text's
            "vocab_size": len(vocab), "train_coverage": covered / max(tokens, 1),
            "heldout_oov_rate": oov, "sentences_at_cap": int((lengths >= cap).sum()),
            "longest_sentence": int(lengths.max()) if len(lengths) else 0}


EVAL_BATCHES = 5  # held-out batches timed, spread over the split


class _Some:
    """Some of a loader's epoch-0 batches, by index, as a ``Loader``."""

    def __init__(self, loader: LmLoader, indices: list[int]) -> None:
        self.loader, self.indices = loader, indices

    def num_batches(self, epoch: int) -> int:
        return len(self.indices)

    def __len__(self) -> int:
        return len(self.indices)

    def batches(self, epoch: int) -> Iterator[Batch]:
        groups = self.loader.groups(0)
        for index in self.indices:
            yield self.loader.collate(groups[index])

    def padded_tokens(self) -> int:
        """Rows times the longest sentence, summed over these batches: what a step costs."""
        return padded_tokens(self.loader, self.indices)


def padded_tokens(loader: LmLoader, indices: list[int] | None = None) -> int:
    """The padded size (rows x longest sentence) of a loader's epoch-0 batches, summed."""
    groups = loader.groups(0)
    lengths = loader.spans[:, 1] - loader.spans[:, 0]
    chosen = range(len(groups)) if indices is None else indices
    return int(sum(len(groups[i]) * int(lengths[groups[i]].max()) for i in chosen))


def spread(total: int, count: int, skip: int = 0) -> list[int]:
    """``count`` batch indices spread evenly over ``skip..total-1`` (batches differ in size:
    the first few of an epoch, or the shortest held-out ones, are not typical)."""
    count = max(0, min(count, total - skip))
    return sorted({skip + (i * (total - skip)) // count for i in range(count)}) if count else []


def typical_seconds(elapsed: float, timed: _Some) -> float:
    """Seconds a batch of the epoch takes on average: the timed batches' seconds per padded
    token times the epoch's mean padded tokens per batch (a step's cost grows with its size)."""
    total = timed.loader.num_batches(0)
    if not timed.indices or not total:
        return 0.0
    per_token = elapsed / max(timed.padded_tokens(), 1)
    return per_token * padded_tokens(timed.loader) / total


def _synchronise(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def time_steps(values: dict[str, Any], loader: LmLoader, heldout: LmLoader,
               vocab: SoftmaxVocabulary, steps: int, scratch: Path,
               init_files: tuple[Path, Path] | None = None) -> dict[str, Any]:
    """Seconds per optimizer step (the trainer's own epoch loop over ``steps`` of the first
    epoch's batches, after one warm-up step) and per evaluation batch, on a throwaway model;
    and the process's peak memory."""
    from elmo_experiments.bilm.pretraining.run import carried_over, init_from
    from elmo_experiments.training.evaluation import evaluate
    from elmo_experiments.training.session import set_up
    from elmo_experiments.training.trainer import Trainer

    seed = values["random_seed"]
    model = values["model"].build(vocab_size=len(vocab), seed=seed)
    if init_files:
        init_from(model, init_files[1], carried_over(vocab, init_files[1]))
    setup = set_up(model, values["trainer"])
    device = next(model.parameters()).device
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    trainer = Trainer(model, setup.optimizer, setup.scheduler, _Some(loader, [0]), None,
                      {**values["trainer"], "progress_bar": False}, scratch, callbacks=[])
    trainer.train_epoch(0)  # warm-up: allocations, the first optimizer state
    total = loader.num_batches(0)  # the first batch is skipped, unless it is the only one
    trainer.train_loader = timed = _Some(loader, spread(total, steps, skip=int(total > 1)))
    _synchronise(device)
    start = time.perf_counter()
    trainer.train_epoch(0)
    _synchronise(device)
    step_s = typical_seconds(time.perf_counter() - start, timed)
    some = _Some(heldout, spread(len(heldout), EVAL_BATCHES))
    start = time.perf_counter()
    evaluate(model, some, amp=values["trainer"].get("amp"))
    _synchronise(device)
    eval_s = typical_seconds(time.perf_counter() - start, some)
    peak = (torch.cuda.max_memory_allocated(device) if device.type == "cuda"
            else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
    return {"device": device_name(device), "timed_steps": len(timed),
            "seconds_per_step": step_s, "seconds_per_eval_batch": eval_s,
            "peak_memory_gib": peak / GIB,
            "peak_memory_kind": "CUDA max allocated" if device.type == "cuda" else "RSS"}


def dry_run(config_path: str | Path, ext_vars: dict[str, str] | None = None,
            overrides: list[str] | None = None, init_dir: str | None = None,
            steps: int = 10) -> dict[str, Any]:
    """The figures ``--dry-run`` prints (see the module docstring); writes no file outside a
    temporary folder."""
    from elmo_experiments.bilm.pretraining.run import continued_model, validate_pretrain

    config = absolute_paths(load_config(config_path, ext_vars, overrides))
    init_files = resolve_weights(init_dir) if init_dir else None
    if init_files:
        config["model"] = continued_model(config.get("model"), init_files[0], str(config_path))
    values = validate_pretrain(config, str(config_path))
    settings = values["corpus"]
    with tempfile.TemporaryDirectory(prefix="elmo-dry-run-") as scratch:
        start = time.perf_counter()
        corpus = _read_corpus(settings, Path(scratch) / "corpus")
        read_s = time.perf_counter() - start
        check_heldout(corpus, settings)  # as the run does: it selects on the heldout split
        if init_files and (init_files[1].parent / VOCAB_FILE).is_file():
            vocab = SoftmaxVocabulary.load(init_files[1].parent / VOCAB_FILE)
        else:
            vocab = SoftmaxVocabulary.from_corpus(corpus, settings["vocab_size"],
                                                  settings["min_count"])
        check_settings(values, corpus, len(vocab), trainer_device(values["trainer"]),
                       str(config_path))
        figures = corpus_figures(corpus, vocab, settings["max_sentence_length"])
        loader = LmLoader(corpus, "train", vocab, values["data_loader"], values["random_seed"])
        heldout = LmLoader(corpus, "heldout", vocab, values["data_loader"], train=False)
        final = sum(len(LmLoader(corpus, split, vocab, values["data_loader"], train=False))
                    for split in corpus.splits() if split not in ("train", "heldout"))
        timing = time_steps(values, loader, heldout, vocab, steps, Path(scratch) / "run",
                            init_files)
    epochs = values["trainer"]["num_epochs"]
    epoch_s = (loader.num_batches(0) * timing["seconds_per_step"]
               + len(heldout) * timing["seconds_per_eval_batch"])
    return {"config": str(config_path), **figures, "corpus_read_s": read_s,
            "steps_per_epoch": loader.num_batches(0), "validation_batches": len(heldout),
            "epochs": epochs, **timing, "estimated_epoch_s": epoch_s,
            "estimated_schedule_s": epochs * epoch_s
            + final * timing["seconds_per_eval_batch"]}


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.1f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.1f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def describe(report: dict[str, Any]) -> str:
    """The dry run's figures as a few lines of text."""
    oov = report["heldout_oov_rate"]
    return "\n".join([
        f"corpus: {report['train_tokens']:,} training tokens in {report['train_sentences']:,} "
        f"sentences ({report['heldout_tokens']:,} held out), {report['types']:,} types; read "
        f"in {_duration(report['corpus_read_s'])}",
        f"sentences cut at corpus.max_sentence_length: {report['sentences_at_cap']:,} "
        f"(longest piece {report['longest_sentence']} tokens)",
        f"vocabulary: {report['vocab_size']:,} words after the caps; covers "
        f"{100 * report['train_coverage']:.2f}% of the training text; held-out OOV rate "
        + ("n/a" if oov is None else f"{100 * oov:.2f}%"),
        f"steps per epoch: {report['steps_per_epoch']:,} (+ {report['validation_batches']:,} "
        f"validation batches)",
        f"measured on {report['device']}: {report['seconds_per_step']:.3f} s per step "
        f"({report['timed_steps']} steps), {report['seconds_per_eval_batch']:.3f} s per "
        f"evaluation batch",
        f"estimated: {_duration(report['estimated_epoch_s'])} per epoch, "
        f"{_duration(report['estimated_schedule_s'])} for {report['epochs']} epochs",
        f"peak memory ({report['peak_memory_kind']}): {report['peak_memory_gib']:.2f} GiB",
    ])

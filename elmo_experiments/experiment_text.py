"""The running text of an experiment's split, read as the experiment reads it (labels ignored).

Domain fine-tuning of a biLM (Peters et al. 2018, supplement A.1) continues it on a task's
training text; ``elmo-exp perplexity`` scores a task's dev text. Both read that text here: the
experiment config's own reader on its own data path (the training reader for the training
split, with its subsets such as SRL's first 8,000 sentences or SQuAD's first 40 articles, cut to
``train_data_fraction`` as training cuts it; the evaluation reader for validation and test),
every text field's sentences, each distinct sentence once (SQuAD repeats a passage per
question, SRL a sentence per predicate, SNLI a premise per hypothesis). ``reader="evaluation"``
reads the training data with the evaluation reader instead: SST's training reader yields every
phrase of a tree, its evaluation reader the sentences.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from elmo_experiments.errors import DataError

SPLITS = ("train", "validation", "test")


def _experiment(config_path: str | Path, ext_vars: dict[str, str] | None) -> Any:
    from elmo_experiments.config.loader import load_config
    from elmo_experiments.config.paths import absolute_paths
    from elmo_experiments.experiment import validate_experiment

    config = absolute_paths(load_config(config_path, ext_vars or {}))
    # only the data is read: the model's files (word vectors, biLM) need not exist here
    return validate_experiment(config, source=str(config_path), check_paths=True,
                               check_files=False)


def _split_path(experiment: Any, config_path: str | Path, split: str) -> str:
    from elmo_experiments.run import data_paths

    if split not in SPLITS:
        raise DataError(f"{config_path}: split {split!r} is not one of {', '.join(SPLITS)}")
    path = data_paths(experiment)[split]
    if not path:
        raise DataError(f"{config_path}: the experiment has no {split} data path")
    return path


def split_data_path(config_path: str | Path, split: str,
                    ext_vars: dict[str, str] | None = None) -> str:
    """The data path an experiment reads for ``split``; an error naming the config if none."""
    return _split_path(_experiment(config_path, ext_vars), config_path, split)


READERS = ("training", "evaluation")


def experiment_sentences(config_path: str | Path, split: str = "train",
                         ext_vars: dict[str, str] | None = None,
                         reader: str | None = None) -> Iterator[list[str]]:
    """Each distinct sentence (token list) of the text fields of ``split``, in reading order;
    ``reader``: ``training`` or ``evaluation`` (default: the one that reads ``split``)."""
    from elmo_experiments.data.fields import ListTextField, TextField
    from elmo_experiments.run import build_readers, subsample

    experiment = _experiment(config_path, ext_vars)
    path = _split_path(experiment, config_path, split)
    which = reader or ("training" if split == "train" else "evaluation")
    if which not in READERS:
        raise DataError(f"{config_path}: reader {which!r} is not one of {', '.join(READERS)}")
    readers = dict(zip(READERS, build_readers(experiment), strict=True))
    reader = readers[which]
    fraction = experiment["train_data_fraction"]
    if split == "train" and fraction < 1.0 and reader is not readers["training"]:
        raise DataError(f"{config_path}: train_data_fraction {fraction} shares out the training "
                        "reader's instances, but its text is read with the evaluation reader; "
                        "give the whole training data")
    instances = reader.read(path)
    if split == "train":
        instances = subsample(instances, fraction, experiment["train_data_seed"])
    text_fields = [(name, isinstance(field, ListTextField)) for name, field
                   in reader.fields.items() if isinstance(field, (TextField, ListTextField))]
    if not text_fields:
        raise DataError(f"{config_path}: its reader {experiment.reader.entry.name} has no text "
                        "field to read sentences from")
    seen: set[tuple[str, ...]] = set()
    for instance in instances:
        for name, nested in text_fields:
            value = instance.get(name)
            for sentence in (value or []) if nested else ([value] if value else []):
                key = tuple(sentence)
                if key and key not in seen:
                    seen.add(key)
                    yield list(sentence)

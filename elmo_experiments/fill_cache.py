"""Fill a disk activation cache for an experiment's data before its runs (no training).

The cells of a sweep that share ``--activation-cache DIR`` would otherwise compute the same
sentences' activations at the same time in their first epochs; filled once beforehand, every
cell reads them from its first batch. The keys hold the frozen encoder's digest and settings,
so a fill serves exactly the runs whose encoder it built.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import Any
from unittest.mock import patch

import torch

from elmo_experiments.config.loader import load_config
from elmo_experiments.config.paths import absolute_paths
from elmo_experiments.contracts import activation_caches
from elmo_experiments.data.batching import InstanceLoader, index_instances
from elmo_experiments.devices import trainer_device
from elmo_experiments.errors import ConfigError
from elmo_experiments.experiment import validate_experiment
from elmo_experiments.modules.embedders.activation_cache import (
    ACTIVATION_CACHE_ENV,
    ActivationCache,
)
from elmo_experiments.precision import autocast
from elmo_experiments.run import (
    build_model,
    build_readers,
    data_paths,
    read_datasets,
    training_vocabulary,
)
from elmo_experiments.training.distributed import SINGLE, place_on_device
from elmo_experiments.training.session import seed_everything

logger = logging.getLogger("elmo_experiments")


def model_caches(model: torch.nn.Module) -> list[ActivationCache]:
    """The activation caches of a model's frozen encoders (elmo, transformer embedders)."""
    return activation_caches(model)


def _lookups(caches: list[ActivationCache]) -> tuple[int, int]:
    """Hits and misses of all ``caches`` so far."""
    return sum(c.hits for c in caches), sum(c.misses for c in caches)


def fill_activation_cache(config_path: str | Path, cache_dir: str | Path,
                          ext_vars: dict[str, str] | None = None,
                          overrides: list[str] | None = None) -> dict[str, Any]:
    """Run the model of ``config_path`` forward as its training does (seeded, on its device,
    under its ``amp``) but in evaluation mode and without gradients, over the training data
    (its ``train_data_fraction``), the validation data, and the test data when it is
    evaluated, so that every sentence's frozen-encoder activations land in ``cache_dir`` (or in
    an embedder's own ``cache.disk_dir``). Returns the folders and, per split, the sentences
    found there (``cached``, repeats of this fill's own included) and those computed now."""
    config = absolute_paths(load_config(config_path, ext_vars, overrides or []))
    experiment = validate_experiment(config, source=str(config_path), check_paths=True)
    seed_everything(experiment.values)  # as training does before it builds the model
    folder = str(Path(cache_dir).resolve())
    reader, evaluation_reader = build_readers(experiment)
    datasets = read_datasets(experiment, reader, evaluation_reader)
    vocab = training_vocabulary(experiment, reader, evaluation_reader, datasets)
    # the embedders read the folder when they build their caches (as a sweep's cells do)
    with patch.dict(os.environ, {ACTIVATION_CACHE_ENV: folder}):
        model = build_model(experiment, reader, vocab).eval()
    caches = model_caches(model)
    if not caches:
        raise ConfigError(["model: no frozen encoder with an activation cache (an elmo or "
                           "transformer embedder, requires_grad false, cache enabled, not "
                           "stateful): nothing to fill"], source=str(config_path))
    folders = sorted({str(cache.disk_root) for cache in caches})
    if folders != [folder]:
        logger.warning("the config's own cache.disk_dir wins over %s: filling %s", folder,
                       ", ".join(folders))
    for cache in caches:
        cache.budget = 0  # the disk is what the runs share; keep no copies in memory
    if not experiment["evaluate_on_test"]:
        datasets.pop("test", None)
    trainer = experiment["trainer"]
    device = place_on_device(trainer_device(trainer), SINGLE)
    model.to(device)
    paths = data_paths(experiment)
    report: dict[str, Any] = {"activation_cache": folders}
    settings = experiment["data_loader"]
    for split, instances in datasets.items():
        indexed = index_instances(instances, reader.fields, vocab, source=str(paths[split]),
                                  max_instance_tokens=settings["max_instance_tokens"])
        loader = InstanceLoader(indexed, reader.fields, settings, train=False)
        hits, misses = _lookups(caches)
        start = time.perf_counter()
        for batch in loader.batches(0):
            with torch.no_grad(), autocast(trainer.get("amp"), device.type):
                model(**batch.to(device).arguments())
        hits_now, misses_now = _lookups(caches)
        report[split] = {"instances": len(instances), "cached": hits_now - hits,
                         "computed": misses_now - misses,
                         "seconds": round(time.perf_counter() - start, 1)}
        logger.info("%s: %s", split, report[split])
    return report

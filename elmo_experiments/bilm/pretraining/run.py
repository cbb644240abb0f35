"""``elmo-exp pretrain``: prepare the corpus, train the joint LM, export the released format."""

from __future__ import annotations

import glob
import json
import logging
import os
import re
import shutil
from pathlib import Path
from typing import Any

from elmo_experiments.bilm.options import BilmOptions
from elmo_experiments.bilm.pretrained import resolve_weights, write_checksums
from elmo_experiments.bilm.pretraining.corpus import (
    SOURCE_PARAMS,
    PreparedCorpus,
    check_heldout,
    load_or_prepare,
    read_prepared_json,
)
from elmo_experiments.bilm.pretraining.feasibility import check_settings
from elmo_experiments.bilm.pretraining.lm_data import (
    LM_LOADER_PARAMS,
    SOFTMAX_FILE,
    VOCAB_FILE,
    LmLoader,
    SoftmaxVocabulary,
)
from elmo_experiments.bilm.pretraining.lm_model import BilmLanguageModel
from elmo_experiments.bilm.weights import load_weights, save_weights, weights_digest
from elmo_experiments.config.registry import AT_LEAST_ONE, Param, Spec
from elmo_experiments.config.validate import Validator
from elmo_experiments.data.files import (
    atomic_write,
    create_staging_folder,
    sha1_of,
    warn_if_sample,
)
from elmo_experiments.data.hdf5_output import HDF5Output
from elmo_experiments.devices import trainer_device
from elmo_experiments.errors import ConfigError, DataError
from elmo_experiments.training.distributed import (
    World,
    global_settings,
    sharded,
    stop_on_lost_rank,
)
from elmo_experiments.training.evaluation import evaluate
from elmo_experiments.training.run_dir import (
    also_written,
    load_trained,
    stored_config,
)
from elmo_experiments.training.session import (
    Built,
    Opened,
    SessionRequest,
    Validated,
    read_request,
    run_session,
    set_up,
)
from elmo_experiments.training.trainer import TRAINER_PARAMS, Trainer

logger = logging.getLogger("elmo_experiments")

CORPUS_PARAMS = (
    Param("train", fields=SOURCE_PARAMS, sequence=True),
    Param("evaluation", fields=(Param("name", str), *SOURCE_PARAMS), sequence=True, default=[],
          doc="held-out sets never trained on (e.g. PTB test)"),
    Param("heldout_every", int, 100, doc="every n-th training sentence goes to 'heldout'",
          bounds=AT_LEAST_ONE),
    Param("max_sentence_length", int, 100, bounds=AT_LEAST_ONE),
    Param("vocab_size", int, 50000, doc="softmax vocabulary, specials included",
          bounds=AT_LEAST_ONE),
    Param("min_count", int, 1, bounds=AT_LEAST_ONE),
    Param("prepared_dir", str, None, doc="reuse (or write) the prepared corpus here"),
)
PRETRAIN_PARAMS = (
    Param("corpus", fields=CORPUS_PARAMS),
    Param("model", component="model"),
    Param("data_loader", fields=LM_LOADER_PARAMS, default={}),
    Param("trainer", fields=TRAINER_PARAMS),
    Param("random_seed", int, 13370),
)
also_written("corpus", "bilm", "vocab.txt")  # the prepared corpus, the export, its vocabulary
RESERVED_SPLITS = ("train", "heldout", "counts")  # file names in the prepared corpus


def validate_pretrain(config: dict[str, Any], source: str) -> dict[str, Any]:
    validator = Validator()
    values = validator.fields(config, PRETRAIN_PARAMS, "")
    model = values.get("model")
    if isinstance(model, Spec) and model.entry.name != "bilm_lm":
        validator.problems.append(f"model.type: pretraining needs bilm_lm, not {model.entry.name}")
    if (values.get("corpus") or {}).get("train") == []:
        validator.problems.append("corpus.train: no sources: give at least one")
    seen: set[str] = set()
    for i, entry in enumerate((values.get("corpus") or {}).get("evaluation") or []):
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str):
            continue
        if name in RESERVED_SPLITS or name in seen or not name or "/" in name or "\\" in name:
            validator.problems.append(
                f"corpus.evaluation.{i}.name: {name!r} is taken or not a file name; each "
                f"evaluation set needs its own name, not one of {', '.join(RESERVED_SPLITS)}")
        seen.add(name)
    if validator.problems:
        raise ConfigError(validator.problems, source=source)
    return values


def export_bilm(model: BilmLanguageModel, vocab: SoftmaxVocabulary, directory: str | Path,
                float16: bool = False) -> Path:
    """``options.json`` + ``weights.hdf5`` (released layout), ``softmax.hdf5`` and ``vocab.txt``;
    ``float16`` stores the arrays in half precision (loaders upcast them)."""
    import numpy as np

    dtype = np.float16 if float16 else np.float32
    directory = save_weights(model.bilm, directory, dtype)

    def write(tmp: str) -> None:
        with HDF5Output(tmp) as out:
            for name, tensor in (("W", model.softmax.weight), ("b", model.softmax.bias)):
                out.file.create_dataset(f"softmax/{name}",
                                        data=tensor.detach().cpu().numpy().astype(dtype))

    atomic_write(directory / SOFTMAX_FILE, write)
    vocab.save(directory / VOCAB_FILE)
    write_checksums(directory)
    return directory


def architecture(options: BilmOptions, source: str) -> dict[str, Any]:
    """The ``bilm_lm`` architecture parameters of released-layout ``options``."""
    if options.cell_clip is None or options.proj_clip is None:
        raise DataError(f"{source}: lstm.cell_clip and lstm.proj_clip must be set to continue "
                        "training this biLM")
    return {"cell_dim": options.cell_dim, "projection_dim": options.projection_dim,
            "n_layers": options.n_layers, "cell_clip": options.cell_clip,
            "proj_clip": options.proj_clip, "use_skip_connections": options.use_skip_connections,
            "char_embedding_dim": options.char_embedding_dim,
            "filters": [list(f) for f in options.filters], "n_highway": options.n_highway,
            "activation": options.activation}


def continued_model(model: Any, options_file: Path, config_source: str) -> dict[str, Any]:
    """The config's ``model`` with the architecture of the biLM it continues: a fine-tuning
    config names only its text, schedule, dropout and sampling; an architecture key it does
    give must equal the biLM's (one problem per key that differs)."""
    model = dict(model) if isinstance(model, dict) else {}
    model.setdefault("type", "bilm_lm")
    derived = architecture(BilmOptions.load(options_file), str(options_file))
    problems = [f"model.{key}: {model[key]!r} differs from the --init-from biLM's {value!r} "
                f"({options_file}); leave it out to take the biLM's"
                for key, value in derived.items()
                if key in model and json.loads(json.dumps(model[key])) != value]
    if problems:
        raise ConfigError(problems, source=config_source)
    return {**model, **derived}


def carried_over(vocab: SoftmaxVocabulary, weight_file: Path) -> list[str]:
    """What continuing the biLM of ``weight_file`` keeps: its character encoder and LSTMs,
    and its softmax when it has one over exactly the run's vocabulary."""
    directory = weight_file.parent
    keeps_softmax = (directory / VOCAB_FILE).is_file() and (directory / SOFTMAX_FILE).is_file() \
        and SoftmaxVocabulary.load(directory / VOCAB_FILE).words == vocab.words
    return ["char_cnn", "lstm", *(["softmax"] if keeps_softmax else [])]


def init_from(model: BilmLanguageModel, weight_file: Path, parts: list[str]) -> None:
    """Start from an exported or released biLM (domain fine-tuning): load ``parts``."""
    load_weights(model.bilm, weight_file)
    if "softmax" in parts:
        model.softmax.load_hdf5(weight_file.parent / SOFTMAX_FILE)
    logger.info("initialised %s from %s%s", ", ".join(parts), weight_file.parent,
                "" if "softmax" in parts else " (a new softmax over the corpus's vocabulary)")


def _corpus(settings: dict[str, Any], folder: Path) -> PreparedCorpus:
    logger.info("corpus: %s", folder)
    evaluation = {e["name"]: e for e in settings["evaluation"]}
    return load_or_prepare(settings["train"], evaluation, folder, settings["heldout_every"],
                           settings["max_sentence_length"])


def _corpus_first(settings: dict[str, Any], run_dir: Path, recover: bool, world: World
                  ) -> tuple[PreparedCorpus, bool]:
    """The prepared corpus, before anything else in the run directory changes, and whether
    it is staged: from ``prepared_dir``; a resumed run's own ``corpus/``; or else prepared in
    a temporary folder inside the (locked) run directory, ``.corpus.XXXXXXXX`` (staged: moved
    into place once the directory is ready; one a killed start left is cleared with the
    rest). Rank 0 prepares it; the other ranks then read rank 0's folder."""
    if not world.main:
        folder, staged = world.broadcast(None)
        return PreparedCorpus.load(Path(folder)), staged
    corpus, staged = _prepare_first(settings, run_dir, recover)
    world.broadcast((str(corpus.directory), staged))
    return corpus, staged


def _prepare_first(settings: dict[str, Any], run_dir: Path, recover: bool
                   ) -> tuple[PreparedCorpus, bool]:
    _remove_old_staging(run_dir)
    if settings["prepared_dir"]:
        return _corpus(settings, Path(settings["prepared_dir"])), False
    if recover:
        return _corpus(settings, run_dir / "corpus"), False
    staged = create_staging_folder(run_dir / "corpus")  # RUN/.corpus.XXXXXXXX: a start's
    # temporary, cleared by the next start like any other
    try:
        return _corpus(settings, staged), True
    except BaseException:
        shutil.rmtree(staged, ignore_errors=True)
        raise


def _remove_old_staging(run_dir: Path) -> None:
    """Delete the corpora that starts killed while preparing left beside the run directory
    (``.RUN.corpus.XXXXXXXX``: where earlier versions staged them, outside the lock)."""
    pattern = re.compile(rf"\.{re.escape(run_dir.name)}\.corpus\.[A-Za-z0-9_]{{8}}")
    for folder in run_dir.parent.glob(f".{glob.escape(run_dir.name)}.corpus.*"):
        if folder.is_dir() and pattern.fullmatch(folder.name):
            logger.warning("%s: a corpus an interrupted start left half-prepared; removed",
                           folder)
            shutil.rmtree(folder, ignore_errors=True)


def pretrain(config_path: str | Path, serialization_dir: str | Path,
             ext_vars: dict[str, str] | None = None, overrides: list[str] | None = None,
             force: bool = False, recover: bool = False, init_dir: str | None = None
             ) -> dict[str, Any]:
    """Train a biLM; export the best model to ``<run>/bilm``; return ``metrics.json``.

    The corpus is prepared (or checked) before the run directory is touched, so ``--force``
    never wipes a run for a corpus that cannot be read. Under ``torchrun``, a rank that ends
    mid-run stops the others with one line (``stop_on_lost_rank``). The session itself is
    ``training.session.run_session``'s, with a ``PretrainingAssembly``."""
    with stop_on_lost_rank(Path(serialization_dir)):
        init_files = resolve_weights(init_dir) if init_dir else None

        def validate(config: dict[str, Any]) -> Validated:
            what = {}
            if init_files:  # the architecture is the continued biLM's
                config["model"] = continued_model(config.get("model"), init_files[0],
                                                  str(config_path))
                what["init_from"] = {"name": init_dir, "path": str(init_files[1].parent),
                                     "sha1": weights_digest(*init_files)}
            values = validate_pretrain(config, str(config_path))
            seeds = {"random_seed": values["random_seed"], "numpy_seed": None,
                     "pytorch_seed": None}
            return Validated(config, seeds, values["trainer"], values, what)

        request, valid = read_request(config_path, serialization_dir, ext_vars, overrides,
                                      force, recover, validate)
        return run_session(request, PretrainingAssembly(valid.parsed, init_files))


class PretrainingAssembly:
    """Pretraining's part of a session: the prepared corpus, the softmax vocabulary, the LM
    (from ``--init-from``'s biLM when given); the other splits' perplexities and the export
    of the best biLM at the end."""

    def __init__(self, values: dict[str, Any], init_files: tuple[Path, Path] | None) -> None:
        self.values = values
        self.init_files = init_files

    def assemble(self, request: SessionRequest, seed: int) -> Built:
        values, init_files, run_dir, world = (self.values, self.init_files, request.run_dir,
                                              request.world)
        self.run_dir, self.world, self.seed, self.what = run_dir, world, seed, request.what
        resuming = world.broadcast(request.recover and (run_dir / "config.json").is_file())
        # rank 0's look, before it changes anything
        self.used_sample = warn_if_sample({f"train {i}": source["path"] for i, source
                                           in enumerate(values["corpus"]["train"])})
        corpus, staged = _corpus_first(values["corpus"], run_dir, resuming, world)
        self.corpus, self.staged = corpus, staged
        try:
            check_heldout(corpus, values["corpus"])  # names the sources, not the staging
            vocab_file = self.vocab_file = run_dir / VOCAB_FILE
            saved = resuming and vocab_file.is_file()
            if saved:
                vocab = SoftmaxVocabulary.load(vocab_file)
            elif init_files and (init_files[1].parent / VOCAB_FILE).is_file():  # keep its words
                vocab = SoftmaxVocabulary.load(init_files[1].parent / VOCAB_FILE)
            else:
                vocab = SoftmaxVocabulary.from_corpus(corpus, values["corpus"]["vocab_size"],
                                                      values["corpus"]["min_count"])
            self.vocab = vocab
            check_settings(values, corpus, len(vocab), trainer_device(values["trainer"]),
                           request.source)  # before a softmax too big is built
            self.model = model = values["model"].build(vocab_size=len(vocab), seed=seed)
            if init_files:
                self.what["init_from"]["carried_over"] = parts = carried_over(vocab,
                                                                              init_files[1])
                if not (resuming and (run_dir / "last.pt").is_file()):
                    init_from(model, init_files[1], parts)
            setup = set_up(model, values["trainer"], world=world)
        except BaseException:
            if staged and world.main:
                shutil.rmtree(corpus.directory, ignore_errors=True)
            raise

        def write_first() -> None:  # the corpus and the vocabulary, before config.json
            if staged:
                os.replace(corpus.directory, run_dir / "corpus")
            if not saved:
                vocab.save(vocab_file)

        return Built(setup, write_first, keep=(corpus.directory.name,) if staged else ())

    def _loader(self, split: str, train: bool = False) -> Any:
        return sharded(LmLoader(self.corpus, split, self.vocab, self.loader_settings, self.seed,
                                train=train), self.world, train)

    def opened(self, recover: bool) -> Opened:
        if self.staged:  # rank 0 has moved it in
            self.corpus = PreparedCorpus.load(self.run_dir / "corpus")
        self.loader_settings = global_settings(self.values["data_loader"], self.world)  # batch
        # sizes are per rank
        return Opened(self._loader("train", train=True), self._loader("heldout"),
                      sha1_of(self.vocab_file))

    def conclude(self, trainer: Trainer, metrics: dict[str, Any]) -> dict[str, Any]:
        """The corpus summary, the evaluation splits' perplexities, and the export of the
        best biLM to ``<run>/bilm`` (rank 0)."""
        model, corpus = self.model, self.corpus
        model.to("cpu")
        metrics["corpus"] = read_prepared_json(corpus.directory / "summary.json")
        metrics["embedded_sample"] = self.used_sample
        if self.init_files:
            metrics["init_from"] = self.what["init_from"]
        for split in corpus.splits():
            if split not in ("train", "heldout"):
                result = evaluate(model, self._loader(split),
                                  amp=self.values["trainer"].get("amp"), world=self.world)
                metrics.update({f"{split}_{k}": v for k, v in result.items()})
        if self.world.main:
            export_bilm(model, self.vocab, self.run_dir / "bilm")
        return metrics

    def finished(self, metrics: dict[str, Any]) -> None:
        """Nothing: the export was written before ``metrics.json``."""


def export_run(run_dir: str | Path, output: str | Path, weights: str = "best.pt",
               float16: bool = False) -> Path:
    """Export a pretraining run's checkpoint (e.g. of an interrupted run) to the released layout."""
    run_dir = Path(run_dir)
    config, source = stored_config(run_dir)
    values = validate_pretrain(config, source)
    vocab = SoftmaxVocabulary.load(run_dir / VOCAB_FILE)
    model = values["model"].build(vocab_size=len(vocab), seed=0)
    load_trained(model, run_dir, weights, config, sha1_of(run_dir / VOCAB_FILE))
    return export_bilm(model, vocab, output, float16)

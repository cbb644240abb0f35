"""What the framework asks of a dataset reader and a task model, written down (docs/framework.md).

A reader must have ``fields`` (field name -> ``Field``) and ``read(path) -> list[instance]``;
it may have ``files(path)`` (the files one path stands for), ``read_report`` (why records were
dropped), and the tag schemes a tagger is built with (``label_encoding``, ``tag_scheme``).

A model must be a ``torch.nn.Module`` whose ``forward(**batch.arguments())`` returns a dict
with ``"loss"`` (a scalar tensor, when the batch has gold labels) and whose ``metrics`` lists
its streamed metrics. It may have ``human_readable(output, batch)`` (one JSON-able record per
instance; prediction needs it). Any of its modules (the model itself included) may have
``penalty()``: its own regularisation term, a tensor or None (a learned scalar mix's λ·||w||²,
ESIM's weight penalty); the trainer adds the sum of all of them to ``"loss"`` to make the
objective, so no model forwards its parts' penalties. Its modules may have ``caching`` (outputs
depend on an activation cache that a resumed run refills), ``cache`` (the ``ActivationCache``
that ``fill-cache`` fills) and ``mix_report()`` (the learned layer weights logged each epoch).

A task's serving hooks (``serve``, the spaCy tagger) are a ``TaskServing``
(``serve/task_serving.py``), registered in the ``serving`` category under the task's name.

A trainer callback subclasses ``Callback`` (below): one base class whose hooks do nothing
until overridden, with ``state_dict()``/``load_state_dict(state)`` kept in ``last.pt``.

The optional hooks are looked up here and nowhere else: the trainer, evaluation, prediction
and the cache filler call the accessors below.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import torch

from elmo_experiments.metrics.metric import DatasetMetric, Metric, UnitMetric

if TYPE_CHECKING:
    from elmo_experiments.data.batching import Batch
    from elmo_experiments.modules.embedders.activation_cache import ActivationCache

__all__ = ["Callback", "DatasetMetric", "DatasetReader", "Metric", "TaskModel", "TaskServing",
           "UnitMetric"]


# -- dataset readers ---------------------------------------------------------------------------
@runtime_checkable
class DatasetReader(Protocol):
    """Must: the fields of its instances and ``read``."""

    fields: Mapping[str, Any]

    def read(self, path: str) -> list[dict[str, Any]]: ...


@runtime_checkable
class ListsFiles(Protocol):
    """May: the files one data path stands for (a folder, a split of one), for provenance."""

    def files(self, path: str) -> list[Any]: ...


@runtime_checkable
class Reports(Protocol):
    """May: what it read and dropped (a ``ReadReport``), for the empty-split message."""

    read_report: Any


def reader_context(reader: Any) -> dict[str, str | None]:
    """The tag schemes a reader hands its model's builder: the training scheme
    (``label_encoding``) and the file's own (``data_encoding``, the reader's ``tag_scheme``);
    None where the reader has none."""
    return {"label_encoding": getattr(reader, "label_encoding", None),
            "data_encoding": getattr(reader, "tag_scheme", None)}


def read_report(reader: Any) -> Any:
    """The reader's ``read_report``, or None."""
    return reader.read_report if isinstance(reader, Reports) else None


# -- token embedders --------------------------------------------------------------------------
@runtime_checkable
class ExtraRepresentations(Protocol):
    """A token embedder that also gives representations for further placements (ELMo at a
    layer's output): their total width."""

    extra_dim: int


def extra_dim(embedder: Any) -> int:
    """The total width of an embedder's further representations; 0 when it has none."""
    return int(embedder.extra_dim) if isinstance(embedder, ExtraRepresentations) else 0


# -- task models -------------------------------------------------------------------------------
@runtime_checkable
class TaskModel(Protocol):
    """Must: ``forward(**batch) -> {"loss": tensor, ...}`` (a ``torch.nn.Module``) and its
    streamed ``metrics``."""

    metrics: list[Metric]

    def __call__(self, **batch: Any) -> dict[str, Any]: ...


@runtime_checkable
class HumanReadable(Protocol):
    """May: one JSON-able record per instance of a batch (prediction, ``evaluate --output``)."""

    def human_readable(self, output: dict[str, Any], batch: Batch) -> list[dict[str, Any]]: ...


@runtime_checkable
class Penalising(Protocol):
    """May: a module's own regularisation term (None: none at present); the trainer sums them
    over the model's modules (``regularization_penalty``)."""

    def penalty(self) -> torch.Tensor | None: ...


@runtime_checkable
class Caching(Protocol):
    """A module whose outputs depend on what earlier batches left in a cache."""

    caching: bool


@runtime_checkable
class HasCache(Protocol):
    """A frozen encoder with an activation cache (None when it has none), for ``fill-cache``."""

    cache: ActivationCache | None


@runtime_checkable
class MixReporting(Protocol):
    """A module with learned scalar mixes: their weights and γ; it may say whether its first
    mix joins the input (``at_input``, default true)."""

    def mix_report(self) -> list[dict[str, Any]]: ...


def regularization_penalty(model: torch.nn.Module) -> torch.Tensor | None:
    """The sum of every module's own ``penalty()`` (``Penalising``), the model's own last
    (its parts' terms, then its own), or None when none has one."""
    own = [model] if isinstance(model, Penalising) else []
    parts = [m for m in model.modules() if m is not model and isinstance(m, Penalising)]
    penalties = [p for p in (m.penalty() for m in [*parts, *own]) if p is not None]
    return sum(penalties) if penalties else None


def objective(model: Any, output: dict[str, Any]) -> torch.Tensor:
    """The per-batch objective in fp32: the model's ``loss`` plus its regularisation penalty
    (added as the models once added it themselves, so every figure is as it was)."""
    loss = output["loss"]
    penalty = regularization_penalty(model)
    return (loss if penalty is None else loss + penalty).float()


def human_readable(model: Any, output: dict[str, Any], batch: Batch) -> list[dict[str, Any]]:
    """The model's records of a batch; a ``TypeError`` when it cannot make them."""
    if not isinstance(model, HumanReadable):
        raise TypeError(f"{type(model).__name__} has no human_readable(output, batch): it "
                        f"cannot write predictions")
    return model.human_readable(output, batch)


def caches_in_use(model: torch.nn.Module) -> bool:
    """Whether any module's outputs depend on a cache that a resumed run must refill."""
    return any(isinstance(module, Caching) and module.caching for module in model.modules())


def activation_caches(model: torch.nn.Module) -> list[ActivationCache]:
    """The activation caches of a model's frozen encoders (elmo, transformer embedders)."""
    from elmo_experiments.modules.embedders.activation_cache import ActivationCache

    return [module.cache for module in model.modules()
            if isinstance(module, HasCache) and isinstance(module.cache, ActivationCache)]


def mix_reports(model: torch.nn.Module) -> dict[str, list[dict[str, Any]]]:
    """Normalised layer weights and γ of every scalar mix in ``model``, by module name."""
    return {name: module.mix_report() for name, module in model.named_modules()
            if isinstance(module, MixReporting)}


def mix_placements(model: torch.nn.Module) -> dict[str, bool]:
    """Whether each scalar-mix owner's first mix is at the input (``at_input``), by name."""
    return {name: bool(getattr(module, "at_input", True)) for name, module in model.named_modules()
            if isinstance(module, MixReporting)}


# -- task serving ------------------------------------------------------------------------------
# item, its error prefix ("instances[2]." or ""), the request's limits (serve/task_serving.py's
# Limits), the run's reader -> instances
Instances = Callable[[dict[str, Any], str, Any, Any], list[dict[str, Any]]]


@dataclass(frozen=True)
class TaskServing:
    """One task's serving hooks (registered in the ``serving`` category under the task's name).

    - ``model_types``: the ``model.type``s of the task's configs (a served model of one of
      these types is this task's).
    - ``inputs``: what one input holds besides raw instance fields (``/models`` shows it).
    - ``instances(item, where, limits, reader)``: the reader's instances for one request item
      (errors: ``RequestError`` naming ``where`` + the field).
    - ``enrich(record, instance)``: the record ``elmo-exp predict`` writes plus what display
      needs (default: unchanged).
    - ``finish(item, records)``: the records kept for one item (default: all).
    - ``texts``: whether a text alone is an input (``{"texts": [...]}``); GAP's needs more.
    - ``doc_items(doc)``: for the spaCy ``elmo_tagger``: the request items of one ``Doc``, each
      with the doc token indices its tokens stand for; ``annotate(doc, parts)`` sets the
      ``Doc``'s annotations from ``[(token indices, records), ...]`` (called for every doc,
      with no parts too). A task without them cannot be an ``elmo_tagger``.
    """

    model_types: tuple[str, ...]
    inputs: str
    instances: Instances
    enrich: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]] | None = None
    finish: Callable[[dict[str, Any], list[dict[str, Any]]], list[dict[str, Any]]] | None = None
    doc_items: Callable[[Any], list[tuple[dict[str, Any], list[int]]]] | None = None
    annotate: Callable[[Any, list[tuple[list[int], list[dict[str, Any]]]]], None] | None = None
    texts: bool = True


# -- trainer callbacks ------------------------------------------------------------------------
class Callback:
    """What the trainer tells a callback: subclass it and override the hooks you need (each
    does nothing here). ``state_dict``/``load_state_dict`` keep a callback's state in
    ``last.pt`` (plain values and tensors: it is loaded with ``weights_only``), so a resumed
    run's callback continues where it was; ``epoch_record`` adds entries to each epoch's record
    (``metrics_epoch_N.json``, the best epoch's into ``metrics.json``) before it is written."""

    def on_start(self, run_dir: Path, config: dict[str, Any]) -> None:
        """The run starts (or resumes) in ``run_dir`` with the resolved ``config``."""

    def set_batches_per_epoch(self, count: int) -> None:
        """Before training: the batches of an epoch (to number batches run-wide)."""

    def on_batch(self, epoch: int, batch: int, logs: dict[str, float]) -> None:
        """After each training batch: the running training figures."""

    def on_before_backward(self, epoch: int, batch: int, loss: torch.Tensor) -> None:
        """The batch's objective (fp32, unscaled), before its backward pass."""

    def on_after_backward(self, epoch: int, batch: int) -> None:
        """After a batch's backward pass (its gradients added to the step's)."""

    def on_before_optimizer_step(self, epoch: int, batch: int,
                                 optimizer: torch.optim.Optimizer) -> None:
        """Before the optimizer steps (gradients summed, clipped and finite)."""

    def on_after_optimizer_step(self, epoch: int, batch: int,
                                optimizer: torch.optim.Optimizer) -> None:
        """After the optimizer stepped (under fp16, a step the loss scaler skipped for an
        overflow counts: the batches are reported skipped)."""

    def epoch_record(self, epoch: int) -> dict[str, Any]:
        """Entries to add to epoch ``epoch``'s record (1-based), e.g. the learned mixes."""
        return {}

    def on_epoch(self, epoch: int, metrics: dict[str, Any]) -> None:
        """After each epoch: its record, as written to ``metrics_epoch_N.json``."""

    def on_end(self, metrics: dict[str, Any]) -> None:
        """The run finished: ``metrics.json``'s content."""

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Take back what ``state_dict`` gave (a resumed run)."""

    @property
    def stateful(self) -> bool:
        """Whether the callback keeps state (it overrides ``state_dict``)."""
        return type(self).state_dict is not Callback.state_dict

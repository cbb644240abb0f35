"""Training speed of our task models beside allennlp-models 2.10.1's, on the same batches.

    bash benchmarks/allennlp_env.sh
    ELMO_DATA_DIR=/path/to/data .venv-allennlp/bin/python benchmarks/bench_allennlp.py \
        [--tasks ner snli] [--steps 6] [--out FILE.json]

For each task, our side is the task's baseline config at ELMO_SIZE=cpu, built and trained as
benchmarks/bench_tasks.py builds and trains it (``prepare``, ``train_step``). The AllenNLP side is
the allennlp-models model of the same task (ner: ``crf_tagger``, sst5: ``bcn``, snli: ``esim``,
squad: ``bidaf``, srl: ``srl`` with the ``alternating_lstm`` encoder of He et al., coref:
``coref``), built with ``Model.from_params`` at the sizes our config gives (no ELMo, no pretrained
vectors: random embeddings of the same dimensions over a vocabulary of the same entries), and fed
the same examples: each of our batches' instances goes through AllenNLP's own
``text_to_instance`` (or instance-making function) and AllenNLP's ``Batch``, so both sides see
the same sentences grouped the same way. The AllenNLP optimizer is AllenNLP's own (its ``adam`` or
``adadelta``, as our config names, with our hyperparameters); the gradient clipping is ours.
AllenNLP's ``adam`` is torch's Adam as it runs by default on the CPU (a loop over the tensors),
ours is fused: the table's optimizer column says so, and on the Adam tasks part of the
speed-up is that.

What is timed is the training pass alone: one step is forward (loss, plus the regularization
penalty where there is one), backward, clipping, optimizer step; no data reading, no indexing,
no metrics read-out. After 2 warm-up steps on each side, the steps run in interleaved pairs
(ours on batch k, theirs on batch k; the order flips every pair), each timed in process CPU
time and wall time, at one thread. The speed-up is their time over ours (above 1: ours is
faster). Run it on a quiet machine and read the CPU time; on a shared one, wall time drifts.

Where the AllenNLP model cannot be built at our sizes, the row says "not measured" and why;
where it can only be built with a different architecture (squad, coref), the notes say how.
Not a test.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time
import traceback
import types
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from bench_tasks import Setup, prepare, train_step

ROOT = Path(__file__).resolve().parent.parent
TASKS = ("ner", "sst5", "snli", "squad", "srl", "coref")
WARM_STEPS = 2
# our optimizer's hyperparameters that AllenNLP's optimizer of the same kind takes
OPTIMIZER_KEYS = {"adam": ("lr", "betas", "eps", "weight_decay", "amsgrad"),
                  "adadelta": ("lr", "rho", "eps", "weight_decay")}


class NotMeasured(Exception):
    """The AllenNLP side of a task cannot be built to match ours."""


def import_allennlp() -> str:
    """Import allennlp and the allennlp-models packages of our tasks (registering their models
    and readers); their version.

    Compatibility shim: ``allennlp.data`` imports torchvision at module level, for an image
    loader no text model uses, and no torchvision that imports beside CPU torch 2.13 is on PyPI
    (allennlp 2.10.1 wants torch<1.13 and a matching torchvision). Where none is installed, an
    empty module stands in for it. transformers is imported first: it probes for torchvision
    when imported and must see it absent. Nothing in site-packages is changed."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # fairscale on newer torch
        import transformers  # noqa: F401

        if importlib.util.find_spec("torchvision") is None:
            sys.modules["torchvision"] = types.ModuleType("torchvision")
        import allennlp_models.classification
        import allennlp_models.coref
        import allennlp_models.pair_classification
        import allennlp_models.rc
        import allennlp_models.structured_prediction
        import allennlp_models.tagging  # noqa: F401
        from allennlp.version import VERSION
    return VERSION


@dataclass
class Counterpart:
    """The AllenNLP model of one task: its ``from_params`` config, a short account of the sizes
    it was built with, and where its architecture differs from ours."""

    params: dict[str, Any]
    sizes: str
    notes: str = ""


# ---- the AllenNLP model configs, from our resolved experiment config ---------------------


def text_embedder(embedders: dict[str, Any]) -> tuple[dict[str, Any], int, str]:
    """AllenNLP's embedder for our token embedders (trainable random word embeddings, a
    character CNN), its output size and a summary."""
    out: dict[str, Any] = {}
    width, parts = 0, []
    for name, spec in embedders.items():
        if spec["type"] == "embedding":
            out[name] = {"type": "embedding", "embedding_dim": spec["embedding_dim"],
                         "trainable": spec.get("trainable", True), "vocab_namespace": name}
            width += spec["embedding_dim"]
            parts.append(f"word {spec['embedding_dim']}")
        elif spec["type"] == "character_encoding":
            filters = spec["num_filters"] * len(spec["ngram_filter_sizes"])
            out[name] = {
                "type": "character_encoding",
                "embedding": {"embedding_dim": spec["embedding_dim"], "vocab_namespace": name},
                "encoder": {"type": "cnn", "embedding_dim": spec["embedding_dim"],
                            "num_filters": spec["num_filters"],
                            "ngram_filter_sizes": spec["ngram_filter_sizes"],
                            "conv_layer_activation": spec.get("activation", "relu")},
            }
            width += filters
            parts.append(f"char CNN {spec['embedding_dim']}->{filters}")
        else:
            raise NotMeasured(f"token embedder {spec['type']!r} has no counterpart here")
    return {"token_embedders": out}, width, " + ".join(parts)


def rnn_encoder(spec: dict[str, Any], input_size: int) -> tuple[dict[str, Any], int]:
    """AllenNLP's encoder for one of our (bi)LSTM/GRU stacks and its output size: one PyTorch
    RNN when every layer has the same size, else one a layer, composed."""
    if spec["type"] not in ("lstm", "gru"):
        raise NotMeasured(f"encoder {spec['type']!r} has no counterpart here")
    sizes = spec["hidden_sizes"]
    directions = 2 if spec.get("bidirectional", True) else 1
    layer = {"type": spec["type"], "bidirectional": directions == 2}
    if len(set(sizes)) == 1:
        dropout = spec.get("input_dropout", 0.0) if len(sizes) > 1 else 0.0
        return ({**layer, "input_size": input_size, "hidden_size": sizes[0],
                 "num_layers": len(sizes), "dropout": dropout}, directions * sizes[0])
    layers = []
    for size in sizes:
        layers.append({**layer, "input_size": input_size, "hidden_size": size})
        input_size = directions * size
    return {"type": "compose", "encoders": layers}, input_size


def feedforward(input_dim: int, dims: list[int], activations: list[str],
                dropout: list[float] | float = 0.0) -> dict[str, Any]:
    return {"input_dim": input_dim, "num_layers": len(dims), "hidden_dims": dims,
            "activations": activations, "dropout": dropout}


def hidden(spec: dict[str, Any]) -> str:
    """'BiLSTM 200/100' for an encoder spec."""
    kind = "Bi" if spec.get("bidirectional", True) else ""
    return f"{kind}{spec['type'].upper()} {'/'.join(map(str, spec['hidden_sizes']))}"


def ner_model(config: dict[str, Any], vocab: Any) -> Counterpart:
    model = config["model"]
    embedder, width, words = text_embedder(model["token_embedders"])
    encoder, _ = rnn_encoder(model["encoder"], width)
    params = {"type": "crf_tagger", "text_field_embedder": embedder, "encoder": encoder,
              "label_encoding": config["dataset_reader"].get("coding_scheme", "BIOUL"),
              "constrain_crf_decoding": model.get("constrain_crf_decoding", True),
              "dropout": model.get("dropout", 0.0)}
    return Counterpart(params, f"{words}; {hidden(model['encoder'])}; CRF")


def sst5_model(config: dict[str, Any], vocab: Any) -> Counterpart:
    model = config["model"]
    embedder, width, words = text_embedder(model["token_embedders"])
    pre = model["pre_encode_dim"]
    encoder, encoded = rnn_encoder(model["encoder"], pre)
    integrator, integrated = rnn_encoder(model["integrator"], 3 * encoded)
    labels = vocab.get_vocab_size("labels")
    dims = model["output_dims"]
    params = {
        "type": "bcn", "text_field_embedder": embedder,
        "embedding_dropout": model["embedding_dropout"],
        "pre_encode_feedforward": feedforward(width, [pre], ["relu"],
                                              [model["pre_encode_dropout"]]),
        "encoder": encoder, "integrator": integrator,
        "integrator_dropout": model["integrator_dropout"],
        "output_layer": feedforward(4 * integrated, [*dims, labels],
                                    ["relu"] * len(dims) + ["linear"],
                                    [*model["output_dropout"], 0.0]),
    }
    return Counterpart(params, f"{words}; pre-encode {pre}; {hidden(model['encoder'])}; "
                               f"integrator {hidden(model['integrator'])}; output {dims}")


def snli_model(config: dict[str, Any], vocab: Any) -> Counterpart:
    model = config["model"]
    embedder, width, words = text_embedder(model["token_embedders"])
    encoder, encoded = rnn_encoder(model["encoder"], width)
    projection = model["projection_dim"]
    inference, inferred = rnn_encoder(model["inference_encoder"], projection)
    output = model["output_dim"]
    params = {
        "type": "esim", "text_field_embedder": embedder, "encoder": encoder,
        "matrix_attention": {"type": "dot_product"},
        "projection_feedforward": feedforward(4 * encoded, [projection], ["relu"]),
        "inference_encoder": inference,
        "output_feedforward": feedforward(4 * inferred, [output], ["relu"],
                                          model.get("dropout", 0.5)),
        "output_logit": feedforward(output, [vocab.get_vocab_size("labels")], ["linear"]),
        "dropout": model.get("dropout", 0.5),
    }
    return Counterpart(params, f"{words}; {hidden(model['encoder'])}; projection {projection}; "
                               f"inference {hidden(model['inference_encoder'])}; "
                               f"output {output}")


def squad_model(config: dict[str, Any], vocab: Any) -> Counterpart:
    model = config["model"]
    embedder, width, words = text_embedder(model["token_embedders"])
    phrase, encoded = rnn_encoder(model["phrase_encoder"], width)
    modeling, modeled = rnn_encoder(model["modeling_encoder"], 4 * encoded)
    span_end, _ = rnn_encoder(model["span_end_encoder"], 4 * encoded + 3 * modeled)
    params = {
        "type": "bidaf", "text_field_embedder": embedder,
        "num_highway_layers": model.get("highway_layers", 2), "phrase_layer": phrase,
        "matrix_attention": {"type": "linear", "tensor_1_dim": encoded,
                             "tensor_2_dim": encoded, "combination": "x,y,x*y"},
        "modeling_layer": modeling, "span_end_encoder": span_end,
        "dropout": model.get("dropout", 0.2),
    }
    notes = ("architecture differs: AllenNLP's bidaf has no self-attention block and no "
             f"attention projection ({4 * encoded}->{model.get('attention_projection_dim')}), "
             f"so its modeling GRU reads {4 * encoded} inputs and its span-end GRU "
             f"{4 * encoded + 3 * modeled} (ours: {model.get('attention_projection_dim')} and "
             f"{2 * modeled})") if "self_attention" in model else ""
    return Counterpart(params, f"{words}; highway {params['num_highway_layers']}; phrase "
                               f"{hidden(model['phrase_encoder'])}; modeling "
                               f"{hidden(model['modeling_encoder'])}; span end "
                               f"{hidden(model['span_end_encoder'])}", notes)


def srl_model(config: dict[str, Any], vocab: Any) -> Counterpart:
    model = config["model"]
    embedder, width, words = text_embedder(model["token_embedders"])
    spec = model["encoder"]
    if spec["type"] != "alternating_lstm":
        raise NotMeasured(f"encoder {spec['type']!r}: only alternating_lstm has a counterpart")
    predicate = model["predicate_embedding_dim"]
    params = {
        "type": "srl", "text_field_embedder": embedder, "binary_feature_dim": predicate,
        "encoder": {"type": "alternating_lstm", "input_size": width + predicate,
                    "hidden_size": spec["hidden_size"], "num_layers": spec["num_layers"],
                    "recurrent_dropout_probability": spec.get("recurrent_dropout", 0.0),
                    "use_highway": True, "use_input_projection_bias": False},
        "embedding_dropout": model.get("dropout", 0.0),
    }
    return Counterpart(params, f"{words}; predicate {predicate}; alternating highway LSTM "
                               f"{spec['num_layers']} x {spec['hidden_size']}")


def coref_model(config: dict[str, Any], vocab: Any) -> Counterpart:
    model = config["model"]
    embedder, width, words = text_embedder(model["token_embedders"])
    context, encoded = rnn_encoder(model["context_encoder"], width)
    feature = model["feature_size"]
    span = 2 * encoded + feature + width  # endpoints, width embedding, attended tokens
    dims = model["feedforward_dims"]
    dropout = model.get("dropout", 0.2)
    params = {
        "type": "coref", "text_field_embedder": embedder, "context_layer": context,
        "mention_feedforward": feedforward(span, dims, ["relu"] * len(dims), dropout),
        "antecedent_feedforward": feedforward(3 * span + feature, dims, ["relu"] * len(dims),
                                              dropout),
        "feature_size": feature, "max_span_width": model["max_span_width"],
        "spans_per_word": model["spans_per_word"], "max_antecedents": model["max_antecedents"],
        "lexical_dropout": model.get("lexical_dropout", 0.2),
    }
    notes = ("architecture differs: AllenNLP's coref runs its LSTM over the whole window as one "
             "sequence (ours: sentence by sentence) and has no speaker or genre features (its "
             f"antecedent scorer reads {3 * span + feature} inputs, ours {3 * span + 3 * feature})")
    return Counterpart(params, f"{words}; {hidden(model['context_encoder'])}; span {span}; "
                               f"FFNN {dims}; width <= {model['max_span_width']}, "
                               f"{model['spans_per_word']} spans a word, "
                               f"{model['max_antecedents']} antecedents", notes)


MODELS: dict[str, Callable[[dict[str, Any], Any], Counterpart]] = {
    "ner": ner_model, "sst5": sst5_model, "snli": snli_model,
    "squad": squad_model, "srl": srl_model, "coref": coref_model,
}


# ---- the same examples as AllenNLP instances ------------------------------------------------


def token_indexers(specs: dict[str, Any]) -> dict[str, Any]:
    """AllenNLP's token indexers for our reader's (same namespaces, same lowercasing)."""
    from allennlp.data.token_indexers import SingleIdTokenIndexer, TokenCharactersIndexer

    out: dict[str, Any] = {}
    for name, spec in specs.items():
        if spec["type"] == "single_id":
            out[name] = SingleIdTokenIndexer(namespace=name,
                                             lowercase_tokens=spec.get("lowercase_tokens", False))
        elif spec["type"] == "characters":
            out[name] = TokenCharactersIndexer(namespace=name,
                                               min_padding_length=spec.get("min_padding_length", 0))
        else:
            raise NotMeasured(f"token indexer {spec['type']!r} has no counterpart here")
    return out


def tokens(words: list[str]) -> list[Any]:
    from allennlp.data.tokenizers import Token

    return [Token(word) for word in words]


def read(reader: Any, instance: Any) -> Any:
    """``instance`` with ``reader``'s token indexers set (AllenNLP 2 sets them apart)."""
    reader.apply_token_indexers(instance)
    return instance


def ner_instances(examples: list[dict[str, Any]], indexers: dict[str, Any],
                  model: dict[str, Any]) -> list[Any]:
    from allennlp.data.dataset_readers import Conll2003DatasetReader

    # our reader has already recoded the tags (BIOUL): AllenNLP's reader takes them as they are
    reader = Conll2003DatasetReader(token_indexers=indexers, tag_label="ner")
    return [read(reader, reader.text_to_instance(tokens(e["tokens"]), ner_tags=e["tags"]))
            for e in examples]


def sst5_instances(examples: list[dict[str, Any]], indexers: dict[str, Any],
                   model: dict[str, Any]) -> list[Any]:
    from allennlp_models.classification.dataset_readers.stanford_sentiment_tree_bank import (
        StanfordSentimentTreeBankDatasetReader,
    )

    reader = StanfordSentimentTreeBankDatasetReader(token_indexers=indexers)
    return [read(reader, reader.text_to_instance(e["tokens"], e["label"])) for e in examples]


def snli_instances(examples: list[dict[str, Any]], indexers: dict[str, Any],
                   model: dict[str, Any]) -> list[Any]:
    from allennlp.data.tokenizers import WhitespaceTokenizer
    from allennlp_models.pair_classification.dataset_readers.snli import SnliReader

    # our reader's tokens, joined and split again (AllenNLP's reader takes strings)
    reader = SnliReader(tokenizer=WhitespaceTokenizer(), token_indexers=indexers)
    return [read(reader, reader.text_to_instance(" ".join(e["premise"]),
                                                 " ".join(e["hypothesis"]), e["label"]))
            for e in examples]


def squad_instances(examples: list[dict[str, Any]], indexers: dict[str, Any],
                    model: dict[str, Any]) -> list[Any]:
    from allennlp.data.tokenizers import Token
    from allennlp_models.rc.dataset_readers.utils import make_reading_comprehension_instance

    out = []
    for e in examples:
        passage = [Token(word, idx=start) for word, (start, _) in zip(e["passage"], e["offsets"],
                                                                        strict=True)]
        out.append(make_reading_comprehension_instance(
            tokens(e["question"]), passage, indexers, e["passage_text"],
            token_spans=[tuple(e["answer"])], answer_texts=e["answers"]))
    return out


def srl_instances(examples: list[dict[str, Any]], indexers: dict[str, Any],
                  model: dict[str, Any]) -> list[Any]:
    from allennlp_models.structured_prediction.dataset_readers.srl import SrlReader

    reader = SrlReader(token_indexers=indexers)
    return [read(reader, reader.text_to_instance(tokens(e["tokens"]), e["predicate"], e["tags"]))
            for e in examples]


def coref_instances(examples: list[dict[str, Any]], indexers: dict[str, Any],
                    model: dict[str, Any]) -> list[Any]:
    from allennlp_models.coref.util import make_coref_instance

    # the clusters our reader kept (it decides about singletons), as spans of the window
    return [make_coref_instance(e["document"], indexers, model["max_span_width"],
                                [[tuple(span) for span in cluster] for cluster in e["clusters"]],
                                remove_singleton_clusters=False) for e in examples]


INSTANCES: dict[str, Callable[[list[dict[str, Any]], dict[str, Any], dict[str, Any]],
                              list[Any]]] = {
    "ner": ner_instances, "sst5": sst5_instances, "snli": snli_instances,
    "squad": squad_instances, "srl": srl_instances, "coref": coref_instances,
}


def allennlp_vocabulary(ours: Any) -> Any:
    """An AllenNLP vocabulary of exactly our entries, at the same ids (both put padding and OOV
    first in token namespaces, and neither in label namespaces)."""
    from allennlp.data import Vocabulary

    from elmo_experiments.data.vocabulary import is_padded

    vocab = Vocabulary()
    for namespace in ours.namespaces():
        entries = ours.tokens(namespace)
        vocab.add_tokens_to_namespace(entries[2:] if is_padded(namespace) else entries,
                                      namespace)
        if vocab.get_token_to_index_vocabulary(namespace) != {t: i for i, t in
                                                               enumerate(entries)}:
            raise NotMeasured(f"vocabulary namespace {namespace!r} does not map alike")
    return vocab


def word_count(tensors: dict[str, Any]) -> int:
    """The non-padding word ids of an AllenNLP tensor dict's text fields (each field's
    ``{"tokens": {"tokens": ids}}``), as our ``Batch.num_tokens`` counts them."""
    total = 0
    for value in tensors.values():
        if isinstance(value, dict) and "tokens" in value:
            total += int((value["tokens"]["tokens"] != 0).sum())
    return total


def allennlp_batches(task: str, batches: list[Any], config: dict[str, Any],
                     vocab: Any) -> list[dict[str, Any]]:
    """Our batches' instances as AllenNLP tensor dicts, batch for batch."""
    from allennlp.data import Batch as AllennlpBatch

    indexers = token_indexers(config["dataset_reader"]["token_indexers"])
    out = []
    for batch in batches:
        instances = INSTANCES[task](batch.metadata, indexers, config["model"])
        allennlp_batch = AllennlpBatch(instances)
        allennlp_batch.index_instances(vocab)
        out.append(allennlp_batch.as_tensor_dict())
    return out


# ---- the two training steps -------------------------------------------------------------


@dataclass
class TheirSide:
    """The AllenNLP model, its optimizer and the tensor dicts of our batches."""

    model: Any
    optimizer: torch.optim.Optimizer
    batches: list[dict[str, Any]]
    parameters: int


def clip(parameters: list[torch.Tensor], settings: dict[str, Any]) -> None:
    """Our trainer's clipping (``bench_tasks.train_step``)."""
    if settings["grad_clipping"] is not None:
        torch.nn.utils.clip_grad_value_(parameters, settings["grad_clipping"])
    if settings["grad_norm"] is not None:
        torch.nn.utils.clip_grad_norm_(parameters, settings["grad_norm"])


def their_step(side: TheirSide, tensors: dict[str, Any], settings: dict[str, Any]) -> float:
    """One AllenNLP training step: forward (loss plus the model's regularization penalty, as
    AllenNLP's trainer adds it), backward, our clipping, AllenNLP's optimizer's step."""
    side.optimizer.zero_grad(set_to_none=True)
    loss = side.model(**tensors)["loss"]
    penalty = side.model.get_regularization_penalty()
    if penalty is not None:
        loss = loss + penalty
    loss.backward()
    clip([p for p in side.model.parameters() if p.grad is not None], settings)
    side.optimizer.step()
    return float(loss.detach())


def their_optimizer(model: Any, ours: torch.optim.Optimizer, kind: str) -> Any:
    """AllenNLP's optimizer of our kind (``adam``, ``adadelta``) with our hyperparameters."""
    from allennlp.common import Params
    from allennlp.training.optimizers import Optimizer

    if kind not in OPTIMIZER_KEYS:
        raise NotMeasured(f"optimizer {kind!r} has no counterpart here")
    settings = {key: ours.defaults[key] for key in OPTIMIZER_KEYS[kind] if key in ours.defaults}
    named = [(name, p) for name, p in model.named_parameters() if p.requires_grad]
    return Optimizer.from_params(model_parameters=named, params=Params({"type": kind,
                                                                        **settings}))


def build_their_side(task: str, ours: Setup, our_vocab: Any,
                     config: dict[str, Any]) -> tuple[TheirSide, Counterpart]:
    from allennlp.common import Params
    from allennlp.models import Model

    vocab = allennlp_vocabulary(our_vocab)
    counterpart = MODELS[task](config, vocab)
    model = Model.from_params(vocab=vocab, params=Params(copy.deepcopy(counterpart.params)))
    model.train()
    optimizer = their_optimizer(model, ours.optimizer, config["trainer"]["optimizer"]["type"])
    batches = allennlp_batches(task, ours.batches, config, vocab)
    trained = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return TheirSide(model, optimizer, batches, trained), counterpart


# ---- measuring ----------------------------------------------------------------------------


@contextlib.contextmanager
def recorded_vocabularies() -> Iterator[list[Any]]:
    """The vocabularies built meanwhile: ``prepare`` keeps its own to itself, so
    elmo_experiments.run.training_vocabulary is wrapped, for the duration, to record them."""
    import elmo_experiments.run as run

    built: list[Any] = []
    original = run.training_vocabulary

    def recording(*args: Any, **kwargs: Any) -> Any:
        built.append(original(*args, **kwargs))
        return built[-1]

    run.training_vocabulary = recording
    try:
        yield built
    finally:
        run.training_vocabulary = original


def timed(step: Callable[[], Any]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one call."""
    cpu, wall = time.process_time(), time.perf_counter()
    step()
    return time.process_time() - cpu, time.perf_counter() - wall


def race(ours: Callable[[int], Any], theirs: Callable[[int], Any],
         pairs: int) -> dict[str, list[float]]:
    """Warm-up steps, then ``pairs`` interleaved timed pairs on batches WARM_STEPS, ...; the
    order within a pair flips every pair."""
    for k in range(WARM_STEPS):
        ours(k)
        theirs(k)
    samples: dict[str, list[float]] = {f"{side}_{clock}": [] for side in ("ours", "theirs")
                                       for clock in ("cpu", "wall")}
    for k in range(WARM_STEPS, WARM_STEPS + pairs):
        sides = [("ours", ours), ("theirs", theirs)]
        for side, step in sides if k % 2 == 0 else reversed(sides):
            cpu, wall = timed(lambda step=step, k=k: step(k))
            samples[f"{side}_cpu"].append(cpu)
            samples[f"{side}_wall"].append(wall)
    return samples


def implementation(optimizer: torch.optim.Optimizer) -> str:
    """'Adam, fused': the torch optimizer class beneath and how its step runs on the CPU."""
    base = next(c for c in type(optimizer).__mro__ if c.__module__.startswith("torch.optim"))
    defaults = optimizer.defaults
    mode = ("fused" if defaults.get("fused") else "foreach" if defaults.get("foreach")
            else "per tensor")
    return f"{base.__name__}, {mode}"


def ms(values: list[float]) -> float:
    return round(1000 * statistics.mean(values), 1)


def measure(task: str, steps: int) -> dict[str, Any]:
    """One task's row (see the module's docstring)."""
    from elmo_experiments.config.loader import load_config

    with recorded_vocabularies() as vocabularies:
        ours = prepare(task, "cpu", steps + WARM_STEPS)
    config = load_config(f"experiments/{task}_baseline.jsonnet", {"ELMO_SIZE": "cpu"}, [])
    pairs = len(ours.batches) - WARM_STEPS
    if pairs < 1:
        raise NotMeasured(f"{len(ours.batches)} training batches, too few to warm up and time")
    theirs, counterpart = build_their_side(task, ours, vocabularies[-1], config)
    settings = ours.settings
    samples = race(lambda k: train_step(ours, ours.batches[k]),
                   lambda k: their_step(theirs, theirs.batches[k], settings), pairs)
    timed_batches = range(WARM_STEPS, WARM_STEPS + pairs)
    our_words = [ours.batches[k].num_tokens for k in timed_batches]
    their_words = [word_count(theirs.batches[k]) for k in timed_batches]
    return {
        "task": task, "allennlp_model": counterpart.params["type"], "status": "measured",
        "batch_size": len(ours.batches[WARM_STEPS]), "pairs": pairs,
        "ours_cpu_ms": ms(samples["ours_cpu"]), "theirs_cpu_ms": ms(samples["theirs_cpu"]),
        "speedup_cpu": round(sum(samples["theirs_cpu"]) / sum(samples["ours_cpu"]), 2),
        "ours_wall_ms": ms(samples["ours_wall"]), "theirs_wall_ms": ms(samples["theirs_wall"]),
        "speedup_wall": round(sum(samples["theirs_wall"]) / sum(samples["ours_wall"]), 2),
        "parameters": {"ours": ours.parameters, "theirs": theirs.parameters},
        "words_a_batch": {"ours": round(statistics.mean(our_words)),
                          "theirs": round(statistics.mean(their_words))},
        "optimizer": {"kind": config["trainer"]["optimizer"]["type"],
                      "ours": implementation(ours.optimizer),
                      "theirs": implementation(theirs.optimizer)},
        "sizes": counterpart.sizes, "notes": counterpart.notes,
        "allennlp_config": counterpart.params, "samples_s": samples,
    }


def measure_or_explain(task: str, steps: int) -> dict[str, Any]:
    """``measure``, or a row saying why the task was not measured (the traceback on stderr)."""
    try:
        return measure(task, steps)
    except NotMeasured as error:
        return {"task": task, "status": f"not measured: {error}"}
    except Exception as error:  # any failure to build or run a side is reported, not hidden
        traceback.print_exc()
        reason = " ".join(str(error).split())  # one line, for the table
        return {"task": task, "status": f"not measured: {type(error).__name__}: {reason}"}


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| task | AllenNLP model | batch | pairs | ours CPU ms | theirs CPU ms | speed-up "
             "(CPU) | ours wall ms | theirs wall ms | speed-up (wall) | parameters ours / "
             "theirs | optimizer ours / theirs | sizes | notes |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["status"] != "measured":
            lines.append(f"| {r['task']} | {r['status']} |" + " |" * 12)
            continue
        p, o = r["parameters"], r["optimizer"]
        lines.append(
            f"| {r['task']} | {r['allennlp_model']} | {r['batch_size']} | {r['pairs']} | "
            f"{r['ours_cpu_ms']:,.0f} | {r['theirs_cpu_ms']:,.0f} | {r['speedup_cpu']:.2f}x | "
            f"{r['ours_wall_ms']:,.0f} | {r['theirs_wall_ms']:,.0f} | "
            f"{r['speedup_wall']:.2f}x | {p['ours']:,} / {p['theirs']:,} | {o['ours']} / "
            f"{o['theirs']} | {r['sizes']} | {r['notes']} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), choices=TASKS)
    parser.add_argument("--steps", type=int, default=6,
                        help="timed pairs (after 2 warm-up steps a side)")
    parser.add_argument("--out", default=None, help="also write the rows here as JSON")
    args = parser.parse_args()
    out = Path(args.out).resolve() if args.out else None
    os.chdir(ROOT)  # the configs are named relative to the repository's root
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    os.environ.pop("ELMO_WEIGHTS", None)
    version = import_allennlp()
    data = "the data sets under ELMO_DATA_DIR" if os.environ.get("ELMO_DATA_DIR") else \
        "the embedded samples"
    print(f"1 thread; torch {torch.__version__}, allennlp {version}; data: {data}", flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as cache:
        os.environ.setdefault("ELMO_CACHE_DIR", cache)
        for task in args.tasks:
            row = measure_or_explain(task, args.steps)
            rows.append(row)
            print(json.dumps({k: v for k, v in row.items()
                              if k not in ("allennlp_config", "samples_s")}), flush=True)
    print()
    print(table(rows))
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"torch": torch.__version__, "allennlp": version,
                                   "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()

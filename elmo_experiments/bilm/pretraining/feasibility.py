"""Settings that cannot work on a corpus and device, found before anything is built: a softmax
that does not fit in memory, or a token cap per batch below the corpus's longest sentence. Real
runs (``run.py``) and ``--dry-run`` both check them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import torch

from elmo_experiments.bilm.pretraining.corpus import PreparedCorpus
from elmo_experiments.bilm.pretraining.lm_data import sentence_spans
from elmo_experiments.errors import ConfigError

GIB = 1024 ** 3
EVAL_ROWS = 2048  # the exact softmax's logits are made this many rows at a time (softmax.py)


def free_memory(device: torch.device) -> int:
    """Bytes free on ``device``: the GPU's free memory, or the machine's available memory."""
    if device.type == "cuda":
        return int(torch.cuda.mem_get_info(device)[0])
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")


def softmax_bytes(values: dict[str, Any], vocab_size: int) -> int:
    """An estimate of the softmax's memory in training: its weights, their gradients and two
    optimizer states (fp32), and the logits of one batch (sampled, or over the whole vocabulary)
    with their gradients and softmax, or of one chunk of evaluation rows."""
    model, corpus, loader = values["model"].params, values["corpus"], values["data_loader"]
    width = model["projection_dim"] + 1
    rows = 2 * (loader.get("max_tokens") or loader["batch_size"] * corpus["max_sentence_length"])
    samples = model.get("num_samples") or 0
    columns = samples if 0 < samples < vocab_size else vocab_size
    return 4 * (4 * vocab_size * width + 3 * max(rows * columns, EVAL_ROWS * vocab_size))


def check_settings(values: dict[str, Any], corpus: PreparedCorpus, vocab_size: int,
                   device: torch.device, source: str) -> None:
    """A one-line ``ConfigError`` for settings that cannot work on this corpus and device: a
    softmax that does not fit in memory, or ``data_loader.max_tokens`` below the longest
    sentence (a batch could not hold it)."""
    problems = []
    needed, free = softmax_bytes(values, vocab_size), free_memory(device)
    if needed > free:
        problems.append(
            f"corpus.vocab_size: a softmax over {vocab_size:,} words needs about "
            f"{needed / GIB:.1f} GiB (weights, gradients, optimizer state and a batch's "
            f"logits), but {device.type} has {free / GIB:.1f} GiB free; lower corpus.vocab_size "
            f"(or raise corpus.min_count), sample the softmax (model.num_samples) or lower "
            f"data_loader.batch_size")
    max_tokens = values["data_loader"].get("max_tokens")
    if max_tokens is not None:
        spans = sentence_spans(corpus.ids("train"))
        longest = int((spans[:, 1] - spans[:, 0]).max()) if len(spans) else 0
        if longest > max_tokens:
            problems.append(
                f"data_loader.max_tokens: {max_tokens} is below the corpus's longest sentence, "
                f"{longest} tokens (after corpus.max_sentence_length "
                f"{values['corpus']['max_sentence_length']}); raise max_tokens or lower "
                f"max_sentence_length")
    if problems:
        raise ConfigError(problems, source=source)

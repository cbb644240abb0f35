"""The single operations behind docs/speed.md's choices, each against what it replaced, taking
turns, in process CPU time at one thread:

- a dropout mask: torch's ``Dropout`` (``bernoulli_``) against ``modules.dropout.Dropout``
  (uniform < keep), forward and backward, ns an element;
- one GRU layer on SQuAD's CPU-size shapes (batch 45, 300 steps, 180 inputs, 45 cells), forward
  and backward: ``torch.nn.GRU``, the hand-written ``run_gru``, and torch's oneDNN LSTM of the
  same width (what swapping the cell would give).

    python benchmarks/bench_ops.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch

from elmo_experiments.modules.dropout import Dropout
from elmo_experiments.modules.gru_recurrence import run_gru


def in_turns(candidates: dict[str, Callable[[], None]], rounds: int) -> dict[str, float]:
    """Median process CPU seconds of each candidate, the candidates taking turns."""
    for run in candidates.values():
        run()  # warm: allocations, kernel choice
    times: dict[str, list[float]] = {name: [] for name in candidates}
    for _ in range(rounds):
        for name, run in candidates.items():
            start = time.process_time()
            run()
            times[name].append(time.process_time() - start)
    return {name: statistics.median(values) for name, values in times.items()}


def dropout_figures(rounds: int) -> None:
    x = torch.randn(45, 300, 600, requires_grad=True)  # SQuAD's widest dropout input
    grad = torch.ones_like(x)

    def step(layer: torch.nn.Module) -> Callable[[], None]:
        return lambda: layer(x).backward(grad)

    medians = in_turns({"torch.nn.Dropout (bernoulli_)": step(torch.nn.Dropout(0.2).train()),
                        "modules.dropout.Dropout (uniform < keep)": step(Dropout(0.2).train())},
                       rounds)
    print(f"dropout p=0.2 on {tuple(x.shape)}, forward + backward, ns an element:")
    for name, seconds in medians.items():
        print(f"  {name}: {seconds / x.numel() * 1e9:.2f}")


def recurrence_figures(rounds: int) -> None:
    torch.manual_seed(0)
    x = torch.randn(45, 300, 180, requires_grad=True)
    gru, lstm = torch.nn.GRU(180, 45, batch_first=True), torch.nn.LSTM(180, 45, batch_first=True)

    def step(run: Callable[[torch.Tensor], tuple[torch.Tensor, object]]) -> Callable[[], None]:
        return lambda: run(x)[0].sum().backward()

    medians = in_turns({"torch.nn.GRU": step(gru), "run_gru (hand-written backward)":
                        step(lambda inputs: run_gru(gru, inputs)),
                        "torch.nn.LSTM (oneDNN)": step(lstm)}, rounds)
    print(f"one recurrent layer on {tuple(x.shape)} -> 45 cells, forward + backward, ms:")
    for name, seconds in medians.items():
        print(f"  {name}: {seconds * 1e3:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"1 thread, CPU capability {torch.backends.cpu.get_cpu_capability()}; medians of "
          f"{args.rounds} rounds in turns")
    dropout_figures(args.rounds)
    recurrence_figures(args.rounds)


if __name__ == "__main__":
    main()

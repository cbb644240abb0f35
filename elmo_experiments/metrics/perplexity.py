"""Forward, backward and average perplexity of a biLM from summed token negative log-likelihoods."""

from __future__ import annotations

import math

from elmo_experiments.metrics.metric import State


class Perplexity:
    """exp(mean NLL) per direction and their average; empty until a token has been scored.
    A mean NLL too large for a float's exponent (a diverged model) gives ``inf``."""

    names = ("perplexity_forward", "perplexity_backward", "perplexity")

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.forward = 0.0
        self.backward = 0.0
        self.tokens = 0

    def update(self, forward_nll: float, backward_nll: float, tokens: int) -> None:
        """Add the summed NLL (nats) of ``tokens`` predictions in each direction."""
        self.forward += forward_nll
        self.backward += backward_nll
        self.tokens += tokens

    def compute(self) -> dict[str, float]:
        if not self.tokens:
            return {}
        forward = _exp(self.forward / self.tokens)
        backward = _exp(self.backward / self.tokens)
        return {"perplexity_forward": forward, "perplexity_backward": backward,
                "perplexity": (forward + backward) / 2}

    def state(self) -> State:
        return {"forward": self.forward, "backward": self.backward, "tokens": self.tokens}

    def merge(self, state: State) -> None:
        self.update(state["forward"], state["backward"], state["tokens"])


def _exp(value: float) -> float:
    """``math.exp``, ``inf`` where the result is beyond a float (a mean NLL over ~709 nats)."""
    try:
        return math.exp(value)
    except OverflowError:
        return math.inf

"""Running a frozen biLM under a state mode: stateful, stateless, or a fixed warm start.

- ``stateful``: LSTM state carried from batch to batch, row by row, as the released models were
  trained and the reference outputs made. Exact to the references, but a sentence's vectors
  depend on what ran before it (batch order, batch size). Use it to reproduce published numbers.
- ``stateless``: every sentence starts from a zero state. Deterministic and cacheable; right for
  biLMs trained on single sentences (our pretraining default).
- ``warm``: every sentence starts from one fixed state, the mean final state after reading a
  warm-up text. Deterministic and cacheable, and closer than zero to what stateful-trained
  models saw. The usual choice for the released models in task training.
"""

from __future__ import annotations

import hashlib

import torch

from elmo_experiments.bilm.bidirectional_lm import BidirectionalLM, States, remove_boundaries
from elmo_experiments.bilm.characters import batch_to_ids
from elmo_experiments.errors import ConfigValueError
from elmo_experiments.precision import PRECISIONS, effective_precision

STATE_MODES = ("stateful", "stateless", "warm")

# Written for this project: plain sentences of the kind a biLM reads before the text of interest.
DEFAULT_WARMUP = [
    "The committee met on Tuesday to discuss the new budget , and most members agreed .",
    "She said the results were better than expected , but the work is not finished yet .",
    "In the morning the town was quiet ; by noon the market was full of people .",
    "He has written three books about the history of the region since 1990 .",
    "Prices rose by 4 percent last year , according to figures released on Friday .",
    "\" We will see what happens next , \" the spokesman told reporters .",
]


class BilmRunner(torch.nn.Module):
    """Calls ``bilm`` with the initial states its mode prescribes; returns layers and mask."""

    def __init__(self, bilm: BidirectionalLM, mode: str = "stateless",
                 warmup: list[str] | None = None, precision: str = "fp32") -> None:
        super().__init__()
        if mode not in STATE_MODES:
            raise ConfigValueError(f"state mode {mode!r} is not one of {STATE_MODES}")
        if precision not in PRECISIONS:
            raise ConfigValueError(f"precision {precision!r} is not one of {PRECISIONS}")
        # fp32 where bf16 would be emulated (a CPU without bf16 matrix units), unless forced
        precision = effective_precision(precision, next(bilm.parameters()).device.type)
        if precision == "bf16":  # the whole frozen biLM in bf16; layers come back as fp32
            bilm.to(torch.bfloat16)
        self.precision = precision
        self.bilm = bilm
        self.mode = mode
        self.warmup = list(warmup or DEFAULT_WARMUP)
        self._carried: States | None = None
        self._warm: States | None = None

    def reset_state(self) -> None:
        """Forget carried state (stateful mode) and the warm state (recomputed on demand)."""
        self._carried = None
        self._warm = None

    def carried_state(self) -> States | None:
        """The state a stateful run carries into its next batch (None: zeros), to save."""
        return self._carried

    def restore_carried_state(self, carried: States | None) -> None:
        """Continue a stateful run from a ``carried_state()`` saved earlier (check it first with
        ``carried_state_problem``), moved to the biLM's device and dtype."""
        reference = next(self.bilm.parameters())
        self._carried = None if carried is None else [
            (h.to(reference.device, reference.dtype), c.to(reference.device, reference.dtype))
            for h, c in carried]

    def carried_state_problem(self, carried: object, rows: int) -> str | None:
        """What keeps ``carried`` (a saved ``carried_state()``, loaded to the CPU) from being a
        state this biLM carries for ``rows`` rows (None: nothing): an (h, c) pair per LSTM
        layer, forward then backward, of dense CPU tensors, h (rows, projection) and c (rows,
        cell), finite and within the layer's clips, in exactly the dtype this runner's biLM
        computes in: bfloat16 in a bf16 run, float32 otherwise (also a bf16 run that runs in
        fp32 here, on a CPU without bf16 units); another dtype would continue the run with
        vectors an uninterrupted run does not give."""
        layers = [*self.bilm.forward_layers, *self.bilm.backward_layers]
        dtype = next(self.bilm.parameters()).dtype  # what ``_carry`` keeps: the LSTM's own
        if not isinstance(carried, list | tuple) or len(carried) != len(layers):
            return f"the carried LSTM state is not {len(layers)} (h, c) pairs"
        for number, (pair, layer) in enumerate(zip(carried, layers, strict=True)):
            if not (isinstance(pair, list | tuple) and len(pair) == 2
                    and all(isinstance(t, torch.Tensor) for t in pair)):
                return f"carried LSTM state {number} is not an (h, c) pair of tensors"
            for name, tensor, dim in zip("hc", pair, (layer.projection_dim, layer.cell_dim),
                                         strict=True):
                where = f"carried LSTM state {number}: {name}"
                if tensor.layout != torch.strided:  # sparse: no elementwise checks, no LSTM's
                    layout = str(tensor.layout).removeprefix("torch.")
                    return f"{where} is a {layout} tensor, not a dense one"
                if tensor.device.type != "cpu":  # e.g. meta: shape without values
                    return f"{where} is on the {tensor.device.type} device, not the CPU"
                if tuple(tensor.shape) != (rows, dim):
                    return f"{where} has shape {tuple(tensor.shape)}, not {(rows, dim)}"
                if tensor.dtype != dtype:
                    return (f"{where} is {str(tensor.dtype).removeprefix('torch.')}, not "
                            f"{str(dtype).removeprefix('torch.')}")
                if not bool(torch.isfinite(tensor).all()):
                    return f"{where} is not finite"
                clip = layer.proj_clip if name == "h" else layer.cell_clip
                if clip and bool((tensor.abs() > clip).any()):  # the LSTM clips what it carries
                    return f"{where} exceeds the layer's clip {clip}"
        return None

    def state_key(self) -> str:
        """Identifies the initial-state rule in cache keys."""
        if self.mode == "warm":
            text = "\n".join(self.warmup).encode("utf-8")
            return f"warm:{hashlib.sha1(text).hexdigest()}{self._precision_key()}"
        return self.mode + self._precision_key()

    def _precision_key(self) -> str:
        return "" if self.precision == "fp32" else f"|{self.precision}"

    def _warm_states(self, reference: torch.Tensor) -> States:
        if self._warm is None:
            ids = batch_to_ids([line.split() for line in self.warmup]).to(reference.device)
            with torch.no_grad():
                _, _, finals = self.bilm(ids)
            self._warm = [(h.mean(0, keepdim=True), c.mean(0, keepdim=True)) for h, c in finals]
        return self._warm

    def _initial(self, batch: int, reference: torch.Tensor) -> list | None:
        if self.mode == "stateless":
            return None
        if self.mode == "warm":
            return [(h.expand(batch, -1), c.expand(batch, -1))
                    for h, c in self._warm_states(reference)]
        if self._carried is None:
            return None
        initial = []
        for h, c in self._carried:
            rows = min(batch, h.shape[0])
            h0 = h.new_zeros(batch, h.shape[1])
            c0 = c.new_zeros(batch, c.shape[1])
            h0[:rows], c0[:rows] = h[:rows], c[:rows]
            initial.append((h0, c0))
        return initial

    def with_boundaries(self, char_ids: torch.Tensor) -> tuple[list[torch.Tensor], torch.Tensor]:
        """(L+1) x (batch, seq + 2, 2P) layers including BOS/EOS, and their mask."""
        batch = char_ids.shape[0]
        layers, mask, finals = self.bilm.layers_with_boundaries(
            char_ids, self._initial(batch, char_ids))
        if self.mode == "stateful":
            self._carry(finals, batch)
        if self.precision != "fp32":
            layers = [layer.float() for layer in layers]
        return layers, mask

    def forward(self, char_ids: torch.Tensor) -> tuple[list[torch.Tensor], torch.Tensor]:
        # char_ids: (batch, seq, 50) -> (L+1) x (batch, seq, 2P), mask (batch, seq)
        layers, mask = self.with_boundaries(char_ids)
        return [remove_boundaries(layer, mask) for layer in layers], (char_ids > 0).any(dim=2)

    def _carry(self, finals: States, batch: int) -> None:
        finals = [(h.detach(), c.detach()) for h, c in finals]
        if self._carried is None or self._carried[0][0].shape[0] <= batch:
            self._carried = finals
            return
        updated = []
        for (h_old, c_old), (h, c) in zip(self._carried, finals, strict=True):
            h_old, c_old = h_old.clone(), c_old.clone()
            h_old[:batch], c_old[:batch] = h, c
            updated.append((h_old, c_old))
        self._carried = updated

"""ProjectedLstm: the training (autograd) path equals the in-place inference path."""

from __future__ import annotations

import torch

from elmo_experiments.bilm.lstm import ProjectedLstm


def _layer(clip: float | None) -> ProjectedLstm:
    layer = ProjectedLstm(6, 10, 4, cell_clip=clip, proj_clip=clip)
    layer.reset_parameters(torch.Generator().manual_seed(0))
    with torch.no_grad():
        layer.bias.normal_(generator=torch.Generator().manual_seed(1))
    return layer


def test_autograd_and_inference_paths_agree():
    for clip in (None, 0.3):
        layer = _layer(clip)
        inputs = torch.randn(3, 5, 6, generator=torch.Generator().manual_seed(2)) * 3
        lengths = torch.tensor([5, 2, 4])
        state = (torch.randn(3, 4), torch.randn(3, 10))
        with torch.no_grad():
            fast, (h_fast, c_fast) = layer(inputs, lengths, state)
        slow, (h_slow, c_slow) = layer(inputs, lengths, state)
        torch.testing.assert_close(fast, slow, atol=1e-6, rtol=0)
        torch.testing.assert_close(h_fast, h_slow, atol=1e-6, rtol=0)
        torch.testing.assert_close(c_fast, c_slow, atol=1e-6, rtol=0)
        assert torch.all(fast[1, 2:] == 0) and torch.all(fast[2, 4:] == 0)
        # the final state of a short row is the state after its last token
        _, (h_short, _) = layer(inputs[1:2, :2], lengths[1:2], (state[0][1:2], state[1][1:2]))
        torch.testing.assert_close(h_short[0], h_slow[1], atol=1e-6, rtol=0)
        slow.sum().backward()
        assert all(p.grad is not None and torch.isfinite(p.grad).all()
                   for p in layer.parameters())


def test_one_step_by_hand():
    """z = [x, h] W + B with gates [i, j, f, o]; c and h as in the released biLMs."""
    layer = _layer(None)
    x, h0, c0 = torch.randn(1, 1, 6), torch.randn(1, 4), torch.randn(1, 10)
    with torch.no_grad():
        out, (h1, c1) = layer(x, torch.tensor([1]), (h0, c0))
    z = x[0] @ layer.input_weight.t() + h0 @ layer.hidden_weight.t() + layer.bias
    i, j, f, o = z.detach().split(10, dim=1)
    c = torch.sigmoid(f) * c0 + torch.sigmoid(i) * torch.tanh(j)
    h = (torch.sigmoid(o) * torch.tanh(c)) @ layer.projection.detach().t()
    torch.testing.assert_close(c1, c, atol=1e-6, rtol=0)
    torch.testing.assert_close(h1, h, atol=1e-6, rtol=0)
    torch.testing.assert_close(out[0], h, atol=1e-6, rtol=0)


def _reference_steps(layer: ProjectedLstm, inputs: torch.Tensor, lengths: torch.Tensor,
                     state: tuple[torch.Tensor, torch.Tensor]):
    """The recurrence written plainly, step by step through autograd (the reference)."""
    h, c = state
    size = layer.cell_dim
    outputs = []
    for t in range(inputs.shape[1]):
        z = inputs[:, t] @ layer.input_weight.t() + h @ layer.hidden_weight.t() + layer.bias
        i, j, f, o = z.split(size, dim=1)
        c_new = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(j)
        if layer.cell_clip:
            c_new = c_new.clamp(-layer.cell_clip, layer.cell_clip)
        h_new = (torch.tanh(c_new) * torch.sigmoid(o)) @ layer.projection.t()
        if layer.proj_clip:
            h_new = h_new.clamp(-layer.proj_clip, layer.proj_clip)
        keep = (t < lengths)[:, None]
        h, c = torch.where(keep, h_new, h), torch.where(keep, c_new, c)
        outputs.append(h_new * keep)
    return torch.stack(outputs, dim=1), (h, c)


def test_fused_recurrence_gradients_equal_autograd_reference():
    """Outputs, final state and every gradient (weights, inputs, initial state) of the
    hand-written backward equal autograd through the plain recurrence, with rows that end
    early and clipping that is active."""
    for clip in (None, 0.3):
        layer = _layer(clip).double()
        generator = torch.Generator().manual_seed(3)
        inputs = (torch.randn(3, 5, 6, generator=generator, dtype=torch.float64) * 3)
        lengths = torch.tensor([5, 2, 4])
        h0 = torch.randn(3, 4, generator=generator, dtype=torch.float64)
        c0 = torch.randn(3, 10, generator=generator, dtype=torch.float64)
        weights = torch.randn(3, 5, 4, generator=generator, dtype=torch.float64)
        results = []
        for run in (layer, lambda *a, layer=layer: _reference_steps(layer, *a)):
            leaves = [inputs.clone().requires_grad_(), h0.clone().requires_grad_(),
                      c0.clone().requires_grad_()]
            layer.zero_grad()
            out, (h, c) = run(leaves[0], lengths, (leaves[1], leaves[2]))
            ((out * weights).sum() + (h * 0.7).sum() + (c * 1.3).sum()).backward()
            results.append([out, h, c, *(x.grad for x in leaves),
                            *(p.grad.clone() for p in layer.parameters())])
        if clip:  # the clip must really have cut something for the masks to be tested
            assert (results[1][0].abs() == clip).any()
        for fused, reference in zip(*results, strict=True):
            torch.testing.assert_close(fused, reference, atol=1e-10, rtol=1e-10)


def test_fused_recurrence_gradcheck():
    from elmo_experiments.bilm.lstm_recurrence import LstmRecurrence

    generator = torch.Generator().manual_seed(4)

    def rand(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=generator, dtype=torch.float64).requires_grad_()

    active = torch.tensor([[1, 1], [1, 0], [1, 0]], dtype=torch.bool)  # (steps, batch)
    args = (rand(2, 3, 12), rand(2, 2), rand(2, 3), rand(12, 2), rand(2, 3))
    for clip in (None, 1.5):
        assert torch.autograd.gradcheck(
            lambda *a, clip=clip: LstmRecurrence.apply(*a, active, [True, False, False],
                                                       clip, clip), args)

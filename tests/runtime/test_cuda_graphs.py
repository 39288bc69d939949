"""CUDA graphs for inference (lathe._graphs) on a simulated graph layer: a capture runs the forward
once on static inputs and a replay runs it again on them, writing its outputs into the same static
buffers, as a CUDA graph does. Checked: one graph per bucket (no capture for another length inside
it), padding that leaves the real positions' outputs as they are, the LRU bound, outputs that the
next replay does not overwrite, and calls that record gradients or exceed every bucket run without
a graph."""

import pytest
import torch

import lathe
from lathe import _graphs


class SimulatedGraphs:
    def __init__(self):
        self.captured = []  # the shapes of each capture's inputs

    def capture(self, fn, args):
        outputs = fn(*args)
        self.captured.append(tuple(tuple(a.shape) for a in args if isinstance(a, torch.Tensor)))
        return (fn, args, outputs), outputs

    def replay(self, graph):
        fn, args, outputs = graph
        fresh = fn(*args)
        torch.utils._pytree.tree_map(lambda static, new: static.copy_(new), outputs, fresh)


class Causal(torch.nn.Module):
    """Position-wise layers and a causal running mean: padding at the end leaves earlier positions as
    they are."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.linear = torch.nn.Linear(8, 8)

    def forward(self, x, scale):
        h = torch.relu(self.linear(x)) * scale
        return torch.cumsum(h, dim=1) / torch.arange(1, h.shape[1] + 1).view(1, -1, 1), h.sum()


def runner(spec, model=None):
    model = model or Causal()
    return model, _graphs.GraphRunner(model.forward, spec, SimulatedGraphs())


def test_lengths_inside_a_bucket_replay_one_graph_and_compute_what_eager_does():
    model, run = runner(_graphs.CudaGraphSpec(buckets=(16, 64), dim=1))
    with torch.no_grad():
        for length in (5, 16, 9, 40, 64, 3):
            x = torch.randn(2, length, 8)
            out, total = run(x, 0.5)
            expected, _ = model(x, 0.5)
            assert out.shape == (2, length, 8)
            torch.testing.assert_close(out, expected)
    assert run.graphs.captured == [((2, 16, 8),), ((2, 64, 8),)]
    assert run.report() == {"buckets": [16, 64], "captures": 2, "replays": 6, "evictions": 0, "invalidated": 0,
                            "ungraphed_calls": 0, "max_graphs": 8}


def test_outputs_are_the_callers_not_the_graphs():
    _, run = runner(_graphs.CudaGraphSpec(buckets=(16,)))
    with torch.no_grad():
        first, _ = run(torch.ones(1, 4, 8), 1.0)
        kept = first.clone()
        run(torch.full((1, 4, 8), 3.0), 1.0)  # the replay rewrites the static outputs
    assert torch.equal(first, kept)


def test_the_least_recently_used_graph_goes_first():
    _, run = runner(_graphs.CudaGraphSpec(max_graphs=2))  # powers of two from 16
    with torch.no_grad():
        for length in (10, 20, 10, 40, 20):  # buckets 16, 32, 16, 64 (drops 32), 32 (drops 16)
            run(torch.randn(1, length, 8), 1.0)
    assert run.report()["buckets"] == [32, 64]
    assert run.captures == 4 and run.evictions == 2


def test_calls_that_record_gradients_or_exceed_every_bucket_run_without_a_graph():
    model, run = runner(_graphs.CudaGraphSpec(buckets=(16,)))
    out, _ = run(torch.randn(1, 8, 8), 1.0)  # grad mode on: the autograd graph is the caller's
    assert out.requires_grad
    with torch.no_grad():
        run(torch.randn(1, 32, 8), 1.0)
    assert run.ungraphed_calls == 2 and run.captures == 0
    # A changed non-tensor argument is another graph, not a stale replay.
    with torch.no_grad():
        a, _ = run(torch.ones(1, 4, 8), 1.0)
        b, _ = run(torch.ones(1, 4, 8), 2.0)
    assert run.captures == 2 and not torch.equal(a, b)


def test_options_are_checked():
    assert _graphs.make_cuda_graph_spec(True) == _graphs.CudaGraphSpec()
    assert _graphs.make_cuda_graph_spec(dict(buckets=[128, 512])).buckets == (128, 512)
    with pytest.raises(lathe.LatheError, match="increasing"):
        _graphs.make_cuda_graph_spec(dict(buckets=[512, 128]))
    with pytest.raises(lathe.LatheError, match="unknown option 'mode'"):
        _graphs.make_cuda_graph_spec(dict(mode="full"))
    with pytest.raises(lathe.LatheError, match="max_graphs"):
        _graphs.make_cuda_graph_spec(dict(max_graphs=0))
    with pytest.raises(lathe.LatheError, match="runs no CUDA graphs"):
        lathe.cuda_graphs_report(Causal())


def test_lathe_compile_captures_the_whole_forward(monkeypatch):
    graphs = SimulatedGraphs()
    monkeypatch.setattr(_graphs, "CudaGraphs", lambda: graphs)
    model = Causal()
    reference = Causal()
    lathe.compile(model, cuda_graphs=dict(buckets=(16,)))
    with torch.no_grad():
        for length in (7, 12):
            x = torch.randn(1, length, 8)
            torch.testing.assert_close(model(x, 1.0)[0], reference(x, 1.0)[0])
    assert lathe.cuda_graphs_report(model)["captures"] == 1

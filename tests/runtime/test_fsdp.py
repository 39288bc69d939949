"""lathe.compile on transformer blocks under FSDP2 (fully_shard per layer + root), two processes
on the CPU with gloo: loss and gradients equal the unsharded eager model's."""

import os
import sys

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

WORLD = 2


def _worker(rank, store_path, results):
    import lathe
    from torch.distributed.fsdp import fully_shard

    sys.path.insert(0, os.path.dirname(__file__))
    from test_api import Block

    dist.init_process_group("gloo", init_method=f"file://{store_path}", rank=rank, world_size=WORLD)
    # As conftest.py does in the parent: graphs from the caches skip the partitioner.
    torch._inductor.config.fx_graph_cache = False
    torch._functorch.config.enable_autograd_cache = False
    try:
        torch.manual_seed(0)
        reference = torch.nn.Sequential(*(Block() for _ in range(3)))
        model = torch.nn.Sequential(*(Block() for _ in range(3)))
        model.load_state_dict(reference.state_dict())
        for block in model:
            fully_shard(block)
            lathe.compile(block, policy="heuristic")  # the FSDP-aware layer compile unit
        fully_shard(model)
        x = torch.randn(4, 8, 32, generator=torch.Generator().manual_seed(rank))
        loss = model(x).pow(2).mean()
        loss.backward()
        ref_loss = reference(x).pow(2).mean()
        ref_loss.backward()
        grads = {name: p.grad.full_tensor() for name, p in model.named_parameters()}
        ref_grads = {name: p.grad.clone() for name, p in reference.named_parameters()}
        for g in ref_grads.values():  # FSDP averages gradients over ranks
            dist.all_reduce(g)
            g /= WORLD
        for name, grad in grads.items():
            torch.testing.assert_close(grad, ref_grads[name], rtol=1e-4, atol=1e-6, msg=lambda m: f"{name}: {m}")
        torch.testing.assert_close(loss, ref_loss)
        planned = sum(len(lathe.plans(block)) for block in model)
        results.put((rank, "ok", planned))
    except Exception as error:  # reported to the parent, which fails the test with it
        import traceback
        results.put((rank, traceback.format_exc(), 0))
    finally:
        dist.destroy_process_group()


def test_fsdp2_layer_units_train_like_eager(tmp_path):
    context = mp.get_context("spawn")
    results = context.Queue()
    processes = [context.Process(target=_worker, args=(rank, str(tmp_path / "store"), results)) for rank in range(WORLD)]
    for p in processes:
        p.start()
    outcomes = sorted(results.get(timeout=600) for _ in processes)
    for p in processes:
        p.join(timeout=60)
    for rank, status, planned in outcomes:
        assert status == "ok", f"rank {rank}:\n{status}"
        assert planned == 3, f"rank {rank}: {planned} joint graphs planned for 3 compiled blocks"

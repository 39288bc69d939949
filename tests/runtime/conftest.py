"""Runtime tests: lathe.compile on CPU (torch CPU wheel, Inductor's C++ backend)."""

import pytest
import torch


@pytest.fixture(autouse=True)
def fresh_compiles():
    # Every test plans its graphs: no compiled graph comes back from Inductor's or AOTAutograd's
    # caches (which skip the partitioner), and no Dynamo state leaks from the test before.
    torch._dynamo.reset()
    with torch._inductor.config.patch(fx_graph_cache=False), \
            torch._functorch.config.patch(enable_autograd_cache=False):
        yield
    torch._dynamo.reset()

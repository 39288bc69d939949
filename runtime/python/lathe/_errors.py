"""The one error type `lathe` raises for bad input (options, budgets, plans, graphs): the planner's
own, so that errors keep their type across the native boundary."""

try:
    from ._native import LatheError
except ImportError as error:  # a build problem, reported as such
    raise ImportError(
        "lathe: the native planner module (lathe._native) is missing or does not load: "
        f"{error}. Build it with `make` (it is written into runtime/python/lathe/)."
    ) from error

"""The one error type `lathe` raises for bad input: options, budgets, plans, graphs."""

try:
    from ._native import LatheError  # the planner's own errors keep their type across the boundary
except ImportError:  # the native module is imported (and its absence reported) by lathe._planner
    class LatheError(ValueError):
        pass

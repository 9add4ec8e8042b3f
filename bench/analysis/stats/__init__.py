"""Statistics for paired benchmark comparisons, calibration and the escalation trade-off.

Small pure functions over pandas/numpy; the paper build and `engram-bench compare` call them. Names are stable.
"""

# The submodules load on first use: `bench.run.runner` needs only the token-matching rule, and importing statsmodels and
# scipy.stats for it cost every command about a second at start-up. The names and their modules are listed once, in
# __init__.pyi (which type checkers read too).
import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)

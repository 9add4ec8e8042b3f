"""The grid: arms x slices x replicates as independent units on a local process pool or Ray, one budget, merged
cache shards, dependent stages (token matching) after the units they read (see `bench.run.grid.driver`)."""

from bench.run.grid.driver import GridReport, UnitReport, run_grid
from bench.run.grid.spec import GridPlan, GridSpec, Unit, plan_grid, spec_from

__all__ = ["GridPlan", "GridReport", "GridSpec", "Unit", "UnitReport", "plan_grid", "run_grid", "spec_from"]

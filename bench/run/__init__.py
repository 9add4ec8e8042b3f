"""Running: arms, the run plan and its price, the runner, the preflight checks and the grid of runs."""

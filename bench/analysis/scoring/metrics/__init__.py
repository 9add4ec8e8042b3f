"""The built-in metrics, one module each: a module defining `METRIC = Metric(...)` (bench.analysis.scoring.metric)
is found by `bench.registry.import_modules`, so adding a metric adds a module here and edits no list."""

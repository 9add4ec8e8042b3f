"""Results: what a result file is (the schema), its traces and the provenance it records (git). The checked, atomic
writes of every file a run leaves are bench.disk, a layer below, so the models can write their caches and ledgers
without importing what a result is."""

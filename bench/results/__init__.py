"""Results: what a result file is (the schema), its traces, the provenance it records (git), and the checked, atomic
writes of every file a run leaves (results, caches, ledgers)."""

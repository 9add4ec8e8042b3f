"""Results: the result-file schema, atomic writes, provenance (git), traces, the importers of earlier results and the
Hugging Face export."""

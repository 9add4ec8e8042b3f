"""Results in and out: the importers of earlier runs' results (v1, v3) and the Hugging Face export."""

"""Data: the pinned data files (verified against data/SOURCES.md), the slices built from them, the other datasets."""

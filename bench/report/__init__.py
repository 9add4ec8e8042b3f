"""The papers: numbers, tables, figures and the article built from the committed results (v1 here, v3 in v3/)."""

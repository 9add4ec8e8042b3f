"""The results viewer: a self-contained HTML report per result file (or A against B), a gallery for a results
folder, and the terminal view of one question. It reads only result files and their trace sidecars."""

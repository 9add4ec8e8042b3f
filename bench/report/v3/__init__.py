"""The v3 paper ("When Does Selection Replace Extraction?"): numbers, tables and figure from results/v3/ into
paper/v3/, and the check of every printed number against the paper's list (results/v3/article_numbers_v3.tsv)."""

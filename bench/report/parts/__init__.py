"""The built-in tables and figure sets of the papers: each module here registers its own (`@TABLES.register(name)`,
`@FIGURE_SETS.register(name)`), and `bench.report.catalog` imports every module of this package on the first lookup
(`bench.registry.import_modules`), so a new table is a new module here and no list is edited."""

from bench.cli.program import main

main()

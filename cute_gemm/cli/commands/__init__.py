"""One module per command. Each has ``DESCRIPTION`` (its help page's text), ``add_arguments(parser)`` and
``run(args)`` (the parsed arguments in, the exit code out). ``cute_gemm.cli.COMMANDS`` lists them in help
order, each with its one-line help, and imports a module only when its command runs."""

"""One module per command. Each has ``add_parser(subparsers)``: it adds the command's sub-parser and sets
``fn`` to the function that runs it (parsed arguments in, exit code out). ``cute_gemm.cli.COMMANDS``
lists the modules in help order."""

import sys

from cute_gemm.cli import main

sys.exit(main())

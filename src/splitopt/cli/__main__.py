import sys

from splitopt.cli import main

sys.exit(main())

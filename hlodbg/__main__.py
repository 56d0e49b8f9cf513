import sys

from hlodbg.cli import main

sys.exit(main())

import sys

from ctk.cli import main

sys.exit(main())

# Lets `python -m dsfields` work where the console script is not on PATH (release environments).
import sys

from dsfields.cli import main

sys.exit(main())

"""``python -m noctaya`` is the ``noctaya`` command."""

import sys

from noctaya.cli import main

sys.exit(main())

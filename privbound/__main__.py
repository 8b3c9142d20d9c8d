"""``python -m privbound``: the ``privbound`` command line."""

from privbound.reports.cli import main

raise SystemExit(main())

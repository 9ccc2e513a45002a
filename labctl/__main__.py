"""`python -m labctl` runs the CLI."""

from labctl.cli import main

raise SystemExit(main())

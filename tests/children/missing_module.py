"""Imports a module that is not installed."""

import labctl_test_missing_module  # noqa: F401

"""Clusters: where jobs run, how to reach them, and their schedulers."""

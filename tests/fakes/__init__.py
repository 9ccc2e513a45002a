"""Fake servers for SaaS backends: the real client libraries are pointed at them."""

"""Trains for a few steps and succeeds."""

from common import steps

steps(5)
print("training finished")

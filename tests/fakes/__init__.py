"""Test doubles that speak real protocols (the SSM agent's data channel, ...)."""

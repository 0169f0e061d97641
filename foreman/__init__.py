"""The Foreman: a daemon that runs a team of coding agents on a real git repository."""

__version__ = "0.1.0"

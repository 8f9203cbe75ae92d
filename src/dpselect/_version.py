"""The package version (a module of its own so that submodules need not import the package root)."""

__all__ = ["__version__"]

__version__ = "0.1.0"

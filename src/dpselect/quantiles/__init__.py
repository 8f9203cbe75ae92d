"""Private quantiles (issue 26). Placeholder of branch q-unbounded until q-core's package lands (q-core owns
this file; the line below is q-unbounded's one re-export)."""
from ._clipping import clipping_bounds

__all__ = ["clipping_bounds"]

"""Private quantiles (issue 26). Placeholder of branch q-unbounded until q-core's package lands (q-core owns this file)."""
__all__: list[str] = []

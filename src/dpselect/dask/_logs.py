"""A logging filter for the routine messages of distributed's P2P shuffle."""
from __future__ import annotations

import logging

__all__ = ["quiet_routine_shuffle_logs"]

#: The logger of distributed's P2P shuffle on the scheduler (the client process for a LocalCluster).
SHUFFLE_LOGGER = "distributed.shuffle._scheduler_plugin"
# distributed (2024-2026) logs each shuffle's start and end at WARNING; these are its format strings
_ROUTINE = ("Shuffle %s initialized by task %r executed on worker %s",
            "Shuffle %s deactivated due to stimulus '%s'")


class _RoutineShuffleFilter(logging.Filter):
    """Drops exactly the routine start/end records; every other record of the logger passes."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.msg not in _ROUTINE


_FILTER = _RoutineShuffleFilter("dpselect.dask")


def quiet_routine_shuffle_logs(enable: bool = True) -> None:
    """Silence (``enable=True``, done when :mod:`dpselect.dask` is imported) or restore the two routine
    WARNING lines distributed's P2P shuffle logs for every shuffle; its other warnings always show.

    Parameters
    ----------
    enable : bool, default True
        Add the filter (True) or remove it (False).

    Returns
    -------
    None

    Examples
    --------
    >>> import logging
    >>> quiet_routine_shuffle_logs()
    >>> log = logging.getLogger(SHUFFLE_LOGGER)
    >>> log.filter(logging.LogRecord(SHUFFLE_LOGGER, logging.WARNING, "", 0, _ROUTINE[1], ("x", "y"), None))
    False
    >>> bool(log.filter(logging.LogRecord(SHUFFLE_LOGGER, logging.WARNING, "", 0, "Shuffle %s restarted", ("x",), None)))
    True
    """
    logger = logging.getLogger(SHUFFLE_LOGGER)
    if enable:
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
    else:
        logger.removeFilter(_FILTER)

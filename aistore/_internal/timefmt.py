"""Go timestamps (RFC 3339 with up to nanoseconds) to `datetime`, on every supported Python."""

from __future__ import annotations

import re
from datetime import datetime, timezone

_RFC3339 = re.compile(
    r"(?P<base>\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2})(?:\.(?P<frac>\d+))?"
    r"(?P<tz>Z|z|[+-]\d{2}:?\d{2})?$"
)


def parse_go_time(value: str) -> datetime:
    """Parse `2006-01-02T15:04:05.999999999Z07:00`; fractions beyond microseconds are cut.

    Raises:
        ValueError: the string is not such a timestamp.
    """
    m = _RFC3339.match(value.strip())
    if m is None:
        raise ValueError(f"not an RFC 3339 timestamp: {value!r}")
    frac = (m.group("frac") or "")[:6].ljust(6, "0")
    tz = m.group("tz") or "Z"
    if tz in ("Z", "z"):
        tz = "+00:00"
    elif ":" not in tz:
        tz = f"{tz[:3]}:{tz[3:]}"
    parsed = datetime.fromisoformat(f"{m.group('base').replace(' ', 'T')}.{frac}{tz}")
    return parsed.astimezone(timezone.utc)

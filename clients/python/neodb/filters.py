"""Metadata types without a JSON literal, and helpers that build the server's
JSON filter grammar (README "Filters"; the CLI's --filter takes the same).

    from neodb.filters import GeoPoint, and_, contains_any, geo_radius, gte
    f = and_(contains_any("tags", ["ml", "db"]),
             gte("published", datetime(2024, 5, 1, tzinfo=timezone.utc)),
             geo_radius("loc", GeoPoint(52.52, 13.405), meters=5000))

A field may be a dotted path into nested metadata ("author.name"). On a list
field a comparison matches when any element does.
"""

import datetime as _dt
import math
from typing import Any, Dict, Iterable, NamedTuple

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


class GeoPoint(NamedTuple):
    """Degrees: lat in [-90, 90], lon in [-180, 180]."""
    lat: float
    lon: float


def datetime_micros(t: _dt.datetime) -> int:
    """UTC microseconds since the epoch; a naive datetime is taken as UTC."""
    if t.tzinfo is None:
        t = t.replace(tzinfo=_dt.timezone.utc)
    d = t - _EPOCH
    return (d.days * 86400 + d.seconds) * 1000000 + d.microseconds


def rfc3339(t: _dt.datetime) -> str:
    """t in UTC as RFC 3339 ("2024-05-01T00:00:00Z"); naive = UTC."""
    if t.tzinfo is None:
        t = t.replace(tzinfo=_dt.timezone.utc)
    t = t.astimezone(_dt.timezone.utc)
    frac = ".%06d" % t.microsecond if t.microsecond else ""
    return "%04d-%02d-%02dT%02d:%02d:%02d%sZ" % (t.year, t.month, t.day, t.hour, t.minute,
                                                t.second, frac)


def filter_operand(v: Any) -> Any:
    """json.dumps' `default`: a datetime becomes {"datetime": RFC 3339}, a GeoPoint
    {"lat", "lon"}."""
    if isinstance(v, _dt.datetime):
        return {"datetime": rfc3339(v)}
    if isinstance(v, GeoPoint):
        return {"lat": v.lat, "lon": v.lon}
    raise TypeError("not a filter operand: %s" % type(v).__name__)


def _geo(p: Any, what: str) -> GeoPoint:
    if not isinstance(p, GeoPoint):
        p = GeoPoint(*p)
    if not (-90 <= p.lat <= 90) or not (-180 <= p.lon <= 180):
        raise ValueError("%s: lat must be in [-90, 90] and lon in [-180, 180]" % what)
    return p


def _op(op: str, field: str, value: Any) -> Dict[str, Any]:
    if not field:
        raise ValueError("%s: the field is empty" % op)
    return {"field": field, op: value}


def eq(field: str, value: Any) -> Dict[str, Any]: return _op("eq", field, value)
def ne(field: str, value: Any) -> Dict[str, Any]: return _op("ne", field, value)
def lt(field: str, value: Any) -> Dict[str, Any]: return _op("lt", field, value)
def lte(field: str, value: Any) -> Dict[str, Any]: return _op("lte", field, value)
def gt(field: str, value: Any) -> Dict[str, Any]: return _op("gt", field, value)
def gte(field: str, value: Any) -> Dict[str, Any]: return _op("gte", field, value)
def exists(field: str, present: bool = True) -> Dict[str, Any]:
    return _op("exists", field, bool(present))


def in_(field: str, values: Iterable[Any]) -> Dict[str, Any]:
    return _op("in", field, list(values))


def contains_any(field: str, values: Iterable[Any]) -> Dict[str, Any]:
    return _op("contains_any", field, list(values))


def contains_all(field: str, values: Iterable[Any]) -> Dict[str, Any]:
    return _op("contains_all", field, list(values))


def geo_radius(field: str, center: Any, meters: float) -> Dict[str, Any]:
    c = _geo(center, "geo_radius.center")
    if not (isinstance(meters, (int, float)) and math.isfinite(meters) and meters > 0):
        raise ValueError("geo_radius.meters: must be > 0")
    return _op("geo_radius", field, {"lat": c.lat, "lon": c.lon, "meters": float(meters)})


def geo_bbox(field: str, top_left: Any, bottom_right: Any) -> Dict[str, Any]:
    tl, br = _geo(top_left, "geo_bbox.top_left"), _geo(bottom_right, "geo_bbox.bottom_right")
    if tl.lat < br.lat:
        raise ValueError("geo_bbox: top_left.lat must be >= bottom_right.lat")
    return _op("geo_bbox", field, {"top_left": {"lat": tl.lat, "lon": tl.lon},
                                   "bottom_right": {"lat": br.lat, "lon": br.lon}})


def and_(*filters: Dict[str, Any]) -> Dict[str, Any]: return {"and": list(filters)}
def or_(*filters: Dict[str, Any]) -> Dict[str, Any]: return {"or": list(filters)}
def not_(f: Dict[str, Any]) -> Dict[str, Any]: return {"not": f}


__all__ = ["GeoPoint", "datetime_micros", "rfc3339", "filter_operand", "eq", "ne", "lt", "lte",
           "gt", "gte", "exists", "in_", "contains_any", "contains_all", "geo_radius", "geo_bbox",
           "and_", "or_", "not_"]

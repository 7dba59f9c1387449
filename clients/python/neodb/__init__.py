"""neodb: a Python client for the neodb vector database.

    import neodb

    with neodb.connect_embedded("./data") as client:          # or neodb.connect("host:port")
        docs = client.collections.create("docs", vectors="external", dimension=768)
        docs.insert_many([{"id": "a", "text": "...", "vector": [...]}])
        for hit in docs.near_vector([...], limit=3, include_vector=True):
            print(hit.id, hit.score, hit.metadata, hit.vector)

Errors raise neodb.NeodbError with the gRPC `code` and the server's `message`.
Filters are the server's one JSON filter grammar (as the CLI's --filter), as a
dict or a JSON string:
    {"field": "year", "gte": 2020}       ops: eq ne lt lte gt gte in exists
    {"field": "tags", "contains_any": ["a", "b"]}          also contains_all
    {"field": "author.name", "eq": "Ada"}                  nested fields by dotted path
    {"field": "published", "gte": datetime(2024, 5, 1, tzinfo=timezone.utc)}
    {"field": "loc", "geo_radius": {"lat": 52.5, "lon": 13.4, "meters": 1000}}
    {"and": [...]}  {"or": [...]}  {"not": {...}}
(neodb.filters builds them: and_(contains_any(...), gte(...), geo_radius(...)).)
Metadata values: str, int, float, bool, lists of those, dicts (nested fields),
datetime.datetime (naive = UTC) and neodb.GeoPoint.
"""

try:
    import google.protobuf  # noqa: F401
    import grpc  # noqa: F401
except ImportError as _e:
    raise ImportError(
        "neodb needs grpcio and protobuf: Debian's python3-grpcio and python3-protobuf, "
        "seen from a venv made with `python3 -m venv --system-site-packages` (%s)" % _e) from _e

from neodb.client import (Client, Collection, CollectionInfo, Collections, Document, Hit,
                          HitGroup, connect)
from neodb.embedded import connect_embedded
from neodb.errors import EmbeddedServerError, NeodbError
from neodb.filters import GeoPoint

__all__ = ["Client", "Collection", "CollectionInfo", "Collections", "Document", "Hit",
           "HitGroup", "NeodbError", "EmbeddedServerError", "GeoPoint", "connect", "connect_embedded"]

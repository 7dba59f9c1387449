"""The client: a connection, its collections, and a handle per collection.

Thread-safety: a Client (and its handles) may be shared by threads; gRPC
channels are thread-safe. Every call carries a deadline (`timeout` seconds).
"""

import datetime as _dt
import json
import os
import uuid
from dataclasses import dataclass, field
from typing import (Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence,
                    Tuple, Union)

import grpc

from neodb.errors import NeodbError, from_rpc_error
from neodb.filters import _EPOCH, GeoPoint, datetime_micros, filter_operand
from neodb.v1 import neodb_pb2 as pb
from neodb.v1 import neodb_pb2_grpc as pb_grpc

# Values: str, int, float, bool, lists of those, dicts (nested fields),
# datetime.datetime, neodb.GeoPoint.
Metadata = Dict[str, Any]
Filter = Union[str, Mapping[str, Any]]

_METRICS = {"cosine": pb.METRIC_COSINE, "ip": pb.METRIC_INNER_PRODUCT,
            "inner_product": pb.METRIC_INNER_PRODUCT, "l2": pb.METRIC_L2}
# "": the model's own pooling (its sentence-transformers files; mean when none).
_POOLING = {"": pb.POOLING_UNSPECIFIED, "mean": pb.POOLING_MEAN, "cls": pb.POOLING_CLS}
_OVERFLOW = {"error": pb.OVERFLOW_ERROR, "chunk": pb.OVERFLOW_CHUNK}
_SOURCES = {"model": pb.VECTOR_SOURCE_MODEL, "external": pb.VECTOR_SOURCE_EXTERNAL}


@dataclass
class Hit:
    """One search result. `vector` is the stored vector (bit for bit, as
    float32 values) when the search asked for include_vector, else None.
    `explain` (when the search asked for it): keyword_rank, keyword_score,
    vector_rank, vector_score (ranks 1-based, 0 = that leg did not return the
    hit), fused_score, and the search's mode and alpha."""
    id: str
    score: float
    text: str = ""
    metadata: Metadata = field(default_factory=dict)
    vector: Optional[List[float]] = None
    explain: Optional[Dict[str, Any]] = None


@dataclass
class HitGroup:
    """One group of a grouped search (group_by=FIELD): the field's `value`
    and its hits, best first."""
    value: Any
    hits: List[Hit] = field(default_factory=list)


@dataclass
class Document:
    """A stored document. `vector` as in Hit."""
    id: str
    text: str = ""
    metadata: Metadata = field(default_factory=dict)
    vector: Optional[List[float]] = None


@dataclass
class CollectionInfo:
    name: str
    count: int
    dimension: int
    model_id: str
    vectors: str          # "model" or "external"
    index_type: str
    vectors_name: str = ""
    query_model: str = ""
    # Keyword search: the analyzer, BM25's parameters, the title field.
    analyzer: str = ""
    bm25_k1: Optional[float] = None      # None: the server's default
    bm25_b: Optional[float] = None
    title_field: str = ""
    title_weight: Optional[float] = None
    # How hybrid queries that name no fusion fuse.
    fusion: str = ""
    fusion_alpha: Optional[float] = None
    # Each document belongs to a tenant (Collection.with_tenant).
    multi_tenant: bool = False
    # The keyword index: documents, terms, postings, memory_bytes, snapshot_bytes.
    keyword: Dict[str, int] = field(default_factory=dict)


def _value(v: Any, where: str = "metadata") -> "pb.Value":
    """A proto Value from str, int, float, bool, a list of those, a dict (nested
    fields), a datetime (naive ones are taken as UTC) or a GeoPoint."""
    if isinstance(v, bool):
        return pb.Value(bool_value=v)
    if isinstance(v, int):
        return pb.Value(int_value=v)
    if isinstance(v, float):
        return pb.Value(double_value=v)
    if isinstance(v, str):
        return pb.Value(string_value=v)
    if isinstance(v, _dt.datetime):
        return pb.Value(datetime_micros=datetime_micros(v))
    if isinstance(v, GeoPoint):
        return pb.Value(geo_value=pb.GeoPoint(lat=v.lat, lon=v.lon))
    if isinstance(v, (list, tuple)):
        out = pb.Value(list_value=pb.ValueList())
        for i, item in enumerate(v):
            if isinstance(item, (list, tuple, Mapping, _dt.datetime, GeoPoint)):
                raise TypeError("%s[%d]: a list holds str, int, float and bool" % (where, i))
            out.list_value.values.append(_value(item, "%s[%d]" % (where, i)))
        return out
    if isinstance(v, Mapping):
        out = pb.Value(object_value=pb.ValueMap())
        for k, item in v.items():
            out.object_value.fields[str(k)].CopyFrom(_value(item, "%s.%s" % (where, k)))
        return out
    raise TypeError("%s: metadata values are str, int, float, bool, list, dict, datetime or "
                    "GeoPoint, not %s" % (where, type(v).__name__))


def _unvalue(v: "pb.Value") -> Any:
    kind = v.WhichOneof("kind")
    if kind == "list_value":
        return [_unvalue(x) for x in v.list_value.values]
    if kind == "object_value":
        return {k: _unvalue(x) for k, x in v.object_value.fields.items()}
    if kind == "datetime_micros":
        return _EPOCH + _dt.timedelta(microseconds=v.datetime_micros)
    if kind == "geo_value":
        return GeoPoint(v.geo_value.lat, v.geo_value.lon)
    return getattr(v, kind) if kind else None


def _status_code(n: int) -> grpc.StatusCode:
    """The grpc.StatusCode whose number is `n` (UNKNOWN if none)."""
    return next((c for c in grpc.StatusCode if c.value[0] == n), grpc.StatusCode.UNKNOWN)


def _metadata(m: Any) -> Metadata:
    return {k: _unvalue(v) for k, v in m.items()}


def _filter_json(f: Optional[Filter]) -> str:
    if f is None:
        return ""
    return f if isinstance(f, str) else json.dumps(f, default=filter_operand)


def _fields(m: Any) -> Dict[str, Any]:
    """A flat message's fields by name (every field, set or not)."""
    return {f.name: getattr(m, f.name) for f in m.DESCRIPTOR.fields}


def _optional(m: Any, name: str) -> Optional[float]:
    return getattr(m, name) if m.HasField(name) else None


def _info(i: "pb.CollectionInfo") -> CollectionInfo:
    s = i.spec
    return CollectionInfo(
        name=s.name, count=i.count, dimension=i.dimension, model_id=i.model_id,
        vectors="external" if s.vectors == pb.VECTOR_SOURCE_EXTERNAL else "model",
        index_type=i.index_type, vectors_name=s.vectors_name, query_model=s.query_model,
        analyzer=s.analyzer, bm25_k1=_optional(s, "bm25_k1"), bm25_b=_optional(s, "bm25_b"),
        title_field=s.title_field, title_weight=_optional(s, "title_weight"),
        fusion=s.fusion, fusion_alpha=_optional(s, "fusion_alpha"),
        multi_tenant=s.multi_tenant, keyword=_fields(i.keyword))


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _channel(address: str, tls_ca: Optional[str], tls_cert: Optional[str],
             tls_key: Optional[str]) -> grpc.Channel:
    options = [("grpc.max_send_message_length", 64 << 20),
               ("grpc.max_receive_message_length", 64 << 20)]
    if not (tls_ca or tls_cert or tls_key):
        return grpc.insecure_channel(address, options=options)
    if bool(tls_cert) != bool(tls_key):
        raise ValueError("tls_cert and tls_key go together")
    creds = grpc.ssl_channel_credentials(
        root_certificates=_read(tls_ca) if tls_ca else None,
        private_key=_read(tls_key) if tls_key else None,
        certificate_chain=_read(tls_cert) if tls_cert else None)
    return grpc.secure_channel(address, creds, options=options)


def _document(obj: Mapping[str, Any], where: str) -> "pb.Document":
    """A proto Document from {"id", "text", "metadata" (or "properties"), "vector",
    "vector_model_id"} (the last: what made the vector, as `neodb export` writes it)."""
    if not isinstance(obj, Mapping):
        raise TypeError("%s: expected a dict with id, text, metadata, vector" % where)
    unknown = set(obj) - {"id", "text", "metadata", "properties", "vector", "vector_model_id"}
    if unknown:
        raise ValueError("%s: unknown keys %s" % (where, sorted(unknown)))
    doc = pb.Document(id=str(obj.get("id") or ""), text=str(obj.get("text") or "").encode())
    meta = obj.get("metadata", obj.get("properties")) or {}
    for k, v in meta.items():
        doc.metadata[k].CopyFrom(_value(v, "%s: metadata %s" % (where, k)))
    vector = obj.get("vector")
    if vector is not None:
        doc.vector.extend(float(x) for x in vector)
    if obj.get("vector_model_id"):
        doc.vector_model_id = str(obj["vector_model_id"])
    return doc


class Client:
    """A connection to a neodb server. Use neodb.connect(); close() (or a
    `with` block) releases it. `channel` is the gRPC channel, for calls the
    client does not wrap."""

    def __init__(self, address: str, api_key: Optional[str] = None, timeout: float = 30.0,
                 tls_ca: Optional[str] = None, tls_cert: Optional[str] = None,
                 tls_key: Optional[str] = None):
        self.address = address
        self.timeout = timeout
        self.channel = _channel(address, tls_ca, tls_cert, tls_key)
        if api_key is None:
            api_key = os.environ.get("NEODB_API_KEY")
        # Sent with every call as `authorization: Bearer <key>` (for servers that
        # check one; a server without authentication ignores it).
        self._metadata = (("authorization", "Bearer " + api_key),) if api_key else ()
        self._collections = pb_grpc.CollectionsStub(self.channel)
        self._documents = pb_grpc.DocumentsStub(self.channel)
        self._search = pb_grpc.SearchStub(self.channel)
        self._embedding = pb_grpc.EmbeddingStub(self.channel)
        self._admin = pb_grpc.AdminStub(self.channel)
        self.collections = Collections(self)

    def _call(self, method: Callable, request: Any, timeout: Optional[float] = None) -> Any:
        try:
            return method(request, timeout=timeout or self.timeout, metadata=self._metadata)
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None

    def is_ready(self) -> bool:
        """True when the server answers a Stats call."""
        try:
            self._call(self._admin.Stats, pb.StatsRequest(), timeout=min(self.timeout, 5))
            return True
        except NeodbError:
            return False

    def stats(self) -> Dict[str, Any]:
        """The server's counters by name: model_id, dimension, collections,
        documents, … (the fields of neodb.v1.StatsResponse)."""
        return _fields(self._call(self._admin.Stats, pb.StatsRequest()))

    def embed(self, texts: Sequence[str], pooling: str = "mean",
              normalize: bool = False) -> Tuple[List[List[float]], str]:
        """The server's default model's vectors of `texts`, and that model's id.
        pooling: "mean" or "cls"; normalize: unit length (as /v1/embeddings,
        which is mean pooling, normalised)."""
        poolings = {"mean": pb.POOLING_MEAN, "cls": pb.POOLING_CLS}
        if pooling not in poolings:
            raise ValueError("pooling must be 'mean' or 'cls', not %r" % (pooling,))
        r = self._call(self._embedding.Embed,
                       pb.EmbedRequest(texts=[t.encode("utf-8") for t in texts],
                                       pooling=poolings[pooling], normalize=normalize))
        return [list(v.values) for v in r.vectors], r.model_id

    def close(self) -> None:
        self.channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class Collections:
    """client.collections: create, look up, list and delete collections."""

    def __init__(self, client: Client):
        self._c = client

    def create(self, name: str, *, vectors: str = "model", dimension: Optional[int] = None,
               vectors_name: str = "", query_model: str = "", index: str = "flat",
               metric: str = "cosine", pooling: str = "", query_prefix: str = "",
               document_prefix: str = "", overflow: str = "error", analyzer: str = "",
               bm25_k1: Optional[float] = None, bm25_b: Optional[float] = None,
               title_field: str = "", title_weight: Optional[float] = None,
               fusion: str = "", fusion_alpha: Optional[float] = None,
               multi_tenant: bool = False) -> "Collection":
        """Creates a collection and returns its handle.

        vectors: "model" (the server's model embeds every text; no vectors sent)
            or "external" (every object carries its vector; `dimension` required).
        vectors_name: external only: what the vectors are; stored as model id
            "external:<name>" (default: the collection name).
        query_model: external only: a model that embeds near_text queries
            ("default" = the server's; else a model directory on the server);
            the vectors must be that model's. Without one, near_text raises
            FAILED_PRECONDITION.
        analyzer: the keyword index's, english (default) | simple | none;
            bm25_k1, bm25_b: BM25's parameters (default 0.9, 0.4); title_field:
            a string metadata field also indexed for keyword search, with
            weight title_weight (default 1).
        fusion / fusion_alpha: how hybrid queries that name no fusion fuse
            (adaptive by default; an alpha alone means weighted).
        multi_tenant: each document belongs to a tenant, and every call acts
            for one: use collection.with_tenant(name) (README, Tenants).
        """
        for what, value, table in (("vectors", vectors, _SOURCES), ("metric", metric, _METRICS),
                                   ("pooling", pooling, _POOLING),
                                   ("overflow", overflow, _OVERFLOW)):
            if value not in table:
                raise ValueError("%s %r is not one of %s" % (what, value, ", ".join(table)))
        spec = pb.CollectionSpec(
            name=name, index=pb.IndexSpec(type=index), metric=_METRICS[metric],
            pooling=_POOLING[pooling], query_prefix=query_prefix,
            document_prefix=document_prefix, overflow=_OVERFLOW[overflow],
            vectors=_SOURCES[vectors], dimension=int(dimension or 0),
            vectors_name=vectors_name, query_model=query_model, analyzer=analyzer,
            title_field=title_field, fusion=fusion, multi_tenant=multi_tenant)
        for optional, value in (("bm25_k1", bm25_k1), ("bm25_b", bm25_b),
                                ("title_weight", title_weight), ("fusion_alpha", fusion_alpha)):
            if value is not None:
                setattr(spec, optional, value)
        self._c._call(self._c._collections.Create, pb.CreateCollectionRequest(spec=spec))
        return Collection(self._c, name)

    def get(self, name: str) -> "Collection":
        """A handle on `name` (no call: an unknown name fails on first use)."""
        return Collection(self._c, name)

    def exists(self, name: str) -> bool:
        try:
            self._c._call(self._c._collections.Describe, pb.DescribeCollectionRequest(name=name))
            return True
        except NeodbError as e:
            if e.code == grpc.StatusCode.NOT_FOUND:
                return False
            raise

    def delete(self, name: str) -> None:
        """Drops the collection and all its documents."""
        self._c._call(self._c._collections.Drop, pb.DropCollectionRequest(name=name))

    def list(self) -> List[CollectionInfo]:
        r = self._c._call(self._c._collections.List, pb.ListCollectionsRequest())
        return [_info(i) for i in r.collections]


class Collection:
    """A handle on one collection: insert, search, read, delete. On a
    multi-tenant collection every call acts for one tenant: take the handle
    with_tenant(name) first."""

    def __init__(self, client: Client, name: str, tenant: str = ""):
        self._c = client
        self.name = name
        self.tenant = tenant

    def with_tenant(self, tenant: str) -> "Collection":
        """This collection as tenant `tenant` sees it: its ids, its documents
        only (a multi-tenant collection; the server validates the name)."""
        return Collection(self._c, self.name, tenant)

    def tenants(self) -> Dict[str, int]:
        """Every tenant with documents and how many (an admin's call)."""
        r = self._c._call(self._c._documents.ListTenants,
                          pb.ListTenantsRequest(collection=self.name))
        return {t.tenant: t.documents for t in r.tenants}

    def delete_tenant(self) -> int:
        """Deletes every document of this handle's tenant; returns how many."""
        if not self.tenant:
            raise ValueError("delete_tenant needs a handle from with_tenant()")
        r = self._c._call(self._c._documents.Delete,
                          pb.DeleteRequest(collection=self.name, tenant=self.tenant,
                                           all_of_tenant=True))
        return r.deleted

    def info(self) -> CollectionInfo:
        r = self._c._call(self._c._collections.Describe,
                          pb.DescribeCollectionRequest(name=self.name))
        return _info(r.info)

    def set_fusion(self, fusion: str = "", alpha: Optional[float] = None) -> CollectionInfo:
        """Sets how hybrid queries that name no fusion fuse: adaptive | weighted
        | rrf (an alpha alone means weighted)."""
        req = pb.SetFusionRequest(name=self.name, fusion=fusion)
        if alpha is not None:
            req.alpha = alpha
        return _info(self._c._call(self._c._collections.SetFusion, req).info)

    def verify(self, full: bool = False) -> Dict[str, Any]:
        """The server's consistency check of this collection: stored, indexed,
        missing_from_index, stale_in_index, keyword_*, each stored vector
        against its index entry (vector_mismatches …) and a sample of texts
        embedded again (reembed_*; every text with `full`)
        (neodb.v1.VerifyResponse)."""
        return _fields(self._c._call(self._c._admin.Verify,
                                     pb.VerifyRequest(collection=self.name, full=full)))

    def insert_many(self, objects: Iterable[Mapping[str, Any]], batch_size: int = 64,
                    progress: Optional[Callable[[int], None]] = None) -> List[str]:
        """Upserts `objects` through the streaming Ingest RPC, `batch_size` a
        message; returns their ids in order (ids left out are generated here).

        Each object: {"id"?, "text"?, "metadata" (or "properties")?, "vector"?,
        "vector_model_id"?}. A model collection needs "text", and takes a
        "vector" only with "vector_model_id" equal to its model id (a line of
        `neodb export`); an external one needs "vector" (its dimension) and
        takes "text" optionally.
        progress(n) is called with the number of documents the server has
        committed so far, after every batch it acknowledges. On an error,
        batches acknowledged before it stay committed (the error says how many).
        """
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        docs = []
        for i, o in enumerate(objects):
            d = _document(o, "object #%d" % i)
            if not d.id:
                d.id = uuid.uuid4().hex
            docs.append(d)
        if not docs:
            return []

        def batches() -> Iterator["pb.IngestBatch"]:
            for i in range(0, len(docs), batch_size):
                yield pb.IngestBatch(collection=self.name, tenant=self.tenant,
                                     documents=docs[i:i + batch_size])

        timeout = max(self._c.timeout, 600)
        try:
            for ack in self._c._documents.Ingest(batches(), timeout=timeout,
                                                 metadata=self._c._metadata):
                if progress:
                    progress(ack.documents)
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None
        return [d.id for d in docs]

    def upsert(self, objects: Iterable[Mapping[str, Any]]) -> List[str]:
        """Upserts `objects` (as in insert_many) in one unary Upsert call, all
        or none; returns their ids in order (ids left out are generated by the
        server). For a few documents; insert_many streams many."""
        docs = [_document(o, "object #%d" % i) for i, o in enumerate(objects)]
        r = self._c._call(self._c._documents.Upsert,
                          pb.UpsertRequest(collection=self.name, tenant=self.tenant,
                                           documents=docs))
        return list(r.ids)

    def _hits(self, r: Any, include_vector: bool, explain: bool = False) -> List[Hit]:
        def why(h: Any) -> Dict[str, Any]:
            return dict(_fields(h.explain), mode=r.mode, alpha=r.alpha)
        return [Hit(id=h.id, score=h.score, text=h.text.decode("utf-8"),
                    metadata=_metadata(h.metadata),
                    vector=list(h.vector) if include_vector else None,
                    explain=why(h) if explain else None) for h in r.hits]

    def _answer(self, r: Any, include_vector: bool, explain: bool, grouped: bool) -> Any:
        if not grouped:
            return self._hits(r, include_vector, explain)
        return [HitGroup(value=_unvalue(g.value), hits=self._hits(g, include_vector, explain))
                for g in r.groups]

    @staticmethod
    def _features(req: Any, score_threshold: Optional[float], offset: int,
                  group_by: Optional[str], groups: int, group_size: int) -> None:
        """Threshold, offset and group-by on a search request (unsharded
        collections; a sharded one answers FAILED_PRECONDITION)."""
        if score_threshold is not None:
            req.score_threshold = score_threshold
        req.offset = offset
        if group_by is not None:
            req.group_by.CopyFrom(pb.GroupBy(field=group_by, groups=groups,
                                             group_size=group_size))

    def near_text(self, query: str, limit: int = 10, filter: Optional[Filter] = None,
                  include_vector: bool = False, include_text: bool = True,
                  include_metadata: bool = True, instruction: Optional[str] = None,
                  ef_search: int = 0, nprobe: int = 0, mode: str = "", fusion: str = "",
                  alpha: Optional[float] = None, explain: bool = False,
                  score_threshold: Optional[float] = None, offset: int = 0,
                  group_by: Optional[str] = None, groups: int = 10,
                  group_size: int = 1) -> Any:
        """The `limit` documents best matching `query` (the vector leg embeds it
        with the collection's model: FAILED_PRECONDITION for external vectors
        without a query model).

        mode: hybrid (the server's default) | keyword | vector; fusion (hybrid):
        adaptive | weighted | rrf (default: the collection's); alpha: the vector
        share of weighted fusion (alone it implies weighted); explain: each
        hit's `explain` holds its per-leg ranks and scores. score_threshold:
        only hits scoring at least this (the mode's final score); offset: skip
        that many hits first (offset + limit <= 1000); group_by=FIELD: a list
        of HitGroup instead (`groups` groups of up to `group_size` hits; hits
        lacking the field are skipped)."""
        req = pb.NearTextRequest(collection=self.name, tenant=self.tenant,
                                 query=query.encode("utf-8"), k=limit,
                                 filter_json=_filter_json(filter), include_text=include_text,
                                 include_metadata=include_metadata, include_vector=include_vector,
                                 ef_search=ef_search, nprobe=nprobe, mode=mode, fusion=fusion,
                                 explain=explain)
        if instruction is not None:
            req.instruction = instruction
        if alpha is not None:
            req.alpha = alpha
        self._features(req, score_threshold, offset, group_by, groups, group_size)
        return self._answer(self._c._call(self._c._search.NearText, req), include_vector,
                            explain, group_by is not None)

    def near_vector(self, vector: Sequence[float], limit: int = 10,
                    filter: Optional[Filter] = None, include_vector: bool = False,
                    include_text: bool = True, include_metadata: bool = True,
                    ef_search: int = 0, nprobe: int = 0,
                    score_threshold: Optional[float] = None, offset: int = 0,
                    group_by: Optional[str] = None, groups: int = 10,
                    group_size: int = 1) -> Any:
        """The `limit` documents nearest to `vector` (the collection's
        dimension); score_threshold, offset and group_by as in near_text."""
        req = pb.NearVectorRequest(collection=self.name, tenant=self.tenant,
                                   vector=[float(x) for x in vector],
                                   k=limit, filter_json=_filter_json(filter),
                                   include_text=include_text, include_metadata=include_metadata,
                                   include_vector=include_vector, ef_search=ef_search,
                                   nprobe=nprobe)
        self._features(req, score_threshold, offset, group_by, groups, group_size)
        return self._answer(self._c._call(self._c._search.NearVector, req), include_vector,
                            False, group_by is not None)

    def recommend(self, positive: Sequence[Union[str, Sequence[float]]],
                  negative: Sequence[Union[str, Sequence[float]]] = (),
                  negative_weight: Optional[float] = None, limit: int = 10,
                  filter: Optional[Filter] = None, include_vector: bool = False,
                  include_text: bool = True, include_metadata: bool = True,
                  score_threshold: Optional[float] = None, offset: int = 0,
                  group_by: Optional[str] = None, groups: int = 10,
                  group_size: int = 1) -> Any:
        """More like `positive`, less like `negative`: each example a document
        id of this collection or a raw vector. The query vector is
        P + w * (P - N), P and N the examples' mean vectors, w =
        negative_weight (default 1: Qdrant's average_vector). The example
        documents are never hits; unknown ids raise NOT_FOUND naming them."""
        req = pb.RecommendRequest(collection=self.name, tenant=self.tenant, k=limit,
                                  filter_json=_filter_json(filter), include_text=include_text,
                                  include_metadata=include_metadata,
                                  include_vector=include_vector)
        for examples, ids, vectors in ((positive, req.positive_ids, req.positive_vectors),
                                       (negative, req.negative_ids, req.negative_vectors)):
            for e in examples:
                if isinstance(e, str):
                    ids.append(e)
                else:
                    vectors.add(values=[float(x) for x in e])
        if negative_weight is not None:
            req.negative_weight = negative_weight
        self._features(req, score_threshold, offset, group_by, groups, group_size)
        return self._answer(self._c._call(self._c._search.Recommend, req), include_vector,
                            False, group_by is not None)

    def batch_near_text(self, queries: Sequence[Union[str, Mapping[str, Any]]],
                        limit: int = 10, mode: str = "", include_text: bool = True,
                        include_metadata: bool = True) -> List[Union[List[Hit], NeodbError]]:
        """Many queries in one call (at most 256), the texts embedded as one
        batch. Each query is a string or a dict of near_text's keywords (query,
        limit, filter, mode, fusion, alpha, instruction, score_threshold,
        offset). The answers are in order: a list of hits, or the NeodbError
        of that query alone (the others are still answered)."""
        req = pb.BatchNearTextRequest(collection=self.name, tenant=self.tenant)
        for q in queries:
            q = {"query": q} if isinstance(q, str) else dict(q)
            one = req.queries.add(query=q["query"].encode("utf-8"), k=q.get("limit", limit),
                                  filter_json=_filter_json(q.get("filter")),
                                  mode=q.get("mode", mode), fusion=q.get("fusion", ""),
                                  include_text=include_text,
                                  include_metadata=include_metadata)
            if q.get("alpha") is not None:
                one.alpha = q["alpha"]
            if q.get("instruction") is not None:
                one.instruction = q["instruction"]
            if q.get("score_threshold") is not None:
                one.score_threshold = q["score_threshold"]
            one.offset = q.get("offset", 0)
        r = self._c._call(self._c._search.BatchNearText, req)
        out: List[Union[List[Hit], NeodbError]] = []
        for result in r.results:
            if result.code != 0:
                out.append(NeodbError(_status_code(result.code), result.message))
            else:
                out.append(self._hits(result.response, False))
        return out

    def get(self, ids: Union[str, Sequence[str]],
            include_vector: bool = False) -> Union[Optional[Document], List[Optional[Document]]]:
        """One id: its Document or None. A list of ids: a list of the same
        length, None where missing."""
        one = isinstance(ids, str)
        wanted = [ids] if one else list(ids)
        r = self._c._call(self._c._documents.Get,
                          pb.GetRequest(collection=self.name, tenant=self.tenant, ids=wanted,
                                        include_vector=include_vector))
        found = {d.id: Document(id=d.id, text=d.text.decode("utf-8"),
                                metadata=_metadata(d.metadata),
                                vector=list(d.vector) if include_vector else None)
                 for d in r.documents}
        out = [found.get(i) for i in wanted]
        return out[0] if one else out

    def delete(self, ids: Union[str, Sequence[str], None] = None,
               filter: Optional[Filter] = None) -> int:
        """Deletes by id, or every document `filter` accepts (one of the
        two); returns how many were deleted."""
        wanted = [] if ids is None else [ids] if isinstance(ids, str) else list(ids)
        r = self._c._call(self._c._documents.Delete,
                          pb.DeleteRequest(collection=self.name, tenant=self.tenant, ids=wanted,
                                           filter_json=_filter_json(filter)))
        return r.deleted

    def count(self, filter: Optional[Filter] = None) -> int:
        """How many documents the collection holds, or `filter` accepts."""
        r = self._c._call(self._c._documents.Count,
                          pb.CountRequest(collection=self.name, tenant=self.tenant,
                                          filter_json=_filter_json(filter)))
        return r.count

    def update_metadata(self, ids: Union[str, Sequence[str], None] = None,
                        filter: Optional[Filter] = None, set: Optional[Metadata] = None,
                        remove: Sequence[str] = (), replace: bool = False) -> Dict[str, Any]:
        """Changes the metadata of the documents with `ids`, or of those
        `filter` accepts, keeping texts and vectors. Merge (default): removes
        the `remove` fields ("author.name" for a nested one), then sets the
        fields of `set`, merging dicts key by key; replace=True: the metadata
        becomes `set`. Returns {"matched", "updated", "missing_ids"}."""
        wanted = [] if ids is None else [ids] if isinstance(ids, str) else list(ids)
        req = pb.UpdateMetadataRequest(collection=self.name, tenant=self.tenant, ids=wanted,
                                       filter_json=_filter_json(filter), remove=list(remove),
                                       mode=(pb.UpdateMetadataRequest.REPLACE if replace
                                             else pb.UpdateMetadataRequest.MERGE))
        for k, v in (set or {}).items():
            req.metadata[str(k)].CopyFrom(_value(v, str(k)))
        r = self._c._call(self._c._documents.UpdateMetadata, req)
        return {"matched": r.matched, "updated": r.updated, "missing_ids": list(r.missing_ids)}

    def iterate(self, page_size: int = 100, include_vector: bool = False) -> Iterator[Document]:
        """Every document, in id order, fetched a page at a time."""
        token = ""
        while True:
            r = self._c._call(self._c._documents.List,
                              pb.ListDocumentsRequest(collection=self.name, tenant=self.tenant,
                                                      page_size=page_size,
                                                      page_token=token, include_text=True,
                                                      include_metadata=True,
                                                      include_vector=include_vector))
            for d in r.documents:
                yield Document(id=d.id, text=d.text.decode("utf-8"),
                               metadata=_metadata(d.metadata),
                               vector=list(d.vector) if include_vector else None)
            token = r.next_page_token
            if not token:
                return

    def __len__(self) -> int:
        return self.count() if self.tenant else self.info().count


def connect(address: str, api_key: Optional[str] = None, timeout: float = 30.0,
            tls_ca: Optional[str] = None, tls_cert: Optional[str] = None,
            tls_key: Optional[str] = None) -> Client:
    """A client of the server at `address` ("host:port"). Every call carries a
    deadline of `timeout` seconds. No call is made here.

    api_key (default: $NEODB_API_KEY; "" sends none) goes with every call to a
    server started with --key-file. tls_ca (a PEM file) turns on TLS; tls_cert
    and tls_key (PEM files) add a client certificate for a server with
    --tls-client-ca."""
    return Client(address, api_key=api_key, timeout=timeout, tls_ca=tls_ca, tls_cert=tls_cert,
                  tls_key=tls_key)

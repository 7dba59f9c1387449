"""A tiny Python client for neodb, generated from proto/neodb/v1/neodb.proto.

It knows only the .proto: the stubs (neodb/v1/neodb_pb2*.py) are generated at
build time by protoc --python_out and grpc_python_plugin into
<build>/proto/python. Point NEODB_PYTHON_PROTO_DIR there (or pass proto_dir).
Texts travel as UTF-8 bytes (see Document.text in the .proto); this client
encodes and decodes them. Needs Debian's python3-grpcio and python3-protobuf (/usr/bin/python3).

    c = NeodbClient("127.0.0.1:50051")
    c.create_collection("docs")
    c.upsert("docs", [{"id": "a", "text": "hello", "metadata": {"year": 2024}}])
    for hit in c.search("docs", "hello", k=5, filter={"field": "year", "gte": 2020}): ...

Filters are the JSON grammar of the CLI's --filter (db/filter.h), as a dict or a
JSON string, sent as NearTextRequest.filter_json and parsed by the server's one
filter parser:
    {"field": "year", "gte": 2020, "lt": 2024}    ops: eq ne lt lte gt gte in exists
    {"and": [...]}, {"or": [...]}, {"not": {...}}
"""

import json
import os
import sys


def _require(module, package):
    """Imports `module`, or fails naming the Debian package and the Python
    that lacks it: a python3 first on PATH (a virtualenv, a conda or
    /usr/local build) may not see Debian's modules."""
    import importlib
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ImportError(
            "neodb_client needs %s (%s), which %s cannot import (%s); "
            "run it with /usr/bin/python3 or `apt-get install %s`"
            % (module, package, sys.executable, e, package)) from e


def _import_stubs(proto_dir=None):
    _require("google.protobuf", "python3-protobuf")
    _require("grpc", "python3-grpcio")
    proto_dir = proto_dir or os.environ.get("NEODB_PYTHON_PROTO_DIR")
    if proto_dir and proto_dir not in sys.path:
        sys.path.insert(0, proto_dir)
    try:
        from neodb.v1 import neodb_pb2, neodb_pb2_grpc  # noqa: E402
    except ImportError as e:
        raise ImportError(
            "the generated stubs neodb/v1/neodb_pb2*.py were not found (%s): build neodb "
            "and set NEODB_PYTHON_PROTO_DIR=<build>/proto/python or pass proto_dir" % e) from e
    return neodb_pb2, neodb_pb2_grpc


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def _key_interceptor(grpc, api_key):
    """A client interceptor that sends `authorization: Bearer <api_key>` with
    every call, of every kind (unary and streaming)."""

    class _Details(grpc.ClientCallDetails):
        def __init__(self, d, metadata):
            self.method, self.timeout, self.credentials = d.method, d.timeout, d.credentials
            self.wait_for_ready = getattr(d, "wait_for_ready", None)
            self.compression = getattr(d, "compression", None)
            self.metadata = metadata

    class _Interceptor(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor,
                       grpc.StreamUnaryClientInterceptor, grpc.StreamStreamClientInterceptor):
        def _details(self, d):
            md = list(d.metadata or []) + [("authorization", "Bearer " + api_key)]
            return _Details(d, md)

        def intercept_unary_unary(self, cont, d, request):
            return cont(self._details(d), request)

        def intercept_unary_stream(self, cont, d, request):
            return cont(self._details(d), request)

        def intercept_stream_unary(self, cont, d, it):
            return cont(self._details(d), it)

        def intercept_stream_stream(self, cont, d, it):
            return cont(self._details(d), it)

    return _Interceptor()


class NeodbClient:
    """Every call carries a deadline (timeout seconds, default 30).

    api_key (default: $NEODB_API_KEY) is sent with every call to a server
    started with --key-file. tls_ca (a PEM file) turns on TLS; tls_cert and
    tls_key add a client certificate for a server with --tls-client-ca."""

    def __init__(self, address, timeout=30.0, proto_dir=None, api_key=None, tls_ca=None,
                 tls_cert=None, tls_key=None):
        self.pb, grpc_mod = _import_stubs(proto_dir)
        grpc = _require("grpc", "python3-grpcio")
        self.grpc = grpc
        options = [("grpc.max_send_message_length", 64 << 20),
                   ("grpc.max_receive_message_length", 64 << 20)]
        if tls_ca or tls_cert or tls_key:
            if bool(tls_cert) != bool(tls_key):
                raise ValueError("tls_cert and tls_key go together")
            creds = grpc.ssl_channel_credentials(
                root_certificates=_read(tls_ca) if tls_ca else None,
                private_key=_read(tls_key) if tls_key else None,
                certificate_chain=_read(tls_cert) if tls_cert else None)
            self.channel = grpc.secure_channel(address, creds, options=options)
        else:
            self.channel = grpc.insecure_channel(address, options=options)
        api_key = api_key if api_key is not None else os.environ.get("NEODB_API_KEY")
        if api_key:
            self.channel = grpc.intercept_channel(self.channel, _key_interceptor(grpc, api_key))
        self.timeout = timeout
        self.collections = grpc_mod.CollectionsStub(self.channel)
        self.documents = grpc_mod.DocumentsStub(self.channel)
        self.search_stub = grpc_mod.SearchStub(self.channel)
        self.embedding = grpc_mod.EmbeddingStub(self.channel)
        self.admin = grpc_mod.AdminStub(self.channel)

    def close(self):
        self.channel.close()

    # --- values and filters ---------------------------------------------------
    def value(self, v):
        if isinstance(v, bool):
            return self.pb.Value(bool_value=v)
        if isinstance(v, int):
            return self.pb.Value(int_value=v)
        if isinstance(v, float):
            return self.pb.Value(double_value=v)
        if isinstance(v, str):
            return self.pb.Value(string_value=v)
        raise TypeError("metadata values are str, int, float or bool, not %r" % type(v))

    @staticmethod
    def unvalue(v):
        return getattr(v, v.WhichOneof("kind")) if v.WhichOneof("kind") else None

    @staticmethod
    def filter_json(spec):
        """The filter as the server parses it: a JSON string as is, a dict dumped."""
        return spec if isinstance(spec, str) else json.dumps(spec)

    def _doc(self, d):
        doc = self.pb.Document(id=d.get("id", ""), text=d["text"].encode())
        for k, v in d.get("metadata", {}).items():
            doc.metadata[k].CopyFrom(self.value(v))
        return doc

    # --- calls ------------------------------------------------------------------
    def create_collection(self, name, index="flat", query_prefix="", document_prefix="",
                          overflow="error", analyzer="", bm25_k1=None, bm25_b=None,
                          title_field="", title_weight=None, fusion="", fusion_alpha=None):
        """analyzer: english (default) | simple | none; bm25_k1, bm25_b: BM25's
        parameters (default 0.9, 0.4); title_field: a string metadata field also
        indexed for keyword search, with weight title_weight (default 1);
        fusion / fusion_alpha: how hybrid queries that name no fusion fuse
        (adaptive by default; an alpha alone means weighted)."""
        spec = self.pb.CollectionSpec(
            name=name, index=self.pb.IndexSpec(type=index), query_prefix=query_prefix,
            document_prefix=document_prefix,
            overflow=self.pb.OVERFLOW_CHUNK if overflow == "chunk" else self.pb.OVERFLOW_ERROR,
            analyzer=analyzer, title_field=title_field)
        if bm25_k1 is not None:
            spec.bm25_k1 = bm25_k1
        if bm25_b is not None:
            spec.bm25_b = bm25_b
        if title_weight is not None:
            spec.title_weight = title_weight
        spec.fusion = fusion
        if fusion_alpha is not None:
            spec.fusion_alpha = fusion_alpha
        return self.collections.Create(self.pb.CreateCollectionRequest(spec=spec),
                                       timeout=self.timeout).info

    def describe(self, name):
        return self.collections.Describe(self.pb.DescribeCollectionRequest(name=name),
                                         timeout=self.timeout).info

    def list_collections(self):
        return list(self.collections.List(self.pb.ListCollectionsRequest(),
                                          timeout=self.timeout).collections)

    def set_fusion(self, name, fusion="", alpha=None):
        """The collection's default fusion for hybrid queries that name none."""
        req = self.pb.SetFusionRequest(name=name, fusion=fusion)
        if alpha is not None:
            req.alpha = alpha
        return self.collections.SetFusion(req, timeout=self.timeout).info

    def drop(self, name):
        self.collections.Drop(self.pb.DropCollectionRequest(name=name), timeout=self.timeout)

    def upsert(self, collection, docs):
        req = self.pb.UpsertRequest(collection=collection, documents=[self._doc(d) for d in docs])
        return list(self.documents.Upsert(req, timeout=self.timeout).ids)

    def ingest(self, collection, docs, batch=64):
        """Client-streaming bulk ingest; returns (documents, batches, tokens)."""
        def batches():
            for i in range(0, len(docs), batch):
                yield self.pb.IngestBatch(collection=collection,
                                          documents=[self._doc(d) for d in docs[i:i + batch]])
        r = self.documents.BulkIngest(batches(), timeout=max(self.timeout, 600))
        return r.documents, r.batches, r.tokens

    def get(self, collection, ids):
        r = self.documents.Get(self.pb.GetRequest(collection=collection, ids=ids),
                               timeout=self.timeout)
        return ({d.id: {"text": d.text.decode(),
                        "metadata": {k: self.unvalue(v) for k, v in d.metadata.items()}}
                 for d in r.documents}, list(r.missing_ids))

    def delete(self, collection, ids):
        return self.documents.Delete(self.pb.DeleteRequest(collection=collection, ids=ids),
                                     timeout=self.timeout).deleted

    def search(self, collection, query, k=10, filter=None, instruction=None, ef_search=0,
               nprobe=0, mode="", fusion="", alpha=None, explain=False, include_text=True):
        """mode: hybrid (the server's default) | keyword | vector; fusion (hybrid):
        adaptive (default) | weighted | rrf; alpha: the vector share of weighted
        fusion (alone it implies weighted); explain: each hit gets an "explain"
        dict (per-leg ranks and scores, fused score, the mode and alpha used)."""
        req = self.pb.NearTextRequest(collection=collection, query=query.encode(), k=k,
                                      include_text=include_text,
                                      include_metadata=include_text,
                                      ef_search=ef_search, nprobe=nprobe, mode=mode,
                                      fusion=fusion, explain=explain)
        if alpha is not None:
            req.alpha = alpha
        if filter:
            req.filter_json = self.filter_json(filter)
        if instruction is not None:
            req.instruction = instruction
        r = self.search_stub.NearText(req, timeout=self.timeout)
        hits = []
        for h in r.hits:
            hit = {"id": h.id, "score": h.score, "text": h.text.decode(),
                   "metadata": {k: self.unvalue(v) for k, v in h.metadata.items()}}
            if explain:
                e = h.explain
                hit["explain"] = {"keyword_rank": e.keyword_rank,
                                  "keyword_score": e.keyword_score,
                                  "vector_rank": e.vector_rank, "vector_score": e.vector_score,
                                  "fused_score": e.fused_score, "mode": r.mode,
                                  "alpha": r.alpha}
            hits.append(hit)
        return hits

    def search_vector(self, collection, vector, k=10, filter=None, ef_search=0, nprobe=0):
        req = self.pb.NearVectorRequest(collection=collection, vector=vector, k=k,
                                        ef_search=ef_search, nprobe=nprobe)
        if filter:
            req.filter_json = self.filter_json(filter)
        r = self.search_stub.NearVector(req, timeout=self.timeout)
        return [(h.id, h.score) for h in r.hits]

    def embed(self, texts):
        r = self.embedding.Embed(self.pb.EmbedRequest(texts=[t.encode() for t in texts]), timeout=self.timeout)
        return [list(v.values) for v in r.vectors], r.model_id

    def stats(self):
        return self.admin.Stats(self.pb.StatsRequest(), timeout=self.timeout)

    def verify(self, collection):
        return self.admin.Verify(self.pb.VerifyRequest(collection=collection),
                                 timeout=self.timeout)

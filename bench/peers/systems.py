"""bench/peers/systems.py: one adapter per system, the same five operations.

Each adapter: ingest(ids, vectors, buckets) returns once every vector is
searchable through the system's ANN index (index build included);
ladder() lists search settings from cheapest to dearest; search(q, k, setting,
flt) answers the ids of the top k (flt: None or an upper bound on `bucket`,
bucket < flt); new_client() gives a per-thread handle for the 8-client run;
mem_pids() names the processes that hold the data (empty: this process);
data_dir is measured with du after the load.
"""
import os
import shutil
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
EF_LADDER = [16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024]


class NeodbSystem:
    name = "neodb"
    kind = "server"

    def __init__(self, work, cache):
        sys.path.insert(0, HERE)
        import data
        data.stubs(cache)
        binary = os.environ.get("NEODB_BIN", os.path.join(ROOT, "build", "tools", "neodb", "neodb"))
        self.srv = data.NeodbServer(binary, os.path.join(work, "data"), log=os.path.join(work, "serve.log"))
        self.pb, self.rpc = self.srv.pb, self.srv.rpc
        self.data_dir = os.path.join(work, "data")
        self.config = "HNSW M=32 efConstruction=40 (neodb defaults), cosine, external vectors, BulkIngest 1000/batch"
        pb = self.pb
        spec = pb.CollectionSpec(name="peers", index=pb.IndexSpec(type="hnsw"), metric=pb.METRIC_COSINE,
                                 vectors=pb.VECTOR_SOURCE_EXTERNAL, dimension=384, analyzer="none")
        self.rpc.CollectionsStub(self.srv.channel).Create(pb.CreateCollectionRequest(spec=spec), timeout=60)
        self.search_stub = self.rpc.SearchStub(self.srv.channel)

    def ingest(self, ids, vecs, buckets):
        pb = self.pb

        def batches():
            for s in range(0, len(ids), 1000):
                yield pb.IngestBatch(collection="peers", documents=[
                    pb.Document(id=str(ids[i]), vector=vecs[i].tolist(),
                                metadata={"bucket": pb.Value(int_value=int(buckets[i]))})
                    for i in range(s, min(s + 1000, len(ids)))])
        r = self.rpc.DocumentsStub(self.srv.channel).BulkIngest(batches(), timeout=3600)
        assert r.documents == len(ids), r
        coll = self.rpc.CollectionsStub(self.srv.channel)
        while coll.Describe(pb.DescribeCollectionRequest(name="peers")).info.index_size < len(ids):
            time.sleep(0.05)

    def after_load(self):
        # The index snapshot goes to disk too (a restart reads it back).
        self.rpc.AdminStub(self.srv.channel).Snapshot(self.pb.SnapshotRequest(), timeout=600)
        return self.rpc.CollectionsStub(self.srv.channel).Describe(
            self.pb.DescribeCollectionRequest(name="peers")).info.index_type

    def ladder(self):
        return EF_LADDER

    def new_client(self):
        import grpc
        ch = grpc.insecure_channel(self.srv.addr)
        return self.rpc.SearchStub(ch)

    def search(self, q, k, ef, flt=None, client=None):
        stub = client or self.search_stub
        req = self.pb.NearVectorRequest(collection="peers", vector=q.tolist(), k=k, ef_search=ef)
        if flt is not None:
            req.filter_json = '{"field":"bucket","lt":%d}' % flt
        return [int(h.id) for h in stub.NearVector(req, timeout=60).hits]

    def mem_pids(self):
        return [self.srv.p.pid]

    def close(self):
        self.srv.stop()


class FaissSystem:
    """The index library itself (PyPI faiss-cpu, its own AVX2/AVX-512 kernels),
    with neodb's HNSW parameters; no storage, so disk = the written index."""
    name = "faiss-cpu"
    kind = "library"

    def __init__(self, work, cache):
        import faiss
        self.faiss = faiss
        self.work = work
        self.data_dir = os.path.join(work, "index")
        os.makedirs(self.data_dir)
        self.index = faiss.IndexHNSWFlat(384, 32, faiss.METRIC_INNER_PRODUCT)
        self.index.hnsw.efConstruction = 40
        self.config = "IndexHNSWFlat M=32 efConstruction=40 (neodb's parameters), inner product on unit vectors; " \
                      "SIMD: " + faiss.get_compile_options()

    def ingest(self, ids, vecs, buckets):
        self.index.add(np.ascontiguousarray(vecs))
        self.buckets = np.asarray(buckets)
        self.sel = {}

    def after_load(self):
        self.faiss.write_index(self.index, os.path.join(self.data_dir, "hnsw.faiss"))
        return "IndexHNSWFlat"

    def ladder(self):
        return EF_LADDER

    def new_client(self):
        return None

    def search(self, q, k, ef, flt=None, client=None):
        faiss = self.faiss
        if flt is None:
            p = faiss.SearchParametersHNSW(efSearch=ef)
        else:
            if flt not in self.sel:
                allowed = np.nonzero(self.buckets < flt)[0].astype(np.int64)
                self.sel[flt] = (faiss.IDSelectorBatch(allowed), allowed)
            p = faiss.SearchParametersHNSW(efSearch=ef, sel=self.sel[flt][0])
        _, I = self.index.search(q.reshape(1, -1), k, params=p)
        return [int(i) for i in I[0] if i >= 0]

    def mem_pids(self):
        return []

    def close(self):
        pass


class ChromaSystem:
    name = "chromadb"
    kind = "embedded"

    def __init__(self, work, cache):
        import chromadb
        self.data_dir = os.path.join(work, "chroma")
        self.client = chromadb.PersistentClient(path=self.data_dir)
        self.coll = self.client.create_collection(
            "peers", configuration={"hnsw": {"space": "cosine"}})
        self.config = "PersistentClient, HNSW defaults (M=16, ef_construction=100), cosine"
        self.ef = None

    def ingest(self, ids, vecs, buckets):
        step = min(self.client.get_max_batch_size(), 5000)
        for s in range(0, len(ids), step):
            e = min(s + step, len(ids))
            self.coll.add(ids=[str(i) for i in ids[s:e]], embeddings=vecs[s:e],
                          metadatas=[{"bucket": int(b)} for b in buckets[s:e]])
        while self.coll.count() < len(ids):
            time.sleep(0.05)

    def after_load(self):
        return "HNSW"

    def ladder(self):
        return EF_LADDER

    def _set(self, ef):
        if ef != self.ef:
            self.coll.modify(configuration={"hnsw": {"ef_search": ef}})
            self.ef = ef

    def new_client(self):
        return None

    def search(self, q, k, ef, flt=None, client=None):
        self._set(ef)
        where = None if flt is None else {"bucket": {"$lt": flt}}
        r = self.coll.query(query_embeddings=[q], n_results=k, where=where, include=[])
        return [int(i) for i in r["ids"][0]]

    def mem_pids(self):
        return []

    def close(self):
        pass


class LanceSystem:
    name = "lancedb"
    kind = "embedded"

    def __init__(self, work, cache):
        import lancedb
        self.data_dir = os.path.join(work, "lance")
        self.db = lancedb.connect(self.data_dir)
        self.table = None

    def ingest(self, ids, vecs, buckets):
        import pyarrow as pa
        n = len(ids)
        step = 20000
        for s in range(0, n, step):
            e = min(s + step, n)
            flat = pa.array(np.ascontiguousarray(vecs[s:e]).reshape(-1), type=pa.float32())
            t = pa.table({"id": pa.array(np.asarray(ids[s:e], dtype=np.int64)),
                          "bucket": pa.array(np.asarray(buckets[s:e], dtype=np.int32)),
                          "vector": pa.FixedSizeListArray.from_arrays(flat, 384)})
            if self.table is None:
                self.table = self.db.create_table("peers", t)
            else:
                self.table.add(t)
        parts = max(1, int(round(np.sqrt(n))))
        self.table.create_index(metric="cosine", vector_column_name="vector", index_type="IVF_PQ",
                                num_partitions=parts, num_sub_vectors=48)
        self.table.create_scalar_index("bucket")
        self.config = "IVF_PQ num_partitions=sqrt(n)=%d num_sub_vectors=48, cosine; btree on bucket; " \
                      "search tuned by nprobes and refine_factor" % parts

    def after_load(self):
        return "IVF_PQ"

    def ladder(self):
        return [(10, None), (20, None), (20, 5), (40, 5), (40, 10), (80, 10), (80, 20), (160, 20),
                (160, 50), (320, 50)]

    def new_client(self):
        return None

    def search(self, q, k, setting, flt=None, client=None):
        nprobes, refine = setting
        b = self.table.search(q, vector_column_name="vector").distance_type("cosine").limit(k).nprobes(nprobes)
        if refine:
            b = b.refine_factor(refine)
        if flt is not None:
            b = b.where("bucket < %d" % flt, prefilter=True)
        if hasattr(b, "disable_scoring_autoprojection"):
            b = b.disable_scoring_autoprojection()
        return [int(i) for i in b.select(["id"]).to_arrow()["id"].to_pylist()]

    def mem_pids(self):
        return []

    def close(self):
        pass


class MilvusLiteSystem:
    name = "milvus-lite"
    kind = "embedded"

    def __init__(self, work, cache):
        from pymilvus import MilvusClient, DataType
        self.data_dir = os.path.join(work, "milvus.db")
        self.client = MilvusClient(self.data_dir)
        schema = self.client.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field("id", DataType.INT64, is_primary=True)
        schema.add_field("vec", DataType.FLOAT_VECTOR, dim=384)
        schema.add_field("bucket", DataType.INT32)
        self.client.create_collection("peers", schema=schema)
        self.config = "pymilvus MilvusClient on a .db path; HNSW M=16 efConstruction=64, COSINE; " \
                      "index on bucket (INVERTED)"

    def ingest(self, ids, vecs, buckets):
        step = 5000
        for s in range(0, len(ids), step):
            e = min(s + step, len(ids))
            self.client.insert("peers", [{"id": int(ids[i]), "vec": vecs[i].tolist(),
                                          "bucket": int(buckets[i])} for i in range(s, e)])
        self.client.flush("peers")
        ip = self.client.prepare_index_params()
        ip.add_index(field_name="vec", index_type="HNSW", metric_type="COSINE",
                     params={"M": 16, "efConstruction": 64})
        try:
            ip.add_index(field_name="bucket", index_type="INVERTED")
        except Exception:
            pass
        self.client.create_index("peers", ip)
        self.client.load_collection("peers")

    def after_load(self):
        try:
            d = self.client.describe_index("peers", "vec")
            return str(d.get("index_type", d))
        except Exception as e:  # noqa
            return "HNSW (describe_index: %s)" % e

    def ladder(self):
        return EF_LADDER

    def new_client(self):
        return None

    def search(self, q, k, ef, flt=None, client=None):
        r = self.client.search("peers", data=[q.tolist()], limit=k, anns_field="vec",
                               search_params={"metric_type": "COSINE", "params": {"ef": ef}},
                               filter="" if flt is None else "bucket < %d" % flt, output_fields=[])
        return [int(h["id"]) for h in r[0]]

    def mem_pids(self):
        return []

    def close(self):
        try:
            self.client.close()
        except Exception:
            pass


class PgvectorSystem:
    """PostgreSQL + pgvector from the PyPI wheel pgserver (Debian 12 has no
    postgresql-15-pgvector); started here on a temp dir and a free port."""
    name = "pgvector"
    kind = "server"

    def __init__(self, work, cache):
        import pgserver
        import psycopg
        sys.path.insert(0, HERE)
        import data
        self.bin = os.path.join(os.path.dirname(pgserver.__file__), "pginstall", "bin")
        self.data_dir = os.path.join(work, "pgdata")
        self.port = data.free_port()
        self.asuser = []
        if os.geteuid() == 0:  # postgres refuses root: run it as nobody
            os.chmod(work, 0o777)
            self.asuser = ["runuser", "-u", "nobody", "--"]
        os.makedirs(self.data_dir, mode=0o700)
        if self.asuser:
            shutil.chown(self.data_dir, "nobody", "nogroup")
        subprocess.run(self.asuser + [os.path.join(self.bin, "initdb"), "-D", self.data_dir, "-U", "postgres",
                                      "--auth=trust", "-E", "UTF8", "--no-instructions"],
                       check=True, stdout=subprocess.DEVNULL)
        self.log = os.path.join(work, "pg.log")
        open(self.log, "w").close()
        if self.asuser:
            shutil.chown(self.log, "nobody", "nogroup")
        opts = ("-p %d -k %s -c listen_addresses=127.0.0.1 -c shared_buffers=512MB "
                "-c maintenance_work_mem=1GB -c max_parallel_maintenance_workers=1 "
                "-c max_connections=50" % (self.port, self.data_dir))
        subprocess.run(self.asuser + [os.path.join(self.bin, "pg_ctl"), "-D", self.data_dir, "-l", self.log,
                                      "-o", opts, "-w", "start"], check=True, stdout=subprocess.DEVNULL)
        self.psycopg = psycopg
        self.dsn = "host=127.0.0.1 port=%d user=postgres dbname=postgres" % self.port
        self.conn = self.new_client()
        self.conn.execute("CREATE EXTENSION vector")
        from pgvector.psycopg import register_vector
        register_vector(self.conn)
        self.version = self.conn.execute("SELECT extversion FROM pg_extension WHERE extname='vector'").fetchone()[0]
        self.pgversion = self.conn.execute("SHOW server_version").fetchone()[0]
        self.conn.execute("CREATE TABLE items (id int PRIMARY KEY, bucket int, emb vector(384))")
        self.config = ("PostgreSQL %s + pgvector %s (PyPI pgserver 0.1.4 binaries); HNSW m=16 "
                       "ef_construction=64 (defaults), vector_cosine_ops; btree on bucket; shared_buffers=512MB, "
                       "maintenance_work_mem=1GB, max_parallel_maintenance_workers=1; COPY then CREATE INDEX"
                       % (self.pgversion, self.version))

    def new_client(self):
        from pgvector.psycopg import register_vector
        c = self.psycopg.connect(self.dsn, autocommit=True)
        try:
            register_vector(c)
        except Exception:
            pass
        c.ef = None
        return c

    def ingest(self, ids, vecs, buckets):
        with self.conn.cursor() as cur:
            with cur.copy("COPY items (id, bucket, emb) FROM STDIN WITH (FORMAT BINARY)") as cp:
                cp.set_types(["int4", "int4", "vector"])
                for i in range(len(ids)):
                    cp.write_row((int(ids[i]), int(buckets[i]), vecs[i]))
        self.conn.execute("CREATE INDEX ON items USING hnsw (emb vector_cosine_ops)")
        self.conn.execute("CREATE INDEX ON items (bucket)")
        self.conn.execute("VACUUM ANALYZE items")

    def after_load(self):
        self.conn.execute("CHECKPOINT")
        return "hnsw"

    def ladder(self):
        return EF_LADDER

    def search(self, q, k, ef, flt=None, client=None):
        c = client or self.conn
        if c.ef != ef:
            c.execute("SET hnsw.ef_search = %d" % min(ef, 1000))
            c.ef = ef
        if flt is None:
            rows = c.execute("SELECT id FROM items ORDER BY emb <=> %s LIMIT %s", (q, k)).fetchall()
        else:
            rows = c.execute("SELECT id FROM items WHERE bucket < %s ORDER BY emb <=> %s LIMIT %s",
                             (flt, q, k)).fetchall()
        return [r[0] for r in rows]

    def ladder_max(self):
        return 1000

    def mem_pids(self):
        import psutil
        with open(os.path.join(self.data_dir, "postmaster.pid")) as f:
            pid = int(f.readline())
        p = psutil.Process(pid)
        return [pid] + [c.pid for c in p.children(recursive=True)]

    def close(self):
        try:
            self.conn.close()
        except Exception:
            pass
        subprocess.run(self.asuser + [os.path.join(self.bin, "pg_ctl"), "-D", self.data_dir, "-m", "fast",
                                      "-w", "stop"], stdout=subprocess.DEVNULL)


SYSTEMS = {s.name: s for s in (NeodbSystem, FaissSystem, ChromaSystem, LanceSystem, MilvusLiteSystem,
                               PgvectorSystem)}

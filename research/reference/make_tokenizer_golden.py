#!/usr/bin/python3
"""Writes tests/testdata/tokenizer/wordpiece_golden.jsonl (+ _random_golden).

Each line is {"text": ..., "ids": [...]}: the ids of Tokenizer::Tokenize
(no [CLS]/[SEP]) from the independent reference bert_tokenizer_ref.py with the
bert-base-uncased vocab. The texts are a hostile hand-written set (accents,
CJK, emoji, controls, long words, punctuation runs, special-token strings,
odd Unicode) plus sentences from BEIR SciFact abstracts; the random file holds
short strings drawn (fixed seed) from pools of troublesome characters.

Usage:
  /usr/bin/python3 research/reference/make_tokenizer_golden.py \
      --vocab ../shared/data/bert-base-uncased/vocab.txt \
      --scifact ../shared/data/scifact/corpus.jsonl \
      [--out tests/testdata/tokenizer/wordpiece_golden.jsonl] [--sentences 200]

Code points first assigned in Unicode 15.0 are avoided: Python 3.11's
unicodedata (14.0) calls them unassigned while utf8proc 2.8 (15.0) does not.
"""

import argparse
import json
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bert_tokenizer_ref as ref  # noqa: E402

HOSTILE = [
    "hello world",
    "Hello World",
    "HELLO, WORLD!",
    "",
    " ",
    " \t\n\r ",
    "\u3000\u00a0\u2002",
    "\u2028",
    "line one\u2028line two\u2029line three",
    "line1\r\nline2\ttab\rcr",
    "\x00",
    "\x00\x01\x02\x7f",
    "nul\x00inside",
    "ctrl\x0bvt\x0cff\x1cfs\x1fus\x85nel",
    "bad\ufffdchar \ufffd",
    "zero\u200bwidth\u200cjoin\u200dx\ufeffbom soft\u00adhyphen",
    "private\ue000use \U000f0000 nonchar\uffff unassigned\u0378",
    # Accents and case.
    "café Café CAFÉ",
    "Ångström naïve résumé coöperate façade",
    "e\u0301 cafe\u0301 a\u0308\u0301 \u0301 \u0301\u0302",
    "İstanbul İ ı I",
    "Straße STRASSE \u1e9e",
    "ΟΔΟΣ. Σίσυφος ΣΑΣ ς σ",
    "Tiếng Việt có dấu",
    "\u212a Kelvin \u2126 ohm \u212b angstrom",
    "ǅemal ǆ Ǆ",
    "ﬁne ﬀ ﬃ ligatures",
    "ＦＵＬＬＷＩＤＴＨ ｔｅｘｔ １２３",
    "Ⅻ ⅻ Ⓐ ⓐ 𝐀𝐁𝐂 𝓍",
    "𐐀𐐨 Ꭰ ꭰ Ა ა",
    "Ἀθῆναι ᾼ ᾳ ͅ",
    # CJK and other scripts.
    "中文字符",
    "日本語のテキスト",
    "한국어",
    "漢字かなカナ混じり文",
    "豈 更 \U0002f800 \U00020000𠀀",
    "Hello мир 世界 مرحبا שָׁלוֹם नमस्ते",
    "Привет, как дела? Ёлка",
    "العربية مُحَمَّد",
    "हिन्दी भाषा",
    "ภาษาไทย",
    "ελληνικά Ελληνικά",
    "abc中def文ghi",
    # Emoji.
    "👍🏽 great",
    "🇫🇷 flag",
    "👨\u200d👩\u200d👧\u200d👦 family",
    "❤️ love ❤",
    "1️⃣ keycap",
    "🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f",
    "emoji😀inside",
    # Punctuation.
    "!!!...???",
    "--->",
    "$$$",
    "#hashtag @user e-mail U.S.A. (paren) [bracket] {brace}",
    "“smart quotes” ‘single’ «guillemets» „low“",
    "¿Qué? ¡Hola! … — – • § ¶ ° ± € © ™ ½ ²",
    "a/b\\c|d~e^f`g_h=i+j<k>l",
    "...",
    "'''",
    "don't won't it's",
    # Numbers and URLs.
    "3.14159 1,000,000 1e-10 0x1F -42 +7",
    "١٢٣ ४५६",
    "https://example.com/path/to?q=1&b=2#frag",
    "user.name+tag@example.co.uk",
    "C:\\Windows\\System32\\drivers",
    "<html><body class=\"x\">hi</body></html>",
    # Long words.
    "a" * 100,
    "a" * 101,
    "b" * 200 + " tail",
    "supercalifragilisticexpialidocious" * 3,
    "e\u0301" * 60,
    "é" * 101,
    "中" * 150,
    "x" * 99 + "中" + "y" * 99,
    "antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis",
    # Special-token strings.
    "[CLS] hello [SEP]",
    "[SEP]x",
    "a[MASK]b",
    "[mask] [Mask] [ MASK ]",
    "[[SEP]]",
    "[UNK] [PAD][PAD]",
    "[SE\x00P]",
    "[CLS",
    "unaffable [unused0] [unused1]",
    # WordPiece behaviour.
    "unaffable",
    "tokenization wordpiece greedy",
    "qwxzv zzzzqqq",
    "hello\u00a0world",
    "  leading and trailing  ",
]


# Character pools for the random differential cases: mostly the places where
# an implementation can go wrong (combining-mark order, case mapping, CJK,
# controls, special-token strings glued to text).
RANDOM_POOLS = [
    list("abcdefghijklmnopqrstuvwxyzABCXYZ0123456789"),
    list(" \t\n\r.,;:!?'\"()[]{}#$%&*+-/<=>@\\^_`|~"),
    list("éÉàÀüÜñÑçÇøØåÅßẞİıσΣςΩ\u2126\u212b\u212a"),
    ["\u0301", "\u0308", "\u0323", "\u031b", "\u0345", "\u05b0", "\u0f71", "\u0f72",
     "\u0f74", "\u093f", "\u0941", "\U0001d165", "\U0001d16d", "\u20e3", "\ufe0f", "\u200d",
     "\u200b", "\u00ad"],
    list("中文字日本語한국어のテキスト豈更") + ["\U00020000", "\U0002f800"],
    ["\x00", "\x01", "\x7f", "\x85", "\ufffd", "\u2028", "\u2029", "\u00a0", "\u3000",
     "\ue000", "\uffff", "\u0378"],
    ["[SEP]", "[CLS]", "[MASK]", "[PAD]", "[UNK]", "[sep]", "[", "]"],
    ["👍", "\U0001f3fd", "🇫", "🇷", "❤", "😀"],
    list("αβγδεζηθΑΒΓΔΕάέήίόύώϊΐ"),
    list("абвгдеёжзАБВГДЕЁЖЗ"),
]


def random_texts(count, seed=5):
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        n = rng.randint(0, 30)
        out.append("".join(rng.choice(rng.choice(RANDOM_POOLS)) for _ in range(n)))
    return out


def write_golden(path, tok, texts):
    with open(path, "w", encoding="utf-8") as f:
        for text in texts:
            f.write(json.dumps({"text": text, "ids": tok.tokenize_ids(text)}, ensure_ascii=True))
            f.write("\n")


def scifact_sentences(path, count):
    """Deterministic sentences from SciFact abstracts (titles and sentences)."""
    out = []
    with open(path, "r", encoding="utf-8") as f:
        docs = [json.loads(line) for line in f if line.strip()]
    step = max(1, len(docs) // count)
    for doc in docs[::step]:
        sentences = re.split(r"(?<=[.!?])\s+", doc.get("text", "").strip())
        if doc.get("title"):
            out.append(doc["title"])
        if sentences and sentences[0]:
            out.append(sentences[0])
        if len(out) >= count:
            break
    return out[:count]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vocab", default=os.path.join(root, "..", "shared", "data",
                                                        "bert-base-uncased", "vocab.txt"))
    parser.add_argument("--scifact", default=os.path.join(root, "..", "shared", "data",
                                                          "scifact", "corpus.jsonl"))
    parser.add_argument("--out", default=os.path.join(root, "tests", "testdata", "tokenizer",
                                                      "wordpiece_golden.jsonl"))
    parser.add_argument("--random-out", default=os.path.join(
        root, "tests", "testdata", "tokenizer", "wordpiece_random_golden.jsonl"))
    parser.add_argument("--sentences", type=int, default=200)
    parser.add_argument("--random", type=int, default=1500,
                        help="random differential cases (fixed seed)")
    args = parser.parse_args()
    for what, path in (("vocab", args.vocab), ("scifact corpus", args.scifact)):
        if not os.path.isfile(path):
            sys.exit(f"make_tokenizer_golden.py: {what} not found at {path}")
    tok = ref.BertTokenizer(ref.load_vocab(args.vocab))
    texts = HOSTILE + scifact_sentences(args.scifact, args.sentences)
    write_golden(args.out, tok, texts)
    write_golden(args.random_out, tok, random_texts(args.random))
    hello = tok.tokenize_ids("hello world")
    assert hello == [7592, 2088], hello
    assert tok.encode("hello world") == [101, 7592, 2088, 102]
    print(f"wrote {len(texts)} cases to {args.out}, {args.random} to {args.random_out}")


if __name__ == "__main__":
    main()

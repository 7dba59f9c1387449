"""Readers for the two dictionaries in the corpus: WordNet 3.0 (Debian
wordnet-base) and GCIDE (Debian dict-gcide). Shared by extract.py (MLM text)
and make_pairs.py (contrastive pairs). Standard library only.
"""

import gzip
import os
import re
import zlib

WORDNET_POS_FILES = ("noun", "verb", "adj", "adv")


class Synset:
    __slots__ = ("pos", "lemmas", "definition", "examples")

    def __init__(self, pos, lemmas, definition, examples):
        self.pos = pos
        self.lemmas = lemmas
        self.definition = definition
        self.examples = examples


_ADJ_MARKER = re.compile(r"\((a|p|ip)\)$")
_QUOTED = re.compile(r'"([^"]*)"')


def _clean_lemma(word):
    word = _ADJ_MARKER.sub("", word)
    return word.replace("_", " ")


def read_wordnet(wordnet_dir):
    """Yields a Synset for every line of data.{noun,verb,adj,adv} in
    wordnet_dir (e.g. .../usr/share/wordnet). Raises OSError when absent."""
    for name in WORDNET_POS_FILES:
        path = os.path.join(wordnet_dir, "data." + name)
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("  "):  # licence header
                    continue
                head, sep, gloss = line.partition(" | ")
                if not sep:
                    continue
                fields = head.split()
                w_cnt = int(fields[3], 16)
                lemmas = []
                for i in range(w_cnt):
                    lemma = _clean_lemma(fields[4 + 2 * i])
                    if lemma not in lemmas:
                        lemmas.append(lemma)
                gloss = gloss.strip()
                examples = [e.strip() for e in _QUOTED.findall(gloss) if e.strip()]
                first_quote = gloss.find('"')
                definition = gloss if first_quote < 0 else gloss[:first_quote]
                definition = definition.strip().rstrip(";").strip()
                if definition:
                    yield Synset(name, lemmas, definition, examples)


# ---------------------------------------------------------------- GCIDE

_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_B64_VALUE = {c: i for i, c in enumerate(_B64)}


def _dict_b64(s):
    n = 0
    for c in s:
        n = n * 64 + _B64_VALUE[c]
    return n


def _read_dictzip(path):
    # dictzip is gzip with random-access extra fields; plain gzip reads it.
    with gzip.open(path, "rb") as f:
        return f.read()


_SOURCE_LINE = re.compile(r"^\s*\[[^\[\]]*\]\s*$")  # "[1913 Webster]", "[PJC]"
_HEADER = re.compile(r"^(\S[^\\]*?)\s+\\[^\\]*\\")
_BRACES = re.compile(r"\{([^{}]*)\}")
_ACCENT = re.compile(r"\[[\"'=.^,~`:]?([a-zA-Z]{1,2})\]")
_CITATION = re.compile(r"\s--[A-Z][\w.,' ]{0,60}?\.(?=\s|$)")
_PRON = re.compile(r"\([^()]*\[[^()]*\)")  # pronunciations carry [x] marks
_SENSE = re.compile(r"^\s*(\d+)\.?\s+")
_WS = re.compile(r"\s+")


def _clean_gcide_text(text):
    text = _BRACES.sub(r"\1", text)
    text = _ACCENT.sub(r"\1", text)
    text = _CITATION.sub("", text)
    text = text.replace("\\", "")
    return _WS.sub(" ", text).strip()


def _strip_header(paragraph):
    """Returns the definition text of a paragraph that starts with an entry
    header ("Word \\Word\\ (pron), n. [etym]"), dropping the header. The header
    ends at the first line break outside parentheses and brackets, since the
    pronunciation and the etymology may each span lines."""
    depth = 0
    for i, c in enumerate(paragraph):
        if c in "([":
            depth += 1
        elif c in ")]":
            depth = max(0, depth - 1)
        elif c == "\n" and depth == 0:
            return paragraph[i + 1:]
    return ""


def read_gcide(dictd_dir):
    """Yields (headword, [sense definitions], [other paragraphs]) for every
    entry of gcide.index / gcide.dict.dz in dictd_dir. Definitions are cleaned
    plain text (no markup, no source tags, no citations)."""
    data = _read_dictzip(os.path.join(dictd_dir, "gcide.dict.dz"))
    with open(os.path.join(dictd_dir, "gcide.index"), encoding="utf-8", errors="replace") as f:
        index = [line.rstrip("\n").split("\t") for line in f]
    seen = set()
    for fields in index:
        if len(fields) != 3 or fields[0].startswith("00-database"):
            continue
        off, length = _dict_b64(fields[1]), _dict_b64(fields[2])
        if (off, length) in seen:
            continue
        seen.add((off, length))
        entry = data[off:off + length].decode("utf-8", errors="replace")
        paragraphs = re.split(r"\n\s*\n", entry)
        headword = None
        senses, others = [], []
        for para in paragraphs:
            lines = [l for l in para.split("\n") if not _SOURCE_LINE.match(l)]
            para = "\n".join(lines).strip("\n")
            if not para.strip():
                continue
            m = _HEADER.match(para)
            if m:
                if headword is None:
                    headword = _clean_gcide_text(m.group(1)).replace('"', "").replace("*", "")
                    headword = headword.replace("`", "").replace("'", "'")
                para = _strip_header(para)
            text = para.strip()
            if not text:
                continue
            first_line = para.lstrip("\n").split("\n", 1)[0]
            if len(first_line) - len(first_line.lstrip(" ")) >= 8:
                # A quotation illustrating the sense; drop its "--Author" tail.
                cut = text.rfind(" --")
                quote = _clean_gcide_text(text[:cut] if cut > 0 else text)
                if quote:
                    others.append(quote)
                continue
            if text.startswith("Syn:") or text.startswith("Note:"):
                cleaned = _clean_gcide_text(text)
                if text.startswith("Note:"):
                    others.append(cleaned[5:].strip())
                continue
            sense = _SENSE.match(text)
            if sense:
                text = text[sense.end():]
            text = _PRON.sub("", text)
            # "(Zool.)", "[Obs.]" style labels are kept: they are words.
            cleaned = _clean_gcide_text(text)
            if cleaned:
                senses.append(cleaned)
        if headword and senses:
            yield headword, senses, others

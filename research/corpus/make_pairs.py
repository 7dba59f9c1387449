#!/usr/bin/python3
"""Builds contrastive pairs for `neodb finetune` from the dictionaries,
ontology and package descriptions gather.sh unpacked (never from SciFact).

usage: make_pairs.py CORPUS_DIR [--out OUT_DIR] [--seed S] [--eval-size N]
                     [--max-words N] [--hold-out PAIRS.jsonl ...]
                     [--check-held-out PAIRS.jsonl ...]

CORPUS_DIR is gather.sh's OUT_DIR (reads CORPUS_DIR/dict/{wordnet,gcide,go,
debian-descriptions} and CORPUS_DIR/mlm.txt). Writes to OUT_DIR (default CORPUS_DIR/pairs):
  general_pairs.jsonl  training pairs {"query", "positive"}, shuffled
  general_eval.jsonl   one pair for each of --eval-size held-out queries
                       (absent from general_pairs.jsonl), for
                       `neodb eval` sanity checks. The queries of every
                       --hold-out file (e.g. the default model test's
                       fixture) are held out first, whatever the mixture;
                       --check-held-out only verifies that a file's queries
                       (a fixture cut from an earlier general_eval.jsonl)
                       did not land in general_pairs.jsonl, and fails if
                       they did.
  COUNTS.md            pairs per kind
Kinds (query → positive):
  wn_gloss     WordNet lemma → its synset's definition
  wn_example   WordNet lemma → a usage example of that sense
  wn_synonym   WordNet lemma → "other lemma of the synset: definition"
  gcide_def    GCIDE headword → one of its first two sense definitions
  go_def       Gene Ontology term name → its definition
  go_synonym   a GO term's synonym → "term name: definition"
  pkg_desc     a Debian package's short description → its long description
  pkg_passage  inverse cloze (as passage, below) over the long descriptions,
               whose prose is largely scientific and technical
  passage      a sentence of a corpus paragraph (CORPUS_DIR/mlm.txt) → the
               rest of that paragraph (inverse cloze task; the sentence stays
               in the passage for 10% of pairs, so that exact overlap is not
               the only signal). Teaches sentence-to-passage retrieval, which
               headword pairs alone do not. --passage-pairs caps the count.
Each kind is capped at --max-per-kind pairs (random sample) to balance the mix.
Deterministic for a seed. Standard library only.
"""

import argparse
import json
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lexicon  # noqa: E402


def clip(text, max_words):
    words = text.split()
    return " ".join(words[:max_words])


def wordnet_pairs(wordnet_dir, rng, max_words):
    out = {"wn_gloss": [], "wn_example": [], "wn_synonym": []}
    for s in lexicon.read_wordnet(wordnet_dir):
        definition = clip(s.definition, max_words)
        for lemma in s.lemmas[:4]:
            out["wn_gloss"].append((lemma, definition))
        for example in s.examples[:2]:
            # The lemma whose sense this is: the one the example mentions, if any.
            lower = example.lower()
            lemma = next((l for l in s.lemmas if l.lower() in lower), s.lemmas[0])
            out["wn_example"].append((lemma, clip(example, max_words)))
        if len(s.lemmas) >= 2:
            lemmas = list(s.lemmas)
            rng.shuffle(lemmas)
            # At most 3 ordered pairs per synset so large synsets do not dominate.
            done = 0
            for a in lemmas:
                for b in lemmas:
                    if a != b and a.lower() != b.lower() and done < 3:
                        out["wn_synonym"].append((a, clip(b + ": " + s.definition, max_words)))
                        done += 1
    return out


def gcide_pairs(gcide_dir, max_words):
    pairs = []
    for headword, senses, _ in lexicon.read_gcide(gcide_dir):
        if not headword or len(headword) > 60:
            continue
        used = 0
        for sense in senses:
            if used == 2:
                break
            # Sub-entries ("Sparrow hawk. (Zool.) ...") define another term.
            if sense.lower().startswith(headword.lower()) or len(sense.split()) < 3:
                continue
            pairs.append((headword, clip(sense, max_words)))
            used += 1
    return {"gcide_def": pairs}


def go_pairs(go_root, max_words):
    out = {"go_def": [], "go_synonym": []}
    for t in lexicon.read_go(go_root):
        definition = clip(t.definition, max_words)
        out["go_def"].append((t.name, definition))
        for synonym in t.synonyms[:3]:
            if synonym.lower() != t.name.lower():
                out["go_synonym"].append((synonym, clip(t.name + ": " + t.definition, max_words)))
    return out


def description_pairs(index_path, rng, max_words, passage_max_words, limit):
    out = {"pkg_desc": [], "pkg_passage": []}
    seen_long = set()
    for _, short, paras in lexicon.read_debian_descriptions(index_path):
        body = " ".join(paras)
        # -dev/-doc/library binaries repeat their source's long description;
        # one pair per distinct text.
        if len(body.split()) < 12 or body in seen_long:
            continue
        seen_long.add(body)
        out["pkg_desc"].append((short, clip(body, max_words)))
        out["pkg_passage"].extend(inverse_cloze(body, rng, passage_max_words))
    rng.shuffle(out["pkg_passage"])
    out["pkg_passage"] = out["pkg_passage"][:limit]
    return out


# A sentence ends at . ! or ? followed by space and an upper-case letter,
# a digit or an opening quote/bracket.
SENTENCE_END = re.compile(r'(?<=[.!?])\s+(?=[A-Z0-9"(\u201c])')


def inverse_cloze(paragraph, rng, max_words):
    """[] or [(a sentence of paragraph, the rest of it)] for a paragraph of at
    least two sentences; the sentence stays in the passage 10% of the time."""
    sentences = [x.strip() for x in SENTENCE_END.split(paragraph.strip()) if x.strip()]
    if len(sentences) < 2:
        return []
    i = rng.randrange(len(sentences))
    query = sentences[i]
    if not 6 <= len(query.split()) <= 40:
        return []
    rest = sentences if rng.random() < 0.1 else sentences[:i] + sentences[i + 1:]
    positive = clip(" ".join(rest), max_words)
    if len(positive.split()) < 20:
        return []
    return [(query, positive)]


def passage_pairs(mlm_path, rng, max_words, limit):
    """Inverse-cloze pairs from the corpus's paragraphs."""
    pairs = []
    with open(mlm_path, encoding="utf-8") as f:
        for line in f:
            pairs.extend(inverse_cloze(line, rng, max_words))
    rng.shuffle(pairs)
    return {"passage": pairs[:limit]}


def read_queries(path):
    """The lower-cased queries of a pairs file; exits with a message on bad input."""
    queries = set()
    try:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if line.strip():
                    try:
                        queries.add(json.loads(line)["query"].strip().lower())
                    except (ValueError, KeyError, TypeError, AttributeError):
                        sys.exit("make_pairs: %s:%d: not a {\"query\", ...} JSON line" % (path, n))
    except OSError as e:
        sys.exit("make_pairs: %s: %s" % (path, e.strerror))
    return queries


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus_dir")
    ap.add_argument("--out", default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--eval-size", type=int, default=2000)
    ap.add_argument("--max-words", type=int, default=64, help="positives are cut to this many words")
    ap.add_argument("--passage-max-words", type=int, default=96,
                    help="passage positives are cut to this many words")
    ap.add_argument("--passage-pairs", type=int, default=200000,
                    help="at most this many inverse-cloze pairs from mlm.txt (0 = none)")
    ap.add_argument("--max-per-kind", type=int, default=40000,
                    help="at most this many pairs of each kind (a random sample), so that no "
                         "kind dominates the mixture (0 = no cap)")
    ap.add_argument("--hold-out", action="append", default=[], metavar="PAIRS.jsonl",
                    help="never train on the queries of this pairs file (repeatable)")
    ap.add_argument("--check-held-out", action="append", default=[], metavar="PAIRS.jsonl",
                    help="fail if a query of this pairs file is among the training pairs (repeatable)")
    args = ap.parse_args()
    wordnet_dir = os.path.join(args.corpus_dir, "dict", "wordnet")
    gcide_dir = os.path.join(args.corpus_dir, "dict", "gcide")
    go_root = os.path.join(args.corpus_dir, "dict", "go")
    descriptions = os.path.join(args.corpus_dir, "dict", "debian-descriptions", "Translation-en")
    for path, what in ((wordnet_dir + "/data.noun", "WordNet"), (gcide_dir + "/gcide.index", "GCIDE"),
                       (os.path.join(go_root, lexicon.GO_SQLITE), "Gene Ontology"),
                       (descriptions, "Debian package descriptions")):
        if not os.path.exists(path):
            sys.exit("make_pairs: %s data missing (%s); run research/corpus/gather.sh %s first"
                     % (what, path, args.corpus_dir))
    out_dir = args.out or os.path.join(args.corpus_dir, "pairs")
    os.makedirs(out_dir, exist_ok=True)
    rng = random.Random(args.seed)

    kinds = {}
    kinds.update(wordnet_pairs(wordnet_dir, rng, args.max_words))
    kinds.update(gcide_pairs(gcide_dir, args.max_words))
    kinds.update(go_pairs(go_root, args.max_words))
    kinds.update(description_pairs(descriptions, rng, args.max_words, args.passage_max_words,
                                   args.passage_pairs))
    if args.passage_pairs > 0:
        mlm_path = os.path.join(args.corpus_dir, "mlm.txt")
        if not os.path.exists(mlm_path):
            sys.exit("make_pairs: %s missing; run research/corpus/gather.sh %s first" % (mlm_path, args.corpus_dir))
        kinds.update(passage_pairs(mlm_path, rng, args.passage_max_words, args.passage_pairs))

    for kind in sorted(kinds):
        if args.max_per_kind > 0 and len(kinds[kind]) > args.max_per_kind:
            kinds[kind] = rng.sample(kinds[kind], args.max_per_kind)

    seen = set()
    records = []
    counts = {}
    for kind in sorted(kinds):
        n = 0
        for query, positive in kinds[kind]:
            query, positive = query.strip(), positive.strip()
            if not query or not positive or query.lower() == positive.lower():
                continue
            key = (query.lower(), positive.lower())
            if key in seen:
                continue
            seen.add(key)
            records.append((kind, query, positive))
            n += 1
        counts[kind] = n
    rng.shuffle(records)

    # Held-out queries: every pair of an eval query goes to eval, so train and
    # eval share no query string.
    eval_queries = set()
    for path in args.hold_out:
        eval_queries |= read_queries(path)
    for _, query, _ in records:
        if len(eval_queries) >= args.eval_size:
            break
        eval_queries.add(query.lower())
    train_queries = {query.lower() for _, query, _ in records if query.lower() not in eval_queries}
    for path in args.check_held_out:
        leaked = read_queries(path) & train_queries
        if leaked:
            sys.exit("make_pairs: %d queries of %s are training queries with this mixture and seed (e.g. %r); "
                     "cut that fixture again from a general_eval.jsonl of the new mixture"
                     % (len(leaked), path, sorted(leaked)[0]))

    # Every output is written to NAME.tmp and renamed into place: a killed run
    # leaves no half file, and a file hard-linked from another run directory
    # (cp -al) is replaced, never overwritten through the link.
    # general_pairs.jsonl, the script's marker that the stage is done, last.
    def out_path(name):
        return os.path.join(out_dir, name)

    n_train = n_eval = 0
    written = set()
    with open(out_path("general_pairs.jsonl.tmp"), "w", encoding="utf-8") as train, \
            open(out_path("general_eval.jsonl.tmp"), "w", encoding="utf-8") as held:
        for kind, query, positive in records:
            line = json.dumps({"query": query, "positive": positive}, ensure_ascii=False) + "\n"
            if query.lower() in eval_queries:
                # One pair per held-out query keeps the eval set small and
                # its labels unambiguous; the query's other pairs are dropped.
                if query.lower() not in written:
                    written.add(query.lower())
                    held.write(line)
                    n_eval += 1
            else:
                train.write(line)
                n_train += 1

    with open(out_path("COUNTS.md.tmp"), "w") as f:
        f.write("# Contrastive pairs (research/corpus/make_pairs.py, seed %d)\n\n" % args.seed)
        f.write("| kind | pairs |\n|---|---:|\n")
        for kind in sorted(counts):
            f.write("| %s | %d |\n" % (kind, counts[kind]))
        f.write("| **total** | %d |\n\n" % sum(counts.values()))
        f.write("general_pairs.jsonl: %d train pairs; general_eval.jsonl: %d pairs (one per held-out query; %d "
                "queries).\n" % (n_train, n_eval, len(eval_queries)))
    for name in ("general_eval.jsonl", "COUNTS.md", "general_pairs.jsonl"):
        os.replace(out_path(name + ".tmp"), out_path(name))
    for kind in sorted(counts):
        print("make_pairs: %-11s %8d" % (kind, counts[kind]))
    print("make_pairs: %d train pairs, %d eval pairs -> %s" % (n_train, n_eval, out_dir))


if __name__ == "__main__":
    main()

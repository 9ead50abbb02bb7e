#!/usr/bin/env bash
# Build the book (docs/ -> docs/book/) with mdBook, a warning or error failing the build.
# mdBook is installed once from crates.io into ${KUBE_CODEGEN_CACHE:-~/.cache/kube-codegen}/tools
# (outside the clone, so CI's cache keeps it); a different version there is replaced.
# The book's links and its generated pages are checked by `cargo test -p kube-codegen --test book`.
set -euo pipefail
cd "$(dirname "$0")/.."
MDBOOK_VERSION=0.5.4
TOOLS=${KUBE_CODEGEN_CACHE:-$HOME/.cache/kube-codegen}/tools
MDBOOK=$TOOLS/bin/mdbook
if [[ ! -x $MDBOOK ]] || [[ "$("$MDBOOK" --version)" != "mdbook v$MDBOOK_VERSION" ]]; then
  echo "book: installing mdbook $MDBOOK_VERSION into $TOOLS" >&2
  # No default features: no `serve`/`watch` (a web server and a file watcher CI never uses).
  cargo install mdbook --version "=$MDBOOK_VERSION" --locked --no-default-features \
    --root "$TOOLS" --target-dir "${CARGO_TARGET_DIR:-target}/mdbook" --quiet
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! "$MDBOOK" build docs >"$log" 2>&1; then
  cat "$log" >&2
  echo "book: mdbook build failed" >&2
  exit 1
fi
# mdBook reports a missing include or a bad SUMMARY entry as a warning and goes on.
if grep -E ' (WARN|ERROR) ' "$log" >&2; then
  echo "book: mdbook warned; fix the lines above" >&2
  exit 1
fi
echo "book: built docs/book ($(find docs/book -name '*.html' | wc -l) pages)"

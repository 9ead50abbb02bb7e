#!/usr/bin/env bash
# Regenerates runtime/tests/data/sharding-vectors.json (read by runtime/tests/sharding.rs)
# with the API server's own sharding code: k8s.io/apimachinery and k8s.io/apiserver v0.37.2,
# from the Go module proxy. Needs Go.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
export GOFLAGS=-mod=mod GOTOOLCHAIN=local
cd "$HERE"
"$GO" run . >"$HERE/../data/sharding-vectors.json"

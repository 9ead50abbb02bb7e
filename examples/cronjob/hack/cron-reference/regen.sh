#!/usr/bin/env bash
# Regenerates tests/fixtures/cron-reference.jsonl: robfig/cron v1.2.0 (the version the Go
# project pins, from the module proxy) on hand-picked and random specs and instants, in two
# zones with daylight saving time (America/New_York: a one-hour shift at 02:00;
# Australia/Lord_Howe: a half-hour one). tests/cron_differential.rs replays every line
# against the Rust port. Needs Go and the module proxy.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$here/../../tests/fixtures/cron-reference.jsonl"
mkdir -p "$(dirname "$out")"
cd "$here"
go mod download
: > "$out"
for zone in America/New_York Australia/Lord_Howe; do
    TZ="$zone" go run . >> "$out"
done
echo "wrote $(wc -l < "$out") cases to $out"

#!/usr/bin/env bash
# `npm run bench:sides`: builds BEFORE_REF (default main) into .build/textbench-before and this tree
# into .build/textbench, then runs bench/text/side-by-side.js (docs/benchmarks.md › Text).
set -euo pipefail
ref="${BEFORE_REF:-main}"
src=.build/sides-src
rm -rf "$src" && mkdir -p "$src"
git archive "$ref" | tar -x -C "$src"
ln -s "$PWD/node_modules" "$src/node_modules"
(cd "$src" && npx tsc -p tsconfig.json --outDir ../textbench-before --tsBuildInfoFile ../textbench-before/.tsbuildinfo)
npx tsc -p tsconfig.json --outDir .build/textbench --tsBuildInfoFile .build/textbench/.tsbuildinfo
node .build/textbench/bench/text/side-by-side.js

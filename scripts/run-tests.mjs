#!/usr/bin/env node
// Runs every compiled test file with Node's own test runner: unit specs beside the code
// (`*.spec.js`) and integration/e2e suites under test/ (`*.test.js`). Each file runs in its
// own process with its own database and queue prefix, so files run in parallel safely.
// Usage: node scripts/run-tests.mjs [substring …]  (only files whose path contains one)
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

function* walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* walk(path);
    else yield path;
  }
}

const filters = process.argv.slice(2);
// TEST_DIST_DIR lets several people build and test in one checkout without sharing dist/.
const distDir = process.env.TEST_DIST_DIR ?? 'dist';
const files = [...walk(distDir)]
  .filter((f) => /\.(spec|test)\.js$/.test(f) && !f.includes('/bench/'))
  // A compiled test whose source was moved or deleted stays in dist/ (tsc never removes files).
  .filter((f) => existsSync(relative(distDir, f).replace(/\.js$/, '.ts')))
  .filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)))
  .sort();
if (files.length === 0) {
  console.error('no test files found (did the build run?)');
  process.exit(1);
}
const concurrency = process.env.TEST_CONCURRENCY ?? '4';
const child = spawn(
  process.execPath,
  ['--test', `--test-concurrency=${concurrency}`, '--test-timeout=300000', '--enable-source-maps', ...files],
  { stdio: 'inherit', env: { ...process.env, NODE_ENV: 'test' } },
);
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));

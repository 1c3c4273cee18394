// `npm run bench:profile -- <file.cpuprofile | folder> …`: where each CPU profile's time goes
// (bench/support/cpu-profile.ts), as Markdown on stdout. For the profiles `BENCH_CPU_PROF=1 npm
// run bench` writes per measured load (bench/results/text/prof), or any `node --cpu-prof` output.
// Knob: TOP (25 rows per table).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { type CpuProfile, profileMarkdown, summarizeCpuProfile } from '../support/cpu-profile.js';

const TOP = Number(process.env.TOP ?? 25);
const args = process.argv.slice(2);
if (args.length === 0) {
  console.error('usage: npm run bench:profile -- <file.cpuprofile | folder> …');
  process.exit(2);
}
const files = args.flatMap((arg) =>
  statSync(arg).isDirectory()
    ? readdirSync(arg)
        .filter((name) => name.endsWith('.cpuprofile'))
        .sort()
        .map((name) => join(arg, name))
    : [arg],
);
for (const file of files) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  console.log(profileMarkdown(basename(file), summarizeCpuProfile(profile, TOP)));
}

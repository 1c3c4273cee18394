import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** Debian's Chromium, as the browser tests drive it (playwright-core downloads no browser of its own). */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** The flags every browser test launches Chromium with (a fresh user data dir is given per launch). */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

function aptGet(args: string[]): boolean {
  const run = spawnSync('apt-get', args, {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    timeout: 15 * 60_000,
  });
  return run.status === 0;
}

/**
 * Chromium's path, installing Debian's package when it is missing (`apt-get install -y chromium`,
 * after `apt-get update` if the first try fails); or why no browser can be had here, for the test
 * to print as its skip reason.
 */
export function ensureChromium(): { path: string } | { skip: string } {
  if (existsSync(CHROMIUM_PATH)) return { path: CHROMIUM_PATH };
  if (process.platform !== 'linux' || !existsSync('/usr/bin/apt-get')) return { skip: `no browser: ${CHROMIUM_PATH} is missing and there is no apt-get to install Debian's chromium` };
  if (process.getuid?.() !== 0) return { skip: `no browser: ${CHROMIUM_PATH} is missing and apt-get needs root (run: sudo apt-get install -y chromium)` };
  console.log(`# ${CHROMIUM_PATH} is missing: apt-get install -y chromium`);
  if (!aptGet(['install', '-y', 'chromium'])) {
    aptGet(['update']);
    aptGet(['install', '-y', 'chromium']);
  }
  return existsSync(CHROMIUM_PATH) ? { path: CHROMIUM_PATH } : { skip: `no browser: apt-get install -y chromium did not provide ${CHROMIUM_PATH}` };
}

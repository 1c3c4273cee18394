// Preloaded with `node --import <this file>` when MODULE_TRACE_FILE is set: writes every module the
// process loads to that file, one URL or path a line — ES modules as the loader loads them (a hook,
// module-trace-hooks.ts) and CommonJS ones from the require cache at exit. Used to check what a
// process boots (the operator CLI: test/admin/cli.test.ts), not how long it takes.
import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';

const file = process.env.MODULE_TRACE_FILE;
if (file) {
  register(new URL('./module-trace-hooks.js', import.meta.url), { data: { file } });
  const cache = createRequire(import.meta.url).cache;
  process.on('exit', () => appendFileSync(file, Object.keys(cache).join('\n') + '\n'));
}

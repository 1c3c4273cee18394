import { createRequire } from 'node:module';
import type * as Undici from 'undici';

let loaded: typeof Undici | undefined;

/**
 * undici, loaded with the first outbound pool rather than with libs/common: a process that never
 * calls out (the operator CLI) does not load its hundred-odd modules (docs/decisions.md › CLI boot).
 * `require` of the package the `import` would read: one instance either way.
 */
export function undici(): typeof Undici {
  return (loaded ??= createRequire(import.meta.url)('undici') as typeof Undici);
}

// Loader hooks of module-trace.ts (they run on the loader's own thread).
import { appendFileSync } from 'node:fs';
import type { InitializeHook, LoadHook } from 'node:module';

let file: string;

export const initialize: InitializeHook<{ file: string }> = (data) => {
  file = data.file;
};

export const load: LoadHook = (url, context, next) => {
  appendFileSync(file, `${url}\n`);
  return next(url, context);
};

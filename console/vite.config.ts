import { defineConfig } from 'vite';

// Built by `npm run build` (root package.json) into dist/console, which the service serves at
// /admin/ (src/app/admin-console.ts). No dev server is needed to use it.
export default defineConfig({
  base: '/admin/',
  publicDir: false,
  logLevel: 'warn',
  build: {
    outDir: '../dist/console',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    // One small script and one stylesheet: the CSP allows only same-origin files, no inline code.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
});

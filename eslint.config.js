// Flat config: type-aware rules so floating promises (the classic lost-money bug) fail the lint.
import js from '@eslint/js';
import { readdirSync } from 'node:fs';
import tseslint from 'typescript-eslint';

/*
 * Module boundaries (docs/architecture.md › Module boundaries). A module's public surface is its
 * `*.module.ts`, its `*.service.ts` files and its `index.ts`, at the module's root; anything else
 * (repositories, entities, controllers, helpers, subfolders) is the module's own. Imports are
 * relative, so the rule is written per module and per folder depth: at depth d, `../` taken d + 1
 * times lands in src/modules. The module list is read from the folder, so a new module is covered
 * the day it is created. Unit specs and test/ may import internals.
 */
const MODULES = readdirSync(new URL('./src/modules/', import.meta.url), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);
/** Folders below a module's root (or below libs/) that the rule covers. */
const MAX_DEPTH = 5;
const PUBLIC_FILE = String.raw`(?:[^/]+\.(?:module|service)|index)\.js$`;
const up = (times) => String.raw`^(?:\.\./){${times}}`;
const depths = Array.from({ length: MAX_DEPTH + 1 }, (_, depth) => ({ depth, folders: '*/'.repeat(depth) }));
const BOUNDARY_MESSAGE = "import another module only through its public surface: its *.module.ts, *.service.ts or index.ts (docs/architecture.md › Module boundaries)";
/** From anywhere in src/: a path through `modules/<name>/` must end at a public file. */
const intoModuleInternals = { regex: String.raw`(?:^|/)modules/[^/]+/(?!${PUBLIC_FILE})`, message: BOUNDARY_MESSAGE };
/** From a file `depth` folders inside module `own`: `../` × (depth + 1) then another module's internals. */
const otherModuleInternals = (own, depth) => ({ regex: String.raw`${up(depth + 1)}(?!${own}/)[^./][^/]*/(?!${PUBLIC_FILE})`, message: BOUNDARY_MESSAGE });
const restrictImports = (patterns) => ({ 'no-restricted-imports': ['error', { patterns }] });
const UNIT_SPECS = ['**/*.spec.ts'];

const boundaries = [
  { files: ['src/**/*.ts'], ignores: UNIT_SPECS, rules: restrictImports([intoModuleInternals]) },
  ...MODULES.flatMap((own) =>
    depths.map(({ depth, folders }) => ({
      files: [`src/modules/${own}/${folders}*.ts`],
      ignores: UNIT_SPECS,
      rules: restrictImports([intoModuleInternals, otherModuleInternals(own, depth)]),
    })),
  ),
  // libs/ are libraries: they import nothing of the app (src/, test/), only each other and packages.
  ...depths.map(({ depth, folders }) => ({
    files: [`libs/${folders}*.ts`],
    ignores: UNIT_SPECS,
    rules: restrictImports([{ regex: String.raw`${up(depth + 1)}(?!libs/)`, message: 'libs/ imports nothing of the app (src/, test/): move what both need into libs/' }]),
  })),
];

export default tseslint.config(
  { ignores: ['dist/**', '.build/**', 'node_modules/**', 'media/**', 'eslint.config.js', 'scripts/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        // node:test's describe/it return promises the runner itself awaits.
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['describe', 'it', 'test', 'suite'] }] },
      ],
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
      'no-console': ['error', { allow: ['warn', 'error'] }],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts', '**/*.spec.ts', 'src/cli/**/*.ts', 'src/database/migrate.ts'],
    rules: { 'no-console': 'off' },
  },
  ...boundaries,
);

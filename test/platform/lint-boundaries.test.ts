import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { before, describe, it } from 'node:test';
import { ESLint } from 'eslint';

/** The checkout's root: the nearest folder above this compiled file that holds eslint.config.js. */
function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'eslint.config.js'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('eslint.config.js not found above the test');
    dir = parent;
  }
  return dir;
}

/**
 * The module-boundary rule of eslint.config.js (docs/architecture.md › Module boundaries), run
 * through ESLint's Node API on planted imports: the project's own config, file paths inside the
 * tree (the files need not exist).
 */
describe('lint: module boundaries', () => {
  let eslint: ESLint;
  const root = projectRoot();

  before(() => {
    eslint = new ESLint({
      cwd: root,
      overrideConfigFile: join(root, 'eslint.config.js'),
      // Only the boundary rule runs, so no type information is needed: planted files do not exist
      // for TypeScript's project service.
      ruleFilter: ({ ruleId }) => ruleId === 'no-restricted-imports',
      overrideConfig: { languageOptions: { parserOptions: { projectService: false } } },
    });
  });

  /** The boundary errors (message text) of one import planted in `file`. */
  async function boundaryErrors(file: string, specifier: string): Promise<string[]> {
    const code = `import { planted } from '${specifier}';\nexport const used = planted;\n`;
    const [result] = await eslint.lintText(code, { filePath: join(root, file) });
    assert.equal(result!.fatalErrorCount, 0, JSON.stringify(result!.messages));
    return result!.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
  }

  it("refuses another module's repository, entity or internal file, from any depth of a module", async () => {
    for (const [file, specifier] of [
      ['src/modules/video/planted.ts', '../billing/wallet.repository.js'],
      ['src/modules/video/planted.ts', '../identity/api-key.entity.js'],
      ['src/modules/text/planted.ts', '../billing/settlement-journal.js'],
      ['src/modules/admin/planted.ts', '../identity/route-access.js'],
      ['src/modules/video/dto/planted.ts', '../../billing/hold.entity.js'],
      ['src/modules/video/dto/planted.ts', '../../media/media-object.repository.js'],
      // A service in a subfolder is not at the module's root: internal too.
      ['src/modules/text/planted.ts', '../media/storage/s3.service.js'],
    ]) {
      const errors = await boundaryErrors(file!, specifier!);
      assert.equal(errors.length, 1, `${file} → ${specifier}`);
      assert.match(errors[0]!, /only through its public surface: its \*\.module\.ts, \*\.service\.ts or index\.ts/);
    }
  });

  it("allows another module's *.module.ts, *.service.ts and index.ts, its own files and the platform", async () => {
    for (const [file, specifier] of [
      ['src/modules/video/planted.ts', '../billing/wallet.service.js'],
      ['src/modules/video/planted.ts', '../billing/billing.module.js'],
      ['src/modules/video/planted.ts', '../identity/index.js'],
      ['src/modules/video/dto/planted.ts', '../../billing/index.js'],
      // Inside its own module a file imports anything, at any depth.
      ['src/modules/billing/planted.ts', './wallet.repository.js'],
      ['src/modules/video/dto/planted.ts', '../video-task.entity.js'],
      ['src/modules/video/planted.ts', '../../database/transaction.js'],
      ['src/modules/video/planted.ts', '../../observability/metrics.service.js'],
      ['src/modules/video/planted.ts', '../../../libs/common/index.js'],
    ]) {
      assert.deepEqual(await boundaryErrors(file!, specifier!), [], `${file} → ${specifier}`);
    }
  });

  it('holds outside src/modules too: app code reaches a module only through its public surface', async () => {
    assert.equal((await boundaryErrors('src/app/planted.ts', '../modules/admin/demo-seeder.js')).length, 1);
    assert.equal((await boundaryErrors('src/planted.ts', './modules/identity/identity.repository.js')).length, 1);
    assert.deepEqual(await boundaryErrors('src/app/planted.ts', '../modules/admin/index.js'), []);
    assert.deepEqual(await boundaryErrors('src/planted.ts', './modules/video/video.module.js'), []);
  });

  it('refuses any import of the app (src/, test/) from libs/, and allows libs among themselves', async () => {
    for (const [file, specifier] of [
      ['libs/common/src/planted.ts', '../../../src/modules/billing/wallet.service.js'],
      ['libs/providers/src/text/planted.ts', '../../../../src/config/app-config.js'],
      ['libs/common/index.ts', '../../test/support/factories.js'],
    ]) {
      const errors = await boundaryErrors(file!, specifier!);
      assert.equal(errors.length, 1, `${file} → ${specifier}`);
      assert.match(errors[0]!, /libs\/ imports nothing of the app/);
    }
    assert.deepEqual(await boundaryErrors('libs/providers/src/planted.ts', '../../common/index.js'), []);
    assert.deepEqual(await boundaryErrors('libs/providers/src/text/planted.ts', '../video/video-provider.js'), []);
  });

  it('leaves tests free to reach internals (unit specs and test/)', async () => {
    assert.deepEqual(await boundaryErrors('src/modules/video/planted.spec.ts', '../billing/wallet.repository.js'), []);
    assert.deepEqual(await boundaryErrors('test/platform/planted.test.ts', '../../src/modules/billing/wallet.repository.js'), []);
  });
});

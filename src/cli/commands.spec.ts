import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { COMMANDS, helpText, parseCommandLine, UsageError } from './commands.js';

async function usageError(argv: string[]): Promise<string> {
  try {
    await parseCommandLine(argv);
  } catch (error) {
    assert.ok(error instanceof UsageError, String(error));
    return error.message;
  }
  assert.fail(`${argv.join(' ')} should be refused`);
}

describe('CLI command line', () => {
  it('reads a credit into the admin DTO', async () => {
    const parsed = await parseCommandLine(['wallet:credit', '--workspace', 'w1', '--amount-usd', '12.5', '--reference', 'r1', '--environment', 'test']);
    assert.equal(parsed.kind, 'run');
    if (parsed.kind !== 'run') return;
    assert.equal(parsed.command.name, 'wallet:credit');
    assert.deepEqual({ ...(parsed.input as { dto: object }).dto }, { amountUsd: 12.5, reference: 'r1', environment: 'test' });
    assert.equal((parsed.input as { workspaceId: string }).workspaceId, 'w1');
    assert.equal(parsed.verbose, false);
  });

  it('converts list limits and keeps the verbose flag', async () => {
    const parsed = await parseCommandLine(['workspace:list', '--limit', '5', '--verbose']);
    assert.equal(parsed.kind, 'run');
    if (parsed.kind !== 'run') return;
    assert.equal((parsed.input as { limit: unknown }).limit, 5);
    assert.equal(parsed.verbose, true);
  });

  it('answers help for the CLI and for one command', async () => {
    const all = await parseCommandLine(['help']);
    assert.equal(all.kind, 'help');
    for (const command of COMMANDS) assert.ok(helpText().includes(command.name));
    const one = await parseCommandLine(['key:issue', '-h']);
    assert.deepEqual(one, { kind: 'help', text: helpText(COMMANDS.find((c) => c.name === 'key:issue')) });
  });

  it('refuses bad command lines naming the flag', async () => {
    assert.equal(await usageError([]), 'no command given');
    assert.equal(await usageError(['nope']), 'unknown command "nope"');
    assert.equal(await usageError(['key:revoke']), 'missing --key');
    assert.equal(await usageError(['key:issue', '--workspace', 'w']), 'missing --name');
    assert.match(await usageError(['key:issue', '--workspace', 'w', '--name', 'k', 'extra']), /positional/i);
    assert.match(await usageError(['workspace:create', '--name', 'x', '--nme', 'y']), /Unknown option '--nme'/);
    assert.equal(await usageError(['workspace:create', '--name', '  ']), '--name: must not be blank');
    assert.match(await usageError(['wallet:show', '--workspace', 'w', '--environment', 'staging']), /^--environment: /);
    assert.match(await usageError(['wallet:credit', '--workspace', 'w', '--reference', 'r', '--amount-usd', '1e3']), /^--amount-usd: /);
    assert.match(await usageError(['wallet:credit', '--workspace', 'w', '--reference', 'r', '--amount-usd', '0x10']), /^--amount-usd: /);
    assert.equal(await usageError(['wallet:credit', '--workspace', 'w', '--reference', 'r', '--amount-usd', '2000000']), '--amount-usd: must not be greater than 1000000');
    assert.match(await usageError(['workspace:list', '--limit', '0']), /^--limit: /);
  });
});

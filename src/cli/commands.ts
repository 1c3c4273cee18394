import { type ParseArgsConfig, parseArgs } from 'node:util';
import type { AdminService } from '../modules/admin/admin.service.js';

/*
 * Nothing but node:util is loaded at import: help and a bad command line answer at once. The
 * admin request classes and the validation pipe load when a command's flags are checked.
 */

/** Bad command line: printed with a hint, exit code 2, nothing booted. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly command?: CliCommand,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

type Flags = Record<string, string | boolean | undefined>;
type Options = NonNullable<ParseArgsConfig['options']>;

/** One operator command: `input` checks the flags (before anything boots), `run` calls the admin service. */
export interface CliCommand<Input = unknown> {
  name: string;
  summary: string;
  /** Flags as shown in help, e.g. `--name <name>`. */
  usage: string;
  options: Options;
  input(flags: Flags): Promise<Input>;
  run(admin: AdminService, input: Input): Promise<unknown>;
}

/** The DTO field each flag fills, so validation messages name the flag the operator typed. */
const FLAG_OF_FIELD: Record<string, string> = {
  name: '--name',
  amountUsd: '--amount-usd',
  reference: '--reference',
  environment: '--environment',
  limit: '--limit',
  after: '--after',
};

/** The admin request classes (admin-requests.dto.ts, re-exported by the service: module boundaries). */
type Requests = typeof import('../modules/admin/admin.service.js');

/** The admin API's own DTO validation (same rules, same messages), with flag names. */
async function validated<T extends object>(type: (requests: Requests) => new () => T, value: Record<string, unknown>, source: 'body' | 'query'): Promise<T> {
  const [requests, { StrictValidationPipe }, { DomainError }] = await Promise.all([
    import('../modules/admin/admin.service.js'),
    import('../app/validation.pipe.js'),
    import('../../libs/common/index.js'),
  ]);
  const plain = Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));
  try {
    return (await new StrictValidationPipe().transform(plain, { type: source, metatype: type(requests) })) as T;
  } catch (error) {
    if (error instanceof DomainError && error.status === 400) {
      const [field, ...rest] = error.message.split(': ');
      throw new UsageError(`${FLAG_OF_FIELD[field!] ?? field}: ${rest.join(': ')}`);
    }
    throw error;
  }
}

function required(flags: Flags, name: string): string {
  const value = flags[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`missing --${name}`);
  return value;
}

function optional(flags: Flags, name: string): string | undefined {
  const value = flags[name];
  return typeof value === 'string' ? value : undefined;
}

/** A decimal written the plain way (`25`, `12.5`): no exponents, hex or signs to surprise anyone. */
function amountFlag(flags: Flags): number {
  const raw = required(flags, 'amount-usd');
  if (!/^\d+(\.\d+)?$/.test(raw)) throw new UsageError('--amount-usd: must be a positive decimal number such as 25 or 12.5');
  return Number(raw);
}

const str = { type: 'string' } as const;

function command<Input>(definition: CliCommand<Input>): CliCommand {
  return definition as unknown as CliCommand;
}

export const COMMANDS: CliCommand[] = [
  command({
    name: 'workspace:create',
    summary: 'Create a workspace (its live and test wallets start at 0 USD)',
    usage: '--name <name>',
    options: { name: str },
    input: (flags) => validated((r) => r.CreateWorkspaceDto, { name: required(flags, 'name') }, 'body'),
    run: (admin, dto) => admin.createWorkspace(dto),
  }),
  command({
    name: 'workspace:list',
    summary: 'List workspaces, newest first, with their wallet figures',
    usage: '[--limit <1-100>] [--after <cursor>]',
    options: { limit: str, after: str },
    input: (flags) => validated((r) => r.PageQueryDto, { limit: optional(flags, 'limit'), after: optional(flags, 'after') }, 'query'),
    run: (admin, query) => admin.listWorkspaces(query),
  }),
  command({
    name: 'key:issue',
    summary: 'Issue an API key for a workspace; the key is printed once and never stored',
    usage: '--workspace <id> --name <name> [--environment live|test]',
    options: { workspace: str, name: str, environment: str },
    input: async (flags) => ({
      workspaceId: required(flags, 'workspace'),
      dto: await validated((r) => r.IssueApiKeyDto, { name: required(flags, 'name'), environment: optional(flags, 'environment') }, 'body'),
    }),
    run: (admin, { workspaceId, dto }) => admin.issueApiKey(workspaceId, dto),
  }),
  command({
    name: 'key:list',
    summary: "List a workspace's API keys (without secrets)",
    usage: '--workspace <id> [--limit <1-100>] [--after <cursor>]',
    options: { workspace: str, limit: str, after: str },
    input: async (flags) => ({
      workspaceId: required(flags, 'workspace'),
      query: await validated((r) => r.PageQueryDto, { limit: optional(flags, 'limit'), after: optional(flags, 'after') }, 'query'),
    }),
    run: (admin, { workspaceId, query }) => admin.listApiKeys(workspaceId, query),
  }),
  command({
    name: 'key:revoke',
    summary: 'Revoke an API key; it is refused from the next request on',
    usage: '--key <keyId>',
    options: { key: str },
    input: (flags) => Promise.resolve(required(flags, 'key')),
    run: (admin, keyId) => admin.revokeApiKey(keyId),
  }),
  command({
    name: 'wallet:credit',
    summary: 'Top up a wallet, once per reference (a repeat with the same amount changes nothing)',
    usage: '--workspace <id> --amount-usd <usd> --reference <ref> [--environment live|test]',
    options: { workspace: str, 'amount-usd': str, reference: str, environment: str },
    input: async (flags) => ({
      workspaceId: required(flags, 'workspace'),
      dto: await validated(
        (r) => r.CreditWalletDto,
        { amountUsd: amountFlag(flags), reference: required(flags, 'reference'), environment: optional(flags, 'environment') },
        'body',
      ),
    }),
    run: (admin, { workspaceId, dto }) => admin.credit(workspaceId, dto),
  }),
  command({
    name: 'wallet:show',
    summary: "Print a workspace's wallet figures (live unless --environment test)",
    usage: '--workspace <id> [--environment live|test]',
    options: { workspace: str, environment: str },
    input: async (flags) => ({
      workspaceId: required(flags, 'workspace'),
      query: await validated((r) => r.WalletQueryDto, { environment: optional(flags, 'environment') }, 'query'),
    }),
    run: (admin, { workspaceId, query }) => admin.wallet(workspaceId, query.environment),
  }),
  command({
    name: 'ledger:list',
    summary: "List a workspace's ledger entries, newest first",
    usage: '--workspace <id> [--environment live|test] [--limit <1-100>] [--after <cursor>]',
    options: { workspace: str, environment: str, limit: str, after: str },
    input: async (flags) => ({
      workspaceId: required(flags, 'workspace'),
      query: await validated(
        (r) => r.LedgerQueryDto,
        { environment: optional(flags, 'environment'), limit: optional(flags, 'limit'), after: optional(flags, 'after') },
        'query',
      ),
    }),
    run: (admin, { workspaceId, query }) => admin.ledger(workspaceId, query),
  }),
];

const GLOBAL_OPTIONS: Options = { verbose: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } };

export type ParsedCommandLine =
  | { kind: 'help'; text: string }
  | { kind: 'run'; command: CliCommand; input: unknown; verbose: boolean };

export function helpText(only?: CliCommand): string {
  if (only) return `Usage: npm run cli -- ${only.name} ${only.usage}\n\n  ${only.summary}\n`;
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    'Usage: npm run cli -- <command> [--flags]',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.usage}\n  ${' '.repeat(width)}  ${c.summary}`),
    `  ${'help'.padEnd(width)}  [command]`,
    '',
    'Every command prints JSON on stdout. --verbose shows the service logs on stderr.',
    'Configuration comes from the environment and .env (DATABASE_URL, REDIS_URL, …), as for the service.',
    '',
  ].join('\n');
}

/** Reads argv (without node and the script) into a command and its checked input. */
export async function parseCommandLine(argv: string[]): Promise<ParsedCommandLine> {
  const [name, ...rest] = argv;
  if (name === undefined) throw new UsageError('no command given');
  if (name === 'help' || name === '--help' || name === '-h') {
    const topic = rest[0] === undefined ? undefined : findCommand(rest[0]);
    return { kind: 'help', text: helpText(topic) };
  }
  const command = findCommand(name);
  let flags: Flags;
  try {
    const parsed = parseArgs({ args: rest, options: { ...GLOBAL_OPTIONS, ...command.options }, strict: true, allowPositionals: false });
    flags = parsed.values as Flags;
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error), command);
  }
  if (flags.help) return { kind: 'help', text: helpText(command) };
  try {
    return { kind: 'run', command, input: await command.input(flags), verbose: flags.verbose === true };
  } catch (error) {
    if (error instanceof UsageError) throw new UsageError(error.message, command);
    throw error;
  }
}

function findCommand(name: string): CliCommand {
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) throw new UsageError(`unknown command "${name}"`);
  return command;
}

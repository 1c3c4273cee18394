import 'reflect-metadata';
import type { LoggerService } from '@nestjs/common';
import { DomainError, ErrorDomains } from '../../libs/common/index.js';
import { InvalidEnvironmentError } from '../config/environment.js';
import { helpText, parseCommandLine, UsageError } from './commands.js';

/**
 * Operator CLI: `npm run cli -- <command> [--flags]` (see `help`). It boots only the platform,
 * identity and billing (CliModule) as an application context with APP_ROLE=api (no HTTP server,
 * no queue workers, no periodic jobs), calls AdminService like the admin API does, prints JSON on
 * stdout and exits.
 *
 * Exit codes: 0 done, 1 refused or failed (unknown id, conflict, configuration, database), 2
 * bad command line (nothing was booted).
 */

/** Logs go to stderr so stdout stays parseable JSON; only errors unless --verbose. */
class StderrLogger implements LoggerService {
  constructor(private readonly chatty: boolean) {}
  log(message: unknown, context?: string): void {
    if (this.chatty) this.write('log', message, context);
  }
  warn(message: unknown, context?: string): void {
    if (this.chatty) this.write('warn', message, context);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.write('error', message, rest.filter((r) => typeof r === 'string').at(-1));
  }
  debug(): void {}
  verbose(): void {}
  private write(level: string, message: unknown, context?: string): void {
    const text = message instanceof Error ? (message.stack ?? message.message) : typeof message === 'string' ? message : JSON.stringify(message);
    process.stderr.write(`[${level}]${context ? ` ${context}:` : ''} ${text}\n`);
  }
}

function print(stream: NodeJS.WriteStream, text: string): Promise<void> {
  return new Promise((resolve) => stream.write(text, () => resolve()));
}

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = await parseCommandLine(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    await print(process.stderr, `error: ${error.message}\n\n${helpText(error.command)}`);
    return 2;
  }
  if (parsed.kind === 'help') {
    await print(process.stdout, parsed.text);
    return 0;
  }

  // The modules load only now, so help and bad input answer at once.
  const [{ NestFactory }, { CliModule }, { AppConfig }, { AdminService }] = await Promise.all([
    import('@nestjs/core'),
    import('./cli.module.js'),
    import('../config/app-config.js'),
    import('../modules/admin/admin.service.js'),
  ]);
  const config = AppConfig.fromProcess({ APP_ROLE: 'api', DEMO_SEED: 'false' });
  const app = await NestFactory.createApplicationContext(CliModule.create(config), {
    logger: new StderrLogger(parsed.verbose),
    abortOnError: false,
  });
  try {
    const result = await parsed.command.run(app.get(AdminService), parsed.input);
    await print(process.stdout, `${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    await print(process.stderr, `error: ${error.message} (${app.get(ErrorDomains).qualify(error.code, '/admin/')})\n`);
    return 1;
  } finally {
    await app.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  async (error: unknown) => {
    const message = error instanceof InvalidEnvironmentError ? error.message : `failed: ${error instanceof Error ? error.message : String(error)}`;
    await print(process.stderr, `error: ${message}\n`);
    process.exit(1);
  },
);

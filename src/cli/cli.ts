import 'reflect-metadata';
import { helpText, parseCommandLine, UsageError } from './commands.js';

/**
 * Operator CLI: `npm run cli -- <command> [--flags]` (see `help`). It boots only what a command
 * needs (CliModule: config, logs, database, a lazily connected Redis client, the identity and
 * wallet cores) as an application context with APP_ROLE=api (no HTTP server, no queues, no
 * periodic jobs, no @nestjs/swagger), calls AdminService like the admin API does, prints JSON on
 * stdout and exits. Help and a bad command line load nothing but this file and commands.ts.
 * docs/decisions.md › CLI boot.
 *
 * Exit codes: 0 done, 1 refused or failed (unknown id, conflict, configuration, database), 2
 * bad command line (nothing was booted).
 */

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
  const [{ DomainError, ErrorDomains }, { NestFactory }, { CliModule }, { AppConfig }, { AdminService }, { createRootLogger }, { Logger }, { pino }] = await Promise.all([
    import('../../libs/common/index.js'),
    import('@nestjs/core'),
    import('./cli.module.js'),
    import('../config/app-config.js'),
    import('../modules/admin/admin.service.js'),
    import('../app/logger.js'),
    import('nestjs-pino'),
    import('pino'),
  ]);
  const config = AppConfig.fromProcess({ APP_ROLE: 'api', DEMO_SEED: 'false' });
  // JSON log lines on stderr, so stdout stays the command's JSON; only errors unless --verbose.
  const logger = createRootLogger(config, { destination: pino.destination({ fd: 2, sync: true }), level: parsed.verbose ? config.env.LOG_LEVEL : 'error' });
  const app = await NestFactory.createApplicationContext(CliModule.create(config, logger), { bufferLogs: true, abortOnError: false });
  app.useLogger(app.get(Logger));
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
    const { InvalidEnvironmentError } = await import('../config/environment.js');
    const message = error instanceof InvalidEnvironmentError ? error.message : `failed: ${error instanceof Error ? error.message : String(error)}`;
    await print(process.stderr, `error: ${message}\n`);
    process.exit(1);
  },
);

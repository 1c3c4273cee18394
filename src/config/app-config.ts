import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { EnvironmentVariables, validateEnvironment } from './environment.js';

/**
 * The typed configuration every other class reads. Built once at boot from the environment
 * (and a `.env` file in the working directory when there is one).
 */
export class AppConfig {
  constructor(readonly env: Readonly<EnvironmentVariables>) {}

  get isProduction(): boolean {
    return this.env.NODE_ENV === 'production';
  }
  get runsApi(): boolean {
    return this.env.APP_ROLE !== 'worker';
  }
  get runsWorkers(): boolean {
    return this.env.APP_ROLE !== 'api';
  }
  get mediaDir(): string {
    return resolve(this.env.MEDIA_DIR);
  }
  /** Links follow the port unless PUBLIC_BASE_URL says otherwise (a newcomer on another port gets working links). */
  get publicBaseUrl(): string {
    return (this.env.PUBLIC_BASE_URL ?? `http://127.0.0.1:${this.env.PORT}`).replace(/\/+$/, '');
  }

  /** Reads `.env` (if present) into `process.env`, then validates. The one `process.env` read. */
  static fromProcess(overrides: Record<string, string | undefined> = {}): AppConfig {
    if (existsSync('.env') && overrides.SKIP_DOTENV === undefined) process.loadEnvFile('.env');
    return new AppConfig(validateEnvironment({ ...process.env, ...overrides }));
  }

  /** For tests: the given variables only, on top of the defaults. */
  static from(vars: Record<string, string | undefined>): AppConfig {
    return new AppConfig(validateEnvironment(vars));
  }
}

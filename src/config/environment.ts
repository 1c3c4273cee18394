import 'reflect-metadata';
import { plainToInstance, Transform } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  Max,
  Min,
  MinLength,
  ValidateIf,
  validateSync,
} from 'class-validator';
import { weakEncryptionKeyReason, weakSecretReason } from './secret-strength.js';

/** true/false words become booleans; anything else stays a string, so @IsBoolean names the variable. */
const toBool = ({ value }: { value: unknown }): unknown => {
  if (value === undefined || typeof value === 'boolean') return value;
  const word = String(value).toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(word)) return true;
  if (['0', 'false', 'no', 'off'].includes(word)) return false;
  return value;
};
const toInt = ({ value }: { value: unknown }): unknown => (value === undefined || value === '' ? undefined : Number(value));

export type AppRole = 'api' | 'worker' | 'all';

/**
 * Every environment variable the service reads, validated once at boot (immich's EnvDto).
 * Defaults are the ones that work on a developer machine with local PostgreSQL and Redis;
 * `.env.example` documents each. Nothing else reads `process.env`.
 */
export class EnvironmentVariables {
  @IsIn(['development', 'test', 'production'])
  NODE_ENV: 'development' | 'test' | 'production' = 'development';

  @IsIn(['api', 'worker', 'all'])
  APP_ROLE: AppRole = 'all';

  @Transform(toInt) @IsInt() @Min(0) @Max(65535)
  PORT = 3000;

  @IsString()
  HOST = '127.0.0.1';

  /** Base of every link the service mints (signed media links, realtime URLs); unset: `http://127.0.0.1:${PORT}`. */
  @IsOptional() @IsUrl({ require_tld: false, protocols: ['http', 'https'] })
  PUBLIC_BASE_URL?: string;

  @Matches(/^postgres(ql)?:\/\//, { message: 'DATABASE_URL must be a postgres:// URL' })
  DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/svc';

  /** Create the database on boot when it does not exist (never in production). */
  @Transform(toBool) @IsBoolean()
  DATABASE_CREATE_IF_MISSING = true;

  @Transform(toBool) @IsBoolean()
  DATABASE_RUN_MIGRATIONS = true;

  @Matches(/^rediss?:\/\//, { message: 'REDIS_URL must be a redis:// URL' })
  REDIS_URL = 'redis://127.0.0.1:6379';

  /** Key prefix of every BullMQ key, so several deployments (or test suites) share one Redis. */
  @Matches(/^[A-Za-z0-9_-]{1,64}$/)
  QUEUE_PREFIX = 'svc';

  @IsString() @MinLength(16)
  ADMIN_TOKEN = 'local-admin-token-change-me';

  /** Where media bytes live: `local` (MEDIA_DIR) or `s3` (the MEDIA_S3_* bucket, shared by every host). */
  @IsIn(['local', 's3'])
  MEDIA_DRIVER: 'local' | 's3' = 'local';

  @IsString()
  MEDIA_DIR = './media';

  @ValidateIf((env: EnvironmentVariables) => env.MEDIA_DRIVER === 's3')
  @IsString({ message: 'MEDIA_S3_BUCKET is required when MEDIA_DRIVER=s3' })
  MEDIA_S3_BUCKET?: string;

  @IsString()
  MEDIA_S3_REGION = 'us-east-1';

  /** An S3-compatible server (MinIO, …); unset: AWS. */
  @IsOptional() @IsUrl({ require_tld: false, protocols: ['http', 'https'] })
  MEDIA_S3_ENDPOINT?: string;

  @Transform(toBool) @IsBoolean()
  MEDIA_S3_FORCE_PATH_STYLE = false;

  /** Both or neither; neither: the AWS SDK's default credential chain (instance or task role). */
  @ValidateIf((env: EnvironmentVariables) => env.MEDIA_S3_SECRET_ACCESS_KEY !== undefined)
  @IsString({ message: 'MEDIA_S3_ACCESS_KEY_ID is required when MEDIA_S3_SECRET_ACCESS_KEY is set' })
  MEDIA_S3_ACCESS_KEY_ID?: string;

  @ValidateIf((env: EnvironmentVariables) => env.MEDIA_S3_ACCESS_KEY_ID !== undefined)
  @IsString({ message: 'MEDIA_S3_SECRET_ACCESS_KEY is required when MEDIA_S3_ACCESS_KEY_ID is set' })
  MEDIA_S3_SECRET_ACCESS_KEY?: string;

  /** Prepended to every object key (empty, or folders each ending in `/`), so deployments can share a bucket. */
  @Matches(/^([A-Za-z0-9_:-][A-Za-z0-9._:-]*\/)*$/, { message: 'MEDIA_S3_KEY_PREFIX must be empty or folders each ending in "/" (e.g. svc/)' })
  MEDIA_S3_KEY_PREFIX = '';

  /** Video and audio links are presigned S3 GET URLs instead of the service's own signed `/media` links. */
  @Transform(toBool) @IsBoolean()
  MEDIA_S3_PRESIGNED_LINKS = false;

  /** Endpoint named in presigned links when clients reach the store elsewhere than MEDIA_S3_ENDPOINT. */
  @IsOptional() @IsUrl({ require_tld: false, protocols: ['http', 'https'] })
  MEDIA_S3_PUBLIC_ENDPOINT?: string;

  @IsString() @MinLength(32)
  MEDIA_SIGNING_KEY = 'local-media-signing-key-change-me-0123456789';

  /** 32 bytes, base64: encrypts webhook secrets at rest. */
  @Matches(/^[A-Za-z0-9+/]{43}=$/, { message: 'SECRETS_ENCRYPTION_KEY must be 32 bytes in base64' })
  SECRETS_ENCRYPTION_KEY = 'bG9jYWwtc2VjcmV0cy1rZXktY2hhbmdlLW1lLTAxMjM=';

  /**
   * Comma-separated earlier SECRETS_ENCRYPTION_KEY values (32 bytes base64 each): secrets sealed
   * under them still decrypt; everything new is sealed under SECRETS_ENCRYPTION_KEY.
   */
  @IsOptional()
  @Matches(/^[A-Za-z0-9+/]{43}=(,[A-Za-z0-9+/]{43}=)*$/, { message: 'SECRETS_ENCRYPTION_KEYS_PREVIOUS must be comma-separated 32-byte base64 keys' })
  SECRETS_ENCRYPTION_KEYS_PREVIOUS?: string;

  /** Webhook endpoints one API key may register, enabled or disabled; one more answers 409 `webhook.endpoint_limit`. */
  @Transform(toInt) @IsInt() @Min(1) @Max(1000)
  WEBHOOK_MAX_ENDPOINTS_PER_KEY = 20;

  @Transform(toBool) @IsBoolean()
  OUTBOUND_ALLOW_HTTP = false;

  @Transform(toBool) @IsBoolean()
  OUTBOUND_ALLOW_PRIVATE = false;

  /** PEM file of extra certificate authorities trusted for outbound HTTPS (an internal CA, tests). */
  @IsOptional() @IsString()
  OUTBOUND_EXTRA_CA_FILE?: string;

  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  LOG_LEVEL = 'info';

  /** When set, GET /metrics wants `Authorization: Bearer <METRICS_TOKEN>` (a scraper's credential); unset: open. */
  @IsOptional() @IsString() @MinLength(16)
  METRICS_TOKEN?: string;

  @Transform(toBool) @IsBoolean()
  LOG_PRETTY = false;

  /** Largest JSON body accepted; larger answers 413 `request.body_too_large`. */
  @Transform(toInt) @IsInt() @Min(1024)
  BODY_LIMIT_BYTES = 1_048_576;

  /** Largest body of the text operations, which carry media inline (data URLs, screenshots). */
  @Transform(toInt) @IsInt() @Min(1024)
  TEXT_BODY_LIMIT_BYTES = 33_554_432;

  /** Deepest nesting of objects and arrays a JSON body may have; deeper answers 400 `request.too_deep`. */
  @Transform(toInt) @IsInt() @Min(8) @Max(1000)
  REQUEST_MAX_DEPTH = 64;

  /**
   * Most JSON items (objects, arrays, and elements or members after a comma) a body may hold;
   * more answers 400 `request.too_many_items` before JSON.parse (which would block the event
   * loop for seconds on a 32 MiB body of tiny values). Inline media is one string: not counted.
   */
  @Transform(toInt) @IsInt() @Min(1000) @Max(10_000_000)
  REQUEST_MAX_ITEMS = 100_000;

  /**
   * Time a client has to send a whole request, headers and body; then 408 `request.timeout`.
   * 120 s lets a 32 MiB text body through on a ~2.3 Mbit/s uplink. The response is not
   * limited: SSE streams and downloads run as long as they need.
   */
  @Transform(toInt) @IsInt() @Min(1000)
  REQUEST_TIMEOUT_MS = 120_000;

  /**
   * How far V8 lets the old generation grow past what survived the last major collection, in
   * percent, before it collects again (docs/decisions.md › Heap growth). It bounds the garbage an
   * API process holds under load without capping the heap. 0 leaves V8's own factor (up to 300%).
   */
  @Transform(toInt) @IsInt() @Min(0) @Max(300)
  HEAP_GROWING_PERCENT = 50;

  /**
   * How long an API process may serve a verified key from memory (docs/decisions.md › Platform,
   * "Key cache with instant revocation"): the safety net behind the invalidation channel, so at
   * most 60 s. 0 turns the key cache off (every request reads PostgreSQL).
   */
  @Transform(toInt) @IsInt() @Min(0) @Max(60_000)
  API_KEY_CACHE_TTL_MS = 30_000;

  /** How often the reconciler re-enqueues pending work whose job is missing. */
  @Transform(toInt) @IsInt() @Min(1000)
  RECONCILE_INTERVAL_MS = 60_000;

  /** How often expired media is deleted. */
  @Transform(toInt) @IsInt() @Min(1000)
  MEDIA_SWEEP_INTERVAL_MS = 300_000;

  /** On the first start of an empty database, create a demo workspace and print a key. */
  @Transform(toBool) @IsBoolean()
  DEMO_SEED = true;

  /** Active realtime sessions an API key may hold at once (DESIGN §4); one more answers 409 `audio.session_active`. */
  @Transform(toInt) @IsInt() @Min(1)
  REALTIME_MAX_SESSIONS_PER_KEY = 1;

  /**
   * How long the connection lease of a realtime session lives without a heartbeat (spec › Limits:
   * up to 90 s after a connection is lost). The owning process refreshes it every third of it.
   */
  @Transform(toInt) @IsInt() @Min(1000) @Max(90_000)
  REALTIME_LEASE_MS = 90_000;

  /** Time a new realtime connection has to send its `session.authenticate` frame (spec: 5 s); then close 4408. */
  @Transform(toInt) @IsInt() @Min(100) @Max(5000)
  REALTIME_AUTH_TIMEOUT_MS = 5000;

  /** Realtime WebSocket connections one API process holds at once; one more is closed with 1013 (try again later). */
  @Transform(toInt) @IsInt() @Min(1) @Max(100_000)
  REALTIME_MAX_CONNECTIONS = 5000;

  /** Largest client frame (bytes); a larger one closes the connection with 1009 (message too big). */
  @Transform(toInt) @IsInt() @Min(1024) @Max(1_048_576)
  REALTIME_MAX_FRAME_BYTES = 32_768;

  /**
   * Unsent bytes a realtime connection may queue (a client that stops reading); past it the
   * connection is closed with 4413. The turn still finishes and is charged.
   */
  @Transform(toInt) @IsInt() @Min(65_536) @Max(268_435_456)
  REALTIME_MAX_BUFFERED_BYTES = 4_194_304;

  /** On shutdown (SIGTERM), how long in-flight turns may take to finish and reach their clients before every connection is closed with 1012. */
  @Transform(toInt) @IsInt() @Min(0) @Max(600_000)
  REALTIME_SHUTDOWN_GRACE_MS = 30_000;

  /** Unfinished audio tasks (queued or processing) an API key may have; one more answers 429 `audio.too_many_pending`. */
  @Transform(toInt) @IsInt() @Min(1)
  AUDIO_MAX_PENDING_PER_KEY = 20;

  /**
   * Streaming speech: how long the streaming API process vouches for its task; it extends the
   * lease every third of it. A task still streaming past its lease is taken over by a worker
   * (reconciled, never streamed again).
   */
  @Transform(toInt) @IsInt() @Min(1000)
  AUDIO_STREAM_LEASE_MS = 30_000;

  /** Whole-exchange limit of one webhook delivery attempt (DESIGN §6: 15 s); tests shorten it. */
  @Transform(toInt) @IsInt() @Min(100) @Max(60_000)
  WEBHOOK_DELIVERY_TIMEOUT_MS = 15_000;

  /**
   * Deliveries one worker sends at once: sized for network waits, not CPU. A worker's rate is this
   * over the time of one attempt (claim, POST, record), so 1,000/s at 100 ms per attempt needs 100.
   */
  @Transform(toInt) @IsInt() @Min(1) @Max(1000)
  WEBHOOK_DELIVERY_CONCURRENCY = 100;

  /** Deliveries one worker sends at once to one endpoint, so a slow receiver cannot take every slot. */
  @Transform(toInt) @IsInt() @Min(1) @Max(1000)
  WEBHOOK_ENDPOINT_CONCURRENCY = 10;

  /**
   * `model:adapter` pairs (comma or space separated) naming the adapter that serves a model; a
   * model not listed is served live when an adapter serving it has credentials, else by the
   * sandbox. Checked against the registered adapters at boot (ProviderRegistry.validateRoutes).
   */
  @IsOptional() @IsString()
  PROVIDER_ROUTES?: string;

  // Upstream providers: a model is served live only when its adapter's credentials are set.
  @IsOptional() @IsString()
  GEMINI_API_KEY?: string;

  @IsUrl({ require_tld: false, protocols: ['http', 'https'] })
  GEMINI_BASE_URL = 'https://generativelanguage.googleapis.com';

  @IsOptional() @IsString()
  ELEVENLABS_API_KEY?: string;

  @IsUrl({ require_tld: false, protocols: ['http', 'https'] })
  ELEVENLABS_BASE_URL = 'https://api.elevenlabs.io';

  @IsOptional() @IsString()
  KLING_ACCESS_KEY?: string;

  @ValidateIf((env: EnvironmentVariables) => env.KLING_ACCESS_KEY !== undefined)
  @IsString({ message: 'KLING_SECRET_KEY is required when KLING_ACCESS_KEY is set' })
  KLING_SECRET_KEY?: string;

  @IsUrl({ require_tld: false, protocols: ['http', 'https'] })
  KLING_BASE_URL = 'https://api-singapore.klingai.com';

  /** Comma-separated `whsec_` secrets accepted on internal alternate-provider callbacks. */
  @IsOptional() @Matches(/^whsec_[A-Za-z0-9+/=]+(,whsec_[A-Za-z0-9+/=]+)*$/)
  ALTERNATE_CALLBACK_SECRETS?: string;
}

/** Secrets whose development defaults must never reach production. */
const SECRETS_WITH_DEV_DEFAULTS = ['ADMIN_TOKEN', 'MEDIA_SIGNING_KEY', 'SECRETS_ENCRYPTION_KEY'] as const;
const DEV_DEFAULTS = new EnvironmentVariables();
const PLACEHOLDERS = SECRETS_WITH_DEV_DEFAULTS.map((name) => DEV_DEFAULTS[name]);
/** Estimated bits production asks of each secret: 32 bytes for the signing key, 16 for the admin bearer token. */
const MIN_SECRET_BITS = { ADMIN_TOKEN: 128, MEDIA_SIGNING_KEY: 256 } as const;

/** Production's refusals of placeholder and weak secrets, one line per variable. */
function productionSecretProblems(env: EnvironmentVariables, defined: Record<string, string | undefined>, malformed: Set<string>): string[] {
  const problems: string[] = [];
  for (const name of SECRETS_WITH_DEV_DEFAULTS) {
    if (malformed.has(name)) continue;
    if (defined[name] === undefined) {
      problems.push(`${name}: must be set in production`);
      continue;
    }
    const why =
      name === 'SECRETS_ENCRYPTION_KEY'
        ? weakEncryptionKeyReason(env[name], PLACEHOLDERS)
        : weakSecretReason(env[name], MIN_SECRET_BITS[name], PLACEHOLDERS);
    if (why) problems.push(`${name}: ${why}`);
  }
  return problems;
}

export class InvalidEnvironmentError extends Error {}

/** Validates a raw environment; throws one error naming every bad variable. */
export function validateEnvironment(raw: Record<string, string | undefined>): EnvironmentVariables {
  const defined = Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== undefined && v !== ''));
  const env = plainToInstance(EnvironmentVariables, defined, { exposeDefaultValues: true });
  const errors = validateSync(env, { skipMissingProperties: false });
  const problems = errors.map((e) => `${e.property}: ${Object.values(e.constraints ?? {}).join('; ')}`);
  if (env.NODE_ENV === 'production') {
    // A value that failed its own format check is named once, for that.
    problems.push(...productionSecretProblems(env, defined, new Set(errors.map((e) => e.property))));
    if (env.DATABASE_CREATE_IF_MISSING && defined.DATABASE_CREATE_IF_MISSING === undefined) env.DATABASE_CREATE_IF_MISSING = false;
    if (defined.DEMO_SEED === undefined) env.DEMO_SEED = false;
  }
  if (problems.length > 0) {
    throw new InvalidEnvironmentError(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
  return env;
}

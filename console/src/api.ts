// The admin API client: every call goes to /admin/v1 with the token from sessionStorage as a
// Bearer header (never in a URL). Errors come back as ApiError with words an operator can read.

const TOKEN_KEY = 'svc.adminToken';

export interface Page<T> {
  items: T[];
  hasMore: boolean;
  nextCursor: string | null;
}
export interface Wallet {
  balanceUsd: number;
  heldUsd: number;
  availableUsd: number;
}
export interface Workspace {
  id: string;
  name: string;
  createdAt: string;
  wallet: Wallet;
  testWallet: Wallet;
}
export interface ApiKey {
  id: string;
  workspaceId: string;
  name: string;
  prefix: string;
  environment: 'live' | 'test';
  status: 'active' | 'revoked';
  createdAt: string;
  revokedAt: string | null;
  lastUsedAt: string | null;
  key?: string;
}
export interface LedgerEntry {
  id: string;
  kind: string;
  amountUsd: number;
  holdId: string | null;
  subjectType: string | null;
  subjectId: string | null;
  reference: string | null;
  environment: string;
  createdAt: string;
}
export interface Task {
  id: string;
  kind: string;
  workspaceId: string;
  apiKeyId: string;
  model: string;
  status: string;
  phase: string | null;
  chargedUsd: number | null;
  failureReason: string | null;
  createdAt: string;
  updatedAt: string;
}
export interface Hold {
  id: string;
  environment: string;
  status: string;
  amountUsd: number;
  capturedUsd: number;
  uncollectedUsd: number;
  createdAt: string;
  resolvedAt: string | null;
}
export interface TaskDetail extends Task {
  usage: { heldUsd: number; chargedUsd: number; measuredUsd: number };
  holds: Hold[];
  ledger: LedgerEntry[];
}
export interface Delivery {
  id: string;
  endpointId: string;
  apiKeyId: string;
  eventId: string;
  eventType: string;
  status: string;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
  createdAt: string;
  updatedAt: string;
}
export interface DeliveryAttempt {
  attempt: number;
  manual: boolean;
  startedAt: string;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
}
export interface Overview {
  openHolds: number;
  heldUsd: number;
  queues: Array<{ name: string; waiting: number | null; active: number | null; delayed: number | null; prioritized: number | null; failed: number | null }>;
  since: string;
  tasksLastHour: Array<{ kind: string; status: string; count: number }>;
  tasksCapped: boolean;
  taskKinds: string[];
}

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
  ) {
    super(message);
  }
}

export const token = {
  get: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  set: (value: string): void => sessionStorage.setItem(TOKEN_KEY, value),
  clear: (): void => sessionStorage.removeItem(TOKEN_KEY),
};

/** Called when the service refuses the token (401): the app signs out and says why. */
let onUnauthorized: (message: string) => void = () => undefined;
export function whenUnauthorized(handler: (message: string) => void): void {
  onUnauthorized = handler;
}

type Query = Record<string, string | number | undefined | null>;

function url(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== null && value !== '') params.set(name, String(value));
  const text = params.toString();
  return `/admin/v1${path}${text ? `?${text}` : ''}`;
}

export async function call<T>(method: 'GET' | 'POST', path: string, options: { query?: Query; body?: unknown; tokenOverride?: string } = {}): Promise<T> {
  const bearer = options.tokenOverride ?? token.get();
  const headers: Record<string, string> = { accept: 'application/json' };
  if (bearer) headers.authorization = `Bearer ${bearer}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(url(path, options.query), {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      credentials: 'same-origin',
      cache: 'no-store',
    });
  } catch (error) {
    throw new ApiError(`Could not reach the service (${error instanceof Error ? error.message : String(error)}). Is it running?`, 0, 'network');
  }
  const text = await response.text();
  const body = parseJson(text);
  if (!response.ok) {
    const envelope = (body as { error?: { code?: string; message?: string; errorId?: string } } | null)?.error;
    const code = envelope?.code ?? `http_${response.status}`;
    const reason = envelope?.message ?? (text.slice(0, 200) || response.statusText);
    const support = envelope?.errorId ? ` (error id ${envelope.errorId})` : '';
    const error = new ApiError(`${describeStatus(response.status)}: ${reason}${support} [${code}]`, response.status, code);
    if (response.status === 401 && options.tokenOverride === undefined) onUnauthorized(error.message);
    throw error;
  }
  return body as T;
}

function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return null;
  }
}

function describeStatus(status: number): string {
  switch (status) {
    case 400:
      return 'The request was refused';
    case 401:
      return 'The admin token was refused';
    case 404:
      return 'Not found';
    case 409:
      return 'Conflict';
    case 429:
      return 'Too many requests';
    case 503:
      return 'The service is unavailable';
    default:
      return status >= 500 ? `The service failed (${status})` : `Refused (${status})`;
  }
}

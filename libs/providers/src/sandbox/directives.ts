/**
 * Sandbox directives (DESIGN §4a): in sandbox routing only, a prompt or text may carry
 * `[sandbox:fail]`, `[sandbox:delay=<ms>]`, `[sandbox:uncertain]`, `[sandbox:reject=<code>]`,
 * so tests and demos can reach every state. Live adapters never call this.
 */
export interface SandboxDirectives {
  /** The upstream fails the job. */
  fail: boolean;
  /** Upstream latency to simulate, in ms (capped at MAX_SANDBOX_DELAY_MS). */
  delayMs: number;
  /** The upstream's acceptance answer is lost: the task must go through reconciliation. */
  uncertain: boolean;
  /** The alternate provider answers with this upstream error code. */
  rejectCode: number | null;
}

export const MAX_SANDBOX_DELAY_MS = 120_000;

const DIRECTIVE = /\[sandbox:(fail|uncertain|delay=(\d{1,9})|reject=(\d{1,6}))\]/g;

export function parseSandboxDirectives(...texts: Array<string | undefined | null>): SandboxDirectives {
  const directives: SandboxDirectives = { fail: false, delayMs: 0, uncertain: false, rejectCode: null };
  for (const text of texts) {
    if (!text) continue;
    for (const match of text.matchAll(DIRECTIVE)) {
      if (match[1] === 'fail') directives.fail = true;
      else if (match[1] === 'uncertain') directives.uncertain = true;
      else if (match[2] !== undefined) directives.delayMs = Math.min(Number(match[2]), MAX_SANDBOX_DELAY_MS);
      else if (match[3] !== undefined) directives.rejectCode = Number(match[3]);
    }
  }
  return directives;
}

/** The text with every directive removed (what a sandbox "model" actually reads). */
export function stripSandboxDirectives(text: string): string {
  return text.replace(DIRECTIVE, '').replace(/\s{2,}/g, ' ').trim();
}

/**
 * A small consecutive-failure circuit breaker: after `threshold` failures in a row the circuit
 * opens for `openMs`; then one call is let through (half-open) and its result decides.
 * Creation answers 503 while it is open, before any hold.
 */
export class CircuitBreaker {
  private failures = 0;
  private openUntil = 0;

  constructor(
    private readonly threshold = 5,
    private readonly openMs = 30_000,
    private readonly now: () => number = Date.now,
  ) {}

  get isOpen(): boolean {
    return this.now() < this.openUntil;
  }

  success(): void {
    this.failures = 0;
    this.openUntil = 0;
  }

  failure(): void {
    this.failures++;
    if (this.failures >= this.threshold) {
      this.openUntil = this.now() + this.openMs;
      this.failures = this.threshold - 1; // half-open after the window: one more failure reopens it
    }
  }

  /** Opens the circuit at once (operators and tests). */
  trip(): void {
    this.openUntil = this.now() + this.openMs;
  }
}

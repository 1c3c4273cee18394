import { Injectable } from '@nestjs/common';

/**
 * The one source of "now" for domain logic, so tests can move time (link expiry,
 * retention, webhook windows) without sleeping.
 */
@Injectable()
export class Clock {
  now(): Date {
    return new Date();
  }
}

/** A clock a test can set and advance. */
export class ManualClock extends Clock {
  constructor(private current = new Date()) {
    super();
  }
  override now(): Date {
    return new Date(this.current.getTime());
  }
  set(at: Date): void {
    this.current = new Date(at.getTime());
  }
  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
}

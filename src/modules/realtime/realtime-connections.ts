import { Injectable } from '@nestjs/common';

/** What the registry needs of a connection. */
export interface RegisteredConnection {
  readonly state: 'authenticating' | 'ready' | 'closed';
  readonly sessionId: string | null;
  close(code: number, reason: string): void;
}

/**
 * The realtime connections of this process: the connection cap, the close of a session's socket
 * (DELETE, here or through the close channel), the turns in flight that a shutdown waits for.
 */
@Injectable()
export class RealtimeConnections {
  private readonly all = new Set<RegisteredConnection>();
  private readonly bySession = new Map<string, RegisteredConnection>();
  private readonly turns = new Set<Promise<void>>();
  /** Set on shutdown: no new connection, no new turn. */
  draining = false;

  get size(): number {
    return this.all.size;
  }

  add(connection: RegisteredConnection): void {
    this.all.add(connection);
  }

  /** The connection now owns its session in this process (it holds the lease). */
  bind(sessionId: string, connection: RegisteredConnection): void {
    this.bySession.set(sessionId, connection);
  }

  remove(connection: RegisteredConnection): void {
    this.all.delete(connection);
    if (connection.sessionId && this.bySession.get(connection.sessionId) === connection) this.bySession.delete(connection.sessionId);
  }

  /** Closes the session's connection in this process, if it has one (4410). */
  closeSession(sessionId: string): void {
    this.bySession.get(sessionId)?.close(4410, 'the session was closed');
  }

  connections(): RegisteredConnection[] {
    return [...this.all];
  }

  counts(): { authenticating: number; ready: number } {
    let authenticating = 0;
    let ready = 0;
    for (const connection of this.all) {
      if (connection.state === 'authenticating') authenticating++;
      else if (connection.state === 'ready') ready++;
    }
    return { authenticating, ready };
  }

  /** A turn in flight until it settles (a shutdown waits for it). */
  track(turn: Promise<void>): void {
    this.turns.add(turn);
    void turn.finally(() => this.turns.delete(turn));
  }

  inFlight(): Promise<void>[] {
    return [...this.turns];
  }
}

import type { Socket } from 'node:net';
import type { buildConnector } from 'undici';
import { addressRefusal, canonicalAddress } from './address-policy.js';
import { OutboundRequestError } from './outbound-request.error.js';
import { undici } from './undici-module.js';

export interface PinnedConnectorOptions {
  /** The checked address every connection goes to. */
  address: string;
  allowPrivate: boolean;
  /** TCP + TLS handshake limit. */
  connectTimeoutMs: number;
  /** Extra trusted certificate authorities (tests); the system store otherwise. */
  ca?: string | Buffer | Array<string | Buffer>;
}

/**
 * An undici connector that dials the pinned address instead of resolving the URL's host again,
 * while TLS keeps the URL's host name for SNI and certificate checks (undici derives the
 * server name from the origin's host, not from the address dialled), and the pool keeps it
 * for the Host header. After connecting, the socket's peer address is checked again (it must
 * be the pinned address and still pass the address policy) before undici writes anything.
 */
export function pinnedConnector(options: PinnedConnectorOptions): buildConnector.connector {
  const pinned = canonicalAddress(options.address);
  if (pinned === undefined) throw new TypeError(`pinnedConnector needs an IP address, got ${options.address}`);
  const dial = undici().buildConnector({
    timeout: options.connectTimeoutMs,
    ...(options.ca === undefined ? {} : { ca: options.ca }),
  });
  return (connectOptions, callback) => {
    dial({ ...connectOptions, hostname: pinned }, (err, socket) => {
      if (err !== null) {
        callback(err, null);
        return;
      }
      const refusal = peerRefusal(socket, pinned, options.allowPrivate);
      if (refusal !== null) {
        socket.destroy();
        callback(new OutboundRequestError('address_not_allowed', 'the address connected to is not allowed', refusal), null);
        return;
      }
      callback(null, socket);
    });
  };
}

function peerRefusal(socket: Socket, pinned: string, allowPrivate: boolean): string | null {
  const peer = socket.remoteAddress;
  if (peer === undefined) return 'the connection has no peer address';
  if (canonicalAddress(peer) !== pinned) return `connected to ${peer}, not the checked address ${pinned}`;
  return addressRefusal(peer, allowPrivate);
}

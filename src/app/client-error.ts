import type { FastifyInstance } from 'fastify';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { RequestErrorCode } from '../../libs/common/index.js';

/** What Node's HTTP server refuses before Fastify sees a request: timeouts and unparsable requests. */
function answerFor(error: NodeJS.ErrnoException): { status: number; code: string; message: string } {
  switch (error.code) {
    // Raised by the headers and the request timeouts alike.
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, code: RequestErrorCode.Timeout, message: 'the request was not received in time' };
    // Node counts the request line (the URL) toward the header size limit.
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, code: RequestErrorCode.HeaderTooLarge, message: 'the URL and headers are larger than the limit' };
    default:
      return { status: 400, code: RequestErrorCode.MalformedHttp, message: 'the request is not valid HTTP' };
  }
}

/**
 * Fastify's `clientErrorHandler`: Node's 'clientError' event, answered in the spec's envelope
 * with a hand-written response (there is no request object to reply through), then the socket
 * is closed, as Node itself does.
 */
export function answerClientError(this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const answer = answerFor(error);
  this.log.debug({ err: error, status: answer.status }, 'client error');
  // As Node does: write nothing into a response that has already started.
  const response = (socket as Socket & { _httpMessage?: { headersSent: boolean } })._httpMessage;
  if (socket.writable && !response?.headersSent) {
    const body = JSON.stringify({ error: { code: answer.code, message: answer.message } });
    socket.write(
      `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status]}\r\n` +
        `content-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

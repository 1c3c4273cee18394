import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { type ImageModel, type ImageSize, type PriceContext, StaticPriceCatalogue } from '../../../src/modules/billing/price-catalogue.js';
import type { TestApp } from '../../support/test-app.js';

export const GENERATIONS = '/api/svc/v1/images/generations';

const ANY_PAYER: PriceContext = { workspaceId: 'any-workspace', apiKeyId: 'any-key', environment: 'test' };
/** The catalogue's list price of one image. */
export const imageListCost = (model: ImageModel, size: ImageSize): bigint => new StaticPriceCatalogue().imageCost(ANY_PAYER, model, size);

/** Small real reference images, made by sharp (the HEIC one by hand: see heicFixture). */
export async function referenceFixtures(): Promise<{ png: Buffer; jpeg: Buffer; webp: Buffer; heic: Buffer }> {
  const base = sharp({ create: { width: 64, height: 48, channels: 3, background: '#2266cc' } });
  return {
    png: await base.clone().png().toBuffer(),
    jpeg: await base.clone().jpeg().toBuffer(),
    webp: await base.clone().webp().toBuffer(),
    heic: heicFixture(),
  };
}

/**
 * The start of an HEIC file: an `ftyp` box (major brand `heic`, compatible `mif1`, `heic`) and an
 * empty `mdat` box. The gateway checks only magic bytes; the sandbox cannot decode HEVC and draws
 * the prompt picture instead (docs/images.md), so no real HEVC payload is needed.
 */
export function heicFixture(): Buffer {
  const ftyp = Buffer.alloc(24);
  ftyp.writeUInt32BE(24, 0);
  ftyp.write('ftypheic', 4, 'latin1');
  ftyp.write('mif1heic', 16, 'latin1');
  const mdat = Buffer.alloc(8);
  mdat.writeUInt32BE(8, 0);
  mdat.write('mdat', 4, 'latin1');
  return Buffer.concat([ftyp, mdat]);
}

/** `size` bytes that start with a PNG's signature (what the sniffer checks), the rest zeros. */
export const pngSigned = (png: Buffer, size: number): Buffer => Buffer.concat([png.subarray(0, 8), Buffer.alloc(Math.floor(size) - 8)]);

export const dataUrl = (bytes: Buffer, type = 'image/png'): string => `data:${type};base64,${bytes.toString('base64')}`;

/** An HTTPS media server with a throw-away certificate the app trusts through OUTBOUND_EXTRA_CA_FILE. */
export interface MediaServer {
  /** `https://localhost:<port>` */
  base: string;
  /** `https://127.0.0.1:<port>` (an IP literal: refused when private addresses are not allowed). */
  ipBase: string;
  caFile: string;
  stop(): Promise<void>;
}

/**
 * What the media server answers at a path: `status` (default 200) and extra `headers` (a redirect's
 * `location`); with `hang`, the body is sent but the response never ends (a stalled server).
 */
export interface MediaFile {
  type: string;
  body: Buffer;
  status?: number;
  headers?: Record<string, string>;
  hang?: boolean;
}

export async function startMediaServer(files: Record<string, MediaFile>): Promise<MediaServer> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-image-tls-'));
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=localhost',
      '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')],
    { stdio: 'ignore' },
  );
  const server: Server = createServer({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) }, (request, response) => {
    const file = files[request.url ?? ''];
    if (!file) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    } else if (file.hang) {
      response.writeHead(file.status ?? 200, { 'content-type': file.type, ...file.headers }).write(file.body);
    } else {
      response.writeHead(file.status ?? 200, { 'content-type': file.type, 'content-length': file.body.length, ...file.headers }).end(file.body);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    base: `https://localhost:${port}`,
    ipBase: `https://127.0.0.1:${port}`,
    caFile: join(dir, 'cert.pem'),
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface WalletState {
  balance: bigint;
  held: bigint;
  /** Ledger entries of the workspace's test wallet. */
  entries: number;
  imageHolds: number;
  imageRows: number;
}

/** Everything a refused request must leave as it was: wallet figures, ledger, holds, generation rows. */
export async function walletState(t: TestApp, workspaceId: string): Promise<WalletState> {
  const [wallet] = (await t.db.query(`SELECT balance_micros::text AS b, held_micros::text AS h FROM wallet WHERE workspace_id = $1 AND environment = 'test'`, [workspaceId])) as Array<{ b: string; h: string }>;
  const [counts] = (await t.db.query(
    `SELECT (SELECT count(*) FROM ledger_entry WHERE workspace_id = $1 AND environment = 'test')::int AS entries,
            (SELECT count(*) FROM hold WHERE workspace_id = $1 AND subject_type = 'image_generation')::int AS holds,
            (SELECT count(*) FROM image_generation WHERE workspace_id = $1)::int AS rows`,
    [workspaceId],
  )) as Array<{ entries: number; holds: number; rows: number }>;
  return { balance: BigInt(wallet?.b ?? '0'), held: BigInt(wallet?.h ?? '0'), entries: counts!.entries, imageHolds: counts!.holds, imageRows: counts!.rows };
}

export interface HoldLedger {
  status: string;
  amount: bigint;
  captured: bigint;
  /** Sums of the ledger entries of the hold, by kind. */
  hold: bigint;
  capture: bigint;
  release: bigint;
  captureEntries: number;
}

/** The hold of one generation and its ledger entries. */
export async function holdLedger(t: TestApp, generationId: string): Promise<HoldLedger> {
  const rows = (await t.db.query(
    `SELECT h.status, h.amount_micros::text AS amount, h.captured_micros::text AS captured,
            COALESCE(SUM(e.amount_micros) FILTER (WHERE e.kind = 'hold'), 0)::text AS hold,
            COALESCE(SUM(e.amount_micros) FILTER (WHERE e.kind = 'capture'), 0)::text AS capture,
            COALESCE(SUM(e.amount_micros) FILTER (WHERE e.kind = 'release'), 0)::text AS release,
            count(*) FILTER (WHERE e.kind = 'capture')::int AS capture_entries
       FROM hold h LEFT JOIN ledger_entry e ON e.hold_id = h.id
      WHERE h.subject_type = 'image_generation' AND h.subject_id = $1
      GROUP BY h.id`,
    [generationId],
  )) as Array<Record<string, string | number>>;
  if (rows.length !== 1) throw new Error(`expected one hold for ${generationId}, found ${rows.length}`);
  const row = rows[0]!;
  return {
    status: String(row.status),
    amount: BigInt(row.amount!),
    captured: BigInt(row.captured!),
    hold: BigInt(row.hold!),
    capture: BigInt(row.capture!),
    release: BigInt(row.release!),
    captureEntries: Number(row.capture_entries),
  };
}

export async function generationRow(t: TestApp, id: string): Promise<Record<string, unknown> | undefined> {
  const rows = (await t.db.query(`SELECT * FROM image_generation WHERE id = $1`, [id])) as Array<Record<string, unknown>>;
  return rows[0];
}

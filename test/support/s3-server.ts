import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';
import type { S3MediaStorageOptions } from '../../src/modules/media/s3-media-storage.js';

/** s3rver's fixed credentials: it checks request signatures against them. */
const ACCESS_KEY = 'S3RVER';
const BUCKET = 'media';

export interface TestS3Server {
  endpoint: string;
  bucket: string;
  /** Driver options pointing at this server (path-style, its credentials). */
  storageOptions(overrides?: Partial<S3MediaStorageOptions>): S3MediaStorageOptions;
  /** The environment that boots the app on this server (MEDIA_DRIVER=s3). */
  env: Record<string, string>;
  /** Keys in the bucket under a prefix, read with a client of its own. */
  listKeys(prefix: string): Promise<string[]>;
  close(): Promise<void>;
}

/** A real S3-compatible server, in process, on a free loopback port, with an empty `media` bucket. */
export async function startS3Server(): Promise<TestS3Server> {
  const directory = mkdtempSync(join(tmpdir(), 'svc-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: BUCKET }] });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const credentials = { accessKeyId: ACCESS_KEY, secretAccessKey: ACCESS_KEY };
  const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials });
  return {
    endpoint,
    bucket: BUCKET,
    storageOptions: (overrides = {}) => ({ bucket: BUCKET, region: 'us-east-1', endpoint, forcePathStyle: true, credentials, keyPrefix: '', presignedLinks: false, ...overrides }),
    env: {
      MEDIA_DRIVER: 's3',
      MEDIA_S3_ENDPOINT: endpoint,
      MEDIA_S3_BUCKET: BUCKET,
      MEDIA_S3_FORCE_PATH_STYLE: 'true',
      MEDIA_S3_ACCESS_KEY_ID: ACCESS_KEY,
      MEDIA_S3_SECRET_ACCESS_KEY: ACCESS_KEY,
    },
    async listKeys(prefix) {
      const page = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }));
      return (page.Contents ?? []).map((object) => object.Key!);
    },
    async close() {
      client.destroy();
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

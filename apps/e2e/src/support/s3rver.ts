import { unlink } from 'node:fs/promises';
import S3rver from 's3rver';

interface FilesystemStoreLike {
  getResourcePath(bucket: string, key: string, resource: string): string;
  deleteObject(bucket: string, key: string): Promise<void>;
}

let patched = false;

/**
 * s3rver keeps objects as files in directories named after the key's parts, and deleting an
 * object removes the directories it leaves empty. A PUT into such a directory racing that delete
 * then finds its directory gone after creating it, and its unguarded write stream throws in this
 * process (jest then fails the whole suite). S3 has no directories, and the service does write a
 * resource's objects while another request deletes them; so the delete here leaves directories in
 * place (listings only ever show objects), which removes the race without changing what S3 answers.
 */
function keepDirectoriesOnDelete(): void {
  if (patched) return;
  patched = true;
  const FilesystemStore = require('s3rver/lib/stores/filesystem') as { prototype: FilesystemStoreLike };
  FilesystemStore.prototype.deleteObject = async function (this: FilesystemStoreLike, bucket: string, key: string): Promise<void> {
    await Promise.all(
      ['object', 'object.md5', 'metadata.json'].map((resource) =>
        unlink(this.getResourcePath(bucket, key, resource)).catch((err: NodeJS.ErrnoException) => {
          if (err.code !== 'ENOENT') throw err;
        }),
      ),
    );
  };
}

/** A real S3 server (s3rver) on a free local port, storing under `directory`. */
export async function startS3rver(directory: string): Promise<{ s3: S3rver; port: number }> {
  keepDirectoriesOnDelete();
  const s3 = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory });
  const { port } = await s3.run();
  return { s3, port };
}

/**
 * Whether an error of the index is its storage failing (an object store that does not answer, refuses, or drops
 * the connection) rather than a bug or a bad query: a search then answers without the index where
 * it can, and a sync waits for the store instead of ending failed. LanceDB reports such failures as IO errors of its
 * object store layer.
 */
export function isIndexStorageFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return /LanceError\(IO\)|Generic (S3|GCS|Azure|\w+) error|object_store|ObjectStore/.test(error.message);
}

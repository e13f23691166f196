/** s3rver behind a conditional-write proxy: in scripts/lib, shared with the object-store benchmark. */
export * from '../../scripts/lib/s3rver.js';

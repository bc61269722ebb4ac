// Package s3store keeps a lake's files in object storage: a lake.Store
// over an S3 bucket (Amazon S3 or a compatible server: MinIO,
// SeaweedFS, Ceph, R2 and the like), through minio-go. It is what
// `--out-dir s3://bucket/prefix` opens (IsURL tells such a URL from a
// directory).
//
// # Where and as whom
//
// The URL is s3://bucket/prefix: a bucket that exists, and a prefix of
// plain slash-separated components (none empty, "." or ".."), under
// which the lake's files are objects with the same relative names as
// in a directory lake (message=…/date=…/….parquet). The rest comes
// from the usual AWS variables:
//
//   - AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and, for temporary
//     credentials, AWS_SESSION_TOKEN;
//   - AWS_REGION, else AWS_DEFAULT_REGION (with neither, the bucket's
//     region is asked of Amazon S3, and us-east-1 is assumed of another
//     endpoint);
//   - AWS_ENDPOINT_URL_S3, else AWS_ENDPOINT_URL: another server than
//     Amazon S3, as http:// or https:// and a host, addressed path-style
//     (endpoint/bucket/key).
//
// # Whole objects, acknowledged
//
// A file being written (Create) is spooled to a local temporary file;
// its Commit uploads it with one PUT (or, past minio-go's part size, a
// multipart upload completed at the end) and returns only once the
// store has acknowledged the object. An S3 PUT replaces an object whole
// or not at all, so a reader listing the prefix sees every object whole,
// never one being written, and a failed or aborted file leaves nothing
// behind. What the caller acknowledges after a Commit (an MQTT message,
// a manifest) is therefore durable in the store.
//
// # Retries
//
// A request that fails in a way that can pass (a 5xx, SlowDown, a
// connection refused or reset, a timeout) is tried again after a
// backoff that doubles from Options.MinBackoff to Options.MaxBackoff,
// with jitter, at most Options.Retries times (Options.Retried hears
// each; RetryLine says it as a line); each attempt has
// Options.RequestTimeout to connect and, the request sent, to get the
// answer's headers, so a server that accepts and never answers cannot
// hold a request for minutes; each upload starts again
// from the spool's first byte. A refusal that the same request would
// meet again (AccessDenied, NoSuchBucket, a wrong key or signature) is
// returned at once. Either way the error (an *Error) names the request,
// the object's URL and the store's reason.
//
// # No lock
//
// An object store has no lock like the directory lake's flock: two
// decodes writing one prefix at once would each replace the other's
// files. Run one decode per prefix at a time; several ingest instances
// share one prefix safely because each writes files of its own names.
package s3store

package s3store

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/yukart/candec/internal/fleet/lake"
)

// Scheme starts the URL of a lake in object storage: s3://bucket/prefix.
const Scheme = "s3://"

// IsURL reports whether s names a lake in object storage (s3://…)
// rather than a directory: the choice --out-dir makes.
func IsURL(s string) bool { return strings.HasPrefix(s, Scheme) }

// ParseURL splits s3://bucket/prefix into the bucket and the prefix,
// without a trailing slash ("" for the bucket's root). It refuses what
// could name other objects than the ones meant or read as a path: a
// bucket name S3 refuses, and a prefix with an empty, "." or ".."
// component (s3://b//x, s3://b/../x), a backslash, a control
// character, a query or a fragment.
func ParseURL(s string) (bucket, prefix string, err error) {
	rest, ok := strings.CutPrefix(s, Scheme)
	if !ok {
		return "", "", fmt.Errorf("s3store: %q: not an %sbucket/prefix URL", s, Scheme)
	}
	bucket, prefix, _ = strings.Cut(rest, "/")
	if err := checkBucket(bucket); err != nil {
		return "", "", fmt.Errorf("s3store: %q: %w", s, err)
	}
	prefix = strings.TrimSuffix(prefix, "/")
	if prefix == "" {
		return bucket, "", nil
	}
	if strings.ContainsAny(prefix, "?#") {
		return "", "", fmt.Errorf("s3store: %q: a query or fragment is not part of a lake's URL", s)
	}
	if err := checkName(prefix); err != nil {
		return "", "", fmt.Errorf("s3store: %q: prefix %w", s, err)
	}
	return bucket, prefix, nil
}

// checkBucket applies S3's rules for a bucket name: 3 to 63 lower-case
// letters, digits, dots and hyphens, starting and ending with a letter
// or a digit, with no "..".
func checkBucket(b string) error {
	if b == "" {
		return fmt.Errorf("no bucket")
	}
	if len(b) < 3 || len(b) > 63 {
		return fmt.Errorf("bucket %q: a bucket name has 3 to 63 characters", b)
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if !alnum && c != '.' && c != '-' || !alnum && (i == 0 || i == len(b)-1) {
			return fmt.Errorf("bucket %q: a bucket name is lower-case letters, digits, '.' and '-', starting and ending with a letter or digit", b)
		}
	}
	if strings.Contains(b, "..") {
		return fmt.Errorf("bucket %q: a bucket name has no \"..\"", b)
	}
	return nil
}

// checkName refuses a slash-separated name that is not plainly
// relative: an empty, "." or ".." component, a backslash or a control
// character. Such a name would read as another path to a tool that
// maps the lake's keys to files, or collapse on a server that cleans
// paths (SeaweedFS turns "//" into "/").
func checkName(n string) error {
	if n == "" {
		return fmt.Errorf("is empty")
	}
	for _, c := range []byte(n) {
		if c < 0x20 || c == 0x7f || c == '\\' {
			return fmt.Errorf("%q has a control character or a backslash", n)
		}
	}
	for _, part := range strings.Split(n, "/") {
		switch part {
		case "":
			return fmt.Errorf("%q has an empty component (a leading, trailing or double slash)", n)
		case ".", "..":
			return fmt.Errorf("%q has a %q component", n, part)
		}
	}
	return nil
}

// endpoint is where the store's requests go, from the AWS variables:
// AWS_ENDPOINT_URL_S3, else AWS_ENDPOINT_URL, else Amazon S3.
type endpoint struct {
	host   string // host[:port]
	secure bool   // https
	custom bool   // an endpoint was given: path-style requests
}

// DefaultEndpoint is Amazon S3's, used when no AWS_ENDPOINT_URL_S3 or
// AWS_ENDPOINT_URL is set.
const DefaultEndpoint = "s3.amazonaws.com"

func parseEndpoint(env func(string) string) (endpoint, error) {
	name := "AWS_ENDPOINT_URL_S3"
	raw := env(name)
	if raw == "" {
		name = "AWS_ENDPOINT_URL"
		raw = env(name)
	}
	if raw == "" {
		return endpoint{host: DefaultEndpoint, secure: true}, nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.User != nil ||
		u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.Fragment != "" {
		shown := "(not a URL)" // it may hold a password: not repeated
		if err == nil {
			shown = u.Redacted()
		}
		return endpoint{}, fmt.Errorf("s3store: %s=%q: want http:// or https:// and a host, with no path, user or query", name, shown)
	}
	return endpoint{host: u.Host, secure: u.Scheme == "https", custom: true}, nil
}

// LakeStore is the store of a lake named on a command line (--out-dir),
// for lake.Config.Store: for s3://bucket/prefix, the Store opened with
// opt (Options{} reads the AWS variables), and for anything else nil,
// the directory lake's default.
func LakeStore(ctx context.Context, dir string, opt Options) (lake.Store, error) {
	if !IsURL(dir) {
		return nil, nil
	}
	s, err := Open(ctx, dir, opt)
	if err != nil {
		return nil, err
	}
	return s, nil
}

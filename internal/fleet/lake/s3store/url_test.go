package s3store

import (
	"context"
	"strings"
	"testing"
)

func TestParseURL(t *testing.T) {
	for _, c := range []struct {
		in, bucket, prefix string
		err                string // a part of the error; "" for none
	}{
		{in: "s3://lake", bucket: "lake"},
		{in: "s3://lake/", bucket: "lake"},
		{in: "s3://lake/fleet", bucket: "lake", prefix: "fleet"},
		{in: "s3://lake/fleet/", bucket: "lake", prefix: "fleet"},
		{in: "s3://my-lake.eu/fleet/2026/cars", bucket: "my-lake.eu", prefix: "fleet/2026/cars"},
		{in: "s3://lake/a b/ü", bucket: "lake", prefix: "a b/ü"},
		{in: "s3://", err: "no bucket"},
		{in: "s3:///x", err: "no bucket"},
		{in: "s3:/lake", err: "not an s3://bucket/prefix URL"},
		{in: "S3://lake", err: "not an s3://bucket/prefix URL"},
		{in: "lake/x", err: "not an s3://bucket/prefix URL"},
		{in: "", err: "not an s3://bucket/prefix URL"},
		{in: "s3://ab", err: "3 to 63"},
		{in: "s3://" + strings.Repeat("a", 64), err: "3 to 63"},
		{in: "s3://Lake/x", err: "lower-case"},
		{in: "s3://-lake", err: "lower-case"},
		{in: "s3://lake-", err: "lower-case"},
		{in: "s3://la_ke", err: "lower-case"},
		{in: "s3://user@lake/x", err: "lower-case"},
		{in: "s3://lake:9000/x", err: "lower-case"},
		{in: "s3://la..ke/x", err: `no ".."`},
		{in: "s3://lake//x", err: "empty component"},
		{in: "s3://lake/a//b", err: "empty component"},
		{in: "s3://lake/a//", err: "empty component"},
		{in: "s3://lake/../x", err: `".." component`},
		{in: "s3://lake/a/../../x", err: `".." component`},
		{in: "s3://lake/a/..", err: `".." component`},
		{in: "s3://lake/./x", err: `"." component`},
		{in: `s3://lake/a\b`, err: "backslash"},
		{in: "s3://lake/a\x00b", err: "control character"},
		{in: "s3://lake/a\nb", err: "control character"},
		{in: "s3://lake/x?versionId=1", err: "query or fragment"},
		{in: "s3://lake/x#y", err: "query or fragment"},
	} {
		b, p, err := ParseURL(c.in)
		if c.err == "" {
			if err != nil || b != c.bucket || p != c.prefix {
				t.Errorf("ParseURL(%q) = %q, %q, %v; want %q, %q, nil", c.in, b, p, err, c.bucket, c.prefix)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.err) || !strings.HasPrefix(err.Error(), "s3store: ") {
			t.Errorf("ParseURL(%q) = %q, %q, %v; want an error with %q", c.in, b, p, err, c.err)
		}
	}
}

func TestIsURL(t *testing.T) {
	for in, want := range map[string]bool{
		"s3://lake/x": true, "s3://": true, "lake": false, "./s3://x": false, "S3://lake": false, "": false,
	} {
		if got := IsURL(in); got != want {
			t.Errorf("IsURL(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestKey: the names the lake passes are checked too, so that a name
// from a hostile vehicle id or listing can never reach outside the
// prefix or collapse into another key.
func TestKey(t *testing.T) {
	s := &Store{bucket: "lake", prefix: "fleet"}
	for _, c := range []struct{ rel, key, err string }{
		{rel: "message=A/date=2026-01-01/can0-x.parquet", key: "fleet/message=A/date=2026-01-01/can0-x.parquet"},
		{rel: ".candec-lake", key: "fleet/.candec-lake"},
		{rel: "", err: "is empty"},
		{rel: "/abs", err: "empty component"},
		{rel: "a//b", err: "empty component"},
		{rel: "a/", err: "empty component"},
		{rel: "../x", err: `".." component`},
		{rel: "a/./b", err: `"." component`},
		{rel: `a\..\b`, err: "backslash"},
	} {
		k, err := s.key(c.rel)
		if c.err == "" && (err != nil || k != c.key) || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("key(%q) = %q, %v; want %q, %q", c.rel, k, err, c.key, c.err)
		}
	}
	if k, _ := (&Store{bucket: "lake"}).key("a/b"); k != "a/b" {
		t.Errorf("key at the bucket's root = %q, want a/b", k)
	}
}

func TestEndpoint(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want endpoint
		err  string
	}{
		{env: nil, want: endpoint{host: DefaultEndpoint, secure: true}},
		{env: map[string]string{"AWS_ENDPOINT_URL": "http://127.0.0.1:8333"}, want: endpoint{host: "127.0.0.1:8333", custom: true}},
		{env: map[string]string{"AWS_ENDPOINT_URL": "https://s3.example.com/"}, want: endpoint{host: "s3.example.com", secure: true, custom: true}},
		{env: map[string]string{"AWS_ENDPOINT_URL": "http://a:1", "AWS_ENDPOINT_URL_S3": "https://b:2"}, want: endpoint{host: "b:2", secure: true, custom: true}},
		{env: map[string]string{"AWS_ENDPOINT_URL": "127.0.0.1:8333"}, err: "AWS_ENDPOINT_URL="},
		{env: map[string]string{"AWS_ENDPOINT_URL_S3": "ftp://x"}, err: "AWS_ENDPOINT_URL_S3="},
		{env: map[string]string{"AWS_ENDPOINT_URL": "http://x/bucket"}, err: "no path"},
		{env: map[string]string{"AWS_ENDPOINT_URL": "http://u:p@x"}, err: "no path, user"},
		{env: map[string]string{"AWS_ENDPOINT_URL": "http://"}, err: "a host"},
		{env: map[string]string{"AWS_ENDPOINT_URL": "https://u:p@x%zz"}, err: "not a URL"}, // unparsable: nothing of it shown
	} {
		got, err := parseEndpoint(func(k string) string { return c.env[k] })
		if err != nil && strings.Contains(err.Error(), ":p@") {
			t.Errorf("%v: the error %q shows the password", c.env, err)
		}
		if c.err == "" && (err != nil || got != c.want) || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%v: got %+v, %v; want %+v, %q", c.env, got, err, c.want, c.err)
		}
	}
}

func TestLakeStore(t *testing.T) {
	st, err := LakeStore(context.Background(), "lake/", Options{})
	if st != nil || err != nil {
		t.Errorf("LakeStore of a directory: %v, %v; want nil, nil (the directory store)", st, err)
	}
	sc := &script{}
	env := func(k string) string { return testEnv[k] }
	st, err = LakeStore(context.Background(), "s3://lake/fleet", Options{Env: env, Transport: sc})
	if err != nil || st == nil || st.String() != "s3://lake/fleet" {
		t.Errorf("LakeStore(s3://lake/fleet): %v, %v; want the S3 store", st, err)
	}
	if _, err := LakeStore(context.Background(), "s3://lake/../x", Options{Env: env, Transport: sc}); err == nil {
		t.Error("LakeStore(s3://lake/../x) succeeded")
	}
}

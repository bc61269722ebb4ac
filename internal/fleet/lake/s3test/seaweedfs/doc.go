// Package seaweedfs pins the S3 server of the s3test module: SeaweedFS,
// built from its Go module (go build github.com/seaweedfs/seaweedfs/weed
// in this directory). It is a module of its own so that its
// dependencies stay out of the test's, and the replace its go.mod needs
// is here: SeaweedFS's own go.mod replaces go-bip39, so `go install
// …@version` refuses it.
package seaweedfs

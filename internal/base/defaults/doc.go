// Package defaults fills a Config's unset numbers. Its one rule, Positive,
// is the one every Config's constructor follows: a number of zero or less
// (a size, a count, a timeout) means "the default". It imports only the
// standard library, which lets the libraries use it (see
// internal/testkit/layout).
package defaults

package service

import "github.com/yukart/candec/internal/base/termtext"

// quote is termtext.Quote: outside text cut to 80 characters and
// Go-quoted, safe on a terminal and bounded however long it was.
func quote(s string) string { return termtext.Quote(s) }

// keyText is termtext.Key: a key as it is, or quoted when it is long or
// not printable ASCII.
func keyText(k string) string { return termtext.Key(k) }

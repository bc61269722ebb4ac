package capture

import "github.com/yukart/candec/internal/termtext"

// quote is termtext.Quote: outside text cut to 80 characters and
// Go-quoted, safe on a terminal and bounded however long it was.
func quote(s string) string { return termtext.Quote(s) }

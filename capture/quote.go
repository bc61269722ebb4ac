package capture

import (
	"strconv"
	"unicode/utf8"
)

// quote returns outside text as an error quotes it: cut to 80
// characters (the last being "…" when cut) and Go-quoted, so that it is
// safe on a terminal and bounded however long the text was. It is
// internal/termtext.Quote, copied because a library package imports no
// internal one; a test there keeps the copies the same.
func quote(s string) string {
	const max = 80 // MaxQuote
	n := 0
	for i := range s {
		if n == max-1 {
			if _, size := utf8.DecodeRuneInString(s[i:]); i+size < len(s) {
				return strconv.Quote(s[:i] + "…")
			}
			break
		}
		n++
	}
	return strconv.Quote(s)
}

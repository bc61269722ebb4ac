package termtext

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxQuote is how many characters of outside text an error quotes; a
// longer text is cut and ends in "…".
const MaxQuote = 80

// Clean returns s with every character that is not printable written as
// a visible escape (see the package documentation). It returns s itself,
// without allocating, when s needs no escape.
func Clean(s string) string { return clean(s, false) }

// CleanLines is Clean for text of several lines, such as a DBC's
// description or an error that lists problems: its line ends ('\n') are
// kept.
func CleanLines(s string) string { return clean(s, true) }

// clean is Clean, with the line ends kept when lines is true.
func clean(s string, lines bool) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= 0x20 && c < 0x7f || lines && c == '\n' {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if c < utf8.RuneSelf || r == utf8.RuneError && size == 1 || !strconv.IsPrint(r) {
			break
		}
		i += size
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteByte(hex[s[i]>>4])
			b.WriteByte(hex[s[i]&0xF])
		case strconv.IsPrint(r) || lines && r == '\n':
			b.WriteString(s[i : i+size])
		default:
			q := strconv.QuoteRune(r) // '\x1b', '\u202e', '\n'
			b.WriteString(q[1 : len(q)-1])
		}
		i += size
	}
	return b.String()
}

const hex = "0123456789abcdef"

// Cut returns s cut to at most n characters, ending in "…" when cut; n
// of 0 or less does not cut. A byte that is not part of valid UTF-8
// counts as a character.
func Cut(s string, n int) string {
	if n <= 0 {
		return s
	}
	count := 0
	for i := range s {
		if count == n-1 {
			if _, size := utf8.DecodeRuneInString(s[i:]); i+size < len(s) {
				return s[:i] + "…"
			}
			break
		}
		count++
	}
	return s
}

// Quote returns outside text as an error quotes it: cut to MaxQuote
// characters (the last being "…" when cut) and Go-quoted, so that it is
// safe on a terminal and bounded however long the text was.
//
// The copies named quote in dbc, capture, pipeline and service are this
// function; keep them the same (TestCopies).
func Quote(s string) string {
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

// Key returns a key or name as an error names it: as it is when it is
// printable ASCII of at most MaxQuote bytes (every key candec knows is),
// else as Quote gives it.
func Key(k string) string {
	if len(k) > MaxQuote {
		return Quote(k)
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return Quote(k)
		}
	}
	return k
}

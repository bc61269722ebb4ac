package dbc

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokenKind classifies a token.
type tokenKind uint8

const (
	tEOF       tokenKind = iota
	tIdent               // C identifier, keyword or multiplexer indicator
	tNumber              // unsigned decimal number: 12, 0.25, 3.4E+038
	tString              // "…", text unescaped
	tPunct               // one of : ; | @ ( ) [ ] , + -
	tOther               // any other character
	tBadString           // a string without its closing quote
)

// token is one lexical token. Its text points into the source unless
// the token is a string with escapes.
type token struct {
	kind tokenKind
	// bol is true for the first token on its line: statements start
	// there, so skipping an unknown statement stops at such a keyword.
	bol       bool
	line, col int
	// off is the token's byte offset in the source.
	off  int
	text string
}

// is reports whether t is the punctuation character c.
func (t token) is(c byte) bool {
	return t.kind == tPunct && t.text[0] == c
}

// lexer splits DBC text into tokens. Lines and columns count from 1;
// columns count characters, so for a file decoded from cp1252 they are
// the columns of the original bytes.
type lexer struct {
	src       string
	i         int
	line, col int
	bol       bool
}

func newLexer(src string) *lexer {
	return &lexer{src: src, line: 1, col: 1, bol: true}
}

// advance moves past n bytes, keeping line and column.
func (l *lexer) advance(n int) {
	for end := l.i + n; l.i < end; l.i++ {
		b := l.src[l.i]
		switch {
		case b == '\n':
			l.line++
			l.col = 1
			l.bol = true
		case b < 0x80 || b >= 0xC0: // not a UTF-8 continuation byte
			l.col++
		}
	}
}

// skipSpace skips whitespace and // comments (not DBC, but written by
// hand-edited files now and then).
func (l *lexer) skipSpace() {
	for l.i < len(l.src) {
		switch b := l.src[l.i]; b {
		case ' ', '\t', '\r', '\n', '\f', '\v':
			l.advance(1)
		case '/':
			if l.i+1 < len(l.src) && l.src[l.i+1] == '/' {
				n := strings.IndexByte(l.src[l.i:], '\n')
				if n < 0 {
					n = len(l.src) - l.i
				}
				l.advance(n)
				continue
			}
			return
		default:
			return
		}
	}
}

func (l *lexer) next() token {
	l.skipSpace()
	t := token{bol: l.bol, line: l.line, col: l.col, off: l.i}
	l.bol = false
	if l.i >= len(l.src) {
		t.kind = tEOF
		return t
	}
	start := l.i
	b := l.src[l.i]
	switch {
	case b == '"':
		return l.string(t)
	case isDigit(b) || b == '.' && l.i+1 < len(l.src) && isDigit(l.src[l.i+1]):
		n := l.wordLen(true)
		t.text = l.src[start : start+n]
		t.kind = tIdent
		if isNumber(t.text) {
			t.kind = tNumber
		}
		l.advance(n)
		return t
	case isIdentStart(b):
		n := l.wordLen(false)
		t.kind, t.text = tIdent, l.src[start:start+n]
		l.advance(n)
		return t
	case strings.IndexByte(":;|@()[],+-", b) >= 0:
		t.kind, t.text = tPunct, l.src[start:start+1]
		l.advance(1)
		return t
	case b >= utf8.RuneSelf:
		r, n := utf8.DecodeRuneInString(l.src[l.i:])
		if unicode.IsLetter(r) {
			n = l.wordLen(false)
			t.kind, t.text = tIdent, l.src[start:start+n]
			l.advance(n)
			return t
		}
		t.kind, t.text = tOther, l.src[start:start+n]
		l.advance(n)
		return t
	}
	t.kind, t.text = tOther, l.src[start:start+1]
	l.advance(1)
	return t
}

// wordLen returns the length of the identifier or number at l.i. In a
// number, a sign right after the exponent's E belongs to it.
func (l *lexer) wordLen(number bool) int {
	s := l.src[l.i:]
	n := 0
	for n < len(s) {
		b := s[n]
		switch {
		case isIdentStart(b) || isDigit(b):
			n++
		case number && b == '.':
			n++
		case number && (b == '+' || b == '-') && n > 0 && (s[n-1] == 'e' || s[n-1] == 'E') && isNumber(s[:n-1]):
			n++
		case b >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(s[n:])
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				return n
			}
			n += size
		default:
			return n
		}
	}
	return n
}

// string scans a quoted string. DBC strings may span lines; \" stands
// for a quote (as cantools reads it) and CR LF inside a string becomes
// LF.
func (l *lexer) string(t token) token {
	s := l.src[l.i+1:]
	end, escapes := -1, false
	for j := 0; j < len(s); j++ {
		switch s[j] {
		case '\\':
			if j+1 < len(s) && s[j+1] == '"' {
				escapes = true
				j++
			}
		case '\r':
			escapes = true
		case '"':
			end = j
		}
		if end >= 0 {
			break
		}
	}
	if end < 0 {
		t.kind = tBadString
		l.advance(len(l.src) - l.i)
		return t
	}
	t.kind, t.text = tString, s[:end]
	if escapes {
		t.text = unescape(t.text)
	}
	l.advance(end + 2)
	return t
}

func unescape(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for j := 0; j < len(s); j++ {
		switch c := s[j]; {
		case c == '\\' && j+1 < len(s) && s[j+1] == '"':
			b.WriteByte('"')
			j++
		case c == '\r' && j+1 < len(s) && s[j+1] == '\n':
			// drop: the LF follows
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

func isIdentStart(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b == '_'
}

// isNumber reports whether s is an unsigned decimal number:
// digits with an optional fraction and exponent.
func isNumber(s string) bool {
	i, digits := 0, 0
	for i < len(s) && isDigit(s[i]) {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == exp {
			return false
		}
	}
	return i == len(s)
}

// cp1252 maps the bytes 0x80–0x9F of Windows-1252 to Unicode. The five
// bytes Windows leaves undefined map to the C1 control of the same
// value, as Windows itself does; 0xA0–0xFF equal Latin-1.
var cp1252 = [32]rune{
	'\u20AC', '\u0081', '\u201A', '\u0192', '\u201E', '\u2026', '\u2020', '\u2021',
	'\u02C6', '\u2030', '\u0160', '\u2039', '\u0152', '\u008D', '\u017D', '\u008F',
	'\u0090', '\u2018', '\u2019', '\u201C', '\u201D', '\u2022', '\u2013', '\u2014',
	'\u02DC', '\u2122', '\u0161', '\u203A', '\u0153', '\u009D', '\u017E', '\u0178',
}

// decodeCP1252 converts Windows-1252 text to UTF-8.
func decodeCP1252(src []byte) string {
	var b strings.Builder
	b.Grow(len(src) + len(src)/8)
	for _, c := range src {
		switch {
		case c < 0x80:
			b.WriteByte(c)
		case c < 0xA0:
			b.WriteRune(cp1252[c-0x80])
		default:
			b.WriteRune(rune(c))
		}
	}
	return b.String()
}

// firstInvalidUTF8 returns the line and column (in characters) of the
// first byte of src that is not valid UTF-8.
func firstInvalidUTF8(src []byte) (line, col int) {
	line, col = 1, 1
	for i := 0; i < len(src); {
		r, n := utf8.DecodeRune(src[i:])
		if r == utf8.RuneError && n <= 1 {
			return line, col
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		i += n
	}
	return line, col
}

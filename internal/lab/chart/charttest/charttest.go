// Package charttest checks a chart's structure in tests: that it is
// well-formed SVG, and which texts it shows (title, axis labels, legend
// entries, tick labels), so a test can ask for the series and the
// labelled axes a reader needs.
package charttest

import (
	"bytes"
	"cmp"
	"encoding/xml"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
)

// Texts parses svg as XML and returns the content of every <text>
// element, in document order, trimmed.
func Texts(svg []byte) ([]string, error) {
	d := xml.NewDecoder(bytes.NewReader(svg))
	var out []string
	var in int
	var cur strings.Builder
	root := ""
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return out, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			root = cmp.Or(root, t.Name.Local)
			if t.Name.Local == "text" {
				in++
				cur.Reset()
			}
		case xml.CharData:
			if in > 0 {
				cur.Write(t)
			}
		case xml.EndElement:
			if t.Name.Local == "text" && in > 0 {
				in--
				out = append(out, strings.TrimSpace(cur.String()))
			}
		}
	}
	if root != "svg" {
		return out, errors.New("charttest: the document's root is <" + root + ">, want <svg>")
	}
	return out, nil
}

// Check fails t unless svg is well-formed SVG that shows every one of
// want as a text of its own (a title, an axis label, a legend entry).
// It returns the texts for further checks.
func Check(t testing.TB, svg []byte, want ...string) []string {
	t.Helper()
	texts, err := Texts(svg)
	if err != nil {
		t.Fatalf("chart is not well-formed SVG: %v", err)
	}
	for _, w := range want {
		if !slices.Contains(texts, w) {
			t.Errorf("chart lacks the text %q; it shows %q", w, texts)
		}
	}
	return texts
}

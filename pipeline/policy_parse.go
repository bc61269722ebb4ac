package pipeline

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/yukart/candec/internal/base/termtext"
)

// PolicyError is an error in a policy file: where and what.
type PolicyError struct {
	// File is the policy file's name.
	File string
	// Line and Column locate the offending node (1-based; 0 when
	// unknown).
	Line, Column int
	// Key is the setting or section concerned, empty when none.
	Key string
	// Msg says what is wrong.
	Msg string
}

func (e *PolicyError) Error() string {
	var b strings.Builder
	b.WriteString("pipeline: policy ")
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
	}
	b.WriteString(": ")
	if e.Key != "" {
		b.WriteString(termtext.Key(e.Key))
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns ErrPolicy.
func (e *PolicyError) Unwrap() error { return ErrPolicy }

// policyParser walks the YAML node tree of one file.
type policyParser struct{ file string }

func (pp *policyParser) errorf(n *yaml.Node, key, format string, args ...any) error {
	e := &PolicyError{File: pp.file, Key: key, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	return e
}

// ParsePolicy parses a YAML policy; name is used in errors.
func ParsePolicy(name string, data []byte) (*PolicyFile, error) {
	pp := &policyParser{file: name}
	p := &PolicyFile{name: name}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		line, msg := yamlError(err)
		return nil, &PolicyError{File: name, Line: line, Msg: msg}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return p, nil // an empty file: every signal published as decoded
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, pp.errorf(root, "", "want a mapping with defaults and rules, got %s", kindName(root))
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch k.Value {
		case "defaults":
			if err := pp.settingsMap(v, "defaults", &p.defaults, nil); err != nil {
				return nil, err
			}
		case "rules":
			if v.Kind != yaml.SequenceNode {
				if v.ShortTag() == "!!null" {
					continue
				}
				return nil, pp.errorf(v, "rules", "want a list of rules, got %s", kindName(v))
			}
			for j, rn := range v.Content {
				var r rule
				if err := pp.settingsMap(rn, fmt.Sprintf("rules[%d]", j), &r.settings, &r); err != nil {
					return nil, err
				}
				p.rules = append(p.rules, r)
			}
		default:
			return nil, pp.errorf(k, k.Value, "unknown key (want defaults or rules)")
		}
	}
	p.index()
	return p, nil
}

// settingsMap reads a mapping of settings into s; with r non-nil it is a
// rule and may hold selectors too.
func (pp *policyParser) settingsMap(n *yaml.Node, where string, s *settings, r *rule) error {
	if n.ShortTag() == "!!null" {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return pp.errorf(n, where, "want a mapping of settings, got %s", kindName(n))
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := k.Value
		if j := settingIndex(key); j >= 0 {
			if err := policyKeys[j].typ.parse(pp, v, key, s); err != nil {
				return err
			}
			s.set |= 1 << j
			continue
		}
		sel := findSelector(key)
		switch {
		case sel == nil:
			return pp.errorf(k, key, "unknown key in %s (want %s)", where, keyNames(r != nil))
		case r == nil:
			return pp.errorf(k, key, "is a rule selector; it has no meaning in %s", where)
		}
		if err := sel.parse(pp, v, key, r); err != nil {
			return err
		}
	}
	return nil
}

func (pp *policyParser) strings(v *yaml.Node, key string) ([]string, error) {
	switch v.Kind {
	case yaml.ScalarNode:
		if v.ShortTag() != "!!str" {
			return nil, pp.errorf(v, key, "want a string or a list of strings, got %s", kindName(v))
		}
		return []string{v.Value}, nil
	case yaml.SequenceNode:
		out := make([]string, 0, len(v.Content))
		for _, c := range v.Content {
			if c.Kind != yaml.ScalarNode || c.ShortTag() != "!!str" {
				return nil, pp.errorf(c, key, "want a string, got %s", kindName(c))
			}
			out = append(out, c.Value)
		}
		if len(out) == 0 {
			return nil, pp.errorf(v, key, "empty list")
		}
		return out, nil
	}
	return nil, pp.errorf(v, key, "want a string or a list of strings, got %s", kindName(v))
}

func (pp *policyParser) boolean(v *yaml.Node, key string) (bool, error) {
	if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!bool" {
		return false, pp.errorf(v, key, "want true or false, got %s", kindName(v))
	}
	var b bool
	if err := v.Decode(&b); err != nil {
		return false, pp.errorf(v, key, "%v", err)
	}
	return b, nil
}

func (pp *policyParser) number(v *yaml.Node, key string) (float64, error) {
	if v.Kind != yaml.ScalarNode || (v.ShortTag() != "!!int" && v.ShortTag() != "!!float") {
		return 0, pp.errorf(v, key, "want a number, got %s", kindName(v))
	}
	var f float64
	if err := v.Decode(&f); err != nil {
		return 0, pp.errorf(v, key, "want a number: %v", err)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, pp.errorf(v, key, "want a finite number, got %s", termtext.Quote(v.Value))
	}
	if f < 0 {
		return 0, pp.errorf(v, key, "must not be negative, got %s", termtext.Quote(v.Value))
	}
	return f, nil
}

func (pp *policyParser) duration(v *yaml.Node, key string) (time.Duration, error) {
	if v.Kind != yaml.ScalarNode {
		return 0, pp.errorf(v, key, "want a duration such as 1s or 250ms, got %s", kindName(v))
	}
	if (v.ShortTag() == "!!int" || v.ShortTag() == "!!float") && isZero(v.Value) {
		return 0, nil
	}
	if v.ShortTag() != "!!str" {
		return 0, pp.errorf(v, key, "want a duration with a unit such as 1s or 250ms, got %s", termtext.Quote(v.Value))
	}
	d, err := time.ParseDuration(v.Value)
	if err != nil {
		return 0, pp.errorf(v, key, "want a duration such as 1s or 250ms, got %s", termtext.Quote(v.Value))
	}
	if d < 0 {
		return 0, pp.errorf(v, key, "must not be negative, got %s", termtext.Quote(v.Value))
	}
	return d, nil
}

func isZero(s string) bool {
	f, err := strconv.ParseFloat(s, 64)
	return err == nil && f == 0
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	switch n.ShortTag() {
	case "!!null":
		return "nothing"
	case "!!bool":
		return "boolean " + termtext.Quote(n.Value)
	case "!!int", "!!float":
		return "number " + termtext.Quote(n.Value)
	}
	return termtext.Quote(n.Value)
}

// yamlError splits a yaml syntax error ("yaml: line 3: did not find
// …") into the line and the message.
func yamlError(err error) (int, string) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	rest, ok := strings.CutPrefix(msg, "line ")
	if !ok {
		return 0, msg
	}
	num, text, ok := strings.Cut(rest, ": ")
	n, err2 := strconv.Atoi(num)
	if !ok || err2 != nil {
		return 0, msg
	}
	return n, text
}

package dbc_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	einride "go.einride.tech/can/pkg/dbc"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/internal/testkit/realdata"
)

// einrideAccepts is how many of the real files einride's strict parser
// reads; the others are what candec's tolerant parser exists for.
const einrideAccepts = 17

// TestAgainstEinride parses every real file that einride's strict parser
// accepts with both parsers and checks that the compiled messages and
// signals agree field by field.
func TestAgainstEinride(t *testing.T) {
	dir := filepath.Join(realdata.Dir(t), "dbc")
	paths, err := filepath.Glob(filepath.Join(dir, "*.dbc"))
	if err != nil {
		t.Fatal(err)
	}
	compared := 0
	for _, path := range paths {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		ep := einride.NewParser(filepath.Base(path), src)
		if err := ep.Parse(); err != nil {
			t.Logf("einride rejects %s: %v", filepath.Base(path), err)
			continue
		}
		compared++
		t.Run(filepath.Base(path), func(t *testing.T) {
			f, err := dbc.Parse(path, src)
			if err != nil {
				t.Fatal(err)
			}
			db, err := dbc.Compile(f)
			if err != nil {
				t.Fatal(err)
			}
			compareWithEinride(t, f, db, ep.Defs())
		})
	}
	if compared != einrideAccepts {
		t.Errorf("einride accepted %d files, want %d", compared, einrideAccepts)
	}
}

type sigKey struct {
	id  einride.MessageID
	sig string
}

func compareWithEinride(t *testing.T, f *dbc.File, db *dbc.Database, defs []einride.Def) {
	t.Helper()
	var (
		msgs       []*einride.MessageDef
		values     = map[sigKey][]dbc.ValueDescription{}
		msgComment = map[einride.MessageID]string{}
		sigComment = map[sigKey]string{}
		valueType  = map[sigKey]einride.SignalValueType{}
		longMsg    = map[einride.MessageID]string{}
		longSig    = map[sigKey]string{}
		longNode   = map[string]string{}
	)
	for _, d := range defs {
		switch d := d.(type) {
		case *einride.MessageDef:
			if !einride.IsIndependentSignalsMessage(d) {
				msgs = append(msgs, d)
			}
		case *einride.ValueDescriptionsDef:
			if d.ObjectType != einride.ObjectTypeSignal {
				continue
			}
			var vs []dbc.ValueDescription
			for _, v := range d.ValueDescriptions {
				vs = append(vs, dbc.ValueDescription{Value: int64(v.Value), Label: normalize(v.Description)})
			}
			slices.SortFunc(vs, func(a, b dbc.ValueDescription) int { return int(a.Value - b.Value) })
			values[sigKey{d.MessageID, string(d.SignalName)}] = vs
		case *einride.CommentDef:
			switch d.ObjectType {
			case einride.ObjectTypeMessage:
				msgComment[d.MessageID] = normalize(d.Comment)
			case einride.ObjectTypeSignal:
				sigComment[sigKey{d.MessageID, string(d.SignalName)}] = normalize(d.Comment)
			}
		case *einride.SignalValueTypeDef:
			valueType[sigKey{d.MessageID, string(d.SignalName)}] = d.SignalValueType
		case *einride.AttributeValueForObjectDef:
			switch d.AttributeName {
			case "SystemMessageLongSymbol":
				longMsg[d.MessageID] = d.StringValue
			case "SystemSignalLongSymbol":
				longSig[sigKey{d.MessageID, string(d.SignalName)}] = d.StringValue
			case "SystemNodeLongSymbol":
				longNode[string(d.NodeName)] = d.StringValue
			}
		}
	}
	// einride does not know SG_MUL_VAL_; where it is used the mux value
	// of the SG_ line is overridden, so only candec's side knows it.
	extMux := map[sigKey]bool{}
	for _, d := range f.MuxValues {
		extMux[sigKey{einride.MessageID(d.ID), d.Signal}] = true
	}
	if len(db.Messages) != len(msgs) {
		t.Errorf("got %d messages, einride %d", len(db.Messages), len(msgs))
	}
	nodeName := func(n string) string {
		if n == "Vector__XXX" {
			return ""
		}
		if l, ok := longNode[n]; ok {
			return l
		}
		return n
	}
	for _, em := range msgs {
		m := db.Message(em.MessageID.ToCAN(), em.MessageID.IsExtended())
		if m == nil {
			t.Errorf("message %s (%d): missing", em.Name, em.MessageID)
			continue
		}
		name := string(em.Name)
		if l, ok := longMsg[em.MessageID]; ok {
			name = l
		}
		check(t, m.Name, "name", m.Name, name)
		check(t, m.Name, "length", m.Length, int(em.Size))
		check(t, m.Name, "sender", m.Sender, nodeName(string(em.Transmitter)))
		check(t, m.Name, "comment", normalize(m.Comment), msgComment[em.MessageID])
		if len(m.Signals) != len(em.Signals) {
			t.Errorf("%s: got %d signals, einride %d", m.Name, len(m.Signals), len(em.Signals))
		}
		for _, es := range em.Signals {
			k := sigKey{em.MessageID, string(es.Name)}
			name := string(es.Name)
			if l, ok := longSig[k]; ok {
				name = l
			}
			s := findSignal(m, name)
			if s == nil {
				t.Errorf("%s.%s: missing", m.Name, name)
				continue
			}
			where := s.FullName()
			check(t, where, "start", s.Start, int(es.StartBit))
			check(t, where, "length", s.Length, int(es.Size))
			check(t, where, "big endian", s.Order == dbc.BigEndian, es.IsBigEndian)
			check(t, where, "signed", s.Signed, es.IsSigned)
			check(t, where, "factor", s.Factor, es.Factor)
			check(t, where, "offset", s.Offset, es.Offset)
			check(t, where, "min", s.Min, es.Minimum)
			check(t, where, "max", s.Max, es.Maximum)
			check(t, where, "unit", s.Unit, es.Unit)
			check(t, where, "multiplexer", s.Multiplexer, es.IsMultiplexerSwitch)
			check(t, where, "multiplexed", s.Mux != nil, es.IsMultiplexed)
			if s.Mux != nil && !extMux[k] {
				check(t, where, "mux ranges", s.Mux.Ranges, []dbc.MuxRange{{Lo: es.MultiplexerSwitch, Hi: es.MultiplexerSwitch}})
			}
			var receivers []string
			for _, r := range es.Receivers {
				if n := nodeName(string(r)); n != "" {
					receivers = append(receivers, n)
				}
			}
			check(t, where, "receivers", s.Receivers, receivers)
			check(t, where, "values", s.Values, values[k])
			check(t, where, "comment", normalize(s.Comment), sigComment[k])
			check(t, where, "value type", int(s.Type), int(valueType[k]))
		}
	}
}

// normalize evens out how the parsers treat line breaks in strings
// (einride turns them into spaces) and escaped quotes (einride keeps
// the backslash).
func normalize(s string) string {
	s = strings.ReplaceAll(s, "\r", "")
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.ReplaceAll(s, `\"`, `"`)
}

func findSignal(m *dbc.Message, name string) *dbc.Signal {
	for _, s := range m.Signals {
		if s.Name == name {
			return s
		}
	}
	return nil
}

func check[T any](t *testing.T, where, what string, got, want T) {
	t.Helper()
	if !equal(got, want) {
		t.Errorf("%s: %s: got %v, einride %v", where, what, got, want)
	}
}

func equal(a, b any) bool {
	switch a := a.(type) {
	case []string:
		return slices.Equal(a, b.([]string))
	case []dbc.ValueDescription:
		return slices.Equal(a, b.([]dbc.ValueDescription))
	case []dbc.MuxRange:
		return slices.Equal(a, b.([]dbc.MuxRange))
	}
	return a == b
}

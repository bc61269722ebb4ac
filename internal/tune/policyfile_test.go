package tune

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/pipeline"
)

// keysDBC has signals of messages with a cycle time (which the written
// files' stale_cycles turn into a stale_after) and without.
const keysDBC = `VERSION ""
NS_ :
BS_:
BU_: ECU
BO_ 256 Fast: 8 ECU
 SG_ Speed : 0|16@1+ (0.01,0) [0|655.35] "km/h" ECU
 SG_ Gear : 16|8@1+ (1,0) [0|3] "" ECU
BO_ 512 Slow: 8 ECU
 SG_ Temp : 0|8@1+ (1,-40) [-40|215] "degC" ECU
BO_ 768 Event: 8 ECU
 SG_ Code : 0|16@1+ (1,0) [0|65535] "" ECU
 SG_ Flag : 16|1@1+ (1,0) [0|1] "" ECU
BA_DEF_ BO_ "GenMsgCycleTime" INT 0 65535;
BA_DEF_DEF_ "GenMsgCycleTime" 0;
BA_ "GenMsgCycleTime" BO_ 256 10;
BA_ "GenMsgCycleTime" BO_ 512 100;
VAL_ 256 Gear 0 "P" 1 "R" 2 "N" 3 "D" ;
`

// TestPolicyYAMLKeys: a policy file the tuner writes holds every key of
// pipeline's table. For each field of pipeline.Policy (where every key
// keeps its value or what follows from it: pipeline's
// TestPolicyKeysOverride), signals get it at its zero value, at a value
// of their own and at what the file's defaults give them; the file, as
// `tune --write-policy` writes it (Plan.PolicyYAML) and as the optimizer
// writes a candidate's (policyYAML without comments, which leaves out
// what the defaults give), parsed back with pipeline's parser, resolves
// to the same policy for every signal. A key added to the table that
// the writer dropped would resolve to its default and fail here.
func TestPolicyYAMLKeys(t *testing.T) {
	db := compile(t, "keys.dbc", keysDBC)
	fields := reflect.VisibleFields(reflect.TypeFor[pipeline.Policy]())
	all := make([]pipeline.Policy, len(db.Signals))
	for _, f := range fields {
		pols := make([]pipeline.Policy, len(db.Signals))
		for _, s := range db.Signals {
			pols[s.Index] = pipeline.Policy{Publish: true}
			v := reflect.ValueOf(&pols[s.Index]).Elem().FieldByIndex(f.Index)
			switch s.Index % 3 {
			case 1:
				setOwn(t, v, s.Index)
			case 2:
				v.Set(reflect.ValueOf(defaultsFile().Resolve(s)).FieldByIndex(f.Index))
			}
			setOwn(t, reflect.ValueOf(&all[s.Index]).Elem().FieldByIndex(f.Index), s.Index)
		}
		checkRoundTrip(t, f.Name, db, pols)
	}
	checkRoundTrip(t, "every field", db, all)
}

// setOwn sets v to a value that is not its zero, of signal i's own.
func setOwn(t *testing.T, v reflect.Value, i int) {
	t.Helper()
	switch {
	case v.Type() == reflect.TypeFor[time.Duration]():
		v.SetInt(int64(time.Duration(i+1) * 1500 * time.Microsecond))
	case v.Kind() == reflect.Bool:
		v.SetBool(true)
	case v.Kind() == reflect.Float64:
		v.SetFloat(0.25 * float64(i+1))
	default:
		t.Fatalf("a field of pipeline.Policy of type %s: give this test a value of it", v.Type())
	}
}

// checkRoundTrip writes pols both ways and checks that each file
// resolves to pols. A signal not published is only checked for that:
// its other keys do nothing, and are not written.
func checkRoundTrip(t *testing.T, what string, db *dbc.Database, pols []pipeline.Policy) {
	t.Helper()
	plan := &Plan{head: "a test\n"}
	for _, s := range db.Signals {
		p := pols[s.Index]
		plan.Choices = append(plan.Choices, Choice{Signal: s.FullName(), Policy: p, Text: p.Describe(), Deliveries: []float64{1}})
	}
	for _, file := range []struct {
		name string
		text []byte
	}{
		{"written", plan.PolicyYAML(db)},
		{"candidate", policyYAML(db, pols, nil, "")},
	} {
		pf, err := pipeline.ParsePolicy(file.name, file.text)
		if err != nil {
			t.Fatalf("%s: the %s file: %v\n%s", what, file.name, err, file.text)
		}
		for _, s := range db.Signals {
			got, want := pf.Resolve(s), pols[s.Index]
			if got != want && (want.Publish || got.Publish) {
				t.Errorf("%s: %s: the %s file resolves to %+v, want %+v:\n%s", what, s.FullName(), file.name, got, want, ruleOf(file.text, s))
			}
		}
	}
}

// ruleOf is signal s's rule in a written file, for an error.
func ruleOf(text []byte, s *dbc.Signal) string {
	_, rest, _ := strings.Cut(string(text), "  - match: \""+s.FullName()+"\"\n")
	rule, _, _ := strings.Cut(rest, "  - ")
	rule, _, _ = strings.Cut(rule, "  # ")
	return rule
}

// TestCandidateKeepsKeys: a candidate's policy sets the keys the ladder
// decides and keeps every other as the base policy has it (stale_after,
// and a key added to pipeline's table), whatever the candidate, range and
// minimum rate.
func TestCandidateKeepsKeys(t *testing.T) {
	decided := map[string]bool{"Publish": true, "MaxRate": true, "OnChange": true, "Deadband": true, "DeadbandPct": true, "Heartbeat": true}
	var base pipeline.Policy
	fields := reflect.VisibleFields(reflect.TypeFor[pipeline.Policy]())
	for _, f := range fields {
		setOwn(t, reflect.ValueOf(&base).Elem().FieldByIndex(f.Index), 2)
	}
	for _, c := range ladder {
		for _, hz := range []float64{0, 7} {
			p := c.policyOf(base, 10, hz)
			for _, f := range fields {
				got, want := reflect.ValueOf(p).FieldByIndex(f.Index), reflect.ValueOf(base).FieldByIndex(f.Index)
				if !decided[f.Name] && !got.Equal(want) {
					t.Errorf("candidate %+v, min rate %g: %s is %v, want the base policy's %v", c, hz, f.Name, got, want)
				}
			}
		}
	}
}

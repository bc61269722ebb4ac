package dbc_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/yukart/candec/dbc"
)

// TestQuirks covers the two quirks that used to stop loading: a signal
// name written twice in one message, and a multiplexer indicator without
// a value. Each loads, with a warning at the place it is written.
func TestQuirks(t *testing.T) {
	sig := func(s string) string { return " SG_ " + s + " (1,0) [0|0] \"\" X\n" }
	tests := []struct {
		name  string
		src   string
		warns []string
		// sigs are the compiled signals: "name start" or, for a
		// multiplexed one, "name start switch=lo-hi".
		sigs []string
		// check looks further at the compiled message.
		check func(t *testing.T, m *dbc.Message)
	}{
		{"signal name twice", msg1 + sig("S : 0|8@1+") + sig("S : 8|8@1+"),
			[]string{`3:2: message M: signal S is defined again (first at line 2): this one is named S_2`},
			[]string{"S 0", "S_2 8"}, nil},
		{"signal name three times, suffix taken", msg1 + sig("S : 0|8@1+") + sig("S_2 : 8|8@1+") + sig("S : 16|8@1+") + sig("S : 24|8@1+"),
			[]string{`4:2: message M: signal S is defined again (first at line 2): this one is named S_3`,
				`5:2: message M: signal S is defined again (first at line 2): this one is named S_4`},
			[]string{"S 0", "S_2 8", "S_3 16", "S_4 24"}, nil},
		{"statements naming a twice-written signal apply to both", msg1 + sig("S : 0|8@1+") + sig("S : 8|32@1+") +
			"CM_ SG_ 1 S \"speed\";\nVAL_ 1 S 1 \"one\";\n",
			[]string{`3:2: message M: signal S is defined again (first at line 2): this one is named S_2`},
			[]string{"S 0", "S_2 8"},
			func(t *testing.T, m *dbc.Message) {
				for _, s := range m.Signals {
					if s.Comment != "speed" || len(s.Values) != 1 || s.Values[0].Label != "one" {
						t.Errorf("%s: got comment %q, values %v; want \"speed\", [1 one]", s.Name, s.Comment, s.Values)
					}
				}
			}},
		{"twice-written switch: the first switches", msg1 + sig("A M : 0|8@1+") + sig("A M : 8|8@1+") + sig("B m1 : 16|8@1+") + "SG_MUL_VAL_ 1 B A 1-1;\n",
			[]string{`3:2: message M: signal A is defined again (first at line 2): this one is named A_2`},
			[]string{"A 0", "A_2 8", "B 16 A=1-1"}, nil},
		{"bare m, no switch", msg1 + sig("S m : 0|8@1+"),
			[]string{`2:8: signal S: multiplexer indicator "m" has no value and no SG_MUL_VAL_ gives one: taken as not multiplexed`},
			[]string{"S 0"}, nil},
		{"bare m beside a switch", msg1 + sig("A M : 0|8@1+") + sig("S m : 8|8@1+") + sig("T m2 : 16|8@1+"),
			[]string{`3:8: signal S: multiplexer indicator "m" has no value and no SG_MUL_VAL_ gives one: taken as not multiplexed`},
			[]string{"A 0", "S 8", "T 16 A=2-2"}, nil},
		{"bare m with SG_MUL_VAL_", msg1 + sig("A M : 0|8@1+") + sig("S m : 8|8@1+") + "SG_MUL_VAL_ 1 S A 3-4;\n",
			[]string{`3:8: signal S: multiplexer indicator "m" has no value: taken from SG_MUL_VAL_ (line 4)`},
			[]string{"A 0", "S 8 A=3-4"}, nil},
		{"bare mM, no SG_MUL_VAL_: a plain switch", msg1 + sig("A mM : 0|8@1+") + sig("S m5 : 8|8@1+"),
			[]string{`2:8: signal A: multiplexer indicator "mM" has no value and no SG_MUL_VAL_ gives one: taken as a plain switch (M)`},
			[]string{"A 0", "S 8 A=5-5"}, nil},
		{"bare mM with SG_MUL_VAL_: a cascaded switch", msg1 + sig("A M : 0|8@1+") + sig("B mM : 8|8@1+") + sig("C m7 : 16|8@1+") +
			"SG_MUL_VAL_ 1 B A 1-1;\nSG_MUL_VAL_ 1 C B 7-7;\n",
			[]string{`3:8: signal B: multiplexer indicator "mM" has no value: taken from SG_MUL_VAL_ (line 5)`},
			[]string{"A 0", "B 8 A=1-1", "C 16 B=7-7"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, err := load(tt.src)
			if err != nil {
				t.Fatalf("got error %v, want none", err)
			}
			var got []string
			for _, w := range db.Warnings {
				got = append(got, strings.TrimPrefix(w.String(), "t.dbc:"))
			}
			if strings.Join(got, "\n") != strings.Join(tt.warns, "\n") {
				t.Errorf("got warnings\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tt.warns, "\n  "))
			}
			m := db.Messages[0]
			var sigs []string
			for _, s := range m.Signals {
				line := s.Name + " " + strconv.Itoa(s.Start)
				if s.Mux != nil {
					line += " " + s.Mux.Switch.Name + "=" + strconv.FormatUint(s.Mux.Ranges[0].Lo, 10) + "-" + strconv.FormatUint(s.Mux.Ranges[0].Hi, 10)
				}
				sigs = append(sigs, line)
			}
			if strings.Join(sigs, ", ") != strings.Join(tt.sigs, ", ") {
				t.Errorf("got signals %q, want %q", sigs, tt.sigs)
			}
			if tt.check != nil {
				tt.check(t, m)
			}
		})
	}
}

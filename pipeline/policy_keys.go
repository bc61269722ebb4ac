package pipeline

import (
	"fmt"
	"iter"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/yukart/candec/internal/base/termtext"
)

// The keys of a policy file, each described once: policyKeys are the
// settings, selectorKeys what a rule matches on. The parser, the merge of
// defaults and rules, the list of keys in errors, a resolved policy's
// text (Policy.Describe) and as YAML (Policy.Settings, with which candec
// tune writes its files) and the tables in docs/policy.md (checked by a
// test) all come from these tables, so a new setting is one row and the
// field it is kept in.

// settings are the keys one section (defaults or a rule) sets; bit i of
// set says that policyKeys[i] is set.
type settings struct {
	set uint32
	// pol holds the keys that are a field of the resolved policy as
	// they are; stale_after is one of them, and Resolve works out the
	// StaleAfter of a signal where no section sets it.
	pol          Policy
	staleCycles  float64
	staleDefault time.Duration
}

// A setting key's bit must fit in settings.set.
var _ [32 - len(policyKeys)]struct{}

// policyKey is one setting: its YAML name, how its value is read and
// checked and where it is kept (typ), its value when no section sets it,
// and its line in docs/policy.md.
type policyKey struct {
	name string
	typ  keyType
	unit string // of a number, for the documentation
	// def is the value, in YAML, of the key when no section sets it; ""
	// for none (stale_after: then stale_cycles or stale_default decide).
	def  string
	note string // what def means, where that needs saying
	doc  string
	// text is the key's part of Policy.Describe ("cap 20 Hz"), "" when
	// the key is at rest; nil for a key another row shows (the
	// deadbands are on_change's; publish false is the whole text) or
	// that a resolved policy does not keep (stale_cycles and
	// stale_default become StaleAfter).
	text func(p *Policy) string
}

// policyKeys lists every setting, in the order of the documentation and
// of the list of keys in errors.
var policyKeys = [...]policyKey{
	{name: "publish", typ: boolKey(inPolicy(func(p *Policy) *bool { return &p.Publish })), def: "true",
		doc: "`false`: the signal is never published (no topic either)."},
	{name: "max_rate", typ: numberKey(inPolicy(func(p *Policy) *float64 { return &p.MaxRate })), unit: "Hz", def: "0", note: "no cap",
		text: func(p *Policy) string { return textIf(p.MaxRate > 0, "cap %g Hz", p.MaxRate) },
		doc:  "at most one envelope per 1/`max_rate` s: after a window closes, the message's next frame goes out at once (fresh); if the message stopped, the last value held still goes out (trailing). See \"Rate cap\" below."},
	{name: "on_change", typ: boolKey(inPolicy(func(p *Policy) *bool { return &p.OnChange })), def: "false", text: onChangeText,
		doc: "publish a value only when it differs from the last one published by more than the deadbands."},
	{name: "deadband", typ: numberKey(inPolicy(func(p *Policy) *float64 { return &p.Deadband })), def: "0",
		doc: "absolute deadband, in the signal's unit: a change of at most this much is not a change."},
	{name: "deadband_pct", typ: numberKey(inPolicy(func(p *Policy) *float64 { return &p.DeadbandPct })), def: "0",
		doc: "relative deadband, in percent of the magnitude of the last value published."},
	{name: "heartbeat", typ: durationKey(inPolicy(func(p *Policy) *time.Duration { return &p.Heartbeat })), def: "0", note: "none",
		text: func(p *Policy) string { return textIf(p.Heartbeat > 0, "heartbeat %v", p.Heartbeat) },
		doc:  "publish the current value again when nothing was published for this long."},
	{name: "stale_after", typ: durationKey(inPolicy(func(p *Policy) *time.Duration { return &p.StaleAfter })),
		text: func(p *Policy) string { return textIf(p.StaleAfter > 0, "stale %v", p.StaleAfter) },
		doc:  "flag the signal stale when its message has sent no frame for longer than this; `0` never. Overrides `stale_cycles` for the signals it applies to."},
	{name: "stale_cycles", typ: numberKey(inSection(func(s *settings) *float64 { return &s.staleCycles })), def: "0", note: "never",
		doc: "`stale_after` as a multiple of the message's cycle time (`GenMsgCycleTime` in the DBC)."},
	{name: "stale_default", typ: durationKey(inSection(func(s *settings) *time.Duration { return &s.staleDefault })), def: "0", note: "never",
		doc: "`stale_after` for signals whose message has no cycle time, where no `stale_after` applies."},
}

// Describe summarises a resolved policy for a person, from the text of
// each key in policyKeys: "cap 20 Hz, on change ±0.5, heartbeat 1s,
// stale 1.5s"; "every value" when no key limits it, "not published"
// when publish is false.
func (p Policy) Describe() string {
	if !p.Publish {
		return "not published"
	}
	var parts []string
	for i := range policyKeys {
		if text := policyKeys[i].text; text != nil {
			if s := text(&p); s != "" {
				parts = append(parts, s)
			}
		}
	}
	if len(parts) == 0 {
		return "every value"
	}
	return strings.Join(parts, ", ")
}

// textIf is a key's text when set, "" when not.
func textIf(set bool, format string, args ...any) string {
	if !set {
		return ""
	}
	return fmt.Sprintf(format, args...)
}

// onChangeText is on_change's text, with the deadbands that only it
// uses: "on change ±0.5/±2%".
func onChangeText(p *Policy) string {
	if !p.OnChange {
		return ""
	}
	s := "on change"
	switch {
	case p.Deadband > 0 && p.DeadbandPct > 0:
		s += fmt.Sprintf(" ±%g/±%g%%", p.Deadband, p.DeadbandPct)
	case p.Deadband > 0:
		s += fmt.Sprintf(" ±%g", p.Deadband)
	case p.DeadbandPct > 0:
		s += fmt.Sprintf(" ±%g%%", p.DeadbandPct)
	}
	return s
}

// keyType is how a setting's value is written, read and checked, and
// where it is kept.
type keyType struct {
	name  string // as the documentation calls it
	parse func(pp *policyParser, v *yaml.Node, key string, s *settings) error
	copy  func(dst, src *settings)
	// value is the key's value in a resolved policy, as YAML that parse
	// reads back; nil for a key a resolved policy does not keep
	// (stale_cycles and stale_default become StaleAfter).
	value func(p *Policy) string
}

// field is where a setting's value is kept: get finds it in a section's
// settings; pol, in a resolved policy, is nil for a key that only a
// section keeps.
type field[T any] struct {
	get func(*settings) *T
	pol func(*Policy) *T
}

// inPolicy is a setting kept in the field *f(p) of the resolved policy,
// as it is.
func inPolicy[T any](f func(*Policy) *T) field[T] {
	return field[T]{get: func(s *settings) *T { return f(&s.pol) }, pol: f}
}

// inSection is a setting only a section keeps, in *f(s): Resolve works
// out a field of the policy from it.
func inSection[T any](f func(*settings) *T) field[T] { return field[T]{get: f} }

// boolKey is a setting of true or false.
func boolKey(f field[bool]) keyType {
	return fieldKey("bool", (*policyParser).boolean, strconv.FormatBool, f)
}

// numberKey is a setting of a finite number ≥ 0.
func numberKey(f field[float64]) keyType {
	return fieldKey("number", (*policyParser).number, formatNumber, f)
}

// durationKey is a setting of a duration ≥ 0.
func durationKey(f field[time.Duration]) keyType {
	return fieldKey("duration", (*policyParser).duration, time.Duration.String, f)
}

// formatNumber writes a number as the shortest text that reads back as
// it.
func formatNumber(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

func fieldKey[T any](name string, read func(*policyParser, *yaml.Node, string) (T, error), format func(T) string, f field[T]) keyType {
	k := keyType{
		name: name,
		parse: func(pp *policyParser, v *yaml.Node, key string, s *settings) error {
			x, err := read(pp, v, key)
			if err != nil {
				return err
			}
			*f.get(s) = x
			return nil
		},
		copy: func(dst, src *settings) { *f.get(dst) = *f.get(src) },
	}
	if f.pol != nil {
		k.value = func(p *Policy) string { return format(*f.pol(p)) }
	}
	return k
}

// Settings yields the YAML key and value of every setting a resolved
// policy keeps, in the order of docs/policy.md ("publish", "true";
// "max_rate", "20"; …): a rule that sets them all gives a signal p,
// whatever the defaults set (when publish is false, the others do
// nothing). A key only a section keeps (stale_cycles) is not yielded:
// its effect is the field Resolve works out from it (StaleAfter), which
// its own key writes. So a policy file written with it (as candec tune
// writes one) keeps every key of the table, however many are added.
func (p Policy) Settings() iter.Seq2[string, string] {
	return func(yield func(key, value string) bool) {
		for i := range policyKeys {
			k := &policyKeys[i]
			if k.typ.value != nil && !yield(k.name, k.typ.value(&p)) {
				return
			}
		}
	}
}

// initial are the settings before the defaults: each key at its def, none
// marked set. Computed on first use, not at start: a command that reads
// no policy (candec version) does not pay for it.
var initial = sync.OnceValue(func() settings {
	var s settings
	pp := &policyParser{file: "(built-in)"}
	for i := range policyKeys {
		k := &policyKeys[i]
		if k.def == "" {
			continue
		}
		var doc yaml.Node
		err := yaml.Unmarshal([]byte(k.def), &doc)
		if err == nil {
			err = k.typ.parse(pp, doc.Content[0], k.name, &s)
		}
		if err != nil {
			panic(err) // a defect of the table, which the tests catch
		}
	}
	return s
})

// staleAfterBit is stale_after's bit in settings.set: Resolve asks
// whether a section set it.
var staleAfterBit = keyBit("stale_after")

func keyBit(name string) uint32 {
	if i := settingIndex(name); i >= 0 {
		return 1 << i
	}
	panic("pipeline: no policy key " + name)
}

// settingIndex returns the position of setting name in policyKeys, or
// -1.
func settingIndex(name string) int {
	for i := range policyKeys {
		if policyKeys[i].name == name {
			return i
		}
	}
	return -1
}

// merge overrides s with every key o sets.
func (s *settings) merge(o *settings) {
	for i := range policyKeys {
		if o.set&(1<<i) != 0 {
			policyKeys[i].typ.copy(s, o)
		}
	}
	s.set |= o.set
}

// selectorKey is one selector of a rule: its YAML name, how it is read
// into the rule, and its line in docs/policy.md. rule.matches applies
// it.
type selectorKey struct {
	name  string
	parse func(pp *policyParser, v *yaml.Node, key string, r *rule) error
	doc   string
}

// selectorKeys lists every selector, in the order of the documentation.
var selectorKeys = [...]selectorKey{
	{name: "match", parse: globsKey(func(r *rule) *[]string { return &r.match }),
		doc: "a glob or a list of globs, against the signal name (`MOT_Speed`) **or** its full name `message.signal` (`MCU_MotorStatus.MOT_Speed`). `*` matches any run of characters, `?` one, `[a-z]` a class (Go's `path.Match`)."},
	{name: "unit", parse: globsKey(func(r *rule) *[]string { return &r.unit }),
		doc: "a glob or a list of globs against the DBC unit."},
	{name: "has_values", parse: func(pp *policyParser, v *yaml.Node, key string, r *rule) error {
		b, err := pp.boolean(v, key)
		r.hasValues = &b
		return err
	}, doc: "`true`: signals with a value table (states, gears, modes); `false`: signals without."},
	{name: "housekeeping", parse: func(pp *policyParser, v *yaml.Node, key string, r *rule) error {
		b, err := pp.boolean(v, key)
		r.housekeeping = &b
		return err
	}, doc: "`true`: checksums, CRCs and rolling or alive counters, by a word of the signal's name in any case (`CHECKSUM`, `Checksum`, `CRC8_STAT1`, `MOT_StatusCounter`, `ALIVE`, `RC`; not `SOURCE`, `ARC_ANGLE` or `ErrCount`: see docs/tuning.md); `false`: the others. Unlike a `match` glob, which keeps its case."},
}

// globsKey is a selector of one glob or a list, added to *f(r).
func globsKey(f func(*rule) *[]string) func(*policyParser, *yaml.Node, string, *rule) error {
	return func(pp *policyParser, v *yaml.Node, key string, r *rule) error {
		globs, err := pp.strings(v, key)
		if err != nil {
			return err
		}
		for _, g := range globs {
			if _, err := path.Match(g, ""); err != nil {
				return pp.errorf(v, key, "bad glob %s: %v", termtext.Quote(g), err)
			}
		}
		*f(r) = append(*f(r), globs...)
		return nil
	}
}

func findSelector(name string) *selectorKey {
	for i := range selectorKeys {
		if selectorKeys[i].name == name {
			return &selectorKeys[i]
		}
	}
	return nil
}

// keyNames lists the keys a section may hold, for errors: a rule's
// selectors, then the settings.
func keyNames(inRule bool) string {
	var names []string
	if inRule {
		for _, k := range selectorKeys {
			names = append(names, k.name)
		}
	}
	for _, k := range policyKeys {
		names = append(names, k.name)
	}
	return strings.Join(names, ", ")
}

package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/benchmarks/scenario"
	"github.com/yukart/candec/internal/lab/jitter"
	"github.com/yukart/candec/internal/lab/latency"
)

var t0 = time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)

func sample(scen string, at time.Time, env, brokerCPU, p99 float64) Result {
	return Result{
		Scenario: scen, Profile: "mix", Time: at, Host: "desk",
		Load: "car", Speed: 1, DBC: "mix8.dbc", Signals: "8", Policy: "cap-50hz.yaml", Cap: "50 Hz", Stream: "signals",
		DurationS: 20, WarmupS: 3, RawSubscribers: 3, EnvelopeSubscribers: 5,
		FramesOffered: 890, FramesDelivered: 890,
		Envelopes: env, Deliveries: env * 5,
		Latency: Latency{
			Raw:       latency.Summary{N: 53400, P50: 5, P99: 10, Max: 12},
			Envelopes: latency.Summary{N: 400000, P50: 1.2, P99: p99, Max: 40},
		},
		CPU:      CPU{Broker: brokerCPU, Decoder: 3, Replay: 1, Subscribers: 20, Each: 2.5},
		Bytes:    Bytes{Raw: 25000, Envelopes: 300000, Delivered: 1600000},
		DrainS:   0.2,
		Versions: Versions{Candec: "dev", Go: "go1.26.0", Broker: "mosquitto 2.0.11"},
		Warnings: []string{},
	}
}

func TestJSONLineRoundTrip(t *testing.T) {
	r := sample("car-8-50hz", t0, 4300, 12.5, 8)
	r.Decoder = &DecoderStats{FramesIn: 17800, Published: 86000, SuppressedCap: 50000}
	r.Warnings = []string{"envelope loss 3 (0.001 %)"}
	var buf bytes.Buffer
	if err := Append(&buf, &r); err != nil {
		t.Fatal(err)
	}
	line := buf.String()
	if strings.Count(line, "\n") != 1 || !strings.HasSuffix(line, "\n") {
		t.Fatalf("Append wrote %q, want one line", line)
	}
	// The field names a script reads.
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"scenario", "profile", "load", "dbc", "policy", "frames_offered_per_s", "frames_delivered_per_s",
		"raw_lost", "envelopes_per_s", "deliveries_per_s", "envelopes_lost", "latency_ms", "cpu_pct", "broker_us_per_delivery",
		"bytes_per_s", "drain_s", "versions", "host", "time", "warnings"} {
		if _, ok := m[k]; !ok {
			t.Errorf("result line lacks %q: %s", k, line)
		}
	}
	if got := m["latency_ms"].(map[string]any)["envelopes"].(map[string]any)["p99"]; got != 8.0 {
		t.Errorf("latency_ms.envelopes.p99 = %v, want 8", got)
	}
	if got := m["cpu_pct"].(map[string]any)["broker"]; got != 12.5 {
		t.Errorf("cpu_pct.broker = %v, want 12.5", got)
	}
	back, err := Read(&buf, "buf")
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != 1 || !reflect.DeepEqual(back[0], r) {
		t.Errorf("Read(Append(r)) = %+v, want %+v", back, r)
	}
}

func TestReadErrorNamesLine(t *testing.T) {
	_, err := Read(strings.NewReader("{\"scenario\":\"a\"}\n\n{oops\n"), "x.jsonl")
	if err == nil || !strings.Contains(err.Error(), "x.jsonl:3") {
		t.Errorf("Read error = %v, want one naming x.jsonl:3", err)
	}
}

func TestAppendFileAndReadDir(t *testing.T) {
	dir := t.TempDir()
	day2 := t0.Add(24 * time.Hour)
	for _, r := range []Result{sample("b", day2, 2, 1, 1), sample("a", t0, 1, 1, 1)} {
		path, err := AppendFile(dir, &r)
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.Join(dir, "desk-"+r.Time.Format(time.DateOnly)+".jsonl"); path != want {
			t.Errorf("AppendFile path = %s, want %s", path, want)
		}
	}
	// Another host whose name starts with this one is not read.
	other := sample("c", t0, 3, 1, 1)
	other.Host = "desk-2"
	if _, err := AppendFile(dir, &other); err != nil {
		t.Fatal(err)
	}
	rs, err := ReadDir(dir, "desk")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rs {
		got = append(got, r.Scenario)
	}
	if want := []string{"a", "b"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ReadDir scenarios = %v, want %v (oldest first, host desk only)", got, want)
	}
	if _, err := ReadDir(dir, "nohost"); !errors.Is(err, ErrNoResults) {
		t.Errorf("ReadDir(nohost) error = %v, want ErrNoResults", err)
	}
}

func TestSummarizeMediansOfLastThree(t *testing.T) {
	var rs []Result
	// Four runs of x: the first (an outlier) is dropped, the median of
	// the rest taken figure by figure.
	for i, v := range []struct{ env, cpu, p99 float64 }{{9999, 99, 999}, {4300, 12, 9}, {4200, 30, 7}, {4400, 11, 8}} {
		rs = append(rs, sample("x", t0.Add(time.Duration(i)*time.Minute), v.env, v.cpu, v.p99))
	}
	rs = append(rs, sample("y", t0.Add(10*time.Minute), 100, 1, 2))
	s := Summarize(rs, []string{"y", "nope"}, 0)
	if len(s.Rows) != 2 || s.Rows[0].Scenario != "y" || s.Rows[1].Scenario != "x" {
		t.Fatalf("rows = %+v, want y then x", s.Rows)
	}
	x := s.Rows[1]
	if x.Runs != 3 {
		t.Errorf("x runs = %d, want 3", x.Runs)
	}
	checks := []struct {
		what      string
		got, want float64
	}{
		{"envelopes", x.Median.Envelopes, 4300},
		{"deliveries", x.Median.Deliveries, 21500},
		{"broker cpu", x.Median.CPU.Broker, 12},
		{"p99", x.Median.Latency.Envelopes.P99, 8},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("x median %s = %v, want %v", c.what, c.got, c.want)
		}
	}
	if len(s.Warnings) != 0 {
		t.Errorf("warnings = %v, want none", s.Warnings)
	}
	if !s.From.Equal(t0.Add(time.Minute)) || !s.To.Equal(t0.Add(10*time.Minute)) {
		t.Errorf("span = %v..%v, want %v..%v", s.From, s.To, t0.Add(time.Minute), t0.Add(10*time.Minute))
	}
}

func TestSummarizeWarnsOnVersionChange(t *testing.T) {
	a, b := sample("x", t0, 1, 1, 1), sample("x", t0.Add(time.Minute), 1, 1, 1)
	b.Versions.Broker = "mosquitto 2.0.18"
	b.Warnings = []string{"short sample"}
	s := Summarize([]Result{a, b}, nil, 3)
	if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], "differ in host or versions") {
		t.Errorf("warnings = %v, want one about versions", s.Warnings)
	}
	if got := s.Rows[0].Warnings; !reflect.DeepEqual(got, []string{"short sample"}) {
		t.Errorf("row warnings = %v, want [short sample]", got)
	}
}

func TestMed(t *testing.T) {
	tests := []struct {
		in   []float64
		want float64
	}{
		{nil, 0}, {[]float64{5}, 5}, {[]float64{5, 1}, 3}, {[]float64{9, 1, 5}, 5}, {[]float64{4, 1, 3, 2}, 2.5},
	}
	for _, tt := range tests {
		in := append([]float64(nil), tt.in...)
		if got := med(in); got != tt.want {
			t.Errorf("med(%v) = %v, want %v", tt.in, got, tt.want)
		}
		if !reflect.DeepEqual(in, tt.in) && tt.in != nil {
			t.Errorf("med reordered its input: %v, want %v", in, tt.in)
		}
	}
}

func TestWriteMarkdown(t *testing.T) {
	rs := []Result{sample("car-8-50hz", t0, 4300, 12, 8)}
	s := Summarize(rs, nil, 3)
	var buf bytes.Buffer
	err := WriteMarkdown(&buf, s, Meta{
		Source:     "benchmarks/results/desk-*.jsonl",
		Generated:  t0,
		References: map[string]*scenario.Reference{"car-8-50hz": {Envelopes: 4300, Deliveries: 21600, BrokerCPU: 47, P50: 16, P99: 32}},
	})
	if err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"# Bench baseline: desk",
		"| Load | Signals/frame | Cap | Stream | Envelopes/s | Deliveries/s (×5) | Broker CPU | Envelope latency p50 / p99 (ms) |",
		"| car-8-50hz | car | 8 | 50 Hz | signals | 4,300 | 21,500 | 12 % | 1.2 / 8.0 | 0 | 0 | 3.0 % | 0.2 | 1 |",
		"| car-8-50hz | 4,300 → 4,300 | 21,600 → 21,500 | 47 % → 12 % | 16 → 1.2 | 32 → 8.0 |",
		"mosquitto 2.0.11",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "## Warnings") {
		t.Errorf("markdown has a warnings section without warnings:\n%s", out)
	}
}

func TestFormatters(t *testing.T) {
	tests := []struct{ got, want string }{
		{envelopes(&Result{Envelopes: 11360, EnvelopesOffered: 35950}), "11,360 (35,950 offered)"},
		{envelopes(&Result{Envelopes: 4300, EnvelopesOffered: 4300}), "4,300"},
		{loss(0, 0), "0"},
		{loss(2762480, 69.87), "2,762,480 (70 %)"},
		{loss(3, 0.0012), "3 (0.0012 %)"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

func FuzzRead(f *testing.F) {
	var buf bytes.Buffer
	r := sample("x", t0, 1, 2, 3)
	_ = Append(&buf, &r)
	f.Add(buf.Bytes())
	f.Add([]byte("{}\n\n{\"scenario\":1}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		rs, err := Read(bytes.NewReader(b), "fuzz")
		if err != nil {
			return
		}
		// Whatever was read summarises and writes without failing.
		s := Summarize(rs, nil, 3)
		if err := WriteMarkdown(&bytes.Buffer{}, s, Meta{}); err != nil {
			t.Fatal(err)
		}
	})
}

// TestAppendFileWholeLines: whatever the file held, the appended result
// is one whole line of its own.
func TestAppendFileWholeLines(t *testing.T) {
	r := sample("x", t0, 1, 1, 1)
	var line bytes.Buffer
	if err := Append(&line, &r); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, before, want string }{
		{"new file", "", line.String()},
		{"after whole lines", "{\"scenario\":\"a\"}\n", "{\"scenario\":\"a\"}\n" + line.String()},
		{"after a partial line", "{\"scenario\":\"a\",\"pro", "{\"scenario\":\"a\",\"pro\n" + line.String()},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		path := filepath.Join(dir, FileName("desk", t0))
		if tt.before != "" {
			if err := os.WriteFile(path, []byte(tt.before), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := AppendFile(dir, &r); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tt.want {
			t.Errorf("%s: file holds\n%q\nwant\n%q", tt.name, b, tt.want)
		}
	}
}

func TestProfiles(t *testing.T) {
	var rs []Result
	for i, p := range []string{"stress", "mix", "smoke", "mix"} {
		r := sample(fmt.Sprint(i), t0, 1, 1, 1)
		r.Profile = p
		rs = append(rs, r)
	}
	if got, want := Profiles(rs), []string{"mix", "smoke", "stress"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Profiles = %v, want %v", got, want)
	}
	var got []string
	for _, r := range OfProfile(rs, "mix") {
		got = append(got, r.Scenario)
	}
	if want := []string{"1", "3"}; !reflect.DeepEqual(got, want) {
		t.Errorf("OfProfile(mix) scenarios = %v, want %v", got, want)
	}
}

func TestMarkdownHeader(t *testing.T) {
	rs := []Result{sample("x", t0, 1, 1, 1), sample("x", t0.Add(time.Minute), 1, 1, 1)}
	tests := []struct {
		last int
		meta Meta
		want string
	}{
		{0, Meta{Source: "r/desk-*.jsonl", Generated: t0},
			"Written by `candec bench summary` on 2026-11-03 from r/desk-*.jsonl: for each scenario the median of its last 3 runs (2026-11-03 10:00 to 2026-11-03 10:01 UTC).\n"},
		{5, Meta{Source: "r/desk-*.jsonl", Generated: t0, Profile: "mix", Command: "candec bench summary --profile mix --host desk --last 5"},
			"Written by `candec bench summary --profile mix --host desk --last 5` on 2026-11-03 from r/desk-*.jsonl: for each scenario the median of its last 5 runs of profile mix (2026-11-03 10:00 to 2026-11-03 10:01 UTC).\n"},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		if err := WriteMarkdown(&buf, Summarize(rs, nil, tt.last), tt.meta); err != nil {
			t.Fatal(err)
		}
		if _, got, _ := strings.Cut(buf.String(), "\n\n"); !strings.HasPrefix(got, tt.want) {
			t.Errorf("last %d: header line\n%q\nwant\n%q", tt.last, strings.SplitN(got, "\n", 2)[0], tt.want)
		}
	}
}

// TestJitterInSummary checks that a result's cyclic jitter reads back,
// that a summary takes the median of each figure over the runs that
// measured it, and that results without it (older lines, floods) give
// no jitter table, so that the baseline they made is written again
// byte for byte.
func TestJitterInSummary(t *testing.T) {
	withJitter := func(at time.Time, p99, maxPct float64) Result {
		r := sample("car-8-none", at, 7000, 60, 20)
		r.Jitter = &jitter.Summary{N: 600000, Topics: 216, P50: 0.5, P99: p99, Max: 40, P50Pct: 3, P99Pct: 60, MaxPct: maxPct, PathP50: 0.4, PathP99: 8, PathMax: 30}
		return r
	}
	var buf bytes.Buffer
	r := withJitter(t0, 9, 400)
	if err := Append(&buf, &r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"jitter":{"n":600000,"topics":216,"p50_ms":0.5,"p99_ms":9,"max_ms":40,"p50_pct":3,"p99_pct":60,"max_pct":400,"path_p50_ms":0.4,"path_p99_ms":8,"path_max_ms":30}`) {
		t.Errorf("result line lacks the jitter: %s", buf.String())
	}
	back, err := Read(&buf, "buf")
	if err != nil || len(back) != 1 || !reflect.DeepEqual(back[0].Jitter, r.Jitter) {
		t.Fatalf("Read(Append(r)).Jitter = %+v (%v), want %+v", back, err, r.Jitter)
	}
	rs := []Result{withJitter(t0, 9, 400), sample("car-8-none", t0.Add(time.Minute), 7000, 60, 20),
		withJitter(t0.Add(2*time.Minute), 11, 300), withJitter(t0.Add(3*time.Minute), 10, 200)}
	s := Summarize(rs, nil, 3)
	if j := s.Rows[0].Median.Jitter; j == nil || j.P99 != 10.5 || j.MaxPct != 250 || j.Topics != 216 {
		t.Errorf("median jitter = %+v, want p99 10.5 ms and max 250 %% (the two of the last three that measured it)", j)
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, s, Meta{Generated: t0}); err != nil {
		t.Fatal(err)
	}
	if want := "| car-8-none | 216 | 600,000 | 0.50 / 11 / 40 | 3.0 % / 60.0 % / 250 % | 0.40 / 8.0 / 30 |"; !strings.Contains(md.String(), want) {
		t.Errorf("markdown lacks %q:\n%s", want, md.String())
	}
	md.Reset()
	if err := WriteMarkdown(&md, Summarize([]Result{sample("car-8-none", t0, 7000, 60, 20)}, nil, 3), Meta{Generated: t0}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md.String(), "jitter") {
		t.Errorf("markdown of results without jitter mentions it:\n%s", md.String())
	}
}

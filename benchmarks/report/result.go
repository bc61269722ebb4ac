package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/yukart/candec/internal/lab/jitter"
	"github.com/yukart/candec/internal/lab/latency"
)

// Errors.
var (
	// ErrNoResults: no result lines were found.
	ErrNoResults = errors.New("report: no results")
)

// Result is one bench run. See the package comment.
type Result struct {
	// Scenario and Profile name the run.
	Scenario string `json:"scenario"`
	Profile  string `json:"profile"`
	// Time is when the measured window opened, UTC.
	Time time.Time `json:"time"`
	// Host is the machine's stable name.
	Host string `json:"host"`

	// Load is the load's label; Speed its replay speed (0 for flood);
	// PerFrame whether raw frames went one per message.
	Load     string  `json:"load"`
	Speed    float64 `json:"speed"`
	Flood    bool    `json:"flood,omitempty"`
	PerFrame bool    `json:"per_frame,omitempty"`
	// DBC and Policy are file base names ("default" for the service's
	// default policy); Signals and Cap their table labels.
	DBC     string `json:"dbc"`
	Signals string `json:"signals"`
	Policy  string `json:"policy"`
	Cap     string `json:"cap"`
	// Stream is what the envelope subscribers took: "signals" or
	// "window".
	Stream string `json:"stream"`
	// DurationS and WarmupS are the measured window and the warm-up.
	DurationS float64 `json:"duration_s"`
	WarmupS   float64 `json:"warmup_s"`
	// RawSubscribers and EnvelopeSubscribers are the subscriber counts
	// (the decoder not included).
	RawSubscribers      int `json:"raw_subscribers"`
	EnvelopeSubscribers int `json:"envelope_subscribers"`

	// FramesOffered is the raw frames published per second, from the
	// raw stream's seq; FramesDelivered what each raw subscriber
	// received per second (mean).
	FramesOffered   float64 `json:"frames_offered_per_s"`
	FramesDelivered float64 `json:"frames_delivered_per_s"`
	// RawLost is the raw frames lost, summed over raw subscribers, from
	// seq gaps and the replay's final count; RawLossPct its share.
	RawLost    uint64  `json:"raw_lost"`
	RawLossPct float64 `json:"raw_loss_pct"`
	// Envelopes is the signal envelopes published per second, as each
	// envelope subscriber saw them through seq (received + lost, mean).
	Envelopes float64 `json:"envelopes_per_s"`
	// EnvelopesOffered is what the policy let through per second: the
	// envelopes published plus those the decoder had to coalesce because
	// the broker did not take them (from its metrics; 0 when unknown).
	EnvelopesOffered float64 `json:"envelopes_offered_per_s"`
	// Windows is the window-stream messages per second, on the window
	// stream.
	Windows float64 `json:"windows_per_s,omitempty"`
	// Deliveries is the messages the broker delivered per second to the
	// envelope subscribers, summed: envelopes (or windows) × subscribers.
	Deliveries float64 `json:"deliveries_per_s"`
	// EnvelopesLost is the envelopes lost, summed over envelope
	// subscribers, from per-topic seq gaps and the retained final seq;
	// EnvelopeLossPct its share.
	EnvelopesLost   uint64  `json:"envelopes_lost"`
	EnvelopeLossPct float64 `json:"envelope_loss_pct"`
	// Latency is from the frame timestamp to the subscriber.
	Latency Latency `json:"latency_ms"`
	// Jitter is the cyclic jitter over the envelope subscribers: how far
	// each arrival interval of a cyclic topic fell from its period
	// (package jitter); nil for a flood, which has no cycle, and in
	// results written before it was measured.
	Jitter *jitter.Summary `json:"jitter,omitempty"`
	// CPU is per process, in % of one core over the measured window.
	CPU CPU `json:"cpu_pct"`
	// BrokerUsPerDelivery is the broker's CPU time per message it
	// delivered (raw batches to the decoder and raw subscribers,
	// envelopes or windows to envelope subscribers), in µs.
	BrokerUsPerDelivery float64 `json:"broker_us_per_delivery"`
	// BrokerUsPerMessage is the broker's CPU time per message in or out:
	// the deliveries plus what the replay and the decoder published (on
	// the window stream the decoder still publishes every per-signal
	// envelope, which nobody in the run takes).
	BrokerUsPerMessage float64 `json:"broker_us_per_message"`
	// Bytes is payload bytes per second.
	Bytes Bytes `json:"bytes_per_s"`
	// DrainS is how long messages kept arriving after the load stopped.
	DrainS float64 `json:"drain_s"`
	// Decoder holds the decoder's own counters over the run, if read.
	Decoder *DecoderStats `json:"decoder,omitempty"`

	// Versions of the tools.
	Versions Versions `json:"versions"`
	// Warnings are what makes the run suspect: loss, short samples, a
	// subscriber that never became ready.
	Warnings []string `json:"warnings"`
}

// Latency holds the latency summaries of the two streams.
type Latency struct {
	// Raw is per frame, over the raw subscribers.
	Raw latency.Summary `json:"raw"`
	// Envelopes is per envelope, over the envelope subscribers.
	Envelopes latency.Summary `json:"envelopes"`
}

// CPU is each process's CPU in % of one core.
type CPU struct {
	Broker  float64 `json:"broker"`
	Decoder float64 `json:"decoder"`
	Replay  float64 `json:"replay"`
	// Subscribers is every bench subscriber together (they share the
	// bench process); Each is that divided by their number.
	Subscribers float64 `json:"subscribers"`
	Each        float64 `json:"each"`
	// Machine is the whole machine's busy CPU (up to cores × 100 %);
	// Other the part of it no measured process used: other work on the
	// machine, which spoils a baseline.
	Machine float64 `json:"machine"`
	Other   float64 `json:"other"`
}

// Bytes is payload bytes per second.
type Bytes struct {
	// Raw is the raw stream as one subscriber receives it.
	Raw float64 `json:"raw"`
	// Envelopes is the envelope (or window) stream as one subscriber
	// receives it.
	Envelopes float64 `json:"envelopes"`
	// Delivered is everything the broker delivered to the bench's
	// subscribers and the decoder.
	Delivered float64 `json:"delivered"`
}

// DecoderStats are the decoder's own counters over the measured window,
// from its /metrics.
type DecoderStats struct {
	// FramesIn and FramesLost are raw frames it received and lost.
	FramesIn   uint64 `json:"frames_in"`
	FramesLost uint64 `json:"frames_lost"`
	// Published is signal envelopes published; Windows window-stream
	// messages.
	Published uint64 `json:"published"`
	Windows   uint64 `json:"windows,omitempty"`
	// SuppressedCap and SuppressedUnchanged are values the policy held
	// back; Coalesced envelopes a slow broker made it replace (loss that
	// subscribers see in seq).
	SuppressedCap       uint64 `json:"suppressed_cap"`
	SuppressedUnchanged uint64 `json:"suppressed_unchanged"`
	Coalesced           uint64 `json:"coalesced"`
	// PublishErrors counts publishes the MQTT client failed.
	PublishErrors uint64 `json:"publish_errors"`
}

// Versions names the tools a run used.
type Versions struct {
	Candec string `json:"candec"`
	Go     string `json:"go"`
	Broker string `json:"broker"`
}

// FileName returns the results file of host on the day of t:
// "<host>-<yyyy-mm-dd>.jsonl".
func FileName(host string, t time.Time) string {
	return host + "-" + t.UTC().Format(time.DateOnly) + ".jsonl"
}

// Append writes r as one JSON line to w.
func Append(w io.Writer, r *Result) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

// AppendFile appends r to the results file of its host and day in dir,
// creating both as needed, and returns the file's path.
//
// The file is a log that grows by one line per run, so it is appended to
// rather than rewritten: a bench interrupted after some runs keeps theirs.
// What it must never hold is part of a line: the line goes in one write,
// a write that fails part-way (a full disk) is cut off again, and a file
// that does not end with a newline (an editor, a copy cut short) gets one
// first, so the new line stays whole and Read names the broken one.
func AppendFile(dir string, r *Result) (string, error) {
	line, err := json.Marshal(r)
	if err != nil {
		return "", fmt.Errorf("report: %w", err)
	}
	path := filepath.Join(dir, FileName(r.Host, r.Time))
	return path, AppendLine(path, append(line, '\n'))
}

// AppendLine appends line, which ends with a newline, to the log file
// path (made, with its directory, as needed) as AppendFile appends a
// result: in one write, cut off again when the write fails part-way,
// after a newline when the file does not end with one.
func AppendLine(path string, line []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("report: %w", err)
	}
	size := fi.Size()
	if size > 0 {
		var last [1]byte
		if _, err := f.ReadAt(last[:], size-1); err != nil {
			f.Close()
			return fmt.Errorf("report: %s: %w", path, err)
		}
		if last[0] != '\n' {
			line = append([]byte{'\n'}, line...)
		}
	}
	if _, err := f.Write(line); err != nil {
		if fi.Mode().IsRegular() {
			_ = f.Truncate(size)
		}
		f.Close()
		return fmt.Errorf("report: %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("report: %s: %w", path, err)
	}
	return f.Close()
}

// Read parses result lines from r; name is used in errors. Blank lines
// are skipped.
func Read(r io.Reader, name string) ([]Result, error) {
	var out []Result
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var res Result
		if err := json.Unmarshal(b, &res); err != nil {
			return out, fmt.Errorf("report: %s:%d: %w", name, line, err)
		}
		out = append(out, res)
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("report: %s: %w", name, err)
	}
	return out, nil
}

// Files returns the results files of host in dir, by name (so oldest day
// first); none is no error.
func Files(dir, host string) ([]string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, host+"-*.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	out := paths[:0]
	for _, p := range paths {
		// "<host>-<date>.jsonl" only: a host "vm" must not read "vm-2-…".
		date := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), host+"-"), ".jsonl")
		if _, err := time.Parse(time.DateOnly, date); err == nil {
			out = append(out, p)
		}
	}
	return out, nil
}

// ReadDir reads every results file of host in dir, oldest first.
func ReadDir(dir, host string) ([]Result, error) {
	paths, err := Files(dir, host)
	if err != nil {
		return nil, err
	}
	var out []Result
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return out, fmt.Errorf("report: %w", err)
		}
		rs, err := Read(f, p)
		f.Close()
		if err != nil {
			return out, err
		}
		out = append(out, rs...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w for host %s in %s", ErrNoResults, host, dir)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out, nil
}

// OfProfile returns the results of profile, in their order.
func OfProfile(results []Result, profile string) []Result {
	var out []Result
	for _, r := range results {
		if r.Profile == profile {
			out = append(out, r)
		}
	}
	return out
}

// Profiles returns the profiles results were run with, sorted, each once.
func Profiles(results []Result) []string {
	var out []string
	for _, r := range results {
		if !slices.Contains(out, r.Profile) {
			out = append(out, r.Profile)
		}
	}
	sort.Strings(out)
	return out
}

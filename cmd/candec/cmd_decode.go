package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/yukart/candec/bench/progress"
	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/valuelog"
)

func init() {
	commands["decode"] = command{
		summary: "decode a candump capture with DBC files (offline)",
		run:     runDecode,
	}
}

// dbcFlag collects --dbc values: "FILE[,FILE]" for every interface, or
// "IFACE=FILE[,FILE]" for one interface of a multi-bus capture.
type dbcFlag struct {
	all   []string
	iface map[string][]string
}

func (d *dbcFlag) String() string { return "" }

func (d *dbcFlag) Set(v string) error {
	name, files, ok := strings.Cut(v, "=")
	if !ok {
		d.all = append(d.all, splitList(v)...)
		return nil
	}
	if name == "" || files == "" {
		return fmt.Errorf("want IFACE=FILE[,FILE], got %q", v)
	}
	if d.iface == nil {
		d.iface = map[string][]string{}
	}
	d.iface[name] = append(d.iface[name], splitList(files)...)
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func runDecode(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "decode", "--dbc [IFACE=]FILE[,FILE] [flags] CAPTURE|-")
	var dbcs dbcFlag
	fs.Var(&dbcs, "dbc", "DBC file(s) for every interface, or IFACE=FILE[,FILE] for one interface (repeatable)")
	format := fs.String("format", "json", "output format: json (JSON lines) or csv")
	signals := fs.String("signals", "", "only signals whose name or message.signal matches this glob (comma-separated globs)")
	policy := fs.String("policy", "", "run the publishing policy (YAML; \"default\" for the built-in one) and print the envelopes the service would publish")
	template := fs.String("topic-template", "", "with --policy: topic template (default yukart/vehicle/{signal})")
	window := fs.Bool("window", false, "with --policy: also print the window stream")
	tail := fs.Duration("tail", 0, "with --policy: let time run on this long after the last frame (stale marks, heartbeats)")
	skip := fs.Bool("skip-invalid", false, "skip malformed capture lines (counted) instead of stopping")
	out := fs.String("o", "-", "output file (- for stdout)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return &exitError{2, errors.New("decode: want exactly one CAPTURE (or - for stdin)")}
	}
	if len(dbcs.all) == 0 && len(dbcs.iface) == 0 {
		return &exitError{2, errors.New("decode: --dbc is required")}
	}
	f, ok := valuelog.ParseFormat(*format)
	if !ok {
		return &exitError{2, fmt.Errorf("decode: unknown --format %q (want json or csv)", *format)}
	}
	globs := splitList(*signals)
	for _, g := range globs {
		if _, err := path.Match(g, ""); err != nil {
			return &exitError{2, fmt.Errorf("decode: bad --signals glob %q: %v", g, err)}
		}
	}

	in, size, closeIn, err := openInput(e, fs.Arg(0))
	if err != nil {
		return err
	}
	defer closeIn()
	w, closeOut, err := openOutput(e, *out)
	if err != nil {
		return err
	}

	if *policy != "" {
		if len(dbcs.iface) > 0 {
			return &exitError{2, errors.New("decode: --policy takes one set of DBC files for all interfaces, as the service does")}
		}
		db, err := dbc.Load(dbcs.all...)
		if err != nil {
			return err
		}
		pp := *policy
		if pp == "default" {
			pp = ""
		}
		opts := policyOptions{Template: *template, Window: *window, Bus: -1, Tail: *tail, SkipInvalid: *skip}
		err = decodeWithPolicy(ctx, env{e.stdin, w, e.stderr}, db, pp, in, opts)
		if cerr := closeOut(); err == nil {
			err = cerr
		}
		return err
	}

	sel, err := newBusDecoders(dbcs, globs)
	if err != nil {
		return err
	}
	vw := valuelog.NewWriter(w, f)
	r := capture.NewReader(in, capture.Options{SkipInvalid: *skip})
	bar := newDecodeProgress(e, fs.Arg(0), size)
	var fr frame.Frame
	var frames int64
	for {
		if err := r.Next(&fr); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return fmt.Errorf("decode %s: %w", fs.Arg(0), err)
		}
		frames++
		if frames&0xFFF == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			bar.update(frames, in)
		}
		vals, ok := sel.decode(r, &fr)
		if !ok {
			continue
		}
		if err := vw.Write(&fr, r.Interface(fr.Bus), vals); err != nil {
			return err
		}
	}
	bar.done()
	if err := vw.Flush(); err != nil {
		return err
	}
	if err := closeOut(); err != nil {
		return err
	}
	if n := r.Skipped(); n > 0 {
		fmt.Fprintf(e.stderr, "candec decode: skipped %d malformed lines\n", n)
	}
	if n := sel.unknown(); n > 0 {
		fmt.Fprintf(e.stderr, "candec decode: %d of %d frames had IDs not in the DBC\n", n, frames)
	}
	return nil
}

// busDecoders picks the decoder for a frame's interface.
type busDecoders struct {
	spec     dbcFlag
	globs    []string
	byFile   map[string]*busDecoder
	all      *busDecoder
	resolved [256]bool
	byBus    [256]*busDecoder
}

type busDecoder struct {
	dec  *decoder.Decoder
	keep []bool // by signal index; nil keeps all
	buf  []decoder.Value
}

func newBusDecoders(spec dbcFlag, globs []string) (*busDecoders, error) {
	s := &busDecoders{spec: spec, globs: globs, byFile: map[string]*busDecoder{}}
	if len(spec.all) > 0 {
		d, err := s.load(spec.all)
		if err != nil {
			return nil, err
		}
		s.all = d
	}
	for _, files := range spec.iface {
		if _, err := s.load(files); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *busDecoders) load(files []string) (*busDecoder, error) {
	key := strings.Join(files, ",")
	if d, ok := s.byFile[key]; ok {
		return d, nil
	}
	db, err := dbc.Load(files...)
	if err != nil {
		return nil, err
	}
	d := &busDecoder{dec: decoder.New(db)}
	d.buf = make([]decoder.Value, 0, d.dec.MaxSignals())
	if len(s.globs) > 0 {
		d.keep = make([]bool, len(db.Signals))
		for _, sig := range db.Signals {
			d.keep[sig.Index] = matchAny(s.globs, sig)
		}
	}
	s.byFile[key] = d
	return d, nil
}

func matchAny(globs []string, sig *dbc.Signal) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, sig.Name); ok {
			return true
		}
		if ok, _ := path.Match(g, sig.FullName()); ok {
			return true
		}
	}
	return false
}

// decode decodes f with its interface's DBC; ok is false when the
// interface has none or the ID is unknown.
func (s *busDecoders) decode(r *capture.Reader, f *frame.Frame) ([]decoder.Value, bool) {
	if !s.resolved[f.Bus] {
		s.resolved[f.Bus] = true
		s.byBus[f.Bus] = s.all
		if files, ok := s.spec.iface[r.Interface(f.Bus)]; ok {
			s.byBus[f.Bus] = s.byFile[strings.Join(files, ",")]
		}
	}
	d := s.byBus[f.Bus]
	if d == nil {
		return nil, false
	}
	msg, vals := d.dec.Decode(f, d.buf[:0])
	if msg == nil {
		return nil, false
	}
	if d.keep != nil {
		n := 0
		for _, v := range vals {
			if d.keep[v.Signal.Index] {
				vals[n] = v
				n++
			}
		}
		vals = vals[:n]
	}
	return vals, true
}

func (s *busDecoders) unknown() uint64 {
	var n uint64
	for _, d := range s.byFile {
		n += d.dec.Stats.Unknown
	}
	return n
}

// openInput opens a capture file, or stdin for "-". size is 0 when unknown.
func openInput(e env, name string) (io.Reader, int64, func(), error) {
	if name == "-" {
		return e.stdin, 0, func() {}, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, 0, nil, err
	}
	var size int64
	if fi, err := f.Stat(); err == nil {
		size = fi.Size()
	}
	return &countingReader{r: f}, size, func() { f.Close() }, nil
}

func openOutput(e env, name string) (io.Writer, func() error, error) {
	if name == "-" || name == "" {
		return e.stdout, func() error { return nil }, nil
	}
	f, err := os.Create(name)
	if err != nil {
		return nil, nil, err
	}
	return f, f.Close, nil
}

// countingReader counts bytes read, for the progress line.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// decodeProgress shows a progress line on a terminal stderr once a decode
// has run for more than a second.
type decodeProgress struct {
	bar   *progress.Bar
	name  string
	size  int64
	start time.Time
	shown bool
}

func newDecodeProgress(e env, name string, size int64) *decodeProgress {
	f, ok := e.stderr.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return &decodeProgress{}
	}
	return &decodeProgress{bar: progress.New(e.stderr, true), name: name, size: size, start: time.Now()}
}

func (p *decodeProgress) update(frames int64, in io.Reader) {
	if p.bar == nil {
		return
	}
	now := time.Now()
	el := now.Sub(p.start)
	if el < time.Second {
		return
	}
	p.shown = true
	detail := fmt.Sprintf("%d frames", frames)
	st := progress.State{Label: "decode " + p.name, Detail: detail}
	if c, ok := in.(*countingReader); ok && p.size > 0 && c.n > 0 {
		// Scale the bar by bytes read: elapsed so far over the projected total.
		st.Done = el
		st.Total = time.Duration(float64(el) * float64(p.size) / float64(c.n))
	}
	p.bar.Update(now, st)
}

func (p *decodeProgress) done() {
	if p.bar != nil && p.shown {
		p.bar.Clear()
	}
}

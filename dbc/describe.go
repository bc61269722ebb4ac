package dbc

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Describe writes a listing of the database for people: each message
// with its ID, length, cycle time, send type, sender and, for a J1939
// message, its PGN, its signals in
// decoding order with their layout, scaling, range, unit and
// multiplexing, then the warnings and the signal names that several
// messages share.
func (db *Database) Describe(w io.Writer) error {
	bw := bufio.NewWriter(w)
	var files []string
	for _, m := range db.Messages {
		if !slices.Contains(files, m.File) {
			files = append(files, m.File)
		}
	}
	fmt.Fprintf(bw, "%d messages, %d signals\n", len(db.Messages), len(db.Signals))
	for _, m := range db.Messages {
		bw.WriteString("\n")
		describeMessage(bw, m, len(files) > 1)
	}
	if len(db.Warnings) > 0 {
		fmt.Fprintf(bw, "\nwarnings (%d):\n", len(db.Warnings))
		for _, wn := range db.Warnings {
			fmt.Fprintf(bw, "  %s\n", wn)
		}
	}
	if dup := db.DuplicateSignalNames(); len(dup) > 0 {
		names := make([]string, 0, len(dup))
		for n := range dup {
			names = append(names, n)
		}
		slices.Sort(names)
		fmt.Fprintf(bw, "\nsignal names used by more than one message (%d):\n", len(names))
		for _, n := range names {
			msgs := make([]string, len(dup[n]))
			for i, s := range dup[n] {
				msgs[i] = s.Message.Name
			}
			fmt.Fprintf(bw, "  %s: %s\n", n, strings.Join(msgs, ", "))
		}
	}
	return bw.Flush()
}

func describeMessage(w io.Writer, m *Message, withFile bool) {
	cycle := "-"
	if m.CycleTime > 0 {
		cycle = m.CycleTime.String()
		if m.CycleTimeDefault {
			cycle += "(default)"
		}
	}
	fmt.Fprintf(w, "%s %s len=%d cycle=%s send=%s sender=%s", Key{m.ID, m.Extended}, m.Name, m.Length, cycle, orDash(m.SendType), orDash(m.Sender))
	if m.J1939 {
		fmt.Fprintf(w, " j1939 pgn=%05X", m.PGN())
	}
	if withFile {
		fmt.Fprintf(w, " file=%s", m.File)
	}
	io.WriteString(w, "\n")
	if len(m.Signals) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	io.WriteString(tw, "    SIGNAL\tSTART\tLEN\tORDER\tSIGN\tTYPE\tFACTOR\tOFFSET\tRANGE\tUNIT\tMUX\n")
	for _, s := range m.Signals {
		order, sign := "intel", "+"
		if s.Order == BigEndian {
			order = "motorola"
		}
		if s.Signed {
			sign = "-"
		}
		fmt.Fprintf(tw, "    %s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t[%s|%s]\t%s\t%s\n",
			s.Name, s.Start, s.Length, order, sign, s.Type, num(s.Factor), num(s.Offset),
			num(s.Min), num(s.Max), orDash(s.Unit), muxText(s))
	}
	tw.Flush()
}

// muxText shows when a signal is present: "M" for a switch,
// "Switch=1,3-5" for a multiplexed signal, both for a cascaded switch.
func muxText(s *Signal) string {
	var b strings.Builder
	if s.Mux != nil {
		b.WriteString(s.Mux.Switch.Name)
		b.WriteByte('=')
		for i, r := range s.Mux.Ranges {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatUint(r.Lo, 10))
			if r.Hi != r.Lo {
				b.WriteByte('-')
				b.WriteString(strconv.FormatUint(r.Hi, 10))
			}
		}
	}
	if s.Multiplexer {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte('M')
	}
	if b.Len() == 0 {
		return "-"
	}
	return b.String()
}

// num writes a factor, offset or range bound as a DBC file would: whole
// numbers whole (16777215, not 1.6777215e+07) and fractions in their
// shortest decimal form (0.1). Only magnitudes a DBC would not write out
// in full get an exponent.
func num(v float64) string {
	if a := math.Abs(v); a >= 1e21 || (a != 0 && a < 1e-9) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// String returns "int", "float32" or "float64".
func (t ValueType) String() string {
	switch t {
	case Float32:
		return "float32"
	case Float64:
		return "float64"
	}
	return "int"
}

// String returns "little-endian" (Intel) or "big-endian" (Motorola).
func (o ByteOrder) String() string {
	if o == BigEndian {
		return "big-endian"
	}
	return "little-endian"
}
